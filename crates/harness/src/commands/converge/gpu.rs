//! `wobble converge --backend gpu`: the figures of `wobble converge` for the GPU solvers.
//!
//! Method: as on the CPU, every solver starts from the same common state (the warm steps run
//! on the CPU's reference Gauss-Seidel) and first takes one untimed step, so that Chebyshev's
//! spectral-radius probe is behind it. The residual curve comes from
//! `GpuBody::step_with_residuals`, which submits after each iteration and reads the positions
//! back, in this mode only; iteration 0 is the CPU's residual of the predicted positions (the
//! same for every solver). `elapsed_us` at iteration k is the median over `--reps` of one whole
//! GPU step with k iterations, submitted and waited for, each from the common state written
//! back to the device (untimed); iteration 0 is not timed on the GPU (NaN). The stretch runs
//! start from rest as on the CPU and read the positions back after every step (untimed).

use super::args::ConvergeArgs;
use super::writers::{Curves, StretchRow, Writers};
use crate::measure::residuals::residual_before;
use crate::measure::sim::RunFigures;
use crate::measure::stats::quantile;
use crate::setup::{build_body, gpu_error, or_note, Error};
use gpu::{Gpu, GpuBody, GpuSolver};
use solver_core::{figures, Body, StepParams};
use std::time::Instant;

/// The device every GPU curve of one `wobble converge` runs on.
pub fn device() -> Result<Gpu, Error> {
    Gpu::new().map_err(gpu_error)
}

fn params(iterations: usize) -> StepParams {
    StepParams {
        iterations,
        ..Default::default()
    }
}

/// `base` on the device with solver `name` and the run's tuning, after one untimed step.
fn upload(gpu: &Gpu, a: &ConvergeArgs, base: &Body, name: &str) -> Result<GpuBody, Error> {
    GpuSolver::parse(name)?;
    let kind = a.common.tuning.tune(name.parse()?);
    let mut body = GpuBody::new(gpu, base, kind).map_err(gpu_error)?;
    body.step(&params(a.iters)).map_err(gpu_error)?;
    body.finish().map_err(gpu_error)?;
    body.write_state(base).map_err(gpu_error)?;
    Ok(body)
}

/// The residual curve (`r0` first, then one value per iteration) and the elapsed-time curve of
/// GPU solver `name` from `base`.
fn curves(
    gpu: &Gpu,
    a: &ConvergeArgs,
    base: &Body,
    name: &str,
    r0: f64,
) -> Result<(Vec<f64>, Vec<f64>), Error> {
    let mut body = upload(gpu, a, base, name)?;
    let mut r = Vec::with_capacity(a.iters);
    body.step_with_residuals(&params(a.iters), base.constraints(), &mut r)
        .map_err(gpu_error)?;
    let curve: Vec<f64> = std::iter::once(r0)
        .chain(r.into_iter().map(f64::from))
        .collect();
    let mut times = vec![Vec::with_capacity(a.reps); a.iters + 1];
    for _ in 0..a.reps.max(1) {
        for (k, t) in times.iter_mut().enumerate().skip(1) {
            body.write_state(base).map_err(gpu_error)?;
            body.finish().map_err(gpu_error)?;
            let t0 = Instant::now();
            body.step(&params(k)).map_err(gpu_error)?;
            body.finish().map_err(gpu_error)?;
            t.push(t0.elapsed().as_secs_f64() * 1e6);
        }
    }
    let elapsed = std::iter::once(f64::NAN)
        .chain(times.iter().skip(1).map(|t| quantile(t, 0.5)))
        .collect();
    Ok((curve, elapsed))
}

/// `cpu::solver_curves` on the GPU: the curves of `name`, written to
/// converge.csv, or the note of why the GPU refused.
pub(super) fn solver_curves(
    gpu: &Gpu,
    a: &ConvergeArgs,
    base: &Body,
    name: &str,
    w: &mut Writers,
) -> Result<Curves, Error> {
    let r0 = residual_before(base)?;
    let (curve, elapsed) = match or_note(curves(gpu, a, base, name, r0))? {
        Ok(c) => c,
        Err(note) => {
            w.notes.record(&[name, "residual", &note])?;
            return Ok(Err(note));
        }
    };
    w.curves(a, name, &curve, &elapsed, "ok (gpu)")?;
    Ok(Ok((curve, elapsed)))
}

/// One stretch run of GPU solver `name` at `it` iterations from rest, read back after every
/// step (untimed).
pub(super) fn stretch_run(
    gpu: &Gpu,
    a: &ConvergeArgs,
    name: &str,
    it: usize,
) -> Result<StretchRow, Error> {
    let (mut body, _) = build_body(a.scene.name(), a.n, a.mesh.clone(), a.ordering.name())?;
    GpuSolver::parse(name)?;
    let kind = a.common.tuning.tune(name.parse()?);
    let mut on_gpu = GpuBody::new(gpu, &body, kind).map_err(gpu_error)?;
    let (mut means, mut ms) = (Vec::new(), Vec::new());
    let mut last_max = f64::NAN;
    let mut status = "ok".to_string();
    for _ in 0..a.stretch_steps {
        let t0 = Instant::now();
        on_gpu.step(&params(it)).map_err(gpu_error)?;
        on_gpu.finish().map_err(gpu_error)?;
        ms.push(t0.elapsed().as_secs_f64() * 1e3);
        if let Err(e) = on_gpu.read_into(&mut body) {
            status = format!("diverged: {e}");
            break;
        }
        let (mean, max) = figures::stretch(&body);
        means.push(mean as f64);
        last_max = max as f64;
    }
    let figures = RunFigures {
        steps: means.len(),
        stretch_mean_avg: if means.is_empty() {
            f64::NAN
        } else {
            means.iter().sum::<f64>() / means.len() as f64
        },
        stretch_max_final: last_max,
        ms_per_step_median: quantile(&ms, 0.5),
        status,
    };
    Ok(StretchRow::new(a, name, it, figures))
}
