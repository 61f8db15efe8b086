//! Sweeps of `wobble step` child processes, one per point, shared by `wobble scale`, `cache`,
//! `gpu` and the cost claims: the time budget, the points, the rows of scale.csv (and
//! cache.csv), the cache markers of the working-set model, and the tables and lines drawn
//! from the rows.
//!
//! Every point runs as a child process (`wobble step ... --json`, the running executable), so
//! that `peak_rss_mb` is that run's own peak resident set size (the kernel's `ru_maxrss` of
//! the child) rather than the high-water mark of a process that already ran a larger size.
//!
//! Steps per point. docs/SCENES.md times 100 steps after 20 warm-up steps; large bodies would make
//! a sweep take hours, so each point gets as many timed steps as fit in `--target-s` seconds
//! (estimated from the previous size of the same series, linearly in vertices), clamped to
//! `--min-steps..=--steps`, and a fifth of that as warm-up (at most `--warmup`).
//! `*_runs.csv` records the warm-up and timed steps of every point.
//!
//! Working-set model (for the cache markers): one solver iteration touches every position
//! (16 B: xyz + inverse mass) and, per distance constraint, its particle pair (8 B), rest
//! length (4 B), compliance (4 B) and multiplier λ (4 B): 16 V + 20 C bytes. Solver-specific
//! tables (colors, CSR patterns) come on top, so the marks are lower bounds on where each
//! level overflows. Cache sizes are read from the machine (see `machine`).

use crate::measure::child;
use crate::measure::machine::{human_bytes, Machine};
use crate::measure::step::StepReport;
use crate::output::csv::RowWriter;
use crate::output::plot::{Marker, Series};
use crate::setup::{Error, Tuning};
use clap::Args;
use serde::{Deserialize, Serialize};
use sparse::Ordering;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// How long a sweep may take.
#[derive(Args, Debug, Clone)]
pub struct Budget {
    /// Most timed steps per point (docs/SCENES.md: 100).
    #[arg(long, default_value_t = 100)]
    pub steps: usize,
    /// Fewest timed steps per point.
    #[arg(long, default_value_t = 5)]
    pub min_steps: usize,
    /// Most warm-up steps per point (docs/SCENES.md: 20).
    #[arg(long, default_value_t = 20)]
    pub warmup: usize,
    /// Seconds of timed steps aimed at per point.
    #[arg(long, default_value_t = 1.0)]
    pub target_s: f64,
    /// A point running longer than this many seconds is killed (and larger sizes of its series skipped).
    #[arg(long, default_value_t = 60.0)]
    pub timeout_s: f64,
    /// Stop starting new points after this many seconds in all (0 = no limit).
    #[arg(long, default_value_t = 0.0)]
    pub budget_s: f64,
}

impl Default for Budget {
    fn default() -> Self {
        Budget {
            steps: 100,
            min_steps: 5,
            warmup: 20,
            target_s: 1.0,
            timeout_s: 60.0,
            budget_s: 0.0,
        }
    }
}

impl Budget {
    /// Checks the values.
    pub fn check(&self) -> Result<(), Error> {
        if self.steps == 0 || self.min_steps == 0 || self.min_steps > self.steps {
            return Err(Error::Arg(
                "--steps and --min-steps must be >= 1 with --min-steps <= --steps".into(),
            ));
        }
        for (name, v) in [
            ("target-s", self.target_s),
            ("timeout-s", self.timeout_s),
            ("budget-s", self.budget_s),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(Error::Arg(format!(
                    "--{name} = {v} must be finite and >= 0"
                )));
            }
        }
        if self.timeout_s == 0.0 {
            return Err(Error::Arg("--timeout-s must be > 0".into()));
        }
        Ok(())
    }
}

/// The fixed layout of scale.csv (and cache.csv).
pub const SCALE_HEADER: &[&str] = &[
    "scene",
    "n",
    "vertices",
    "constraints",
    "solver",
    "threads",
    "iterations",
    "substeps",
    "ordering",
    "ms_per_step_median",
    "ms_per_step_p10",
    "ms_per_step_p90",
    "ns_per_projection",
    "stretch_mean_avg",
    "peak_rss_mb",
    "backend",
];

