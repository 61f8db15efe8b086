//! `wobble threads`: one solver's step time at several thread counts, measured in turns on one
//! body (or on several bodies, one solver each, sharing one pool per thread count, as a game
//! steps its bodies), and the speed-ups.
//!
//! `wobble step` and criterion time one thread count after the other; on a shared virtual
//! machine the speed of the same single-thread run drifts by tens of percent between such
//! windows, which can pass for (or hide) a parallel speed-up. Here every count takes turns
//! stepping the same body (`--turn` timed steps after one untimed step, the order rotated each
//! round), so drift hits every count alike, and each turn's ratio is a paired sample. The parallel
//! solvers give the same bits on any thread count, so the shared body follows one trajectory;
//! `same_bits` checks that on one extra step from a common state.

use crate::measure::stats::quantile;
use crate::setup::{
    build_body_with, build_solver, parse_counts, Error, Layout, SceneArg, SolverArg,
};
use clap::Args;
use serde::Serialize;
use solver_core::mesh::repair::MeshOptions;
use solver_core::{figures, step, Solver, StepParams};
use sparse::SolverOptions;
use std::time::Instant;

/// Arguments of `wobble threads`.
#[derive(Args, Debug, Clone)]
pub struct ThreadsArgs {
    /// Scene (a standard scene built from its size: not mesh).
    #[arg(long, value_enum, default_value_t = SceneArg::Cloth)]
    pub scene: SceneArg,
    /// Size parameter (grid side; subdivision level for jelly; cells per side for cube).
    #[arg(long, default_value_t = 512)]
    pub n: usize,
    /// Parallel solver: colored, jacobi or chebyshev (the others run on one thread and are
    /// refused).
    #[arg(long, value_enum, default_value_t = SolverArg::Colored)]
    pub solver: SolverArg,
    /// Solver iterations per step.
    #[arg(long, default_value_t = 8)]
    pub iterations: usize,
    /// Thread counts, comma-separated; speed-ups are against the first.
    #[arg(long, default_value = "1,2")]
    pub threads: String,
    /// Particle ordering, `colored`'s tile and distance kernel.
    #[command(flatten)]
    pub layout: Layout,
    /// Bodies stepped one after the other per timed step, each with its own solver, all the
    /// solvers of a thread count sharing one pool (`SolverOptions::pool`).
    #[arg(long, default_value_t = 1)]
    pub bodies: usize,
    /// With several bodies: step whole bodies on the pool's threads at once
    /// (`sparse::step_bodies`), each body's solver serial, instead of splitting each body.
    #[arg(long)]
    pub across_bodies: bool,
    /// Smallest color (colored) or constraint count (Jacobi family) split across threads.
    #[arg(long, default_value_t = SolverOptions::default().parallel_threshold)]
    pub parallel_threshold: usize,
    /// Untimed steps per thread count before the timed ones.
    #[arg(long, default_value_t = 10)]
    pub warmup: usize,
    /// Timed steps per thread count.
    #[arg(long, default_value_t = 100)]
    pub steps: usize,
    /// Timed steps per turn (each turn starts with one untimed step).
    #[arg(long, default_value_t = 4)]
    pub turn: usize,
    /// Print compact JSON on one line (the default is pretty-printed).
    #[arg(long)]
    pub json: bool,
}

/// One thread count's timings.
#[derive(Serialize, Debug, Clone)]
pub struct CountTiming {
    /// Thread count.
    pub threads: usize,
    /// Median time of a timed step (all bodies) over this count's timed steps, in ms.
    pub ms_per_step_median: f64,
    /// 10th percentile of the step time, in ms.
    pub ms_per_step_p10: f64,
    /// 90th percentile of the step time, in ms.
    pub ms_per_step_p90: f64,
    /// The first count's median over this one's.
    pub speedup: f64,
    /// Median over turns of (the first count's turn median / this count's, same round).
    pub speedup_paired: f64,
}

/// What `wobble threads` prints.
#[derive(Serialize, Debug, Clone)]
pub struct ThreadsReport {
    /// Scene name.
    pub scene: String,
    /// Size parameter of the scene.
    pub n: usize,
    /// Particle count of one body.
    pub vertices: usize,
    /// Bodies per timed step (each with its own solver; one pool per thread count).
    pub bodies: usize,
    /// The parallel threshold the solvers ran with.
    pub parallel_threshold: usize,
    /// Whether whole bodies ran on the threads at once (each body's solver serial).
    pub across_bodies: bool,
    /// Constraint count of the body.
    pub constraints: usize,
    /// Solver name, as the solver reports it.
    pub solver: String,
    /// Solver iterations per step.
    pub iterations: usize,
    /// Particle ordering the body was built with.
    pub ordering: String,
    /// Timed steps per thread count (`--steps` rounded up to whole turns).
    pub steps: usize,
    /// Timed steps per turn.
    pub turn: usize,
    /// Timings per thread count, in `--threads` order (speed-ups are against the first).
    pub counts: Vec<CountTiming>,
    /// The distance kernel the solver ran (`null` for solvers that run none).
    pub kernel: Option<String>,
    /// Whether one more step from a common state gives the same positions, bit for bit, on
    /// every thread count.
    pub same_bits: bool,
}

