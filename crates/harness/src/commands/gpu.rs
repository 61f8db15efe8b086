//! `wobble gpu`: the GPU backend against the CPU solvers of the same build on the same
//! machine: the standard cloth at each size with each solver, every point a `wobble step`
//! child (`--backend cpu` at each CPU thread count, `--backend gpu`), then, per size, the best
//! CPU and the best GPU time, the crossover size from which the GPU is faster, and the
//! 1024 x 1024 goal.
//!
//! With no adapter the section says so and measures nothing. A software adapter (lavapipe)
//! runs the GPU kernels on the CPU: its timings say nothing of a GPU, so by default none are
//! taken; the section then checks the GPU solvers against the CPU's on a small cloth instead
//! (the stretch of both after the same steps).

use crate::measure::sweep::{
    by_solver_threads, lines, pivot, series_label, Budget, Point, ScaleRow, Sweep,
};
use crate::output::csv::RowWriter;
use crate::output::plot::{Legend, Plot};
use crate::output::section::{figure, link, Section};
use crate::setup::{
    check_solvers, parse_counts, parse_sizes, BackendArg, Error, KernelArg, SolverArg, Tuning,
};
use clap::Args;
use std::path::PathBuf;

/// The goal for the 1024 x 1024 cloth at 8 iterations on an H200: at most this many ms
/// per step (Macklin et al. 2019 ran 150k particles and 896k springs in 12-14 ms per frame).
pub const GOAL_MS_AT_1024: f64 = 2.0;

/// Arguments of `wobble gpu`.
#[derive(Args, Debug, Clone)]
pub struct GpuArgs {
    /// Comma-separated cloth sizes (n x n vertices).
    #[arg(long, default_value = "32,128,512,1024")]
    pub sizes: String,
    /// Solvers, comma-separated (each runs on the CPU and on the GPU).
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        default_value = "colored,jacobi,chebyshev"
    )]
    pub solvers: Vec<SolverArg>,
    /// Solver iterations per substep.
    #[arg(long, default_value_t = 8)]
    pub iters: usize,
    /// Comma-separated CPU thread counts.
    #[arg(long, default_value = "1,2")]
    pub threads: String,
    /// Time a software adapter too (its timings say nothing of a GPU; to try the command).
    #[arg(long)]
    pub allow_software: bool,
    /// How long the sweep may take: steps per point, time-outs and the overall budget.
    #[command(flatten)]
    pub budget: Budget,
    /// Options for particular solvers: Jacobi relaxation, seed, kernel.
    #[command(flatten)]
    pub tuning: Tuning,
    /// Output directory.
    #[arg(long, default_value = "results/gpu")]
    pub out: PathBuf,
}

/// The adapter `wobble step --backend gpu` would use: its name and whether it is software, or
/// why there is none.
fn adapter() -> Result<(String, bool), String> {
    #[cfg(feature = "gpu")]
    {
        gpu::Gpu::new()
            .map(|g| (g.adapter(), g.is_software()))
            .map_err(|e| e.to_string())
    }
    #[cfg(not(feature = "gpu"))]
    {
        Err("this wobble was built without the `gpu` feature".into())
    }
}

/// `wobble gpu` (and the GPU section of `wobble report`): the section, also written to
/// `GPU.md` in the output directory when anything was measured.
pub fn run(a: &GpuArgs) -> Result<Section, Error> {
    let mut sec = section(a)?;
    if a.out.is_dir() {
        let path = a.out.join("GPU.md");
        let md = format!(
            "# {}\n\nWritten by `wobble gpu`.\n\n{}",
            sec.title, sec.body
        );
        std::fs::write(&path, md).map_err(|e| crate::setup::io_error(&path, e))?;
        sec.add_files([path]);
    }
    Ok(sec)
}

