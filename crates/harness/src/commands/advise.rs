//! `wobble advise`: which solver, iteration count and substep count to ship for one body,
//! given a frame-time budget and a stretch target.
//!
//! Every (solver, iterations, substeps) with iterations x substeps <= `--max-projections` is a
//! candidate. Each solver first takes a few probe steps at 1 and 2 iterations, which give its
//! cost per substep and per iteration; a candidate whose predicted step time is over
//! [`PRUNE_FACTOR`] x the budget is skipped (it could not be recommended, and one step of
//! `gauss-newton-direct` on the 32 x 32 cloth takes half a second), and so is one dominated by a
//! combination of the same solver with no more iterations and no more substeps that already
//! meets the stretch target (it would cost more for a stretch nobody asked for). The others run
//! `--steps` steps from rest in-process; stretch is the mean over the run of the mean
//! structural stretch, time the median step time after the first tenth of the steps. The
//! combinations that meet the stretch target are ranked by time; the fastest within budget is
//! recommended, or, when none is, the closest ones are named. What was skipped, and why, is
//! printed and written to advise.csv.

use crate::measure::sim::{Sim, Spec};
use crate::output::csv::RowWriter;
use crate::output::progress;
use crate::output::section::Section;
use crate::setup::{
    check_mesh, check_size, check_solvers, or_note, parse_counts, Error, SceneArg, SolverArg,
    Tuning, ALL_SOLVERS,
};
use clap::Args;
use serde::Serialize;
use std::path::PathBuf;

/// Arguments of `wobble advise`.
#[derive(Args, Debug, Clone)]
#[command(allow_negative_numbers = true)]
pub struct AdviseArgs {
    /// Standard scene (with --n), or use --mesh.
    #[arg(long, value_enum)]
    pub scene: Option<SceneArg>,
    /// Size parameter of the scene (default per scene: cloth, rope and flag 32, jelly 3, cube 4).
    #[arg(long)]
    pub n: Option<usize>,
    /// A mesh file (OBJ) instead of a standard scene.
    #[arg(long, conflicts_with = "scene")]
    pub mesh: Option<PathBuf>,
    /// Frame-time budget for the solver step, in ms.
    #[arg(long)]
    pub budget_ms: f64,
    /// Largest acceptable mean stretch (e.g. 0.01 for 1%).
    #[arg(long)]
    pub max_stretch: f64,
    /// Solvers to try, comma-separated.
    #[arg(long, value_enum, value_delimiter = ',', default_value = ALL_SOLVERS)]
    pub solvers: Vec<SolverArg>,
    /// Iteration counts to try.
    #[arg(long, default_value = "1,2,4,8,16,32")]
    pub iterations: String,
    /// Substep counts to try.
    #[arg(long, default_value = "1,2,4,8")]
    pub substeps: String,
    /// Skip combinations with more than this many iterations x substeps.
    #[arg(long, default_value_t = 64)]
    pub max_projections: usize,
    /// Steps per trial (from rest).
    #[arg(long, default_value_t = 60)]
    pub steps: usize,
    /// Rayon threads.
    #[arg(long, default_value_t = 1)]
    pub threads: usize,
    /// Options for particular solvers: Jacobi relaxation, Newton inner sweeps, seed, kernel.
    #[command(flatten)]
    pub tuning: Tuning,
    /// Output directory (advise.csv).
    #[arg(long, default_value = "results")]
    pub out: PathBuf,
}

/// One trial.
#[derive(Serialize, Debug, Clone)]
pub struct Trial {
    /// Solver name.
    pub solver: String,
    /// Solver iterations per substep.
    pub iterations: usize,
    /// Substeps per step.
    pub substeps: usize,
    /// Mean over the run of the mean structural stretch, as a fraction (NaN: did not run).
    pub stretch_mean_avg: f64,
    /// Median step time after the first tenth of the steps, in ms (NaN when the trial did not run).
    pub ms_per_step_median: f64,
    /// Whether the trial ran and its mean stretch is at most `--max-stretch`.
    pub meets_stretch: bool,
    /// Whether the trial ran and its median step time is at most `--budget-ms`.
    pub within_budget: bool,
    /// `ok`, `diverged: ...`, or why the solver refused the body.
    pub status: String,
}

/// Columns of advise.csv: the fields of [`Trial`].
pub const ADVISE_HEADER: &[&str] = &[
    "solver",
    "iterations",
    "substeps",
    "stretch_mean_avg",
    "ms_per_step_median",
    "meets_stretch",
    "within_budget",
    "status",
];

