//! `wobble substeps`: at a fixed number of projections per step (substeps x iterations = 8,
//! 16, 30), which split gives the least stretch and what does it cost? Small Steps (Macklin et
//! al. 2019) argues for many substeps of one iteration.
//!
//! Each split runs in-process from rest for `--steps` steps at the frame dt; stretch is the
//! mean over the steps of the mean structural stretch, time the median step time.

use crate::measure::sim::Spec;
use crate::measure::split::{run_split, split_header, splits, SplitRow};
use crate::output::csv::RowWriter;
use crate::output::plot::{Legend, Plot, Series};
use crate::output::progress;
use crate::output::section::{figure, link, Section};
use crate::setup::{
    check_mesh, check_size, check_solvers, parse_counts, Common, Error, SceneArg, SolverArg,
};
use clap::Args;
use std::path::PathBuf;

/// Arguments of `wobble substeps`.
#[derive(Args, Debug, Clone)]
pub struct SubstepsArgs {
    /// Scene.
    #[arg(long, value_enum, default_value_t = SceneArg::Cloth)]
    pub scene: SceneArg,
    /// Size parameter.
    #[arg(long, default_value_t = 32)]
    pub n: usize,
    /// Mesh file for the mesh scene.
    #[arg(long)]
    pub mesh: Option<PathBuf>,
    /// Solvers, comma-separated.
    #[arg(long, value_enum, value_delimiter = ',', default_value = "gs")]
    pub solvers: Vec<SolverArg>,
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

/// `wobble substeps`.
pub fn run(a: &SubstepsArgs) -> Result<Section, Error> {
    check_size(a.scene.name(), a.n)?;
    check_mesh(a.scene.name(), &a.mesh)?;
    check_solvers(&a.solvers)?;
    let solvers = SolverArg::names(&a.solvers);
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
                let mut base = Spec::new(a.scene.name(), a.n, s);
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
        a.scene,
        a.n,
        a.steps,
        solvers.join(",")
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
