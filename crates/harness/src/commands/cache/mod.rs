//! `wobble cache`: what particle ordering and the memory system do to step time, per solver,
//! from the 400-1200 vertices of a game cloth to a million.
//!
//! Stages, each its own function (and module where it has one):
//! 1. [`timing`]: every size, solver and ordering, the orderings of one size and solver
//!    stepping in turns in one process, each point a median with its 95% interval and each
//!    ordering a paired ratio to the first (`cache.csv`, `cache_intervals.csv`, plots with bars);
//! 2. [`alternation`]: what the fine grid's point-to-point alternation is, measured;
//! 3. [`cachegrind`]: simulated D1 and last-level misses per projection, never negative, with
//!    their resolution and the simulated cache sizes beside the machine's (`cache_misses.csv`);
//! 4. [`counters`]: hardware counters where `perf_event_open` works, one line where not;
//! 5. [`roofline`]: bytes per projection from each solver's layout against the measured L2,
//!    L3 and memory bandwidths (`cache_roofline.csv`, `cache_bandwidth.csv`, a plot).
//!
//! The section opens with three sentences generated from these figures. No file names a path
//! of the machine: the build is named by target, profile, features and kernel.

pub mod alternation;
pub mod counters;
pub mod plots;
pub mod roofline;
pub mod timing;

use crate::measure::cachegrind::{self, cachegrind_binary};

use crate::measure::machine::{self, Machine};
use crate::measure::sweep::{Budget, Point, SCALE_HEADER};
use crate::output::csv::RowWriter;
use crate::output::progress;
use crate::output::section::{figure, link, Section};
use crate::setup::{
    build_body, or_note, parse_counts, parse_sizes, Common, Error, OrderingArg, SceneArg, SolverArg,
};
use clap::Args;
use plots::{Band, IntervalPlot};
use serde::Serialize;
use solver_core::Body;
use std::path::PathBuf;
use std::time::Instant;
use timing::OrderingPoint;

/// Arguments of `wobble cache`.
#[derive(Args, Debug, Clone)]
pub struct CacheArgs {
    /// Scene (a standard scene with a size: not mesh).
    #[arg(long, value_enum, default_value_t = SceneArg::Cloth)]
    pub scene: SceneArg,
    /// Fine grid of sizes (cloth n = 20..35 is 400..1225 vertices).
    #[arg(
        long,
        default_value = "20,21,22,23,24,25,26,27,28,29,30,31,32,33,34,35"
    )]
    pub sizes: String,
    /// Large sizes (cloth n = 1024 is 1M vertices).
    #[arg(long, default_value = "64,128,256,512,1024")]
    pub large: String,
    /// Orderings, comma-separated.
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        default_value = "natural,shuffled,rcm,morton"
    )]
    pub orderings: Vec<OrderingArg>,
    /// Solvers, comma-separated.
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        default_value = "gs,colored,jacobi"
    )]
    pub solvers: Vec<SolverArg>,
    /// Solver iterations per step.
    #[arg(long, default_value_t = 8)]
    pub iters: usize,
    /// Orderings measured under cachegrind, comma-separated.
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        default_value = "natural,shuffled,rcm,morton"
    )]
    pub cachegrind_orderings: Vec<OrderingArg>,
    /// Sizes measured under cachegrind (cloth n = 23, 32, 128 and 512 are 529, 1024, 16k and
    /// 262k vertices; 1M takes hours under valgrind here).
    #[arg(long, default_value = "23,32,128,512")]
    pub cachegrind_sizes: String,
    /// Timed steps of the two cachegrind runs whose difference is taken (at the smallest sizes;
    /// larger ones take fewer, for about as many projections between the two runs).
    #[arg(long, default_value = "10,60")]
    pub cachegrind_steps: String,
    /// A wobble binary valgrind can run (default: this one, else target/x86-64-v3/release/wobble).
    #[arg(long)]
    pub cachegrind_bin: Option<PathBuf>,
    /// Build target/x86-64-v3/release/wobble with cargo when valgrind cannot run this binary.
    #[arg(long)]
    pub build_cachegrind_bin: bool,
    /// Skip the cachegrind runs.
    #[arg(long)]
    pub no_cachegrind: bool,
    /// How long the study may take: timed steps per ordering (`--target-s` seconds, within
    /// `--min-steps..=--steps`), warm-up, and the budget after which no new size starts (the
    /// timing sweep and the cachegrind runs each get it).
    #[command(flatten)]
    pub budget: Budget,
    /// The solvers' tuning and the output directory.
    #[command(flatten)]
    pub common: Common,
}

