//! The distance-projection kernels on the cloth's colored batches: ns per projection
//! (criterion prints time per sweep and, through `Throughput::Elements`, projections per second;
//! ns per projection = sweep time / constraints).
//!
//! - `scalar_natural`: `project_distance_scalar` over all constraints in storage order (the
//!   sequential Gauss-Seidel sweep, the baseline);
//! - `sse_floor` (x86-64): the same sweep written plainly with SSE float4s, one `__m128`
//!   `[x, y, z, w]` per particle: the floor a hand-written SIMD loop without coloring or batching
//!   reaches (#36 asks `colored` for at most 0.45 of its time);
//! - `scalar_colors`: `project_batch_with(Kernel::Scalar, ..)` over every color's batch (the scalar
//!   twin);
//! - `portable_colors`, `avx2_colors`, `avx512_colors`: that kernel over the same batches; a
//!   kernel this CPU lacks is printed as skipped. `auto` is the last of those that runs.
//!
//! The coloring is the colored solver's own greedy coloring (`sparse::Coloring::greedy`).

mod common;

use criterion::{BenchmarkId, Criterion, Throughput};
use solver_core::constraints::{project_distance_scalar, DistanceConstraints};
use solver_core::{step, GaussSeidel, Packed4, StepParams};
use sparse::colored::simd::{project_batch_with, EdgeBatch, Kernel};
use std::hint::black_box;
use std::time::Duration;

/// The SSE float4 floor: XPBD distance projections in storage order, each particle one
/// `__m128`, the length and the multiplier in scalars (SSE2, which every x86-64 has).
#[cfg(target_arch = "x86_64")]
fn project_sse_floor(x: &mut [Packed4], d: &DistanceConstraints, lambda: &mut [f32], inv_dt2: f32) {
    use std::arch::x86_64::*;
    assert!(d.pairs.iter().flatten().all(|&i| (i as usize) < x.len()));
    let base = x.as_mut_ptr().cast::<f32>();
    #[allow(clippy::needless_range_loop)] // c indexes four parallel arrays
    for c in 0..d.len() {
        let [i, j] = d.pairs[c];
        // SAFETY: every index is below `x.len()` (checked above) and a `Packed4` is 16 bytes
        // aligned to 16, so both loads and stores are aligned and in bounds; SSE2 is part of
        // x86-64.
        unsafe {
            let (pi, pj) = (base.add(4 * i as usize), base.add(4 * j as usize));
            let (a, b) = (_mm_load_ps(pi), _mm_load_ps(pj));
            let (wi, wj) = (*pi.add(3), *pj.add(3));
            let xyz = _mm_castsi128_ps(_mm_set_epi32(0, -1, -1, -1));
            let e = _mm_and_ps(_mm_sub_ps(b, a), xyz);
            let sq = _mm_mul_ps(e, e);
            let sum = _mm_add_ps(sq, _mm_movehl_ps(sq, sq));
            let len2 = _mm_cvtss_f32(_mm_add_ss(sum, _mm_shuffle_ps::<0b01>(sum, sum)));
            let alpha = d.compliance[c] * inv_dt2;
            let wsum = wi + wj + alpha;
            if len2 <= 0.0 || wsum <= 0.0 {
                continue;
            }
            let len = len2.sqrt();
            let dl = (-(len - d.rest[c]) - alpha * lambda[c]) / wsum;
            lambda[c] += dl;
            let corr = _mm_mul_ps(e, _mm_set1_ps(dl / len));
            _mm_store_ps(pi, _mm_sub_ps(a, _mm_mul_ps(corr, _mm_set1_ps(wi))));
            _mm_store_ps(pj, _mm_add_ps(b, _mm_mul_ps(corr, _mm_set1_ps(wj))));
        }
    }
}

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
    (body.particles().x().to_vec(), d, batches)
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

        #[cfg(target_arch = "x86_64")]
        {
            let mut x = x0.clone();
            let mut lambda = vec![0.0f32; nc];
            g.bench_function(BenchmarkId::from_parameter("sse_floor"), |bch| {
                bch.iter(|| {
                    project_sse_floor(&mut x, &d, &mut lambda, inv_dt2);
                    black_box(&mut x);
                })
            });
        }

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
