//! Volume constraints: one per tetrahedron, and one global (pressure) constraint over a closed
//! triangle surface.
//!
//! Theory. Tetrahedron (Müller et al. 2007, "Position Based Dynamics", §4.3 and XPBD):
//!
//! ```text
//! C = V - V0,   V = (x1 - x0) · ((x2 - x0) × (x3 - x0)) / 6
//! ∇1 C = (x2 - x0) × (x3 - x0) / 6,  ∇2 C = (x3 - x0) × (x1 - x0) / 6,
//! ∇3 C = (x1 - x0) × (x2 - x0) / 6,  ∇0 C = -(∇1 C + ∇2 C + ∇3 C)
//! ```
//!
//! Closed surface (the "balloon" of Müller et al. 2007, §4.4): the enclosed volume by the
//! divergence theorem, `V = Σ_t x_a · (x_b × x_c) / 6` over the outward-oriented triangles, and
//! `C = V - p V0` with a pressure factor `p` (1 keeps the rest volume). Its gradient at particle i
//! is `Σ_{t ∋ i} (x_b × x_c) / 6` with (i, b, c) the triangle's corners in cyclic order. One
//! constraint couples every surface particle, so it is a *global* kind
//! ([`ConstraintKind::is_global`]): solvers project it whole, once per iteration. The positions
//! are taken relative to one surface particle before the cross products (the volume of a
//! closed surface does not depend on the origin) so that f32 keeps its precision far from 0.

use super::{check_compliance, xpbd_delta_lambda, ConstraintKind, MAX_ARITY};
use crate::error::check_particles;
use crate::error::check_positive;
use crate::error::{Result, WobbleError};
use crate::geometry::packed::Packed4;
use crate::geometry::volume::signed_tet_volume;
use glam::{DMat3, DVec3, Vec3};
use std::sync::Mutex;

/// One volume constraint per tetrahedron.
#[derive(Clone, Debug, Default)]
pub struct TetVolume {
    /// Tetrahedra, positive signed volume in the rest pose.
    pub tets: Vec<[u32; 4]>,
    /// Rest volumes V0 (> 0).
    pub rest: Vec<f32>,
    /// Compliances α (m³/N·... : inverse of the volume stiffness; 0 = incompressible).
    pub compliance: Vec<f32>,
}

impl TetVolume {
    /// Volume constraints on `tets` with the rest volumes they have in `x`; each must be
    /// positive (an inverted or flat tetrahedron is an error).
    pub fn new(x: &[Packed4], tets: &[[u32; 4]], compliance: f32) -> Result<Self> {
        check_compliance(compliance)?;
        let mut t = TetVolume::default();
        for (k, tet) in tets.iter().enumerate() {
            check_particles("tetrahedron", k, tet, x.len())?;
            let [a, b, c, d] = tet.map(|p| x[p as usize].xyz());
            let v = signed_tet_volume(a, b, c, d);
            if v.is_nan() || v <= 0.0 {
                return Err(WobbleError::InvertedTetrahedron {
                    index: k,
                    volume: v,
                });
            }
            t.tets.push(*tet);
            t.rest.push(v);
            t.compliance.push(compliance);
        }
        Ok(t)
    }

    /// Mean rest volume (1 when empty).
    pub fn mean_rest(&self) -> f32 {
        super::mean_rest(&self.rest)
    }
}

#[inline(always)]
fn tet_value_and_grad(
    x: &[Packed4],
    tet: [u32; 4],
    rest: f32,
    grad: &mut [Vec3; MAX_ARITY],
) -> f32 {
    let p0 = x[tet[0] as usize].xyz();
    let e1 = x[tet[1] as usize].xyz() - p0;
    let e2 = x[tet[2] as usize].xyz() - p0;
    let e3 = x[tet[3] as usize].xyz() - p0;
    let sixth = 1.0 / 6.0;
    grad[1] = e2.cross(e3) * sixth;
    grad[2] = e3.cross(e1) * sixth;
    grad[3] = e1.cross(e2) * sixth;
    grad[0] = -(grad[1] + grad[2] + grad[3]);
    e1.dot(grad[1]) - rest
}

