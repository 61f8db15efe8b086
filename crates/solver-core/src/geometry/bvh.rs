//! A bounding volume hierarchy (BVH) over a triangle mesh, refitted per frame, and ray queries
//! through it.
//!
//! Theory. The BVH is built once per topology (median split of triangle centroids along the
//! longest axis, at most [`LEAF_SIZE`] triangles per leaf) and *refitted* each frame: children
//! are stored after their parent, so one backward sweep recomputes every box from the current
//! positions (O(n)); the parallel refit does one depth at a time. Deformation loosens a
//! refitted tree but keeps it correct. A ray is tested
//! against boxes with the slab method, nearer child first, and against triangles with the
//! Möller–Trumbore algorithm (1997), which gives the distance `t` and barycentrics `(u, v)`:
//!
//! ```text
//! p = d × e2,  det = e1 · p,  s = o - a,  u = s·p / det,  q = s × e1,  v = d·q / det,
//! t = e2·q / det,  hit where u >= 0, v >= 0, u + v <= 1, 0 <= t <= t_max;  bary = (1-u-v, u, v)
//! ```

use crate::error::check_indices;
use crate::error::{check_finite, Result, WobbleError};
use crate::geometry::packed::Packed4;
use crate::par::*;
use glam::{Vec3, Vec3A, Vec4};

/// Most triangles in one BVH leaf.
pub const LEAF_SIZE: usize = 4;

/// Where a ray met a surface.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Hit {
    /// Index of the triangle hit (into the triangle list the BVH was built from).
    pub triangle: u32,
    /// The triangle's corner particles.
    pub corners: [u32; 3],
    /// Barycentric coordinates of the hit point (weights of the three corners, sum 1).
    pub barycentric: [f32; 3],
    /// Distance from the ray origin along the (normalised) direction.
    pub distance: f32,
    /// The hit point.
    pub point: Vec3,
}

#[derive(Clone, Copy, Debug, Default)]
struct Node {
    lo: Vec3A,
    hi: Vec3A,
    // Leaf: first index into `order`; inner node: index of the left child (right = left + 1).
    start: u32,
    // Triangles in a leaf; 0 for an inner node.
    count: u32,
}

/// A bounding volume hierarchy over the triangles of a deforming mesh.
#[derive(Clone, Debug, Default)]
pub struct TriangleBvh {
    nodes: Vec<Node>,
    // Original index of each triangle in leaf order.
    order: Vec<u32>,
    // The triangles in leaf order, so that refits and rays read them sequentially.
    triangles: Vec<[u32; 3]>,
    // First node of each depth (nodes are stored breadth first), plus the node count.
    levels: Vec<u32>,
}

impl TriangleBvh {
    /// Builds the hierarchy over `triangles` at positions `x`.
    pub fn build(triangles: &[[u32; 3]], x: &[Packed4]) -> Result<Self> {
        if triangles.is_empty() {
            return Err(WobbleError::EmptyMesh("picking surface".into()));
        }
        for (t, tri) in triangles.iter().enumerate() {
            check_indices("triangle", t, tri, x.len())?;
        }
        let centroids: Vec<Vec3> = triangles
            .iter()
            .map(|t| {
                (x[t[0] as usize].xyz() + x[t[1] as usize].xyz() + x[t[2] as usize].xyz()) / 3.0
            })
            .collect();
        let mut bvh = TriangleBvh {
            nodes: Vec::with_capacity(2 * triangles.len() / LEAF_SIZE + 1),
            order: (0..triangles.len() as u32).collect(),
            triangles: triangles.to_vec(),
            levels: Vec::new(),
        };
        let mut depth = vec![0u32];
        bvh.nodes.push(Node {
            start: 0,
            count: triangles.len() as u32,
            ..Default::default()
        });
        // Split nodes breadth-first; children always land after their parent.
        let mut next = 0;
        while next < bvh.nodes.len() {
            let Node { start, count, .. } = bvh.nodes[next];
            if count as usize > LEAF_SIZE {
                let range = start as usize..(start + count) as usize;
                let (lo, hi) = bvh.order[range.clone()].iter().fold(
                    (Vec3::splat(f32::INFINITY), Vec3::splat(f32::NEG_INFINITY)),
                    |(lo, hi), &t| (lo.min(centroids[t as usize]), hi.max(centroids[t as usize])),
                );
                let ext = hi - lo;
                let axis = if ext.x >= ext.y && ext.x >= ext.z {
                    0
                } else if ext.y >= ext.z {
                    1
                } else {
                    2
                };
                let half = count as usize / 2;
                bvh.order[range].select_nth_unstable_by(half, |&a, &b| {
                    centroids[a as usize][axis].total_cmp(&centroids[b as usize][axis])
                });
                let left = bvh.nodes.len() as u32;
                bvh.nodes.push(Node {
                    start,
                    count: half as u32,
                    ..Default::default()
                });
                bvh.nodes.push(Node {
                    start: start + half as u32,
                    count: count - half as u32,
                    ..Default::default()
                });
                bvh.nodes[next].start = left;
                bvh.nodes[next].count = 0;
                depth.push(depth[next] + 1);
                depth.push(depth[next] + 1);
            }
            next += 1;
        }
        bvh.triangles = bvh.order.iter().map(|&t| triangles[t as usize]).collect();
        for (k, &d) in depth.iter().enumerate() {
            if k == 0 || d != depth[k - 1] {
                bvh.levels.push(k as u32);
            }
        }
        bvh.levels.push(bvh.nodes.len() as u32);
        bvh.refit(x)?;
        Ok(bvh)
    }