/// One row of scale.csv.
#[derive(Serialize, Deserialize, Debug, Clone)]
pub struct ScaleRow {
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
    /// Threads the solver ran on (1 for serial solvers).
    pub threads: usize,
    /// Solver iterations per substep.
    pub iterations: usize,
    /// Substeps per step.
    pub substeps: usize,
    /// Particle ordering.
    pub ordering: String,
    /// Median step time over the timed steps, in ms.
    pub ms_per_step_median: f64,
    /// 10th percentile of the step time, in ms.
    pub ms_per_step_p10: f64,
    /// 90th percentile of the step time, in ms.
    pub ms_per_step_p90: f64,
    /// Median step time per projection (constraints x iterations x substeps a step), in ns.
    pub ns_per_projection: f64,
    /// Mean structural stretch averaged over every step, warm-up included, as a fraction.
    pub stretch_mean_avg: f64,
    /// Peak resident set size of the child process that ran the point, in MiB.
    pub peak_rss_mb: f64,
    /// Where the point ran: `cpu` or `gpu`.
    #[serde(default = "cpu_backend")]
    pub backend: String,
}

/// The backend of a row that names none (written before backends existed).
fn cpu_backend() -> String {
    "cpu".into()
}

/// Header of the `*_runs.csv` file beside a sweep: what ran, how long, and how it ended.
pub const RUNS_HEADER: &[&str] = &[
    "scene", "n", "solver", "threads", "ordering", "warmup", "steps", "wall_s", "backend", "status",
];

/// One point of a sweep.
#[derive(Debug, Clone)]
pub struct Point {
    /// Scene name.
    pub scene: String,
    /// Size parameter of the scene.
    pub n: usize,
    /// Solver name.
    pub solver: String,
    /// Thread count asked for (the child's `--threads`).
    pub threads: usize,
    /// Solver iterations per substep.
    pub iterations: usize,
    /// Substeps per step.
    pub substeps: usize,
    /// Particle ordering.
    pub ordering: String,
    /// Backend: `cpu` or `gpu`.
    pub backend: String,
}

/// What the sweep remembers per series: solver, threads, ordering, backend.
type SeriesKey = (String, usize, String, String);

impl Point {
    /// The series this point belongs to.
    fn series(&self) -> SeriesKey {
        (
            self.solver.clone(),
            self.threads,
            self.ordering.clone(),
            self.backend.clone(),
        )
    }
}

/// Vertex count of a scene at size `n` (an estimate for meshes), for step-count planning.
pub fn estimate_vertices(scene: &str, n: usize) -> f64 {
    let n = n as f64;
    match scene {
        "cloth" => n * n,
        "rope" => n,
        "flag" => (2.0 * n - 1.0) * n,
        "jelly" => 10.0 * 4f64.powf(n) + 2.0,
        "cube" => (n + 1.0).powi(3),
        _ => 1000.0,
    }
}

/// Per-iteration working set in bytes of a body with `v` vertices and `c` constraints.
pub fn working_set_bytes(v: f64, c: f64) -> f64 {
    16.0 * v + 20.0 * c
}

/// Vertex count at which the working set fills `cache` bytes, for `c_per_v` constraints per vertex.
pub fn threshold_vertices(cache: u64, c_per_v: f64) -> f64 {
    cache as f64 / working_set_bytes(1.0, c_per_v)
}

/// The L1/L2/L3 markers for a plot against vertex count.
pub fn cache_markers(m: &Machine, c_per_v: f64) -> Vec<Marker> {
    (1..=3)
        .filter_map(|l| {
            m.data_cache(l).map(|b| Marker {
                x: threshold_vertices(b, c_per_v),
                label: format!("L{l} {}", human_bytes(b)),
            })
        })
        .collect()
}

/// Runs points as `wobble step` children, writing rows and run records as they finish.
pub struct Sweep {
    rows: RowWriter,
    runs: RowWriter,
    exe: PathBuf,
    budget: Budget,
    tuning: Tuning,
    started: Instant,
    last: HashMap<SeriesKey, Vec<(f64, f64)>>,
    dead: HashMap<SeriesKey, String>,
    refused: HashMap<SeriesKey, Option<String>>,
    /// Rows measured so far.
    pub measured: Vec<ScaleRow>,
    /// (point, note) of every point that produced no row.
    pub skipped: Vec<(Point, String)>,
}

impl Sweep {
    /// Creates `<stem>.csv` and `<stem>_runs.csv` in `out`.
    pub fn create(out: &Path, stem: &str, budget: &Budget, tuning: &Tuning) -> Result<Self, Error> {
        let rows = RowWriter::create(&out.join(format!("{stem}.csv")), SCALE_HEADER)?;
        let runs = RowWriter::create(&out.join(format!("{stem}_runs.csv")), RUNS_HEADER)?;
        let exe = child::wobble_exe()
            .map_err(|e| Error::Io(format!("cannot find the wobble executable: {e}")))?;
        Ok(Sweep {
            rows,
            runs,
            exe,
            budget: budget.clone(),
            tuning: tuning.clone(),
            started: Instant::now(),
            last: HashMap::new(),
            dead: HashMap::new(),
            refused: HashMap::new(),
            measured: Vec::new(),
            skipped: Vec::new(),
        })
    }

