//! `wobble bodies`: many small bodies in one frame, as a game steps them. The `crowd` world
//! of docs/SCENES.md (64 bodies: 32 hammocks of 16 x 16 and 32 jellies of 162 vertices, half of
//! the jellies lying in their hammocks) is stepped by `World::step` on one shared pool per
//! thread count (`World::set_executor`), and the same 64 bodies are stepped alone, one
//! `step()` each on the caller's thread: the cost of one body's step times 64, without the
//! world.
//!
//! The arms take turns (`--turn` timed steps after one untimed step, the order rotated each
//! round; [`crate::measure::paired`]), so the machine's drift hits them alike and each round
//! gives a paired ratio: the world on one thread over the bodies alone, and the speed-up of
//! each thread count over the first. The world gives the same bits on every thread count, so
//! every world arm follows one trajectory; `same_bits` compares their states at the end.

use crate::measure::paired::{interleave, Interval};
use crate::output::csv::RowWriter;
use crate::output::section::{link, Section};
use crate::setup::{build_solver, parse_counts, Error, SolverArg};
use clap::Args;
use serde::Serialize;
use solver_core::{figures, step, Body, Solver, StepParams, World};
use sparse::SolverOptions;
use std::path::PathBuf;
use std::time::Instant;

/// Arguments of `wobble bodies`.
#[derive(Args, Debug, Clone)]
pub struct BodiesArgs {
    /// Each body's solver; it runs on one thread, the world spreads the bodies over the pool.
    #[arg(long, value_enum, default_value_t = SolverArg::Gs)]
    pub solver: SolverArg,
    /// Solver iterations per substep.
    #[arg(long, default_value_t = 8)]
    pub iterations: usize,
    /// Substeps per step (dt = 1/60).
    #[arg(long, default_value_t = 1)]
    pub substeps: usize,
    /// Thread counts of the world's pool, comma-separated; speed-ups are against the first.
    #[arg(long, default_value = "1,2")]
    pub threads: String,
    /// Every jelly beside its hammock, so no two bodies touch: the world's own cost without
    /// the contacts between bodies.
    #[arg(long)]
    pub apart: bool,
    /// Untimed steps of every arm before the timed ones (the default lets the jellies land
    /// first).
    #[arg(long, default_value_t = 30)]
    pub warmup: usize,
    /// Rounds: in each, every arm takes one turn.
    #[arg(long, default_value_t = 20)]
    pub rounds: usize,
    /// Timed steps per turn (each turn starts with one untimed step).
    #[arg(long, default_value_t = 4)]
    pub turn: usize,
    /// Print compact JSON on one line (the default is pretty-printed).
    #[arg(long)]
    pub json: bool,
}

/// One world arm's timings.
#[derive(Serialize, Debug, Clone)]
pub struct WorldTiming {
    /// Threads of the world's pool.
    pub threads: usize,
    /// Median step time (all 64 bodies) in ms, with its 95% interval.
    pub ms_per_step: Interval,
    /// Paired ratio of this world's step time over the 64 bodies stepped alone.
    pub over_alone: Interval,
    /// Paired speed-up: the first thread count's step time over this one's.
    pub speedup: Interval,
}

/// What `wobble bodies` prints.
#[derive(Serialize, Debug, Clone)]
pub struct BodiesReport {
    /// The world (`crowd`, or `crowd --apart`).
    pub scene: String,
    /// Bodies in the world.
    pub bodies: usize,
    /// Particles over all bodies.
    pub particles: usize,
    /// Cells whose jelly lies in its hammock (0 with `--apart`).
    pub touching_pairs: usize,
    /// Each body's solver, as it reports itself.
    pub solver: String,
    /// Iterations per substep.
    pub iterations: usize,
    /// Substeps per step.
    pub substeps: usize,
    /// Rounds and timed steps per turn.
    pub rounds: usize,
    /// Timed steps per turn.
    pub turn: usize,
    /// The 64 bodies stepped alone, one `step()` each, on the caller's thread: median ms per
    /// step of all of them, with its 95% interval.
    pub alone_ms_per_step: Interval,
    /// The world on each thread count, in `--threads` order.
    pub worlds: Vec<WorldTiming>,
    /// Contacts of the last substep of the first world (between bodies and with colliders).
    pub contacts: usize,
    /// Whether every world arm ended with the same positions, bit for bit.
    pub same_bits: bool,
}

/// Every body's positions, hashed.
fn world_hash(world: &World) -> u64 {
    let x: Vec<_> = world
        .bodies()
        .flat_map(|b| b.body().particles().x().iter().copied())
        .collect();
    figures::state_hash(&x)
}

