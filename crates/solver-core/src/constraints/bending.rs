//! Bending: the dihedral-angle constraint, the isometric bending constraint, and the "bending
//! links" of Godot and Bullet.
//!
//! Theory. Each bending constraint acts on the stencil of two triangles sharing an edge:
//! `x0`, `x1` on the shared edge (in the winding of the first triangle), `x2` opposite in the
//! first triangle, `x3` opposite in the second.
//!
//! Dihedral (Müller et al. 2007, "Position Based Dynamics", §4.2, with the signed angle of
//! Bridson et al. 2003, "Simulation of clothing with folds and wrinkles"): with
//! `e = x1 - x0`, `ê = e / |e|` and the wing normals `nA = e × (x2 - x0)`,
//! `nB = (x3 - x0) × e` (both point to the same side when the stencil is flat), the angle
//!
//! ```text
//! θ = atan2((nA × nB) · ê, nA · nB)   in [-π, π]
//! ```
//!
//! is signed about the shared edge: 0 flat, positive when x3 lies on the side of the first
//! triangle's plane away from `nA` (`nA · (x3 - x0) < 0`, as `nA × nB = -e (nA · (x3 - x0))`),
//! negative on the side `nA` points to, ±π folded flat onto itself. The rest angle `θ0` is
//! stored with its sign, in `(-π, π]`, and the constraint is the deviation wrapped once around
//! the circle,
//!
//! ```text
//! C = wrap(θ - θ0),   wrap(d) = d - 2πk   in (-π, π]  (k an integer),
//! ```
//!
//! so that a crease and its mirror image (`θ0` and `-θ0`) are different rest states: pushed
//! through flat, a concave crease is pulled back to concave, never on to its convex mirror,
//! and two different angles never give the same `C` (`wrap(θ - θ0)` is one-to-one on the
//! circle). `C` has no jump where the stencil folds onto itself (θ = ±π are one
//! configuration and `wrap` identifies them), so a fully folded rest state (`θ0 = π`) holds;
//! its one jump is half a turn away from the rest state, at `θ = θ0 + π`, where the two ways
//! back are equally long. The `atan2` form keeps a finite gradient at the flat rest state of
//! cloth, where Müller's `acos(nA · nB)` has an infinite one. `∇C = ∇θ`, with Bridson's
//! gradients:
//!
//! ```text
//! ∇2 θ = -|e| nA / |nA|²,   ∇3 θ = -|e| nB / |nB|²,
//! ∇0 θ = -((1 - s2) ∇2 θ + (1 - s3) ∇3 θ),  ∇1 θ = -(s2 ∇2 θ + s3 ∇3 θ),
//! s_k = (x_k - x0) · e / |e|²
//! ```
//!
//! The step is linearised: it moves the wings along their normals, not along arcs, so a large
//! angle error throws them past their neighbours; on the docs/SCENES.md flag (compliance 1e-4,
//! 8 iterations) that diverged within 100 steps at n = 16. `C` is therefore clamped to
//! ±[`DIHEDRAL_MAX_STEP`] (a trust region: one projection corrects at most 0.5 rad, several
//! iterations correct more); residual figures see the clamped value.
//!
//! Isometric (Bergou et al. 2006, "A quadratic bending model for inextensible surfaces";
//! Bender et al. 2014, "Position-based simulation of continuous materials"): for a flat rest
//! stencil the bending energy is `E = ½ xᵀ Q x` with `Q = 3 / (A0 + A1) K Kᵀ` and
//! `K = (c03 + c04, c01 + c02, -c01 - c03, -c02 - c04)` built from the rest cotangents
//! (c01, c02 at x0 in the two triangles, c03, c04 at x1). We use `C = √(xᵀ Q x) = |Σ k_i x_i|`
//! with `k = √(3 / (A0 + A1)) K`, so that XPBD's energy `½ α⁻¹ C²` is Bergou's energy with
//! bending stiffness `1/α`; `∇_i C = k_i v̂`, `v = Σ k_i x_i`. The model assumes a flat rest
//! stencil (cloth); a curved rest stencil is pulled flat.
//!
//! Bending links (Godot's SoftBody3D and Bullet's `generateBendingConstraints(2)`): a distance
//! constraint between every pair of particles two edges apart. They go into the distance table
//! after the structural and shear constraints, so every distance kernel handles them.