/// One row of cache_misses.csv.
#[derive(Serialize, Debug, Clone)]
pub struct MissRow {
    /// Scene name.
    pub scene: String,
    /// Size parameter of the scene.
    pub n: usize,
    /// Particle count of the body (0 when the cachegrind run failed).
    pub vertices: usize,
    /// Solver name.
    pub solver: String,
    /// Particle ordering.
    pub ordering: String,
    /// Timed steps of the shorter cachegrind run.
    pub steps_low: usize,
    /// Timed steps of the longer cachegrind run.
    pub steps_high: usize,
    /// Projections per step: constraints x iterations x substeps (0 when the run failed).
    pub projections_per_step: usize,
    /// Marginal data references per projection, never negative (empty when the run failed).
    pub d_refs_per_projection: Option<f64>,
    /// Marginal D1 data-cache misses per projection, never negative (empty when the run failed).
    pub d1_misses_per_projection: Option<f64>,
    /// Resolution of the D1 count per projection (see [`cachegrind::Marginal`]).
    pub d1_resolution: Option<f64>,
    /// Marginal last-level data-cache misses per projection, never negative (empty when the
    /// run failed).
    pub lld_misses_per_projection: Option<f64>,
    /// Resolution of the last-level count per projection.
    pub lld_resolution: Option<f64>,
    /// Simulated D1 cache (size, ways, line).
    pub sim_d1: String,
    /// Simulated last-level cache.
    pub sim_ll: String,
    /// Which build ran under valgrind (no path).
    pub binary: String,
    /// `ok`, or why the cachegrind run gave no counts.
    pub status: String,
}

/// The study's parsed arguments.
struct Study {
    fine: Vec<usize>,
    large: Vec<usize>,
    orderings: Vec<String>,
    solvers: Vec<String>,
    cg_sizes: Vec<usize>,
    cg_orderings: Vec<String>,
    cg_steps: (usize, usize),
    plan: timing::Plan,
    /// 1 for a full run, less for a quick one (shortens the side experiments).
    scale: f64,
}

fn list_or_empty(list: &str, scene: &str) -> Result<Vec<usize>, Error> {
    if list.trim().is_empty() {
        Ok(Vec::new())
    } else {
        parse_sizes(list, scene)
    }
}

/// The names of a list of values, refused when the list is empty.
fn names<T: Copy + std::fmt::Display>(list: &[T], what: &str) -> Result<Vec<String>, Error> {
    if list.is_empty() {
        return Err(Error::Arg(format!("the {what} list is empty")));
    }
    Ok(list.iter().map(|v| v.to_string()).collect())
}

fn parse(a: &CacheArgs) -> Result<Study, Error> {
    if a.scene == SceneArg::Mesh {
        return Err(Error::Arg(
            "cache sweeps sizes of a standard scene; mesh has no size".into(),
        ));
    }
    let cg_steps = parse_counts(&a.cachegrind_steps, "cachegrind-steps")?;
    if cg_steps.len() != 2 || cg_steps[0] >= cg_steps[1] {
        return Err(Error::Arg(
            "--cachegrind-steps takes two step counts, low,high with low < high".into(),
        ));
    }
    if let Some(p) = &a.cachegrind_bin {
        if !p.is_file() {
            return Err(Error::Arg(format!(
                "--cachegrind-bin {} does not exist",
                p.display()
            )));
        }
    }
    if a.iters == 0 {
        return Err(Error::Arg("--iters must be at least 1".into()));
    }
    a.budget.check()?;
    a.common.tuning.check()?;
    Ok(Study {
        fine: list_or_empty(&a.sizes, a.scene.name())?,
        large: list_or_empty(&a.large, a.scene.name())?,
        orderings: names(&a.orderings, "ordering")?,
        solvers: names(&a.solvers, "solver")?,
        cg_sizes: list_or_empty(&a.cachegrind_sizes, a.scene.name())?,
        cg_orderings: names(&a.cachegrind_orderings, "ordering")?,
        cg_steps: (cg_steps[0], cg_steps[1]),
        plan: timing::Plan::from_budget(&a.budget),
        scale: (a.budget.target_s / 0.3).clamp(0.15, 1.0),
    })
}

/// What the timing stage measured.
#[derive(Default)]
struct Timed {
    points: Vec<OrderingPoint>,
    notes: Vec<String>,
    locality: Vec<Locality>,
}

/// How far apart in memory consecutive constraints (in storage order, as `gs` and `jacobi`
/// visit them) reach, in one numbering.
#[derive(Debug, Clone)]
struct Locality {
    n: usize,
    vertices: usize,
    ordering: String,
    /// Mean |i_k - i_(k-1)| of the constraints' first particles.
    mean_jump: f64,
    /// Fraction of constraints whose first particle's position (16 B each) lies on another
    /// 4 KiB page than the previous constraint's.
    page_changes: f64,
}

fn locality(n: usize, ordering: &str, b: &Body) -> Locality {
    let pairs = &b.constraints().distance.pairs;
    let (mut jump, mut pages) = (0f64, 0usize);
    for w in pairs.windows(2) {
        let (a, c) = (w[0][0] as i64, w[1][0] as i64);
        jump += (c - a).abs() as f64;
        pages += usize::from(a / 256 != c / 256);
    }
    let k = pairs.len().saturating_sub(1).max(1) as f64;
    Locality {
        n,
        vertices: b.len(),
        ordering: ordering.to_string(),
        mean_jump: jump / k,
        page_changes: pages as f64 / k,
    }
}

/// Bodies of size `n`, one per ordering (or the note why one cannot be built).
fn bodies(
    scene: &str,
    n: usize,
    orderings: &[String],
) -> Result<Result<Vec<(String, Body)>, String>, Error> {
    let mut out = Vec::with_capacity(orderings.len());
    for o in orderings {
        match or_note(build_body(scene, n, None, o))? {
            Ok((b, _)) => out.push((o.clone(), b)),
            Err(note) => return Ok(Err(format!("{o} at n = {n}: {note}"))),
        }
    }
    Ok(Ok(out))
}

