//! Embedding: a high-resolution render mesh driven by a low-resolution simulation mesh, and its
//! normals recomputed in parallel every frame.
//!
//! Theory. In a tetrahedron (the "cage" of Müller and Gross 2004, "Interactive virtual
//! materials"): a render vertex `v` keeps its barycentric coordinates `b` in the enclosing
//! tetrahedron at rest, `v' = Σ b_k x'_k`; this reproduces every affine deformation of the
//! tetrahedron exactly, and a smooth one to second order in its size. Vertices outside every
//! tetrahedron use the one whose smallest barycentric coordinate is largest (a linear
//! extrapolation). On a surface: the nearest point `c = Σ b_k x_k` of the nearest triangle and
//! the offset `r = v - c` in the frame `(t1, t2, n)` at `c`, with `n` the normalised
//! barycentric blend of the simulation mesh's vertex normals (area weighted), `t1` the first
//! triangle edge made orthogonal to `n`, `t2 = n × t1`; `v' = c' + r_1 t1' + r_2 t2' + r_n n'`
//! reproduces rigid motions exactly. Render normals are area-weighted vertex normals, each
//! vertex summing its incident face normals in a fixed order, so the parallel path equals the
//! serial one bit for bit.

use crate::error::check_index;
use crate::error::{check_finite, Result, WobbleError};
use crate::geometry::packed::Packed4;
use crate::geometry::queries::closest_point_on_triangle;
use crate::geometry::volume::signed_tet_volume;
use crate::par::*;
use glam::Vec3;
use std::collections::HashMap;

/// Render vertices per parallel work item.
const CHUNK: usize = 2048;

/// Where one render vertex hangs on the simulation mesh.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Anchor {
    /// Barycentric coordinates in a tetrahedron (its four particles).
    Tet {
        /// The tetrahedron's particles.
        corners: [u32; 4],
        /// Barycentric coordinates (sum 1; a negative one means outside).
        weights: [f32; 4],
    },
    /// Nearest point of a triangle plus an offset in the local frame there.
    Surface {
        /// The triangle's particles.
        corners: [u32; 3],
        /// Barycentric coordinates of the nearest point.
        weights: [f32; 3],
        /// Offset along (t1, t2, n).
        offset: Vec3,
    },
}

/// Area-weighted vertex normals of a fixed triangle list, with the vertex→triangle incidence
/// prepared once.
#[derive(Clone, Debug, Default)]
pub struct VertexNormals {
    triangles: Vec<[u32; 3]>,
    start: Vec<u32>,
    incident: Vec<u32>,
}

impl VertexNormals {
    /// Prepares the incidence of `triangles` over `vertices` vertices.
    pub fn new(triangles: &[[u32; 3]], vertices: usize) -> Result<Self> {
        let mut start = vec![0u32; vertices + 1];
        for (t, tri) in triangles.iter().enumerate() {
            for &v in tri {
                check_index("triangle", t, v as usize, vertices)?;
                start[v as usize + 1] += 1;
            }
        }
        for v in 0..vertices {
            start[v + 1] += start[v];
        }
        let mut fill = start.clone();
        let mut incident = vec![0u32; start[vertices] as usize];
        for (t, tri) in triangles.iter().enumerate() {
            for &v in tri {
                incident[fill[v as usize] as usize] = t as u32;
                fill[v as usize] += 1;
            }
        }
        Ok(VertexNormals {
            triangles: triangles.to_vec(),
            start,
            incident,
        })
    }

    /// Number of vertices.
    pub fn len(&self) -> usize {
        self.start.len() - 1
    }

    /// True when there is no vertex.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    #[inline(always)]
    fn one(&self, v: usize, x: &[Vec3]) -> Vec3 {
        let mut n = Vec3::ZERO;
        for &t in &self.incident[self.start[v] as usize..self.start[v + 1] as usize] {
            let [a, b, c] = self.triangles[t as usize].map(|i| x[i as usize]);
            n += (b - a).cross(c - a);
        }
        n.normalize_or_zero()
    }