use super::{check_compliance, ConstraintKind, MAX_ARITY};
use crate::error::check_particles;
use crate::error::{Result, WobbleError};
use crate::geometry::packed::Packed4;
use glam::Vec3;
use std::collections::HashMap;
use std::f32::consts::{PI, TAU};

/// The bending stencils of a triangle list: for each edge shared by exactly two triangles,
/// `[x0, x1, x2, x3]` with x0→x1 the edge in the first triangle's winding, x2 the first
/// triangle's third corner and x3 the second's. Non-manifold edges (more than two triangles) get
/// no stencil: which pair would bend is ambiguous (`repair::bending_hinges` and the repair
/// report name them). Stencils come in the order their second triangle appears.
pub fn bending_stencils(triangles: &[[u32; 3]]) -> Vec<[u32; 4]> {
    let key = |a: u32, b: u32| (a.min(b), a.max(b));
    let mut count: HashMap<(u32, u32), u32> = HashMap::with_capacity(triangles.len() * 2);
    for tri in triangles {
        for k in 0..3 {
            *count.entry(key(tri[k], tri[(k + 1) % 3])).or_default() += 1;
        }
    }
    let mut first: HashMap<(u32, u32), [u32; 3]> = HashMap::with_capacity(triangles.len() * 2);
    let mut out = Vec::with_capacity(triangles.len() * 3 / 2);
    for tri in triangles {
        for k in 0..3 {
            let (a, b, c) = (tri[k], tri[(k + 1) % 3], tri[(k + 2) % 3]);
            if count[&key(a, b)] != 2 {
                continue;
            }
            match first.get(&key(a, b)) {
                Some(&[a0, b0, c0]) => {
                    if c != c0 && c != a0 && c != b0 {
                        out.push([a0, b0, c0, c]);
                    }
                }
                None => {
                    first.insert(key(a, b), [a, b, c]);
                }
            }
        }
    }
    out
}

#[inline(always)]
fn positions(x: &[Packed4], ids: &[u32; 4]) -> [Vec3; 4] {
    ids.map(|p| x[p as usize].xyz())
}

/// Signed dihedral angle of a stencil and its gradients (zero gradients when degenerate).
#[inline(always)]
pub fn dihedral_angle_and_grad(p: [Vec3; 4], grad: &mut [Vec3; MAX_ARITY]) -> f32 {
    let [x0, x1, x2, x3] = p;
    let e = x1 - x0;
    let el2 = e.length_squared();
    let na = e.cross(x2 - x0);
    let nb = (x3 - x0).cross(e);
    let (la2, lb2) = (na.length_squared(), nb.length_squared());
    let tiny = 1e-12 * el2 * el2;
    if el2 <= f32::MIN_POSITIVE || la2 <= tiny || lb2 <= tiny {
        *grad = [Vec3::ZERO; MAX_ARITY];
        return 0.0;
    }
    let el = el2.sqrt();
    let theta = (na.cross(nb).dot(e) / el).atan2(na.dot(nb));
    let g2 = na * (-el / la2);
    let g3 = nb * (-el / lb2);
    let s2 = (x2 - x0).dot(e) / el2;
    let s3 = (x3 - x0).dot(e) / el2;
    grad[0] = -(g2 * (1.0 - s2) + g3 * (1.0 - s3));
    grad[1] = -(g2 * s2 + g3 * s3);
    grad[2] = g2;
    grad[3] = g3;
    theta
}

/// `θ` as a rest angle: in `(-π, π]`, the fold `-π` (from a `-0.0` sine term) stored as `π`,
/// the same configuration.
pub fn signed_rest_angle(theta: f32) -> f32 {
    if theta <= -PI {
        PI
    } else {
        theta
    }
}

