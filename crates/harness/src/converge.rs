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

use crate::csv::RowWriter;
use crate::plot::{Legend, Plot, Series};
use crate::progress;
use crate::section::{figure, link, Section};
use crate::setup::{
    all_solvers_csv, build_body, build_solver, check_mesh, check_scene, check_size, or_note,
    parse_counts, parse_solvers, Common, Error, Tuning,
};
use crate::sim::{RunFigures, Sim, Spec, FIGURE_COLUMNS};
use crate::stats::quantile;
use clap::Args;
use serde::Serialize;
use solver_core::{step, Body, SolveState, Solver, StepParams};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Arguments of `wobble converge`.
#[derive(Args, Debug, Clone)]
pub struct ConvergeArgs {
    /// Scene: cloth, rope, flag, jelly, cube or mesh.
    #[arg(long, default_value = "cloth")]
    pub scene: String,
    /// Size parameter (grid side; subdivision level for jelly).
    #[arg(long, default_value_t = 23)]
    pub n: usize,
    /// Mesh file for the mesh scene.
    #[arg(long)]
    pub mesh: Option<PathBuf>,
    /// Comma-separated solver names.
    #[arg(long, default_value_t = all_solvers_csv())]
    pub solvers: String,
    /// Iterations of the measured step.
    #[arg(long, default_value_t = 50)]
    pub iters: usize,
    /// Warm-up steps (reference Gauss-Seidel) before the common state is taken.
    #[arg(long, default_value_t = 10)]
    pub warm: usize,
    /// Repetitions of each timing (median taken).
    #[arg(long, default_value_t = 5)]
    pub reps: usize,
    /// Iteration counts for the stretch-over-a-run figure.
    #[arg(long, default_value = "1,2,4,8,16,32")]
    pub stretch_iters: String,
    /// Steps of each stretch run (from rest).
    #[arg(long, default_value_t = 120)]
    pub stretch_steps: usize,
    /// Rayon threads for parallel solvers.
    #[arg(long, default_value_t = 1)]
    pub threads: usize,
    /// Where the solvers run: `cpu`, or `gpu` (colored, jacobi and chebyshev on the first
    /// adapter; the residuals are read back after every iteration).
    #[arg(long, default_value = "cpu")]
    pub backend: String,
    /// Particle ordering.
    #[arg(long, default_value = "natural")]
    pub ordering: String,
    /// The solvers' tuning and the output directory.
    #[command(flatten)]
    pub common: Common,
}

/// The fixed layout of converge.csv.
pub const CONVERGE_HEADER: &[&str] = &[
    "scene",
    "n",
    "solver",
    "iteration",
    "residual",
    "elapsed_us",
];

/// One row of converge.csv.
#[derive(Serialize, Debug, Clone)]
pub struct ConvergeRow {
    /// Scene name.
    pub scene: String,
    /// Size parameter of the scene.
    pub n: usize,
    /// Solver name.
    pub solver: String,
    /// Iterations done in the step (0: the predicted positions, before any iteration).
    pub iteration: usize,
    /// Residual after `iteration` iterations: RMS of C over the mean rest length.
    pub residual: f64,
    /// Time of one step with `iteration` iterations, median over `--reps`, in µs (NaN: untimed).
    pub elapsed_us: f64,
}

/// One row of converge_stretch.csv.
#[derive(Serialize, Debug, Clone)]
pub struct StretchRow {
    /// Scene name.
    pub scene: String,
    /// Size parameter of the scene.
    pub n: usize,
    /// Solver name.
    pub solver: String,
    /// Solver iterations per step.
    pub iterations: usize,
    /// Steps, stretch, the median step time over the run, and status.
    pub figures: RunFigures,
}

/// A solver that does nothing: the step loop around it predicts, projects contacts and
/// updates velocities, which gives the residual and the cost of a step before any iteration.
#[derive(Debug, Default)]
pub struct NoSolve;

impl Solver for NoSolve {
    fn name(&self) -> String {
        "none".into()
    }
    fn iterate(&mut self, _: &mut SolveState, _: usize) {}
}

