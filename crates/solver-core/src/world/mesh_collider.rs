//! Triangle-mesh colliders: a static mesh (a level's floor, stairs, a thin wall, a
//! character's proxy, loaded from OBJ), or the surface of another body as the
//! [`crate::world::World`] predicts it for the substep, queried through a refitted
//! [`TriangleBvh`].
//!
//! Theory. A particle moving from `x₀` (the substep's start) to `x̃` (its prediction) is
//! tested against every triangle whose BVH leaf overlaps the segment's box grown by the
//! thickness `r` and the margin: a triangle the segment crosses (Möller–Trumbore, `t ∈ [0, 1]`)
//! is a contact whatever the speed, which is what keeps a 20 m/s body from tunnelling through
//! a wall thinner than its travel; otherwise a triangle whose closest point is within
//! `r + margin` of `x̃` is one. The first crossing wins, then the nearest. The contact is the
//! triangle's plane pushed out by `r`: `n · x >= n · a + r`, with `n` the face normal turned to
//! the side `x₀` lies on (for an open mesh) or outward (for a closed one, so that a particle
//! that started inside leaves through the nearest face). On a closed surface, triangles whose
//! nearest points are equally near (the faces meeting at the edge or corner nearest the
//! particle) go to the face whose plane the particle's prediction lies furthest in front of:
//! a particle settling onto a block's top face right above its edge is held by the top face,
//! not pushed sideways by the side face. Against another body's surface the contact carries
//! that surface's inverse mass `w_t` (blended from its corners at the contact point,
//! [`PlaneHit::surface_w`]); [`crate::world`] turns it into the contact's compliance.
//!
//! Remaining failures: the plane of a triangle extends past its edges, so near a convex edge
//! (a stair's nose) a particle within `r + margin` of the edge is held at the plane's height a
//! little beyond it; a particle is kept against one triangle per collider per substep, so in a
//! concave corner narrower than the travel of a substep it may be pushed through the other
//! face.

use crate::error::{Result, WobbleError};
use crate::geometry::bvh::TriangleBvh;
use crate::geometry::packed::Packed4;
use crate::geometry::queries::{closest_point_on_triangle, segment_triangle};
use crate::mesh::TriMesh;
use glam::Vec3;
use std::path::Path;

/// A triangle-mesh collider with a thickness and friction.
#[derive(Clone, Debug)]
pub struct MeshCollider {
    /// Vertex positions (w: inverse mass, 0 for a static mesh).
    x: Vec<Packed4>,
    /// Each vertex's displacement over the substep (empty: static).
    motion: Vec<Vec3>,
    triangles: Vec<[u32; 3]>,
    bvh: TriangleBvh,
    /// True when the triangles form a closed surface oriented outward.
    closed: bool,
    /// Distance kept between a particle and the surface (m).
    pub thickness: f32,
    /// Coulomb friction coefficient μ.
    pub friction: f32,
    /// True once a world has moved this body surface to its solved positions for the
    /// substep (contacts with it are then rigid).
    pub(crate) solved: bool,
    /// The world position the vertices are relative to (a body's surface: the body's origin).
    pub(crate) origin: glam::DVec3,
}

/// A contact plane a particle must stay in front of: `normal · x >= offset`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PlaneHit {
    /// Unit normal of the free side.
    pub normal: Vec3,
    /// Offset of the half-space.
    pub offset: f32,
    /// The surface's displacement at the contact over the substep.
    pub motion: Vec3,
    /// The surface's inverse mass at the contact point (0 for a static mesh).
    pub surface_w: f32,
    /// The triangle touched (vertex indices of the surface).
    pub triangle: [u32; 3],
    /// The barycentric coordinates of the contact point on it.
    pub bary: Vec3,
}

fn check_coefficients(thickness: f32, friction: f32) -> Result<()> {
    if !(thickness.is_finite() && thickness >= 0.0) {
        return Err(WobbleError::BadParameter {
            name: "mesh collider thickness",
            value: thickness as f64,
            reason: "must be finite and >= 0 (metres)",
        });
    }
    if !(friction.is_finite() && friction >= 0.0) {
        return Err(WobbleError::BadParameter {
            name: "mesh collider friction",
            value: friction as f64,
            reason: "must be finite and >= 0",
        });
    }
    Ok(())
}

