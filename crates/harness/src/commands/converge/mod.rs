//! `wobble converge`: how fast each solver drives the constraint residual down inside one
//! step, from one common state, against iterations and against wall time; and how the
//! stretch of a whole run falls with the iteration count.
//!
//! Method. The body is warmed by `--warm` steps of the reference Gauss-Seidel (docs/SCENES.md
//! defaults) and cloned; every solver then runs one step from its own copy of that clone, so
//! every solver starts from the same positions and velocities and therefore the same
//! predicted positions. The residual (docs/SCENES.md: RMS of C over the mean rest length) is
//! recorded by the step loop after each iteration; iteration 0 is the residual of the
//! predicted positions, before any solver iteration (a step with a solver that does nothing).
//! Each solver first takes one untimed step from a copy of the common state, so its one-time
//! work (structures built at `prepare`, Chebyshev's spectral-radius probe in the first substep)
//! is done, as in the middle of a run.
//! `elapsed_us` at iteration k is the wall time of one whole step with k iterations (predict,
//! k iterations, velocity update; no residual measured), median over `--reps` repetitions,
//! each from a fresh clone of the common state; iteration 0 times the step with no solver
//! work. This costs O(iters²) iterations but measures exactly what a caller pays to stop
//! after k iterations, including any per-step setup a solver does in `begin`.

pub mod args;
pub mod cpu;
#[cfg(feature = "gpu")]
pub mod gpu;
pub mod writers;

pub use args::ConvergeArgs;

use crate::measure::residuals::{common_state, iterations_to};
use crate::measure::sim::RunFigures;
use crate::output::plot::{Legend, Plot, Series};
use crate::output::progress;
use crate::output::section::{figure, link, Section};
use crate::setup::{
    check_mesh, check_size, check_solvers, or_note, parse_counts, BackendArg, Error, SolverArg,
};
use solver_core::Body;
use std::path::PathBuf;
use writers::{Curves, StretchRow, Writers};

/// The checked lists of `wobble converge`'s arguments: solvers and stretch iteration counts.
fn check_args(a: &ConvergeArgs) -> Result<(Vec<String>, Vec<usize>), Error> {
    check_size(a.scene.name(), a.n)?;
    check_mesh(a.scene.name(), &a.mesh)?;
    check_solvers(&a.solvers)?;
    let stretch_iters = parse_counts(&a.stretch_iters, "stretch-iters")?;
    if a.iters == 0 || a.iters > 10_000 {
        return Err(Error::Arg("--iters must be in 1..=10000".into()));
    }
    if a.threads == 0 {
        return Err(Error::Arg("--threads must be at least 1".into()));
    }
    if a.backend == BackendArg::Gpu {
        if !cfg!(feature = "gpu") {
            return Err(Error::Arg(
                "--backend gpu: this wobble was built without the `gpu` feature".into(),
            ));
        }
        if let Some(s) = a.solvers.iter().find(|s| !GPU_SOLVERS.contains(s)) {
            let names: Vec<&str> = GPU_SOLVERS.iter().map(|s| s.name()).collect();
            return Err(Error::Arg(format!(
                "--backend gpu runs {}; '{s}' runs on the CPU only",
                names.join(", ")
            )));
        }
    }
    a.common.tuning.check()?;
    Ok((SolverArg::names(&a.solvers), stretch_iters))
}

/// The solvers `--backend gpu` runs (the GPU crate's, known without it).
const GPU_SOLVERS: [SolverArg; 3] = [SolverArg::Colored, SolverArg::Jacobi, SolverArg::Chebyshev];

/// Runs `run` at each stretch iteration count and writes its rows to converge_stretch.csv
/// (a refusal becomes the row's status); returns the points of the runs that finished
/// (status `ok`) and the value at 8 iterations.
fn stretch_sweep(
    a: &ConvergeArgs,
    name: &str,
    stretch_iters: &[usize],
    w: &mut Writers,
    pb: &indicatif::ProgressBar,
    mut run: impl FnMut(usize) -> Result<StretchRow, Error>,
) -> Result<(Vec<(f64, f64)>, f64), Error> {
    let mut pts = Vec::new();
    let mut at8 = f64::NAN;
    for &it in stretch_iters {
        let row = match or_note(run(it))? {
            Ok(row) => row,
            Err(note) => StretchRow::new(a, name, it, RunFigures::unmeasured(note)),
        };
        if row.figures.status == "ok" {
            pts.push((it as f64, row.figures.stretch_mean_avg));
            if it == 8 {
                at8 = row.figures.stretch_mean_avg;
            }
        }
        w.srows.row(&row)?;
        pb.inc(1);
    }
    Ok((pts, at8))
}

