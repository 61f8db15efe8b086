//! C13 and C14, what each Jacobi variant costs in correctness: the fixed point it converges to
//! (the hanging rope's static stretch, known in closed form) and whether it conserves a free
//! body's momentum (the free cloth), for the literature's constraint averaging (Macklin et al.
//! 2014, per particle, multipliers unscaled), the consistent form wobble uses by default (per
//! constraint, multipliers and positions alike, see `sparse::jacobi`), plain Jacobi, and
//! Chebyshev on both. Beside the correctness figures, each variant's mean step time on the free
//! cloth and how far it reduces the residual in one step of many iterations from the
//! convergence claims' common cloth state show what it costs in speed.
//!
//! The measurements are public so that the analytic tests (tests/chain_static_stretch.rs,
//! tests/free_body_momentum.rs) run the very same code.

use super::{Claim, Ctx, Verdict};
use crate::csv::RowWriter;
use crate::setup::Error;
use solver_core::glam::Vec3;
use solver_core::{scenes, step, Body, Solver, StepParams, WobbleError};
use sparse::{make_solver, Averaging, SolverOptions};
use std::time::Instant;

/// Particles of the hanging chain (`scenes::rope`, 0.1 kg each, the first pinned).
pub const CHAIN_N: usize = 10;
/// XPBD compliance of every segment of the chain (m/N).
pub const CHAIN_ALPHA: f32 = 1e-2;
/// Damping of the chain's settling (1/s).
pub const CHAIN_DAMPING: f32 = 5.0;
/// Seconds the chain settles for.
pub const CHAIN_SECONDS: f32 = 6.0;

/// The hanging chain after settling, against its closed form.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ChainFigures {
    /// Worst relative error of the nine segments' stretch against `α (N - 1 - k) m g`.
    pub worst: f64,
    /// The top segment's stretch (m).
    pub top: f64,
    /// Its closed form (m).
    pub top_exact: f64,
}

/// Hangs the chain (`CHAIN_N` particles, compliance `CHAIN_ALPHA`), released horizontally, for
/// `CHAIN_SECONDS` with `solver` and `params` (whose damping is used as given), and compares each
/// segment's stretch with `α (particles below) m g`: its equilibrium whatever the step and the
/// iteration count, once each step's solve converges (at rest `x̃ = x + h² g`, and a converged
/// XPBD solve gives `x - x̃ = M⁻¹ ∇Cᵀ λ`, `C = -α̃ λ`: the constraint forces `∇Cᵀ λ / h²` hold
/// the weights and `C = α · force`).
pub fn hanging_chain(
    solver: &mut dyn Solver,
    params: &StepParams,
) -> Result<ChainFigures, WobbleError> {
    let mut body = scenes::rope(CHAIN_N)?;
    body.constraints
        .distance
        .compliance
        .iter_mut()
        .for_each(|c| *c = CHAIN_ALPHA);
    let steps = (CHAIN_SECONDS / params.dt).round() as usize;
    for _ in 0..steps {
        step(&mut body, params, solver, None)?;
    }
    let d = &body.constraints.distance;
    let x = &body.particles.x;
    let m = body.particles.mass[1] as f64;
    let g = params.gravity.length() as f64;
    let mut f = ChainFigures {
        worst: 0.0,
        top: f64::NAN,
        top_exact: f64::NAN,
    };
    for (k, (&[i, j], &rest)) in d.pairs.iter().zip(&d.rest).enumerate() {
        let stretch = (x[i as usize].xyz() - x[j as usize].xyz()).length() as f64 - rest as f64;
        let exact = CHAIN_ALPHA as f64 * (CHAIN_N - 1 - k) as f64 * m * g;
        f.worst = f.worst.max((stretch - exact).abs() / exact);
        if k == 0 {
            (f.top, f.top_exact) = (stretch, exact);
        }
    }
    Ok(f)
}

/// The reference cloth (`scenes::cloth(n)`) with its two pins released (every particle keeps
/// the scene's mass 1/n²).
pub fn free_cloth(n: usize) -> Result<Body, WobbleError> {
    let mut body = scenes::cloth(n)?;
    let m = 1.0 / (n * n) as f32;
    for i in [0, n - 1] {
        body.particles.set_mass(i, m)?;
    }
    Ok(body)
}

/// Deterministic pseudo-random numbers in [-1, 1) (SplitMix64).
#[derive(Clone, Debug)]
pub struct Noise(u64);

