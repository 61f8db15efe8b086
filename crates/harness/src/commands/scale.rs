//! `wobble scale`: step time against body size, per solver and thread count, on a log-log
//! plot with the sizes where the working set passes each cache level marked. Each point is a
//! `wobble step` child process of [`crate::measure::sweep`] (where the steps per point and the
//! working-set model are described).

use crate::measure::machine;
use crate::measure::sweep::{
    by_solver_threads, cache_markers, lines, pivot, series_label, skipped_summary,
    threshold_vertices, Budget, Point, Sweep,
};
use crate::output::plot::{Legend, Plot};
use crate::output::progress;
use crate::output::section::{figure, link, Section};
use crate::setup::{
    check_solvers, parse_counts, parse_sizes, BackendArg, Common, Error, OrderingArg, SceneArg,
    SolverArg, ALL_SOLVERS,
};
use clap::Args;

/// Arguments of `wobble scale`.
#[derive(Args, Debug, Clone)]
pub struct ScaleArgs {
    /// Scene (a standard scene with a size: not mesh).
    #[arg(long, value_enum, default_value_t = SceneArg::Cloth)]
    pub scene: SceneArg,
    /// Comma-separated size parameters.
    #[arg(long, default_value = "16,23,32,45,64,128,256,512,1024")]
    pub sizes: String,
    /// Solvers, comma-separated.
    #[arg(long, value_enum, value_delimiter = ',', default_value = ALL_SOLVERS)]
    pub solvers: Vec<SolverArg>,
    /// Solver iterations per substep.
    #[arg(long, default_value_t = 8)]
    pub iters: usize,
    /// Substeps per step.
    #[arg(long, default_value_t = 1)]
    pub substeps: usize,
    /// Comma-separated thread counts.
    #[arg(long, default_value = "1,2")]
    pub threads: String,
    /// Particle ordering (`wobble cache` compares several).
    #[arg(long, value_enum, default_value_t = OrderingArg::Natural)]
    pub ordering: OrderingArg,
    /// Backends, comma-separated: `cpu`, `gpu` or both (the GPU runs colored, jacobi and
    /// chebyshev on one device and no CPU threads: its rows have threads = 1).
    #[arg(long, value_enum, value_delimiter = ',', default_value = "cpu")]
    pub backend: Vec<BackendArg>,
    /// How long the sweep may take: steps per point, time-outs and the overall budget.
    #[command(flatten)]
    pub budget: Budget,
    /// The solvers' tuning and the output directory.
    #[command(flatten)]
    pub common: Common,
}

/// `wobble scale`.
pub fn run(a: &ScaleArgs) -> Result<Section, Error> {
    if a.scene == SceneArg::Mesh {
        return Err(Error::Arg(
            "scale sweeps sizes of a standard scene; mesh has no size".into(),
        ));
    }
    let sizes = parse_sizes(&a.sizes, a.scene.name())?;
    check_solvers(&a.solvers)?;
    let solvers = SolverArg::names(&a.solvers);
    let threads = parse_counts(&a.threads, "threads")?;
    // Each backend once, in the order given.
    let mut backends: Vec<&str> = Vec::new();
    for b in &a.backend {
        if !backends.contains(&b.name()) {
            backends.push(b.name());
        }
    }
    if a.iters == 0 || a.substeps == 0 {
        return Err(Error::Arg(
            "--iters and --substeps must be at least 1".into(),
        ));
    }
    a.budget.check()?;
    a.common.tuning.check()?;
    let out = &a.common.out;
    let machine = machine::probe();
    let mut sweep = Sweep::create(out, "scale", &a.budget, &a.common.tuning)?;
    let mut sec = Section::new("Scaling with body size");
    sec.add_files(sweep.files());
    let total = sizes.len() * solvers.len() * threads.len() * backends.len();
    let pb = progress::bar(total, "scale");
    // Sizes in the outer loop, so a spent budget cuts the largest sizes of every series.
    for &n in &sizes {
        for s in &solvers {
            for &t in &threads {
                for b in &backends {
                    pb.set_message(format!("n={n} {s} t={t} {b}"));
                    let p = Point {
                        scene: a.scene.name().to_string(),
                        n,
                        solver: s.clone(),
                        threads: t,
                        iterations: a.iters,
                        substeps: a.substeps,
                        ordering: a.ordering.name().to_string(),
                        backend: b.to_string(),
                    };
                    if sweep.point(&p)?.is_none() {
                        if let Some((_, note)) = sweep.skipped.last() {
                            let what = format!("scale: {s} threads={t} {b}: {note}");
                            progress::note_once(&pb, &what);
                        }
                    }
                    pb.inc(1);
                }
            }
        }
    }
    pb.finish_and_clear();
    let rows = &sweep.measured;
    let c_per_v = rows
        .iter()
        .max_by_key(|r| r.vertices)
        .map(|r| r.constraints as f64 / r.vertices as f64)
        .unwrap_or(3.0);
    let markers = cache_markers(&machine, c_per_v);
    let plot = Plot {
        title: format!(
            "Step time against size, {} ({} iterations)",
            a.scene, a.iters
        ),
        x_label: "vertices".into(),
        y_label: "ms per step (median)".into(),
        x_log: true,
        y_log: true,
        series: lines(rows, by_solver_threads(&solvers), |r| r.ms_per_step_median),
        markers: markers.clone(),
        legend: Legend::LowerRight,
    };
    let stem = out.join("scale");
    sec.add_files(plot.save(&stem)?);
    let proj = Plot {
        title: format!("Time per constraint projection, {}", a.scene),
        x_label: "vertices".into(),
        y_label: "ns per projection".into(),
        x_log: true,
        y_log: true,
        series: lines(rows, by_solver_threads(&solvers), |r| r.ns_per_projection),
        markers,
        legend: Legend::UpperLeft,
    };
    let stem_p = out.join("scale_projection");
    sec.add_files(proj.save(&stem_p)?);
    sec.line(format!(
        "{} at sizes {}, {} iterations, threads {}; each point a separate `wobble step` process (peak RSS per run). Dashed lines: more than one thread. Cache marks: where the per-iteration working set 16 V + 20 C bytes (C/V = {c_per_v:.2}) fills each level ({}; {}).\n",
        a.scene,
        a.sizes,
        a.iters,
        a.threads,
        machine.cache_line(),
        machine.cache_source
    ));
    let marks: Vec<String> = (1..=3)
        .filter_map(|l| {
            machine
                .data_cache(l)
                .map(|b| format!("L{l} at ~{:.0} vertices", threshold_vertices(b, c_per_v)))
        })
        .collect();
    if !marks.is_empty() {
        sec.line(format!(
            "By that model the working set fills {}.\n",
            marks.join(", ")
        ));
    }
    sec.line(figure(&stem, out, "step time against vertices"));
    sec.line("");
    sec.line(figure(&stem_p, out, "ns per projection against vertices"));
    sec.line("\nMedian ms per step:\n");
    sec.line(pivot(rows, series_label, |r| r.ms_per_step_median, "ms"));
    let notes = skipped_summary(&sweep.skipped);
    if !notes.is_empty() {
        sec.line(format!("\nNot measured:\n\n{notes}"));
    }
    sec.line(format!(
        "\nData: {}, {}.",
        link(&out.join("scale.csv"), out),
        link(&out.join("scale_runs.csv"), out)
    ));
    Ok(sec)
}
