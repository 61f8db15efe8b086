//! The world's step (docs/SCENES.md): what self-collision costs on the 64 x 64 `drape` at 8
//! iterations (1 substep of dt = 1/60, as a game runs it), and a world of four bodies stepped
//! on pools of one and two threads.
//!
//! Self-collision's share is `1 - off / on`, the step without it over the step with it, both
//! timed from the state the `drape` reaches after 120 steps with self-collision on (folds
//! touching; `off` from the same state, its self-collision then turned off). Four bodies: four
//! 32 x 32 `drape` cloths side by side, self-collision on, each with its own serial
//! Gauss-Seidel solver, on rayon pools of 1 and 2 threads (the same bits on both, which
//! `crates/solver-core/tests/world.rs` checks).
//! The crowd: the 64 small bodies of docs/SCENES.md's `crowd` world (16 jellies lying in
//! their hammocks) stepped by the world on executors of one and two threads
//! (`World::set_executor`), and the same 64 bodies stepped alone, one `step()` each: the
//! world's cost over its bodies' own (`wobble bodies` measures the same, interleaved).
//! Run with `cargo bench --bench world`.

mod common;

use criterion::Criterion;
use scenes::drape;
use solver_core::glam::Vec3;
use solver_core::{StepParams, World};

fn params() -> StepParams {
    StepParams {
        substeps: 1,
        iterations: 8,
        ..Default::default()
    }
}

/// The 64 x 64 drape after `warm` steps, with self-collision on or not for the timed steps.
fn draped(warm: usize, self_collision: bool) -> World {
    let mut world = drape(64, true).expect("drape");
    for _ in 0..warm {
        world.step(&params()).expect("step");
    }
    if !self_collision {
        let cloth = world.bodies().next().expect("the cloth").handle();
        world.disable_self_collision(cloth).expect("the cloth");
    }
    world
}

fn self_collision_share(c: &mut Criterion) {
    let mut g = c.benchmark_group("drape64_8it");
    g.sample_size(10);
    for (label, on) in [("self-collision on", true), ("self-collision off", false)] {
        let mut world = draped(120, on);
        g.bench_function(label, |b| b.iter(|| world.step(&params()).expect("step")));
    }
    g.finish();
}

/// Four 32 x 32 cloths 2 m apart along x.
fn four_bodies() -> World {
    let mut world = World::new();
    for k in 0..4 {
        let mut one = drape(32, true).expect("drape");
        let first = one.bodies().next().expect("the cloth");
        let sc = first.self_collision().expect("self-collision");
        let (thickness, max_travel) = (sc.thickness, sc.max_travel);
        let mut body = one.remove_body(first.handle()).expect("the cloth");
        for p in body.particles_mut().x_mut().iter_mut() {
            p.set_xyz(p.xyz() + Vec3::new(2.0 * k as f32, 0.0, 0.0));
        }
        let cloth = world.add_body(body, None).expect("body");
        world
            .enable_self_collision(cloth, thickness)
            .expect("cloth");
        let sc = world.body_mut(cloth).and_then(|b| b.self_collision_mut());
        sc.expect("self-collision").max_travel = max_travel;
    }
    world
}

fn world_threads(c: &mut Criterion) {
    let mut g = c.benchmark_group("world_4_bodies");
    g.sample_size(20);
    for threads in [1, 2] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("pool");
        let mut world = four_bodies();
        pool.install(|| {
            for _ in 0..60 {
                world.step(&params()).expect("step");
            }
        });
        g.bench_function(format!("{threads} threads"), |b| {
            b.iter(|| pool.install(|| world.step(&params()).expect("step")))
        });
    }
    g.finish();
}

/// The crowd after its jellies have landed (30 steps), on an executor of `threads`.
fn crowd(threads: usize) -> World {
    let mut world = scenes::crowd().expect("crowd");
    world.set_executor(Some(
        sparse::Pool::new(threads).expect("pool").world_executor(),
    ));
    for _ in 0..30 {
        world.step(&StepParams::default()).expect("step");
    }
    world
}

fn crowd_64_bodies(c: &mut Criterion) {
    let mut g = c.benchmark_group("crowd_64_bodies");
    g.sample_size(20);
    let mut source = crowd(1);
    let handles: Vec<_> = source.bodies().map(|b| b.handle()).collect();
    let mut alone: Vec<(solver_core::Body, solver_core::GaussSeidel)> = handles
        .into_iter()
        .map(|h| (source.remove_body(h).expect("body"), Default::default()))
        .collect();
    g.bench_function("bodies alone", |b| {
        b.iter(|| {
            for (body, solver) in alone.iter_mut() {
                solver_core::step(body, &StepParams::default(), solver, None).expect("step");
            }
        })
    });
    for threads in [1, 2] {
        let mut world = crowd(threads);
        g.bench_function(format!("world {threads} threads"), |b| {
            b.iter(|| world.step(&StepParams::default()).expect("step"))
        });
    }
    g.finish();
}

common::bench_main!(common::plain_config(); self_collision_share, world_threads, crowd_64_bodies);