impl Noise {
    /// A sequence from `seed`.
    pub fn new(seed: u64) -> Noise {
        Noise(seed)
    }

    /// The next number in [-1, 1).
    pub fn next_f32(&mut self) -> f32 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        (z >> 40) as f32 / (1u64 << 23) as f32 - 1.0
    }

    /// A vector of three of them.
    pub fn next_vec3(&mut self) -> Vec3 {
        Vec3::new(self.next_f32(), self.next_f32(), self.next_f32())
    }
}

/// Total linear momentum `Σ m v` (f64).
pub fn momentum(body: &Body) -> [f64; 3] {
    let p = &body.particles;
    let mut s = [0.0f64; 3];
    for i in 0..p.len() {
        let (m, v) = (p.mass[i] as f64, p.v[i].xyz());
        s[0] += m * v.x as f64;
        s[1] += m * v.y as f64;
        s[2] += m * v.z as f64;
    }
    s
}

/// `|a - b| / |a|` of two 3-vectors.
pub fn relative_change(a: [f64; 3], b: [f64; 3]) -> f64 {
    let d = ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt();
    d / (a[0].powi(2) + a[1].powi(2) + a[2].powi(2)).sqrt()
}

/// Velocity of the free cloth's particles in [`cloth_momentum`]: each component uniform in
/// [-1, 1) m/s about this common velocity, so |p₀| ≈ 0.5 kg m/s stands clear of the f32
/// rounding floor of a few 1e-6 kg m/s.
pub const CLOTH_DRIFT: Vec3 = Vec3::new(0.5, 0.0, 0.0);

/// Steps of [`cloth_momentum`].
pub const CLOTH_STEPS: usize = 100;

/// The free `n` x `n` cloth, no gravity, with seeded random velocities about [`CLOTH_DRIFT`],
/// run [`CLOTH_STEPS`] steps of `params` (gravity replaced by zero): returns `|p - p₀| / |p₀|`
/// and the mean wall time per step in ms.
pub fn cloth_momentum(
    solver: &mut dyn Solver,
    n: usize,
    params: &StepParams,
) -> Result<(f64, f64), WobbleError> {
    let mut body = free_cloth(n)?;
    let mut noise = Noise::new(16);
    for v in body.particles.v.iter_mut() {
        v.set_xyz(CLOTH_DRIFT + noise.next_vec3());
    }
    let p0 = momentum(&body);
    let params = StepParams {
        gravity: Vec3::ZERO,
        ..*params
    };
    let start = Instant::now();
    for _ in 0..CLOTH_STEPS {
        step(&mut body, &params, solver, None)?;
    }
    let ms = start.elapsed().as_secs_f64() * 1e3 / CLOTH_STEPS as f64;
    Ok((relative_change(p0, momentum(&body)), ms))
}

/// One Jacobi variant of C13 and C14.
#[derive(Clone, Copy, Debug)]
pub struct Variant {
    /// What the tables call it.
    pub label: &'static str,
    /// The solver name.
    pub solver: &'static str,
    /// Its averaging.
    pub average: Averaging,
    /// Its relaxation.
    pub omega: f32,
}

/// The variants measured: the literature's averaging first (the claims' subject), then the
/// consistent form, plain Jacobi, Chebyshev on both averagings, and the reference gs.
pub const VARIANTS: &[Variant] = &[
    Variant {
        label: "jacobi, per-particle averaging (Macklin 2014), omega 1",
        solver: "jacobi",
        average: Averaging::Particle,
        omega: 1.0,
    },
    Variant {
        label: "jacobi, per-particle averaging (Macklin 2014), omega 1.5",
        solver: "jacobi",
        average: Averaging::Particle,
        omega: 1.5,
    },
    Variant {
        label: "chebyshev, per-particle averaging",
        solver: "chebyshev",
        average: Averaging::Particle,
        omega: 1.0,
    },
    Variant {
        label: "jacobi, per-constraint averaging (default), omega 1",
        solver: "jacobi",
        average: Averaging::Constraint,
        omega: 1.0,
    },
    Variant {
        label: "jacobi, per-constraint averaging, omega 1.5",
        solver: "jacobi",
        average: Averaging::Constraint,
        omega: 1.5,
    },
    Variant {
        label: "chebyshev, per-constraint averaging (default)",
        solver: "chebyshev",
        average: Averaging::Constraint,
        omega: 1.0,
    },
    Variant {
        label: "jacobi, no averaging, omega 1",
        solver: "jacobi",
        average: Averaging::Off,
        omega: 1.0,
    },
    Variant {
        label: "jacobi, no averaging, omega 0.5",
        solver: "jacobi",
        average: Averaging::Off,
        omega: 0.5,
    },
    Variant {
        label: "gs (reference)",
        solver: "gs",
        average: Averaging::Constraint,
        omega: 1.0,
    },
];

