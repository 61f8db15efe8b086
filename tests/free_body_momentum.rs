//! Linear and angular momentum of a free body under internal constraints: the 16 x 16 cloth
//! with its pins released, no gravity, no damping, 100 steps of 1/60.
//!
//! Linear momentum (`scenes::analytic::cloth_momentum`, which C14 of `wobble claims`
//! runs too), with the default 8 iterations and seeded random velocities (each component uniform in [-1, 1) m/s about
//! a common 0.5 m/s along x, so |p₀| ≈ 0.5 kg m/s stands clear of the rounding floor): every
//! distance constraint's correction moves its two particles by `±w ∇C Δλ`, so their momentum
//! changes `m w ∇C Δλ` cancel exactly. What is left is f32 rounding of the corrections added to
//! positions of about 1 m (6e-8 m each, over h = 1/60 s, on particles of 1/256 kg): a few
//! 1e-6 kg m/s over the run, as the issue that filed this check measured with zero-mean
//! velocities. The limit is 1e-4 of |p₀|; a solver whose two impulses differ (averaging by
//! per-particle counts) is off by percents.
//!
//! Angular momentum, with the cloth spinning rigidly in its plane at ω = 1 rad/s and 32
//! iterations (the closed form below is for a solve that keeps the body rigid): a
//! position-based step loses some, and by a known amount. The prediction moves each particle
//! along the tangent (`x̃ = 2xₙ - xₙ₋₁`), the projection pulls it back to its radius, and the
//! velocity is the chord: the angle turned per step goes from `φ` to
//! `atan(sin φ / (2 - cos φ)) ≈ φ (1 - φ²)`, starting from `φ₁ = atan(ωh)`, and L is
//! proportional to `sin φ`; after 100 steps `1 - L/L₀` = 2.65e-2. The figure is the relative
//! error of the measured loss against that closed form; the limit, 2%, covers the stretch that
//! the iterations leave unsolved (the body is not exactly rigid: Jacobi, the slowest to
//! converge, misses the closed form by 0.9% at 32 iterations and by 2.7% at the default 8;
//! Gauss-Seidel by 0.03% and 0.3%). A torque from unequal impulses shows as a larger error.

mod common;

use common::{angular_momentum, configs, free_cloth, relative_change, Table};
use scenes::analytic::cloth_momentum;
use solver_core::glam::Vec3;
use solver_core::{step, Body, StepParams};

const STEPS: usize = 100;
const SPIN: f32 = 1.0;

/// The cloth spinning at `spin` about its centre's normal, run for `STEPS` steps with
/// `iterations`; returns the body before and after.
fn spun(config: &common::Config, spin: f32, iterations: usize) -> Result<(Body, Body), String> {
    let mut body = free_cloth(16).map_err(|e| e.to_string())?;
    let centre = Vec3::new(0.5, 1.0, 0.5);
    let x = body.particles().positions();
    for (v, x) in body.particles_mut().v_mut().iter_mut().zip(x) {
        v.set_xyz((spin * Vec3::Y).cross(x - centre));
    }
    let start = body.clone();
    let params = StepParams {
        gravity: Vec3::ZERO,
        iterations,
        ..Default::default()
    };
    let mut solver = config.solver();
    for _ in 0..STEPS {
        step(&mut body, &params, solver.as_mut(), None).map_err(|e| e.to_string())?;
    }
    Ok((start, body))
}

/// `1 - L/L₀` after `STEPS` steps of a rigid rotation at `spin`, by the discrete map above.
fn rigid_loss(spin: f64, h: f64) -> f64 {
    let mut phi = (spin * h).atan();
    for _ in 1..STEPS {
        phi = (phi.sin() / (2.0 - phi.cos())).atan();
    }
    1.0 - phi.sin() / (spin * h)
}

#[test]
fn internal_constraints_conserve_a_free_body_s_linear_momentum() {
    let mut t = Table::new("free cloth, |p - p0| / |p0| after 100 steps", 1e-4);
    for c in configs() {
        let mut solver = c.solver();
        let run = cloth_momentum(solver.as_mut(), 16, &StepParams::default());
        t.row(&c.label, run.map_err(|e| e.to_string()));
    }
    t.check();
}

#[test]
fn a_spinning_free_body_loses_angular_momentum_as_rigid_pbd_does() {
    let loss = rigid_loss(SPIN as f64, StepParams::default().dt as f64);
    let mut t = Table::new(
        &format!("spinning free cloth, |loss of L / closed form {loss:.4e} - 1|"),
        0.02,
    );
    for c in configs() {
        t.row(
            &c.label,
            spun(&c, SPIN, 32).map(|(a, b)| {
                let d = relative_change(angular_momentum(&a), angular_momentum(&b));
                (d / loss - 1.0).abs()
            }),
        );
    }
    t.check();
}
