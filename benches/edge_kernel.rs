//! The distance-projection kernels on the cloth's colored batches: ns per projection
//! (criterion prints time per sweep and, through `Throughput::Elements`, projections per second;
//! ns per projection = sweep time / constraints).
//!
//! - `scalar_natural`: `project_distance_scalar` over all constraints in storage order (the
//!   sequential Gauss-Seidel sweep, the baseline);
//! - `scalar_colors`: `project_batch_with(Kernel::Scalar, ..)` over every color's batch (the scalar
//!   twin);
//! - `portable_colors`, `avx2_colors`, `avx512_colors`: that kernel over the same batches; a
//!   kernel this CPU lacks is printed as skipped. `auto` is the last of those that runs.
//!
//! The coloring is the colored solver's own greedy coloring (`sparse::Coloring::greedy`).

mod common;

use criterion::{BenchmarkId, Criterion, Throughput};
use solver_core::constraints::{project_distance_scalar, DistanceConstraints};
use solver_core::simd::{project_batch_with, EdgeBatch, Kernel};
use solver_core::{step, GaussSeidel, Packed4, StepParams};
use std::hint::black_box;
use std::time::Duration;

/// The cloth after 30 steps of hanging (constraints violated as in a real solve), its
/// constraints and one batch per color.
fn hanging_cloth(n: usize) -> (Vec<Packed4>, DistanceConstraints, Vec<EdgeBatch>) {
    let mut body = scenes::cloth(n).expect("cloth");
    let mut gs = GaussSeidel::new();
    for _ in 0..30 {
        step(&mut body, &StepParams::default(), &mut gs, None).expect("step");
    }
    let d = body.constraints().distance.clone();
    let batches = common::distance_batches(&body);
    (body.particles.x, d, batches)
}

fn edge_kernel(c: &mut Criterion) {
    common::print_cpu();
    let kernels = common::simd_kernels(|k| format!("{k}_colors"));
    // XPBD with compliance 0 (the scenes' default); PBD gives the same arithmetic.
    let (inv_dt2, k) = (3600.0, 1.0);
    for n in [32usize, 256] {
        let (x0, d, batches) = hanging_cloth(n);
        let nc = d.len();
        let mut g = c.benchmark_group(format!("edge_kernel/cloth_n{n}"));
        g.throughput(Throughput::Elements(nc as u64));
        g.sample_size(20)
            .warm_up_time(Duration::from_millis(500))
            .measurement_time(Duration::from_secs(2));

        let mut x = x0.clone();
        let mut lambda = vec![0.0f32; nc];
        g.bench_function(BenchmarkId::from_parameter("scalar_natural"), |bch| {
            bch.iter(|| {
                project_distance_scalar(&mut x, &d, 0..nc, &mut lambda, inv_dt2, k);
                black_box(&mut x);
            })
        });

        let mut x = x0.clone();
        let mut lambdas: Vec<Vec<f32>> = batches.iter().map(|b| vec![0.0; b.len()]).collect();
        g.bench_function(BenchmarkId::from_parameter("scalar_colors"), |bch| {
            bch.iter(|| {
                for (b, l) in batches.iter().zip(lambdas.iter_mut()) {
                    project_batch_with(Kernel::Scalar, &mut x, b, l, inv_dt2, k).unwrap();
                }
                black_box(&mut x);
            })
        });
        for &kernel in &kernels {
            let mut x = x0.clone();
            let mut lambdas: Vec<Vec<f32>> = batches.iter().map(|b| vec![0.0; b.len()]).collect();
            let name = format!("{kernel}_colors");
            g.bench_function(BenchmarkId::from_parameter(name), |bch| {
                bch.iter(|| {
                    for (b, l) in batches.iter().zip(lambdas.iter_mut()) {
                        project_batch_with(kernel, &mut x, b, l, inv_dt2, k)
                            .expect("an available kernel");
                    }
                    black_box(&mut x);
                })
            });
        }
        g.finish();
    }
}

common::bench_main!(common::plain_config(); edge_kernel);
