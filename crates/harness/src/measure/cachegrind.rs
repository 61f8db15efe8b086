//! Simulated data-cache misses per projection (valgrind's cachegrind).
//!
//! cachegrind 3.19 cannot switch its counting on and off inside a run, so a count per step is
//! marginal: `wobble step` runs twice with no warm-up and `low` then `high` timed steps, and
//! (count(high) - count(low)) / ((high - low) x projections per step) removes process
//! start-up and scene building, leaving what one more step costs. Its resolution is one count
//! over those projections; start-up itself varies by a few counts between the two runs, so a
//! difference that comes out negative is reported as 0 with a resolution widened to that
//! deficit (a count is never negative).
//!
//! The simulated caches are given explicitly (`--D1`, `--LL` from the machine's L1d and last
//! level, read from sysfs) because cachegrind's own guess on this VM is a 256 MiB
//! direct-mapped LL, under which nothing short of a gigabyte ever misses.
//!
//! valgrind cannot decode AVX-512 instructions, which a `target-cpu=native` build on an AVX-512
//! machine contains. When the running binary dies under valgrind, the harness uses a build for
//! `x86-64-v3` (AVX2) at `target/x86-64-v3/release/wobble` (built on request with
//! `--build-cachegrind-bin`, or given with `--cachegrind-bin`). It runs the same code on the
//! same data layout; only the SIMD width of the kernels differs.

use crate::measure::child;
use crate::measure::step::StepReport;
use crate::measure::sweep::Point;
use crate::setup::Tuning;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

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

/// One simulated cache: size, associativity and line size in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SimCache {
    /// Size in bytes.
    pub bytes: u64,
    /// Ways.
    pub ways: u64,
    /// Line size in bytes.
    pub line: u64,
}

impl SimCache {
    /// cachegrind's `size,assoc,line` syntax.
    pub fn arg(&self) -> String {
        format!("{},{},{}", self.bytes, self.ways, self.line)
    }

    /// "32 KiB 8-way 64 B lines".
    pub fn describe(&self) -> String {
        format!(
            "{} {}-way {} B lines",
            crate::measure::machine::human_bytes(self.bytes),
            self.ways,
            self.line
        )
    }
}

/// The machine's L1d and last-level data caches from sysfs under `dir` (`index*/{level,type,
/// size,ways_of_associativity,coherency_line_size}`), as cachegrind should simulate them;
/// `None` when either is missing or has a set count cachegrind refuses (not a power of two).
pub fn machine_caches(dir: &Path) -> Option<(SimCache, SimCache)> {
    let mut found: Vec<(u32, SimCache)> = Vec::new();
    for e in std::fs::read_dir(dir).ok()?.flatten() {
        let p = e.path();
        let read = |f: &str| {
            std::fs::read_to_string(p.join(f))
                .ok()
                .map(|s| s.trim().to_string())
        };
        let (Some(level), Some(kind), Some(size), Some(ways), Some(line)) = (
            read("level").and_then(|s| s.parse::<u32>().ok()),
            read("type"),
            read("size").and_then(|s| crate::measure::machine::parse_size(&s)),
            read("ways_of_associativity").and_then(|s| s.parse::<u64>().ok()),
            read("coherency_line_size").and_then(|s| s.parse::<u64>().ok()),
        ) else {
            continue;
        };
        if kind == "Instruction" || ways == 0 || line == 0 {
            continue;
        }
        let sets = size / (ways * line);
        if sets == 0 || !sets.is_power_of_two() {
            continue;
        }
        found.push((
            level,
            SimCache {
                bytes: size,
                ways,
                line,
            },
        ));
    }
    found.sort_by_key(|f| f.0);
    let d1 = found.iter().find(|f| f.0 == 1)?.1;
    let ll = found.last()?.1;
    Some((d1, ll))
}

/// The caches the simulation uses: the machine's, or cachegrind's own guess when sysfs lacks them.
pub fn sim_caches() -> Option<(SimCache, SimCache)> {
    machine_caches(Path::new("/sys/devices/system/cpu/cpu0/cache"))
}

fn cachegrind_cmd(bin: &Path, step_args: &[String]) -> Command {
    let mut c = Command::new("valgrind");
    c.args([
        "--tool=cachegrind",
        "--cache-sim=yes",
        "--cachegrind-out-file=/dev/null",
    ]);
    if let Some((d1, ll)) = sim_caches() {
        c.arg(format!("--D1={}", d1.arg()))
            .arg(format!("--LL={}", ll.arg()));
    }
    c.arg(bin).arg("step").args(step_args);
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

/// Where [`v3_binary`] lies, relative to the checkout (for messages, which name no machine path).
const V3_REL: &str = "target/x86-64-v3/release/wobble";

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
        return Err("the source tree this binary was built from is gone".to_string());
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
            "{first}; {V3_REL} is older than this binary, so it was built from older sources: rebuild it with `RUSTFLAGS='-C target-cpu=x86-64-v3' cargo build --release -p harness --target-dir target/x86-64-v3` (or pass --build-cachegrind-bin)"
        ));
    }
    if v3.is_file() {
        return cachegrind_run(&v3, &probe_args)
            .map(|_| v3.clone())
            .map_err(|e| format!("{first}; {V3_REL} also fails: {e}"));
    }
    Err(format!(
        "{first}; build one valgrind can run with `RUSTFLAGS='-C target-cpu=x86-64-v3' cargo build --release -p harness --target-dir target/x86-64-v3` (or pass --build-cachegrind-bin)"
    ))
}

