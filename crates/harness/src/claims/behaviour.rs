//! Behaviour claims C5, C6, C8, C10, C12: stretch against iterations, energy over long runs,
//! substeps against iterations, stiffness against iterations and dt, and the jelly. Every run
//! is in-process (`sim`), from rest, at docs/SCENES.md settings unless the claim varies one.

use super::{Claim, Ctx, Verdict};
use crate::csv::RowWriter;
use crate::plot::{Legend, Plot, Series};
use crate::setup::{or_note, Error};
use crate::sim::{mean, Sim, Spec, Trace};
use crate::substeps::{run_split, SplitRow};
use solver_core::{StepParams, Stiffness};
use std::path::PathBuf;

const GODOT: &str = "Godot SoftBody3D article";
const UNITY: &str = "Unity soft-body tutorial";

/// Builds `spec`, optionally sets every distance constraint's compliance, and runs `steps`.
fn run(spec: &Spec, compliance: Option<f32>, steps: usize) -> Result<Result<Trace, String>, Error> {
    match or_note(Sim::new(spec))? {
        Err(note) => Ok(Err(note)),
        Ok(mut sim) => {
            if let Some(a) = compliance {
                sim.body
                    .constraints
                    .distance
                    .compliance
                    .iter_mut()
                    .for_each(|c| *c = a);
            }
            Ok(Ok(sim.run(steps)))
        }
    }
}

/// (max - min) / mean of finite values.
pub fn spread(v: &[f64]) -> f64 {
    let f: Vec<f64> = v.iter().copied().filter(|x| x.is_finite()).collect();
    if f.len() < 2 {
        return f64::NAN;
    }
    let (lo, hi) = f
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &x| {
            (l.min(x), h.max(x))
        });
    (hi - lo) / mean(&f)
}

/// A flat line across `xs` at `y`, for thresholds.
fn level(name: &str, xs: (f64, f64), y: f64, color: usize) -> Series {
    Series {
        name: name.into(),
        points: vec![(xs.0, y), (xs.1, y)],
        dashed: true,
        color: Some(color),
    }
}

/// C5: cloth needs a dozen or more iterations before it stops looking like rubber bands.
pub fn c5(ctx: &Ctx) -> Result<Claim, Error> {
    let text =
        "\"cloth needs a dozen or more iterations before it stops looking like rubber bands\"";
    let n = ctx.scale.stretch_n;
    let its: Vec<usize> = if ctx.quick {
        vec![1, 2, 4, 8, 12, 16, 24, 32, 64]
    } else {
        vec![1, 2, 4, 8, 12, 16, 24, 32, 48, 64, 96, 128]
    };
    let steps = if ctx.quick { 60 } else { 120 };
    const LIMIT: f64 = 0.01;
    let path = ctx.path("c5.csv");
    let mut w = RowWriter::create(
        &path,
        &[
            "scene",
            "n",
            "solver",
            "iterations",
            "steps",
            "stretch_mean_avg",
            "stretch_max_final",
            "status",
        ],
    )?;
    let mut pts = Vec::new();
    for &it in &its {
        let t = match run(&Spec::new("cloth", n, "gs").iterations(it), None, steps)? {
            Ok(t) => t,
            Err(note) => return Ok(Claim::untestable("C5", GODOT, text, note)),
        };
        let s = t.stretch_mean_avg();
        w.record(&[
            "cloth".into(),
            n.to_string(),
            "gs".into(),
            it.to_string(),
            t.steps().to_string(),
            s.to_string(),
            t.stretch_max
                .last()
                .copied()
                .unwrap_or(f64::NAN)
                .to_string(),
            t.diverged.clone().unwrap_or_else(|| "ok".into()),
        ])?;
        if t.finished() {
            pts.push((it as f64, s));
        }
    }
    let first = pts.iter().find(|p| p.1 <= LIMIT).map(|p| p.0 as usize);
    let verdict = match first {
        None => Verdict::Confirmed,
        Some(k) if k >= 12 => Verdict::Confirmed,
        Some(k) if k >= 8 => Verdict::Partly,
        Some(_) => Verdict::Refuted,
    };
    let max_it = *its.last().unwrap_or(&1) as f64;
    let plot = Plot {
        title: format!("C5: mean stretch over {steps} steps against iterations (gs, cloth n={n})"),
        x_label: "iterations per step".into(),
        y_label: "stretch_mean_avg".into(),
        x_log: true,
        y_log: true,
        legend: Legend::UpperRight,
        series: vec![
            Series {
                name: "gs".into(),
                points: pts.clone(),
                ..Default::default()
            },
            level("1% threshold", (1.0, max_it), LIMIT, 3),
        ],
        ..Default::default()
    };
    let mut files = vec![path];
    files.extend(plot.save(&ctx.path("c5"))?);
    let at = |k: usize| {
        pts.iter()
            .find(|p| p.0 as usize == k)
            .map_or(f64::NAN, |p| p.1)
    };
    Ok(Claim {
        id: "C5",
        source: GODOT,
        text,
        measured: format!(
            "gs, cloth n={n} ({} vertices), {steps} steps from rest: mean stretch {:.2}% at 8 iterations, {:.2}% at 12, {:.2}% at 32; first tested count at or below 1%: {}",
            n * n,
            100.0 * at(8),
            100.0 * at(12),
            100.0 * at(32),
            first.map_or(format!("none up to {}", max_it as usize), |k| k.to_string())
        ),
        rule: "\"stops looking like rubber bands\" = mean structural stretch averaged over the run <= 1% (1 cm on the 1 m cloth); k = the fewest tested iterations that get there: confirmed if k >= 12 or none tested does, partly if 8 <= k < 12, refuted if k < 8".into(),
        verdict,
        files,
    })
}

