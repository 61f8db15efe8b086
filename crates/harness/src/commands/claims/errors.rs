//! Iteration error and formulation error, apart (C1's common state at [`SPLIT_COMPLIANCE`], one
//! step). At C1's own compliance (1e-6) the iterative solvers are far from settled after
//! thousands of iterations (their "converged" point still moves by a tenth of a rest length),
//! so the split is taken where they come closer. An iterative XPBD solver converges, if at all, to a fixed point of its own: the
//! accumulated multipliers make that point depend on the path the iteration took, so it is not
//! the exact implicit step that `sparse::newton` solves. The distance of a solver's positions
//! to the exact step after k iterations is the sum (as vectors) of two parts measured here:
//! - the iteration error: the distance to the solver's own converged point (the same step after
//!   many iterations), which more iterations remove;
//! - the formulation error: that converged point's distance to the exact step, which no number
//!   of iterations removes.
//!
//! Written to `c1_errors.csv` (per solver and iteration count: wall time of the step, both
//! errors and their total) and drawn against iterations and against milliseconds.

use super::claim::Ctx;
use crate::output::csv::RowWriter;
use crate::output::plot::{level, Plot, Series};
use crate::setup::{or_note, Error};
use solver_core::{step, Body, StepParams};
use std::path::PathBuf;
use std::time::Instant;

/// The edge compliance of the split (m/N): soft enough that gs and colored nearly settle within
/// their converged counts (c1_errors.csv gives how far each point still moved), stiff enough
/// that the step still stretches edges.
pub const SPLIT_COMPLIANCE: f32 = 1e-4;

/// The solvers split, and the iterations of their converged point (Jacobi converges slowest).
const SOLVERS: [(&str, usize); 4] = [
    ("gs", 4000),
    ("colored", 4000),
    ("jacobi", 20000),
    ("chebyshev", 4000),
];

/// Iteration counts at which the errors are measured.
const COUNTS: [usize; 14] = [1, 2, 3, 5, 8, 12, 20, 30, 50, 80, 120, 200, 300, 500];

/// One step from `base` with `k` iterations of `solver`: its positions and wall seconds (None
/// if this build cannot run the solver or the step fails, with why).
pub(super) fn run(
    ctx: &Ctx,
    base: &Body,
    solver: &str,
    k: usize,
) -> Result<Result<(Body, f64), String>, Error> {
    let mut s = match or_note(ctx.tuning.build_named(solver, 1))? {
        Ok(s) => s,
        Err(note) => return Ok(Err(note)),
    };
    let mut b = base.clone();
    let params = StepParams {
        iterations: k,
        ..Default::default()
    };
    let t0 = Instant::now();
    let r = step(&mut b, &params, s.as_mut(), None).map_err(Error::from);
    let secs = t0.elapsed().as_secs_f64();
    Ok(or_note(r)?.map(|_| (b, secs)))
}

/// What [`split`] found, per solver: the formulation error, how far the converged point still
/// moved between half its iterations and all of them, and (count, ms, iteration error, total).
pub struct Split {
    /// Solver name.
    pub solver: &'static str,
    /// Its converged point's distance to the exact step (mean rest lengths).
    pub formulation: f64,
    /// Distance between its points after half and all of the converged iterations: how far
    /// from converged its "converged point" still is.
    pub unsettled: f64,
    /// Iterations of its converged point.
    pub converged_its: usize,
    /// (iterations, ms of the step, iteration error, total error), mean rest lengths.
    pub rows: Vec<(usize, f64, f64, f64)>,
}

