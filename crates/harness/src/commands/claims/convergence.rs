//! Convergence claims C1, C2, C9, C11: residual curves of one step from one common state
//! (see `converge`).
//!
//! C1 is anchored where the claim anchors it: the residual gs has after 20 iterations. The
//! other comparisons ("converges faster/better/about like") use a common level: the highest of
//! the compared solvers' lowest residuals within the iteration budget, a level every one of
//! them reaches; "how much faster" is the ratio of the iterations each needs to first reach it.
//! This stays meaningful when a curve first rises (colored orders can) or when a solver starts
//! late (Chebyshev runs plain Jacobi for its first iterations).

use super::claim::{count_or_more, Claim, Ctx};
use super::errors::{
    accepted, newton_reference, position_error, reference_outcome, run, SplitSpec, SOLVERS,
    SPLIT_COMPLIANCE,
};
use super::timing::{time_arms, Arm, Plan};
use crate::measure::paired::Interval;
use crate::measure::residuals::write_curves;
use crate::output::csv::RowWriter;
use crate::output::plot::{Marker, Plot, Series};
use crate::setup::{or_note, Error};
use solver_core::{step, Body, StepParams};
use sparse::{InnerSolve, SolverKind};
use std::path::PathBuf;

/// The iteration budget the comparisons are anchored at.
pub const K_REF: usize = 20;

/// First iteration k >= 1 whose residual is at or below `target`.
pub fn reach(curve: &[f64], target: f64) -> Option<usize> {
    curve
        .iter()
        .skip(1)
        .position(|&r| r <= target)
        .map(|p| p + 1)
}

/// Iterations `other` needs to reach the residual `reference` has after `k_ref` iterations.
pub fn match_at(reference: &[f64], k_ref: usize, other: &[f64]) -> Option<usize> {
    reference.get(k_ref).and_then(|&t| reach(other, t))
}

/// The common level of `curves`: the highest of their lowest residuals after iteration 0.
pub fn common_level(curves: &[&[f64]]) -> f64 {
    curves
        .iter()
        .map(|c| c.iter().skip(1).copied().fold(f64::INFINITY, f64::min))
        .fold(f64::NEG_INFINITY, f64::max)
}

/// Iterations `slow` and `fast` need to reach their common level, and slow / fast.
pub fn speedup(slow: &[f64], fast: &[f64]) -> (f64, usize, usize, f64) {
    let level = common_level(&[slow, fast]);
    let ks = reach(slow, level).unwrap_or(slow.len());
    let kf = reach(fast, level).unwrap_or(fast.len());
    (level, ks, kf, ks as f64 / kf.max(1) as f64)
}

/// Writes the curves (converge.csv layout) and their plot; returns the files.
fn curve_files(
    ctx: &Ctx,
    id: &str,
    curves: &[(String, Vec<f64>)],
    level: Option<f64>,
) -> Result<Vec<PathBuf>, Error> {
    let csv = ctx.path(&format!("{}.csv", id.to_lowercase()));
    write_curves(&csv, "cloth", ctx.scale.conv_n, curves)?;
    let plot = Plot::new(
        format!("{id}: residual inside one step, {}", ctx.conv_cloth()),
        "iterations in the step",
        "constraint residual (RMS C / mean rest length)",
        Series::curves(curves, usize::MAX)
            .into_iter()
            .chain(level.map(|l| {
                crate::output::plot::level(
                    "level: the reference's residual after 20 iterations",
                    (0.0, ctx.scale.conv_iters as f64),
                    l,
                    7,
                )
            }))
            .collect(),
    )
    .log_y();
    let files = ctx.files(csv, &[(&plot, &id.to_lowercase())])?;
    Ok(files)
}

fn setting(ctx: &Ctx) -> String {
    format!(
        "{}, one step from a common state (10 warm gs steps), up to {} iterations",
        ctx.conv_cloth(),
        ctx.scale.conv_iters
    )
}

const GODOT: &str = "Godot SoftBody3D article";

