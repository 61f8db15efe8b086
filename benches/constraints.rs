//! Cost of the physics pieces: nanoseconds per projection of each constraint kind (the generic
//! scalar update through `dyn ConstraintKind` and each kind's specialised path), ray picking at
//! 100k triangles (BVH build, refit, ray; brute force for comparison), and the mesh deformer at
//! 10k and 100k vertices.
//!
//! Throughput is in elements: constraints per sweep (ns per projection = time / elements), or
//! vertices per deformer update. Every sweep starts from the same perturbed state.

mod common;

use common::INV_DT2;
use criterion::{BatchSize, Criterion, Throughput};
use solver_core::constraints::{
    project_generic, project_range, project_tet_volumes, project_tethers, ConstraintKind,
    DihedralBending, IsometricBending, NeoHookean, SurfaceVolume, TetVolume, TetherDistance,
    Tethers,
};
use solver_core::glam::Vec3;
use solver_core::interaction::deformer::{Deformer, Falloff, Push};
use solver_core::interaction::picking::{raycast_brute_force, TriangleBvh};
use solver_core::{Material, Packed4};
use std::hint::black_box;
use std::ops::Range;

/// Deterministic pseudo-random offsets in [-a, a]³.
fn jitter(x: &[Packed4], a: f32, seed: u64) -> Vec<Packed4> {
    let mut s = seed;
    let mut next = || {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((s >> 40) as f32 / (1u64 << 24) as f32 - 0.5) * 2.0 * a
    };
    x.iter()
        .map(|p| Packed4::new(p.xyz() + Vec3::new(next(), next(), next()), p.w))
        .collect()
}

/// A kind's specialised sweep: `project_tethers`, `project_tet_volumes`.
type Specialised<K> = fn(&mut [Packed4], &K, Range<usize>, &mut [f32], f32, f32);

fn bench_kind<K: ConstraintKind + 'static>(
    c: &mut Criterion,
    name: &str,
    kind: &K,
    x0: &[Packed4],
    fast: Option<Specialised<K>>,
) {
    let (mut g, fresh) = common::projection_group(c, format!("projection/{name}"), kind, x0);
    g.bench_function("range", |b| {
        b.iter_batched_ref(
            fresh,
            |(x, l)| project_range(black_box(kind), 0..kind.len(), x, l, INV_DT2, 1.0),
            BatchSize::LargeInput,
        )
    });
    if let Some(f) = fast {
        g.bench_function("specialised", |b| {
            b.iter_batched_ref(
                fresh,
                |(x, l)| f(x, kind, 0..kind.len(), l, INV_DT2, 1.0),
                BatchSize::LargeInput,
            )
        });
    }
    g.finish();
}

fn projections(c: &mut Criterion) {
    let cloth = scenes::cloth(64).unwrap();
    let x = jitter(&cloth.particles().x(), 0.005, 1);
    let tris = &cloth.topology().triangles;
    let dihedral = DihedralBending::from_triangles(&cloth.particles().x(), tris, 1e-4).unwrap();
    bench_kind(c, "dihedral_bending", &dihedral, &x, None);
    let isometric = IsometricBending::from_triangles(&cloth.particles().x(), tris, 1e-4).unwrap();
    bench_kind(c, "isometric_bending", &isometric, &x, None);

    let tethers = Tethers::from_pins(
        &cloth.particles().x(),
        &cloth.constraints().distance,
        TetherDistance::Euclidean,
        2,
        0.0,
    )
    .unwrap();
    // Stretched by 20% so that every tether is taut.
    let stretched: Vec<Packed4> = x
        .iter()
        .map(|p| Packed4::new(Vec3::new(p.x * 1.2, p.y - 0.3, p.z * 1.2), p.w))
        .collect();
    bench_kind(c, "tether", &tethers, &stretched, Some(project_tethers));

    let cube = scenes::cube(8).unwrap();
    let xc = jitter(&cube.particles().x(), 0.003, 2);
    let volume = TetVolume::new(&cube.particles().x(), &cube.topology().tets, 1e-6).unwrap();
    bench_kind(c, "tet_volume", &volume, &xc, Some(project_tet_volumes));
    let nh = NeoHookean::new(
        &cube.particles().x(),
        &cube.topology().tets,
        &Material::new(1e5, 0.3).unwrap(),
    )
    .unwrap();
    bench_kind(c, "neohookean", &nh, &xc, None);

    for s in [3usize, 5] {
        let jelly = scenes::jelly(s).unwrap();
        let xj = jitter(&jelly.particles().x(), 0.002, 3);
        let surface =
            SurfaceVolume::new(&jelly.particles().x(), &jelly.topology().triangles, 0.0).unwrap();
        let mut g = c.benchmark_group(format!(
            "projection/surface_volume_{}_particles",
            jelly.len()
        ));
        // One global constraint; per-particle throughput shows its linear cost.
        g.throughput(Throughput::Elements(jelly.len() as u64));
        g.bench_function("global", |b| {
            b.iter_batched_ref(
                || (xj.clone(), 0.0f32),
                |(x, l)| project_generic(black_box(&surface), 0, x, l, 0.0, 1.0),
                BatchSize::LargeInput,
            )
        });
        g.finish();
    }
}

