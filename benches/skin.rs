//! What clothing on a character costs beside the cloth's own solve (issue 35): per vertex, the
//! skinning of a frame (linear blend and dual quaternions, four joints per vertex, normals and
//! the targets' update included), one projection sweep of the skinned constraints (max
//! distance and back stop of every vertex, as each iteration runs it), and one sweep of the
//! same cloth's distance constraints (structural and shear): the scalar Gauss-Seidel update in
//! storage order, and the colored solver's batches with the scalar twin and every SIMD kernel
//! the CPU has (a kernel it lacks is printed as skipped).
//! The cloth is 64 x 64 (4096 vertices); throughput is in vertices, so criterion's
//! elements per second compare the three per vertex.
//! Run with `cargo bench --bench skin`.

mod common;

use criterion::{Criterion, Throughput};
use solver_core::constraints::{project_distance_scalar, ConstraintKind, SkinConstraints};
use solver_core::glam::{Mat4, Quat, Vec3};
use solver_core::skin::{Skin, SkinDesc, SkinningMethod};
use solver_core::{Body, Cloth, SkinnedVertex};
use sparse::colored::simd::{project_batch_with, Kernel};
use std::hint::black_box;

const N: usize = 64;

/// Four joints along the cloth's x, each vertex weighted to all four by distance.
fn skinned(method: SkinningMethod) -> (Body, Skin, [Mat4; 4]) {
    let mut body = Cloth::new()
        .resolution(N, N)
        .at(Vec3::Y)
        .build()
        .expect("cloth");
    let n = body.len();
    let at = |j: usize| Vec3::new(j as f32 / 3.0, 1.0, 0.5);
    let weights = body
        .particles()
        .x()
        .iter()
        .map(|p| {
            let w = [0, 1, 2, 3].map(|j| 1.0 / (0.05 + (p.xyz() - at(j)).length()));
            let sum: f32 = w.iter().sum();
            w.map(|x| x / sum)
        })
        .collect();
    let desc = SkinDesc {
        inverse_bind: (0..4).map(|j| Mat4::from_translation(-at(j))).collect(),
        joints: vec![[0, 1, 2, 3]; n],
        weights,
        method,
        ..Default::default()
    };
    let vertices: Vec<SkinnedVertex> = (0..n as u32)
        .map(|i| SkinnedVertex::within(i, 0.2).with_backstop(0.01, 0.3))
        .collect();
    let skin = Skin::new(&mut body, desc, &vertices).expect("skin");
    let joints = [0, 1, 2, 3].map(|j| {
        Mat4::from_rotation_translation(
            Quat::from_rotation_x(0.1 * j as f32),
            at(j) + Vec3::Z * 0.05,
        )
    });
    (body, skin, joints)
}

fn skin_costs(c: &mut Criterion) {
    let mut g = c.benchmark_group("cloth64 per vertex");
    g.throughput(Throughput::Elements((N * N) as u64));
    for (label, method) in [
        ("skinning, linear blend (per frame)", SkinningMethod::Linear),
        (
            "skinning, dual quaternions (per frame)",
            SkinningMethod::DualQuaternion,
        ),
    ] {
        let (mut body, mut skin, joints) = skinned(method);
        g.bench_function(label, |b| {
            b.iter(|| skin.pose(&mut body, black_box(&joints)).expect("pose"))
        });
    }
    let (mut body, mut skin, joints) = skinned(SkinningMethod::Linear);
    skin.pose(&mut body, &joints).expect("pose");
    let table: SkinConstraints = body
        .constraints()
        .kinds()
        .find_map(|k| k.as_any().downcast_ref::<SkinConstraints>())
        .expect("the skin table")
        .clone();
    let mut x = body.particles().x().to_vec();
    let mut lambda = vec![0.0f32; table.len()];
    g.bench_function("skinned constraints (per iteration)", |b| {
        b.iter(|| table.project_all(black_box(&mut x), &mut lambda, 0.0, 1.0))
    });
    let distance = body.constraints().distance.clone();
    let mut x = body.particles().x().to_vec();
    let mut lambda = vec![0.0f32; distance.len()];
    g.bench_function("distance constraints (per iteration)", |b| {
        b.iter(|| {
            project_distance_scalar(
                black_box(&mut x),
                &distance,
                0..distance.len(),
                &mut lambda,
                3600.0,
                1.0,
            )
        })
    });
    let batches = common::distance_batches(&body);
    let mut kernels = vec![Kernel::Scalar];
    kernels.extend(common::simd_kernels(|k| {
        format!("distance constraints, colored {k}")
    }));
    for kernel in kernels {
        let mut x = body.particles().x().to_vec();
        let mut lambdas: Vec<Vec<f32>> = batches.iter().map(|b| vec![0.0; b.len()]).collect();
        let label = format!("distance constraints, colored {kernel} (per iteration)");
        g.bench_function(label, |b| {
            b.iter(|| {
                for (batch, l) in batches.iter().zip(lambdas.iter_mut()) {
                    project_batch_with(kernel, black_box(&mut x), batch, l, 3600.0, 1.0)
                        .expect("kernel");
                }
            })
        });
    }
    g.finish();
}

common::bench_main!(common::short_config(); skin_costs);
