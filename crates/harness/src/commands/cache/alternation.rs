//! Where the fine grid's alternation between neighbouring sizes comes from, measured: one
//! size repeated in separate processes (as the old study ran one process per point), one
//! process's step times over time, the same size with its particle arrays placed at other
//! offsets modulo 4 KiB (alignment, 4K aliasing), and two neighbouring sizes in turns.

use super::timing::CONFIDENCE;
use crate::measure::child;
use crate::measure::paired::{interleave, Interval, Side};
use crate::measure::step::StepReport;
use crate::setup::{build_body, Error, Tuning};
use solver_core::{step, Body, Packed4, Solver, StepParams};
use std::process::Command;
use std::time::{Duration, Instant};

/// A placement or a neighbour counts as a cause only when it differs beyond its interval and
/// by more than this fraction (the alternation is about 25%; several comparisons at 95% each
/// let one of them exclude 1 by chance, by a hair).
const MATTERS: f64 = 0.05;

/// What the experiments found, as Markdown lines and one summary sentence.
#[derive(Debug, Clone, Default)]
pub struct Finding {
    /// Markdown of the measurements.
    pub markdown: String,
    /// One sentence for the section's opening.
    pub sentence: String,
}

/// One turn of the interleaved comparisons: a step to bring `body` back into the caches, then
/// the times of ten steps, in ms.
fn turn_ms(
    body: &mut Body,
    params: &StepParams,
    solver: &mut dyn Solver,
) -> Result<Vec<f64>, Error> {
    step(body, params, solver, None)?;
    let mut t = Vec::with_capacity(10);
    for _ in 0..10 {
        let t0 = Instant::now();
        step(body, params, solver, None)?;
        t.push(t0.elapsed().as_secs_f64() * 1e3);
    }
    Ok(t)
}

/// ns per projection of `wobble step` at size `n` in `k` separate processes.
fn process_repeats(
    n: usize,
    solver: &str,
    iterations: usize,
    k: usize,
    steps: usize,
) -> Result<Vec<f64>, Error> {
    let exe = child::wobble_exe().map_err(|e| Error::Io(format!("no wobble executable: {e}")))?;
    let mut out = Vec::with_capacity(k);
    for _ in 0..k {
        let mut c = Command::new(&exe);
        c.args(["step", "--scene", "cloth", "--solver", solver, "--json"])
            .args(["--n", &n.to_string()])
            .args(["--iterations", &iterations.to_string()])
            .args(["--warmup", "20", "--steps", &steps.to_string()]);
        let o = child::run(c, Duration::from_secs(60))
            .map_err(|e| Error::Io(format!("cannot run wobble step: {e}")))?;
        if !o.ok() {
            return Err(Error::Io(format!("wobble step failed: {}", o.failure())));
        }
        let r: StepReport = serde_json::from_str(o.stdout.trim())
            .map_err(|e| Error::Io(format!("wobble step printed no JSON report: {e}")))?;
        out.push(r.ns_per_projection);
    }
    Ok(out)
}

/// A copy of `body` whose particle arrays are allocated anew after a spacer of `pad` bytes
/// each, which moves their offsets modulo 4 KiB against each other; the spacers are returned
/// and must outlive the body's use (else the allocator may hand their room back).
fn rehomed(body: &Body, pad: usize) -> (Body, Vec<Vec<u8>>) {
    let mut b = body.clone();
    let mut keep = Vec::new();
    b.particles_mut()
        .reallocate(|| keep.push(vec![1u8; pad.max(1)]));
    (b, keep)
}

/// Offsets modulo 4096 of `x`, `x_prev` and `v`, and of `x_prev` and `v` relative to `x`.
fn offsets(b: &Body) -> String {
    let a = |v: &[Packed4]| v.as_ptr() as usize % 4096;
    let (x, p, v) = (
        a(b.particles().x()),
        a(b.particles().x_prev()),
        a(b.particles().v()),
    );
    format!(
        "x at {x}, x_prev at {p}, v at {v} (mod 4096); x_prev - x = {}, v - x = {} (mod 4096)",
        (p + 4096 - x) % 4096,
        (v + 4096 - x) % 4096
    )
}

fn ns(i: &Interval, proj: f64) -> String {
    format!(
        "{:.2} [{:.2}, {:.2}]",
        i.median * 1e6 / proj,
        i.lo * 1e6 / proj,
        i.hi * 1e6 / proj
    )
}

