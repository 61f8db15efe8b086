//! Energy of an undamped stiff spring over many periods: bounded, and not growing.
//!
//! The mass (1 kg, `common::spring_mass`) is on one spring from a pinned anchor, or between two pinned anchors
//! on a line (two springs: two constraints on one particle), compliance α = 1e-3 m/N each
//! (ω = 31.6 or 44.7 rad/s), no gravity, no damping, displaced by 1 cm and released; 2 s of
//! dt = 1/60 with 20 substeps (h = 1/1200 s), 10 to 14 periods.
//!
//! Closed form: a converged XPBD substep on a linear spring is implicit Euler, which in the
//! coordinates (ω x, v) is a rotation scaled by `1 / √(1 + h²ω²)`; so the energy
//! `E = m v²/2 + Σ C²/(2α)` shrinks by exactly `1 / (1 + h²ω²)` per substep, monotonically:
//! `Eₙ = E₀ (1 + h²ω²)⁻ⁿ` (2400 substeps: down to 0.036 or 0.0087 of E₀). The figure is the
//! worst `|E / E_closed - 1|` over the steps. Limit 1e-3: the displacement, down to 1 mm at
//! the end, is resolved to f32 rounding of the 1 m positions (6e-8 m), 1e-4 of the energy at
//! worst, and 8 iterations solve α̃ = α/h² = 1440 against w = 1 to far below that. An energy
//! that grows, or that does not follow the spring's own compliance (a solver whose effective
//! stiffness differs), misses the closed form at once.

mod common;

use common::{check_cases, spring_mass, MASS};
use solver_core::glam::Vec3;
use solver_core::{step, Body, StepParams};

const ALPHA: f32 = 1e-3;
const SUBSTEPS: usize = 20;
const STEPS: usize = 120;

/// `m v²/2 + Σ C²/(2α)` (f64).
fn energy(body: &Body) -> f64 {
    let p = &body.particles();
    let mut e = 0.0f64;
    for i in 0..p.len() {
        e += 0.5 * p.mass()[i] as f64 * p.v()[i].xyz().length_squared() as f64;
    }
    let d = &body.constraints().distance;
    for (&[i, j], (&rest, &alpha)) in d.pairs.iter().zip(d.rest.iter().zip(&d.compliance)) {
        let len = (p.position(i as usize) - p.position(j as usize)).length() as f64;
        e += (len - rest as f64).powi(2) / (2.0 * alpha as f64);
    }
    e
}

/// The worst relative error of the energy against `E₀ (1 + h²ω²)⁻ⁿ`.
fn energy_error(config: &common::Config, anchors: usize) -> Result<f64, String> {
    let mut body = spring_mass(anchors, 1.0, ALPHA);
    let rest = body.particles().position(MASS);
    body.particles_mut()
        .teleport(MASS, rest + 0.01 * Vec3::X)
        .unwrap();
    let params = StepParams {
        substeps: SUBSTEPS,
        gravity: Vec3::ZERO,
        ..Default::default()
    };
    let h = params.substep_dt() as f64;
    let omega2 = anchors as f64 / ALPHA as f64;
    let per_step = (1.0 + h * h * omega2).powi(-(SUBSTEPS as i32));
    let mut solver = config.solver();
    let (mut closed, mut worst) = (energy(&body), 0.0f64);
    for _ in 0..STEPS {
        step(&mut body, &params, solver.as_mut(), None).map_err(|e| e.to_string())?;
        closed *= per_step;
        worst = worst.max((energy(&body) / closed - 1.0).abs());
    }
    Ok(worst)
}

#[test]
fn an_undamped_stiff_spring_loses_energy_as_implicit_euler_and_never_gains() {
    check_cases(
        &[1, 2],
        |anchors| {
            (
                format!("stiff spring energy ({anchors} anchor(s)), worst |E/E_closed - 1|"),
                1e-3,
            )
        },
        energy_error,
    );
}