impl Trial {
    /// The trial of `solver` at `iterations` x `substeps` before (or without) its run: no
    /// figures, meeting nothing, with `status`.
    pub fn unmeasured(solver: &str, iterations: usize, substeps: usize, status: String) -> Trial {
        Trial {
            solver: solver.to_string(),
            iterations,
            substeps,
            stretch_mean_avg: f64::NAN,
            ms_per_step_median: f64::NAN,
            meets_stretch: false,
            within_budget: false,
            status,
        }
    }
}

/// A candidate is skipped when its predicted step time exceeds this many budgets (a margin for
/// the noise of the probe and of a shared machine).
pub const PRUNE_FACTOR: f64 = 2.0;

/// Probe steps per probed iteration count.
const PROBE_STEPS: usize = 3;

/// A solver's measured cost: ms per substep outside the iterations, and ms per iteration.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cost {
    /// ms per substep besides the iterations (prediction, velocity update, contacts).
    pub per_substep: f64,
    /// ms per iteration.
    pub per_iteration: f64,
}

impl Cost {
    /// From the median step times at 1 and 2 iterations (1 substep).
    pub fn from_probe(ms_1: f64, ms_2: f64) -> Cost {
        let per_iteration = (ms_2 - ms_1).max(0.0);
        Cost {
            per_substep: (ms_1 - per_iteration).max(0.0),
            per_iteration,
        }
    }

    /// Predicted ms per step at `iterations` x `substeps`.
    pub fn predict(&self, iterations: usize, substeps: usize) -> f64 {
        substeps as f64 * (self.per_substep + iterations as f64 * self.per_iteration)
    }
}

/// Whether (it, sub) is dominated by a combination in `met` (same solver, already meeting the
/// stretch target) with no more iterations and no more substeps.
pub fn dominated(met: &[(usize, usize)], it: usize, sub: usize) -> Option<(usize, usize)> {
    met.iter().copied().find(|&(i, s)| i <= it && s <= sub)
}

/// The recommendation text for trials already measured.
pub fn recommend(trials: &[Trial], budget_ms: f64, max_stretch: f64) -> String {
    let ok: Vec<&Trial> = trials.iter().filter(|t| t.status == "ok").collect();
    // The first trial that ran and passes `keep` with the least `key`.
    let least = |keep: fn(&Trial) -> bool, key: fn(&Trial) -> f64| {
        ok.iter()
            .copied()
            .filter(|t| keep(t))
            .min_by(|a, b| key(a).total_cmp(&key(b)))
    };
    let ms = |t: &Trial| t.ms_per_step_median;
    if let Some(t) = least(|t| t.meets_stretch && t.within_budget, ms) {
        return format!(
            "Recommended: {} with {} iterations x {} substeps: {:.3} ms per step (budget {budget_ms} ms), mean stretch {:.4} (target {max_stretch}).",
            t.solver, t.iterations, t.substeps, t.ms_per_step_median, t.stretch_mean_avg
        );
    }
    let mut s = format!(
        "No combination meets both the stretch target {max_stretch} and the budget {budget_ms} ms."
    );
    if let Some(t) = least(|t| t.meets_stretch, ms) {
        s.push_str(&format!(
            " Fastest meeting the stretch target: {} {} x {} at {:.3} ms ({:.3} ms over budget).",
            t.solver,
            t.iterations,
            t.substeps,
            t.ms_per_step_median,
            t.ms_per_step_median - budget_ms
        ));
    }
    if let Some(t) = least(|t| t.within_budget, |t| t.stretch_mean_avg) {
        s.push_str(&format!(
            " Least stretch within budget: {} {} x {} with mean stretch {:.4} at {:.3} ms.",
            t.solver, t.iterations, t.substeps, t.stretch_mean_avg, t.ms_per_step_median
        ));
    }
    if ok.is_empty() {
        s.push_str(" No trial ran at all (see the statuses).");
    }
    s
}

