//! C13 and C14, each in its source's own terms, with the project's Jacobi variants beside them.
//! C13 runs Macklin et al. 2014's method as the paper does, plain PBD (compliance 0) with each
//! particle's corrections averaged over its constraint count, on a hanging chain
//! (`c13_pbd.csv`); C14 checks Müller et al. 2007's momentum statement on their projection
//! (gs) on a free cloth. Reported beside them, not judged under either paper: the project's
//! hybrid (that averaging with unscaled XPBD multipliers on the compliant chain, whose fixed
//! point has a closed form), its consistent per-constraint form (the default, see
//! `sparse::jacobi`), plain Jacobi and Chebyshev, with each variant's step time on the free
//! cloth and how far it reduces the residual from the convergence claims' common state.
//!
//! The measurements are `scenes::analytic`'s, which the analytic tests
//! (tests/chain_static_stretch.rs, tests/free_body_momentum.rs) run too.

use super::claim::{Claim, Ctx};
use crate::output::csv::RowWriter;
use crate::output::plot::{dot, level, Plot, Series};
use crate::setup::{with_jacobi, Error, SolverArg};
use scenes::analytic::{
    cloth_momentum, hanging_chain, CHAIN_ALPHA, CHAIN_DAMPING, CHAIN_N, CHAIN_SECONDS, CLOTH_STEPS,
};
use solver_core::{Solver, StepParams, WobbleError};
use sparse::{Averaging, JacobiOptions};
use std::time::Instant;

/// One Jacobi variant of C13 and C14.
#[derive(Clone, Copy, Debug)]
pub struct Variant {
    /// What the tables call it.
    pub label: &'static str,
    /// The solver.
    pub solver: SolverArg,
    /// Its averaging.
    pub average: Averaging,
    /// Its relaxation.
    pub omega: f32,
}

/// The project's variants on the compliant chain and the free cloth: its hybrid first, then the
/// consistent form, plain Jacobi, Chebyshev on both averagings, and gs.
pub const VARIANTS: &[Variant] = &[
    Variant {
        label: "jacobi, hybrid: per-particle averaging, XPBD multipliers, omega 1",
        solver: SolverArg::Jacobi,
        average: Averaging::Particle,
        omega: 1.0,
    },
    Variant {
        label: "jacobi, hybrid: per-particle averaging, XPBD multipliers, omega 1.5",
        solver: SolverArg::Jacobi,
        average: Averaging::Particle,
        omega: 1.5,
    },
    Variant {
        label: "chebyshev, hybrid: per-particle averaging, XPBD multipliers",
        solver: SolverArg::Chebyshev,
        average: Averaging::Particle,
        omega: 1.0,
    },
    Variant {
        label: "jacobi, per-constraint averaging (default), omega 1",
        solver: SolverArg::Jacobi,
        average: Averaging::Constraint,
        omega: 1.0,
    },
    Variant {
        label: "jacobi, per-constraint averaging, omega 1.5",
        solver: SolverArg::Jacobi,
        average: Averaging::Constraint,
        omega: 1.5,
    },
    Variant {
        label: "chebyshev, per-constraint averaging (default)",
        solver: SolverArg::Chebyshev,
        average: Averaging::Constraint,
        omega: 1.0,
    },
    Variant {
        label: "jacobi, no averaging, omega 1",
        solver: SolverArg::Jacobi,
        average: Averaging::Off,
        omega: 1.0,
    },
    Variant {
        label: "jacobi, no averaging, omega 0.5",
        solver: SolverArg::Jacobi,
        average: Averaging::Off,
        omega: 0.5,
    },
    Variant {
        label: "gs (reference)",
        solver: SolverArg::Gs,
        average: Averaging::Constraint,
        omega: 1.0,
    },
];

/// Macklin et al. 2014's averaging in plain PBD (run at compliance 0), plain Jacobi, and gs.
pub const PBD_VARIANTS: &[Variant] = &[
    Variant {
        label: "jacobi, Macklin 2014 averaging (per particle), omega 1",
        solver: SolverArg::Jacobi,
        average: Averaging::Particle,
        omega: 1.0,
    },
    Variant {
        label: "jacobi, Macklin 2014 averaging (per particle), omega 1.5",
        solver: SolverArg::Jacobi,
        average: Averaging::Particle,
        omega: 1.5,
    },
    Variant {
        label: "jacobi, no averaging, omega 1",
        solver: SolverArg::Jacobi,
        average: Averaging::Off,
        omega: 1.0,
    },
    Variant {
        label: "gs",
        solver: SolverArg::Gs,
        average: Averaging::Constraint,
        omega: 1.0,
    },
];