/// Positions of one step from `base` after `k` iterations of `solver` (errors.rs's timed run,
/// its time left out).
fn solved(base: &Body, solver: &str, ctx: &Ctx, k: usize) -> Result<Result<Body, String>, Error> {
    Ok(run(ctx, base, solver, k)?.map(|(b, _)| b))
}

/// Error to `reference` after k = 0..=max iterations of `solver` (k = 0: the prediction).
fn error_curve(
    base: &Body,
    solver: &str,
    ctx: &Ctx,
    max: usize,
    reference: &Body,
) -> Result<Result<Vec<f64>, String>, Error> {
    let mut out = Vec::with_capacity(max + 1);
    // k = 0 is the prediction: one iteration's step minus its solve is not available, so
    // take the unsolved step's positions from the NoSolve step.
    let mut pred = base.clone();
    step(
        &mut pred,
        &StepParams {
            iterations: 1,
            ..Default::default()
        },
        &mut crate::measure::residuals::NoSolve,
        None,
    )?;
    out.push(position_error(&pred, reference));
    for k in 1..=max {
        match solved(base, solver, ctx, k)? {
            Ok(b) => out.push(position_error(&b, reference)),
            Err(note) => return Ok(Err(note)),
        }
    }
    Ok(Ok(out))
}

/// Per-iteration contraction factors r(k+1)/r(k) of the first `n` iterations.
fn contractions(curve: &[f64], n: usize) -> Vec<f64> {
    curve
        .windows(2)
        .skip(1)
        .take(n)
        .map(|w| w[1] / w[0])
        .collect()
}

/// The edge compliance of C1's cloth (m/N): the claims' cloth with it is a well-posed step,
/// which the rigid cloth is not (its rows are redundant; see `sparse::newton`).
pub const C1_COMPLIANCE: f32 = 1e-6;

