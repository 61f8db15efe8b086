//! Plasticity: past a yield strain, rest lengths and rest angles creep toward the current ones,
//! so a body keeps a dent.
//!
//! Theory (the rest-state update of Müller et al. 2004, "Interactive virtual materials", and
//! O'Brien et al. 2002, in its simplest one-dimensional form). For a distance constraint with
//! strain `ε = (l - l0)/l0`, the part beyond the yield strain `ε_y` is plastic:
//!
//! ```text
//! ε_p = ε - sign(ε) ε_y   (when |ε| > ε_y, else 0),     l0 ← l0 (1 + min(1, c h) ε_p)
//! ```
//!
//! with creep rate `c` (1/s) over the elapsed time `h`: at `c h >= 1` the rest length jumps to
//! the yield surface at once, smaller rates flow toward it. Dihedral bending rest angles follow
//! the same rule with a yield angle, on the signed deviation of
//! [`bending::dihedral_deviation`] (the rest angle keeps its sign). Rest values are copied into solver structures (the SIMD
//! edge batches hold rest lengths), so any change renews the body's topology id.

use crate::body::Body;
use crate::constraints::{bending, DihedralBending};
use crate::error::check_non_negative;
use crate::error::{check_dt, Result};

/// When and how fast rest values flow.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Plasticity {
    /// Strain beyond which distance constraints flow (>= 0).
    pub yield_strain: f32,
    /// Angle (radians) beyond which dihedral rest angles flow (>= 0).
    pub yield_angle: f32,
    /// Creep rate c (1/s, >= 0): the fraction of the plastic part absorbed per second.
    pub creep: f32,
}

impl Plasticity {
    /// Checks that every parameter is finite and >= 0.
    pub fn validate(&self) -> Result<()> {
        for (name, v) in [
            ("yield strain", self.yield_strain),
            ("yield angle", self.yield_angle),
            ("creep rate", self.creep),
        ] {
            check_non_negative(name, v)?;
        }
        Ok(())
    }
}

/// Lets the rest values of `body` flow for `dt` seconds; returns how many changed.
pub fn apply_plasticity(body: &mut Body, plasticity: &Plasticity, dt: f32) -> Result<usize> {
    plasticity.validate()?;
    check_dt(dt)?;
    let f = (plasticity.creep * dt).min(1.0);
    if f == 0.0 {
        return Ok(0);
    }
    let x = &body.particles.x;
    let d = &mut body.constraints.distance;
    let mut changed = 0;
    for c in 0..d.len() {
        let [i, j] = d.pairs[c];
        let l = (x[i as usize].xyz() - x[j as usize].xyz()).length();
        let strain = (l - d.rest[c]) / d.rest[c];
        if strain.abs() > plasticity.yield_strain {
            let plastic = strain - plasticity.yield_strain.copysign(strain);
            let rest = d.rest[c] * (1.0 + f * plastic);
            if rest.is_finite() && rest > 0.0 {
                d.rest[c] = rest;
                changed += 1;
            }
        }
    }
    let mut grad = [glam::Vec3::ZERO; crate::constraints::MAX_ARITY];
    for kind in body.constraints.extra.iter_mut() {
        if let Some(b) = kind.as_any_mut().downcast_mut::<DihedralBending>() {
            for c in 0..b.stencils.len() {
                let p = b.stencils[c].map(|v| x[v as usize].xyz());
                let theta = bending::dihedral_angle_and_grad(p, &mut grad);
                // Signed, as the constraint: the flow follows the wrapped deviation, so a
                // crease yields toward its current side and never toward its mirror image.
                let excess = bending::dihedral_deviation(theta, b.rest[c]);
                if excess.abs() > plasticity.yield_angle {
                    let plastic = excess - plasticity.yield_angle.copysign(excess);
                    b.rest[c] = bending::dihedral_deviation(b.rest[c] + f * plastic, 0.0);
                    changed += 1;
                }
            }
        }
    }
    if changed > 0 {
        body.topology_changed();
    }
    Ok(changed)
}