/// The section of [`run`].
fn section(a: &GpuArgs) -> Result<Section, Error> {
    let sizes = parse_sizes(&a.sizes, "cloth")?;
    check_solvers(&a.solvers)?;
    let solvers = SolverArg::names(&a.solvers);
    let threads = parse_counts(&a.threads, "threads")?;
    a.budget.check()?;
    a.tuning.check()?;
    let mut sec = Section::new("GPU backend");
    let (name, software) = match adapter() {
        Ok(found) => found,
        Err(why) => {
            sec.line(format!(
                "No GPU adapter was found ({why}): the GPU backend was not measured, and its tests skip with `skipped: no GPU adapter`.\n"
            ));
            return Ok(sec);
        }
    };
    std::fs::create_dir_all(&a.out).map_err(|e| crate::setup::io_error(&a.out, e))?;
    if software && !a.allow_software {
        sec.line(format!(
            "Only a software adapter was found: {name}. It runs the GPU kernels on the CPU, so its timings say nothing of a GPU and none are taken. Instead, the GPU solvers against the CPU's on the same cloth:\n"
        ));
        return check_against_cpu(sec, a, &a.solvers);
    }
    let mut sweep = Sweep::create(&a.out, "gpu_scale", &a.budget, &a.tuning)?;
    sec.add_files(sweep.files());
    for &n in &sizes {
        for s in &solvers {
            let cpu = threads.iter().map(|&t| (t, "cpu"));
            for (t, backend) in cpu.chain([(1, "gpu")]) {
                let p = Point {
                    scene: "cloth".into(),
                    n,
                    solver: s.clone(),
                    threads: t,
                    iterations: a.iters,
                    substeps: 1,
                    ordering: "natural".into(),
                    backend: backend.into(),
                };
                sweep.point(&p)?;
            }
        }
    }
    let rows = &sweep.measured;
    let summary_path = a.out.join("gpu_summary.csv");
    let mut summary = RowWriter::create(
        &summary_path,
        &[
            "adapter",
            "n",
            "vertices",
            "best_cpu",
            "best_cpu_ms",
            "best_gpu",
            "best_gpu_ms",
            "gpu_faster",
        ],
    )?;
    sec.add_files([summary_path.clone()]);
    let best = |n: usize, backend: &str| -> Option<&ScaleRow> {
        rows.iter()
            .filter(|r| r.n == n && r.backend == backend)
            .min_by(|x, y| x.ms_per_step_median.total_cmp(&y.ms_per_step_median))
    };
    let mut crossover = None;
    for &n in &sizes {
        let (Some(c), Some(g)) = (best(n, "cpu"), best(n, "gpu")) else {
            continue;
        };
        let faster = g.ms_per_step_median < c.ms_per_step_median;
        if faster && crossover.is_none() {
            crossover = Some((n, g.vertices));
        }
        summary.record(&[
            name.clone(),
            n.to_string(),
            c.vertices.to_string(),
            series_label(c),
            format!("{:.4}", c.ms_per_step_median),
            series_label(g),
            format!("{:.4}", g.ms_per_step_median),
            faster.to_string(),
        ])?;
    }
    sec.line(format!(
        "Adapter: {name}{}. The cloth at sizes {}, {} iterations, solvers {} on the CPU (threads {}) and on the GPU; each point a separate `wobble step` process, the GPU's steps each submitted and waited for.\n",
        if software { " (software: these timings say nothing of a GPU)" } else { "" },
        a.sizes,
        a.iters,
        solvers.join(","),
        a.threads
    ));
    sec.line(match crossover {
        Some((n, v)) => format!(
            "Crossover: the best GPU solver is faster than the best CPU solver from n = {n} ({v} vertices) among the sizes measured.\n"
        ),
        None => "Crossover: the best GPU solver is faster than the best CPU solver at none of the sizes measured.\n".into(),
    });
    let at_1024: Vec<String> = rows
        .iter()
        .filter(|r| r.n == 1024 && r.backend == "gpu")
        .map(|r| {
            let met = if r.ms_per_step_median <= GOAL_MS_AT_1024 {
                "met"
            } else {
                "not met"
            };
            format!("{} {:.3} ms ({met})", r.solver, r.ms_per_step_median)
        })
        .collect();
    if !at_1024.is_empty() {
        sec.line(format!(
            "Goal, at most {GOAL_MS_AT_1024} ms per step for the 1024 x 1024 cloth: {}.\n",
            at_1024.join(", ")
        ));
    }
    let plot = Plot {
        title: format!(
            "Step time against size, cloth, CPU and GPU ({} iterations)",
            a.iters
        ),
        x_label: "vertices".into(),
        y_label: "ms per step (median)".into(),
        x_log: true,
        y_log: true,
        series: lines(rows, by_solver_threads(&solvers), |r| r.ms_per_step_median),
        markers: Vec::new(),
        legend: Legend::LowerRight,
    };
    let stem = a.out.join("gpu_scale");
    sec.add_files(plot.save(&stem)?);
    sec.line(figure(
        &stem,
        &a.out,
        "step time against vertices, CPU and GPU",
    ));
    sec.line("\nMedian ms per step:\n");
    sec.line(pivot(rows, series_label, |r| r.ms_per_step_median, "ms"));
    sec.line(format!(
        "\nData: {}, {}.",
        link(&a.out.join("gpu_scale.csv"), &a.out),
        link(&summary_path, &a.out)
    ));
    Ok(sec)
}

/// On a software adapter: each solver's stretch after 120 steps of the 32 x 32 cloth on the
/// CPU and on the GPU (the CPU's colored with its scalar kernel, whose order the GPU runs).
fn check_against_cpu(
    mut sec: Section,
    a: &GpuArgs,
    solvers: &[SolverArg],
) -> Result<Section, Error> {
    use crate::measure::step::{measure, StepArgs};
    use clap::Parser;
    /// `wobble step`'s arguments with their defaults, parsed as the command line would.
    #[derive(Parser)]
    struct Defaults {
        #[command(flatten)]
        step: StepArgs,
    }
    sec.line(
        "| solver | CPU stretch | GPU stretch | relative difference |\n| --- | --- | --- | --- |",
    );
    for s in solvers {
        let mut args = Defaults::parse_from(["wobble"]).step;
        args.solver = *s;
        args.warmup = 0;
        args.steps = 120;
        args.omega = a.tuning.omega;
        args.layout.kernel = KernelArg::Scalar;
        let cpu = measure(&args)?;
        args.backend = BackendArg::Gpu;
        let gpu = match measure(&args) {
            Ok(r) => r,
            Err(e) => {
                sec.line(format!("| {s} | {} | not run: {e} | - |", cpu.stretch_mean));
                continue;
            }
        };
        let rel = (gpu.stretch_mean as f64 - cpu.stretch_mean as f64).abs()
            / (cpu.stretch_mean as f64).max(f64::MIN_POSITIVE);
        sec.line(format!(
            "| {s} | {:.6} | {:.6} | {rel:.2e} |",
            cpu.stretch_mean, gpu.stretch_mean
        ));
    }
    sec.line("\n(32 x 32 cloth, 120 steps of 1/60 s, 8 iterations: the mean structural stretch after the last step.)\n");
    Ok(sec)
}