    fn check(&self, x: &[Vec3], out: &[Vec3]) -> Result<()> {
        if x.len() != self.len() || out.len() != self.len() {
            return Err(WobbleError::IndexOutOfRange {
                what: "normal buffers",
                index: 0,
                value: x.len().max(out.len()) as u64,
                len: self.len(),
            });
        }
        Ok(())
    }

    /// Writes the normals at positions `x` into `out` (serial).
    pub fn compute(&self, x: &[Vec3], out: &mut [Vec3]) -> Result<()> {
        self.check(x, out)?;
        for (v, n) in out.iter_mut().enumerate() {
            *n = self.one(v, x);
        }
        Ok(())
    }

    /// [`VertexNormals::compute`] over vertex chunks in parallel (same result, bit for bit).
    pub fn compute_parallel(&self, x: &[Vec3], out: &mut [Vec3]) -> Result<()> {
        self.check(x, out)?;
        out.par_chunks_mut(CHUNK)
            .enumerate()
            .for_each(|(chunk, ns)| {
                for (k, n) in ns.iter_mut().enumerate() {
                    *n = self.one(chunk * CHUNK + k, x);
                }
            });
        Ok(())
    }
}

/// Barycentric coordinates of `p` in the tetrahedron (a, b, c, d).
fn tet_barycentric(p: Vec3, t: [Vec3; 4]) -> [f32; 4] {
    let v = signed_tet_volume(t[0], t[1], t[2], t[3]);
    let b1 = signed_tet_volume(t[0], p, t[2], t[3]) / v;
    let b2 = signed_tet_volume(t[0], t[1], p, t[3]) / v;
    let b3 = signed_tet_volume(t[0], t[1], t[2], p) / v;
    [1.0 - b1 - b2 - b3, b1, b2, b3]
}

/// The frame (t1, t2, n) at barycentric point `w` of triangle `corners`, from vertex normals.
#[inline(always)]
fn surface_frame(x: &[Vec3], normals: &[Vec3], corners: [u32; 3], w: [f32; 3]) -> [Vec3; 3] {
    let [a, b, c] = corners.map(|i| i as usize);
    let face = (x[b] - x[a]).cross(x[c] - x[a]);
    let blend = normals[a] * w[0] + normals[b] * w[1] + normals[c] * w[2];
    let n = blend.try_normalize().unwrap_or(face.normalize_or_zero());
    let e = x[b] - x[a];
    let t1 = (e - n * e.dot(n)).normalize_or_zero();
    [t1, n.cross(t1), n]
}

/// A render mesh's vertices embedded in a simulation mesh.
#[derive(Clone, Debug)]
pub struct Embedding {
    /// One anchor per render vertex.
    pub anchors: Vec<Anchor>,
    // Vertex normals of the simulation surface (surface embeddings only).
    sim_normals: Option<VertexNormals>,
    sim_particles: usize,
}

fn positions(x: &[Packed4]) -> Vec<Vec3> {
    x.iter().map(|p| p.xyz()).collect()
}

fn check_render(render: &[Vec3]) -> Result<()> {
    if render.is_empty() {
        return Err(WobbleError::EmptyMesh("render mesh".into()));
    }
    for (k, p) in render.iter().enumerate() {
        check_finite("render vertex", k, p.x + p.y + p.z)?;
    }
    Ok(())
}