impl ConstraintKind for TetVolume {
    index_table_accessors!("tet_volume", tets);
    fn evaluate(&self, c: usize, x: &[Packed4], grad: &mut [Vec3; MAX_ARITY]) -> f32 {
        tet_value_and_grad(x, self.tets[c], self.rest[c], grad)
    }
    fn scale(&self) -> f32 {
        self.mean_rest()
    }
    fn has_second_order(&self) -> bool {
        true
    }
    fn second_order(
        &self,
        c: usize,
        x: &[DVec3],
        grad: &mut [DVec3; MAX_ARITY],
        hess: &mut super::Hessian,
    ) -> Option<f64> {
        Some(tet_second_order(x, self.tets[c], self.rest[c], grad, hess))
    }
}

/// `C = V - rest` in `f64`, `V = e1 · (e2 × e3) / 6` with `e_k = x_k - x_0`, its gradient and
/// Hessian. `V` is linear in each edge vector, so `∂²V/∂e_k²` = 0, and
/// `∂²V/∂e_a ∂e_b = ε_abk [e_k]× / 6` over the third edge `k` (`[v]×` the cross-product
/// matrix); `x_0` enters every edge with a minus sign.
fn tet_second_order(
    x: &[DVec3],
    tet: [u32; 4],
    rest: f32,
    grad: &mut [DVec3; MAX_ARITY],
    hess: &mut super::Hessian,
) -> f64 {
    let p0 = x[tet[0] as usize];
    let e = [1, 2, 3].map(|k| x[tet[k] as usize] - p0);
    let sixth = 1.0 / 6.0;
    grad[1] = e[1].cross(e[2]) * sixth;
    grad[2] = e[2].cross(e[0]) * sixth;
    grad[3] = e[0].cross(e[1]) * sixth;
    grad[0] = -(grad[1] + grad[2] + grad[3]);
    let cross = |v: DVec3| {
        DMat3::from_cols(
            DVec3::new(0.0, v.z, -v.y),
            DVec3::new(-v.z, 0.0, v.x),
            DVec3::new(v.y, -v.x, 0.0),
        ) * sixth
    };
    // he[a][b] = ∂²V / ∂e_a ∂e_b: ∂(e_b × e_k)/∂e_b = -[e_k]× for the cyclic (a, b, k).
    let mut he = [[DMat3::ZERO; 3]; 3];
    #[allow(clippy::needless_range_loop)]
    for a in 0..3 {
        let (b, k) = ((a + 1) % 3, (a + 2) % 3);
        he[a][b] = -cross(e[k]);
        he[b][a] = cross(e[k]);
    }
    // x_a for a >= 1 is e_(a-1); x_0 is minus every edge.
    let sign = |a: usize, i: usize| -> f64 {
        if a == 0 {
            -1.0
        } else if a == i + 1 {
            1.0
        } else {
            0.0
        }
    };
    for (a, row) in hess.iter_mut().enumerate() {
        for (b, out) in row.iter_mut().enumerate() {
            let mut m = DMat3::ZERO;
            for (i, he_i) in he.iter().enumerate() {
                for (j, block) in he_i.iter().enumerate() {
                    let s = sign(a, i) * sign(b, j);
                    if s != 0.0 {
                        m += *block * s;
                    }
                }
            }
            *out = m;
        }
    }
    e[0].dot(grad[1]) - rest as f64
}

