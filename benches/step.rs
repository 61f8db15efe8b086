//! One whole cloth step (docs/SCENES.md defaults: dt = 1/60, 1 substep, 8 iterations) with the
//! sequential scalar Gauss-Seidel solver and the colored SIMD solver (one thread), at n = 32 and
//! n = 256; and the colored solver at n = 512 on 1 and 2 threads, and with its tiles off
//! (`step/colored_n512`: `threads1`, `threads2`, `threads1_whole_body`). Throughput is in constraint
//! projections (constraints x iterations), so criterion's elements/s converts to ns per
//! projection.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use solver_core::{scenes, step, StepParams};
use sparse::{make_solver, SolverOptions};
use std::hint::black_box;
use std::time::Duration;

fn cloth_step(c: &mut Criterion) {
    let params = StepParams::default();
    let mut g = c.benchmark_group("step/cloth");
    g.sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    for n in [32usize, 256] {
        for name in ["gs", "colored"] {
            let mut body = scenes::cloth(n).expect("cloth");
            let mut solver = make_solver(name, &SolverOptions::default()).expect("solver");
            // Let it start hanging so the steps measured are typical ones.
            for _ in 0..20 {
                step(&mut body, &params, solver.as_mut(), None).expect("step");
            }
            let projections = body.constraints.len() * params.iterations * params.substeps;
            g.throughput(Throughput::Elements(projections as u64));
            g.bench_function(BenchmarkId::new(name, n), |b| {
                b.iter(|| {
                    step(&mut body, &params, solver.as_mut(), None).expect("step");
                    black_box(&body.particles.x);
                })
            });
        }
    }
    g.finish();
}

fn colored_threads(c: &mut Criterion) {
    let params = StepParams::default();
    let mut g = c.benchmark_group("step/colored_n512");
    g.sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(4));
    for (label, threads, tile) in [
        ("threads1", 1, sparse::colored::DEFAULT_TILE_PARTICLES),
        ("threads2", 2, sparse::colored::DEFAULT_TILE_PARTICLES),
        ("threads1_whole_body", 1, 0),
    ] {
        let mut body = scenes::cloth(512).expect("cloth");
        let opts = SolverOptions {
            threads,
            tile_particles: tile,
            ..Default::default()
        };
        let mut solver = make_solver("colored", &opts).expect("solver");
        for _ in 0..20 {
            step(&mut body, &params, solver.as_mut(), None).expect("step");
        }
        let projections = body.constraints.len() * params.iterations * params.substeps;
        g.throughput(Throughput::Elements(projections as u64));
        g.bench_function(label, |b| {
            b.iter(|| {
                step(&mut body, &params, solver.as_mut(), None).expect("step");
                black_box(&body.particles.x);
            })
        });
    }
    g.finish();
}

// No plots: criterion's plotters backend looks for system fonts, which a bare machine lacks.
criterion_group! {
    name = benches;
    config = Criterion::default().without_plots();
    targets = cloth_step, colored_threads
}
criterion_main!(benches);