impl Embedding {
    /// Embeds every render vertex in the tetrahedron of `tets` (at positions `sim`) that
    /// contains it, or the nearest one by barycentric coordinates. A uniform grid of tetrahedron
    /// boxes finds the candidates.
    pub fn in_tets(render: &[Vec3], sim: &[Packed4], tets: &[[u32; 4]]) -> Result<Self> {
        check_render(render)?;
        if tets.is_empty() {
            return Err(WobbleError::EmptyMesh("simulation tetrahedra".into()));
        }
        let xs = positions(sim);
        let mut boxes = Vec::with_capacity(tets.len());
        let mut mean_size = 0.0f32;
        for (t, tet) in tets.iter().enumerate() {
            crate::error::check_particles("tetrahedron", t, tet, sim.len())?;
            let p = tet.map(|v| xs[v as usize]);
            if signed_tet_volume(p[0], p[1], p[2], p[3]).abs() <= f32::MIN_POSITIVE {
                return Err(WobbleError::InvertedTetrahedron {
                    index: t,
                    volume: 0.0,
                });
            }
            let lo = p[0].min(p[1]).min(p[2]).min(p[3]);
            let hi = p[0].max(p[1]).max(p[2]).max(p[3]);
            mean_size += (hi - lo).max_element();
            boxes.push((lo, hi));
        }
        let cell = (mean_size / tets.len() as f32).max(1e-6);
        let key = |p: Vec3| {
            let q = (p / cell).floor();
            (q.x as i32, q.y as i32, q.z as i32)
        };
        let mut grid: HashMap<(i32, i32, i32), Vec<u32>> = HashMap::new();
        for (t, &(lo, hi)) in boxes.iter().enumerate() {
            let (a, b) = (key(lo), key(hi));
            for i in a.0..=b.0 {
                for j in a.1..=b.1 {
                    for k in a.2..=b.2 {
                        grid.entry((i, j, k)).or_default().push(t as u32);
                    }
                }
            }
        }
        let score = |p: Vec3, t: u32| {
            let w = tet_barycentric(p, tets[t as usize].map(|v| xs[v as usize]));
            (w[0].min(w[1]).min(w[2]).min(w[3]), w)
        };
        let mut anchors = Vec::with_capacity(render.len());
        for &p in render {
            let mut best: Option<(f32, u32, [f32; 4])> = None;
            if let Some(list) = grid.get(&key(p)) {
                for &t in list {
                    let (s, w) = score(p, t);
                    if best.is_none_or(|b| s > b.0) {
                        best = Some((s, t, w));
                    }
                }
            }
            if best.is_none_or(|b| b.0 < -1e-5) {
                // Outside the cell's tetrahedra: search them all.
                for t in 0..tets.len() as u32 {
                    let (s, w) = score(p, t);
                    if best.is_none_or(|b| s > b.0) {
                        best = Some((s, t, w));
                    }
                }
            }
            let (_, t, w) = best.expect("at least one tetrahedron");
            anchors.push(Anchor::Tet {
                corners: tets[t as usize],
                weights: w,
            });
        }
        Ok(Embedding {
            anchors,
            sim_normals: None,
            sim_particles: sim.len(),
        })
    }

    /// Embeds every render vertex at the nearest point of the simulation surface `triangles`
    /// (at positions `sim`) plus an offset in the local frame there (every triangle tested).
    pub fn on_surface(render: &[Vec3], sim: &[Packed4], triangles: &[[u32; 3]]) -> Result<Self> {
        check_render(render)?;
        if triangles.is_empty() {
            return Err(WobbleError::EmptyMesh("simulation surface".into()));
        }
        let normals = VertexNormals::new(triangles, sim.len())?;
        let xs = positions(sim);
        let mut vn = vec![Vec3::ZERO; xs.len()];
        normals.compute(&xs, &mut vn)?;
        let mut anchors = Vec::with_capacity(render.len());
        for &p in render {
            let mut best = (f32::INFINITY, 0usize, [1.0, 0.0, 0.0]);
            for (t, tri) in triangles.iter().enumerate() {
                let [a, b, c] = tri.map(|v| xs[v as usize]);
                let w = closest_point_on_triangle(p, a, b, c).1.to_array();
                let q = a * w[0] + b * w[1] + c * w[2];
                let d2 = (p - q).length_squared();
                if d2 < best.0 {
                    best = (d2, t, w);
                }
            }
            let (_, t, w) = best;
            let corners = triangles[t];
            let [a, b, c] = corners.map(|v| xs[v as usize]);
            let r = p - (a * w[0] + b * w[1] + c * w[2]);
            let [t1, t2, n] = surface_frame(&xs, &vn, corners, w);
            anchors.push(Anchor::Surface {
                corners,
                weights: w,
                offset: Vec3::new(r.dot(t1), r.dot(t2), r.dot(n)),
            });
        }
        Ok(Embedding {
            anchors,
            sim_normals: Some(normals),
            sim_particles: sim.len(),
        })
    }

