//! A small-angle pendulum's period: a particle on a rigid rod (compliance 0) of length L = 1 m
//! from a pinned pivot, released at rest 0.05 rad from the vertical, no damping.
//!
//! Closed form: `T = 2π √(L/g) (1 + θ₀²/16 + ...)` (the first finite-amplitude term, 1.6e-4 here,
//! is included). The step loop's discrete motion, linearized in the angle θ: the prediction
//! moves the bob by `h L θ̇ₙ` along the tangent and by `h² g` outwards (gravity at the start of
//! the step), and the projection back onto the circle divides the tangential move by
//! `1 + h² ω₀²` (ω₀² = g/L); so `(1 + h²ω₀²)(θₙ₊₁ - θₙ) = (θₙ - θₙ₋₁) - h²ω₀² θₙ`, whose roots
//! `(1 ± i hω₀) / (1 + h²ω₀²)` are implicit Euler's: the period is `T_h = 2π h / atan(hω₀)`,
//! within `(hω₀)²/3` of T (and the amplitude decays). The test measures the period from the
//! upward zero crossings of the horizontal position over 10 s and asserts that it is within
//! `(hω₀)²/3 + 1e-3` of T at each h; the 1e-3 covers the linear interpolation of the crossings
//! and the amplitude term, which shrinks below θ₀²/16 as the amplitude decays.

mod common;

use common::{check_cases, period, spring_body, trace_x};
use solver_core::glam::Vec3;
use solver_core::StepParams;
use std::f64::consts::PI;

const L: f32 = 1.0;
const THETA0: f32 = 0.05;
const STEPS_PER: [usize; 2] = [60, 240];

/// `|T_measured / T - 1|` at step `h`.
fn period_error(config: &common::Config, h: f32) -> Result<f64, String> {
    let bob = L * Vec3::new(THETA0.sin(), -THETA0.cos(), 0.0);
    let mut body = spring_body(&[Vec3::ZERO, bob], &[f32::INFINITY, 1.0], &[[0, 1]], 0.0);
    let params = StepParams {
        dt: h,
        iterations: 20,
        ..Default::default()
    };
    let g = params.gravity.length() as f64;
    let f = trace_x(config, &mut body, &params, (10.0 / h).round() as usize, 1)?;
    let t = period(&f, h as f64).ok_or("fewer than two crossings")?;
    let exact = 2.0 * PI * (L as f64 / g).sqrt() * (1.0 + (THETA0 as f64).powi(2) / 16.0);
    Ok((t / exact - 1.0).abs())
}

#[test]
fn a_small_angle_pendulum_swings_at_its_closed_form_period() {
    let w0 = (9.81f64 / L as f64).sqrt();
    check_cases(
        &STEPS_PER,
        |per| {
            let hw = w0 / per as f64;
            (
                format!("pendulum period, h = 1/{per}, |T/T_exact - 1|"),
                hw * hw / 3.0 + 1e-3,
            )
        },
        |c, per| period_error(c, 1.0 / per as f32),
    );
}