/// The common state: `warm` steps of the reference Gauss-Seidel at docs/SCENES.md defaults.
pub fn common_state(
    scene: &str,
    n: usize,
    mesh: Option<PathBuf>,
    ordering: &str,
    warm: usize,
) -> Result<Body, Error> {
    let (mut body, _) = build_body(scene, n, mesh, ordering)?;
    let mut gs = solver_core::GaussSeidel::new();
    let params = StepParams::default();
    for _ in 0..warm {
        step(&mut body, &params, &mut gs, None)?;
    }
    Ok(body)
}

fn params(iterations: usize) -> StepParams {
    StepParams {
        iterations,
        ..Default::default()
    }
}

/// Residuals of one step from `base`: index 0 before any iteration, then after each of
/// `iters` iterations of `solver`.
///
/// The solver first takes one untimed step from a throwaway copy of `base`, so that what it
/// does once per topology (`prepare`) or in its first substep (Chebyshev's spectral-radius
/// probe) is behind it, as it would be in the middle of a run.
pub fn residual_curve(
    base: &Body,
    solver: &mut dyn Solver,
    iters: usize,
) -> Result<Vec<f64>, Error> {
    step(&mut base.clone(), &params(iters), solver, None)?;
    let r0 = residual_before(base)?;
    let mut r = Vec::with_capacity(iters);
    step(&mut base.clone(), &params(iters), solver, Some(&mut r))?;
    Ok(std::iter::once(r0)
        .chain(r.into_iter().map(f64::from))
        .collect())
}

/// The residual of the positions one step from `base` predicts (contacts projected), before
/// any solver iteration: iteration 0 of every residual curve.
pub fn residual_before(base: &Body) -> Result<f64, Error> {
    let mut r0 = Vec::new();
    step(&mut base.clone(), &params(1), &mut NoSolve, Some(&mut r0))?;
    Ok(r0[0] as f64)
}

/// Wall time in µs of one whole step from `base` with k = 0..=iters iterations, median over
/// `reps` (k = 0 runs the step with no solver work).
pub fn elapsed_curve(
    base: &Body,
    solver: &mut dyn Solver,
    iters: usize,
    reps: usize,
) -> Result<Vec<f64>, Error> {
    let mut none = NoSolve;
    // Untimed first calls: solvers build their structures in `prepare`, once per topology.
    step(&mut base.clone(), &params(1), solver, None)?;
    step(&mut base.clone(), &params(1), &mut none, None)?;
    let mut times = vec![Vec::with_capacity(reps); iters + 1];
    for _ in 0..reps.max(1) {
        for (k, t) in times.iter_mut().enumerate() {
            let mut b = base.clone();
            let t0 = Instant::now();
            if k == 0 {
                step(&mut b, &params(1), &mut none, None)?;
            } else {
                step(&mut b, &params(k), solver, None)?;
            }
            t.push(t0.elapsed().as_secs_f64() * 1e6);
        }
    }
    Ok(times.iter().map(|t| quantile(t, 0.5)).collect())
}

/// Iterations needed to bring the residual to `factor` times its value before the first
/// iteration (`None` when the curve never gets there).
pub fn iterations_to(curve: &[f64], factor: f64) -> Option<usize> {
    let r0 = *curve.first()?;
    let target = r0 * factor;
    curve
        .iter()
        .skip(1)
        .position(|&r| r <= target)
        .map(|p| p + 1)
}

/// The checked lists of `wobble converge`'s arguments: solvers and stretch iteration counts.
fn check_args(a: &ConvergeArgs) -> Result<(Vec<String>, Vec<usize>), Error> {
    check_scene(&a.scene)?;
    check_size(&a.scene, a.n)?;
    check_mesh(&a.scene, &a.mesh)?;
    let solvers = parse_solvers(&a.solvers)?;
    let stretch_iters = parse_counts(&a.stretch_iters, "stretch-iters")?;
    if a.iters == 0 || a.iters > 10_000 {
        return Err(Error::Arg("--iters must be in 1..=10000".into()));
    }
    if a.threads == 0 {
        return Err(Error::Arg("--threads must be at least 1".into()));
    }
    match a.backend.as_str() {
        "cpu" => {}
        "gpu" => {
            if !cfg!(feature = "gpu") {
                return Err(Error::Arg(
                    "--backend gpu: this wobble was built without the `gpu` feature".into(),
                ));
            }
            if let Some(s) = solvers.iter().find(|s| !GPU_SOLVERS.contains(&s.as_str())) {
                return Err(Error::Arg(format!(
                    "--backend gpu runs {}; '{s}' runs on the CPU only",
                    GPU_SOLVERS.join(", ")
                )));
            }
        }
        other => {
            return Err(Error::Arg(format!(
                "unknown --backend '{other}'; expected cpu or gpu"
            )))
        }
    }
    a.common.tuning.check()?;
    Ok((solvers, stretch_iters))
}