/// The specialised scalar projection of tetrahedron volume constraints `range` (no dynamic
/// dispatch); equals [`super::project_generic`] on each in turn. `lambda` is indexed like the
/// table.
pub fn project_tet_volumes(
    x: &mut [Packed4],
    table: &TetVolume,
    range: std::ops::Range<usize>,
    lambda: &mut [f32],
    inv_dt2: f32,
    k: f32,
) {
    let mut grad = [Vec3::ZERO; MAX_ARITY];
    for c in range {
        let tet = table.tets[c];
        let value = tet_value_and_grad(x, tet, table.rest[c], &mut grad);
        let alpha = table.compliance[c] * inv_dt2;
        let w = tet.map(|p| x[p as usize].w);
        let denom = alpha
            + w[0] * grad[0].length_squared()
            + w[1] * grad[1].length_squared()
            + w[2] * grad[2].length_squared()
            + w[3] * grad[3].length_squared();
        let Some(dl) = xpbd_delta_lambda(value, lambda[c], alpha, denom) else {
            continue;
        };
        lambda[c] += dl;
        for s in 0..4 {
            let q = &mut x[tet[s] as usize];
            let f = k * w[s] * dl;
            q.x += f * grad[s].x;
            q.y += f * grad[s].y;
            q.z += f * grad[s].z;
        }
    }
}

/// The global volume (pressure) constraint of one closed, outward-oriented triangle surface.
#[derive(Debug)]
pub struct SurfaceVolume {
    // The surface particles, sorted and distinct.
    particles: Vec<u32>,
    // Triangles as indices into `particles` (local slots), outward counter-clockwise.
    local_triangles: Vec<[u32; 3]>,
    /// Rest volume V0 (> 0).
    pub rest: f32,
    /// Pressure factor p: the target volume is `p V0`.
    pub pressure: f32,
    /// Compliance α (0 = incompressible).
    pub compliance: f32,
    // Per-slot gradient, reused by every projection so that projecting does not allocate.
    grad: Mutex<Vec<Vec3>>,
}

impl Clone for SurfaceVolume {
    fn clone(&self) -> Self {
        SurfaceVolume {
            particles: self.particles.clone(),
            local_triangles: self.local_triangles.clone(),
            rest: self.rest,
            pressure: self.pressure,
            compliance: self.compliance,
            grad: Mutex::new(vec![Vec3::ZERO; self.particles.len()]),
        }
    }
}

impl SurfaceVolume {
    /// The volume constraint of the closed surface `triangles` over positions `x`, with the
    /// rest volume it encloses in `x`. The surface must enclose a positive volume
    /// (outward-facing triangles); closedness is the caller's to check (see
    /// [`crate::mesh::EdgeAdjacency::is_closed`]).
    pub fn new(x: &[Packed4], triangles: &[[u32; 3]], compliance: f32) -> Result<Self> {
        check_compliance(compliance)?;
        if triangles.is_empty() {
            return Err(WobbleError::EmptyMesh("closed surface".into()));
        }
        for (t, tri) in triangles.iter().enumerate() {
            check_particles("surface triangle", t, tri, x.len())?;
        }
        let mut particles: Vec<u32> = triangles.iter().flatten().copied().collect();
        particles.sort_unstable();
        particles.dedup();
        let mut slot = vec![u32::MAX; x.len()];
        for (s, &p) in particles.iter().enumerate() {
            slot[p as usize] = s as u32;
        }
        let local_triangles = triangles
            .iter()
            .map(|t| t.map(|p| slot[p as usize]))
            .collect();
        let mut v = SurfaceVolume {
            grad: Mutex::new(vec![Vec3::ZERO; particles.len()]),
            particles,
            local_triangles,
            rest: 1.0,
            pressure: 1.0,
            compliance,
        };
        let rest = v.volume(x);
        if !(rest.is_finite() && rest > 0.0) {
            return Err(WobbleError::BadParameter {
                name: "enclosed volume",
                value: rest,
                reason:
                    "a closed surface must enclose a positive volume (outward-facing triangles)",
            });
        }
        v.rest = rest as f32;
        Ok(v)
    }