    fn check_positions(&self, x: &[Packed4]) -> Result<()> {
        let needed = self
            .triangles
            .iter()
            .flatten()
            .map(|&v| v as usize + 1)
            .max()
            .unwrap_or(0);
        if x.len() < needed {
            return Err(WobbleError::IndexOutOfRange {
                what: "BVH refit positions",
                index: 0,
                value: needed as u64 - 1,
                len: x.len(),
            });
        }
        Ok(())
    }

    /// The box of a leaf from its triangles.
    #[inline(always)]
    fn leaf_box(&self, n: &Node, x: &[Packed4]) -> (Vec3A, Vec3A) {
        // Four-wide min/max on whole Packed4 loads (the w lane is dropped at the end).
        let load = |v: u32| {
            let p = x[v as usize];
            Vec4::new(p.x, p.y, p.z, p.w)
        };
        let mut lo = Vec4::splat(f32::INFINITY);
        let mut hi = Vec4::splat(f32::NEG_INFINITY);
        for &[a, b, c] in &self.triangles[n.start as usize..(n.start + n.count) as usize] {
            let (a, b, c) = (load(a), load(b), load(c));
            lo = lo.min(a.min(b).min(c));
            hi = hi.max(a.max(b).max(c));
        }
        (Vec3A::from_vec4(lo), Vec3A::from_vec4(hi))
    }

    /// Recomputes every box from positions `x` (one backward sweep; children are stored after
    /// their parents).
    pub fn refit(&mut self, x: &[Packed4]) -> Result<()> {
        self.check_positions(x)?;
        for k in (0..self.nodes.len()).rev() {
            let n = self.nodes[k];
            let (lo, hi) = if n.count > 0 {
                self.leaf_box(&n, x)
            } else {
                let (l, r) = (
                    self.nodes[n.start as usize],
                    self.nodes[n.start as usize + 1],
                );
                (l.lo.min(r.lo), l.hi.max(r.hi))
            };
            self.nodes[k].lo = lo;
            self.nodes[k].hi = hi;
        }
        Ok(())
    }

    /// [`TriangleBvh::refit`] one depth at a time, the nodes of a depth in parallel (same
    /// boxes, bit for bit).
    pub fn refit_parallel(&mut self, x: &[Packed4]) -> Result<()> {
        self.check_positions(x)?;
        let mut nodes = std::mem::take(&mut self.nodes);
        for w in self.levels.windows(2).rev() {
            let (head, deeper) = nodes.split_at_mut(w[1] as usize);
            let first_deeper = w[1] as usize;
            let this = &*self;
            head[w[0] as usize..].par_iter_mut().for_each(|n| {
                let (lo, hi) = if n.count > 0 {
                    this.leaf_box(n, x)
                } else {
                    let c = n.start as usize - first_deeper;
                    let (l, r) = (deeper[c], deeper[c + 1]);
                    (l.lo.min(r.lo), l.hi.max(r.hi))
                };
                n.lo = lo;
                n.hi = hi;
            });
        }
        self.nodes = nodes;
        Ok(())
    }

