//! A mass on an XPBD spring: its period tends to `2π sqrt(m α)` as the step h -> 0.
//!
//! Closed form of the discrete motion: a converged XPBD step on one linear spring is implicit
//! Euler (`x_{n+1} = x_n + h v_n - h² ω² x_{n+1}`, ω² = 1 / (m α), displacement from rest),
//! whose eigenvalues `(1 ± i hω) / (1 + h²ω²)` turn by `atan(hω)` per step: the period is
//! `T_h = 2π h / atan(hω)`, and `T_h / T = hω / atan(hω) = 1 + (hω)²/3 - ...`, always within
//! `(hω)²/3` of the continuum period T. The test measures the period from the upward zero
//! crossings (linearly interpolated) over 3 s and asserts, at each h, that it is within
//! `(hω)²/3 + 1e-3` of T; the 1e-3 covers the interpolation of the crossings (near a crossing
//! the motion is straight to within (hω)² of a step, and the mean is over several periods).
//!
//! Two bodies: one spring from a pinned anchor (ω² = 1/(mα)), and the mass between two pinned
//! anchors on a line (two springs, ω² = 2/(mα)), where the mass has two constraints, so that a
//! solver scaling its corrections by a per-particle count without scaling its multipliers the
//! same way (effective stiffness halved, period off by √2) cannot pass.

mod common;

use common::{check_cases, period, spring_mass, trace_x, MASS};
use solver_core::glam::Vec3;
use solver_core::StepParams;
use std::f64::consts::PI;

const M: f32 = 1.0;
const ALPHA: f32 = 1e-2;
const AMPLITUDE: f32 = 0.01;
const ITERATIONS: usize = 50;
const STEPS_PER: [usize; 3] = [60, 240, 960];

/// The measured period of the mass (`anchors` = 1 or 2) at step `h`, against the continuum one.
fn period_error(config: &common::Config, anchors: usize, h: f32) -> Result<f64, String> {
    let mut body = spring_mass(anchors, M, ALPHA);
    let rest = body.particles().position(MASS);
    body.particles_mut()
        .teleport(MASS, rest + AMPLITUDE * Vec3::X)
        .unwrap();
    let params = StepParams {
        dt: h,
        iterations: ITERATIONS,
        gravity: Vec3::ZERO,
        ..Default::default()
    };
    let steps = (3.0 / h).round() as usize;
    let mut f = trace_x(config, &mut body, &params, steps, MASS)?;
    f.iter_mut().for_each(|x| *x -= rest.x as f64);
    let omega = (anchors as f64 / (M as f64 * ALPHA as f64)).sqrt();
    let t = period(&f, h as f64).ok_or("fewer than two crossings")?;
    Ok((t * omega / (2.0 * PI) - 1.0).abs())
}

fn check(anchors: usize) {
    let omega = (anchors as f64 / (M as f64 * ALPHA as f64)).sqrt();
    check_cases(
        &STEPS_PER,
        |per| {
            let hw = omega / per as f64;
            (
                format!(
                    "spring period ({anchors} anchor(s)), h = 1/{per}, |T/2π√(mα/{anchors}) - 1|"
                ),
                hw * hw / 3.0 + 1e-3,
            )
        },
        |c, per| period_error(c, anchors, 1.0 / per as f32),
    );
}

#[test]
fn a_mass_on_one_spring_oscillates_at_the_xpbd_period() {
    check(1);
}

#[test]
fn a_mass_between_two_springs_oscillates_at_the_xpbd_period() {
    check(2);
}
