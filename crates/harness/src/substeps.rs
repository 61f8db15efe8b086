//! `wobble substeps`: at a fixed number of projections per step (substeps x iterations = 8,
//! 16, 30), which split gives the least stretch and what does it cost? Small Steps (Macklin et
//! al. 2019) argues for many substeps of one iteration.
//!
//! Each split runs in-process from rest for `--steps` steps at the frame dt; stretch is the
//! mean over the steps of the mean structural stretch, time the median step time.

use crate::csv::RowWriter;
use crate::plot::{Legend, Plot, Series};
use crate::progress;
use crate::section::{figure, link, Section};
use crate::setup::{
    check_mesh, check_scene, check_size, or_note, parse_counts, parse_solvers, Common, Error,
};
use crate::sim::{RunFigures, Sim, Spec, FIGURE_COLUMNS};
use clap::Args;
use serde::Serialize;
use std::path::PathBuf;

/// Arguments of `wobble substeps`.
#[derive(Args, Debug, Clone)]
pub struct SubstepsArgs {
    /// Scene.
    #[arg(long, default_value = "cloth")]
    pub scene: String,
    /// Size parameter.
    #[arg(long, default_value_t = 32)]
    pub n: usize,
    /// Mesh file for the mesh scene.
    #[arg(long)]
    pub mesh: Option<PathBuf>,
    /// Comma-separated solvers.
    #[arg(long, default_value = "gs")]
    pub solvers: String,
    /// Totals substeps x iterations.
    #[arg(long, default_value = "8,16,30")]
    pub totals: String,
    /// Steps per run (from rest).
    #[arg(long, default_value_t = 120)]
    pub steps: usize,
    /// Rayon threads.
    #[arg(long, default_value_t = 1)]
    pub threads: usize,
    /// The solvers' tuning and the output directory.
    #[command(flatten)]
    pub common: Common,
}

/// Header of a CSV of [`SplitRow`]s (`substeps.csv`, the C8 claim's `c8.csv`).
pub fn split_header() -> Vec<&'static str> {
    let split = ["scene", "n", "solver", "total", "substeps", "iterations"];
    [&split[..], &FIGURE_COLUMNS].concat()
}

/// One row of substeps.csv.
#[derive(Serialize, Debug, Clone)]
pub struct SplitRow {
    /// Scene name.
    pub scene: String,
    /// Size parameter of the scene.
    pub n: usize,
    /// Solver name.
    pub solver: String,
    /// Solver iterations per step in all, substeps x iterations (the total the splits share).
    pub total: usize,
    /// Substeps per step.
    pub substeps: usize,
    /// Solver iterations per substep.
    pub iterations: usize,
    /// Steps, stretch, the median step time after the first tenth of the steps, and status.
    pub figures: RunFigures,
}

/// Every (substeps, iterations) with substeps x iterations = `total`, substeps ascending.
pub fn splits(total: usize) -> Vec<(usize, usize)> {
    (1..=total)
        .filter(|s| total.is_multiple_of(*s))
        .map(|s| (s, total / s))
        .collect()
}

/// Runs one split of `base` (scene, size, solver, threads, tuning); a refusal or divergence
/// becomes the row's status.
pub fn run_split(
    base: &Spec,
    (substeps, iterations): (usize, usize),
    steps: usize,
) -> Result<SplitRow, Error> {
    let spec = base.clone().iterations(iterations).substeps(substeps);
    let (scene, n, solver) = (&spec.scene, spec.n, &spec.solver);
    let figures = match or_note(Sim::new(&spec))? {
        Err(note) => RunFigures::unmeasured(note),
        Ok(mut sim) => RunFigures::of(&sim.run(steps), steps / 10),
    };
    Ok(SplitRow {
        scene: scene.clone(),
        n,
        solver: solver.clone(),
        total: substeps * iterations,
        substeps,
        iterations,
        figures,
    })
}