    /// Sets the pressure factor p (> 0): the constraint keeps the volume at `p V0`.
    pub fn with_pressure(mut self, pressure: f32) -> Result<Self> {
        check_positive("pressure", pressure)?;
        self.pressure = pressure;
        Ok(self)
    }

    /// The surface triangles as slots into [`ConstraintKind::particles`].
    pub fn local_triangles(&self) -> &[[u32; 3]] {
        &self.local_triangles
    }

    /// The volume the surface encloses at `x` (f64 sum).
    pub fn volume(&self, x: &[Packed4]) -> f64 {
        let origin = x[self.particles[0] as usize].xyz();
        let at = |s: u32| x[self.particles[s as usize] as usize].xyz() - origin;
        let mut v = 0.0f64;
        for t in &self.local_triangles {
            let (a, b, c) = (at(t[0]), at(t[1]), at(t[2]));
            v += a.dot(b.cross(c)) as f64;
        }
        v / 6.0
    }

    /// Writes ∇C per slot into `grad` (zeroed first) and returns C.
    fn value_and_grad(&self, x: &[Packed4], grad: &mut [Vec3]) -> f32 {
        grad.iter_mut().for_each(|g| *g = Vec3::ZERO);
        let origin = x[self.particles[0] as usize].xyz();
        let at = |s: u32| x[self.particles[s as usize] as usize].xyz() - origin;
        let mut v = 0.0f64;
        for t in &self.local_triangles {
            let (a, b, c) = (at(t[0]), at(t[1]), at(t[2]));
            let bc = b.cross(c);
            v += a.dot(bc) as f64;
            grad[t[0] as usize] += bc;
            grad[t[1] as usize] += c.cross(a);
            grad[t[2] as usize] += a.cross(b);
        }
        let sixth = 1.0 / 6.0;
        grad.iter_mut().for_each(|g| *g *= sixth);
        (v / 6.0) as f32 - self.pressure * self.rest
    }
}

impl ConstraintKind for SurfaceVolume {
    fn name(&self) -> &'static str {
        "surface_volume"
    }
    fn len(&self) -> usize {
        1
    }
    fn particles(&self, _c: usize) -> &[u32] {
        &self.particles
    }
    fn compliance(&self, _c: usize) -> f32 {
        self.compliance
    }
    fn evaluate(&self, _c: usize, x: &[Packed4], _grad: &mut [Vec3; MAX_ARITY]) -> f32 {
        (self.volume(x) - (self.pressure * self.rest) as f64) as f32
    }
    fn scale(&self) -> f32 {
        self.rest
    }
    fn particle_indices_mut(&mut self) -> &mut [u32] {
        // Slots keep their order, so the local triangles stay valid.
        &mut self.particles
    }
    fn is_global(&self) -> bool {
        true
    }
    fn project_global(
        &self,
        c: usize,
        x: &mut [Packed4],
        lambda: &mut f32,
        alpha_tilde: f32,
        k: f32,
    ) -> f32 {
        debug_assert_eq!(c, 0);
        let mut guard = match self.grad.lock() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        };
        let grad = guard.as_mut_slice();
        let value = self.value_and_grad(x, grad);
        let mut denom = alpha_tilde;
        for (s, &p) in self.particles.iter().enumerate() {
            denom += x[p as usize].w * grad[s].length_squared();
        }
        // A surface so large that its volume overflows is left alone rather than poisoned.
        if !value.is_finite() {
            return 0.0;
        }
        let Some(dl) = xpbd_delta_lambda(value, *lambda, alpha_tilde, denom) else {
            return 0.0;
        };
        *lambda += dl;
        for (s, &p) in self.particles.iter().enumerate() {
            let q = &mut x[p as usize];
            let f = k * q.w * dl;
            q.x += f * grad[s].x;
            q.y += f * grad[s].y;
            q.z += f * grad[s].z;
        }
        dl
    }
}