    /// The two files written.
    pub fn files(&self) -> Vec<PathBuf> {
        vec![
            self.rows.path().to_path_buf(),
            self.runs.path().to_path_buf(),
        ]
    }

    /// Why the library refuses this (solver, threads, ordering), checked once in-process;
    /// also skips thread counts above 1 for serial solvers.
    fn refusal(&mut self, p: &Point) -> Option<String> {
        let key = p.series();
        if let Some(r) = self.refused.get(&key) {
            return r.clone();
        }
        let r = match p.ordering.parse::<Ordering>() {
            _ if p.backend == "gpu" => gpu_refusal(p),
            Err(e) => Some(format!(
                "unsupported here: {}",
                strip_unsupported(&e.to_string())
            )),
            Ok(_) => match self.tuning.build_named(&p.solver, p.threads) {
                Err(e) => Some(format!(
                    "unsupported here: {}",
                    strip_unsupported(&e.to_string())
                )),
                Ok(s) if p.threads > 1 && s.report().threads == 1 => Some(format!(
                    "skipped: {} is serial; its threads = 1 row covers it",
                    p.solver
                )),
                Ok(_) => None,
            },
        };
        self.refused.insert(key, r.clone());
        r
    }

    fn record_run(
        &mut self,
        p: &Point,
        warmup: usize,
        steps: usize,
        wall: f64,
        status: &str,
    ) -> Result<(), Error> {
        self.runs.record(&[
            p.scene.clone(),
            p.n.to_string(),
            p.solver.clone(),
            p.threads.to_string(),
            p.ordering.clone(),
            warmup.to_string(),
            steps.to_string(),
            format!("{wall:.3}"),
            p.backend.clone(),
            status.to_string(),
        ])
    }

    fn skip(&mut self, p: &Point, note: String) -> Result<(), Error> {
        self.record_run(p, 0, 0, 0.0, &note)?;
        self.skipped.push((p.clone(), note));
        Ok(())
    }

    /// Runs one point; `Ok(None)` when it was skipped or refused (recorded in the runs file).
    pub fn point(&mut self, p: &Point) -> Result<Option<ScaleRow>, Error> {
        let key = p.series();
        if let Some(note) = self.refusal(p) {
            self.skip(p, note)?;
            return Ok(None);
        }
        if let Some(why) = self.dead.get(&key).cloned() {
            self.skip(p, format!("skipped: {why}"))?;
            return Ok(None);
        }
        if self.budget.budget_s > 0.0 && self.started.elapsed().as_secs_f64() > self.budget.budget_s
        {
            self.skip(
                p,
                format!(
                    "skipped: the sweep's budget of {:.0} s was spent",
                    self.budget.budget_s
                ),
            )?;
            return Ok(None);
        }
        let v = estimate_vertices(&p.scene, p.n);
        let est_ms = self
            .last
            .get(&key)
            .map(|seen| extrapolate(seen, v))
            .unwrap_or(v * 3.0 * (p.iterations * p.substeps) as f64 * 20e-6);
        let b = &self.budget;
        let steps =
            ((b.target_s * 1e3 / est_ms.max(1e-6)).round() as usize).clamp(b.min_steps, b.steps);
        let warmup = (steps / 5).clamp(1, b.warmup.max(1));
        // A point that would surely run past the time limit is not started (it would only
        // burn the limit and be killed).
        let est_s = est_ms * (steps + warmup) as f64 / 1e3;
        if est_s > 2.0 * b.timeout_s {
            self.dead
                .insert(key, format!("n = {} was estimated at {est_s:.0} s", p.n));
            self.skip(
                p,
                format!(
                    "skipped: estimated {est_s:.0} s for {} steps, past the {:.0} s limit",
                    steps + warmup,
                    b.timeout_s
                ),
            )?;
            return Ok(None);
        }
        let mut cmd = Command::new(&self.exe);
        cmd.arg("step")
            .args(["--scene", &p.scene])
            .args(["--n", &p.n.to_string()])
            .args(["--solver", &p.solver])
            .args(["--iterations", &p.iterations.to_string()])
            .args(["--substeps", &p.substeps.to_string()])
            .args(["--threads", &p.threads.to_string()])
            .args(["--ordering", &p.ordering])
            .args(["--warmup", &warmup.to_string()])
            .args(["--steps", &steps.to_string()])
            .args(["--omega", &self.tuning.omega.to_string()])
            .args(["--inner", &self.tuning.inner.to_string()])
            .args(["--kernel", self.tuning.kernel.name()])
            .args(["--backend", &p.backend])
            .arg("--json");
        let outcome = child::run(cmd, Duration::from_secs_f64(self.budget.timeout_s))
            .map_err(|e| Error::Io(format!("cannot run {}: {e}", self.exe.display())))?;
        if !outcome.ok() {
            let msg = outcome.failure();
            let note = if let Some(rest) = msg.strip_prefix("unsupported: ") {
                format!("unsupported here: {rest}")
            } else if outcome.exit == child::Exit::TimedOut {
                self.dead.insert(key, format!("n = {} timed out", p.n));
                msg
            } else {
                format!("failed: {msg}")
            };
            self.record_run(p, warmup, steps, outcome.wall_s, &note)?;
            self.skipped.push((p.clone(), note));
            return Ok(None);
        }
        let rep: StepReport = serde_json::from_str(outcome.stdout.trim()).map_err(|e| {
            Error::Io(format!(
                "wobble step printed something that is not its JSON report: {e}"
            ))
        })?;
        let row = ScaleRow {
            scene: rep.scene,
            n: rep.n,
            vertices: rep.vertices,
            constraints: rep.constraints,
            solver: rep.solver,
            threads: rep.threads,
            iterations: rep.iterations,
            substeps: rep.substeps,
            ordering: rep.ordering,
            ms_per_step_median: rep.ms_per_step_median,
            ms_per_step_p10: rep.ms_per_step_p10,
            ms_per_step_p90: rep.ms_per_step_p90,
            ns_per_projection: rep.ns_per_projection,
            stretch_mean_avg: rep.stretch_mean_avg,
            peak_rss_mb: outcome.peak_rss_mb,
            backend: rep.backend,
        };
        self.rows.row(&row)?;
        let status = if rep.finite {
            "ok"
        } else {
            "ok (state not finite)"
        };
        self.record_run(p, warmup, steps, outcome.wall_s, status)?;
        self.last
            .entry(key)
            .or_default()
            .push((row.vertices as f64, row.ms_per_step_median));
        self.measured.push(row.clone());
        Ok(Some(row))
    }
}