/// Measures the world against its bodies alone (also used by tests and the report).
pub fn measure(a: &BodiesArgs) -> Result<BodiesReport, Error> {
    if a.rounds == 0 || a.turn == 0 {
        return Err(Error::Arg("--rounds and --turn must be at least 1".into()));
    }
    let counts = parse_counts(&a.threads, "threads")?;
    let params = StepParams {
        substeps: a.substeps,
        iterations: a.iterations,
        ..Default::default()
    };
    params.validate()?;
    let serial = SolverOptions {
        threads: 1,
        ..Default::default()
    };
    let mut worlds = Vec::with_capacity(counts.len());
    for &threads in &counts {
        let mut world = scenes::crowd_with(!a.apart)?;
        for b in world.bodies_mut() {
            b.set_solver(build_solver(a.solver.kind(), &serial)?);
        }
        world.set_executor(Some(sparse::Pool::new(threads)?.world_executor()));
        worlds.push(world);
    }
    let mut alone: Vec<(Body, Box<dyn Solver>)> = Vec::new();
    let mut source = scenes::crowd_with(!a.apart)?;
    let handles: Vec<_> = source.bodies().map(|b| b.handle()).collect();
    for h in handles {
        alone.push((
            source.remove_body(h)?,
            build_solver(a.solver.kind(), &serial)?,
        ));
    }
    let bodies = alone.len();
    let particles = alone.iter().map(|(b, _)| b.len()).sum();
    let solver = alone[0].1.name().to_string();
    let mut contacts = 0;
    // Arm 0: the bodies alone; arm 1 + c: the world on thread count c.
    let mut frame = |arm: usize| -> Result<(), Error> {
        if arm == 0 {
            for (body, s) in alone.iter_mut() {
                step(body, &params, s.as_mut(), None)?;
            }
        } else {
            let report = worlds[arm - 1].step(&params)?;
            if arm == 1 {
                contacts = report.contacts;
            }
        }
        Ok(())
    };
    let arms = 1 + counts.len();
    for _ in 0..a.warmup {
        (0..arms).try_for_each(&mut frame)?;
    }
    let m = interleave(arms, a.rounds, |arm| {
        frame(arm)?;
        let mut turn = Vec::with_capacity(a.turn);
        for _ in 0..a.turn {
            let t0 = Instant::now();
            frame(arm)?;
            turn.push(t0.elapsed().as_secs_f64() * 1e3);
        }
        Ok::<_, Error>(turn)
    })?;
    let hashes: Vec<u64> = worlds.iter().map(world_hash).collect();
    let timings = counts
        .iter()
        .enumerate()
        .map(|(c, &threads)| WorldTiming {
            threads,
            ms_per_step: m.median(1 + c, 0.95),
            over_alone: m.ratio(1 + c, 0, 0.95),
            speedup: m.ratio(1, 1 + c, 0.95),
        })
        .collect();
    Ok(BodiesReport {
        scene: if a.apart { "crowd --apart" } else { "crowd" }.to_string(),
        bodies,
        particles,
        touching_pairs: if a.apart { 0 } else { scenes::CROWD_CELLS / 2 },
        solver,
        iterations: a.iterations,
        substeps: a.substeps,
        rounds: a.rounds,
        turn: a.turn,
        alone_ms_per_step: m.median(0, 0.95),
        worlds: timings,
        contacts,
        same_bits: hashes.windows(2).all(|w| w[0] == w[1]),
    })
}

/// `wobble bodies`.
pub fn run(a: &BodiesArgs) -> Result<(), Error> {
    crate::output::json::print_json(&measure(a)?, a.json)
}

/// Columns of `bodies.csv`.
const BODIES_HEADER: &[&str] = &[
    "scene",
    "bodies",
    "particles",
    "solver",
    "iterations",
    "substeps",
    "threads",
    "ms_per_step_median",
    "over_alone_median",
    "over_alone_lo",
    "over_alone_hi",
    "speedup_median",
    "speedup_lo",
    "speedup_hi",
    "alone_ms_per_step_median",
    "same_bits",
];

/// The report's part: `crowd` with its jellies in their hammocks and apart, written to
/// `out/bodies.csv` with a table.
pub fn section(a: &BodiesArgs, out: &std::path::Path) -> Result<Section, Error> {
    let path: PathBuf = out.join("bodies.csv");
    let mut w = RowWriter::create(&path, BODIES_HEADER)?;
    let mut sec = Section::new("Many bodies per frame");
    let mut rows = Vec::new();
    for apart in [false, true] {
        let r = measure(&BodiesArgs { apart, ..a.clone() })?;
        for t in &r.worlds {
            w.record(&[
                r.scene.clone(),
                r.bodies.to_string(),
                r.particles.to_string(),
                r.solver.clone(),
                r.iterations.to_string(),
                r.substeps.to_string(),
                t.threads.to_string(),
                t.ms_per_step.median.to_string(),
                t.over_alone.median.to_string(),
                t.over_alone.lo.to_string(),
                t.over_alone.hi.to_string(),
                t.speedup.median.to_string(),
                t.speedup.lo.to_string(),
                t.speedup.hi.to_string(),
                r.alone_ms_per_step.median.to_string(),
                r.same_bits.to_string(),
            ])?;
            rows.push(format!(
                "| {} | {} | {:.3} | {:.3} | {} | {} | {} |",
                r.scene,
                t.threads,
                t.ms_per_step.median,
                r.alone_ms_per_step.median,
                t.over_alone.display(3),
                t.speedup.display(3),
                r.same_bits
            ));
        }
    }
    sec.line(format!(
        "The `crowd` world (64 bodies: 16 x 16 hammocks and 162-vertex jellies, {} jellies in their hammocks; `--apart`: none) stepped by one `World` on a pool of each thread count, against the same 64 bodies stepped alone with one `step()` each; {} solver per body, {} iterations x {} substeps, {} interleaved rounds of {} steps, paired ratios with 95% intervals (`wobble bodies`). Data: {}.\n",
        scenes::CROWD_CELLS / 2,
        a.solver,
        a.iterations,
        a.substeps,
        a.rounds,
        a.turn,
        link(&path, out)
    ));
    sec.line("| scene | threads | world ms/step | alone ms/step | world / alone | speed-up | same bits |");
    sec.line("|---|---|---|---|---|---|---|");
    for r in rows {
        sec.line(r);
    }
    sec.add_files([path]);
    Ok(sec)
}