/// Stage 1: every size x solver, orderings in turns; writes cache.csv and cache_intervals.csv.
fn time_orderings(a: &CacheArgs, st: &Study, sec: &mut Section) -> Result<Timed, Error> {
    let out = &a.common.out;
    let mut rows = RowWriter::create(&out.join("cache.csv"), SCALE_HEADER)?;
    let mut ints = RowWriter::create(
        &out.join("cache_intervals.csv"),
        &[
            "scene",
            "n",
            "vertices",
            "constraints",
            "solver",
            "ordering",
            "iterations",
            "samples",
            "rounds",
            "ns_median",
            "ns_lo",
            "ns_hi",
            "ratio",
            "ratio_lo",
            "ratio_hi",
            "verdict",
        ],
    )?;
    sec.add_files([rows.path().to_path_buf(), ints.path().to_path_buf()]);
    let mut sizes = st.fine.clone();
    sizes.extend(st.large.iter().copied().filter(|n| !st.fine.contains(n)));
    sizes.sort();
    let started = Instant::now();
    let mut last: std::collections::HashMap<String, (f64, f64)> = Default::default();
    let mut t = Timed::default();
    let pb = progress::bar(sizes.len() * st.solvers.len(), "cache");
    for &n in &sizes {
        let v = crate::measure::sweep::estimate_vertices(a.scene.name(), n);
        let spent = started.elapsed().as_secs_f64();
        if a.budget.budget_s > 0.0 && spent > a.budget.budget_s {
            t.notes.push(format!(
                "n = {n}: not measured, the budget of {:.0} s was spent",
                a.budget.budget_s
            ));
            pb.inc(st.solvers.len() as u64);
            continue;
        }
        let bs = match bodies(a.scene.name(), n, &st.orderings)? {
            Ok(b) => {
                for (o, body) in &b {
                    t.locality.push(locality(n, o, body));
                }
                b
            }
            Err(note) => {
                t.notes.push(note);
                pb.inc(st.solvers.len() as u64);
                continue;
            }
        };
        for s in &st.solvers {
            pb.set_message(format!("n={n} {s}"));
            pb.inc(1);
            // A point that would surely outrun the time limit is not started.
            if let Some(&(v0, wall0)) = last.get(s) {
                let est = wall0 * v / v0;
                if est > 2.0 * a.budget.timeout_s {
                    t.notes.push(format!(
                        "{s} at n = {n}: not measured, estimated {est:.0} s (limit {:.0} s)",
                        a.budget.timeout_s
                    ));
                    continue;
                }
            }
            let t0 = Instant::now();
            match timing::measure(
                a.scene.name(),
                n,
                &bs,
                s,
                a.iters,
                &a.common.tuning,
                &st.plan,
            )? {
                Ok(pts) => {
                    for p in &pts {
                        rows.row(&p.row)?;
                        ints.row(p)?;
                    }
                    t.points.extend(pts);
                }
                Err(note) => t.notes.push(format!("{s} at n = {n}: {note}")),
            }
            last.insert(s.clone(), (v, t0.elapsed().as_secs_f64()));
        }
    }
    pb.finish_and_clear();
    Ok(t)
}