/// A solver's residual and elapsed-time curves, or the note of why it refused the body.
pub(crate) type Curves = Result<(Vec<f64>, Vec<f64>), String>;

/// The solvers `--backend gpu` runs (the GPU crate's names, known without it).
const GPU_SOLVERS: [&str; 3] = ["colored", "jacobi", "chebyshev"];

/// The three CSVs `wobble converge` writes.
pub(crate) struct Writers {
    /// converge.csv: residual and time per iteration.
    pub(crate) rows: RowWriter,
    /// converge_runs.csv: what ran and what was refused.
    pub(crate) notes: RowWriter,
    /// converge_stretch.csv: stretch against iterations.
    pub(crate) srows: RowWriter,
}

impl Writers {
    fn create(out: &Path) -> Result<Writers, Error> {
        Ok(Writers {
            rows: RowWriter::create(&out.join("converge.csv"), CONVERGE_HEADER)?,
            notes: RowWriter::create(
                &out.join("converge_runs.csv"),
                &["solver", "part", "status"],
            )?,
            srows: RowWriter::create(
                &out.join("converge_stretch.csv"),
                &[&["scene", "n", "solver", "iterations"][..], &FIGURE_COLUMNS].concat(),
            )?,
        })
    }

    fn paths(&self) -> [PathBuf; 3] {
        [
            self.rows.path().into(),
            self.notes.path().into(),
            self.srows.path().into(),
        ]
    }
}

/// One solver's residual and elapsed-time curves from `base`, written to converge.csv; `Err`
/// with the note when the solver refuses the body.
fn solver_curves(
    a: &ConvergeArgs,
    base: &Body,
    name: &str,
    w: &mut Writers,
) -> Result<Curves, Error> {
    let mut solver = match or_note(build_solver(name, &a.common.tuning.options(a.threads)))? {
        Ok(s) => s,
        Err(note) => {
            w.notes.record(&[name, "all", &note])?;
            return Ok(Err(note));
        }
    };
    let curve = match or_note(residual_curve(base, solver.as_mut(), a.iters))? {
        Ok(c) => c,
        Err(note) => {
            w.notes.record(&[name, "residual", &note])?;
            return Ok(Err(note));
        }
    };
    let elapsed = match or_note(elapsed_curve(base, solver.as_mut(), a.iters, a.reps))? {
        Ok(e) => e,
        Err(note) => {
            w.notes.record(&[name, "timing", &note])?;
            vec![f64::NAN; curve.len()]
        }
    };
    w.curves(a, name, &curve, &elapsed, "ok")?;
    Ok(Ok((curve, elapsed)))
}

impl Writers {
    /// Writes one solver's curves to converge.csv and `note` to converge_runs.csv.
    pub(crate) fn curves(
        &mut self,
        a: &ConvergeArgs,
        name: &str,
        curve: &[f64],
        elapsed: &[f64],
        note: &str,
    ) -> Result<(), Error> {
        for (k, (&r, &t)) in curve.iter().zip(elapsed).enumerate() {
            self.rows.row(&ConvergeRow {
                scene: a.scene.clone(),
                n: a.n,
                solver: name.to_string(),
                iteration: k,
                residual: r,
                elapsed_us: t,
            })?;
        }
        self.notes.record(&[name, "residual", note])
    }
}

impl StretchRow {
    /// The row of a run of `name` at `iterations` with its `figures`.
    pub(crate) fn new(
        a: &ConvergeArgs,
        name: &str,
        iterations: usize,
        figures: RunFigures,
    ) -> Self {
        StretchRow {
            scene: a.scene.clone(),
            n: a.n,
            solver: name.to_string(),
            iterations,
            figures,
        }
    }
}

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

