//! The stable Neo-Hookean constraint pair for tetrahedra.
//!
//! Theory (Macklin and Müller 2021, "A constraint-based formulation of stable Neo-Hookean
//! materials"). With the deformation gradient `F = D_s D_m⁻¹` (`D_s = [x1-x0, x2-x0, x3-x0]`,
//! `D_m` the same at rest) and Lamé parameters μ, λ, Smith et al.'s stable Neo-Hookean energy
//! splits into two constraints per tetrahedron of rest volume V0:
//!
//! ```text
//! hydrostatic  C_H = det F - γ,       γ = 1 + μ/λ,   α_H = 1 / (λ V0),   ∂C_H/∂F = cof F
//! deviatoric   C_D = √(tr FᵀF),                       α_D = 1 / (μ V0),   ∂C_D/∂F = F / |F|
//! ```
//!
//! and `∇_{x1,x2,x3} C = columns of (∂C/∂F) D_m⁻ᵀ`, `∇_{x0} C = -Σ`. The shift γ makes the rest
//! state a minimum of the summed energy (the deviatoric term pulls inward by μ, the hydrostatic
//! one pushes back). `C_D` is never 0; XPBD balances it with the hydrostatic constraint, so this
//! kind needs its compliances (PBD mode, where compliance is ignored, collapses it). Constraint
//! `2t` is tetrahedron t's hydrostatic one, `2t + 1` its deviatoric one; they share their
//! particles, so colorings put them apart.
//!
//! Convergence: at rest both gradients are parallel to `D_m⁻ᵀ`, so projecting them one after
//! the other (Gauss-Seidel) balances their large opposing multipliers slowly — the paper solves
//! each pair as one 2×2 system for this reason. Projected separately, as every solver here
//! does, a stiff material needs small substeps: a 1 kg, 20 kPa bar hanging at dt = 1/60 settled
//! 1.3% below its rest volume with 10 substeps (4 or 50 iterations alike) and within 10% of
//! Hooke's elongation with 40 substeps of 4 iterations (tests/materials.rs).

use super::material::Material;
use super::{ConstraintKind, MAX_ARITY};
use crate::error::check_particles;
use crate::error::{check_index, Result, WobbleError};
use crate::geometry::packed::Packed4;
use glam::{Mat3, Vec3};

/// Lamé parameters of a material the pair accepts: 0 < ν < 0.5 (finite λ > 0).
fn checked_lame(material: &Material) -> Result<(f32, f32)> {
    material.validate()?;
    let (mu, lambda) = material.lame();
    if !(lambda > 0.0 && lambda.is_finite()) {
        return Err(WobbleError::BadParameter {
            name: "Poisson's ratio",
            value: material.poisson as f64,
            reason: "the Neo-Hookean pair needs 0 < ν < 0.5 (finite λ > 0)",
        });
    }
    Ok((mu, lambda))
}

/// Neo-Hookean hydrostatic and deviatoric constraints on tetrahedra.
#[derive(Clone, Debug, Default)]
pub struct NeoHookean {
    /// Tetrahedra (positive rest volume).
    pub tets: Vec<[u32; 4]>,
    /// Inverse rest shape matrices D_m⁻¹.
    pub rest_inverse: Vec<Mat3>,
    /// Rest volumes V0.
    pub rest_volume: Vec<f32>,
    /// Shear modulus μ of each tetrahedron (Pa).
    pub mu: Vec<f32>,
    /// Lamé's first parameter λ of each tetrahedron (Pa).
    pub lambda: Vec<f32>,
}

