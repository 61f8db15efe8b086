//! `wobble converge` on the CPU: sparse's solvers by name.

use super::args::ConvergeArgs;
use super::writers::{Curves, StretchRow, Writers};
use crate::measure::residuals::{elapsed_curve, residual_curve};
use crate::measure::sim::{RunFigures, Sim, Spec};
use crate::setup::{or_note, Error};
use solver_core::Body;

/// One solver's residual and elapsed-time curves from `base`, written to converge.csv; `Err`
/// with the note when the solver refuses the body.
pub(super) fn solver_curves(
    a: &ConvergeArgs,
    base: &Body,
    name: &str,
    w: &mut Writers,
) -> Result<Curves, Error> {
    let mut solver = match or_note(a.common.tuning.build_named(name, a.threads))? {
        Ok(s) => s,
        Err(note) => {
            w.notes.record(&[name, "all", &note])?;
            return Ok(Err(note));
        }
    };
    let curve = match or_note(residual_curve(base, solver.as_mut(), a.iters))? {
        Ok(c) => c,
        Err(note) => {
            w.notes.record(&[name, "residual", &note])?;
            return Ok(Err(note));
        }
    };
    let elapsed = match or_note(elapsed_curve(base, solver.as_mut(), a.iters, a.reps))? {
        Ok(e) => e,
        Err(note) => {
            w.notes.record(&[name, "timing", &note])?;
            vec![f64::NAN; curve.len()]
        }
    };
    w.curves(a, name, &curve, &elapsed, "ok")?;
    Ok(Ok((curve, elapsed)))
}

/// One stretch run of CPU solver `name` at `it` iterations from rest: the mean stretch over
/// `--stretch-steps` steps.
pub(super) fn stretch_run(a: &ConvergeArgs, name: &str, it: usize) -> Result<StretchRow, Error> {
    let mut spec = Spec::new(a.scene.name(), a.n, name).iterations(it);
    spec.mesh = a.mesh.clone();
    spec.ordering = a.ordering.name().to_string();
    spec.threads = a.threads;
    spec.tuning = a.common.tuning.clone();
    let t = Sim::new(&spec)?.run(a.stretch_steps);
    Ok(StretchRow::new(a, name, it, RunFigures::of(&t, 0)))
}
