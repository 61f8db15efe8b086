//! Step time of one solver on one size in every ordering, measured in turns in one process.
//!
//! Each ordering is an arm of [`crate::measure::paired::interleave`]: its own body and its own solver,
//! stepping in rounds whose order rotates, so drift of the shared machine hits every ordering
//! alike. Every timed step is a sample of that ordering's median (order-statistic interval);
//! each round gives one paired sample of the ratio to the first ordering.

use crate::measure::paired::{interleave, Interval, Side};
use crate::measure::sweep::{Budget, ScaleRow};
use crate::setup::{or_note, Error, Tuning};
use solver_core::{figures, step, Body, Solver, StepParams};
use std::time::Instant;

/// Confidence of every interval in the study.
pub const CONFIDENCE: f64 = 0.95;

/// A body that gets one untimed step per turn (to bring its data back into the caches after
/// the other arms ran) only when a step is shorter than this; at larger sizes nothing of it
/// survives in cache anyway and the extra step would only double the cost.
const REWARM_BELOW_S: f64 = 0.005;

/// Most rounds per measurement: enough paired samples for a ratio interval narrower than the
/// full range (with 20 rounds the 95% interval spans ranks 5..15).
const MAX_ROUNDS: usize = 20;

/// One ordering's measurement at one size.
#[derive(Debug, Clone, serde::Serialize)]
pub struct OrderingPoint {
    /// Scene name.
    pub scene: String,
    /// Size parameter of the scene.
    pub n: usize,
    /// Particle count of the body.
    pub vertices: usize,
    /// Constraint count of the body.
    pub constraints: usize,
    /// Solver name, as the solver reports it.
    pub solver: String,
    /// Particle ordering.
    pub ordering: String,
    /// Solver iterations per step.
    pub iterations: usize,
    /// Timed steps (samples of the median).
    pub samples: usize,
    /// Rounds of the interleaving (paired samples of the ratio).
    pub rounds: usize,
    /// Median ns per projection (constraints x iterations a step).
    pub ns_median: f64,
    /// Lower end of its 95% interval.
    pub ns_lo: f64,
    /// Upper end of its 95% interval.
    pub ns_hi: f64,
    /// Paired ratio of this ordering's step time to the first ordering's (median over rounds).
    pub ratio: f64,
    /// Lower end of the ratio's 95% interval.
    pub ratio_lo: f64,
    /// Upper end of the ratio's 95% interval.
    pub ratio_hi: f64,
    /// `slower`, `faster` or `same` than the first ordering beyond the ratio's interval
    /// (`baseline` for the first ordering itself).
    pub verdict: String,
    /// The row of cache.csv (the layout of scale.csv) for this point.
    #[serde(skip)]
    pub row: ScaleRow,
}

impl OrderingPoint {
    /// The ns-per-projection interval.
    pub fn ns(&self) -> Interval {
        Interval {
            lo: self.ns_lo,
            median: self.ns_median,
            hi: self.ns_hi,
            samples: self.samples,
        }
    }
}

/// How many steps a measurement takes, from the sweep's budget.
#[derive(Debug, Clone, Copy)]
pub struct Plan {
    /// Seconds of timed steps aimed at per arm.
    pub target_s: f64,
    /// Fewest timed steps per arm.
    pub min_steps: usize,
    /// Most timed steps per arm.
    pub max_steps: usize,
    /// Most untimed steps per arm before the rounds.
    pub warmup: usize,
}

impl Plan {
    /// The plan a sweep budget asks for.
    pub fn from_budget(b: &Budget) -> Self {
        Plan {
            target_s: b.target_s,
            min_steps: b.min_steps,
            max_steps: b.steps,
            warmup: b.warmup,
        }
    }

    /// (rounds, timed steps per turn) for a step of `step_s` seconds.
    pub fn shape(&self, step_s: f64) -> (usize, usize) {
        let steps = ((self.target_s / step_s.max(1e-9)).round() as usize)
            .clamp(self.min_steps, self.max_steps);
        let rounds = steps.clamp(1, MAX_ROUNDS);
        (rounds, steps.div_ceil(rounds))
    }
}

/// Process's peak resident set size so far in MiB (`ru_maxrss`).
fn peak_rss_mb() -> f64 {
    // SAFETY: getrusage writes into the zeroed struct it is given and nothing else.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) } != 0 {
        return f64::NAN;
    }
    u.ru_maxrss as f64 / 1024.0
}