/// The hanging chain of [`hanging_chain`] at compliance 0 (plain PBD), settled the same way:
/// the worst |segment length - rest length| / rest length.
pub fn rigid_chain(solver: &mut dyn Solver, params: &StepParams) -> Result<f64, WobbleError> {
    let mut body = scenes::standard::rope(CHAIN_N)?;
    body.constraints_mut()
        .distance
        .compliance
        .iter_mut()
        .for_each(|c| *c = 0.0);
    let steps = (CHAIN_SECONDS / params.dt).round() as usize;
    for _ in 0..steps {
        solver_core::step(&mut body, params, solver, None)?;
    }
    let d = &body.constraints().distance;
    let x = &body.particles().x();
    Ok(d.pairs
        .iter()
        .zip(&d.rest)
        .map(|(&[i, j], &rest)| {
            ((x[i as usize].xyz() - x[j as usize].xyz()).length() as f64 - rest as f64).abs()
                / rest as f64
        })
        .fold(0.0, f64::max))
}

/// The CSV columns of [`Variant::cells`].
const VARIANT_COLUMNS: [&str; 4] = ["variant", "solver", "averaging", "omega"];

impl Variant {
    /// The variant's columns of the CSVs: label, solver, averaging, omega.
    fn cells(&self) -> [String; 4] {
        [
            self.label.to_string(),
            self.solver.to_string(),
            format!("{:?}", self.average),
            self.omega.to_string(),
        ]
    }
}

/// How many of [`VARIANTS`] are the project's hybrid (the first ones; drawn solid).
pub const LITERATURE: usize = 3;

/// A fresh solver of `v` with the run's other options.
fn solver_of(ctx: &Ctx, v: &Variant) -> Result<Box<dyn Solver>, WobbleError> {
    let jacobi = JacobiOptions {
        average: v.average,
        omega: v.omega,
    };
    with_jacobi(ctx.tuning.tune(v.solver.kind()), jacobi).build(&ctx.tuning.options(1))
}

/// The lines drawn on C13's and C14's plots: a chain error of 1%, a momentum change of 1e-4 of
/// |p₀| (C14's stated tolerance in `engine::SPECS`).
pub const CHAIN_LIMIT: f64 = 0.01;
/// See [`CHAIN_LIMIT`].
pub const MOMENTUM_LIMIT: f64 = 1e-4;

/// A figure or why there is none, for the tables.
fn show(f: &Result<f64, String>) -> String {
    match f {
        Ok(x) => format!("{x:.3e}"),
        Err(e) => e.clone(),
    }
}

/// The hybrid's closed-form stretch error on the hanging chain of `n` particles: at its fixed
/// point segment k (k particles below it) is stretched `(2k - 1) / (ω k)` times the exact
/// amount (each particle's two corrections are averaged while the multipliers are not), so
/// the worst relative error is `max_k |(2k - 1) / (ω k) - 1|` over k = 1..n-1.
pub fn hybrid_chain_error(omega: f64, n: usize) -> f64 {
    (1..n)
        .map(|k| ((2 * k - 1) as f64 / (omega * k as f64) - 1.0).abs())
        .fold(0.0, f64::max)
}