/// Why the GPU backend does not run point `p` (`None` when it does): a solver it lacks, a
/// thread count above 1 (it runs no CPU threads), a build without the `gpu` feature.
fn gpu_refusal(p: &Point) -> Option<String> {
    if !cfg!(feature = "gpu") {
        return Some("unsupported here: this wobble was built without the `gpu` feature".into());
    }
    #[cfg(feature = "gpu")]
    if let Err(e) = gpu::GpuSolver::parse(&p.solver) {
        return Some(format!("unsupported here: {e}"));
    }
    (p.threads > 1).then(|| {
        "skipped: the GPU backend runs no CPU threads; its threads = 1 row covers it".into()
    })
}

/// The series label of a row: solver and threads, or solver and `gpu`.
pub fn series_label(r: &ScaleRow) -> String {
    if r.backend == "gpu" {
        format!("{} gpu", r.solver)
    } else {
        format!("{} t={}", r.solver, r.threads)
    }
}

/// Step time in ms at `v` vertices from the sizes measured so far: a power law through the
/// last two (exponent clamped to 1..=3), linear from a single one.
pub fn extrapolate(seen: &[(f64, f64)], v: f64) -> f64 {
    match seen {
        [] => f64::NAN,
        [(v0, ms0)] => ms0 * v / v0,
        [.., (v1, ms1), (v2, ms2)] => {
            let p = if v2 > v1 && *ms1 > 0.0 && *ms2 > 0.0 {
                ((ms2 / ms1).ln() / (v2 / v1).ln()).clamp(1.0, 3.0)
            } else {
                1.0
            };
            ms2 * (v / v2).powf(p)
        }
    }
}

fn strip_unsupported(s: &str) -> String {
    s.strip_prefix("unsupported: ").unwrap_or(s).to_string()
}

/// A Markdown table of `value(row)` by vertex count (rows) and series (columns).
pub fn pivot(
    rows: &[ScaleRow],
    series: impl Fn(&ScaleRow) -> String,
    value: impl Fn(&ScaleRow) -> f64,
    unit: &str,
) -> String {
    let mut cols: Vec<String> = Vec::new();
    let mut sizes: Vec<(usize, usize)> = Vec::new();
    for r in rows {
        let s = series(r);
        if !cols.contains(&s) {
            cols.push(s);
        }
        if !sizes.contains(&(r.vertices, r.n)) {
            sizes.push((r.vertices, r.n));
        }
    }
    sizes.sort();
    let mut t = format!(
        "| vertices (n) | {} |\n| --- |{}\n",
        cols.join(" | "),
        " --- |".repeat(cols.len())
    );
    for (v, n) in sizes {
        let cells: Vec<String> = cols
            .iter()
            .map(|c| {
                rows.iter()
                    .find(|r| r.vertices == v && r.n == n && &series(r) == c)
                    .map_or("-".into(), |r| format!("{:.4}", value(r)))
            })
            .collect();
        t.push_str(&format!("| {v} ({n}) | {} |\n", cells.join(" | ")));
    }
    t.push_str(&format!("\n(values in {unit})\n"));
    t
}