impl MeshCollider {
    /// A static collider of `mesh`'s triangles (checked), keeping particles `thickness` from
    /// them, with friction `friction`.
    pub fn new(mesh: &TriMesh, thickness: f32, friction: f32) -> Result<Self> {
        mesh.validate()?;
        let x: Vec<Packed4> = mesh
            .positions
            .iter()
            .map(|&p| Packed4::new(p, 0.0))
            .collect();
        let closed = mesh.edge_adjacency().is_closed();
        Self::over(x, &mesh.triangles, closed, thickness, friction)
    }

    /// A static collider from an OBJ file (loaded strictly, [`crate::mesh::load_obj`]).
    pub fn from_obj(path: &Path, thickness: f32, friction: f32) -> Result<Self> {
        Self::new(&crate::mesh::load_obj(path)?, thickness, friction)
    }

    /// The collider of a body's surface `triangles` at positions `x` (inverse masses in w),
    /// which [`MeshCollider::update`] moves every substep.
    pub(crate) fn over(
        x: Vec<Packed4>,
        triangles: &[[u32; 3]],
        closed: bool,
        thickness: f32,
        friction: f32,
    ) -> Result<Self> {
        check_coefficients(thickness, friction)?;
        let bvh = TriangleBvh::build(triangles, &x)?;
        Ok(MeshCollider {
            x,
            motion: Vec::new(),
            triangles: triangles.to_vec(),
            bvh,
            closed,
            thickness,
            friction,
            solved: false,
            origin: glam::DVec3::ZERO,
        })
    }

    /// Moves the surface to `x` (inverse masses in w), having moved by `motion` per vertex
    /// over the substep, and refits the hierarchy; `solved` says whether `x` is the body's
    /// solved state (otherwise its prediction).
    pub(crate) fn update(&mut self, x: &[Packed4], motion: &[Vec3], solved: bool) -> Result<()> {
        self.solved = solved;
        self.x.clear();
        self.x.extend_from_slice(x);
        self.motion.clear();
        self.motion.extend_from_slice(motion);
        self.bvh.refit(&self.x)
    }

    /// The world position the vertices are relative to (zero unless set: a static mesh is in
    /// world coordinates; a body's surface is in the body frame).
    #[must_use]
    pub fn origin(&self) -> glam::DVec3 {
        self.origin
    }

    /// Declares the vertices relative to the world position `origin`, so that a static mesh
    /// kilometres out keeps its precision: build it from coordinates near zero, then place it.
    pub fn set_origin(&mut self, origin: glam::DVec3) -> Result<()> {
        crate::error::check_finite(
            "mesh collider origin",
            0,
            (origin.x + origin.y + origin.z) as f32,
        )?;
        self.origin = origin;
        Ok(())
    }

    /// The vertex positions (inverse masses in w), relative to [`MeshCollider::origin`].
    pub fn vertices(&self) -> &[Packed4] {
        &self.x
    }

    /// The triangles.
    pub fn triangles(&self) -> &[[u32; 3]] {
        &self.triangles
    }

    /// The box `(lo, hi)` of every vertex.
    pub fn bounds(&self) -> (Vec3, Vec3) {
        self.bvh.boxes().next().unwrap_or((Vec3::ZERO, Vec3::ZERO))
    }

    /// Calls `f` with every triangle whose BVH leaf overlaps `lo..=hi`.
    /// The displacement over the substep of the point at `bary` on triangle `tri` (zero for
    /// a static surface).
    pub(crate) fn motion_at(&self, tri: [u32; 3], bary: Vec3) -> Vec3 {
        if self.motion.is_empty() {
            return Vec3::ZERO;
        }
        let m = |k: usize| self.motion[tri[k] as usize];
        m(0) * bary.x + m(1) * bary.y + m(2) * bary.z
    }

    /// The displacement of vertex `v` over the substep (zero for a static surface).
    pub(crate) fn vertex_motion(&self, v: usize) -> Vec3 {
        self.motion.get(v).copied().unwrap_or(Vec3::ZERO)
    }

    pub(crate) fn bvh_overlapping(&self, lo: Vec3, hi: Vec3, mut f: impl FnMut([u32; 3])) {
        self.bvh.for_each_overlapping(lo, hi, |_, t| f(t));
    }