/// How many of [`VARIANTS`] are the literature's averaging (the first ones).
pub const LITERATURE: usize = 3;

/// A fresh solver of `v` with the run's other options.
fn solver_of(ctx: &Ctx, v: &Variant) -> Result<Box<dyn Solver>, WobbleError> {
    let options = SolverOptions {
        average: v.average,
        omega: v.omega,
        ..ctx.tuning.options(1)
    };
    make_solver(v.solver, &options)
}

/// The limit of both claims' tests: a chain error of 1%, a momentum change of 1e-4 of |p₀|.
pub const CHAIN_LIMIT: f64 = 0.01;
/// See [`CHAIN_LIMIT`].
pub const MOMENTUM_LIMIT: f64 = 1e-4;

/// The verdict rule of C13 and C14: a literature variant holds when its figure is finite and
/// at most `limit`; confirmed if all of them hold, refuted if none, partly otherwise.
pub fn verdict(literature: &[Result<f64, String>], limit: f64) -> Verdict {
    let held = literature
        .iter()
        .filter(|f| matches!(f, Ok(x) if *x <= limit))
        .count();
    Verdict::from_parts(held, literature.len())
}

/// A figure or why there is none, for the tables.
fn show(f: &Result<f64, String>) -> String {
    match f {
        Ok(x) => format!("{x:.3e}"),
        Err(e) => e.clone(),
    }
}

/// C13: Jacobi with constraint averaging converges to the constraints' solution.
pub fn c13(ctx: &Ctx) -> Result<Claim, Error> {
    let source = "Macklin, Müller, Chentanez, Kim 2014, \"Unified particle physics for real-time applications\", §4.2";
    let text = "Jacobi iteration with constraint averaging (each particle's summed corrections divided by its number of constraints) and over-relaxation ω converges, to the same solution as Gauss-Seidel, only more slowly (paraphrase)";
    let params = |iterations| StepParams {
        iterations,
        damping: CHAIN_DAMPING,
        ..Default::default()
    };
    let (few, many) = (20, 200);
    let path = ctx.path("c13.csv");
    let mut w = RowWriter::create(
        &path,
        &[
            "variant",
            "solver",
            "averaging",
            "omega",
            "iterations",
            "worst_error",
            "top_stretch_m",
            "top_exact_m",
            "status",
        ],
    )?;
    let mut figures = Vec::new();
    let mut literature = Vec::new();
    for (k, v) in VARIANTS.iter().enumerate() {
        let mut at = Vec::new();
        for iterations in [few, many] {
            let run =
                solver_of(ctx, v).and_then(|mut s| hanging_chain(s.as_mut(), &params(iterations)));
            let (worst, top, exact, status) = match &run {
                Ok(f) => (f.worst, f.top, f.top_exact, "ok".to_string()),
                Err(e) => (f64::NAN, f64::NAN, f64::NAN, e.to_string()),
            };
            w.record(&[
                v.label.to_string(),
                v.solver.to_string(),
                format!("{:?}", v.average),
                v.omega.to_string(),
                iterations.to_string(),
                worst.to_string(),
                top.to_string(),
                exact.to_string(),
                status.clone(),
            ])?;
            at.push(run.map(|f| f.worst).map_err(|e| e.to_string()));
        }
        if k < LITERATURE {
            literature.push(at[1].clone());
        }
        figures.push(format!(
            "{}: {} after {many} iterations ({} after {few})",
            v.label,
            show(&at[1]),
            show(&at[0])
        ));
    }
    Ok(Claim {
        id: "C13",
        source,
        text,
        measured: format!(
            "hanging chain of {CHAIN_N} particles of 0.1 kg, compliance {CHAIN_ALPHA} m/N, damping {CHAIN_DAMPING}/s, {CHAIN_SECONDS} s of dt = 1/60, worst relative error of the segments' stretch against alpha (particles below) m g: {}",
            figures.join("; ")
        ),
        rule: format!(
            "the literature's averaging (per particle, multipliers unscaled) holds at a tested ω and Jacobi-based solver when its worst chain error after {many} iterations is at most {CHAIN_LIMIT}; confirmed if all {LITERATURE} such variants hold, refuted if none, partly otherwise (the other variants are measured for comparison)"
        ),
        verdict: verdict(&literature, CHAIN_LIMIT),
        files: vec![path],
    })
}

