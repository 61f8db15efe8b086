//! Iteration error and formulation error, apart, for the claims whose figure is a distance to
//! a converged answer (C1's common state, C5's hanging cloth, C10's XPBD cloth; one step each).
//! An iterative XPBD solver converges, if at all, to a fixed point of its own: the accumulated
//! multipliers make that point depend on the path the iteration took, so it is not the exact
//! implicit step that `sparse::newton` solves. The distance of a solver's positions to the
//! exact step after k iterations is the sum (as vectors) of two parts measured here:
//! - the iteration error: the distance to the solver's own converged point (the same step after
//!   many iterations), which more iterations remove;
//! - the formulation error: that converged point's distance to the exact step, which no number
//!   of iterations removes.
//!
//! Each claim's split ([`SplitSpec`]) is written to `<stem>.csv` (per solver and iteration
//! count: wall time of the step, both errors and their total) and drawn against iterations
//! (`<stem>.svg|png`) and against milliseconds (`<stem>_ms.svg|png`).

use super::claim::Ctx;
use crate::output::csv::RowWriter;
use crate::output::plot::{level, Plot, Series};
use crate::setup::{or_note, Error};
use solver_core::{step, Body, StepParams};
use std::path::PathBuf;
use std::time::Instant;

/// The edge compliance C1's split runs at (m/N), and the one a split falls back to where the
/// Newton reference does not converge at the scene's own (the rigid cloth): soft enough that gs
/// and colored nearly settle within their converged counts (each CSV gives how far each point
/// still moved), stiff enough that the step still stretches edges.
pub const SPLIT_COMPLIANCE: f32 = 1e-4;

/// The solvers C1 splits, and the iterations of their converged point (Jacobi converges
/// slowest).
pub const SOLVERS: [(&str, usize); 4] = [
    ("gs", 4000),
    ("colored", 4000),
    ("jacobi", 20000),
    ("chebyshev", 4000),
];

/// Iteration counts at which the errors are measured (the claims' own counts among them: 4-6
/// and 20 of C1, ten-odd of C5, 4-32 of C10).
pub const COUNTS: [usize; 18] = [
    1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 32, 50, 80, 120, 200, 300, 500,
];

/// The largest residual reduction at which a Newton reference that stopped before its
/// tolerance (no step lowered the residual by a tenth) still counts as the exact step: below a
/// millionth of its start it stopped at the floor of f64; above, it is stuck (on the rigid
/// cloth it stops near a tenth).
const REFERENCE_STUCK: f64 = 1e-6;

/// One split: which claim, which state, which solvers.
pub struct SplitSpec<'a> {
    /// The claim it belongs to (the plots' titles).
    pub claim: &'a str,
    /// File stem: `<stem>.csv`, `<stem>.svg|png`, `<stem>_ms.svg|png`.
    pub stem: &'a str,
    /// The scene in words (the plots' titles).
    pub scene: String,
    /// The step's parameters (the iterations are set per run).
    pub params: StepParams,
    /// The distance constraints' compliances to try, in order (None: the state's own); the
    /// first at which the Newton reference converges is used.
    pub compliances: &'a [Option<f32>],
    /// The solvers split and the iterations of each one's converged point (a quarter in
    /// --quick).
    pub solvers: &'a [(&'static str, usize)],
}

/// One step from `base` with `k` iterations of `solver` at the default step parameters: its
/// positions and wall seconds (Err: this build cannot run the solver or the step failed, with
/// why).
pub(super) fn run(
    ctx: &Ctx,
    base: &Body,
    solver: &str,
    k: usize,
) -> Result<Result<(Body, f64), String>, Error> {
    run_with(ctx, base, &StepParams::default(), solver, k)
}