    /// Every node's box `(lo, hi)`, in storage order (breadth first, root first).
    pub fn boxes(&self) -> impl Iterator<Item = (Vec3, Vec3)> + '_ {
        self.nodes
            .iter()
            .map(|n| (Vec3::from(n.lo), Vec3::from(n.hi)))
    }

    /// Number of triangles.
    pub fn len(&self) -> usize {
        self.triangles.len()
    }

    /// True when the hierarchy holds no triangle (never, once built).
    pub fn is_empty(&self) -> bool {
        self.triangles.is_empty()
    }

    /// Calls `f` with the index (in the triangle list it was built from) and corners of every
    /// triangle of every leaf whose box, at the positions of the last build or refit, overlaps
    /// `lo..=hi` (a superset of the triangles that do: `f` tests them itself).
    pub fn for_each_overlapping(&self, lo: Vec3, hi: Vec3, mut f: impl FnMut(u32, [u32; 3])) {
        let (lo, hi) = (Vec3A::from(lo), Vec3A::from(hi));
        let overlaps = |n: &Node| n.lo.cmple(hi).all() && n.hi.cmpge(lo).all();
        let mut stack = [0u32; 64];
        let mut top = 1;
        while top > 0 {
            top -= 1;
            let n = self.nodes[stack[top] as usize];
            if !overlaps(&n) {
                continue;
            }
            if n.count > 0 {
                for k in n.start as usize..(n.start + n.count) as usize {
                    f(self.order[k], self.triangles[k]);
                }
            } else if top + 2 <= stack.len() {
                stack[top] = n.start;
                stack[top + 1] = n.start + 1;
                top += 2;
            }
        }
    }

    /// The nearest triangle the ray `origin + s dir` (s in 0..=max_distance) hits, both faces
    /// counting, at positions `x` (those of the last build or refit).
    pub fn raycast(
        &self,
        x: &[Packed4],
        origin: Vec3,
        dir: Vec3,
        max_distance: f32,
    ) -> Result<Option<Hit>> {
        let mut nearest = Nearest::new(origin, dir, max_distance)?;
        let inv = Vec3A::from(nearest.dir.recip());
        let origin_a = Vec3A::from(origin);
        let mut stack = [0u32; 64];
        let mut top = 1;
        while top > 0 {
            top -= 1;
            let n = self.nodes[stack[top] as usize];
            let limit = nearest.limit;
            if slab(n.lo, n.hi, origin_a, inv, limit).is_none() {
                continue;
            }
            if n.count > 0 {
                for k in n.start as usize..(n.start + n.count) as usize {
                    nearest.test(x, self.triangles[k], self.order[k]);
                }
            } else {
                let (l, r) = (n.start, n.start + 1);
                let dl = slab(
                    self.nodes[l as usize].lo,
                    self.nodes[l as usize].hi,
                    origin_a,
                    inv,
                    limit,
                );
                let dr = slab(
                    self.nodes[r as usize].lo,
                    self.nodes[r as usize].hi,
                    origin_a,
                    inv,
                    limit,
                );
                // Push the farther child first so the nearer one is visited first.
                let mut push = |c: u32| {
                    if top < stack.len() {
                        stack[top] = c;
                        top += 1;
                    }
                };
                match (dl, dr) {
                    (Some(a), Some(b)) if a <= b => {
                        push(r);
                        push(l);
                    }
                    (Some(_), Some(_)) => {
                        push(l);
                        push(r);
                    }
                    (Some(_), None) => push(l),
                    (None, Some(_)) => push(r),
                    (None, None) => {}
                }
            }
        }
        Ok(nearest.best)
    }
}

/// The nearest hit so far along a checked ray; a triangle tested later counts only where the
/// ray hits it nearer.
struct Nearest {
    origin: Vec3,
    /// The normalised direction.
    dir: Vec3,
    /// The distance of the nearest hit so far (the ray's length before the first).
    limit: f32,
    best: Option<Hit>,
}

