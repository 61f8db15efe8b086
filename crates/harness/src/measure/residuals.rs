//! Residual curves inside one step from a common state, shared by `wobble converge` and the
//! convergence claims (C1, C2, C9, C11, C13).
//!
//! The body is warmed by a few steps of the reference Gauss-Seidel (docs/SCENES.md defaults)
//! and cloned; every solver then runs one step from its own copy of that clone, so every
//! solver starts from the same predicted positions. The residual (docs/SCENES.md: RMS of C
//! over the mean rest length) is recorded by the step loop after each iteration; iteration 0
//! is the residual of the predicted positions, before any solver iteration (a step with a
//! solver that does nothing).

use crate::measure::stats::quantile;
use crate::output::csv::RowWriter;
use crate::setup::{build_body, or_note, Error, Tuning};
use serde::Serialize;
use solver_core::{step, Body, SolveState, Solver, StepParams};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The fixed layout of converge.csv.
pub const CONVERGE_HEADER: &[&str] = &[
    "scene",
    "n",
    "solver",
    "iteration",
    "residual",
    "elapsed_us",
];

/// One row of converge.csv.
#[derive(Serialize, Debug, Clone)]
pub struct ConvergeRow {
    /// Scene name.
    pub scene: String,
    /// Size parameter of the scene.
    pub n: usize,
    /// Solver name.
    pub solver: String,
    /// Iterations done in the step (0: the predicted positions, before any iteration).
    pub iteration: usize,
    /// Residual after `iteration` iterations: RMS of C over the mean rest length.
    pub residual: f64,
    /// Time of one step with `iteration` iterations, median over `--reps`, in µs (NaN: untimed).
    pub elapsed_us: f64,
}

/// A solver that does nothing: the step loop around it predicts, projects contacts and
/// updates velocities, which gives the residual and the cost of a step before any iteration.
#[derive(Debug, Default)]
pub struct NoSolve;

impl Solver for NoSolve {
    fn name(&self) -> &'static str {
        "none"
    }
    fn iterate(&mut self, _: &mut SolveState, _: usize) {}
}

/// The common state: `warm` steps of the reference Gauss-Seidel at docs/SCENES.md defaults.
pub fn common_state(
    scene: &str,
    n: usize,
    mesh: Option<PathBuf>,
    ordering: &str,
    warm: usize,
) -> Result<Body, Error> {
    let (mut body, _) = build_body(scene, n, mesh, ordering)?;
    let mut gs = solver_core::GaussSeidel::new();
    let params = StepParams::default();
    for _ in 0..warm {
        step(&mut body, &params, &mut gs, None)?;
    }
    Ok(body)
}

fn params(iterations: usize) -> StepParams {
    StepParams {
        iterations,
        ..Default::default()
    }
}

/// Residuals of one step from `base`: index 0 before any iteration, then after each of
/// `iters` iterations of `solver`.
///
/// The solver first takes one untimed step from a throwaway copy of `base`, so that what it
/// does once per topology (`prepare`) or in its first substep (Chebyshev's spectral-radius
/// probe) is behind it, as it would be in the middle of a run.
pub fn residual_curve(
    base: &Body,
    solver: &mut dyn Solver,
    iters: usize,
) -> Result<Vec<f64>, Error> {
    step(&mut base.clone(), &params(iters), solver, None)?;
    let r0 = residual_before(base)?;
    let mut r = Vec::with_capacity(iters);
    step(&mut base.clone(), &params(iters), solver, Some(&mut r))?;
    Ok(std::iter::once(r0)
        .chain(r.into_iter().map(f64::from))
        .collect())
}

/// The residual of the positions one step from `base` predicts (contacts projected), before
/// any solver iteration: iteration 0 of every residual curve.
pub fn residual_before(base: &Body) -> Result<f64, Error> {
    let mut r0 = Vec::new();
    step(&mut base.clone(), &params(1), &mut NoSolve, Some(&mut r0))?;
    Ok(r0[0] as f64)
}

