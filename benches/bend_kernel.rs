//! The bend and tether kernels: ns per projection (criterion's time per sweep over elements =
//! constraints), and the flag's step with and without its bending.
//!
//! - `bend/<model>_<scene>`: the generic scalar path (`project_generic` through
//!   `dyn ConstraintKind`, what `colored` ran before the bend batches) over every bend; the scalar
//!   twin over the colored batches; each vector kernel the CPU has over the same batches (one
//!   it lacks is printed as skipped). The state is the flag or cloth after 30 steps (bends
//!   violated as in a real solve); every sweep starts from it.
//! - `tether/cloth_64`: `project_tethers` (the specialised scalar path) against the twin and
//!   the kernels over the tether batches (`TetherBatch::split`), stretched so that every
//!   tether is taut.
//! - `flag_step/n32`: one `colored` step (8 iterations, auto kernel, 1 thread) of the flag with
//!   its dihedral bending and without it (the `bending`/`no_bending` pair's ratio is the
//!   figure of issue 15; `wobble step --no-bending` measures the same from the command line),
//!   and the cloth of about its vertex count (`cloth_45`: 45 x 45 = 2025 vertices, the flag's
//!   63 x 32 = 2016), the `bending`/`cloth_45` ratio being what the flag costs over a cloth.
//! - `cloth_step/n32`: the same for the cloth with two tethers per particle (to its two pins)
//!   and without.

mod common;

use common::INV_DT2;
use criterion::measurement::WallTime;
use criterion::{BatchSize, BenchmarkGroup, Criterion, Throughput};
use solver_core::constraints::{
    project_tethers, ConstraintKind, DihedralBending, IsometricBending, TetherDistance, Tethers,
};
use solver_core::glam::Vec3;
use solver_core::{step, Body, GaussSeidel, Packed4, StepParams};
use sparse::colored::simd::{project_batch_with, BendBatch, Kernel, LaneBatch, TetherBatch};
use sparse::{Coloring, Incidence, SolverKind, SolverOptions};
use std::hint::black_box;

/// `body` after 30 Gauss-Seidel steps.
fn hung(mut body: Body) -> Body {
    let mut gs = GaussSeidel::new();
    for _ in 0..30 {
        step(&mut body, &StepParams::default(), &mut gs, None).expect("step");
    }
    body
}

/// The local ids of table `t` (in `extra`) per color of the body's greedy coloring.
fn colors_of(body: &Body, t: usize) -> Vec<Vec<u32>> {
    let inc = Incidence::new(body.constraints(), body.len()).expect("incidence");
    let coloring = Coloring::greedy(&inc);
    let offsets = body.constraints().offsets();
    let (lo, hi) = (offsets[t + 1] as u32, offsets[t + 2] as u32);
    (0..coloring.colors())
        .map(|k| {
            coloring
                .color(k)
                .iter()
                .filter(|&&g| g >= lo && g < hi)
                .map(|&g| g - lo)
                .collect::<Vec<u32>>()
        })
        .filter(|ids| !ids.is_empty())
        .collect()
}

/// One benchmark per kernel, the scalar twin first: every batch projected from `fresh`'s
/// positions and multipliers.
fn bench_kernels<B: LaneBatch>(
    g: &mut BenchmarkGroup<WallTime>,
    fresh: impl Fn() -> (Vec<Packed4>, Vec<f32>) + Copy,
    batches: &[B],
) {
    let kernels = common::simd_kernels(|k| k.to_string());
    for k in std::iter::once(Kernel::Scalar).chain(kernels) {
        g.bench_function(k.name(), |b| {
            b.iter_batched_ref(
                fresh,
                |(x, l)| {
                    for batch in batches {
                        project_batch_with(k, x, black_box(batch), l, INV_DT2, 1.0).unwrap();
                    }
                },
                BatchSize::LargeInput,
            )
        });
    }
}

fn bench_bends(
    c: &mut Criterion,
    name: &str,
    kind: &dyn ConstraintKind,
    batches: &[BendBatch],
    x0: &[Packed4],
) {
    let (mut g, fresh) = common::projection_group(c, format!("bend/{name}"), kind, x0);
    bench_kernels(&mut g, fresh, batches);
    g.finish();
}