/// The summary table's row of one measured solver.
fn table_row(name: &str, curve: &[f64], elapsed: &[f64], iters: usize, at8: f64) -> String {
    let to = iterations_to(curve, 0.01);
    format!(
        "| {name} | {:.3e} | {:.3e} | {} | {} | {} |",
        curve[0],
        curve.last().copied().unwrap_or(f64::NAN),
        to.map_or(format!("> {iters}"), |k| k.to_string()),
        to.map_or("-".into(), |k| format!("{:.1}", elapsed[k])),
        if at8.is_nan() {
            "-".into()
        } else {
            format!("{at8:.4}")
        }
    )
}

/// The three plots: residual against iterations and against time, stretch against iterations.
fn plots(
    a: &ConvergeArgs,
    curves: &[(String, Vec<f64>, Vec<f64>)],
    stretch: &[(String, Vec<(f64, f64)>)],
) -> [(PathBuf, Plot, &'static str); 3] {
    // The three share the log residual-or-stretch axis and the legend's corner.
    let plot = |title: String, x_label: &str, y_label: &str, x_log: bool, series| Plot {
        title,
        x_label: x_label.into(),
        y_label: y_label.into(),
        x_log,
        y_log: true,
        legend: Legend::UpperRight,
        series,
        ..Default::default()
    };
    let residual = "constraint residual (RMS C / mean rest length)";
    let by_iter = plot(
        format!("Residual inside one step, {} n={}", a.scene, a.n),
        "iterations in the step",
        residual,
        false,
        curves
            .iter()
            .map(|(n, c, _)| Series::curve(n.clone(), c, c.len()))
            .collect(),
    );
    let by_time = plot(
        format!(
            "Residual against wall time of the step, {} n={}",
            a.scene, a.n
        ),
        "wall time of the whole step with k iterations (µs)",
        residual,
        true,
        curves
            .iter()
            .map(|(n, c, e)| Series::xy(n.clone(), e.iter().copied(), c))
            .collect(),
    );
    let by_stretch = plot(
        format!(
            "Mean stretch over {} steps against iterations, {} n={}",
            a.stretch_steps, a.scene, a.n
        ),
        "iterations per step",
        "mean structural stretch over the run",
        true,
        stretch
            .iter()
            .map(|(n, p)| Series {
                name: n.clone(),
                points: p.clone(),
                ..Default::default()
            })
            .collect(),
    );
    let out = &a.common.out;
    [
        (
            out.join("converge_iterations"),
            by_iter,
            "residual against iteration",
        ),
        (out.join("converge_time"), by_time, "residual against time"),
        (
            out.join("converge_stretch"),
            by_stretch,
            "stretch against iterations",
        ),
    ]
}

/// `wobble converge`: checks the arguments, builds the common state, measures each solver's
/// curves and stretch sweep, then writes the plots and the summary table.
pub fn run(a: &ConvergeArgs) -> Result<Section, Error> {
    let (solvers, stretch_iters) = check_args(a)?;
    let out = &a.common.out;
    let mut sec = Section::new("Convergence inside one step");
    let mut w = Writers::create(out)?;
    sec.add_files(w.paths());
    let base = match or_note(common_state(
        a.scene.name(),
        a.n,
        a.mesh.clone(),
        a.ordering.name(),
        a.warm,
    ))? {
        Ok(b) => b,
        Err(note) => {
            w.notes.record(&["(scene)", "common state", &note])?;
            sec.line(format!("Scene {} n={}: {note}", a.scene, a.n));
            return Ok(sec);
        }
    };
    sec.line(format!(
        "{} n={} ({} vertices, {} constraints), common state after {} warm steps of gs; one step of {} iterations per solver, timing median of {} repetitions per iteration count. Method: see the docs of `crates/harness/src/commands/converge/mod.rs`.",
        a.scene,
        a.n,
        base.len(),
        base.constraints().len(),
        a.warm,
        a.iters,
        a.reps
    ));
    let on_gpu = Backend::open(a.backend)?;
    if let Some(adapter) = on_gpu.adapter() {
        sec.line(format!(
            "Backend: GPU, adapter {adapter}; residuals read back after every iteration; iteration 0 untimed."
        ));
    }
    let pb = progress::bar(solvers.len() * (1 + stretch_iters.len()), "converge");
    let mut curves: Vec<(String, Vec<f64>, Vec<f64>)> = Vec::new();
    let mut stretch: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
    let mut table = vec![
        "| solver | residual before | residual after all | iterations to 1/100 | µs to 1/100 | stretch_mean_avg at 8 it |".to_string(),
        "| --- | --- | --- | --- | --- | --- |".to_string(),
    ];
    for name in &solvers {
        pb.set_message(name.clone());
        let (curve, elapsed) = match on_gpu.solver_curves(a, &base, name, &mut w)? {
            Ok(c) => c,
            Err(note) => {
                progress::note(&pb, &format!("converge: {name}: {note}"));
                table.push(format!("| {name} | {note} | | | | |"));
                pb.inc(1 + stretch_iters.len() as u64);
                continue;
            }
        };
        pb.inc(1);
        let (pts, at8) = on_gpu.stretch_sweep(a, name, &stretch_iters, &mut w, &pb)?;
        table.push(table_row(name, &curve, &elapsed, a.iters, at8));
        stretch.push((name.clone(), pts));
        curves.push((name.clone(), curve, elapsed));
    }
    pb.finish_and_clear();
    for (stem, plot, alt) in &plots(a, &curves, &stretch) {
        sec.add_files(plot.save(stem)?);
        sec.line(format!("\n{}\n", figure(stem, out, alt)));
    }
    sec.line(table.join("\n"));
    sec.line(format!(
        "\nData: {}, {}, {}.",
        link(&out.join("converge.csv"), out),
        link(&out.join("converge_stretch.csv"), out),
        link(&out.join("converge_runs.csv"), out)
    ));
    Ok(sec)
}

/// Where `wobble converge` runs its solvers.
enum Backend {
    /// The CPU solvers of sparse.
    Cpu,
    /// The GPU solvers, on this device.
    #[cfg(feature = "gpu")]
    Gpu(Box<::gpu::Gpu>),
}

impl Backend {
    /// The backend `backend` names (checked by `check_args`), its device opened.
    fn open(backend: BackendArg) -> Result<Backend, Error> {
        match backend {
            #[cfg(feature = "gpu")]
            BackendArg::Gpu => Ok(Backend::Gpu(Box::new(gpu::device()?))),
            _ => Ok(Backend::Cpu),
        }
    }

    /// The adapter's name and driver, on the GPU.
    fn adapter(&self) -> Option<String> {
        match self {
            Backend::Cpu => None,
            #[cfg(feature = "gpu")]
            Backend::Gpu(g) => Some(g.adapter()),
        }
    }

    fn solver_curves(
        &self,
        a: &ConvergeArgs,
        base: &Body,
        name: &str,
        w: &mut Writers,
    ) -> Result<Curves, Error> {
        match self {
            Backend::Cpu => cpu::solver_curves(a, base, name, w),
            #[cfg(feature = "gpu")]
            Backend::Gpu(g) => gpu::solver_curves(g, a, base, name, w),
        }
    }

    fn stretch_sweep(
        &self,
        a: &ConvergeArgs,
        name: &str,
        stretch_iters: &[usize],
        w: &mut Writers,
        pb: &indicatif::ProgressBar,
    ) -> Result<(Vec<(f64, f64)>, f64), Error> {
        stretch_sweep(a, name, stretch_iters, w, pb, |it| match self {
            Backend::Cpu => cpu::stretch_run(a, name, it),
            #[cfg(feature = "gpu")]
            Backend::Gpu(g) => gpu::stretch_run(g, a, name, it),
        })
    }
}