/// Marginal cache counts per projection of one point (size, solver, ordering, iterations),
/// clamped at 0 (see [`Marginal`]).
pub fn misses_per_projection(
    bin: &Path,
    p: &Point,
    steps: (usize, usize),
    tuning: &Tuning,
) -> Result<(Counts, StepReport), String> {
    runs(bin, p, steps, tuning).map(|(m, rep)| (m.per_projection, rep))
}

/// Marginal counts per projection, clamped at 0, with the resolution of each.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Marginal {
    /// Counts per projection (never negative).
    pub per_projection: Counts,
    /// Resolution per projection of each count: one count, or the deficit when the longer run
    /// counted fewer, over the projections between the two runs.
    pub resolution: Counts,
}

impl Marginal {
    /// From the counts of the shorter run `a` and the longer run `b`, `proj` projections apart.
    pub fn of(a: Counts, b: Counts, proj: f64) -> Self {
        let proj = proj.max(1.0);
        let one = |x: f64, y: f64| ((y - x).max(0.0) / proj, (x - y).max(1.0) / proj);
        let (d, dr) = one(a.d_refs, b.d_refs);
        let (m1, r1) = one(a.d1_misses, b.d1_misses);
        let (ml, rl) = one(a.lld_misses, b.lld_misses);
        Marginal {
            per_projection: Counts {
                d_refs: d,
                d1_misses: m1,
                lld_misses: ml,
            },
            resolution: Counts {
                d_refs: dr,
                d1_misses: r1,
                lld_misses: rl,
            },
        }
    }
}

/// Both runs' raw counts and the projections between them, for [`Marginal::of`].
pub fn runs(
    bin: &Path,
    p: &Point,
    (low, high): (usize, usize),
    tuning: &Tuning,
) -> Result<(Marginal, StepReport), String> {
    let args = |steps: usize| step_args(p, steps, tuning);
    let (a, _) = cachegrind_run(bin, &args(low))?;
    let (b, rep) = cachegrind_run(bin, &args(high))?;
    let proj = (rep.constraints * rep.iterations * rep.substeps) as f64 * (high - low) as f64;
    Ok((Marginal::of(a, b, proj), rep))
}

fn step_args(p: &Point, steps: usize, tuning: &Tuning) -> Vec<String> {
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
}

/// Names the binary run under valgrind without its path: this build, or the x86-64-v3 one.
pub fn binary_label(bin: &Path) -> String {
    let b = crate::measure::machine::Build::this();
    let this = child::wobble_exe().ok();
    if this.as_deref() == Some(bin) {
        format!("this wobble build ({} {} profile)", b.target, b.profile)
    } else if v3_binary().as_deref() == Some(bin) {
        format!("the x86-64-v3 build of the same sources ({})", b.target)
    } else {
        "the wobble binary given with --cachegrind-bin".to_string()
    }
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

    #[test]
    fn marginal_counts_are_never_negative_and_widen_their_resolution() {
        let a = Counts {
            d_refs: 1000.0,
            d1_misses: 100.0,
            lld_misses: 50.0,
        };
        let b = Counts {
            d_refs: 3000.0,
            d1_misses: 300.0,
            lld_misses: 20.0,
        };
        let m = Marginal::of(a, b, 100.0);
        assert_eq!(m.per_projection.d_refs, 20.0);
        assert_eq!(m.per_projection.d1_misses, 2.0);
        assert_eq!(m.per_projection.lld_misses, 0.0);
        assert_eq!(m.resolution.d1_misses, 0.01);
        assert_eq!(m.resolution.lld_misses, 0.3);
    }

    #[test]
    fn machine_caches_come_from_a_sysfs_like_tree() {
        let dir = crate::measure::machine::sysfs_caches(&[
            (1, "Data", "32K", 8),
            (1, "Instruction", "32K", 8),
            (2, "Unified", "512K", 8),
            (3, "Unified", "32768K", 16),
        ]);
        let (d1, ll) = machine_caches(dir.path()).unwrap();
        assert_eq!(d1.arg(), "32768,8,64");
        assert_eq!(ll.arg(), "33554432,16,64");
    }
}