/// C6: PBD is unconditionally stable; projection never pumps energy in.
pub fn c6(ctx: &Ctx) -> Result<Claim, Error> {
    let src = "Godot SoftBody3D article and a Unity tutorial";
    let text = "\"PBD is unconditionally stable: position projection never pumps energy in\" (energy over 10,000 steps, dt up to 1/30)";
    let n = 16;
    let steps = ctx.scale.energy_steps;
    let dts = [1.0 / 120.0, 1.0 / 60.0, 1.0 / 30.0];
    const TOL: f64 = 1e-3;
    let path = ctx.path("c6.csv");
    let mut w = RowWriter::create(
        &path,
        &[
            "solver",
            "dt",
            "steps",
            "energy_start",
            "energy_max",
            "energy_final",
            "rise_over_start",
            "status",
        ],
    )?;
    let mut series = Vec::new();
    let mut bad = Vec::new();
    let mut missing = Vec::new();
    let mut gs_state: Option<bool> = None;
    let mut worst = (String::new(), f64::NEG_INFINITY);
    let mut tested = Vec::new();
    for solver in &ctx.solvers {
        for (di, &dt) in dts.iter().enumerate() {
            let mut spec = Spec::new("cloth", n, solver);
            spec.params.dt = dt;
            spec.tuning = ctx.tuning.clone();
            let t = match run(&spec, None, steps)? {
                Ok(t) => t,
                Err(note) => {
                    missing.push(format!("{solver}: {note}"));
                    break;
                }
            };
            let e0 = t.energy[0];
            let emax = t.energy.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let rise = (emax - e0) / e0.abs().max(1e-12);
            let ok = t.finished() && rise <= TOL;
            if rise > worst.1 {
                worst = (format!("{solver} dt=1/{:.0}", 1.0 / dt), rise);
            }
            if !ok {
                bad.push(format!(
                    "{solver} dt=1/{:.0} ({})",
                    1.0 / dt,
                    t.diverged.clone().unwrap_or_else(|| format!(
                        "energy rose {:.2}% above the start",
                        100.0 * rise
                    ))
                ));
            }
            if solver == "gs" {
                gs_state = Some(gs_state.unwrap_or(true) && ok);
                let stride = (t.energy.len() / 400).max(1);
                series.push(Series {
                    name: format!("gs dt=1/{:.0}", 1.0 / dt),
                    points: t
                        .energy
                        .iter()
                        .enumerate()
                        .step_by(stride)
                        .map(|(k, e)| (k as f64 * dt as f64, e / e0))
                        .collect(),
                    color: Some(di),
                    ..Default::default()
                });
            }
            w.record(&[
                solver.clone(),
                dt.to_string(),
                t.steps().to_string(),
                e0.to_string(),
                emax.to_string(),
                t.energy.last().copied().unwrap_or(f64::NAN).to_string(),
                rise.to_string(),
                t.diverged.clone().unwrap_or_else(|| "ok".into()),
            ])?;
            if di == 0 {
                tested.push(solver.clone());
            }
        }
    }
    let Some(gs_ok) = gs_state else {
        return Ok(Claim::untestable(
            "C6",
            src,
            text,
            format!("the reference gs could not run: {}", missing.join("; ")),
        ));
    };
    let verdict = if !gs_ok {
        Verdict::Refuted
    } else if bad.is_empty() {
        Verdict::Confirmed
    } else {
        Verdict::Partly
    };
    let plot = Plot {
        title: format!("C6: energy / starting energy, gs, cloth n={n}, {steps} steps"),
        x_label: "simulated time (s)".into(),
        y_label: "E / E(0)".into(),
        legend: Legend::LowerLeft,
        series,
        ..Default::default()
    };
    let mut files = vec![path];
    files.extend(plot.save(&ctx.path("c6"))?);
    Ok(Claim {
        id: "C6",
        source: src,
        text,
        measured: format!(
            "cloth n={n}, 8 iterations, no damping, {steps} steps at dt = 1/120, 1/60, 1/30, solvers {}: largest rise of the energy above its starting value E(0): {:.2e} E(0) ({}; 0 means E(0) was the maximum); runs that gained energy or diverged: {}{}",
            tested.join(", "),
            worst.1,
            worst.0,
            if bad.is_empty() { "none".to_string() } else { bad.join(", ") },
            if missing.is_empty() { String::new() } else { format!(" (not in this build: {})", missing.join("; ")) }
        ),
        rule: format!(
            "energy E = kinetic + gravitational of the free particles; a run pumps energy in if max E over the run exceeds E(0) by more than {TOL:e} of |E(0)|, or it diverges. Refuted if the reference gs does at any dt; confirmed if no solver does; partly if only other solvers do"
        ),
        verdict,
        files,
    })
}