/// C13: Jacobi with constraint averaging converges to the constraints' solution.
pub fn c13(ctx: &Ctx) -> Result<Claim, Error> {
    let source = "Macklin, Müller, Chentanez, Kim 2014, \"Unified particle physics for real-time applications\", §4.2";
    let text = "Macklin et al. 2014's averaging as the paper runs it, in plain PBD (compliance 0): each particle's summed corrections divided by its number of constraints, with over-relaxation omega 1 and 1.5, on a hanging chain; converged, every segment keeps its rest length. Reported beside it, not judged under the paper: the project's own hybrid (the same averaging with unscaled XPBD multipliers, `Averaging::Particle` on the compliant chain), whose fixed point has a closed form";
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
            &VARIANT_COLUMNS[..],
            &[
                "iterations",
                "worst_error",
                "top_stretch_m",
                "top_exact_m",
                "status",
            ],
        ]
        .concat(),
    )?;
    let mut figures = Vec::new();
    let mut series = Vec::new();
    for (k, v) in VARIANTS.iter().enumerate() {
        let mut at = Vec::new();
        for iterations in [few, many] {
            let run =
                solver_of(ctx, v).and_then(|mut s| hanging_chain(s.as_mut(), &params(iterations)));
            let (worst, top, exact, status) = match &run {
                Ok(f) => (f.worst, f.top, f.top_exact, "ok".to_string()),
                Err(e) => (f64::NAN, f64::NAN, f64::NAN, e.to_string()),
            };
            w.record(
                &[
                    &v.cells()[..],
                    &[
                        iterations.to_string(),
                        worst.to_string(),
                        top.to_string(),
                        exact.to_string(),
                        status.clone(),
                    ],
                ]
                .concat(),
            )?;
            at.push(run.map(|f| f.worst).map_err(|e| e.to_string()));
        }
        let errors: Vec<f64> = at
            .iter()
            .map(|f| *f.as_ref().unwrap_or(&f64::NAN))
            .collect();
        series.push(Series {
            dashed: k >= LITERATURE,
            color: Some(k),
            ..Series::xy(v.label, [few as f64, many as f64], &errors)
        });
        let closed = if v.average == Averaging::Particle {
            format!(
                "; closed form {:.4e}",
                hybrid_chain_error(v.omega as f64, CHAIN_N)
            )
        } else {
            String::new()
        };
        figures.push(format!(
            "{}: {} after {many} iterations ({} after {few}){closed}",
            v.label,
            show(&at[1]),
            show(&at[0])
        ));
    }
    series.push(level(
        &format!("limit {CHAIN_LIMIT}"),
        (few as f64, many as f64),
        CHAIN_LIMIT,
        VARIANTS.len(),
    ));
    let plot = Plot::new(
        "C13: hanging chain, worst stretch error against the closed form",
        "iterations per step",
        "worst relative error of a segment's stretch",
        series,
    )
    .log_x()
    .log_y();
    let mut files = ctx.files(path, &[(&plot, "c13")])?;
    // Macklin et al. 2014 as the paper describes it: plain PBD (compliance 0) with each
    // particle's corrections averaged over its constraint count. At compliance 0 the XPBD
    // multiplier never feeds back into a correction, so `Averaging::Particle` is exactly the
    // paper's method there; a converged solve leaves every segment at its rest length.
    let pbd_path = ctx.path("c13_pbd.csv");
    let mut pw = RowWriter::create(
        &pbd_path,
        &[
            &VARIANT_COLUMNS[..],
            &["iterations", "worst_stretch_over_rest", "status"],
        ]
        .concat(),
    )?;
    let mut pbd_figures = Vec::new();
    for v in PBD_VARIANTS {
        for iterations in [few, many] {
            let run =
                solver_of(ctx, v).and_then(|mut s| rigid_chain(s.as_mut(), &params(iterations)));
            let (worst, status) = match &run {
                Ok(w) => (*w, "ok".to_string()),
                Err(e) => (f64::NAN, e.to_string()),
            };
            pw.record(
                &[
                    &v.cells()[..],
                    &[iterations.to_string(), worst.to_string(), status],
                ]
                .concat(),
            )?;
            if iterations == many {
                pbd_figures.push(format!("{}: {worst:.2e}", v.label));
            }
        }
    }
    files.push(pbd_path);
    let measured = format!(
        "Macklin 2014's method (c13_pbd.csv): the same chain at compliance 0, worst |segment length - rest| / rest after {many} iterations per step: {pbd_figures}. The project's own hybrid (c13.csv): hanging chain of {CHAIN_N} particles of 0.1 kg, compliance {CHAIN_ALPHA} m/N, damping {CHAIN_DAMPING}/s, {CHAIN_SECONDS} s of dt = 1/60, worst relative error of the segments' stretch against alpha (particles below) m g: {}",
        figures.join("; "),
        pbd_figures = pbd_figures.join("; "),
    );
    Ok(Claim {
        id: "C13",
        source,
        text,
        measured,
        files,
        ..Claim::measured()
    })
}