/// Runs the experiments at sizes `a` and `b` (cloth side n) with `solver`; `scale` in (0, 1]
/// shortens them (quick reports).
pub fn study(
    a: usize,
    b: usize,
    solver: &str,
    iterations: usize,
    tuning: &Tuning,
    scale: f64,
) -> Result<Finding, Error> {
    let params = StepParams {
        iterations,
        ..Default::default()
    };
    let mut md = String::new();
    let k = ((8.0 * scale).round() as usize).max(3);
    // 1. One size, separate processes.
    let reps = process_repeats(a, solver, iterations, k, 200)?;
    let (lo, hi) = reps
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &x| {
            (l.min(x), h.max(x))
        });
    md.push_str(&format!(
        "- The same size (cloth n = {a}, {solver}, natural) in {k} separate `wobble step` processes of 200 steps: {} ns per projection; slowest/fastest = {:.2}.\n",
        reps.iter().map(|x| format!("{x:.2}")).collect::<Vec<_>>().join(", "),
        hi / lo
    ));
    // 2. One process over time.
    let (body, _) = build_body("cloth", a, None, "natural")?;
    let proj = (body.constraints().len() * iterations) as f64;
    let mut s = tuning.build_named(solver, 1)?;
    let mut bb = body.clone();
    for _ in 0..20 {
        step(&mut bb, &params, s.as_mut(), None)?;
    }
    let window = 50;
    let windows = ((40.0 * scale).round() as usize).max(6);
    let mut medians = Vec::with_capacity(windows);
    for _ in 0..windows {
        let mut t = Vec::with_capacity(window);
        for _ in 0..window {
            let t0 = Instant::now();
            step(&mut bb, &params, s.as_mut(), None)?;
            t.push(t0.elapsed().as_secs_f64() * 1e9 / proj);
        }
        medians.push(crate::measure::stats::quantile(&t, 0.5));
    }
    let (wlo, whi) = medians
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &x| {
            (l.min(x), h.max(x))
        });
    let mid = (wlo + whi) / 2.0;
    let switches = medians
        .windows(2)
        .filter(|w| (w[0] < mid) != (w[1] < mid))
        .count();
    md.push_str(&format!(
        "- One process, the same body stepping on: medians of {windows} consecutive windows of {window} steps range {wlo:.2}..{whi:.2} ns per projection (slowest/fastest = {:.2}), crossing their midpoint {switches} times.\n",
        whi / wlo
    ));
    // 3. Alignment: the same size with its arrays at other offsets, in turns.
    let pads = [0usize, 64, 1024, 2048, 3072];
    let mut arms = Vec::new();
    for &p in &pads {
        let (b, keep) = rehomed(&body, p);
        arms.push((b, keep, tuning.build_named(solver, 1)?));
    }
    for (b, _, s) in arms.iter_mut() {
        for _ in 0..5 {
            step(b, &params, s.as_mut(), None)?;
        }
    }
    let rounds = ((20.0 * scale).round() as usize).max(5);
    let m = interleave(arms.len(), rounds, |i| {
        let (b, _, s) = &mut arms[i];
        turn_ms(b, &params, s.as_mut())
    })?;
    let mut align_differs = 0;
    md.push_str(&format!(
        "- Alignment: the same body (n = {a}) with x, x_prev and v allocated anew behind spacers, in turns ({rounds} rounds of 10 steps):\n\n| spacer (B) | array offsets | ns per projection [95%] | ratio to spacer 0 [95%] |\n| --- | --- | --- | --- |\n"
    ));
    for (i, &p) in pads.iter().enumerate() {
        let r = m.ratio(i, 0, CONFIDENCE);
        if i > 0 && r.side(1.0) != Side::Straddles && (r.median - 1.0).abs() > MATTERS {
            align_differs += 1;
        }
        md.push_str(&format!(
            "| {p} | {} | {} | {} |\n",
            offsets(&arms[i].0),
            ns(&m.median(i, CONFIDENCE), proj),
            r.display(3)
        ));
    }
    // 4. Neighbouring sizes in turns.
    let (body_b, _) = build_body("cloth", b, None, "natural")?;
    let proj_b = (body_b.constraints().len() * iterations) as f64;
    let mut two = [
        (body.clone(), tuning.build_named(solver, 1)?),
        (body_b, tuning.build_named(solver, 1)?),
    ];
    for (bd, s) in two.iter_mut() {
        for _ in 0..5 {
            step(bd, &params, s.as_mut(), None)?;
        }
    }
    let m2 = interleave(2, rounds, |i| {
        let (bd, s) = &mut two[i];
        turn_ms(bd, &params, s.as_mut())
    })?;
    // Paired ratio of ns per projection: step-time ratio scaled by the projection counts.
    let r = m2.ratio(1, 0, CONFIDENCE);
    let f = proj / proj_b;
    let rn = Interval {
        lo: r.lo * f,
        median: r.median * f,
        hi: r.hi * f,
        samples: r.samples,
    };
    md.push_str(&format!(
        "\n- Neighbouring sizes in turns: n = {a} {} and n = {b} {} ns per projection; paired ratio of ns per projection n = {b} / n = {a}: {}.\n",
        ns(&m2.median(0, CONFIDENCE), proj),
        ns(&m2.median(1, CONFIDENCE), proj_b),
        rn.display(3)
    ));
    let drift = hi / lo > 1.1 || whi / wlo > 1.1;
    let neighbour_differs = rn.side(1.0) != Side::Straddles && (rn.median - 1.0).abs() > MATTERS;
    let cause = if align_differs > 0 {
        format!("the placement of the particle arrays modulo 4 KiB changes the step time ({align_differs} of {} placements differ from the reference beyond their intervals)", pads.len() - 1)
    } else if drift {
        "the machine's speed changing over time, not the size or the placement of the arrays"
            .to_string()
    } else {
        "not reproduced in this run".to_string()
    };
    let sentence = format!(
        "Cause of the fine grid's alternation, measured at n = {a}: {cause}; one size in {k} processes spreads {:.2}x and one process's windows {:.2}x, {align_differs} of {} array placements modulo 4 KiB differ by more than {:.0}% beyond their intervals, and the neighbour n = {b} in turns is {} (ratio of ns per projection {}).",
        hi / lo,
        whi / wlo,
        pads.len() - 1,
        MATTERS * 100.0,
        if neighbour_differs { "different" } else { "the same within 5%" },
        rn.display(3)
    );
    Ok(Finding {
        markdown: md,
        sentence,
    })
}