/// C14: internal constraints conserve momentum, with Jacobi's averaging too.
pub fn c14(ctx: &Ctx) -> Result<Claim, Error> {
    let source = "Müller, Heidelberger, Hennix, Ratcliff 2007, \"Position based dynamics\", §3.3, with the Jacobi averaging of Macklin et al. 2014, §4.2";
    let text = "projecting internal constraints conserves linear momentum (corrections weighted by inverse mass), also when a Jacobi solve averages them per particle (paraphrase)";
    let n = if ctx.quick { 12 } else { 16 };
    let params = StepParams::default();
    let path = ctx.path("c14.csv");
    let mut w = RowWriter::create(
        &path,
        &[
            "variant",
            "solver",
            "averaging",
            "omega",
            "n",
            "steps",
            "momentum_change_rel",
            "ms_per_step",
            "residual_ratio",
            "residual_iterations",
            "status",
        ],
    )?;
    let base = ctx.base()?;
    let iters = ctx.scale.conv_iters;
    let mut figures = Vec::new();
    let mut literature = Vec::new();
    for (k, v) in VARIANTS.iter().enumerate() {
        let run = solver_of(ctx, v).and_then(|mut s| cloth_momentum(s.as_mut(), n, &params));
        let (drift, ms, status) = match &run {
            Ok((d, ms)) => (*d, *ms, "ok".to_string()),
            Err(e) => (f64::NAN, f64::NAN, e.to_string()),
        };
        // The residual after `iters` iterations over the one before any, from the common
        // state (NaN where it cannot be built or the step fails).
        let residual = match &base {
            Ok(base) => {
                let curve = solver_of(ctx, v)
                    .map_err(Error::from)
                    .and_then(|mut s| crate::converge::residual_curve(base, s.as_mut(), iters));
                curve.map_or(f64::NAN, |c| c[iters] / c[0])
            }
            Err(_) => f64::NAN,
        };
        w.record(&[
            v.label.to_string(),
            v.solver.to_string(),
            format!("{:?}", v.average),
            v.omega.to_string(),
            n.to_string(),
            CLOTH_STEPS.to_string(),
            drift.to_string(),
            ms.to_string(),
            residual.to_string(),
            iters.to_string(),
            status,
        ])?;
        let figure = run.map(|r| r.0).map_err(|e| e.to_string());
        figures.push(format!(
            "{}: {}{}",
            v.label,
            show(&figure),
            if ms.is_finite() {
                format!(" ({ms:.3} ms/step, residual ratio {residual:.2e})")
            } else {
                String::new()
            }
        ));
        if k < LITERATURE {
            literature.push(figure);
        }
    }
    Ok(Claim {
        id: "C14",
        source,
        text,
        measured: format!(
            "free {n} x {n} cloth (pins released), no gravity, velocities uniform in [-1, 1) m/s per component about 0.5 m/s along x (seeded), {CLOTH_STEPS} steps of dt = 1/60, 8 iterations: |p - p0| / |p0| (mean step time; residual after {iters} iterations over the residual before any, one step from the common cloth state of C1, n = {}): {}",
            ctx.scale.conv_n,
            figures.join("; ")
        ),
        rule: format!(
            "a literature-averaged variant (per particle) holds when |p - p0| / |p0| is at most {MOMENTUM_LIMIT} (f32 rounding leaves a few 1e-6 of it); confirmed if all {LITERATURE} such variants hold, refuted if none, partly otherwise (the other variants are measured for comparison)"
        ),
        verdict: verdict(&literature, MOMENTUM_LIMIT),
        files: vec![path],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rule_confirms_when_every_literature_variant_is_within_the_limit_and_refutes_when_none_is(
    ) {
        let ok = [Ok(1e-3), Ok(5e-3), Ok(0.01)];
        assert_eq!(verdict(&ok, 0.01), Verdict::Confirmed);
        let bad = [Ok(0.73), Err("step diverged".to_string()), Ok(f64::NAN)];
        assert_eq!(verdict(&bad, 0.01), Verdict::Refuted);
        let some = [Ok(1e-3), Ok(0.39)];
        assert_eq!(verdict(&some, 0.01), Verdict::Partly);
    }
}
