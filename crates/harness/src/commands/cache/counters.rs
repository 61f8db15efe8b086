//! Hardware counters (cycles, instructions, L1d and last-level read misses) per projection,
//! read with `perf_event_open` around timed steps, where the machine has a PMU.
//!
//! Virtual machines often expose none: `perf_event_open` then fails (ENOENT for a hardware
//! event), and [`probe`] says so in one line instead of measuring.

use crate::setup::{Error, Tuning};
use perf_event::events::{Cache, CacheOp, CacheResult, Hardware, WhichCache};
use perf_event::{Builder, Counter, Group};
use solver_core::{step, Body, StepParams};

/// Counts per projection of one point.
#[derive(Debug, Clone, serde::Serialize)]
pub struct CounterRow {
    /// Scene name.
    pub scene: String,
    /// Size parameter of the scene.
    pub n: usize,
    /// Particle count of the body.
    pub vertices: usize,
    /// Solver name.
    pub solver: String,
    /// Particle ordering.
    pub ordering: String,
    /// Timed steps the counts cover.
    pub steps: usize,
    /// CPU cycles per projection.
    pub cycles_per_projection: f64,
    /// Instructions per projection.
    pub instructions_per_projection: f64,
    /// L1d read misses per projection.
    pub l1d_misses_per_projection: f64,
    /// Last-level read misses per projection.
    pub ll_misses_per_projection: f64,
}

/// Columns of cache_counters.csv: the fields of [`CounterRow`].
pub const COUNTERS_HEADER: &[&str] = &[
    "scene",
    "n",
    "vertices",
    "solver",
    "ordering",
    "steps",
    "cycles_per_projection",
    "instructions_per_projection",
    "l1d_misses_per_projection",
    "ll_misses_per_projection",
];

/// A group of the four counters on this thread.
pub struct Counters {
    group: Group,
    cycles: Counter,
    instructions: Counter,
    l1d: Counter,
    ll: Counter,
}

fn miss(which: WhichCache) -> Cache {
    Cache {
        which,
        operation: CacheOp::READ,
        result: CacheResult::MISS,
    }
}

impl Counters {
    /// Opens the counters; `Err` says why the machine has none.
    pub fn open() -> std::io::Result<Self> {
        let mut group = Group::new()?;
        let cycles = Builder::new()
            .group(&mut group)
            .kind(Hardware::CPU_CYCLES)
            .build()?;
        let instructions = Builder::new()
            .group(&mut group)
            .kind(Hardware::INSTRUCTIONS)
            .build()?;
        let l1d = Builder::new()
            .group(&mut group)
            .kind(miss(WhichCache::L1D))
            .build()?;
        let ll = Builder::new()
            .group(&mut group)
            .kind(miss(WhichCache::LL))
            .build()?;
        Ok(Counters {
            group,
            cycles,
            instructions,
            l1d,
            ll,
        })
    }

    /// Runs `f` with the counters on; returns (cycles, instructions, L1d misses, LL misses).
    pub fn around(&mut self, f: impl FnOnce() -> Result<(), Error>) -> Result<[u64; 4], Error> {
        let io = |e: std::io::Error| Error::Io(format!("perf_event: {e}"));
        self.group.reset().map_err(io)?;
        self.group.enable().map_err(io)?;
        let r = f();
        self.group.disable().map_err(io)?;
        r?;
        let c = self.group.read().map_err(io)?;
        let get = |k: &Counter| c.get(k).copied().unwrap_or(0);
        Ok([
            get(&self.cycles),
            get(&self.instructions),
            get(&self.l1d),
            get(&self.ll),
        ])
    }
}

/// `Ok(())` when the four counters open here, else the one line the report prints.
pub fn probe() -> Result<(), String> {
    Counters::open().map(|_| ()).map_err(|e| {
        let hint = if e.raw_os_error() == Some(libc::ENOENT) {
            " (the CPU exposes no such hardware event: no PMU, as in most virtual machines)"
        } else if e.raw_os_error() == Some(libc::EACCES) || e.raw_os_error() == Some(libc::EPERM) {
            " (not permitted: see /proc/sys/kernel/perf_event_paranoid)"
        } else {
            ""
        };
        format!("Hardware counters: not measured: perf_event_open failed: {e}{hint}.")
    })
}

/// Counts per projection over `steps` steps of `solver` on a copy of `body` (after 2 untimed).
#[allow(clippy::too_many_arguments)]
pub fn measure(
    counters: &mut Counters,
    scene: &str,
    n: usize,
    ordering: &str,
    body: &Body,
    solver: &str,
    iterations: usize,
    steps: usize,
    tuning: &Tuning,
) -> Result<CounterRow, Error> {
    let params = StepParams {
        iterations,
        ..Default::default()
    };
    let mut b = body.clone();
    let mut s = tuning.build_named(solver, 1)?;
    for _ in 0..2 {
        step(&mut b, &params, s.as_mut(), None)?;
    }
    let c = counters.around(|| {
        for _ in 0..steps {
            step(&mut b, &params, s.as_mut(), None)?;
        }
        Ok(())
    })?;
    let proj = (b.constraints().len() * iterations * params.substeps * steps).max(1) as f64;
    Ok(CounterRow {
        scene: scene.to_string(),
        n,
        vertices: b.len(),
        solver: s.name().to_string(),
        ordering: ordering.to_string(),
        steps,
        cycles_per_projection: c[0] as f64 / proj,
        instructions_per_projection: c[1] as f64 / proj,
        l1d_misses_per_projection: c[2] as f64 / proj,
        ll_misses_per_projection: c[3] as f64 / proj,
    })
}
