//! Convergence claims C1, C2, C9, C11: residual curves of one step from one common state
//! (see `converge`).
//!
//! C1 is anchored where the claim anchors it: the residual gs has after 20 iterations. The
//! other comparisons ("converges faster/better/about like") use a common level: the highest of
//! the compared solvers' lowest residuals within the iteration budget, a level every one of
//! them reaches; "how much faster" is the ratio of the iterations each needs to first reach it.
//! This stays meaningful when a curve first rises (colored orders can) or when a solver starts
//! late (Chebyshev runs plain Jacobi for its first iterations).

use super::{count_or_more, Claim, Ctx, Verdict};
use crate::converge::{iterations_to, write_curves};
use crate::plot::{Legend, Plot, Series};
use crate::scale::{Budget, Point, Sweep};
use crate::setup::Error;
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
fn curve_files(ctx: &Ctx, id: &str, curves: &[(String, Vec<f64>)]) -> Result<Vec<PathBuf>, Error> {
    let csv = ctx.path(&format!("{}.csv", id.to_lowercase()));
    write_curves(&csv, "cloth", ctx.scale.conv_n, curves)?;
    let plot = Plot {
        title: format!(
            "{id}: residual inside one step, cloth n={} ({} vertices)",
            ctx.scale.conv_n,
            ctx.scale.conv_n * ctx.scale.conv_n
        ),
        x_label: "iteration".into(),
        y_label: "residual (RMS C / mean rest length)".into(),
        y_log: true,
        legend: Legend::UpperRight,
        series: curves
            .iter()
            .map(|(n, c)| Series {
                name: n.clone(),
                points: c.iter().enumerate().map(|(k, &r)| (k as f64, r)).collect(),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    };
    let mut files = vec![csv];
    files.extend(plot.save(&ctx.path(&id.to_lowercase()))?);
    Ok(files)
}

fn setting(ctx: &Ctx) -> String {
    format!(
        "cloth n={} ({} vertices), one step from a common state (10 warm gs steps), up to {} iterations",
        ctx.scale.conv_n,
        ctx.scale.conv_n * ctx.scale.conv_n,
        ctx.scale.conv_iters
    )
}

const GODOT: &str = "Godot SoftBody3D article";

/// C1: a global CSR solve converges in 4-6 iterations where per-edge projection needs ~20.
pub fn c1(ctx: &Ctx) -> Result<Claim, Error> {
    let text = "\"a global CSR solve converges in 4-6 iterations where per-edge projection needs about 20, at 500 vertices\" (tested with newton-* against gs at 529 vertices)";
    let gs = match ctx.curve("gs")? {
        Ok(c) => c,
        Err(why) => return Ok(Claim::untestable("C1", GODOT, text, format!("gs: {why}"))),
    };
    let mut newton = Vec::new();
    let mut missing = Vec::new();
    for name in ["newton-gs", "newton-jacobi", "newton-direct"] {
        match ctx.curve(name)? {
            Ok(c) => newton.push((name.to_string(), c)),
            Err(why) => missing.push(format!("{name}: {why}")),
        }
    }
    if newton.is_empty() {
        return Ok(Claim::untestable(
            "C1",
            GODOT,
            text,
            format!(
                "no global CSR (newton-*) solver in this build ({})",
                missing.join("; ")
            ),
        ));
    }
    let max = ctx.scale.conv_iters;
    let counts: Vec<(String, Option<usize>)> = newton
        .iter()
        .map(|(n, c)| (n.clone(), match_at(&gs, K_REF, c)))
        .collect();
    let best = counts.iter().filter_map(|(_, k)| *k).min();
    let verdict = match best {
        Some(k) if k <= 6 => Verdict::Confirmed,
        Some(k) if k < K_REF => Verdict::Partly,
        _ => Verdict::Refuted,
    };
    let mut curves = vec![("gs".to_string(), gs.clone())];
    curves.extend(newton.iter().cloned());
    let files = curve_files(ctx, "C1", &curves)?;
    let measured = format!(
        "{}. gs: residual {:.3e} before, {:.3e} after {K_REF} iterations; gs needs {} iterations to cut it 100-fold. Iterations to reach gs's {K_REF}-iteration residual: {}{}.",
        setting(ctx),
        gs[0],
        gs[K_REF.min(gs.len() - 1)],
        count_or_more(iterations_to(&gs, 0.01), max),
        counts
            .iter()
            .map(|(n, k)| format!("{n} {}", count_or_more(*k, max)))
            .collect::<Vec<_>>()
            .join(", "),
        if missing.is_empty() { String::new() } else { format!(" (not in this build: {})", missing.join("; ")) }
    );
    Ok(Claim {
        id: "C1",
        source: GODOT,
        text,
        measured,
        rule: format!(
            "target = the residual gs reaches in {K_REF} iterations; k = fewest iterations any newton-* solver needs to reach it: confirmed if k <= 6, partly if 6 < k < {K_REF}, refuted if k >= {K_REF} or never within {max}"
        ),
        verdict,
        files,
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
    let (level, kj, kg, ratio) = speedup(&jac, &gs);
    let verdict = if ratio >= 2.0 {
        Verdict::Confirmed
    } else if ratio >= 1.25 {
        Verdict::Partly
    } else {
        Verdict::Refuted
    };
    let files = curve_files(
        ctx,
        "C2",
        &[("gs".into(), gs.clone()), ("jacobi".into(), jac.clone())],
    )?;
    Ok(Claim {
        id: "C2",
        source: GODOT,
        text,
        measured: format!(
            "{}. Residual after {K_REF} iterations: gs {:.3e}, jacobi {:.3e}. Common level {level:.3e}: gs reaches it in {kg} iterations, jacobi in {kj} (ratio {ratio:.1}).",
            setting(ctx),
            gs[K_REF.min(gs.len() - 1)],
            jac[K_REF.min(jac.len() - 1)],
        ),
        rule: "common level = the higher of the two solvers' lowest residuals within the budget; ratio = iterations jacobi needs to reach it over those gs needs: confirmed if >= 2, partly if >= 1.25, refuted below".into(),
        verdict,
        files,
    })
}

/// C9: Chebyshev acceleration makes Jacobi converge at least an order of magnitude faster.
pub fn c9(ctx: &Ctx) -> Result<Claim, Error> {
    let src = "Wang 2015, \"A Chebyshev semi-iterative approach for accelerating projective and position-based dynamics\"";
    let text = "Chebyshev acceleration makes Jacobi converge at least an order of magnitude faster";
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
    let (level, kj, kc, ratio) = speedup(&jac, &cheb);
    let verdict = if ratio >= 10.0 {
        Verdict::Confirmed
    } else if ratio >= 2.0 {
        Verdict::Partly
    } else {
        Verdict::Refuted
    };
    let files = curve_files(
        ctx,
        "C9",
        &[
            ("jacobi".into(), jac.clone()),
            ("chebyshev".into(), cheb.clone()),
        ],
    )?;
    Ok(Claim {
        id: "C9",
        source: src,
        text,
        measured: format!(
            "{}. Residual after {} iterations: jacobi {:.3e}, chebyshev {:.3e}. Common level {level:.3e}: chebyshev reaches it in {kc} iterations, jacobi in {kj} (ratio {ratio:.1}; jacobi's count is capped by the budget, so the ratio is a lower bound when jacobi needs all {}).",
            setting(ctx),
            jac.len() - 1,
            jac.last().copied().unwrap_or(f64::NAN),
            cheb.last().copied().unwrap_or(f64::NAN),
            jac.len() - 1
        ),
        rule: "common level = the higher of the two solvers' lowest residuals within the budget; ratio = iterations jacobi needs to reach it over those chebyshev needs: confirmed if >= 10, partly if >= 2, refuted below".into(),
        verdict,
        files,
    })
}

/// C11: graph-colored GS converges about like sequential GS, far better than Jacobi, and runs
/// in parallel.
pub fn c11(ctx: &Ctx) -> Result<Claim, Error> {
    let src = "Vivace (Fratarcangeli et al. 2016)";
    let text = "graph-colored Gauss-Seidel converges about like sequential Gauss-Seidel, far better than Jacobi, and runs in parallel";
    let colored = match ctx.curve("colored")? {
        Ok(c) => c,
        Err(w) => return Ok(Claim::untestable("C11", src, text, format!("colored: {w}"))),
    };
    let gs = match ctx.curve("gs")? {
        Ok(c) => c,
        Err(w) => return Ok(Claim::untestable("C11", src, text, format!("gs: {w}"))),
    };
    let mut parts = Vec::new();
    let mut figures = Vec::new();
    let mut curves = vec![
        ("gs".to_string(), gs.clone()),
        ("colored".to_string(), colored.clone()),
    ];
    // (a) about like GS: within a factor 1.5 either way at their common level.
    let (level, kg, kc, r) = speedup(&gs, &colored);
    parts.push((1.0 / 1.5..=1.5).contains(&r));
    figures.push(format!(
        "common level of gs and colored {level:.3e}: gs reaches it in {kg} iterations, colored in {kc}"
    ));
    // (b) far better than Jacobi.
    match ctx.curve("jacobi")? {
        Ok(jac) => {
            let (level, kj, kc, r) = speedup(&jac, &colored);
            parts.push(r >= 2.0);
            figures.push(format!(
                "common level of jacobi and colored {level:.3e}: jacobi reaches it in {kj}, colored in {kc} (ratio {r:.1})"
            ));
            curves.push(("jacobi".into(), jac));
        }
        Err(w) => figures.push(format!("jacobi not compared ({w})")),
    }
    let mut files = curve_files(ctx, "C11", &curves)?;
    // (c) parallel: two threads faster than one.
    let n = ctx.scale.parallel_n;
    if ctx.machine.logical_cpus < 2 {
        figures.push("parallel speed not measured: one logical CPU".into());
    } else {
        let budget = Budget {
            target_s: ctx.scale.target_s.max(0.2),
            ..Default::default()
        };
        let mut sweep = Sweep::create(&ctx.dir, "c11_parallel", &budget, &ctx.tuning)?;
        let mut ms = Vec::new();
        for t in [1, 2] {
            let p = Point {
                scene: "cloth".into(),
                n,
                solver: "colored".into(),
                threads: t,
                iterations: 8,
                substeps: 1,
                ordering: "natural".into(),
            };
            ms.push(sweep.point(&p)?.map(|r| r.ms_per_step_median));
        }
        files.extend(sweep.files());
        match (ms[0], ms[1]) {
            (Some(a), Some(b)) => {
                let speedup = a / b;
                parts.push(speedup >= 1.2);
                figures.push(format!(
                    "colored at n={n} ({} vertices), 8 iterations: {a:.3} ms per step on 1 thread, {b:.3} ms on 2 (speed-up {speedup:.2})",
                    n * n
                ));
            }
            _ => figures.push(format!(
                "parallel speed not measured: {}",
                sweep
                    .skipped
                    .iter()
                    .map(|(_, s)| s.clone())
                    .collect::<Vec<_>>()
                    .join("; ")
            )),
        }
    }
    let held = parts.iter().filter(|&&p| p).count();
    Ok(Claim {
        id: "C11",
        source: src,
        text,
        measured: format!("{}. {}.", setting(ctx), figures.join("; ")),
        rule: "three parts, each tested where it can be, at common levels (the higher of two solvers' lowest residuals within the budget): (a) gs and colored need iteration counts within a factor 1.5 of each other to reach theirs; (b) jacobi needs at least 2x the iterations colored needs to reach theirs; (c) two threads run a step at least 1.2x faster than one. Confirmed if all tested parts hold, refuted if none, partly otherwise".to_string(),
        verdict: Verdict::from_parts(held, parts.len()),
        files,
    })
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
