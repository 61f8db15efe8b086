//! One whole cloth step (docs/SCENES.md defaults: dt = 1/60, 1 substep, 8 iterations) with the
//! sequential scalar Gauss-Seidel solver and the colored SIMD solver (one thread), at n = 32 and
//! n = 256; and the colored solver at n = 512 on 1 and 2 threads, and with its tiles off
//! (`step/colored_n512`: `threads1`, `threads2`, `threads1_whole_body`); and small bodies against a
//! large one (`step/small`: the colored solver on one thread at n = 16, 23 and 128, as 1 substep x
//! 8 iterations, `1x8/<n>`, and as 8 substeps x 1 iteration, `8x1/<n>`: a small body's ns per
//! projection over the large one's is what its size costs it, in the work fixed per step and per
//! color sweep and in the pace of short sweeps; `benches/instructions_per_projection.sh` tells
//! the two apart).
//! Throughput is in constraint projections (constraints x iterations x substeps), so
//! criterion's elements/s converts to ns per projection.

mod common;

use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, BenchmarkId, Criterion, Throughput};
use solver_core::{step, Body, Solver, StepParams};
use sparse::{ColoredOptions, SolverKind, SolverOptions};
use std::hint::black_box;
use std::time::Duration;

/// A group of 20 samples after a 0.5 s warm-up, measured for `measurement`.
fn step_group<'a>(
    c: &'a mut Criterion,
    name: &str,
    measurement: Duration,
) -> BenchmarkGroup<'a, WallTime> {
    let mut g = c.benchmark_group(name);
    g.sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(measurement);
    g
}

/// Benchmarks default steps of `body` with `solver` as `id`, once 20 steps have set it hanging
/// (so that the steps measured are typical ones); throughput in constraint projections.
fn bench_hanging_steps(
    g: &mut BenchmarkGroup<WallTime>,
    id: BenchmarkId,
    body: Body,
    solver: Box<dyn Solver>,
) {
    bench_hanging_steps_with(g, id, body, solver, StepParams::default());
}

/// [`bench_hanging_steps`] with `params`.
fn bench_hanging_steps_with(
    g: &mut BenchmarkGroup<WallTime>,
    id: BenchmarkId,
    mut body: Body,
    mut solver: Box<dyn Solver>,
    params: StepParams,
) {
    for _ in 0..20 {
        step(&mut body, &params, solver.as_mut(), None).expect("step");
    }
    let projections = body.constraints().len() * params.iterations * params.substeps;
    g.throughput(Throughput::Elements(projections as u64));
    g.bench_function(id, |b| {
        b.iter(|| {
            step(&mut body, &params, solver.as_mut(), None).expect("step");
            black_box(&body.particles().x());
        })
    });
}

fn cloth_step(c: &mut Criterion) {
    let mut g = step_group(c, "step/cloth", Duration::from_secs(3));
    for n in [32usize, 256] {
        for kind in [
            SolverKind::Gs,
            SolverKind::Colored(ColoredOptions::default()),
        ] {
            let body = scenes::cloth(n).expect("cloth");
            let solver = kind.build(&SolverOptions::default()).expect("solver");
            bench_hanging_steps(&mut g, BenchmarkId::new(kind.name(), n), body, solver);
        }
    }
    g.finish();
}

fn colored_threads(c: &mut Criterion) {
    let mut g = step_group(c, "step/colored_n512", Duration::from_secs(4));
    for (label, threads, tile) in [
        ("threads1", 1, sparse::colored::DEFAULT_TILE_PARTICLES),
        ("threads2", 2, sparse::colored::DEFAULT_TILE_PARTICLES),
        ("threads1_whole_body", 1, 0),
    ] {
        let body = scenes::cloth(512).expect("cloth");
        let opts = SolverOptions {
            threads,
            ..Default::default()
        };
        let tiled = ColoredOptions {
            tile_particles: tile,
            ..Default::default()
        };
        let solver = SolverKind::Colored(tiled).build(&opts).expect("solver");
        bench_hanging_steps(&mut g, BenchmarkId::from_parameter(label), body, solver);
    }
    g.finish();
}

fn small_bodies(c: &mut Criterion) {
    let mut g = step_group(c, "step/small", Duration::from_secs(2));
    for (label, substeps, iterations) in [("1x8", 1, 8), ("8x1", 8, 1)] {
        for n in [16usize, 23, 128] {
            let body = scenes::cloth(n).expect("cloth");
            let solver = SolverKind::Colored(ColoredOptions::default())
                .build(&SolverOptions {
                    threads: 1,
                    ..Default::default()
                })
                .expect("solver");
            let params = StepParams {
                substeps,
                iterations,
                ..Default::default()
            };
            bench_hanging_steps_with(&mut g, BenchmarkId::new(label, n), body, solver, params);
        }
    }
    g.finish();
}

common::bench_main!(common::plain_config(); cloth_step, colored_threads, small_bodies);