/// `wobble advise`.
pub fn run(a: &AdviseArgs) -> Result<Section, Error> {
    if !(a.budget_ms.is_finite() && a.budget_ms > 0.0) {
        return Err(Error::Arg(format!(
            "--budget-ms = {} is invalid; it must be a positive number of milliseconds",
            a.budget_ms
        )));
    }
    if !(a.max_stretch.is_finite() && a.max_stretch > 0.0) {
        return Err(Error::Arg(format!(
            "--max-stretch = {} is invalid; it must be a positive fraction (0.01 = 1%)",
            a.max_stretch
        )));
    }
    let (scene, n) = match (&a.scene, &a.mesh) {
        (Some(s), None) => {
            if *s == SceneArg::Mesh {
                return Err(Error::Arg("use --mesh FILE for a mesh".into()));
            }
            let n = a.n.unwrap_or_else(|| s.default_n());
            check_size(s.name(), n)?;
            (s.name().to_string(), n)
        }
        (None, Some(_)) => {
            check_mesh("mesh", &a.mesh)?;
            ("mesh".to_string(), 0)
        }
        _ => {
            return Err(Error::Arg(
                "give either --scene S [--n N] or --mesh FILE".into(),
            ))
        }
    };
    check_solvers(&a.solvers)?;
    let solvers = SolverArg::names(&a.solvers);
    let its = parse_counts(&a.iterations, "iterations")?;
    let subs = parse_counts(&a.substeps, "substeps")?;
    if a.steps < 2 || a.threads == 0 {
        return Err(Error::Arg(
            "--steps must be at least 2 and --threads at least 1".into(),
        ));
    }
    a.tuning.check()?;
    let combos: Vec<(usize, usize)> = its
        .iter()
        .flat_map(|&i| subs.iter().map(move |&s| (i, s)))
        .filter(|(i, s)| i * s <= a.max_projections)
        .collect();
    if combos.is_empty() {
        return Err(Error::Arg(
            "no iterations x substeps combination is within --max-projections".into(),
        ));
    }
    let path = a.out.join("advise.csv");
    let mut w = RowWriter::create(&path, ADVISE_HEADER)?;
    let pb = progress::bar(solvers.len() * combos.len(), "advise");
    let mut trials = Vec::new();
    let mut refused = Vec::new();
    let mut skipped_cost: Vec<String> = Vec::new();
    let mut skipped_dominated = 0usize;
    let mut skipped_over = 0usize;
    let spec_of = |s: &str, it: usize, sub: usize| {
        let mut spec = Spec::new(&scene, n, s).iterations(it).substeps(sub);
        spec.mesh = a.mesh.clone();
        spec.threads = a.threads;
        spec.tuning = a.tuning.clone();
        spec
    };
    // Combinations in order of cost, so that a dominating one runs before those it dominates.
    let mut combos = combos;
    combos.sort_by_key(|&(i, s)| (i * s, s));
    for s in &solvers {
        pb.set_message(format!("{s} probe"));
        let mut probe = [f64::NAN; 2];
        for (k, it) in [1usize, 2].into_iter().enumerate() {
            if let Ok(mut sim) = or_note(Sim::new(&spec_of(s, it, 1)))? {
                let tr = sim.run(PROBE_STEPS + 1);
                if tr.finished() {
                    probe[k] = tr.ms_median(1);
                }
            }
        }
        let cost = (probe[0].is_finite() && probe[1].is_finite())
            .then(|| Cost::from_probe(probe[0], probe[1]));
        let mut met: Vec<(usize, usize)> = Vec::new();
        let mut over = 0usize;
        for &(it, sub) in &combos {
            pb.set_message(format!("{s} {it}x{sub}"));
            let skip = if let Some(d) = dominated(&met, it, sub) {
                skipped_dominated += 1;
                Some(format!(
                    "skipped: {}x{} already meets the stretch target at lower cost",
                    d.0, d.1
                ))
            } else {
                cost.map(|c| c.predict(it, sub))
                    .filter(|&ms| ms > PRUNE_FACTOR * a.budget_ms)
                    .map(|ms| {
                        over += 1;
                        format!("skipped: predicted {ms:.3} ms per step > {PRUNE_FACTOR} x budget")
                    })
            };
            if let Some(why) = skip {
                let t = Trial::unmeasured(s, it, sub, why);
                w.row(&t)?;
                trials.push(t);
                pb.inc(1);
                continue;
            }
            let mut t = Trial::unmeasured(s, it, sub, "ok".into());
            match or_note(Sim::new(&spec_of(s, it, sub)))? {
                Err(note) => {
                    t.status = note.clone();
                    w.row(&t)?;
                    trials.push(t);
                    refused.push(format!("{s}: {note}"));
                    pb.inc(combos.len() as u64);
                    break;
                }
                Ok(mut sim) => {
                    let tr = sim.run(a.steps);
                    t.stretch_mean_avg = tr.stretch_mean_avg();
                    t.ms_per_step_median = tr.ms_median(a.steps / 10);
                    if let Some(d) = tr.diverged {
                        t.status = format!("diverged: {d}");
                    }
                    t.meets_stretch = t.status == "ok" && t.stretch_mean_avg <= a.max_stretch;
                    t.within_budget = t.status == "ok" && t.ms_per_step_median <= a.budget_ms;
                    if t.meets_stretch {
                        met.push((it, sub));
                    }
                }
            }
            w.row(&t)?;
            trials.push(t);
            pb.inc(1);
        }
        skipped_over += over;
        if over > 0 {
            if let Some(c) = cost {
                skipped_cost.push(format!(
                    "{s}: {over} (measured {:.4} ms per iteration, {:.4} ms per substep besides)",
                    c.per_iteration, c.per_substep
                ));
            }
        }
    }
    pb.finish_and_clear();
    let mut meeting: Vec<&Trial> = trials.iter().filter(|t| t.meets_stretch).collect();
    meeting.sort_by(|a, b| a.ms_per_step_median.total_cmp(&b.ms_per_step_median));
    let what = if scene == "mesh" {
        format!(
            "mesh {}",
            a.mesh
                .as_ref()
                .map_or(String::new(), |p| p.display().to_string())
        )
    } else {
        format!("{scene} n={n}")
    };
    println!(
        "{what}: {} trials of {} steps; {} meet mean stretch <= {}.\n",
        trials.len(),
        a.steps,
        meeting.len(),
        a.max_stretch
    );
    println!(
        "| rank | solver | iterations | substeps | ms per step | mean stretch | within {} ms |",
        a.budget_ms
    );
    println!("| --- | --- | --- | --- | --- | --- | --- |");
    for (k, t) in meeting.iter().enumerate() {
        println!(
            "| {} | {} | {} | {} | {:.4} | {:.5} | {} |",
            k + 1,
            t.solver,
            t.iterations,
            t.substeps,
            t.ms_per_step_median,
            t.stretch_mean_avg,
            if t.within_budget { "yes" } else { "no" }
        );
    }
    println!();
    for r in &refused {
        println!("not tried: {r}");
    }
    let skipped = format!(
        "Skipped without running: {} combinations predicted over {PRUNE_FACTOR} x the budget from each solver's probed cost{}; {skipped_dominated} dominated by a cheaper combination of the same solver that already meets the target.",
        skipped_over,
        if skipped_cost.is_empty() { String::new() } else { format!(" ({})", skipped_cost.join("; ")) }
    );
    println!("{skipped}");
    let rec = recommend(&trials, a.budget_ms, a.max_stretch);
    println!("{rec}");
    let mut sec = Section::new("Advice");
    sec.add_files([path]);
    sec.line(rec);
    sec.line(skipped);
    Ok(sec)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(solver: &str, ms: f64, stretch: f64, budget: f64, max: f64) -> Trial {
        Trial {
            solver: solver.into(),
            iterations: 1,
            substeps: 1,
            stretch_mean_avg: stretch,
            ms_per_step_median: ms,
            meets_stretch: stretch <= max,
            within_budget: ms <= budget,
            status: "ok".into(),
        }
    }

    #[test]
    fn the_header_names_the_fields_of_a_trial() {
        let row = Trial::unmeasured("gs", 1, 1, "ok".into());
        assert_eq!(crate::output::csv::header_of(&row), ADVISE_HEADER);
    }

    #[test]
    fn probed_cost_predicts_and_dominance_prunes() {
        let c = Cost::from_probe(1.5, 2.5);
        assert_eq!(
            c,
            Cost {
                per_substep: 0.5,
                per_iteration: 1.0
            }
        );
        assert_eq!(c.predict(4, 2), 2.0 * (0.5 + 4.0));
        assert_eq!(dominated(&[(4, 1)], 8, 2), Some((4, 1)));
        assert_eq!(dominated(&[(4, 2)], 8, 1), None);
        assert_eq!(dominated(&[], 1, 1), None);
    }

    #[test]
    fn the_fastest_within_budget_that_meets_the_target_is_recommended() {
        let trials = [
            t("a", 1.0, 0.02, 2.0, 0.01),
            t("b", 1.5, 0.005, 2.0, 0.01),
            t("c", 0.5, 0.009, 2.0, 0.01),
        ];
        assert!(recommend(&trials, 2.0, 0.01).starts_with("Recommended: c "));
        let trials = [t("a", 1.0, 0.02, 2.0, 0.01), t("b", 3.0, 0.005, 2.0, 0.01)];
        let r = recommend(&trials, 2.0, 0.01);
        assert!(r.starts_with("No combination"), "{r}");
        assert!(r.contains("Fastest meeting the stretch target: b"), "{r}");
        assert!(r.contains("Least stretch within budget: a"), "{r}");
    }
}