/// Lines of `value` against vertices, one per distinct `key(row)` = (legend, palette index,
/// dashed), points sorted by vertex count.
pub fn lines(
    rows: &[ScaleRow],
    key: impl Fn(&ScaleRow) -> (String, usize, bool),
    value: impl Fn(&ScaleRow) -> f64,
) -> Vec<Series> {
    let mut out: Vec<Series> = Vec::new();
    for r in rows {
        let (name, color, dashed) = key(r);
        let p = (r.vertices as f64, value(r));
        match out.iter_mut().find(|s| s.name == name) {
            Some(s) => s.points.push(p),
            None => out.push(Series {
                name,
                points: vec![p],
                dashed,
                color: Some(color),
            }),
        }
    }
    for s in &mut out {
        s.points.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    out
}

/// Lines per (solver, threads, backend): color by solver, dashed above one thread and on the
/// GPU.
pub fn by_solver_threads<'a>(
    solvers: &'a [String],
) -> impl Fn(&ScaleRow) -> (String, usize, bool) + 'a {
    move |r| {
        (
            series_label(r),
            solvers.iter().position(|x| x == &r.solver).unwrap_or(0),
            r.threads > 1 || r.backend == "gpu",
        )
    }
}

/// One line per distinct note with the points it concerns.
pub fn skipped_summary(skipped: &[(Point, String)]) -> String {
    let mut groups: Vec<(String, Vec<String>)> = Vec::new();
    for (p, note) in skipped {
        let gpu = if p.backend == "gpu" { " gpu" } else { "" };
        let what = format!("{} t={}{gpu} {} n={}", p.solver, p.threads, p.ordering, p.n);
        match groups.iter_mut().find(|g| &g.0 == note) {
            Some(g) => g.1.push(what),
            None => groups.push((note.clone(), vec![what])),
        }
    }
    groups
        .iter()
        .map(|(note, pts)| {
            let shown: Vec<&String> = pts.iter().take(6).collect();
            let more = if pts.len() > 6 {
                format!(" and {} more", pts.len() - 6)
            } else {
                String::new()
            };
            format!(
                "- {note} ({}{more})",
                shown
                    .iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::csv::header_of;

    #[test]
    fn scale_row_matches_the_fixed_layout() {
        let r = ScaleRow {
            scene: "cloth".into(),
            n: 2,
            vertices: 4,
            constraints: 5,
            solver: "gs".into(),
            threads: 1,
            iterations: 8,
            substeps: 1,
            ordering: "natural".into(),
            ms_per_step_median: 0.0,
            ms_per_step_p10: 0.0,
            ms_per_step_p90: 0.0,
            ns_per_projection: 0.0,
            stretch_mean_avg: 0.0,
            peak_rss_mb: 0.0,
            backend: "cpu".into(),
        };
        assert_eq!(header_of(&r), SCALE_HEADER);
    }

    #[test]
    fn step_time_extrapolates_by_the_last_two_sizes() {
        assert_eq!(extrapolate(&[(100.0, 1.0)], 400.0), 4.0);
        // Quadratic growth between the last two sizes continues.
        let e = extrapolate(&[(10.0, 9.0), (100.0, 1.0), (200.0, 4.0)], 400.0);
        assert!((e - 16.0).abs() < 1e-9, "{e}");
        // Faster than cubic is clamped to cubic; sublinear to linear.
        assert!((extrapolate(&[(1.0, 1.0), (2.0, 100.0)], 4.0) - 800.0).abs() < 1e-9);
        assert!((extrapolate(&[(1.0, 1.0), (2.0, 1.0)], 4.0) - 2.0).abs() < 1e-9);
    }

    #[test]
    fn cache_thresholds_follow_the_working_set_model() {
        // 48 KiB over 16 + 20*3 = 76 bytes per vertex.
        assert!((threshold_vertices(48 * 1024, 3.0) - 49152.0 / 76.0).abs() < 1e-9);
        assert_eq!(working_set_bytes(10.0, 30.0), 760.0);
    }
}
