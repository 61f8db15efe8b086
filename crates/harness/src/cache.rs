//! `wobble cache`: does particle ordering matter? Step time per ordering on a fine grid of
//! sizes around the L1 boundary (400-1200 vertices) and on large sizes up to 1M vertices, and
//! (where valgrind is installed) cachegrind's simulated D1 and last-level data-cache misses per
//! constraint projection at 529 and 1024 vertices.
//!
//! Miss counts per projection are marginal: `wobble step` runs twice under
//! `valgrind --tool=cachegrind --cache-sim=yes` with no warm-up and `low` then `high` timed
//! steps; (misses(high) - misses(low)) / ((high - low) x projections per step) removes process
//! start-up and scene building, leaving what one more step costs.
//!
//! valgrind (3.19 here) cannot decode AVX-512 instructions, which a `target-cpu=native` build
//! on an AVX-512 machine contains. When the running binary dies under valgrind, the harness
//! uses a build for `x86-64-v3` (AVX2) at `target/x86-64-v3/release/wobble` (built on request
//! with `--build-cachegrind-bin`, or given with `--cachegrind-bin`). It runs the same code on
//! the same data layout; only the SIMD width of the kernels differs, so the counts are those
//! of 8-lane rather than 16-lane batches. The table names the binary used.

use crate::child;
use crate::csv::RowWriter;
use crate::plot::{Legend, Plot};
use crate::progress;
use crate::scale::{lines, skipped_summary, Budget, Point, ScaleRow, Sweep};
use crate::section::{figure, link, Section};
use crate::setup::{
    check_scene, parse_counts, parse_orderings, parse_sizes, parse_solvers, Error, Tuning,
};
use crate::step::StepReport;
use clap::Args;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// Arguments of `wobble cache`.
#[derive(Args, Debug, Clone)]
pub struct CacheArgs {
    /// Scene.
    #[arg(long, default_value = "cloth")]
    pub scene: String,
    /// Fine grid of sizes (cloth n = 20..35 is 400..1225 vertices).
    #[arg(
        long,
        default_value = "20,21,22,23,24,25,26,27,28,29,30,31,32,33,34,35"
    )]
    pub sizes: String,
    /// Large sizes (cloth n = 1024 is 1M vertices).
    #[arg(long, default_value = "64,128,256,512,1024")]
    pub large: String,
    /// Comma-separated orderings.
    #[arg(long, default_value = "natural,shuffled,rcm,morton")]
    pub orderings: String,
    /// Comma-separated solvers.
    #[arg(long, default_value = "gs")]
    pub solvers: String,
    /// Solver iterations per step.
    #[arg(long, default_value_t = 8)]
    pub iters: usize,
    /// Orderings measured under cachegrind.
    #[arg(long, default_value = "natural,shuffled,rcm,morton")]
    pub cachegrind_orderings: String,
    /// Sizes measured under cachegrind (cloth n = 23 and 32 are 529 and 1024 vertices).
    #[arg(long, default_value = "23,32")]
    pub cachegrind_sizes: String,
    /// Timed steps of the two cachegrind runs whose difference is taken.
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
    /// How long the sweep may take: steps per point, time-outs and the overall budget.
    #[command(flatten)]
    pub budget: Budget,
    /// Options for particular solvers: Jacobi relaxation, Newton inner sweeps, seed, kernel.
    #[command(flatten)]
    pub tuning: Tuning,
    /// Output directory.
    #[arg(long, default_value = "results")]
    pub out: PathBuf,
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
    /// Marginal data references per projection (NaN when the run failed).
    pub d_refs_per_projection: f64,
    /// Marginal D1 data-cache misses per projection (NaN when the run failed).
    pub d1_misses_per_projection: f64,
    /// Marginal last-level data-cache misses per projection (NaN when the run failed).
    pub lld_misses_per_projection: f64,
    /// Path of the wobble binary run under valgrind.
    pub binary: String,
    /// `ok`, or why the cachegrind run gave no counts.
    pub status: String,
}

/// Data-cache counts from a cachegrind summary.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Counts {
    /// Data references.
    pub d_refs: f64,
    /// D1 misses.
    pub d1_misses: f64,
    /// Last-level data misses.
    pub lld_misses: f64,
}