/// The per-size table: every ordering's interval and whether it differs from the first.
fn significance_table(points: &[OrderingPoint], orderings: &[String]) -> String {
    let mut keys: Vec<(usize, usize, String)> = Vec::new();
    for p in points {
        let k = (p.vertices, p.n, p.solver.clone());
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    let mut t = format!(
        "| vertices (n) | solver | {} | orderings differ beyond the interval |\n| --- | --- |{} --- |\n",
        orderings.join(" | "),
        " --- |".repeat(orderings.len())
    );
    for (v, n, s) in keys {
        let mut differ = Vec::new();
        let cells: Vec<String> = orderings
            .iter()
            .map(|o| {
                match points
                    .iter()
                    .find(|p| p.vertices == v && p.n == n && p.solver == s && &p.ordering == o)
                {
                    None => "-".into(),
                    Some(p) if p.verdict == "baseline" => p.ns().display(2),
                    Some(p) => {
                        if p.verdict != "same" {
                            differ.push(format!("{o} {}", p.verdict));
                        }
                        format!(
                            "{} (x{:.2} [{:.2}, {:.2}] {})",
                            p.ns().display(2),
                            p.ratio,
                            p.ratio_lo,
                            p.ratio_hi,
                            p.verdict
                        )
                    }
                }
            })
            .collect();
        let verdict = if differ.is_empty() {
            "no".to_string()
        } else {
            format!("yes: {}", differ.join(", "))
        };
        t.push_str(&format!(
            "| {v} ({n}) | {s} | {} | {verdict} |\n",
            cells.join(" | ")
        ));
    }
    t
}

/// Bands of ns per projection per ordering, for one solver, over `sizes`.
fn ordering_bands(
    points: &[OrderingPoint],
    solver: &str,
    orderings: &[String],
    sizes: &[usize],
) -> Vec<Band> {
    orderings
        .iter()
        .enumerate()
        .map(|(i, o)| Band {
            name: o.clone(),
            points: points
                .iter()
                .filter(|p| p.solver == solver && &p.ordering == o && sizes.contains(&p.n))
                .map(|p| (p.vertices as f64, p.ns_lo, p.ns_median, p.ns_hi))
                .collect(),
            color: i,
            dashed: false,
        })
        .collect()
}

/// Stage 1's plots and tables.
fn report_timing(
    a: &CacheArgs,
    st: &Study,
    t: &Timed,
    md: &mut String,
    sec: &mut Section,
) -> Result<(), Error> {
    let out = &a.common.out;
    let solvers: Vec<String> = {
        let mut v: Vec<String> = Vec::new();
        for p in &t.points {
            if !v.contains(&p.solver) {
                v.push(p.solver.clone());
            }
        }
        v
    };
    md.push_str(&format!(
        "{} with solvers {}, orderings {}, {} iterations, one thread; fine grid n = {}, large n = {}. The orderings of one size and solver step in turns in one process (rounds in rotated order, {} timed steps per ordering at most); every point is the median ns per projection with its 95% order-statistic interval (bars), and each ordering's ratio to {} is the median over rounds of the paired ratio, with its interval: `slower`/`faster` only when the interval excludes 1.\n\n",
        a.scene,
        st.solvers.join(","),
        st.orderings.join(","),
        a.iters,
        a.sizes,
        a.large,
        a.budget.steps,
        st.orderings[0]
    ));
    for s in &solvers {
        if !st.fine.is_empty() {
            let stem = out.join(format!("cache_fine_{s}"));
            let p = IntervalPlot {
                title: format!(
                    "{s}: ns per projection per ordering, {} {}..{} vertices ({} iterations)",
                    a.scene,
                    st.fine.iter().min().map_or(0, |n| n * n),
                    st.fine.iter().max().map_or(0, |n| n * n),
                    a.iters
                ),
                x_label: "vertices".into(),
                y_label: "ns per projection (median, 95% interval)".into(),
                bands: ordering_bands(&t.points, s, &st.orderings, &st.fine),
                ..Default::default()
            };
            sec.add_files(p.save(&stem)?);
            md.push_str(&figure(&stem, out, &format!("{s}, fine grid")));
            md.push_str("\n\n");
        }
        let stem = out.join(format!("cache_large_{s}"));
        let mut all = st.fine.clone();
        all.extend(&st.large);
        let p = IntervalPlot {
            title: format!(
                "{s}: ns per projection per ordering, {}, all sizes",
                a.scene
            ),
            x_label: "vertices".into(),
            y_label: "ns per projection (median, 95% interval)".into(),
            x_log: true,
            y_log: true,
            bands: ordering_bands(&t.points, s, &st.orderings, &all),
        };
        sec.add_files(p.save(&stem)?);
        md.push_str(&figure(&stem, out, &format!("{s}, all sizes")));
        md.push_str("\n\n");
    }
    md.push_str("ns per projection [95% interval] per size, and each ordering's paired ratio to the first:\n\n");
    md.push_str(&significance_table(&t.points, &st.orderings));
    md.push_str("\nLocality of each numbering: constraints keep their storage order in every numbering (only particle indices change), so `gs` and `jacobi` visit particles in the order below; mean index jump between consecutive constraints' first particles, and the share of constraints whose particle lies on another 4 KiB page (16 B per position) than the previous one's:\n\n| vertices (n) |");
    for o in &st.orderings {
        md.push_str(&format!(" {o} |"));
    }
    md.push_str(&format!(
        "\n| --- |{}\n",
        " --- |".repeat(st.orderings.len())
    ));
    let mut seen: Vec<usize> = Vec::new();
    for l in &t.locality {
        if seen.contains(&l.n) {
            continue;
        }
        seen.push(l.n);
        md.push_str(&format!("| {} ({}) |", l.vertices, l.n));
        for o in &st.orderings {
            match t.locality.iter().find(|x| x.n == l.n && &x.ordering == o) {
                Some(x) => md.push_str(&format!(
                    " jump {:.0}, pages {:.0}% |",
                    x.mean_jump,
                    x.page_changes * 100.0
                )),
                None => md.push_str(" - |"),
            }
        }
        md.push('\n');
    }
    if !t.notes.is_empty() {
        md.push_str(&format!("\nNot measured:\n\n- {}\n", t.notes.join("\n- ")));
    }
    Ok(())
}

/// A count per projection with its resolution: `0.4 (res 2e-6)`, `6.4e-6 (res 1e-6)`, or
/// `< res` for a zero count.
fn with_resolution(v: f64, r: f64) -> String {
    if v == 0.0 {
        format!("< {r:.1e}")
    } else if v < 0.01 {
        format!("{v:.1e} (res {r:.0e})")
    } else {
        format!("{v:.4} (res {r:.0e})")
    }
}

/// Bodies up to this many vertices get the asked cachegrind steps; larger ones fewer.
const CG_REFERENCE_VERTICES: f64 = 1024.0;

/// Timed steps of the two cachegrind runs at size `n`: the asked ones up to
/// [`CG_REFERENCE_VERTICES`]; fewer beyond, for about as many projections between the runs.
fn cg_steps_for(scene: &str, n: usize, (low, high): (usize, usize)) -> (usize, usize) {
    let f = CG_REFERENCE_VERTICES / crate::measure::sweep::estimate_vertices(scene, n);
    if f >= 1.0 {
        return (low, high);
    }
    let d = (((high - low) as f64 * f).round() as usize).max(1);
    let l = ((low as f64 * f).round() as usize).max(1);
    (l, l + d)
}

/// Stage 3: cachegrind.
fn simulate(
    a: &CacheArgs,
    st: &Study,
    m: &Machine,
    md: &mut String,
    sec: &mut Section,
) -> Result<Vec<MissRow>, Error> {
    let out = &a.common.out;
    let miss_path = out.join("cache_misses.csv");
    let mut misses = RowWriter::create(
        &miss_path,
        &[
            "scene",
            "n",
            "vertices",
            "solver",
            "ordering",
            "steps_low",
            "steps_high",
            "projections_per_step",
            "d_refs_per_projection",
            "d1_misses_per_projection",
            "d1_resolution",
            "lld_misses_per_projection",
            "lld_resolution",
            "sim_d1",
            "sim_ll",
            "binary",
            "status",
        ],
    )?;
    sec.add_files([miss_path.clone()]);
    let bin = if a.no_cachegrind {
        Err("cachegrind runs were switched off (--no-cachegrind)".to_string())
    } else if st.cg_sizes.is_empty() {
        Err("no cachegrind sizes were asked for".to_string())
    } else {
        cachegrind_binary(a.cachegrind_bin.as_deref(), a.build_cachegrind_bin)
    };
    let sim = cachegrind::sim_caches();
    let (sim_d1, sim_ll) = match &sim {
        Some((d, l)) => (d.describe(), l.describe()),
        None => ("cachegrind's default".into(), "cachegrind's default".into()),
    };
    let bin = match bin {
        Err(why) => {
            md.push_str(&format!("\nCache misses: not measured: {why}.\n"));
            let mut f = vec![String::new(); 17];
            f[0] = a.scene.name().to_string();
            f[16] = format!("not measured: {why}");
            misses.record(&f)?;
            return Ok(Vec::new());
        }
        Ok(b) => b,
    };
    let label = cachegrind::binary_label(&bin);
    let mut rows = Vec::new();
    let started = Instant::now();
    // (vertices, wall seconds) of the largest size simulated, for the estimate of a larger one.
    let mut largest: (usize, f64) = (0, 0.0);
    let pb = progress::bar(
        st.cg_sizes.len() * st.solvers.len() * st.cg_orderings.len(),
        "cachegrind",
    );
    for &n in &st.cg_sizes {
        let (low, high) = cg_steps_for(a.scene.name(), n, st.cg_steps);
        for s in &st.solvers {
            for o in &st.cg_orderings {
                pb.set_message(format!("n={n} {s} {o}"));
                pb.inc(1);
                let p = Point {
                    scene: a.scene.name().to_string(),
                    n,
                    solver: s.clone(),
                    threads: 1,
                    iterations: a.iters,
                    substeps: 1,
                    ordering: o.clone(),
                    backend: "cpu".into(),
                };
                let spent = started.elapsed().as_secs_f64();
                let r = if a.budget.budget_s > 0.0 && spent > a.budget.budget_s {
                    Err(format!(
                        "skipped: the budget of {:.0} s was spent",
                        a.budget.budget_s
                    ))
                } else {
                    cachegrind::runs(&bin, &p, (low, high), &a.common.tuning)
                };
                let wall = started.elapsed().as_secs_f64() - spent;
                let mut row = MissRow {
                    scene: a.scene.name().to_string(),
                    n,
                    vertices: 0,
                    solver: s.clone(),
                    ordering: o.clone(),
                    steps_low: low,
                    steps_high: high,
                    projections_per_step: 0,
                    d_refs_per_projection: None,
                    d1_misses_per_projection: None,
                    d1_resolution: None,
                    lld_misses_per_projection: None,
                    lld_resolution: None,
                    sim_d1: sim_d1.clone(),
                    sim_ll: sim_ll.clone(),
                    binary: label.clone(),
                    status: "ok".into(),
                };
                match r {
                    Ok((mg, rep)) => {
                        if rep.vertices >= largest.0 {
                            largest = (
                                rep.vertices,
                                if rep.vertices > largest.0 {
                                    wall
                                } else {
                                    largest.1.max(wall)
                                },
                            );
                        }
                        row.vertices = rep.vertices;
                        row.projections_per_step = rep.constraints * rep.iterations * rep.substeps;
                        row.d_refs_per_projection = Some(mg.per_projection.d_refs);
                        row.d1_misses_per_projection = Some(mg.per_projection.d1_misses);
                        row.d1_resolution = Some(mg.resolution.d1_misses);
                        row.lld_misses_per_projection = Some(mg.per_projection.lld_misses);
                        row.lld_resolution = Some(mg.resolution.lld_misses);
                    }
                    Err(e) => {
                        row.status = match e.strip_prefix("cachegrind run failed: unsupported: ") {
                            Some(rest) => format!("unsupported here: {rest}"),
                            None => e,
                        }
                    }
                }
                misses.row(&row)?;
                rows.push(row);
            }
        }
    }
    pb.finish_and_clear();
    md.push_str(&format!(
        "\nSimulated data-cache misses per projection (cachegrind, marginal between two runs of `low` and `high` timed steps, so start-up cancels; a count never goes below 0, and `< r` means below the resolution r = one count, or the start-up deficit where the longer run counted fewer, per projection between the runs). Build run under valgrind: {label}. Simulated caches: D1 {sim_d1}, LL {sim_ll}; the machine's: {} (LL simulates the last level; cachegrind has no L2).\n\n",
        m.cache_line()
    ));
    md.push_str("| vertices (n) | solver | ordering | steps | D refs / projection | D1 misses / projection | LLd misses / projection | status |\n| --- | --- | --- | --- | --- | --- | --- | --- |\n");
    for r in &rows {
        match (
            r.d_refs_per_projection,
            r.d1_misses_per_projection,
            r.lld_misses_per_projection,
        ) {
            (Some(d), Some(m1), Some(ml)) => md.push_str(&format!(
                "| {} ({}) | {} | {} | {}..{} | {d:.2} | {} | {} | ok |\n",
                r.vertices,
                r.n,
                r.solver,
                r.ordering,
                r.steps_low,
                r.steps_high,
                with_resolution(m1, r.d1_resolution.unwrap_or(f64::NAN)),
                with_resolution(ml, r.lld_resolution.unwrap_or(f64::NAN)),
            )),
            _ => md.push_str(&format!(
                "| ({}) | {} | {} | - | - | - | - | {} |\n",
                r.n, r.solver, r.ordering, r.status
            )),
        }
    }
    let simulated_max = st.cg_sizes.iter().copied().max().unwrap_or(0);
    let unsimulated: Vec<usize> = st
        .large
        .iter()
        .copied()
        .filter(|&n| n > simulated_max)
        .collect();
    if !unsimulated.is_empty() && largest.0 > 0 {
        let est: Vec<String> = unsimulated
            .iter()
            .map(|&n| {
                let v = crate::measure::sweep::estimate_vertices(a.scene.name(), n);
                format!(
                    "n = {n}: about {:.0} s per solver and ordering",
                    largest.1 * v / largest.0 as f64
                )
            })
            .collect();
        md.push_str(&format!(
            "\nLarger sizes are left out of the simulation; from the slowest run at {} vertices ({:.0} s for both runs), linearly in vertices: {}.\n",
            largest.0,
            largest.1,
            est.join("; ")
        ));
    }
    Ok(rows)
}

/// Stage 4: hardware counters, or the one line saying why there are none.
fn count(
    a: &CacheArgs,
    st: &Study,
    md: &mut String,
    sec: &mut Section,
) -> Result<Option<String>, Error> {
    if let Err(line) = counters::probe() {
        md.push_str(&format!("\n{line}\n"));
        return Ok(Some(line));
    }
    let mut c = counters::Counters::open().map_err(|e| Error::Io(format!("perf_event: {e}")))?;
    let path = a.common.out.join("cache_counters.csv");
    let mut w = RowWriter::create(&path, counters::COUNTERS_HEADER)?;
    sec.add_files([path.clone()]);
    md.push_str("\nHardware counters per projection (perf_event_open, read around the timed steps; natural ordering):\n\n| vertices (n) | solver | cycles | instructions | L1d read misses | LL read misses |\n| --- | --- | --- | --- | --- | --- |\n");
    let mut sizes: Vec<usize> = st
        .fine
        .first()
        .into_iter()
        .chain(st.fine.last())
        .copied()
        .collect();
    sizes.extend(
        st.large
            .iter()
            .filter(|&&n| crate::measure::sweep::estimate_vertices(a.scene.name(), n) <= 300_000.0),
    );
    sizes.dedup();
    for n in sizes {
        let (body, _) = build_body(a.scene.name(), n, None, &st.orderings[0])?;
        let steps = ((2e6 / (body.constraints().len() * a.iters).max(1) as f64).ceil() as usize)
            .clamp(1, 50);
        for s in &st.solvers {
            match or_note(counters::measure(
                &mut c,
                a.scene.name(),
                n,
                &st.orderings[0],
                &body,
                s,
                a.iters,
                steps,
                &a.common.tuning,
            ))? {
                Ok(r) => {
                    md.push_str(&format!(
                        "| {} ({n}) | {} | {:.1} | {:.1} | {:.3} | {:.4} |\n",
                        r.vertices,
                        r.solver,
                        r.cycles_per_projection,
                        r.instructions_per_projection,
                        r.l1d_misses_per_projection,
                        r.ll_misses_per_projection
                    ));
                    w.row(&r)?;
                }
                Err(note) => md.push_str(&format!("| ({n}) | {s} | {note} | | | |\n")),
            }
        }
    }
    Ok(None)
}

/// Where a solver becomes bandwidth-bound: the smallest measured vertex count from which on
/// every larger one is, with the bound's share of the time there.
fn bound_from(rows: &[(usize, f64)]) -> Option<usize> {
    let mut from = None;
    for &(v, frac) in rows.iter().rev() {
        if frac >= roofline::BOUND_FRACTION {
            from = Some(v);
        } else {
            break;
        }
    }
    from
}

/// Stage 5: the roofline; returns (solver, vertex count where it becomes bandwidth-bound or
/// None, largest bound share seen).
fn roofline_stage(
    a: &CacheArgs,
    st: &Study,
    t: &Timed,
    m: &Machine,
    md: &mut String,
    sec: &mut Section,
) -> Result<Vec<(String, Option<usize>, f64)>, Error> {
    let out = &a.common.out;
    let bw = roofline::measure(m, st.scale);
    let bw_path = out.join("cache_bandwidth.csv");
    let mut w = RowWriter::create(&bw_path, &["level", "bytes", "read_gbs", "copy_gbs"])?;
    for b in &bw {
        w.row(b)?;
    }
    let rl_path = out.join("cache_roofline.csv");
    let mut r = RowWriter::create(
        &rl_path,
        &[
            "solver",
            "ordering",
            "n",
            "vertices",
            "constraints",
            "bytes_per_projection",
            "level",
            "bound_ns",
            "ns_median",
            "ns_lo",
            "ns_hi",
            "bound_share",
            "bandwidth_bound",
        ],
    )?;
    sec.add_files([bw_path.clone(), rl_path.clone()]);
    let first = &st.orderings[0];
    let mut bands = Vec::new();
    let mut verdicts = Vec::new();
    let mut formulas = Vec::new();
    let mut solvers: Vec<String> = Vec::new();
    for p in &t.points {
        if !solvers.contains(&p.solver) {
            solvers.push(p.solver.clone());
        }
    }
    for (i, s) in solvers.iter().enumerate() {
        let Some(f) = roofline::formula(s) else {
            continue;
        };
        formulas.push(f);
        let mut pts: Vec<&OrderingPoint> = t
            .points
            .iter()
            .filter(|p| &p.solver == s && &p.ordering == first)
            .collect();
        pts.sort_by_key(|p| p.vertices);
        let mut measured = Vec::new();
        let mut bound = Vec::new();
        let mut shares = Vec::new();
        for p in pts {
            let (v, c) = (p.vertices as f64, p.constraints as f64);
            let Some((ns, level)) = roofline::bound_ns(m, &bw, s, v, c) else {
                continue;
            };
            let bpp = roofline::bytes_per_projection(s, v, c).unwrap_or(f64::NAN);
            let share = ns / p.ns_median;
            let is_bound = share >= roofline::BOUND_FRACTION;
            r.record(&[
                s.clone(),
                first.clone(),
                p.n.to_string(),
                p.vertices.to_string(),
                p.constraints.to_string(),
                format!("{bpp:.2}"),
                level,
                format!("{ns:.4}"),
                format!("{:.4}", p.ns_median),
                format!("{:.4}", p.ns_lo),
                format!("{:.4}", p.ns_hi),
                format!("{share:.3}"),
                if is_bound { "yes" } else { "no" }.to_string(),
            ])?;
            measured.push((v, p.ns_lo, p.ns_median, p.ns_hi));
            bound.push((v, f64::NAN, ns, f64::NAN));
            shares.push((p.vertices, share));
        }
        let max_share = shares.iter().map(|x| x.1).fold(0.0, f64::max);
        verdicts.push((s.clone(), bound_from(&shares), max_share));
        bands.push(Band {
            name: format!("{s} measured ({first})"),
            points: measured,
            color: i,
            dashed: false,
        });
        bands.push(Band {
            name: format!("{s} bandwidth bound"),
            points: bound,
            color: i,
            dashed: true,
        });
    }
    let stem = out.join("cache_roofline");
    let plot = IntervalPlot {
        title: format!(
            "Measured ns per projection against the bandwidth bound, {}",
            a.scene
        ),
        x_label: "vertices".into(),
        y_label: "ns per projection".into(),
        x_log: true,
        y_log: true,
        bands,
    };
    sec.add_files(plot.save(&stem)?);
    md.push_str("\nRoofline. Bytes per projection from each solver's data layout (C constraints, V particles; the least traffic the layout allows, each particle's data kept in cache between its constraints): ");
    md.push_str(&formulas.join("; "));
    md.push_str(". The bound is those bytes over the copy bandwidth (read + write) of the smallest level that holds one iteration's bytes. Bandwidths measured here by a streaming kernel (best of 5):\n\n| level | array | read GB/s | copy GB/s |\n| --- | --- | --- | --- |\n");
    for b in &bw {
        md.push_str(&format!(
            "| {} | {} | {:.1} | {:.1} |\n",
            b.level,
            machine::human_bytes(b.bytes),
            b.read_gbs,
            b.copy_gbs
        ));
    }
    md.push_str(&format!(
        "\nA size counts as bandwidth-bound when the bound is at least {:.0}% of the measured time.\n\n",
        roofline::BOUND_FRACTION * 100.0
    ));
    md.push_str(&figure(&stem, out, "roofline"));
    md.push('\n');
    for (s, from, max) in &verdicts {
        md.push_str(&match from {
            Some(v) => format!("\n- {s}: bandwidth-bound from {v} vertices on (every larger measured size too).\n"),
            None => format!("\n- {s}: bandwidth-bound at no measured size from which all larger ones are; the bound reaches at most {:.0}% of the measured time.\n", max * 100.0),
        });
    }
    Ok(verdicts)
}

/// The three opening sentences, from the figures.
fn findings(
    st: &Study,
    t: &Timed,
    alternation: &str,
    roof: &[(String, Option<usize>, f64)],
) -> String {
    let mut s = String::new();
    let largest = t.points.iter().map(|p| p.vertices).max();
    match largest {
        Some(v) => {
            let parts: Vec<String> = t
                .points
                .iter()
                .filter(|p| p.vertices == v && p.verdict != "baseline")
                .fold(Vec::<&OrderingPoint>::new(), |mut acc, p| {
                    match acc.iter_mut().find(|q| q.solver == p.solver) {
                        Some(q) if q.ratio < p.ratio => *q = p,
                        Some(_) => {}
                        None => acc.push(p),
                    }
                    acc
                })
                .iter()
                .map(|p| {
                    format!(
                        "{} {} x{:.2} [{:.2}, {:.2}] ({})",
                        p.solver, p.ordering, p.ratio, p.ratio_lo, p.ratio_hi, p.verdict
                    )
                })
                .collect();
            s.push_str(&format!(
                "At {v} vertices, the largest size measured, the costliest ordering against {} is, per solver: {}.",
                st.orderings[0],
                if parts.is_empty() { "none measured".to_string() } else { parts.join("; ") }
            ));
        }
        None => s.push_str("No point was measured."),
    }
    s.push(' ');
    s.push_str(alternation);
    s.push(' ');
    let r: Vec<String> = roof
        .iter()
        .map(|(sv, from, max)| match from {
            Some(v) => format!("{sv} from {v} vertices"),
            None => format!(
                "{sv} at no size (bound at most {:.0}% of the time)",
                max * 100.0
            ),
        })
        .collect();
    s.push_str(&format!(
        "Against the measured bandwidths, the solvers become bandwidth-bound as follows: {}.",
        if r.is_empty() {
            "no modelled solver was measured".to_string()
        } else {
            r.join(", ")
        }
    ));
    s
}

/// `wobble cache`.
pub fn run(a: &CacheArgs) -> Result<Section, Error> {
    let st = parse(a)?;
    let m = machine::probe();
    let mut sec = Section::new("Cache and particle ordering");
    let mut md = String::new();
    let b = machine::Build::this();
    md.push_str(&format!(
        "Build: {} {} profile, target features {}; distance kernel of `colored`: {}; Linux {}.\n\n",
        b.target,
        b.profile,
        b.target_features,
        a.common
            .tuning
            .kernel
            .kernel()
            .resolve()
            .map_or_else(|e| format!("none ({e})"), |k| k.to_string()),
        m.kernel
    ));
    let t = time_orderings(a, &st, &mut sec)?;
    report_timing(a, &st, &t, &mut md, &mut sec)?;
    let alt = alternation_stage(a, &st, &mut md)?;
    simulate(a, &st, &m, &mut md, &mut sec)?;
    count(a, &st, &mut md, &mut sec)?;
    let roof = roofline_stage(a, &st, &t, &m, &mut md, &mut sec)?;
    md.push_str(&format!(
        "\nData: {}.\n",
        sec.files
            .iter()
            .filter(|f| f.extension().is_some_and(|e| e == "csv"))
            .map(|f| link(f, &a.common.out))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    sec.line(findings(&st, &t, &alt, &roof));
    sec.line("");
    sec.body.push_str(&md);
    // The section on its own, for a `wobble cache` run outside a report.
    let note = a.common.out.join("cache.md");
    std::fs::write(&note, format!("# {}\n\n{}", sec.title, sec.body))
        .map_err(|e| crate::setup::io_error(&note, e))?;
    sec.add_files([note]);
    Ok(sec)
}

/// Stage 2: the alternation experiments on the fine grid; returns the summary sentence.
fn alternation_stage(a: &CacheArgs, st: &Study, md: &mut String) -> Result<String, Error> {
    if a.scene != SceneArg::Cloth || st.fine.len() < 2 {
        return Ok("The alternation between neighbouring fine-grid sizes was not studied (it needs the cloth scene and two fine sizes).".into());
    }
    let x = if st.fine.contains(&23) {
        23
    } else {
        st.fine[0]
    };
    let y = st
        .fine
        .iter()
        .copied()
        .find(|&n| n > x)
        .unwrap_or(st.fine[1]);
    let solver = st
        .solvers
        .iter()
        .find(|s| *s == "gs")
        .unwrap_or(&st.solvers[0]);
    md.push_str(&format!(
        "\nThe fine grid's alternation, measured ({solver}):\n\n"
    ));
    match alternation::study(x, y, solver, a.iters, &a.common.tuning, st.scale) {
        Ok(f) => {
            md.push_str(&f.markdown);
            Ok(f.sentence)
        }
        Err(e) => {
            md.push_str(&format!("not measured: {e}\n"));
            Ok(format!("The alternation study failed: {e}."))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn large_bodies_get_fewer_cachegrind_steps_and_small_ones_the_asked() {
        assert_eq!(cg_steps_for("cloth", 23, (10, 60)), (10, 60));
        assert_eq!(cg_steps_for("cloth", 32, (10, 60)), (10, 60));
        // 16k vertices: a sixteenth of the steps, at least one apart.
        assert_eq!(cg_steps_for("cloth", 128, (10, 60)), (1, 4));
        assert_eq!(cg_steps_for("cloth", 512, (10, 60)), (1, 2));
    }

    #[test]
    fn bandwidth_bound_means_from_some_size_on() {
        assert_eq!(
            bound_from(&[(1, 0.6), (2, 0.2), (3, 0.7), (4, 0.9)]),
            Some(3)
        );
        assert_eq!(bound_from(&[(1, 0.6), (2, 0.2)]), None);
    }
}