/// One stretch run of CPU solver `name` at `it` iterations from rest: the mean stretch over
/// `--stretch-steps` steps.
fn stretch_run(a: &ConvergeArgs, name: &str, it: usize) -> Result<StretchRow, Error> {
    let mut spec = Spec::new(&a.scene, a.n, name).iterations(it);
    spec.mesh = a.mesh.clone();
    spec.ordering = a.ordering.clone();
    spec.threads = a.threads;
    spec.tuning = a.common.tuning.clone();
    let t = Sim::new(&spec)?.run(a.stretch_steps);
    Ok(StretchRow::new(a, name, it, RunFigures::of(&t, 0)))
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
        &a.scene,
        a.n,
        a.mesh.clone(),
        &a.ordering,
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
        "{} n={} ({} vertices, {} constraints), common state after {} warm steps of gs; one step of {} iterations per solver, timing median of {} repetitions per iteration count. Method: see `converge.rs` docs.",
        a.scene,
        a.n,
        base.len(),
        base.constraints.len(),
        a.warm,
        a.iters,
        a.reps
    ));
    let on_gpu = Backend::open(&a.backend)?;
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
    Gpu(Box<gpu::Gpu>),
}

impl Backend {
    /// The backend `name` names (checked by `check_args`), its device opened.
    fn open(name: &str) -> Result<Backend, Error> {
        match name {
            #[cfg(feature = "gpu")]
            "gpu" => Ok(Backend::Gpu(Box::new(crate::converge_gpu::device()?))),
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
            Backend::Cpu => solver_curves(a, base, name, w),
            #[cfg(feature = "gpu")]
            Backend::Gpu(g) => crate::converge_gpu::solver_curves(g, a, base, name, w),
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
            Backend::Cpu => stretch_run(a, name, it),
            #[cfg(feature = "gpu")]
            Backend::Gpu(g) => crate::converge_gpu::stretch_run(g, a, name, it),
        })
    }
}

/// Convenience for claims: the residual curve of `solver` from a common state.
pub fn curve_for(
    base: &Body,
    solver: &str,
    tuning: &Tuning,
    threads: usize,
    iters: usize,
) -> Result<Result<Vec<f64>, String>, Error> {
    let s = or_note(build_solver(solver, &tuning.options(threads)))?;
    match s {
        Ok(mut s) => or_note(residual_curve(base, s.as_mut(), iters)),
        Err(note) => Ok(Err(note)),
    }
}

/// Writes residual curves as converge.csv rows (elapsed left empty as NaN) into `path`.
pub fn write_curves(
    path: &Path,
    scene: &str,
    n: usize,
    curves: &[(String, Vec<f64>)],
) -> Result<(), Error> {
    let mut w = RowWriter::create(path, CONVERGE_HEADER)?;
    for (name, c) in curves {
        for (k, &r) in c.iter().enumerate() {
            w.row(&ConvergeRow {
                scene: scene.to_string(),
                n,
                solver: name.clone(),
                iteration: k,
                residual: r,
                elapsed_us: f64::NAN,
            })?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::csv::header_of;

    #[test]
    fn converge_row_matches_the_fixed_layout() {
        let r = ConvergeRow {
            scene: "cloth".into(),
            n: 2,
            solver: "gs".into(),
            iteration: 0,
            residual: 0.0,
            elapsed_us: 0.0,
        };
        assert_eq!(header_of(&r), CONVERGE_HEADER);
    }

    #[test]
    fn gauss_seidel_lowers_the_residual_from_the_common_state() {
        let base = common_state("cloth", 8, None, "natural", 3).unwrap();
        let mut gs = solver_core::GaussSeidel::new();
        let c = residual_curve(&base, &mut gs, 10).unwrap();
        assert_eq!(c.len(), 11);
        assert!(c[10] < c[0], "{c:?}");
        // Same state, same solver: the same curve (the common state is not disturbed).
        let c2 = residual_curve(&base, &mut gs, 10).unwrap();
        assert_eq!(c, c2);
        let e = elapsed_curve(&base, &mut gs, 4, 2).unwrap();
        assert_eq!(e.len(), 5);
        assert!(e.iter().all(|t| t.is_finite() && *t > 0.0));
        assert_eq!(iterations_to(&[1.0, 0.5, 0.009, 0.001], 0.01), Some(2));
        assert_eq!(iterations_to(&[1.0, 0.5], 0.01), None);
    }
}