/// A bumpy sheet of 2 (n-1)² triangles (n = 225: 100,352).
fn bumpy_sheet(n: usize) -> (Vec<[u32; 3]>, Vec<Packed4>) {
    let body = scenes::cloth(n).unwrap();
    let x = body
        .particles()
        .x()
        .iter()
        .map(|p| {
            let y = 1.0 + 0.05 * (13.0 * p.x).sin() * (11.0 * p.z).cos();
            Packed4::new(Vec3::new(p.x, y, p.z), p.w)
        })
        .collect();
    (body.topology().triangles.clone(), x)
}

fn picking(c: &mut Criterion) {
    let (tris, x) = bumpy_sheet(225);
    let mut g = c.benchmark_group(format!("picking/{}_triangles", tris.len()));
    g.bench_function("build", |b| {
        b.iter(|| TriangleBvh::build(black_box(&tris), &x).unwrap())
    });
    let mut bvh = TriangleBvh::build(&tris, &x).unwrap();
    let moved = jitter(&x, 0.002, 9);
    g.bench_function("refit", |b| {
        b.iter(|| bvh.refit(black_box(&moved)).unwrap())
    });
    g.bench_function("refit_parallel", |b| {
        b.iter(|| bvh.refit_parallel(black_box(&moved)).unwrap())
    });
    bvh.refit(&moved).unwrap();
    // Rays from above at 64 spots spread over the sheet (all hit).
    let rays: Vec<Vec3> = (0..64)
        .map(|k| {
            Vec3::new(
                0.05 + 0.9 * (k % 8) as f32 / 7.0,
                3.0,
                0.05 + 0.9 * (k / 8) as f32 / 7.0,
            )
        })
        .collect();
    let mut k = 0;
    g.bench_function("ray_bvh", |b| {
        b.iter(|| {
            k = (k + 1) % rays.len();
            bvh.raycast(&moved, black_box(rays[k]), -Vec3::Y, 10.0)
                .unwrap()
                .unwrap()
        })
    });
    g.bench_function("ray_brute_force", |b| {
        b.iter(|| {
            k = (k + 1) % rays.len();
            raycast_brute_force(&tris, &moved, black_box(rays[k]), -Vec3::Y, 10.0)
                .unwrap()
                .unwrap()
        })
    });
    g.finish();
}

fn deformer(c: &mut Criterion) {
    for n in [10_000usize, 100_000] {
        let side = (n as f32).sqrt() as usize;
        let rest: Vec<Vec3> = (0..n)
            .map(|i| Vec3::new((i % side) as f32 * 0.01, 0.0, (i / side) as f32 * 0.01))
            .collect();
        let mut d = Deformer::new(&rest, 20.0, 5.0, Falloff::default()).unwrap();
        let mut g = c.benchmark_group(format!("deformer/{n}_vertices"));
        g.throughput(Throughput::Elements(n as u64));
        let p = Vec3::new(0.3, 0.1, 0.3);
        g.bench_function("add_force", |b| {
            b.iter(|| {
                d.add_force(black_box(p), Push::Along(-Vec3::Y), 1.0)
                    .unwrap()
            })
        });
        g.bench_function("add_force_parallel", |b| {
            b.iter(|| {
                d.add_force_parallel(black_box(p), Push::Along(-Vec3::Y), 1.0)
                    .unwrap()
            })
        });
        g.bench_function("update", |b| {
            b.iter(|| d.update(black_box(1.0 / 60.0)).unwrap())
        });
        g.bench_function("update_parallel", |b| {
            b.iter(|| d.update_parallel(black_box(1.0 / 60.0)).unwrap())
        });
        g.finish();
    }
}

common::bench_main!(common::short_config(); projections, picking, deformer);