/// [`run`] at `params` (their iterations replaced by `k`).
fn run_with(
    ctx: &Ctx,
    base: &Body,
    params: &StepParams,
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
        ..*params
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

impl Split {
    /// The iteration error after `k` iterations (NaN where not measured).
    pub fn iteration_error(&self, k: usize) -> f64 {
        self.rows
            .iter()
            .find(|r| r.0 == k)
            .map_or(f64::NAN, |r| r.2)
    }
}

/// Everything one [`split`] produced.
pub struct Splits {
    /// The CSV and the plots (none where no compliance gave a converged reference).
    pub files: Vec<PathBuf>,
    /// Per solver split.
    pub splits: Vec<Split>,
    /// What could not be split, and why (solvers this build cannot run, references that did
    /// not converge).
    pub notes: Vec<String>,
    /// The compliance the split ran at: None for the state's own.
    pub compliance: Option<f32>,
}

impl Splits {
    /// In words, for a claim's measured text: the compliance, then per solver its formulation
    /// error, how far its converged point still moved, and its iteration error at `counts`;
    /// then what was not split.
    pub fn describe(&self, counts: &[usize]) -> String {
        let at = match self.compliance {
            Some(a) => format!("at edge compliance {a:e} m/N"),
            None => "at the scene's own compliance".into(),
        };
        let solvers = self.splits.iter().map(|s| {
            let its = counts
                .iter()
                .map(|&k| format!("{:.3e} after {k}", s.iteration_error(k)))
                .collect::<Vec<_>>()
                .join(" and ");
            format!(
                "{}: formulation error {:.3e} (its point after {} iterations; it moved {:.1e} over the last half of them), iteration error {its}",
                s.solver, s.formulation, s.converged_its, s.unsettled
            )
        });
        let body = solvers
            .chain(self.notes.iter().map(|n| format!("not split: {n}")))
            .collect::<Vec<_>>()
            .join("; ");
        if self.splits.is_empty() {
            body
        } else {
            format!("{at}: {body}")
        }
    }
}

/// `base` with every distance constraint at `compliance` (None: unchanged).
fn with_compliance(base: &Body, compliance: Option<f32>) -> Body {
    let mut b = base.clone();
    if let Some(a) = compliance {
        b.constraints_mut()
            .distance
            .compliance
            .iter_mut()
            .for_each(|c| *c = a);
    }
    b
}

/// `compliance` in words, for notes and titles.
fn compliance_words(compliance: Option<f32>) -> String {
    compliance.map_or("the scene's own compliance".into(), |a| {
        format!("compliance {a:e}")
    })
}

/// Measures the split `spec` describes on `state`: the first of its compliances at which the
/// exact step (`sparse::newton`) converges, then for each solver its converged point and the
/// errors at [`COUNTS`]; writes `<stem>.csv` and its two plots. Solvers this build cannot run
/// are left out, with why in the notes.
pub fn split(ctx: &Ctx, state: &Body, spec: &SplitSpec) -> Result<Splits, Error> {
    let mut notes = Vec::new();
    let mut found = None;
    for &c in spec.compliances {
        let base = with_compliance(state, c);
        let (exact, report) = newton_reference_with(&base, &spec.params)?;
        if accepted(&report) {
            found = Some((c, base, exact));
            break;
        }
        notes.push(format!(
            "at {} the newton reference {}",
            compliance_words(c),
            reference_outcome(&report)
        ));
    }
    let Some((compliance, base, exact)) = found else {
        return Ok(Splits {
            files: Vec::new(),
            splits: Vec::new(),
            notes,
            compliance: None,
        });
    };
    let (base, exact) = (&base, &exact);
    let mut splits = Vec::new();
    'solvers: for &(solver, long) in spec.solvers {
        let long = if ctx.quick { long / 4 } else { long };
        let run = |k| run_with(ctx, base, &spec.params, solver, k);
        let (fixed, half) = match (run(long)?, run(long / 2)?) {
            (Ok(a), Ok(b)) => (a.0, b.0),
            (Err(n), _) | (_, Err(n)) => {
                notes.push(format!("{solver}: {n}"));
                continue;
            }
        };
        let mut rows = Vec::new();
        for k in COUNTS {
            match run(k)? {
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
    let files = write(ctx, spec, compliance, &splits)?;
    Ok(Splits {
        files,
        splits,
        notes,
        compliance,
    })
}

/// Writes `<stem>.csv` and the plots against iterations and against milliseconds.
fn write(
    ctx: &Ctx,
    spec: &SplitSpec,
    compliance: Option<f32>,
    splits: &[Split],
) -> Result<Vec<PathBuf>, Error> {
    let csv = ctx.path(&format!("{}.csv", spec.stem));
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
            "edge_compliance",
        ],
    )?;
    // An empty cell: the scene's own compliance.
    let compliance_cell = compliance.map_or(String::new(), |a| a.to_string());
    for s in splits {
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
                compliance_cell.clone(),
            ])?;
        }
    }
    let mut files = vec![csv];
    let ms_stem = format!("{}_ms", spec.stem);
    // The title names the split; the state goes under the axis, where a long line fits.
    let state = format!("{}, {}", spec.scene, compliance_words(compliance));
    for (stem, x_label, by_ms) in [
        (
            spec.stem,
            format!("iterations in the step ({state})"),
            false,
        ),
        (
            ms_stem.as_str(),
            format!("wall time of the step, ms, one run each ({state})"),
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
                "{}: iteration error (solid), formulation error (dashed)",
                spec.claim
            ),
            &x_label,
            "RMS distance (mean rest lengths)",
            series,
        )
        .log_x()
        .log_y();
        files.extend(plot.save(&ctx.path(stem))?);
    }
    Ok(files)
}