/// C8: n substeps of one iteration beat one step of n iterations at equal cost.
pub fn c8(ctx: &Ctx) -> Result<Claim, Error> {
    let src = "Small Steps in Physics Simulation (Macklin et al. 2019)";
    let text = "n substeps of 1 iteration beat 1 step of n iterations at equal cost";
    let n = ctx.scale.conv_n;
    let totals: Vec<usize> = if ctx.quick {
        vec![8, 16]
    } else {
        vec![8, 16, 30]
    };
    let steps = if ctx.quick { 60 } else { 120 };
    let path = ctx.path("c8.csv");
    let mut w = RowWriter::create(&path, crate::substeps::SPLIT_HEADER)?;
    let mut pairs: Vec<(usize, SplitRow, SplitRow)> = Vec::new();
    for &t in &totals {
        let mut base = Spec::new("cloth", n, "gs");
        base.tuning = ctx.tuning.clone();
        let sub = run_split(&base, (t, 1), steps)?;
        let its = run_split(&base, (1, t), steps)?;
        w.row(&sub)?;
        w.row(&its)?;
        if sub.status.starts_with("unsupported") {
            return Ok(Claim::untestable("C8", src, text, sub.status));
        }
        pairs.push((t, sub, its));
    }
    let mut stretch_wins = 0;
    let mut both = 0;
    let mut figs = Vec::new();
    for (t, sub, its) in &pairs {
        let win = sub.stretch_mean_avg < its.stretch_mean_avg;
        let cost = sub.ms_per_step_median <= 1.5 * its.ms_per_step_median;
        stretch_wins += win as usize;
        both += (win && cost) as usize;
        figs.push(format!(
            "total {t}: {t}x1 stretch {:.4} in {:.3} ms, 1x{t} stretch {:.4} in {:.3} ms",
            sub.stretch_mean_avg,
            sub.ms_per_step_median,
            its.stretch_mean_avg,
            its.ms_per_step_median
        ));
    }
    let verdict = if both == pairs.len() {
        Verdict::Confirmed
    } else if stretch_wins == 0 {
        Verdict::Refuted
    } else {
        Verdict::Partly
    };
    let pts = |f: fn(&(usize, SplitRow, SplitRow)) -> f64| -> Vec<(f64, f64)> {
        pairs.iter().map(|p| (p.0 as f64, f(p))).collect()
    };
    let plot = Plot {
        title: format!("C8: stretch at equal projections, gs, cloth n={n}"),
        x_label: "projections per step (substeps x iterations)".into(),
        y_label: "stretch_mean_avg".into(),
        x_log: true,
        y_log: true,
        legend: Legend::UpperRight,
        series: vec![
            Series {
                name: "n substeps x 1 iteration".into(),
                points: pts(|p| p.1.stretch_mean_avg),
                ..Default::default()
            },
            Series {
                name: "1 step x n iterations".into(),
                points: pts(|p| p.2.stretch_mean_avg),
                ..Default::default()
            },
        ],
        ..Default::default()
    };
    let mut files = vec![path];
    files.extend(plot.save(&ctx.path("c8"))?);
    Ok(Claim {
        id: "C8",
        source: src,
        text,
        measured: format!("gs, cloth n={n}, {steps} steps from rest: {}", figs.join("; ")),
        rule: "per total n: substeps win if their mean stretch is lower and their step time is at most 1.5x that of one step of n iterations (equal projections; \"equal cost\"). Confirmed if they win at every total, refuted if their stretch is never lower, partly otherwise".into(),
        verdict,
        files,
    })
}