/// The dihedral constraint's value before its trust region: `θ - θ0` wrapped into `(-π, π]`
/// (`θ`, `θ0` in `[-π, π]`, see the module's theory). One-to-one in `θ` on the circle, and
/// continuous across the fold `θ = ±π`.
#[inline]
pub fn dihedral_deviation(theta: f32, rest: f32) -> f32 {
    let d = theta - rest;
    if d > PI {
        d - TAU
    } else if d <= -PI {
        d + TAU
    } else {
        d
    }
}

/// The largest angle (radians) one dihedral projection corrects: the trust region of the
/// linearised step (see the module's theory).
pub const DIHEDRAL_MAX_STEP: f32 = 0.5;

/// Dihedral-angle bending constraints `C = wrap(θ - θ0)` on triangle pairs (see the module's
/// theory), clamped to ±[`DIHEDRAL_MAX_STEP`].
#[derive(Clone, Debug, Default)]
pub struct DihedralBending {
    /// Stencils `[x0, x1, x2, x3]` (see [`bending_stencils`]).
    pub stencils: Vec<[u32; 4]>,
    /// Signed rest angles θ0 in (-π, π] (the sign of [`dihedral_angle_and_grad`]).
    pub rest: Vec<f32>,
    /// Compliances α (1 / (bending stiffness in N·m per rad²); 0 = rigid).
    pub compliance: Vec<f32>,
}

/// The [`bending_stencils`] of `triangles`, once every corner is checked against `x`.
fn checked_bending_stencils(x: &[Packed4], triangles: &[[u32; 3]]) -> Result<Vec<[u32; 4]>> {
    for (t, tri) in triangles.iter().enumerate() {
        check_particles("triangle", t, tri, x.len())?;
    }
    Ok(bending_stencils(triangles))
}

impl DihedralBending {
    /// One constraint per edge shared by two of `triangles`, rest angles taken from `x`.
    pub fn from_triangles(x: &[Packed4], triangles: &[[u32; 3]], compliance: f32) -> Result<Self> {
        Self::from_stencils(x, &checked_bending_stencils(x, triangles)?, compliance)
    }

    /// One constraint per stencil, rest angles taken from `x`.
    pub fn from_stencils(x: &[Packed4], stencils: &[[u32; 4]], compliance: f32) -> Result<Self> {
        let mut grad = [Vec3::ZERO; MAX_ARITY];
        let (stencils, rest, compliance) =
            stencil_rows(x, stencils, compliance, "dihedral bending", |k, s, p| {
                if (p[1] - p[0]).cross(p[2] - p[0]).length_squared() == 0.0
                    || (p[1] - p[0]).cross(p[3] - p[0]).length_squared() == 0.0
                {
                    return Err(WobbleError::DegenerateTriangle {
                        index: k,
                        a: s[0],
                        b: s[1],
                        c: s[2],
                    });
                }
                Ok(signed_rest_angle(dihedral_angle_and_grad(p, &mut grad)))
            })?;
        Ok(DihedralBending {
            stencils,
            rest,
            compliance,
        })
    }
}

/// The columns of a bending table: stencils, a datum per stencil, compliances.
type StencilColumns<T> = (Vec<[u32; 4]>, Vec<T>, Vec<f32>);

/// The columns of a bending table: `compliance` checked, then each stencil (the `what` table's
/// row `k`) checked against `x` and given the datum that `datum` computes from its positions
/// (or the error refusing the stencil).
fn stencil_rows<T>(
    x: &[Packed4],
    stencils: &[[u32; 4]],
    compliance: f32,
    what: &'static str,
    mut datum: impl FnMut(usize, &[u32; 4], [Vec3; 4]) -> Result<T>,
) -> Result<StencilColumns<T>> {
    check_compliance(compliance)?;
    let mut data = Vec::new();
    for (k, s) in stencils.iter().enumerate() {
        check_particles(what, k, s, x.len())?;
        data.push(datum(k, s, positions(x, s))?);
    }
    Ok((stencils.to_vec(), data, vec![compliance; stencils.len()]))
}