/// Measures `solver` on `bodies` (one per ordering, first = the baseline of the ratios), each
/// stepping a copy. `Ok(Err(note))` when the library refuses the solver here.
pub fn measure(
    scene: &str,
    n: usize,
    bodies: &[(String, Body)],
    solver: &str,
    iterations: usize,
    tuning: &Tuning,
    plan: &Plan,
) -> Result<Result<Vec<OrderingPoint>, String>, Error> {
    let params = StepParams {
        iterations,
        ..Default::default()
    };
    params.validate()?;
    let mut arms: Vec<(Body, Box<dyn Solver>)> = Vec::with_capacity(bodies.len());
    for (_, b) in bodies {
        match or_note(tuning.build_named(solver, 1))? {
            Ok(s) => arms.push((b.clone(), s)),
            Err(note) => return Ok(Err(note)),
        }
    }
    // One step each builds the solver's tables and times a step.
    let mut step_s: f64 = 0.0;
    for (b, s) in arms.iter_mut() {
        if let Err(note) = or_note(step(b, &params, s.as_mut(), None).map_err(Error::from))? {
            return Ok(Err(note));
        }
        let t0 = Instant::now();
        step(b, &params, s.as_mut(), None)?;
        step_s = step_s.max(t0.elapsed().as_secs_f64());
    }
    let (rounds, turn) = plan.shape(step_s);
    let warmup = (rounds * turn / 5).min(plan.warmup);
    for _ in 0..warmup {
        for (b, s) in arms.iter_mut() {
            step(b, &params, s.as_mut(), None)?;
        }
    }
    let rewarm = step_s < REWARM_BELOW_S;
    let mut stretch = vec![Vec::new(); arms.len()];
    let m = interleave(arms.len(), rounds, |k| {
        let (b, s) = &mut arms[k];
        if rewarm {
            step(b, &params, s.as_mut(), None)?;
        }
        let mut t = Vec::with_capacity(turn);
        for _ in 0..turn {
            let t0 = Instant::now();
            step(b, &params, s.as_mut(), None)?;
            t.push(t0.elapsed().as_secs_f64() * 1e3);
        }
        stretch[k].push(figures::stretch(b).0 as f64);
        Ok::<_, Error>(t)
    })?;
    let rss = peak_rss_mb();
    let mut out = Vec::with_capacity(arms.len());
    for (k, ((ordering, _), (b, s))) in bodies.iter().zip(&arms).enumerate() {
        let proj = (b.constraints().len() * iterations * params.substeps).max(1) as f64;
        let ms = m.median(k, CONFIDENCE);
        let ratio = m.ratio(k, 0, CONFIDENCE);
        let verdict = if k == 0 {
            "baseline"
        } else {
            match ratio.side(1.0) {
                Side::Above => "slower",
                Side::Below => "faster",
                Side::Straddles => "same",
            }
        };
        let q = |p: f64| crate::measure::stats::quantile(&m.samples[k], p);
        let to_ns = 1e6 / proj;
        let row = ScaleRow {
            scene: scene.to_string(),
            n,
            vertices: b.len(),
            constraints: b.constraints().len(),
            solver: s.name().to_string(),
            threads: s.report().threads,
            iterations,
            substeps: params.substeps,
            ordering: ordering.clone(),
            ms_per_step_median: ms.median,
            ms_per_step_p10: q(0.1),
            ms_per_step_p90: q(0.9),
            ns_per_projection: ms.median * to_ns,
            stretch_mean_avg: stretch[k].iter().sum::<f64>() / stretch[k].len().max(1) as f64,
            peak_rss_mb: rss,
            backend: "cpu".into(),
        };
        out.push(OrderingPoint {
            scene: scene.to_string(),
            n,
            vertices: b.len(),
            constraints: b.constraints().len(),
            solver: s.name().to_string(),
            ordering: ordering.clone(),
            iterations,
            samples: ms.samples,
            rounds,
            ns_median: ms.median * to_ns,
            ns_lo: ms.lo * to_ns,
            ns_hi: ms.hi * to_ns,
            ratio: ratio.median,
            ratio_lo: ratio.lo,
            ratio_hi: ratio.hi,
            verdict: verdict.to_string(),
            row,
        });
    }
    Ok(Ok(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plan_fills_the_target_within_the_step_limits() {
        let p = Plan {
            target_s: 0.1,
            min_steps: 3,
            max_steps: 100,
            warmup: 10,
        };
        assert_eq!(p.shape(0.001), (20, 5));
        assert_eq!(p.shape(10.0), (3, 1));
        assert_eq!(p.shape(0.01), (10, 1));
    }
}