/// C10: the k' rule makes PBD stiffness independent of iterations; XPBD compliance makes it
/// independent of iterations and dt.
pub fn c10(ctx: &Ctx) -> Result<Claim, Error> {
    let src = "Müller et al. 2007 (PBD, k' rule); Macklin et al. 2016 (XPBD)";
    let text = "the k' rule makes PBD stiffness independent of the iteration count; XPBD compliance makes it independent of iterations and dt";
    let n = 16;
    const K: f32 = 0.1;
    const ALPHA: f32 = 1e-3;
    const SIM_S: f64 = 2.0;
    let its = [4usize, 8, 16, 32];
    let path = ctx.path("c10.csv");
    let mut w = RowWriter::create(
        &path,
        &[
            "mode",
            "stiffness_or_compliance",
            "iterations",
            "dt",
            "steps",
            "stretch_late_avg",
            "status",
        ],
    )?;
    // Stretch averaged over the second half of SIM_S simulated seconds.
    let mut measure = |mode: &str,
                       stiffness: Stiffness,
                       compliance: Option<f32>,
                       it: usize,
                       dt: f32|
     -> Result<Result<f64, String>, Error> {
        let steps = (SIM_S / dt as f64).round() as usize;
        let mut spec = Spec::new("cloth", n, "gs").iterations(it);
        spec.params = StepParams {
            dt,
            iterations: it,
            stiffness,
            ..Default::default()
        };
        let t = match run(&spec, compliance, steps)? {
            Ok(t) => t,
            Err(note) => return Ok(Err(note)),
        };
        let s = if t.finished() {
            t.stretch_mean_avg_from(steps / 2)
        } else {
            f64::NAN
        };
        w.record(&[
            mode.to_string(),
            match stiffness {
                Stiffness::Pbd { k, .. } => k.to_string(),
                Stiffness::Xpbd => compliance.unwrap_or(0.0).to_string(),
            },
            it.to_string(),
            dt.to_string(),
            t.steps().to_string(),
            s.to_string(),
            t.diverged.clone().unwrap_or_else(|| "ok".into()),
        ])?;
        Ok(Ok(s))
    };
    let mut plain = Vec::new();
    let mut corrected = Vec::new();
    for &it in &its {
        for (v, corr) in [(&mut plain, false), (&mut corrected, true)] {
            let s = measure(
                if corr { "pbd-k'" } else { "pbd-k" },
                Stiffness::Pbd {
                    k: K,
                    iteration_corrected: corr,
                },
                None,
                it,
                1.0 / 60.0,
            )?;
            match s {
                Ok(s) => v.push(s),
                Err(note) => return Ok(Claim::untestable("C10", src, text, note)),
            }
        }
    }
    let mut xpbd_it = Vec::new();
    for &it in &its[1..] {
        xpbd_it.push(
            measure("xpbd", Stiffness::Xpbd, Some(ALPHA), it, 1.0 / 60.0)?.unwrap_or(f64::NAN),
        );
    }
    let dts = [1.0f32 / 30.0, 1.0 / 60.0, 1.0 / 120.0];
    let mut xpbd_dt = Vec::new();
    for &dt in &dts {
        xpbd_dt.push(measure("xpbd", Stiffness::Xpbd, Some(ALPHA), 16, dt)?.unwrap_or(f64::NAN));
    }
    let (sp_plain, sp_corr, sp_it, sp_dt) = (
        spread(&plain),
        spread(&corrected),
        spread(&xpbd_it),
        spread(&xpbd_dt),
    );
    let pbd_ok = sp_corr <= 0.2 && sp_corr <= 0.5 * sp_plain;
    let it_ok = sp_it <= 0.2;
    let dt_ok = sp_dt <= 0.2;
    let held = [pbd_ok, it_ok, dt_ok].iter().filter(|&&b| b).count();
    let xs = |v: &[usize]| v.iter().map(|&i| i as f64).collect::<Vec<_>>();
    let plot = Plot {
        title: format!("C10: late mean stretch against iterations, gs, cloth n={n}, dt=1/60"),
        x_label: "iterations".into(),
        y_label: "mean stretch, second second".into(),
        x_log: true,
        y_log: true,
        legend: Legend::UpperRight,
        series: vec![
            Series {
                name: format!("PBD k={K}"),
                points: xs(&its).into_iter().zip(plain.iter().copied()).collect(),
                ..Default::default()
            },
            Series {
                name: format!("PBD k' (k={K})"),
                points: xs(&its)
                    .into_iter()
                    .zip(corrected.iter().copied())
                    .collect(),
                ..Default::default()
            },
            Series {
                name: format!("XPBD alpha={ALPHA:e}"),
                points: xs(&its[1..])
                    .into_iter()
                    .zip(xpbd_it.iter().copied())
                    .collect(),
                ..Default::default()
            },
        ],
        ..Default::default()
    };
    let mut files = vec![path];
    files.extend(plot.save(&ctx.path("c10"))?);
    let fmt = |v: &[f64]| {
        v.iter()
            .map(|s| format!("{:.4}", s))
            .collect::<Vec<_>>()
            .join(", ")
    };
    Ok(Claim {
        id: "C10",
        source: src,
        text,
        measured: format!(
            "gs, cloth n={n}, mean stretch over the second of 2 simulated seconds. PBD k={K} at iterations {its:?}: plain {} (spread {sp_plain:.2}), with k' {} (spread {sp_corr:.2}). XPBD compliance {ALPHA:e} at iterations {:?}, dt 1/60: {} (spread {sp_it:.2}); at dt 1/30, 1/60, 1/120, 16 iterations: {} (spread {sp_dt:.2})",
            fmt(&plain),
            fmt(&corrected),
            &its[1..],
            fmt(&xpbd_it),
            fmt(&xpbd_dt)
        ),
        rule: "spread = (max - min) / mean of the stretch across the settings; \"independent\" = spread <= 0.2. Three parts: PBD with k' independent of iterations (and at most half the spread of plain k); XPBD independent of iterations; XPBD independent of dt. Confirmed if all hold, refuted if none, partly otherwise".into(),
        verdict: Verdict::from_parts(held, 3),
        files,
    })
}