impl Nearest {
    fn new(origin: Vec3, dir: Vec3, max_distance: f32) -> Result<Self> {
        Ok(Nearest {
            origin,
            dir: check_ray(origin, dir, max_distance)?,
            limit: max_distance,
            best: None,
        })
    }

    /// Tests the triangle of `corners` (numbered `triangle` in the hit it may give).
    #[inline(always)]
    fn test(&mut self, x: &[Packed4], corners: [u32; 3], triangle: u32) {
        if let Some(h) = ray_triangle(x, corners, self.origin, self.dir, self.limit) {
            self.limit = h.distance;
            self.best = Some(Hit { triangle, ..h });
        }
    }
}

fn check_ray(origin: Vec3, dir: Vec3, max_distance: f32) -> Result<Vec3> {
    check_finite("ray origin", 0, origin.x + origin.y + origin.z)?;
    check_finite("ray direction", 0, dir.x + dir.y + dir.z)?;
    if max_distance.is_nan() || max_distance < 0.0 {
        return Err(WobbleError::BadParameter {
            name: "ray length",
            value: max_distance as f64,
            reason: "must be >= 0 (infinity allowed)",
        });
    }
    let len = dir.length();
    if !(len > 0.0 && len.is_finite()) {
        return Err(WobbleError::BadParameter {
            name: "ray direction",
            value: len as f64,
            reason: "must have a finite, non-zero length",
        });
    }
    Ok(dir / len)
}

/// Entry distance of the ray into the box, if it enters before `limit`.
#[inline(always)]
fn slab(lo: Vec3A, hi: Vec3A, origin: Vec3A, inv: Vec3A, limit: f32) -> Option<f32> {
    let t0 = (lo - origin) * inv;
    let t1 = (hi - origin) * inv;
    let near = t0.min(t1).max_element().max(0.0);
    let far = t0.max(t1).min_element().min(limit);
    // A ray parallel to an axis gets ±inf slab distances, which order correctly; only a ray
    // running exactly in a box face gives 0 * inf = NaN, and f32::min/max then drop it.
    (near <= far).then_some(near)
}

/// Möller–Trumbore intersection of a normalised ray with one triangle.
#[inline(always)]
fn ray_triangle(
    x: &[Packed4],
    corners: [u32; 3],
    origin: Vec3,
    dir: Vec3,
    limit: f32,
) -> Option<Hit> {
    let a = x[corners[0] as usize].xyz();
    let e1 = x[corners[1] as usize].xyz() - a;
    let e2 = x[corners[2] as usize].xyz() - a;
    let p = dir.cross(e2);
    let det = e1.dot(p);
    if det.abs() <= 1e-12 * e1.length() * e2.length() || det == 0.0 {
        return None;
    }
    let inv = 1.0 / det;
    let s = origin - a;
    let u = s.dot(p) * inv;
    if !(0.0..=1.0).contains(&u) {
        return None;
    }
    let q = s.cross(e1);
    let v = dir.dot(q) * inv;
    if v < 0.0 || u + v > 1.0 {
        return None;
    }
    let t = e2.dot(q) * inv;
    if !(t >= 0.0 && t <= limit) {
        return None;
    }
    Some(Hit {
        triangle: 0,
        corners,
        barycentric: [1.0 - u - v, u, v],
        distance: t,
        point: origin + dir * t,
    })
}

/// The nearest hit by testing every triangle: the reference the BVH is tested against.
pub fn raycast_brute_force(
    triangles: &[[u32; 3]],
    x: &[Packed4],
    origin: Vec3,
    dir: Vec3,
    max_distance: f32,
) -> Result<Option<Hit>> {
    let mut nearest = Nearest::new(origin, dir, max_distance)?;
    for (t, &corners) in triangles.iter().enumerate() {
        if corners.iter().any(|&v| v as usize >= x.len()) {
            return Err(WobbleError::IndexOutOfRange {
                what: "triangle",
                index: t,
                value: corners.iter().copied().max().unwrap_or(0) as u64,
                len: x.len(),
            });
        }
        nearest.test(x, corners, t as u32);
    }
    Ok(nearest.best)
}