    /// The contact of a particle moving from `from` to `to` this substep (module doc), or
    /// `None` when it neither crosses nor comes within the thickness plus `margin` of any
    /// triangle.
    pub fn contact(&self, from: Vec3, to: Vec3, margin: f32) -> Option<PlaneHit> {
        let reach = self.thickness + margin;
        let lo = from.min(to) - Vec3::splat(reach);
        let hi = from.max(to) + Vec3::splat(reach);
        // (crossing, key, triangle, barycentric, signed distance of `to` from the face's
        // plane): crossings first by t, then the nearest, near-equal distances on a closed
        // surface by the signed distance (module doc).
        let tie = if self.closed { 1e-3 * reach } else { -1.0 };
        let mut best: Option<(bool, f32, [u32; 3], Vec3, f32)> = None;
        // A leaf's box holds up to four triangles; about half of those a query visits are
        // clear of its box. `slack` is far above the rounding of the exact tests below, so a
        // triangle clear of the box by more than it on one axis is one they would reject: its
        // points are all farther than the reach from `to` and off the path.
        let slack = Vec3::splat(1e-5 * (1.0 + from.abs().max(to.abs()).max_element()));
        let (near_lo, near_hi) = (lo - slack, hi + slack);
        self.bvh.for_each_overlapping(lo, hi, |_, tri| {
            let [a, b, c] = tri.map(|v| self.x[v as usize].xyz());
            if a.min(b).min(c).cmpgt(near_hi).any() || a.max(b).max(c).cmplt(near_lo).any() {
                return;
            }
            // The distances of `from` and `to` from the face's plane (times |n|) rule most
            // triangles out before the exact tests: a path that stays on one side cannot
            // cross, and a `to` farther than `reach` from the plane is farther from the
            // triangle. `tol` is far above the rounding of these f32 products, so a triangle
            // is skipped only where both exact tests would reject it too.
            let n = (b - a).cross(c - a);
            let n_len = n.length();
            let (sf, st) = (n.dot(from - a), n.dot(to - a));
            let tol = 1e-5
                * n_len
                * (1.0 + (from - a).abs().max_element() + (to - a).abs().max_element());
            let one_side = (sf > tol && st > tol) || (sf < -tol && st < -tol);
            if one_side && st.abs() > reach * n_len + tol {
                return;
            }
            let crossing = if one_side {
                None
            } else {
                segment_triangle(from, to, a, b, c)
            };
            let candidate = match crossing {
                Some((t, bary)) => Some((true, t, bary)),
                None => {
                    let (q, bary) = closest_point_on_triangle(to, a, b, c);
                    let d = (to - q).length();
                    (d < reach).then_some((false, d, bary))
                }
            };
            if let Some((crossing, key, bary)) = candidate {
                // Only the tie-break on a closed surface reads it.
                let side = if self.closed {
                    (b - a).cross(c - a).normalize_or_zero().dot(to - a)
                } else {
                    0.0
                };
                let better = match best {
                    None => true,
                    Some((bc, bk, _, _, bs)) if crossing == bc => {
                        if !crossing && (key - bk).abs() <= tie {
                            side > bs
                        } else {
                            key < bk
                        }
                    }
                    Some((bc, ..)) => crossing && !bc,
                };
                if better {
                    best = Some((crossing, key, tri, bary, side));
                }
            }
        });
        let (_, _, tri, bary, _) = best?;
        let [a, b, c] = tri.map(|v| self.x[v as usize].xyz());
        let face = (b - a).cross(c - a);
        let len = face.length();
        if len <= 0.0 {
            return None;
        }
        let mut n = face / len;
        if !self.closed {
            // The side of an open surface is the one the particle starts the substep on,
            // judged against the triangle where it starts the substep too: against the moved
            // triangle a particle resting on a surface that springs back up past it would be
            // sent through.
            let [a0, b0, c0] = [0, 1, 2]
                .map(|k| self.x[tri[k] as usize].xyz() - self.vertex_motion(tri[k] as usize));
            let n0 = (b0 - a0).cross(c0 - a0);
            let side = n0.dot(from - a0);
            let flip = if side != 0.0 && n0.dot(n) != 0.0 {
                (side > 0.0) != (n0.dot(n) > 0.0)
            } else {
                n.dot(from - a) < 0.0
            };
            if flip {
                n = -n;
            }
        }
        let blend =
            |f: &dyn Fn(u32) -> f32| bary.x * f(tri[0]) + bary.y * f(tri[1]) + bary.z * f(tri[2]);
        let surface_w = blend(&|v| self.x[v as usize].w);
        if !surface_w.is_finite() {
            return None;
        }
        let offset = n.dot(a) + self.thickness;
        let motion = self.motion_at(tri, bary);
        Some(PlaneHit {
            normal: n,
            offset,
            motion,
            surface_w,
            triangle: tri,
            bary,
        })
    }
}
