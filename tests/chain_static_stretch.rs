//! The hanging chain's static stretch (`scenes::analytic::hanging_chain`, which C13 of
//! `wobble claims` runs too): a rope of 10 particles of 0.1 kg (`scenes::rope(10)`),
//! the top one pinned, every distance constraint with XPBD compliance α = 1e-2 m/N, velocity
//! damping 5/s, released horizontally and left 6 s (360 steps of dt = 1/60) to settle.
//!
//! Closed form: at rest, segment k (between particles k and k + 1) carries the weight of the
//! 9 - k particles below it, so its stretch is `α (9 - k) m g`, whatever dt and the iteration
//! count once each step's solve has converged. (At rest, with v = 0, the prediction is
//! `x̃ = x + h² g`; a converged XPBD solve gives `x - x̃ = M⁻¹ ∇Cᵀ λ` and `C = -α̃ λ`, and x = the
//! previous x makes `∇Cᵀ λ / h² = -M g`, the constraint forces holding the weights, and
//! `C = α · force`.) The figure is the worst relative error over the nine segments.
//!
//! Tolerance 1%: the swing that is left after 6 s of damping at 5/s is e^-30 of the first, and
//! 100 iterations per step solve the ten-particle chain to well below 1e-3 with every
//! configuration (the damping bug, which made the sag (1 - damping h) too small, gave an error of
//! exactly damping h = 8.3%; Jacobi's inconsistent multipliers gave 73%).

mod common;

use common::{configs, Table};
use scenes::analytic::{hanging_chain, CHAIN_DAMPING};
use solver_core::StepParams;

const ITERATIONS: usize = 100;

/// The worst relative error of the segments' stretch against `α (N - 1 - k) m g`.
fn chain_error(config: &common::Config, params: &StepParams) -> Result<f64, String> {
    hanging_chain(config.solver().as_mut(), params)
        .map(|f| f.worst)
        .map_err(|e| e.to_string())
}

#[test]
fn every_solver_hangs_the_chain_at_its_closed_form_stretch() {
    let params = StepParams {
        iterations: ITERATIONS,
        damping: CHAIN_DAMPING,
        ..Default::default()
    };
    let mut t = Table::new(
        "chain static stretch, worst relative error (dt = 1/60, damping 5/s)",
        0.01,
    );
    for c in configs() {
        t.row(&c.label, chain_error(&c, &params));
    }
    t.check();
}

#[test]
fn substeps_and_a_finer_dt_reach_the_same_stretch() {
    // The equilibrium does not depend on h: a finer dt and substeps (with fewer iterations
    // each, as XPBD's small steps use them) land on the same closed form.
    let gs = &configs()[0];
    let mut t = Table::new("chain static stretch, gs, other steps", 0.01);
    for (label, params) in [
        (
            "dt = 1/120",
            StepParams {
                dt: 1.0 / 120.0,
                iterations: ITERATIONS,
                damping: CHAIN_DAMPING,
                ..Default::default()
            },
        ),
        (
            "20 substeps x 5",
            StepParams {
                substeps: 20,
                iterations: 5,
                damping: CHAIN_DAMPING,
                ..Default::default()
            },
        ),
    ] {
        t.row(label, chain_error(gs, &params));
    }
    t.check();
}