/// C14: internal constraints conserve momentum, with Jacobi's averaging too.
pub fn c14(ctx: &Ctx) -> Result<Claim, Error> {
    let source = "Müller, Heidelberger, Hennix, Ratcliff 2007, \"Position based dynamics\", §3.3, with the Jacobi averaging of Macklin et al. 2014, §4.2";
    let text = "Müller et al. 2007's statement as written: projecting internal constraints with inverse-mass weights (the paper's Gauss-Seidel projection, gs here) conserves linear momentum, on a free cloth; the Jacobi variants (the project's per-constraint default, its hybrid of Macklin 2014's per-particle averaging with unscaled XPBD multipliers, plain and Chebyshev) are the project's own and reported, not judged under the paper";
    let n = if ctx.quick { 12 } else { 16 };
    let params = StepParams::default();
    let path = ctx.path("c14.csv");
    let mut w = RowWriter::create(
        &path,
        &[
            &VARIANT_COLUMNS[..],
            &[
                "n",
                "steps",
                "momentum_change_rel",
                "ms_per_step",
                "residual_ratio",
                "residual_iterations",
                "status",
            ],
        ]
        .concat(),
    )?;
    let base = ctx.base()?;
    let iters = ctx.scale.conv_iters;
    let mut figures = Vec::new();
    let mut series = Vec::new();
    for (k, v) in VARIANTS.iter().enumerate() {
        let start = Instant::now();
        let run = solver_of(ctx, v).and_then(|mut s| {
            let drift = cloth_momentum(s.as_mut(), n, &params)?;
            Ok((
                drift,
                start.elapsed().as_secs_f64() * 1e3 / CLOTH_STEPS as f64,
            ))
        });
        let (drift, ms, status) = match &run {
            Ok((d, ms)) => (*d, *ms, "ok".to_string()),
            Err(e) => (f64::NAN, f64::NAN, e.to_string()),
        };
        // The residual after `iters` iterations over the one before any, from the common
        // state (NaN where it cannot be built or the step fails).
        let residual = match &base {
            Ok(base) => {
                let curve = solver_of(ctx, v).map_err(Error::from).and_then(|mut s| {
                    crate::measure::residuals::residual_curve(base, s.as_mut(), iters)
                });
                curve.map_or(f64::NAN, |c| c[iters] / c[0])
            }
            Err(_) => f64::NAN,
        };
        w.record(
            &[
                &v.cells()[..],
                &[
                    n.to_string(),
                    CLOTH_STEPS.to_string(),
                    drift.to_string(),
                    ms.to_string(),
                    residual.to_string(),
                    iters.to_string(),
                    status,
                ],
            ]
            .concat(),
        )?;
        let figure = run.map(|r| r.0).map_err(|e| e.to_string());
        series.push(dot(v.label, (ms, drift), k));
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
    }
    let times: Vec<f64> = series
        .iter()
        .map(|s| s.points[0].0)
        .filter(|t| t.is_finite())
        .collect();
    let span = (
        times.iter().copied().fold(f64::INFINITY, f64::min),
        times.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    );
    if span.0 <= span.1 {
        series.push(level(
            &format!("limit {MOMENTUM_LIMIT:e}"),
            span,
            MOMENTUM_LIMIT,
            VARIANTS.len(),
        ));
    }
    let plot = Plot::new(
        format!("C14: free {n} x {n} cloth, momentum change against step time"),
        "mean step time (ms)",
        "|p - p0| / |p0| after the run",
        series,
    )
    .log_y();
    let files = ctx.files(path, &[(&plot, "c14")])?;
    let measured = format!(
        "free {n} x {n} cloth (pins released), no gravity, velocities uniform in [-1, 1) m/s per component about 0.5 m/s along x (seeded), {CLOTH_STEPS} steps of dt = 1/60, 8 iterations: |p - p0| / |p0| (mean step time; residual after {iters} iterations over the residual before any, one step from the common cloth state of C1, n = {}): {}",
        ctx.scale.conv_n,
        figures.join("; ")
    );
    Ok(Claim {
        id: "C14",
        source,
        text,
        measured,
        files,
        ..Claim::measured()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hybrids_closed_form_gives_the_chain_errors_of_the_review() {
        // 8/9 at ω = 1 (the top segment of a 10-particle chain), 1/3 at ω = 1.5 (the bottom).
        assert!((hybrid_chain_error(1.0, 10) - 8.0 / 9.0).abs() < 1e-12);
        assert!((hybrid_chain_error(1.5, 10) - 1.0 / 3.0).abs() < 1e-12);
        assert_eq!(hybrid_chain_error(1.0, 2), 0.0);
    }

    #[test]
    fn the_measured_hybrid_chain_matches_its_closed_form() {
        for omega in [1.0f32, 1.5] {
            let kind = sparse::SolverKind::Jacobi(JacobiOptions {
                omega,
                average: Averaging::Particle,
            });
            let mut solver = kind.build(&sparse::SolverOptions::default()).unwrap();
            let params = StepParams {
                iterations: 200,
                damping: CHAIN_DAMPING,
                ..Default::default()
            };
            let f = hanging_chain(solver.as_mut(), &params).unwrap();
            let closed = hybrid_chain_error(omega as f64, CHAIN_N);
            assert!(
                (f.worst - closed).abs() < 1e-3 * closed,
                "ω {omega}: {} vs {closed}",
                f.worst
            );
        }
    }
}
