//! `wobble advise`: which solver, iteration count and substep count to ship for one body,
//! given a frame-time budget and a stretch target.
//!
//! Every (solver, iterations, substeps) with iterations x substeps <= `--max-projections` runs
//! `--steps` steps from rest in-process; stretch is the mean over the run of the mean
//! structural stretch, time the median step time after the first tenth of the steps. The
//! combinations that meet the stretch target are ranked by time; the fastest within budget is
//! recommended, or, when none is, the closest ones are named.

use crate::csv::RowWriter;
use crate::progress;
use crate::section::Section;
use crate::setup::{
    all_solvers_csv, check_mesh, check_scene, check_size, or_note, parse_counts, parse_solvers,
    Error, Tuning,
};
use crate::sim::{Sim, Spec};
use clap::Args;
use serde::Serialize;
use std::path::PathBuf;

/// Arguments of `wobble advise`.
#[derive(Args, Debug, Clone)]
#[command(allow_negative_numbers = true)]
pub struct AdviseArgs {
    /// Standard scene (with --n), or use --mesh.
    #[arg(long)]
    pub scene: Option<String>,
    /// Size parameter of the scene (default: cloth/flag/rope 32, jelly 3, cube 4).
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
    /// Comma-separated solvers to try.
    #[arg(long, default_value_t = all_solvers_csv())]
    pub solvers: String,
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

/// The default size of a scene for advice.
pub fn default_n(scene: &str) -> usize {
    match scene {
        "jelly" => 3,
        "cube" => 4,
        _ => 32,
    }
}

/// The recommendation text for trials already measured.
pub fn recommend(trials: &[Trial], budget_ms: f64, max_stretch: f64) -> String {
    let ok: Vec<&Trial> = trials.iter().filter(|t| t.status == "ok").collect();
    let best = ok
        .iter()
        .filter(|t| t.meets_stretch && t.within_budget)
        .min_by(|a, b| a.ms_per_step_median.total_cmp(&b.ms_per_step_median));
    if let Some(t) = best {
        return format!(
            "Recommended: {} with {} iterations x {} substeps: {:.3} ms per step (budget {budget_ms} ms), mean stretch {:.4} (target {max_stretch}).",
            t.solver, t.iterations, t.substeps, t.ms_per_step_median, t.stretch_mean_avg
        );
    }
    let mut s = format!(
        "No combination meets both the stretch target {max_stretch} and the budget {budget_ms} ms."
    );
    if let Some(t) = ok
        .iter()
        .filter(|t| t.meets_stretch)
        .min_by(|a, b| a.ms_per_step_median.total_cmp(&b.ms_per_step_median))
    {
        s.push_str(&format!(
            " Fastest meeting the stretch target: {} {} x {} at {:.3} ms ({:.3} ms over budget).",
            t.solver,
            t.iterations,
            t.substeps,
            t.ms_per_step_median,
            t.ms_per_step_median - budget_ms
        ));
    }
    if let Some(t) = ok
        .iter()
        .filter(|t| t.within_budget)
        .min_by(|a, b| a.stretch_mean_avg.total_cmp(&b.stretch_mean_avg))
    {
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
            check_scene(s)?;
            if s == "mesh" {
                return Err(Error::Arg("use --mesh FILE for a mesh".into()));
            }
            let n = a.n.unwrap_or_else(|| default_n(s));
            check_size(s, n)?;
            (s.clone(), n)
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
    let solvers = parse_solvers(&a.solvers)?;
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
    let mut w = RowWriter::create(
        &path,
        &[
            "solver",
            "iterations",
            "substeps",
            "stretch_mean_avg",
            "ms_per_step_median",
            "meets_stretch",
            "within_budget",
            "status",
        ],
    )?;
    let pb = progress::bar(solvers.len() * combos.len(), "advise");
    let mut trials = Vec::new();
    let mut refused = Vec::new();
    for s in &solvers {
        for &(it, sub) in &combos {
            pb.set_message(format!("{s} {it}x{sub}"));
            let mut spec = Spec::new(&scene, n, s).iterations(it).substeps(sub);
            spec.mesh = a.mesh.clone();
            spec.threads = a.threads;
            spec.tuning = a.tuning.clone();
            let mut t = Trial {
                solver: s.clone(),
                iterations: it,
                substeps: sub,
                stretch_mean_avg: f64::NAN,
                ms_per_step_median: f64::NAN,
                meets_stretch: false,
                within_budget: false,
                status: "ok".into(),
            };
            match or_note(Sim::new(&spec))? {
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
                }
            }
            w.row(&t)?;
            trials.push(t);
            pb.inc(1);
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
    let rec = recommend(&trials, a.budget_ms, a.max_stretch);
    println!("{rec}");
    let mut sec = Section::new("Advice");
    sec.add_files([path]);
    sec.line(rec);
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