/// C12: 3-5 solver iterations are usually enough for a jelly.
pub fn c12(ctx: &Ctx) -> Result<Claim, Error> {
    let text = "\"3-5 solver iterations are usually enough for a jelly\"";
    let n = ctx.scale.jelly_n;
    let its = [1usize, 2, 3, 4, 5, 8, 16, 32];
    let steps = if ctx.quick { 90 } else { 180 };
    let path = ctx.path("c12.csv");
    let mut w = RowWriter::create(
        &path,
        &[
            "scene",
            "n",
            "solver",
            "iterations",
            "steps",
            "stretch_mean_avg",
            "volume_ratio_mean",
            "volume_ratio_min",
            "status",
        ],
    )?;
    let mut rows: Vec<(usize, f64, Option<f64>, bool)> = Vec::new();
    for &it in &its {
        let t = match run(&Spec::new("jelly", n, "gs").iterations(it), None, steps)? {
            Ok(t) => t,
            Err(note) => {
                return Ok(Claim::untestable("C12", UNITY, text, format!("the jelly scene runs through the normal path and this build refuses it: {note}")));
            }
        };
        let vmean = (!t.volume.is_empty()).then(|| mean(&t.volume));
        let vmin = t.volume.iter().copied().fold(f64::INFINITY, f64::min);
        w.record(&[
            "jelly".into(),
            n.to_string(),
            "gs".into(),
            it.to_string(),
            t.steps().to_string(),
            t.stretch_mean_avg().to_string(),
            vmean.map_or(String::new(), |v| v.to_string()),
            if t.volume.is_empty() {
                String::new()
            } else {
                vmin.to_string()
            },
            t.diverged.clone().unwrap_or_else(|| "ok".into()),
        ])?;
        rows.push((it, t.stretch_mean_avg(), vmean, t.finished()));
    }
    let enough = |r: &(usize, f64, Option<f64>, bool)| {
        r.3 && r.1 <= 0.02 && r.2.is_none_or(|v| (0.95..=1.05).contains(&v))
    };
    let first = rows.iter().find(|r| enough(r)).map(|r| r.0);
    let verdict = match first {
        Some(k) if k <= 5 => Verdict::Confirmed,
        Some(k) if k <= 8 => Verdict::Partly,
        _ => Verdict::Refuted,
    };
    let plot = Plot {
        title: format!("C12: jelly (subdivision {n}) stretch and volume against iterations"),
        x_label: "iterations".into(),
        y_label: "stretch_mean_avg, |1 - mean volume ratio|".into(),
        x_log: true,
        y_log: true,
        legend: Legend::UpperRight,
        series: vec![
            Series {
                name: "stretch_mean_avg".into(),
                points: rows.iter().map(|r| (r.0 as f64, r.1)).collect(),
                ..Default::default()
            },
            Series {
                name: "|1 - volume ratio|".into(),
                points: rows
                    .iter()
                    .filter_map(|r| r.2.map(|v| (r.0 as f64, (1.0 - v).abs())))
                    .collect(),
                ..Default::default()
            },
        ],
        ..Default::default()
    };
    let mut files: Vec<PathBuf> = vec![path];
    files.extend(plot.save(&ctx.path("c12"))?);
    Ok(Claim {
        id: "C12",
        source: UNITY,
        text,
        measured: format!(
            "gs, jelly subdivision {n}, {steps} steps (dropped on the ground): {}; fewest iterations that are enough: {}",
            rows.iter()
                .map(|r| format!("{} it: stretch {:.4}{}", r.0, r.1, r.2.map_or(String::new(), |v| format!(", volume {v:.3}"))))
                .collect::<Vec<_>>()
                .join("; "),
            first.map_or("none tested".into(), |k| k.to_string())
        ),
        rule: "a count is enough if the run does not diverge, the mean stretch over the run is <= 2% and the mean volume ratio is within 5% of 1; k = the fewest enough iterations: confirmed if k <= 5, partly if k <= 8, refuted otherwise".into(),
        verdict,
        files,
    })
}