/// RMS distance between the free particles of two bodies, in mean rest lengths. Measured in
/// world positions: each body follows itself (its origin moves when it travels far), so two
/// bodies stepped from one state may hold their particles in different frames.
pub fn position_error(a: &Body, b: &Body) -> f64 {
    let rest = a.constraints().distance.mean_rest().max(1e-12) as f64;
    let (mut sum, mut n) = (0.0f64, 0usize);
    let count = a.particles().len().min(b.particles().len());
    for (i, p) in a.particles().x().iter().enumerate().take(count) {
        if p.w > 0.0 {
            sum += (a.world_position(i) - b.world_position(i)).length_squared();
            n += 1;
        }
    }
    (sum / n.max(1) as f64).sqrt() / rest
}

/// Iterations the Newton reference may take.
const REFERENCE_ITERATIONS: usize = 200;

/// Whether a Newton reference is the exact step: converged to its tolerance, or stopped at the
/// floor of f64 below [`REFERENCE_STUCK`] of its starting residual.
pub(super) fn accepted(r: &sparse::NewtonReport) -> bool {
    r.converged || (r.at_floor && r.reduction() <= REFERENCE_STUCK)
}

/// What a Newton reference did, in words.
pub(super) fn reference_outcome(r: &sparse::NewtonReport) -> String {
    let k = r.residuals.len().saturating_sub(1);
    if r.converged {
        format!(
            "converged to {:.1e} of the starting residual in {k} iterations",
            r.reduction()
        )
    } else if r.at_floor {
        format!(
            "stopped at {:.1e} of the starting residual after {k} iterations (no step lowered it by a tenth)",
            r.reduction()
        )
    } else {
        format!(
            "reached {:.1e} of the starting residual in {k} iterations, not converged",
            r.reduction()
        )
    }
}

/// One step from `base` with the Newton reference at the default step parameters: the body and
/// what the solve reported.
pub(super) fn newton_reference(base: &Body) -> Result<(Body, sparse::NewtonReport), Error> {
    newton_reference_with(base, &StepParams::default())
}

/// [`newton_reference`] at `params` (their iterations replaced by the reference's).
fn newton_reference_with(
    base: &Body,
    params: &StepParams,
) -> Result<(Body, sparse::NewtonReport), Error> {
    let mut newton = sparse::Newton::new(sparse::NewtonOptions::default())?;
    let mut b = base.clone();
    let params = StepParams {
        iterations: REFERENCE_ITERATIONS,
        ..*params
    };
    step(&mut b, &params, &mut newton, None)?;
    Ok((b, newton.report().clone()))
}

#[cfg(test)]
mod tests {
    use super::position_error;
    use solver_core::glam::DVec3;

    #[test]
    fn the_position_error_reads_world_positions_whatever_each_bodys_frame() {
        let a = scenes::cloth(6).unwrap();
        // The same body re-expressed about another origin (what a recentre does): no motion.
        let mut b = a.clone();
        b.set_origin(DVec3::new(5.0, -3.0, 2.0)).unwrap();
        assert!(position_error(&a, &b) < 1e-5, "{}", position_error(&a, &b));
        // The body moved by 1 m in the world: every free particle is 1 m away.
        let mut c = a.clone();
        c.translate(DVec3::new(0.0, 1.0, 0.0)).unwrap();
        let rest = a.constraints().distance.mean_rest() as f64;
        assert!((position_error(&a, &c) * rest - 1.0).abs() < 1e-5);
    }
}