/// Parses cachegrind's summary (the `==pid== D   refs: ...` lines on stderr).
pub fn parse_cachegrind(text: &str) -> Option<Counts> {
    let grab = |label: &str| -> Option<f64> {
        let line = text.lines().find(|l| l.contains(label))?;
        let after = line.split_once(':')?.1;
        let first = after.split_whitespace().next()?;
        first.replace(',', "").parse::<f64>().ok()
    };
    Some(Counts {
        d_refs: grab("D   refs:")?,
        d1_misses: grab("D1  misses:")?,
        lld_misses: grab("LLd misses:")?,
    })
}

/// The path of `name` on PATH, if any.
pub fn which(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join(name))
            .find(|p| p.is_file())
    })
}

fn cachegrind_cmd(bin: &Path, step_args: &[String]) -> Command {
    let mut c = Command::new("valgrind");
    c.args([
        "--tool=cachegrind",
        "--cache-sim=yes",
        "--cachegrind-out-file=/dev/null",
    ])
    .arg(bin)
    .arg("step")
    .args(step_args);
    c
}

/// Runs `wobble step` under cachegrind; returns its counts and its JSON report.
pub fn cachegrind_run(bin: &Path, step_args: &[String]) -> Result<(Counts, StepReport), String> {
    let o = child::run(cachegrind_cmd(bin, step_args), Duration::from_secs(600))
        .map_err(|e| format!("cannot run valgrind: {e}"))?;
    if !o.ok() {
        if o.stderr.contains("Illegal opcode") || o.stderr.contains("unhandled instruction") {
            return Err("valgrind cannot decode this binary's instructions (AVX-512 from target-cpu=native)".into());
        }
        return Err(format!("cachegrind run failed: {}", o.failure()));
    }
    let counts = parse_cachegrind(&o.stderr).ok_or("no cachegrind summary in valgrind's output")?;
    let rep: StepReport = serde_json::from_str(o.stdout.trim())
        .map_err(|e| format!("wobble step under valgrind printed no JSON report: {e}"))?;
    Ok((counts, rep))
}

/// Where a binary built for x86-64-v3 lives, beside the running one's target directory.
pub fn v3_binary() -> Option<PathBuf> {
    let exe = child::wobble_exe().ok()?;
    // target/release/wobble -> target/x86-64-v3/release/wobble
    let target = exe.parent()?.parent()?;
    Some(target.join("x86-64-v3").join("release").join("wobble"))
}

/// Builds the x86-64-v3 binary with cargo from the source tree this binary was built from.
pub fn build_v3() -> Result<PathBuf, String> {
    let bin = v3_binary().ok_or("cannot locate the target directory")?;
    let target_dir = bin
        .parent()
        .and_then(|p| p.parent())
        .ok_or("bad target path")?;
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    if !root.join("Cargo.toml").exists() {
        return Err(format!("the source tree {} is gone", root.display()));
    }
    let cargo = std::env::var_os("CARGO")
        .map(PathBuf::from)
        .or_else(|| which("cargo"))
        .ok_or("cargo is not on PATH")?;
    let status = Command::new(cargo)
        .current_dir(&root)
        .env("RUSTFLAGS", "-C target-cpu=x86-64-v3")
        .args(["build", "--release", "-p", "harness", "--target-dir"])
        .arg(target_dir)
        .status()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if !status.success() {
        return Err(format!("cargo build for x86-64-v3 failed ({status})"));
    }
    Ok(bin)
}

/// True when `a` was modified before `b` (false when either time is unknown).
fn is_older(a: &Path, b: &Path) -> bool {
    let t = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    matches!((t(a), t(b)), (Some(x), Some(y)) if x < y)
}

