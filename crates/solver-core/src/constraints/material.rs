//! Physical units: XPBD compliances from Young's modulus, Poisson's ratio and geometry, so that
//! "softer" and "harder" are pascals, and heterogeneous materials (a stiff core in a soft body)
//! through per-constraint compliance.
//!
//! Theory. XPBD's constraint energy is `½ α⁻¹ C²` (Macklin et al. 2016). Matching it to a linear
//! elastic energy density `½ E ε²` integrated over the volume a constraint stands for gives:
//!
//! ```text
//! rod / edge (C = l - L, ε = C/L, volume V):  ½ E V (C/L)²   ⇒  α = L² / (E V)
//!     a rod of cross-section A (V = A L):  α = L / (E A)   (Hooke: k = E A / L)
//!     cloth of thickness t: V = t A_e, A_e = a third of the area of each adjacent triangle
//!     tetrahedral mesh:     V = a sixth of the volume of each adjacent tetrahedron
//! tetrahedron volume (C = V - V0, ε_V = C/V0):  ½ λ V0 (C/V0)²  ⇒  α = V0 / λ
//! ```
//!
//! (with `μ = E / (2(1+ν))`, `λ = E ν / ((1+ν)(1-2ν))`). The edge-plus-volume model is a
//! lumped approximation, not a continuum model: edges carry Young's modulus over their share
//! of the volume, the volume constraint Lamé's λ (so ν → 0.5 makes it incompressible). The
//! Neo-Hookean pair ([`NeoHookean`](super::NeoHookean), Macklin and Müller 2021) is the
//! continuum model for tetrahedra. Bending of a plate of thickness t uses the flexural rigidity
//! `D = E t³ / (12 (1 - ν²))`: the isometric bending energy (Bergou et al. 2006) with stiffness D
//! gives `α = 1 / D`. The builders apply a material to a body's constraints
//! ([`crate::build::materials`]).

use crate::error::{check_positive, Result, WobbleError};

/// An isotropic linear-elastic material.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Material {
    /// Young's modulus E (Pa, > 0).
    pub young: f32,
    /// Poisson's ratio ν (0 <= ν < 0.5).
    pub poisson: f32,
}

impl Material {
    /// A material; E must be finite and > 0, ν in [0, 0.5).
    pub fn new(young: f32, poisson: f32) -> Result<Self> {
        let m = Material { young, poisson };
        m.validate()?;
        Ok(m)
    }

    /// Rubber-like: E = 1 MPa, ν = 0.45.
    pub fn rubber() -> Self {
        Material {
            young: 1e6,
            poisson: 0.45,
        }
    }

    /// Checks E and ν.
    pub fn validate(&self) -> Result<()> {
        if !(self.young.is_finite() && self.young > 0.0) {
            return Err(WobbleError::BadParameter {
                name: "Young's modulus",
                value: self.young as f64,
                reason: "must be finite and > 0 (Pa)",
            });
        }
        if !(0.0..0.5).contains(&self.poisson) {
            return Err(WobbleError::BadParameter {
                name: "Poisson's ratio",
                value: self.poisson as f64,
                reason: "must be in [0, 0.5)",
            });
        }
        Ok(())
    }

    /// Lamé parameters (μ, λ).
    pub fn lame(&self) -> (f32, f32) {
        let (e, nu) = (self.young as f64, self.poisson as f64);
        let mu = e / (2.0 * (1.0 + nu));
        let lambda = e * nu / ((1.0 + nu) * (1.0 - 2.0 * nu));
        (mu as f32, lambda as f32)
    }

    /// Bulk modulus κ = E / (3 (1 - 2ν)).
    pub fn bulk(&self) -> f32 {
        self.young / (3.0 * (1.0 - 2.0 * self.poisson))
    }

    /// Flexural rigidity of a plate of thickness `t`: D = E t³ / (12 (1 - ν²)) (N·m).
    pub fn flexural_rigidity(&self, thickness: f32) -> f32 {
        self.young * thickness.powi(3) / (12.0 * (1.0 - self.poisson * self.poisson))
    }
}

/// Compliance of a rod of Young's modulus `young`, cross-section `area` and rest length
/// `rest_length`: α = L / (E A) (m/N).
pub fn rod_compliance(young: f32, area: f32, rest_length: f32) -> Result<f32> {
    check_positive("Young's modulus", young)?;
    check_positive("cross-section area", area)?;
    check_positive("rest length", rest_length)?;
    Ok(rest_length / (young * area))
}

/// Compliance of an edge standing for `volume` of material: α = L² / (E V).
pub fn edge_compliance(young: f32, volume: f32, rest_length: f32) -> Result<f32> {
    check_positive("Young's modulus", young)?;
    check_positive("edge volume", volume)?;
    check_positive("rest length", rest_length)?;
    Ok(rest_length * rest_length / (young * volume))
}

/// Compliance of a tetrahedron volume constraint: α = V0 / λ.
pub fn tet_volume_compliance(material: &Material, rest_volume: f32) -> Result<f32> {
    material.validate()?;
    check_positive("rest volume", rest_volume)?;
    let (_, lambda) = material.lame();
    check_positive("Lamé λ (needs ν > 0)", lambda)?;
    Ok(rest_volume / lambda)
}