impl NeoHookean {
    /// The constraint pair on every tetrahedron, rest shapes from `x`, one material for all.
    pub fn new(x: &[Packed4], tets: &[[u32; 4]], material: &Material) -> Result<Self> {
        let (mu, lambda) = checked_lame(material)?;
        let mut nh = NeoHookean::default();
        for (k, tet) in tets.iter().enumerate() {
            check_particles("tetrahedron", k, tet, x.len())?;
            let p0 = x[tet[0] as usize].xyz();
            let dm = Mat3::from_cols(
                x[tet[1] as usize].xyz() - p0,
                x[tet[2] as usize].xyz() - p0,
                x[tet[3] as usize].xyz() - p0,
            );
            let det = dm.determinant();
            if det.is_nan() || det <= 0.0 {
                return Err(WobbleError::InvertedTetrahedron {
                    index: k,
                    volume: det / 6.0,
                });
            }
            nh.tets.push(*tet);
            nh.rest_inverse.push(dm.inverse());
            nh.rest_volume.push(det / 6.0);
            nh.mu.push(mu);
            nh.lambda.push(lambda);
        }
        Ok(nh)
    }

    /// Gives tetrahedron `t` the material `material` (0 < ν < 0.5).
    pub fn set_material(&mut self, t: usize, material: &Material) -> Result<()> {
        let (mu, lambda) = checked_lame(material)?;
        check_index("Neo-Hookean tetrahedron", t, t, self.tets.len())?;
        self.mu[t] = mu;
        self.lambda[t] = lambda;
        Ok(())
    }

    /// The deformation gradient of tetrahedron `t` at `x`.
    #[inline(always)]
    pub fn deformation_gradient(&self, t: usize, x: &[Packed4]) -> Mat3 {
        let tet = self.tets[t];
        let p0 = x[tet[0] as usize].xyz();
        let ds = Mat3::from_cols(
            x[tet[1] as usize].xyz() - p0,
            x[tet[2] as usize].xyz() - p0,
            x[tet[3] as usize].xyz() - p0,
        );
        ds * self.rest_inverse[t]
    }
}

#[inline(always)]
fn spread(p: Mat3, rest_inverse: Mat3, grad: &mut [Vec3; MAX_ARITY]) {
    let h = p * rest_inverse.transpose();
    grad[1] = h.x_axis;
    grad[2] = h.y_axis;
    grad[3] = h.z_axis;
    grad[0] = -(h.x_axis + h.y_axis + h.z_axis);
}

impl ConstraintKind for NeoHookean {
    fn name(&self) -> &'static str {
        "neohookean"
    }
    fn len(&self) -> usize {
        2 * self.tets.len()
    }
    fn particles(&self, c: usize) -> &[u32] {
        &self.tets[c / 2]
    }
    fn compliance(&self, c: usize) -> f32 {
        let t = c / 2;
        let modulus = if c.is_multiple_of(2) {
            self.lambda[t]
        } else {
            self.mu[t]
        };
        1.0 / (modulus * self.rest_volume[t])
    }
    fn evaluate(&self, c: usize, x: &[Packed4], grad: &mut [Vec3; MAX_ARITY]) -> f32 {
        let t = c / 2;
        let f = self.deformation_gradient(t, x);
        if c.is_multiple_of(2) {
            let (f1, f2, f3) = (f.x_axis, f.y_axis, f.z_axis);
            let cof = Mat3::from_cols(f2.cross(f3), f3.cross(f1), f1.cross(f2));
            spread(cof, self.rest_inverse[t], grad);
            let gamma = 1.0 + self.mu[t] / self.lambda[t];
            f.determinant() - gamma
        } else {
            let norm =
                (f.x_axis.length_squared() + f.y_axis.length_squared() + f.z_axis.length_squared())
                    .sqrt();
            if norm <= f32::MIN_POSITIVE {
                *grad = [Vec3::ZERO; MAX_ARITY];
                return 0.0;
            }
            spread(f * (1.0 / norm), self.rest_inverse[t], grad);
            norm
        }
    }
    fn scale(&self) -> f32 {
        1.0
    }
    fn particle_indices_mut(&mut self) -> &mut [u32] {
        self.tets.as_flattened_mut()
    }
}