/// Picks a binary valgrind can run: `explicit`, else this one, else the x86-64-v3 build
/// (built first when `build` is set). `Err` says why there is none.
pub fn cachegrind_binary(explicit: Option<&Path>, build: bool) -> Result<PathBuf, String> {
    if which("valgrind").is_none() {
        return Err("valgrind is not installed, so no cache-miss counts were measured".into());
    }
    let probe_args: Vec<String> = [
        "--scene", "rope", "--n", "4", "--warmup", "0", "--steps", "1", "--json",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    if let Some(p) = explicit {
        return cachegrind_run(p, &probe_args).map(|_| p.to_path_buf());
    }
    let exe = child::wobble_exe().map_err(|e| e.to_string())?;
    let first = match cachegrind_run(&exe, &probe_args) {
        Ok(_) => return Ok(exe),
        Err(e) => e,
    };
    let v3 = v3_binary().ok_or(first.clone())?;
    if build {
        build_v3().map_err(|e| format!("{first}; building an x86-64-v3 binary failed: {e}"))?;
    }
    if v3.is_file() && !build && is_older(&v3, &exe) {
        return Err(format!(
            "{first}; {} is older than this binary, so it was built from older sources: rebuild it with `RUSTFLAGS='-C target-cpu=x86-64-v3' cargo build --release -p harness --target-dir target/x86-64-v3` (or pass --build-cachegrind-bin)",
            v3.display()
        ));
    }
    if v3.is_file() {
        return cachegrind_run(&v3, &probe_args)
            .map(|_| v3.clone())
            .map_err(|e| format!("{first}; {} also fails: {e}", v3.display()));
    }
    Err(format!(
        "{first}; build one valgrind can run with `RUSTFLAGS='-C target-cpu=x86-64-v3' cargo build --release -p harness --target-dir target/x86-64-v3` (or pass --build-cachegrind-bin)"
    ))
}

/// Marginal cache counts per projection of one point (size, solver, ordering, iterations).
pub fn misses_per_projection(
    bin: &Path,
    p: &Point,
    (low, high): (usize, usize),
    tuning: &Tuning,
) -> Result<(Counts, StepReport), String> {
    let args = |steps: usize| -> Vec<String> {
        [
            "--scene",
            &p.scene,
            "--n",
            &p.n.to_string(),
            "--solver",
            &p.solver,
            "--ordering",
            &p.ordering,
            "--iterations",
            &p.iterations.to_string(),
            "--substeps",
            &p.substeps.to_string(),
            "--threads",
            &p.threads.to_string(),
            "--warmup",
            "0",
            "--steps",
            &steps.to_string(),
            "--omega",
            &tuning.omega.to_string(),
            "--inner",
            &tuning.inner.to_string(),
            "--kernel",
            tuning.kernel.name(),
            "--json",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    };
    let (a, _) = cachegrind_run(bin, &args(low))?;
    let (b, rep) = cachegrind_run(bin, &args(high))?;
    let proj = (rep.constraints * rep.iterations * rep.substeps) as f64 * (high - low) as f64;
    Ok((
        Counts {
            d_refs: (b.d_refs - a.d_refs) / proj,
            d1_misses: (b.d1_misses - a.d1_misses) / proj,
            lld_misses: (b.lld_misses - a.lld_misses) / proj,
        },
        rep,
    ))
}

fn orderings_key(
    orderings: &[String],
    solvers: &[String],
) -> impl Fn(&ScaleRow) -> (String, usize, bool) {
    let o = orderings.to_vec();
    let multi = solvers.len() > 1;
    let s = solvers.to_vec();
    move |r| {
        let oi = o.iter().position(|x| x == &r.ordering).unwrap_or(0);
        let si = s.iter().position(|x| x == &r.solver).unwrap_or(0);
        let name = if multi {
            format!("{} {}", r.ordering, r.solver)
        } else {
            r.ordering.clone()
        };
        (name, oi, si > 0)
    }
}

/// `wobble cache`.
pub fn run(a: &CacheArgs) -> Result<Section, Error> {
    check_scene(&a.scene)?;
    if a.scene == "mesh" {
        return Err(Error::Arg(
            "cache sweeps sizes of a standard scene; mesh has no size".into(),
        ));
    }
    let fine = parse_sizes(&a.sizes, &a.scene)?;
    let large = if a.large.trim().is_empty() {
        Vec::new()
    } else {
        parse_sizes(&a.large, &a.scene)?
    };
    let orderings = parse_orderings(&a.orderings)?;
    let solvers = parse_solvers(&a.solvers)?;
    let cg_sizes = if a.cachegrind_sizes.trim().is_empty() {
        Vec::new()
    } else {
        parse_sizes(&a.cachegrind_sizes, &a.scene)?
    };
    let cg_orderings = parse_orderings(&a.cachegrind_orderings)?;
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
    a.tuning.check()?;
    let out = &a.out;
    let mut sec = Section::new("Cache and particle ordering");
    let mut sweep = Sweep::create(out, "cache", &a.budget, &a.tuning)?;
    sec.add_files(sweep.files());
    let mut all_sizes = fine.clone();
    all_sizes.extend(large.iter().copied().filter(|n| !fine.contains(n)));
    let pb = progress::bar(all_sizes.len() * orderings.len() * solvers.len(), "cache");
    for &n in &all_sizes {
        for s in &solvers {
            for o in &orderings {
                pb.set_message(format!("n={n} {s} {o}"));
                let p = Point {
                    scene: a.scene.clone(),
                    n,
                    solver: s.clone(),
                    threads: 1,
                    iterations: a.iters,
                    substeps: 1,
                    ordering: o.clone(),
                };
                if sweep.point(&p)?.is_none() {
                    if let Some((_, note)) = sweep.skipped.last() {
                        progress::note_once(&pb, &format!("cache: {s} {o}: {note}"));
                    }
                }
                pb.inc(1);
            }
        }
    }
    pb.finish_and_clear();
    let rows = sweep.measured.clone();
    let fine_rows: Vec<ScaleRow> = rows
        .iter()
        .filter(|r| fine.contains(&r.n))
        .cloned()
        .collect();
    let key = orderings_key(&orderings, &solvers);
    let fine_plot = Plot {
        title: format!(
            "Step time per ordering, {} around the L1 boundary ({} iterations)",
            a.scene, a.iters
        ),
        x_label: "vertices".into(),
        y_label: "ms per step (median)".into(),
        series: lines(&fine_rows, &key, |r| r.ms_per_step_median),
        legend: Legend::UpperLeft,
        ..Default::default()
    };
    let all_plot = Plot {
        title: format!("Time per projection per ordering, {}", a.scene),
        x_label: "vertices".into(),
        y_label: "ns per projection".into(),
        x_log: true,
        y_log: true,
        series: lines(&rows, &key, |r| r.ns_per_projection),
        markers: crate::scale::cache_markers(
            &crate::machine::probe(),
            rows.last()
                .map_or(3.0, |r| r.constraints as f64 / r.vertices as f64),
        ),
        legend: Legend::UpperLeft,
    };
    let fine_stem = out.join("cache_fine");
    let all_stem = out.join("cache_large");
    sec.add_files(fine_plot.save(&fine_stem)?);
    sec.add_files(all_plot.save(&all_stem)?);
    sec.line(format!(
        "{} with solvers {}, orderings {}, {} iterations, one thread; fine grid n = {}, large n = {}.\n",
        a.scene, a.solvers, a.orderings, a.iters, a.sizes, a.large
    ));
    sec.line(figure(&fine_stem, out, "step time per ordering, fine grid"));
    sec.line("");
    sec.line(figure(
        &all_stem,
        out,
        "ns per projection per ordering, all sizes",
    ));
    sec.line("\nns per projection:\n");
    sec.line(crate::scale::pivot(
        &rows,
        |r| format!("{} {}", r.solver, r.ordering),
        |r| r.ns_per_projection,
        "ns",
    ));
    let notes = skipped_summary(&sweep.skipped);
    if !notes.is_empty() {
        sec.line(format!("\nNot measured:\n\n{notes}"));
    }

    // Cachegrind.
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
            "lld_misses_per_projection",
            "binary",
            "status",
        ],
    )?;
    sec.add_files([miss_path.clone()]);
    let mut table = vec![
        "| vertices (n) | solver | ordering | D refs / projection | D1 misses / projection | LLd misses / projection | status |".to_string(),
        "| --- | --- | --- | --- | --- | --- | --- |".to_string(),
    ];
    let bin = if a.no_cachegrind {
        Err("cachegrind runs were switched off (--no-cachegrind)".to_string())
    } else if cg_sizes.is_empty() {
        Err("no cachegrind sizes were asked for".to_string())
    } else {
        cachegrind_binary(a.cachegrind_bin.as_deref(), a.build_cachegrind_bin)
    };
    let (low, high) = (cg_steps[0], cg_steps[1]);
    match &bin {
        Err(why) => {
            sec.line(format!("\nCache misses: not measured: {why}."));
            misses.record(&[
                a.scene.clone(),
                String::new(),
                String::new(),
                String::new(),
                String::new(),
                String::new(),
                String::new(),
                String::new(),
                String::new(),
                String::new(),
                String::new(),
                String::new(),
                format!("not measured: {why}"),
            ])?;
        }
        Ok(bin) => {
            let pb = progress::bar(
                cg_sizes.len() * solvers.len() * cg_orderings.len(),
                "cachegrind",
            );
            for &n in &cg_sizes {
                for s in &solvers {
                    for o in &cg_orderings {
                        pb.set_message(format!("n={n} {s} {o}"));
                        let p = Point {
                            scene: a.scene.clone(),
                            n,
                            solver: s.clone(),
                            threads: 1,
                            iterations: a.iters,
                            substeps: 1,
                            ordering: o.clone(),
                        };
                        let r = misses_per_projection(bin, &p, (low, high), &a.tuning);
                        let row = match r {
                            Ok((c, rep)) => MissRow {
                                scene: a.scene.clone(),
                                n,
                                vertices: rep.vertices,
                                solver: s.clone(),
                                ordering: o.clone(),
                                steps_low: low,
                                steps_high: high,
                                projections_per_step: rep.constraints
                                    * rep.iterations
                                    * rep.substeps,
                                d_refs_per_projection: c.d_refs,
                                d1_misses_per_projection: c.d1_misses,
                                lld_misses_per_projection: c.lld_misses,
                                binary: bin.display().to_string(),
                                status: "ok".into(),
                            },
                            Err(e) => MissRow {
                                scene: a.scene.clone(),
                                n,
                                vertices: 0,
                                solver: s.clone(),
                                ordering: o.clone(),
                                steps_low: low,
                                steps_high: high,
                                projections_per_step: 0,
                                d_refs_per_projection: f64::NAN,
                                d1_misses_per_projection: f64::NAN,
                                lld_misses_per_projection: f64::NAN,
                                binary: bin.display().to_string(),
                                status: match e.strip_prefix("cachegrind run failed: unsupported: ")
                                {
                                    Some(rest) => format!("unsupported here: {rest}"),
                                    None => e,
                                },
                            },
                        };
                        table.push(if row.status == "ok" {
                            format!(
                                "| {} ({n}) | {s} | {o} | {:.2} | {:.4} | {:.5} | ok |",
                                row.vertices,
                                row.d_refs_per_projection,
                                row.d1_misses_per_projection,
                                row.lld_misses_per_projection
                            )
                        } else {
                            format!("| ({n}) | {s} | {o} | - | - | - | {} |", row.status)
                        });
                        misses.row(&row)?;
                        pb.inc(1);
                    }
                }
            }
            pb.finish_and_clear();
            sec.line(format!(
                "\nSimulated data-cache misses per projection (cachegrind, marginal over steps {low}..{high}, binary `{}`):\n",
                bin.display()
            ));
            sec.line(table.join("\n"));
        }
    }
    sec.line(format!(
        "\nData: {}, {}, {}.",
        link(&out.join("cache.csv"), out),
        link(&out.join("cache_runs.csv"), out),
        link(&miss_path, out)
    ));
    Ok(sec)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cachegrind_summary_is_parsed() {
        let text = "==1== D   refs:      16,978,154  (11,002,870 rd   + 5,975,284 wr)\n\
                    ==1== D1  misses:        104,508  (    55,682 rd   +    48,826 wr)\n\
                    ==1== LLd misses:          4,965  (     2,159 rd   +     2,806 wr)\n";
        let c = parse_cachegrind(text).unwrap();
        assert_eq!(c.d_refs, 16_978_154.0);
        assert_eq!(c.d1_misses, 104_508.0);
        assert_eq!(c.lld_misses, 4_965.0);
        assert!(parse_cachegrind("nothing here").is_none());
    }
}