/// Wall time in µs of one whole step from `base` with k = 0..=iters iterations, median over
/// `reps` (k = 0 runs the step with no solver work).
pub fn elapsed_curve(
    base: &Body,
    solver: &mut dyn Solver,
    iters: usize,
    reps: usize,
) -> Result<Vec<f64>, Error> {
    let mut none = NoSolve;
    // Untimed first calls: solvers build their structures in `prepare`, once per topology.
    step(&mut base.clone(), &params(1), solver, None)?;
    step(&mut base.clone(), &params(1), &mut none, None)?;
    let mut times = vec![Vec::with_capacity(reps); iters + 1];
    for _ in 0..reps.max(1) {
        for (k, t) in times.iter_mut().enumerate() {
            let mut b = base.clone();
            let t0 = Instant::now();
            if k == 0 {
                step(&mut b, &params(1), &mut none, None)?;
            } else {
                step(&mut b, &params(k), solver, None)?;
            }
            t.push(t0.elapsed().as_secs_f64() * 1e6);
        }
    }
    Ok(times.iter().map(|t| quantile(t, 0.5)).collect())
}

/// Iterations needed to bring the residual to `factor` times its value before the first
/// iteration (`None` when the curve never gets there).
pub fn iterations_to(curve: &[f64], factor: f64) -> Option<usize> {
    let r0 = *curve.first()?;
    let target = r0 * factor;
    curve
        .iter()
        .skip(1)
        .position(|&r| r <= target)
        .map(|p| p + 1)
}

/// Convenience for claims: the residual curve of `solver` from a common state.
pub fn curve_for(
    base: &Body,
    solver: &str,
    tuning: &Tuning,
    threads: usize,
    iters: usize,
) -> Result<Result<Vec<f64>, String>, Error> {
    let s = or_note(tuning.build_named(solver, threads))?;
    match s {
        Ok(mut s) => or_note(residual_curve(base, s.as_mut(), iters)),
        Err(note) => Ok(Err(note)),
    }
}

/// Writes residual curves as converge.csv rows (elapsed left empty as NaN) into `path`.
pub fn write_curves(
    path: &Path,
    scene: &str,
    n: usize,
    curves: &[(String, Vec<f64>)],
) -> Result<(), Error> {
    let mut w = RowWriter::create(path, CONVERGE_HEADER)?;
    for (name, c) in curves {
        for (k, &r) in c.iter().enumerate() {
            w.row(&ConvergeRow {
                scene: scene.to_string(),
                n,
                solver: name.clone(),
                iteration: k,
                residual: r,
                elapsed_us: f64::NAN,
            })?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::csv::header_of;

    #[test]
    fn converge_row_matches_the_fixed_layout() {
        let r = ConvergeRow {
            scene: "cloth".into(),
            n: 2,
            solver: "gs".into(),
            iteration: 0,
            residual: 0.0,
            elapsed_us: 0.0,
        };
        assert_eq!(header_of(&r), CONVERGE_HEADER);
    }

    #[test]
    fn gauss_seidel_lowers_the_residual_from_the_common_state() {
        let base = common_state("cloth", 8, None, "natural", 3).unwrap();
        let mut gs = solver_core::GaussSeidel::new();
        let c = residual_curve(&base, &mut gs, 10).unwrap();
        assert_eq!(c.len(), 11);
        assert!(c[10] < c[0], "{c:?}");
        // Same state, same solver: the same curve (the common state is not disturbed).
        let c2 = residual_curve(&base, &mut gs, 10).unwrap();
        assert_eq!(c, c2);
        let e = elapsed_curve(&base, &mut gs, 4, 2).unwrap();
        assert_eq!(e.len(), 5);
        assert!(e.iter().all(|t| t.is_finite() && *t > 0.0));
        assert_eq!(iterations_to(&[1.0, 0.5, 0.009, 0.001], 0.01), Some(2));
        assert_eq!(iterations_to(&[1.0, 0.5], 0.01), None);
    }
}