    /// Number of render vertices.
    pub fn len(&self) -> usize {
        self.anchors.len()
    }

    /// True when nothing is embedded.
    pub fn is_empty(&self) -> bool {
        self.anchors.is_empty()
    }

    /// Checks the buffer sizes and fills `scratch` with the simulation positions and, when
    /// the embedding offsets along normals, the simulation normals.
    fn load_simulation(
        &self,
        sim: &[Packed4],
        out_len: usize,
        scratch: &mut EmbeddingScratch,
        parallel: bool,
    ) -> Result<()> {
        if sim.len() != self.sim_particles || out_len != self.len() {
            return Err(WobbleError::IndexOutOfRange {
                what: "embedding buffers",
                index: 0,
                value: sim.len() as u64,
                len: self.sim_particles,
            });
        }
        scratch.x.clear();
        scratch.x.extend(sim.iter().map(|p| p.xyz()));
        if let Some(vn) = &self.sim_normals {
            scratch.normals.resize(sim.len(), Vec3::ZERO);
            if parallel {
                vn.compute_parallel(&scratch.x, &mut scratch.normals)?;
            } else {
                vn.compute(&scratch.x, &mut scratch.normals)?;
            }
        }
        Ok(())
    }

    /// Writes the render positions for simulation positions `sim` into `out`; `scratch` holds
    /// the simulation positions and normals (resized on first use).
    pub fn update(
        &self,
        sim: &[Packed4],
        out: &mut [Vec3],
        scratch: &mut EmbeddingScratch,
    ) -> Result<()> {
        self.load_simulation(sim, out.len(), scratch, false)?;
        let (xs, ns) = (&scratch.x, &scratch.normals);
        for (o, a) in out.iter_mut().zip(&self.anchors) {
            *o = place(a, xs, ns);
        }
        Ok(())
    }

    /// [`Embedding::update`] with the render vertices placed in parallel (same result, bit for
    /// bit).
    pub fn update_parallel(
        &self,
        sim: &[Packed4],
        out: &mut [Vec3],
        scratch: &mut EmbeddingScratch,
    ) -> Result<()> {
        self.load_simulation(sim, out.len(), scratch, true)?;
        let (xs, ns) = (&scratch.x, &scratch.normals);
        out.par_chunks_mut(CHUNK)
            .zip(self.anchors.par_chunks(CHUNK))
            .for_each(|(os, anchors)| {
                for (o, a) in os.iter_mut().zip(anchors) {
                    *o = place(a, xs, ns);
                }
            });
        Ok(())
    }
}

/// Reused buffers of [`Embedding::update`].
#[derive(Clone, Debug, Default)]
pub struct EmbeddingScratch {
    x: Vec<Vec3>,
    normals: Vec<Vec3>,
}

#[inline(always)]
fn place(a: &Anchor, x: &[Vec3], normals: &[Vec3]) -> Vec3 {
    match *a {
        Anchor::Tet { corners, weights } => {
            let [p, q, r, s] = corners.map(|v| x[v as usize]);
            p * weights[0] + q * weights[1] + r * weights[2] + s * weights[3]
        }
        Anchor::Surface {
            corners,
            weights,
            offset,
        } => {
            let [p, q, r] = corners.map(|v| x[v as usize]);
            let c = p * weights[0] + q * weights[1] + r * weights[2];
            let [t1, t2, n] = surface_frame(x, normals, corners, weights);
            c + t1 * offset.x + t2 * offset.y + n * offset.z
        }
    }
}
