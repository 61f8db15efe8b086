//! C7, the mass-spring integrator claim. It needs the mass-spring model (springs integrated by
//! explicit Euler, semi-implicit Euler, Verlet and RK4) that the physics work adds; this build
//! has none, so the claim is reported untestable here. This function is meant to be replaced
//! once the model exists: for each integrator, find by bisection the largest spring stiffness
//! that stays stable (finite, energy bounded) for a fixed number of steps at a fixed dt, then
//! confirm if k_max(semi-implicit) >= 10 k_max(explicit) and k_max(Verlet) > k_max(explicit),
//! partly if one of the two holds, refuted if neither.

use super::{Claim, Ctx};
use crate::setup::Error;

/// Where C7 comes from.
pub const SOURCE: &str = "Unity soft-body tutorial";
/// C7 as stated.
pub const TEXT: &str = "\"for mass-spring systems, semi-implicit Euler is an order of magnitude more stable than explicit Euler; Verlet is more stable than explicit Euler\" (largest stable stiffness at a fixed dt, per integrator, RK4 included)";

/// C7: untestable in this build (no mass-spring model).
pub fn c7(_ctx: &Ctx) -> Result<Claim, Error> {
    Ok(Claim::untestable(
        "C7",
        SOURCE,
        TEXT,
        "the mass-spring model (springs with explicit Euler, semi-implicit Euler, Verlet and RK4 integrators) is missing in this build".into(),
    ))
}