/// `wobble substeps`.
pub fn run(a: &SubstepsArgs) -> Result<Section, Error> {
    check_scene(&a.scene)?;
    check_size(&a.scene, a.n)?;
    check_mesh(&a.scene, &a.mesh)?;
    let solvers = parse_solvers(&a.solvers)?;
    let totals = parse_counts(&a.totals, "totals")?;
    if a.steps == 0 || a.threads == 0 {
        return Err(Error::Arg(
            "--steps and --threads must be at least 1".into(),
        ));
    }
    a.common.tuning.check()?;
    let out = &a.common.out;
    let path = out.join("substeps.csv");
    let mut w = RowWriter::create(&path, &split_header())?;
    let mut sec = Section::new("Substeps against iterations at equal cost");
    sec.add_files([path.clone()]);
    let runs: usize = solvers.len() * totals.iter().map(|&t| splits(t).len()).sum::<usize>();
    let pb = progress::bar(runs, "substeps");
    let mut rows = Vec::new();
    for s in &solvers {
        for &total in &totals {
            for split in splits(total) {
                pb.set_message(format!("{s} {}x{}", split.0, split.1));
                let mut base = Spec::new(&a.scene, a.n, s);
                base.mesh = a.mesh.clone();
                base.threads = a.threads;
                base.tuning = a.common.tuning.clone();
                let r = run_split(&base, split, a.steps)?;
                if r.figures.status != "ok" && split.0 == 1 {
                    progress::note(&pb, &format!("substeps: {s}: {}", r.figures.status));
                }
                w.row(&r)?;
                rows.push(r);
                pb.inc(1);
            }
        }
    }
    pb.finish_and_clear();
    let mk = |value: fn(&SplitRow) -> f64, y: &str, title: &str| Plot {
        title: title.into(),
        x_label: "substeps (iterations = total / substeps)".into(),
        y_label: y.into(),
        x_log: true,
        y_log: true,
        legend: Legend::UpperRight,
        series: solvers
            .iter()
            .enumerate()
            .flat_map(|(si, s)| {
                let rows = &rows;
                totals.iter().enumerate().map(move |(ti, &t)| Series {
                    name: format!("{s} total {t}"),
                    points: rows
                        .iter()
                        .filter(|r| &r.solver == s && r.total == t && r.figures.status == "ok")
                        .map(|r| (r.substeps as f64, value(r)))
                        .collect(),
                    dashed: si > 0,
                    color: Some(ti),
                })
            })
            .collect(),
        ..Default::default()
    };
    let [stretch, time] = [
        (
            (|r| r.figures.stretch_mean_avg) as fn(&SplitRow) -> f64,
            "stretch_mean_avg",
            "Stretch",
        ),
        (
            |r| r.figures.ms_per_step_median,
            "ms per step (median)",
            "Step time",
        ),
    ]
    .map(|(value, y, what)| {
        let title = format!(
            "{what} at equal projections per step, {} n={}",
            a.scene, a.n
        );
        mk(value, y, &title)
    });
    let s_stem = out.join("substeps_stretch");
    let t_stem = out.join("substeps_time");
    sec.add_files(stretch.save(&s_stem)?);
    sec.add_files(time.save(&t_stem)?);
    sec.line(format!(
        "{} n={}, {} steps from rest per split, solvers {}.\n",
        a.scene, a.n, a.steps, a.solvers
    ));
    sec.line(figure(&s_stem, out, "stretch against substeps"));
    sec.line("");
    sec.line(figure(&t_stem, out, "time against substeps"));
    let mut t = vec![
        "\n| solver | total | substeps x iterations | stretch_mean_avg | ms per step | status |"
            .to_string(),
        "| --- | --- | --- | --- | --- | --- |".to_string(),
    ];
    for r in &rows {
        t.push(format!(
            "| {} | {} | {} x {} | {:.5} | {:.4} | {} |",
            r.solver,
            r.total,
            r.substeps,
            r.iterations,
            r.figures.stretch_mean_avg,
            r.figures.ms_per_step_median,
            r.figures.status
        ));
    }
    sec.line(t.join("\n"));
    sec.line(format!("\nData: {}.", link(&path, out)));
    Ok(sec)
}

#[cfg(test)]
mod tests {
    use super::{split_header, splits, SplitRow};
    use crate::sim::RunFigures;

    #[test]
    fn a_row_fills_the_header_with_its_figures_last() {
        let row = SplitRow {
            scene: "cloth".into(),
            n: 4,
            solver: "gs".into(),
            total: 4,
            substeps: 2,
            iterations: 2,
            figures: RunFigures {
                steps: 5,
                stretch_mean_avg: 0.25,
                stretch_max_final: 0.5,
                ms_per_step_median: 1.5,
                status: "ok".into(),
            },
        };
        let mut w = csv::WriterBuilder::new()
            .has_headers(false)
            .from_writer(Vec::new());
        w.serialize(&row).unwrap();
        let line = String::from_utf8(w.into_inner().unwrap()).unwrap();
        assert_eq!(line, "cloth,4,gs,4,2,2,5,0.25,0.5,1.5,ok\n");
        assert_eq!(line.split(',').count(), split_header().len());
    }

    #[test]
    fn splits_cover_every_divisor() {
        assert_eq!(splits(8), vec![(1, 8), (2, 4), (4, 2), (8, 1)]);
        assert_eq!(splits(30).len(), 8);
        assert!(splits(30).iter().all(|(s, i)| s * i == 30));
    }
}