/// Measures the split for each solver on `state` with every edge at [`SPLIT_COMPLIANCE`]
/// against the exact step there (`sparse::newton`), writes `c1_errors.csv` and its two plots;
/// returns the files and the splits (solvers this build cannot run are left out, with why in
/// the returned notes).
pub fn split(ctx: &Ctx, state: &Body) -> Result<(Vec<PathBuf>, Vec<Split>, Vec<String>), Error> {
    let mut base = state.clone();
    base.constraints_mut()
        .distance
        .compliance
        .iter_mut()
        .for_each(|a| *a = SPLIT_COMPLIANCE);
    let (exact, report) = newton_reference(&base)?;
    if !(report.converged || report.at_floor) {
        return Ok((
            Vec::new(),
            Vec::new(),
            vec![format!(
                "the newton reference at compliance {SPLIT_COMPLIANCE:e} did not converge"
            )],
        ));
    }
    let (base, exact) = (&base, &exact);
    let mut splits = Vec::new();
    let mut notes = Vec::new();
    'solvers: for (solver, long) in SOLVERS {
        let long = if ctx.quick { long / 4 } else { long };
        let (fixed, half) = match (
            run(ctx, base, solver, long)?,
            run(ctx, base, solver, long / 2)?,
        ) {
            (Ok(a), Ok(b)) => (a.0, b.0),
            (Err(n), _) | (_, Err(n)) => {
                notes.push(format!("{solver}: {n}"));
                continue;
            }
        };
        let mut rows = Vec::new();
        for k in COUNTS {
            match run(ctx, base, solver, k)? {
                Ok((b, secs)) => rows.push((
                    k,
                    secs * 1e3,
                    position_error(&b, &fixed),
                    position_error(&b, exact),
                )),
                Err(n) => {
                    notes.push(format!("{solver} at {k}: {n}"));
                    continue 'solvers;
                }
            }
        }
        splits.push(Split {
            solver,
            formulation: position_error(&fixed, exact),
            unsettled: position_error(&half, &fixed),
            converged_its: long,
            rows,
        });
    }
    let csv = ctx.path("c1_errors.csv");
    let mut w = RowWriter::create(
        &csv,
        &[
            "solver",
            "iterations",
            "ms",
            "iteration_error_rest_lengths",
            "formulation_error_rest_lengths",
            "total_error_rest_lengths",
            "converged_iterations",
            "converged_unsettled_rest_lengths",
        ],
    )?;
    for s in &splits {
        for &(k, ms, it, total) in &s.rows {
            w.record(&[
                s.solver.to_string(),
                k.to_string(),
                ms.to_string(),
                it.to_string(),
                s.formulation.to_string(),
                total.to_string(),
                s.converged_its.to_string(),
                s.unsettled.to_string(),
            ])?;
        }
    }
    let mut files = vec![csv];
    for (stem, x_label, by_ms) in [
        ("c1_errors", "iterations in the step", false),
        (
            "c1_errors_ms",
            "wall time of the step (ms, one run each)",
            true,
        ),
    ] {
        let mut series = Vec::new();
        for (i, s) in splits.iter().enumerate() {
            let x = |r: &(usize, f64, f64, f64)| if by_ms { r.1 } else { r.0 as f64 };
            series.push(Series {
                name: format!("{}: iteration error", s.solver),
                points: s.rows.iter().map(|r| (x(r), r.2)).collect(),
                color: Some(i),
                ..Default::default()
            });
            let span = (s.rows.first().map_or(1.0, x), s.rows.last().map_or(1.0, x));
            series.push(Series {
                dashed: true,
                ..level(
                    &format!("{}: formulation error", s.solver),
                    span,
                    s.formulation,
                    i,
                )
            });
        }
        let plot = Plot::new(
            format!(
                "C1: iteration error (solid), formulation error (dashed), {}, compliance {SPLIT_COMPLIANCE:e}",
                ctx.conv_cloth()
            ),
            x_label,
            "RMS distance (mean rest lengths)",
            series,
        )
        .log_x()
        .log_y();
        files.extend(plot.save(&ctx.path(stem))?);
    }
    Ok((files, splits, notes))
}

/// RMS distance between the free particles of two bodies, in mean rest lengths.
pub fn position_error(a: &Body, b: &Body) -> f64 {
    let rest = a.constraints().distance.mean_rest().max(1e-12) as f64;
    let (mut sum, mut n) = (0.0f64, 0usize);
    for (p, q) in a.particles().x().iter().zip(b.particles().x()) {
        if p.w > 0.0 {
            sum += (p.xyz() - q.xyz()).length_squared() as f64;
            n += 1;
        }
    }
    (sum / n.max(1) as f64).sqrt() / rest
}

/// Iterations the Newton reference may take.
const REFERENCE_ITERATIONS: usize = 200;

/// One step from `base` with the Newton reference: the body and what the solve reported.
pub(super) fn newton_reference(base: &Body) -> Result<(Body, sparse::NewtonReport), Error> {
    let mut newton = sparse::Newton::new(sparse::NewtonOptions::default())?;
    let mut b = base.clone();
    let params = StepParams {
        iterations: REFERENCE_ITERATIONS,
        ..Default::default()
    };
    step(&mut b, &params, &mut newton, None)?;
    Ok((b, newton.report().clone()))
}