impl ConstraintKind for DihedralBending {
    index_table_accessors!("dihedral_bending", stencils);
    fn evaluate(&self, c: usize, x: &[Packed4], grad: &mut [Vec3; MAX_ARITY]) -> f32 {
        let theta = dihedral_angle_and_grad(positions(x, &self.stencils[c]), grad);
        dihedral_deviation(theta, self.rest[c]).clamp(-DIHEDRAL_MAX_STEP, DIHEDRAL_MAX_STEP)
    }
    fn scale(&self) -> f32 {
        1.0
    }
}

/// `cot` of the angle between `a` and `b`.
fn cot(a: Vec3, b: Vec3) -> f32 {
    a.dot(b) / a.cross(b).length()
}

/// Isometric bending constraints `C = |Σ k_i x_i|` on triangle pairs (flat rest).
#[derive(Clone, Debug, Default)]
pub struct IsometricBending {
    /// Stencils `[x0, x1, x2, x3]` (see [`bending_stencils`]).
    pub stencils: Vec<[u32; 4]>,
    /// Weights k_i = √(3 / (A0 + A1)) K_i of each stencil (they sum to 0), in 1/m.
    pub weights: Vec<[f32; 4]>,
    /// Compliances α (1 / (bending stiffness in N·m); 0 = rigid).
    pub compliance: Vec<f32>,
}

impl IsometricBending {
    /// One constraint per edge shared by two of `triangles`, weights from the rest pose `x`.
    pub fn from_triangles(x: &[Packed4], triangles: &[[u32; 3]], compliance: f32) -> Result<Self> {
        Self::from_stencils(x, &checked_bending_stencils(x, triangles)?, compliance)
    }

    /// One constraint per stencil, weights from the rest pose `x`.
    pub fn from_stencils(x: &[Packed4], stencils: &[[u32; 4]], compliance: f32) -> Result<Self> {
        let (stencils, weights, compliance) =
            stencil_rows(x, stencils, compliance, "isometric bending", |k, s, p| {
                let [x0, x1, x2, x3] = p;
                let (e0, e1, e2) = (x1 - x0, x2 - x0, x3 - x0);
                let (e3, e4) = (x2 - x1, x3 - x1);
                let a0 = 0.5 * e0.cross(e1).length();
                let a1 = 0.5 * e0.cross(e2).length();
                let scale = e0.length_squared();
                if !(a0 > 1e-9 * scale && a1 > 1e-9 * scale) {
                    return Err(WobbleError::DegenerateTriangle {
                        index: k,
                        a: s[0],
                        b: s[1],
                        c: if a0 > 1e-9 * scale { s[3] } else { s[2] },
                    });
                }
                let (c01, c02) = (cot(e0, e1), cot(e0, e2));
                let (c03, c04) = (cot(-e0, e3), cot(-e0, e4));
                let f = (3.0 / (a0 + a1)).sqrt();
                Ok([
                    f * (c03 + c04),
                    f * (c01 + c02),
                    -f * (c01 + c03),
                    -f * (c02 + c04),
                ])
            })?;
        Ok(IsometricBending {
            stencils,
            weights,
            compliance,
        })
    }
}

/// `C = |Σ k_i x_i|` of one isometric stencil and its gradients.
#[inline(always)]
fn isometric_value_and_grad(p: [Vec3; 4], k: [f32; 4], grad: &mut [Vec3; MAX_ARITY]) -> f32 {
    // Σ k_i = 0, so positions relative to x0 give the same v with less rounding.
    let v = (p[1] - p[0]) * k[1] + (p[2] - p[0]) * k[2] + (p[3] - p[0]) * k[3];
    let len = v.length();
    if len <= f32::MIN_POSITIVE {
        *grad = [Vec3::ZERO; MAX_ARITY];
        return 0.0;
    }
    let n = v / len;
    for s in 0..4 {
        grad[s] = n * k[s];
    }
    len
}

impl ConstraintKind for IsometricBending {
    index_table_accessors!("isometric_bending", stencils);
    fn evaluate(&self, c: usize, x: &[Packed4], grad: &mut [Vec3; MAX_ARITY]) -> f32 {
        isometric_value_and_grad(positions(x, &self.stencils[c]), self.weights[c], grad)
    }
    fn scale(&self) -> f32 {
        1.0
    }
}