fn factors_text(f: &[f64]) -> String {
    f.iter()
        .map(|x| format!("{x:.1e}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// C1: a global CSR solve at 4-6 iterations matches per-edge projection at 20.
pub fn c1(ctx: &Ctx) -> Result<Claim, Error> {
    let text = "at ~500 vertices (cloth n=23, 529 vertices; 16 in --quick), the global CSR solve (gauss-newton-gs, gauss-newton-jacobi, gauss-newton-direct) after 4-6 iterations is as close to the converged solution of the step as per-edge Gauss-Seidel (gs) after 20; the wall time at equal quality is reported beside it (the article asserts nothing of time)";
    let rigid = match ctx.base()? {
        Ok(b) => b,
        Err(why) => return Ok(Claim::untestable("C1", GODOT, text, why)),
    };
    // The converged reference is the Newton solver's (f64, geometric stiffness). On the
    // claims' rigid cloth the step is degenerate, so C1 runs on the same state with a small
    // edge compliance; the rigid attempt is reported beside it.
    let (_, rigid_report) = newton_reference(&rigid)?;
    let mut base = rigid.clone();
    base.constraints_mut()
        .distance
        .compliance
        .iter_mut()
        .for_each(|a| *a = C1_COMPLIANCE);
    let (reference, ref_report) = newton_reference(&base)?;
    let tolerance = sparse::NewtonOptions::DEFAULT.tolerance;
    if !accepted(&ref_report) {
        return Ok(Claim::untestable(
            "C1",
            GODOT,
            text,
            format!(
                "the Newton reference did not converge: {}",
                reference_outcome(&ref_report)
            ),
        ));
    }
    // The two errors in the iterative solvers' distance to the exact step, apart, at the
    // compliance where they converge (see `errors`).
    let split = super::errors::split(
        ctx,
        &rigid,
        &SplitSpec {
            claim: "C1",
            stem: "c1_errors",
            scene: format!("{}, the common state", ctx.conv_cloth()),
            params: StepParams::default(),
            compliances: &[Some(SPLIT_COMPLIANCE)],
            solvers: &SOLVERS,
        },
    )?;
    let split_text = split.describe(&[20, 500]);
    const GS_K: usize = 20;
    const NEWTON_K: usize = 12;
    let gs_err = match error_curve(&base, "gs", ctx, 40, &reference)? {
        Ok(c) => c,
        Err(why) => return Ok(Claim::untestable("C1", GODOT, text, format!("gs: {why}"))),
    };
    let target = gs_err[GS_K];
    let mut newton = Vec::new();
    let mut missing = Vec::new();
    for name in [
        "gauss-newton-gs",
        "gauss-newton-jacobi",
        "gauss-newton-direct",
    ] {
        match error_curve(&base, name, ctx, NEWTON_K, &reference)? {
            Ok(c) => {
                let k = reach(&c, target);
                newton.push((name, c, k));
            }
            Err(why) => missing.push(format!("{name}: {why}")),
        }
    }
    if newton.is_empty() {
        return Ok(Claim::untestable(
            "C1",
            GODOT,
            text,
            format!(
                "no global CSR (gauss-newton-*) solver in this build ({})",
                missing.join("; ")
            ),
        ));
    }
    let best = newton
        .iter()
        .filter_map(|(n, _, k)| k.map(|k| (*n, k)))
        .min_by_key(|p| p.1);
    // Equal wall time: the best global solver at its matching count against gs at 20.
    let ratio: Option<Interval> = match best {
        Some((name, k)) => {
            let mk = |s: &str, it: usize| -> Result<Arm, Error> {
                Ok(Arm {
                    body: base.clone(),
                    solver: ctx.tuning.build_named(s, 1)?,
                    params: StepParams {
                        iterations: it,
                        ..Default::default()
                    },
                    from_start: true,
                })
            };
            let mut arms = vec![mk(name, k)?, mk("gs", GS_K)?];
            let m = time_arms(&mut arms, Plan::new(ctx.quick))?;
            Some(m.ratio(0, 1, 0.95))
        }
        None => None,
    };
    // Why gauss-newton-direct converges linearly: its residual contractions beside Newton's on
    // the same step (Newton keeps the geometric stiffness gauss-newton-direct leaves out).
    let nd = match or_note(ctx.tuning.build(
        SolverKind::GaussNewton(InnerSolve::Direct, Default::default()),
        1,
    ))? {
        Ok(mut s) => or_note(crate::measure::residuals::residual_curve(
            &base,
            s.as_mut(),
            12,
        ))?
        .ok(),
        Err(_) => None,
    };
    let nd_factors = nd.as_ref().map(|c| contractions(c, 8)).unwrap_or_default();
    let nd_geo =
        (nd_factors.iter().map(|x| x.ln()).sum::<f64>() / nd_factors.len().max(1) as f64).exp();
    let newton_factors = ref_report.contractions();
    let tail: Vec<f64> = newton_factors.iter().rev().take(3).rev().copied().collect();
    // No order is read off these: the last contraction is the step onto the f64 floor. The
    // engine measures the reference's local orders over the iterations before its floor from
    // c1_reference.csv.
    let why = format!(
        "gauss-newton-direct's residual contraction per iteration (iterations 1-8) is {} (geometric mean {nd_geo:.2}); the reference's last three are {} (c1_reference.csv has its whole history)",
        if nd_factors.is_empty() {
            "not measured".into()
        } else {
            factors_text(&nd_factors)
        },
        factors_text(&tail),
    );
    // Files: the error curves (zoomed to the claim's 20 iterations, and whole), and the
    // reference's residual history on both cloths.
    let csv = ctx.path("c1.csv");
    let mut w = RowWriter::create(
        &csv,
        &["solver", "iteration", "error_to_reference_rest_lengths"],
    )?;
    let mut all = vec![("gs".to_string(), gs_err.clone())];
    for (n, c, _) in &newton {
        all.push((n.to_string(), c.clone()));
    }
    for (n, c) in &all {
        for (k, e) in c.iter().enumerate() {
            w.record(&[n.clone(), k.to_string(), e.to_string()])?;
        }
    }
    let ref_csv = ctx.path("c1_reference.csv");
    let mut rw = RowWriter::create(
        &ref_csv,
        &["cloth", "iteration", "residual", "residual_over_start"],
    )?;
    for (label, rep) in [("compliant", &ref_report), ("rigid", &rigid_report)] {
        let r0 = rep.residuals[0];
        for (k, r) in rep.residuals.iter().enumerate() {
            rw.record(&[
                label.to_string(),
                k.to_string(),
                r.to_string(),
                (r / r0).to_string(),
            ])?;
        }
    }
    let mut files = vec![csv, ref_csv];
    files.extend(split.files);
    // The equal-quality timing, for the engine: time(best global at k) / time(gs at 20).
    if let (Some(r), Some((name, k))) = (&ratio, best) {
        let time_csv = ctx.path("c1_time.csv");
        let mut tw = RowWriter::create(
            &time_csv,
            &[
                "solver",
                "iterations",
                "ratio_median",
                "ratio_lo",
                "ratio_hi",
                "samples",
            ],
        )?;
        let mut row = vec![name.to_string(), k.to_string()];
        row.extend(r.cells());
        row.push(r.samples.to_string());
        tw.record(&row)?;
        files.push(time_csv);
    }
    for (stem, max) in [("c1", 24usize), ("c1_long", 40)] {
        let mut series = Series::curves(&all, max);
        series.push(crate::output::plot::level(
            &format!("gs after {GS_K} iterations (target)"),
            (0.0, max as f64),
            target,
            7,
        ));
        let plot = Plot {
            title: format!(
                "C1: distance to the converged step (newton), {}, compliance {C1_COMPLIANCE:e}",
                ctx.conv_cloth()
            ),
            x_label: "iterations in the step".into(),
            y_label: "RMS distance to the converged positions (mean rest lengths)".into(),
            y_log: true,
            series,
            markers: best
                .iter()
                .map(|(n, k)| Marker {
                    x: *k as f64,
                    label: format!("{n} reaches the target at {k}"),
                })
                .chain(std::iter::once(Marker {
                    x: GS_K as f64,
                    label: format!("gs at {GS_K}"),
                }))
                .collect(),
            ..Default::default()
        };
        files.extend(plot.save(&ctx.path(stem))?);
    }
    let counts = newton
        .iter()
        .map(|(n, _, k)| format!("{n} {}", count_or_more(*k, NEWTON_K)))
        .collect::<Vec<_>>()
        .join(", ");
    let time_text = match (&ratio, best) {
        (Some(r), Some((n, k))) => format!(
            "At equal quality, {n} at {k} iterations takes {} times the wall time of gs at {GS_K} (paired, interleaved, 95% interval)",
            r.display(2)
        ),
        _ => "No global solver matched gs's 20-iteration error within 12 iterations, so no equal-quality time was measured".into(),
    };
    Ok(Claim {
        id: "C1",
        source: GODOT,
        text,
        measured: format!(
            "{}, edge compliance {C1_COMPLIANCE:e} m/N. Reference: sparse::newton (f64, with the geometric stiffness), {} (the stated tolerance: {tolerance:e} of the start, or the floor of f64); on the rigid cloth of the other claims it {}, which is why C1 uses the compliant one (c1_reference.csv). gs's distance to it after {GS_K} iterations: {target:.3e} rest lengths (prediction: {:.3e}). Fewest iterations to get as close: {counts}. {time_text}. {why}. Iteration error (to the solver's own converged point) and formulation error (that point to the exact step), in rest lengths, on the same state where the solvers come closer to settling (how far each converged point still moved is given) (c1_errors.csv), {split_text}{}.",
            setting(ctx),
            reference_outcome(&ref_report),
            reference_outcome(&rigid_report),
            gs_err[0],
            if missing.is_empty() {
                String::new()
            } else {
                format!(" (not in this build: {})", missing.join("; "))
            }
        ),
        files,
        ..Claim::measured()
    })
}

/// C2: Gauss-Seidel converges much better than Jacobi.
pub fn c2(ctx: &Ctx) -> Result<Claim, Error> {
    let text = "\"Gauss-Seidel style sequential updates converge much better than Jacobi that lets every constraint change separately and then averages\"";
    let (gs, jac) = match (ctx.curve("gs")?, ctx.curve("jacobi")?) {
        (Ok(g), Ok(j)) => (g, j),
        (Err(w), _) => return Ok(Claim::untestable("C2", GODOT, text, format!("gs: {w}"))),
        (_, Err(w)) => return Ok(Claim::untestable("C2", GODOT, text, format!("jacobi: {w}"))),
    };
    // The engine's measure: jacobi's iterations to the level gs reaches after the budget.
    let budget = super::engine::LEVEL_BUDGET;
    let m = super::engine::to_level(&gs, &jac, budget);
    let level = m.map_or(f64::NAN, |m| m.level);
    let mut files = curve_files(
        ctx,
        "C2",
        &[("gs".into(), gs.clone()), ("jacobi".into(), jac.clone())],
        Some(level),
    )?;
    files.extend(zoom_files(
        ctx,
        "C2",
        &[("gs".into(), gs.clone()), ("jacobi".into(), jac.clone())],
        40,
    )?);
    Ok(Claim {
        id: "C2",
        source: GODOT,
        text,
        measured: format!(
            "{}. Residual after {K_REF} iterations: gs {:.3e}, jacobi {:.3e}. Level (gs's residual after {budget}) {level:.3e}: jacobi reaches it in {} iterations.",
            setting(ctx),
            gs[K_REF.min(gs.len() - 1)],
            jac[K_REF.min(jac.len() - 1)],
            count_or_more(m.and_then(|m| m.other), jac.len() - 1),
        ),
        files,
        ..Claim::measured()
    })
}

/// Times `arms` solvers (name, iterations) in one step from the common state, interleaved.
fn time_iterations(
    ctx: &Ctx,
    base: &Body,
    arms: &[(&str, usize)],
) -> Result<crate::measure::paired::Interleaved, Error> {
    let mut a = Vec::new();
    for &(s, it) in arms {
        a.push(Arm {
            body: base.clone(),
            solver: ctx.tuning.build_named(s, 1)?,
            params: StepParams {
                iterations: it.max(1),
                ..Default::default()
            },
            from_start: true,
        });
    }
    time_arms(&mut a, Plan::new(ctx.quick))
}

/// The asymptotic rate of a curve (see [`super::classic::asymptotic_rate`]).
fn rate(c: &[f64]) -> f64 {
    super::classic::asymptotic_rate(c)
}

/// C9, scoped as Wang 2015 states it for PBD: Chebyshev accelerates Jacobi.
pub fn c9(ctx: &Ctx) -> Result<Claim, Error> {
    let src = "Wang 2015";
    let text = "Chebyshev acceleration speeds up Jacobi on position-based dynamics (Wang 2015's order of magnitude is for projective dynamics; for PBD the paper says only that it accelerates, less so on tetrahedral meshes): iterations and wall time to the level Jacobi reaches after 20 iterations, on the cloth; the asymptotic rate is reported";
    let (jac, cheb) = match (ctx.curve("jacobi")?, ctx.curve("chebyshev")?) {
        (Ok(j), Ok(c)) => (j, c),
        (Err(w), _) => return Ok(Claim::untestable("C9", src, text, format!("jacobi: {w}"))),
        (_, Err(w)) => {
            return Ok(Claim::untestable(
                "C9",
                src,
                text,
                format!("chebyshev: {w}"),
            ))
        }
    };
    let (_, kj, _, _) = speedup(&jac, &cheb);
    let level = super::engine::level_of(&jac, super::engine::LEVEL_BUDGET).unwrap_or(f64::NAN);
    let (rj, rc) = (rate(&jac), rate(&cheb));
    let rate_gain = rc.ln() / rj.ln();
    let base = match ctx.base()? {
        Ok(b) => b,
        Err(w) => return Ok(Claim::untestable("C9", src, text, w)),
    };
    // Timed where the engine's convergence measure compares them: jacobi at the level
    // budget, chebyshev at its iterations to jacobi's residual there (the level rule).
    let budget = super::engine::LEVEL_BUDGET;
    let at_level = super::engine::to_level(&jac, &cheb, budget).and_then(|m| m.other);
    let time_gain = match at_level {
        Some(k) => {
            let m = time_iterations(ctx, &base, &[("jacobi", budget), ("chebyshev", k)])?;
            m.ratio(0, 1, 0.95)
        }
        None => Interval {
            lo: f64::NAN,
            median: f64::NAN,
            hi: f64::NAN,
            samples: 0,
        },
    };
    let time_csv = ctx.path("c9_time.csv");
    let mut tw = RowWriter::create(
        &time_csv,
        &[
            "jacobi_iterations",
            "chebyshev_iterations",
            "ratio_median",
            "ratio_lo",
            "ratio_hi",
            "samples",
        ],
    )?;
    if let Some(k) = at_level {
        let mut row = vec![budget.to_string(), k.to_string()];
        row.extend(time_gain.cells());
        row.push(time_gain.samples.to_string());
        tw.record(&row)?;
    }
    let mut files = curve_files(
        ctx,
        "C9",
        &[
            ("jacobi".into(), jac.clone()),
            ("chebyshev".into(), cheb.clone()),
        ],
        Some(level),
    )?;
    files.push(time_csv);
    files.extend(zoom_files(
        ctx,
        "C9",
        &[
            ("jacobi".into(), jac.clone()),
            ("chebyshev".into(), cheb.clone()),
        ],
        40,
    )?);
    Ok(Claim {
        id: "C9",
        source: src,
        text,
        measured: format!(
            "{}. Asymptotic contraction per iteration: jacobi {rj:.4}, chebyshev {rc:.4} (chebyshev reduces the log-residual {rate_gain:.2}x as fast). Level (jacobi's residual after {budget}) {level:.3e}{}; wall time of jacobi at {budget} iterations over chebyshev's at its iterations to jacobi's residual there ({}): {} (paired, interleaved, 95% interval).",
            setting(ctx),
            if kj >= jac.len() - 1 { ", jacobi capped by the budget" } else { "" },
            count_or_more(at_level, cheb.len() - 1),
            time_gain.display(2)
        ),
        files,
        ..Claim::measured()
    })
}

/// C11: graph-colored GS converges about like sequential GS, far better than Jacobi, and runs
/// in parallel.
pub fn c11(ctx: &Ctx) -> Result<Claim, Error> {
    let src = "Vivace (Fratarcangeli et al. 2016)";
    let text = "graph-colored Gauss-Seidel converges about like sequential Gauss-Seidel and far better than Jacobi (iterations to the level the better solver reaches after 20), and runs faster on two threads than on one at the sizes parallelism is for; the asymptotic rates are reported";
    let colored = match ctx.curve("colored")? {
        Ok(c) => c,
        Err(w) => return Ok(Claim::untestable("C11", src, text, format!("colored: {w}"))),
    };
    let gs = match ctx.curve("gs")? {
        Ok(c) => c,
        Err(w) => return Ok(Claim::untestable("C11", src, text, format!("gs: {w}"))),
    };
    let mut figures = Vec::new();
    let mut curves = vec![
        ("gs".to_string(), gs.clone()),
        ("colored".to_string(), colored.clone()),
    ];
    let (rg, rc) = (rate(&gs), rate(&colored));
    let rate_ratio = rc.ln() / rg.ln();
    figures.push(format!(
        "asymptotic contraction per iteration gs {rg:.4}, colored {rc:.4} (colored's log-rate {rate_ratio:.2}x gs's)"
    ));
    match ctx.curve("jacobi")? {
        Ok(jac) => {
            if let Some(m) = super::engine::to_level(&colored, &jac, K_REF) {
                figures.push(format!(
                    "colored's residual after {K_REF} {:.3e} (colored rises first): jacobi reaches it in {}",
                    m.level,
                    count_or_more(m.other, jac.len() - 1)
                ));
            }
            curves.push(("jacobi".into(), jac));
        }
        Err(w) => figures.push(format!("jacobi not compared ({w})")),
    }
    let budget = super::engine::LEVEL_BUDGET;
    if let Some(m) = super::engine::to_level(&gs, &colored, budget) {
        figures.push(format!(
            "gs's residual after {budget} {:.3e}: colored reaches it in {}",
            m.level,
            count_or_more(m.other, colored.len() - 1)
        ));
    }
    let mut files = curve_files(ctx, "C11", &curves, super::engine::level_of(&gs, budget))?;
    files.extend(zoom_files(ctx, "C11", &curves, 40)?);
    let sizes: Vec<usize> = if ctx.quick {
        vec![64, 128]
    } else {
        vec![256, 512]
    };
    let mut speedups = Vec::new();
    if ctx.machine.logical_cpus < 2 {
        figures.push("parallel speed not measured: one logical CPU".into());
    } else if !sparse::PARALLEL {
        figures.push("parallel speed not measured: built without the `parallel` feature".into());
    } else {
        let csv = ctx.path("c11_parallel.csv");
        let mut w = RowWriter::create(
            &csv,
            &[
                "n",
                "vertices",
                "ms_1_thread_median",
                "ms_2_threads_median",
                "speedup_median",
                "speedup_lo",
                "speedup_hi",
                "rounds",
            ],
        )?;
        for &n in &sizes {
            let (body, _) = crate::setup::build_body("cloth", n, None, "natural")?;
            let mut arms = Vec::new();
            for t in [1, 2] {
                arms.push(Arm {
                    body: body.clone(),
                    solver: ctx
                        .tuning
                        .build(SolverKind::Colored(Default::default()), t)?,
                    params: StepParams::default(),
                    from_start: false,
                });
            }
            let plan = Plan {
                rounds: if ctx.quick { 11 } else { 21 },
                turn: 3,
                warmup: 2,
            };
            let m = time_arms(&mut arms, plan)?;
            let s = m.ratio(0, 1, 0.95);
            let (a, b) = (m.median(0, 0.95), m.median(1, 0.95));
            let mut row = vec![
                n.to_string(),
                (n * n).to_string(),
                a.median.to_string(),
                b.median.to_string(),
            ];
            row.extend(s.cells());
            row.push(plan.rounds.to_string());
            w.record(&row)?;
            figures.push(format!(
                "n={n} ({} vertices), 8 iterations: {:.2} ms per step on 1 thread, {:.2} on 2, paired speed-up {}",
                n * n,
                a.median,
                b.median,
                s.display(2)
            ));
            speedups.push((n, s));
        }
        files.push(csv);
    }
    Ok(Claim {
        id: "C11",
        source: src,
        text,
        measured: format!("{}. {}.", setting(ctx), figures.join("; ")),
        files,
        ..Claim::measured()
    })
}

/// The curves zoomed to the first `max` iterations (the counts the claims talk about).
fn zoom_files(
    ctx: &Ctx,
    id: &str,
    curves: &[(String, Vec<f64>)],
    max: usize,
) -> Result<Vec<PathBuf>, Error> {
    let plot = Plot::new(
        format!(
            "{id}: the first {max} iterations, cloth n={}",
            ctx.scale.conv_n
        ),
        "iterations in the step",
        "constraint residual (RMS C / mean rest length)",
        Series::curves(curves, max),
    )
    .log_y();
    plot.save(&ctx.path(&format!("{}_zoom", id.to_lowercase())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reach_and_match_count_iterations() {
        let a = [1.0, 0.5, 0.25, 0.125];
        let b = [1.0, 0.9, 0.8, 0.6, 0.4, 0.2];
        assert_eq!(reach(&a, 0.3), Some(2));
        assert_eq!(reach(&a, 0.01), None);
        assert_eq!(match_at(&a, 2, &b), Some(5));
        assert_eq!(match_at(&a, 3, &b), None);
        assert_eq!(match_at(&a, 9, &b), None);
        // A curve that rises first: the common level is what both reach.
        let rising = [1.0, 1.2, 1.1, 0.9, 0.7];
        assert_eq!(common_level(&[&a, &rising]), 0.7);
        let (level, ks, kf, r) = speedup(&rising, &a);
        assert_eq!((level, ks, kf), (0.7, 4, 1));
        assert_eq!(r, 4.0);
    }
}