fn bends(c: &mut Criterion) {
    common::print_cpu();
    // The flag n = 32 (63 x 32, 5673 dihedral bends) after 30 steps.
    let flag = hung(scenes::flag(32).unwrap());
    let table = flag.constraints().extra[0]
        .as_any()
        .downcast_ref::<DihedralBending>()
        .expect("the flag's bending")
        .clone();
    let batches: Vec<BendBatch> = colors_of(&flag, 0)
        .iter()
        .map(|ids| BendBatch::dihedral(&table, ids, flag.len()).unwrap())
        .collect();
    bench_bends(
        c,
        "dihedral_flag_32",
        &table,
        &batches,
        &flag.particles().x(),
    );

    // Isometric bending on the same flag.
    let mut iso_flag = scenes::flag(32).unwrap();
    let iso = IsometricBending::from_triangles(
        &iso_flag.particles().x(),
        &iso_flag.topology().triangles,
        1e-4,
    )
    .unwrap();
    iso_flag.constraints_mut().extra = vec![Box::new(iso.clone())];
    iso_flag.topology_changed();
    let iso_flag = hung(iso_flag);
    let batches: Vec<BendBatch> = colors_of(&iso_flag, 0)
        .iter()
        .map(|ids| BendBatch::isometric(&iso, ids, iso_flag.len()).unwrap())
        .collect();
    bench_bends(
        c,
        "isometric_flag_32",
        &iso,
        &batches,
        &iso_flag.particles().x(),
    );
}

fn tethers(c: &mut Criterion) {
    let cloth = scenes::cloth(64).unwrap();
    let t = Tethers::from_pins(
        &cloth.particles().x(),
        &cloth.constraints().distance,
        TetherDistance::Euclidean,
        2,
        0.0,
    )
    .unwrap();
    let x: Vec<Packed4> = cloth
        .particles()
        .x()
        .iter()
        .map(|p| Packed4::new(Vec3::new(p.x * 1.2, p.y - 0.3, p.z * 1.2), p.w))
        .collect();
    let batches = TetherBatch::split(&t, x.len())
        .unwrap()
        .expect("pinned anchors");
    let mut g = c.benchmark_group("tether/cloth_64");
    g.throughput(Throughput::Elements(t.len() as u64));
    let fresh = || (x.clone(), vec![0.0f32; t.len()]);
    g.bench_function("project_tethers", |b| {
        b.iter_batched_ref(
            fresh,
            |(x, l)| project_tethers(x, black_box(&t), 0..t.len(), l, INV_DT2, 1.0),
            BatchSize::LargeInput,
        )
    });
    bench_kernels(&mut g, fresh, &batches);
    g.finish();
}

fn flag_step(c: &mut Criterion) {
    let with = hung(scenes::flag(32).unwrap());
    let mut without = with.clone();
    without.constraints_mut().extra.clear();
    without.topology_changed();
    let plain = hung(scenes::cloth(32).unwrap());
    let mut tethered = plain.clone();
    let t = Tethers::from_pins(
        &tethered.particles().x(),
        &tethered.constraints().distance,
        TetherDistance::Euclidean,
        2,
        0.0,
    )
    .unwrap();
    tethered.constraints_mut().push_kind(Box::new(t));
    tethered.topology_changed();
    let cloth = hung(scenes::cloth(45).unwrap());
    bench_steps(
        c,
        "flag_step/n32",
        [
            ("bending", with),
            ("no_bending", without),
            ("cloth_45", cloth),
        ],
    );
    bench_steps(
        c,
        "cloth_step/n32",
        [("tethers", tethered), ("no_tethers", plain)],
    );
}

/// One `colored` step (default options: auto kernel, 1 thread) of each body.
fn bench_steps<const N: usize>(c: &mut Criterion, group: &str, bodies: [(&str, Body); N]) {
    let mut g = c.benchmark_group(group);
    for (name, body) in bodies {
        let mut solver = SolverKind::Colored(Default::default())
            .build(&SolverOptions::default())
            .unwrap();
        let mut b0 = body.clone();
        step(&mut b0, &StepParams::default(), solver.as_mut(), None).unwrap();
        g.bench_function(name, |b| {
            b.iter_batched_ref(
                || b0.clone(),
                |body| step(body, &StepParams::default(), solver.as_mut(), None).unwrap(),
                BatchSize::LargeInput,
            )
        });
    }
    g.finish();
}

common::bench_main!(common::short_config(); bends, tethers, flag_step);
