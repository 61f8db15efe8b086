//! C20 (Small Steps, Macklin et al. 2019): besides constraint error (C8), substepping damps
//! less: n substeps of one iteration keep more of a swinging body's energy than one step of n
//! iterations.
//!
//! # Theory
//! The swing energy of a body released from a raised state is `E(t) - E_rest`, where `E` is
//! kinetic + gravitational energy and `E_rest` that of the same body hanging at rest (found by
//! a damped run). With no air damping, whatever the swing loses is numerical damping of the
//! integrator and the under-converged solve: PBD's position projection removes the velocity
//! along every correction it makes, and a large step with many iterations makes larger
//! corrections than many small steps. The energy kept after the run is the swing energy over
//! its last second divided by the swing energy at the start.

use super::claim::{Claim, Ctx};
use crate::measure::sim::{mean, Sim, Spec, Trace};
use crate::output::csv::RowWriter;
use crate::output::plot::{Plot, Series};
use crate::setup::{or_note, Error};

fn run(
    ctx: &Ctx,
    scene: &str,
    n: usize,
    split: (usize, usize),
    damping: f32,
    steps: usize,
) -> Result<Result<Trace, String>, Error> {
    let mut spec = Spec::new(scene, n, "gs")
        .substeps(split.0)
        .iterations(split.1);
    spec.tuning = ctx.tuning.clone();
    spec.params.damping = damping;
    Ok(or_note(Sim::new(&spec))?.map(|mut sim| sim.run(steps)))
}

/// C20: n substeps x 1 iteration keep more swing energy than 1 step x n iterations.
pub fn c20(ctx: &Ctx) -> Result<Claim, Error> {
    let src = "Small Steps 2019";
    let text = "gs, the rope (a pendulum released horizontal) and the cloth (released flat, pinned at two corners), no air damping: the fraction of the swing energy kept after the run, n substeps of 1 iteration against 1 step of n iterations";
    let totals: Vec<usize> = if ctx.quick {
        vec![4, 8]
    } else {
        vec![4, 8, 16]
    };
    let seconds = if ctx.quick { 3.0 } else { 6.0 };
    let steps = (seconds * 60.0f64).round() as usize;
    let last = 60;
    let scenes = [("rope", 16usize), ("cloth", 16)];
    let path = ctx.path("c20.csv");
    let mut w = RowWriter::create(
        &path,
        &[
            "scene",
            "n",
            "substeps",
            "iterations",
            "steps",
            "energy_start",
            "energy_rest",
            "swing_energy_kept",
            "stretch_mean_avg",
            "status",
        ],
    )?;
    let mut kept = Vec::new();
    let mut figs = Vec::new();
    let mut files = vec![path];
    for (scene, n) in scenes {
        // The hanging rest state: a converged, heavily damped run long enough to stop.
        let rest = match run(ctx, scene, n, (16, 8), 4.0, 600)? {
            Ok(t) if t.finished() => t,
            Ok(t) => {
                return Ok(Claim::untestable(
                    "C20",
                    src,
                    text,
                    format!(
                        "the damped rest run of the {scene} diverged: {}",
                        t.diverged.unwrap_or_default()
                    ),
                ))
            }
            Err(note) => return Ok(Claim::untestable("C20", src, text, note)),
        };
        let e_rest = rest.energy.last().copied().unwrap_or(f64::NAN);
        let mut series = Vec::new();
        for (ti, &total) in totals.iter().enumerate() {
            let mut pair = [f64::NAN; 2];
            for (k, split) in [(total, 1), (1, total)].into_iter().enumerate() {
                let t = match run(ctx, scene, n, split, 0.0, steps)? {
                    Ok(t) => t,
                    Err(note) => return Ok(Claim::untestable("C20", src, text, note)),
                };
                let e0 = t.energy[0];
                let swing = |e: f64| (e - e_rest) / (e0 - e_rest);
                let f = if t.finished() {
                    swing(mean(&t.energy[t.energy.len().saturating_sub(last)..]))
                } else {
                    f64::NAN
                };
                pair[k] = f;
                w.record(&[
                    scene.to_string(),
                    n.to_string(),
                    split.0.to_string(),
                    split.1.to_string(),
                    t.steps().to_string(),
                    e0.to_string(),
                    e_rest.to_string(),
                    f.to_string(),
                    t.stretch_mean_avg().to_string(),
                    t.diverged.clone().unwrap_or_else(|| "ok".into()),
                ])?;
                let stride = (t.energy.len() / 300).max(1);
                series.push(Series {
                    name: format!("{} substeps x {} iterations", split.0, split.1),
                    points: t
                        .energy
                        .iter()
                        .enumerate()
                        .step_by(stride)
                        .map(|(s, &e)| (s as f64 / 60.0, swing(e)))
                        .collect(),
                    dashed: k == 1,
                    color: Some(ti),
                });
            }
            figs.push(format!(
                "{scene} total {total}: {total}x1 kept {:.3}, 1x{total} kept {:.3}",
                pair[0], pair[1]
            ));
            kept.push((pair[0], pair[1]));
        }
        let plot = Plot::new(
            format!("C20: swing energy kept, gs, {scene} n={n}, no air damping"),
            "simulated time (s)",
            "swing energy / swing energy at release",
            series,
        );
        files.extend(plot.save(&ctx.path(&format!("c20_{scene}")))?);
    }
    Ok(Claim {
        id: "C20",
        source: src,
        text,
        measured: format!(
            "{seconds} simulated seconds at dt 1/60 from the release; rest energy from a run at 16 substeps x 8 iterations with damping 4/s for 10 s; energy kept = mean swing energy over the last second / at release: {}",
            figs.join("; ")
        ),
        files,
        ..Claim::measured()
    })
}