/// Measures the speed-ups (also used by tests).
pub fn measure(args: &ThreadsArgs) -> Result<ThreadsReport, Error> {
    if args.steps == 0 || args.turn == 0 {
        return Err(Error::Arg("--steps and --turn must be at least 1".into()));
    }
    let counts = parse_counts(&args.threads, "threads")?;
    if args.bodies == 0 || args.bodies > 64 {
        return Err(Error::Arg(format!(
            "--bodies {}: give 1 to 64 bodies",
            args.bodies
        )));
    }
    // Per thread count, one solver per body, all on one pool (or, across bodies, serial
    // solvers and the pool stepping the bodies).
    let mut solvers: Vec<Vec<Box<dyn Solver>>> = Vec::with_capacity(counts.len());
    let mut pools = Vec::with_capacity(counts.len());
    for &threads in &counts {
        let pool = sparse::Pool::new(threads)?;
        let opts = SolverOptions {
            threads: if args.across_bodies { 1 } else { threads },
            kernel: args.layout.kernel.kernel(),
            parallel_threshold: args.parallel_threshold,
            ..Default::default()
        };
        let opts = SolverOptions {
            pool: (!args.across_bodies).then(|| pool.clone()),
            ..opts
        };
        pools.push(pool);
        let group = (0..args.bodies)
            .map(|_| build_solver(args.layout.tune(args.solver.kind()), &opts))
            .collect::<Result<Vec<_>, _>>()?;
        if !args.across_bodies && group[0].report().threads != threads {
            return Err(Error::Arg(format!(
                "solver '{}' runs on {} thread(s), not {threads}: `wobble threads` compares the \
                 parallel solvers (colored, jacobi, chebyshev)",
                args.solver,
                group[0].report().threads
            )));
        }
        solvers.push(group);
    }
    let (body, ordering) = build_body_with(
        args.scene.name(),
        args.n,
        None,
        args.layout.ordering.name(),
        &MeshOptions::default(),
    )?;
    let mut bodies = vec![body; args.bodies];
    let params = StepParams {
        iterations: args.iterations,
        ..Default::default()
    };
    params.validate()?;
    let across = args.across_bodies;
    let mut frame = |c: usize, group: &mut Vec<Box<dyn Solver>>| -> Result<(), Error> {
        if across {
            for r in sparse::step_bodies(&pools[c], &mut bodies, group, &params)? {
                r?;
            }
        } else {
            for (body, s) in bodies.iter_mut().zip(group.iter_mut()) {
                step(body, &params, s.as_mut(), None)?;
            }
        }
        Ok(())
    };
    for _ in 0..args.warmup {
        for (c, group) in solvers.iter_mut().enumerate() {
            frame(c, group)?;
        }
    }
    let turns = args.steps.div_ceil(args.turn);
    let m = crate::measure::paired::interleave(counts.len(), turns, |c| {
        // The first step of a turn wakes the pool and brings this solver's data back.
        frame(c, &mut solvers[c])?;
        let mut turn = Vec::with_capacity(args.turn);
        for _ in 0..args.turn {
            let t0 = Instant::now();
            frame(c, &mut solvers[c])?;
            turn.push(t0.elapsed().as_secs_f64() * 1e3);
        }
        Ok::<_, Error>(turn)
    })?;
    let (times, turn_medians) = (&m.samples, &m.turn_medians);
    let body = &bodies[0];
    let mut firsts: Vec<Box<dyn Solver>> = solvers.iter_mut().map(|g| g.swap_remove(0)).collect();
    let same_bits = same_bits(body, &params, &mut firsts)?;
    let base_median = quantile(&times[0], 0.5);
    let timings = counts
        .iter()
        .enumerate()
        .map(|(c, &threads)| {
            let median = quantile(&times[c], 0.5);
            let paired: Vec<f64> = turn_medians[0]
                .iter()
                .zip(&turn_medians[c])
                .map(|(a, b)| a / b)
                .collect();
            CountTiming {
                threads,
                ms_per_step_median: median,
                ms_per_step_p10: quantile(&times[c], 0.1),
                ms_per_step_p90: quantile(&times[c], 0.9),
                speedup: base_median / median,
                speedup_paired: quantile(&paired, 0.5),
            }
        })
        .collect();
    Ok(ThreadsReport {
        scene: args.scene.name().to_string(),
        n: args.n,
        vertices: body.len(),
        bodies: args.bodies,
        parallel_threshold: args.parallel_threshold,
        across_bodies: args.across_bodies,
        constraints: body.constraints().len(),
        solver: firsts[0].name().to_string(),
        iterations: args.iterations,
        ordering: ordering.name().to_string(),
        steps: turns * args.turn,
        turn: args.turn,
        counts: timings,
        kernel: firsts[0].report().kernel.map(|k| k.to_string()),
        same_bits,
    })
}

/// One step of a copy of `body` per solver: whether all end with the same position bits.
fn same_bits(
    body: &solver_core::Body,
    params: &StepParams,
    solvers: &mut [Box<dyn Solver>],
) -> Result<bool, Error> {
    let mut hashes = Vec::with_capacity(solvers.len());
    for s in solvers.iter_mut() {
        let mut b = body.clone();
        step(&mut b, params, s.as_mut(), None)?;
        hashes.push(figures::state_hash(&b.particles().x()));
    }
    Ok(hashes.windows(2).all(|w| w[0] == w[1]))
}

/// `wobble threads`.
pub fn run(args: &ThreadsArgs) -> Result<(), Error> {
    crate::output::json::print_json(&measure(args)?, args.json)
}
