//! What the plugin costs a frame beyond the step itself, on docs/SCENES.md's 32 x 32 cloth
//! (Gauss-Seidel, the default `StepParams`), one thread:
//! - `step`: wobble's `step()` on the body alone;
//! - `world_step`: a `World` holding that one body, as the plugin holds it;
//! - `plugin_frame`: a Bevy `App` (`MinimalPlugins`) with the plugin and the cloth entity, one
//!   `update` = one fixed step, the stats, the mesh asset's positions and normals written, and
//!   Bevy's schedules;
//! - `bevy_frame`: the same `App` without the plugin, what Bevy's schedules cost alone;
//! - `plugin_frame_single_threaded` and `bevy_frame_single_threaded`: both with every schedule
//!   on Bevy's single-threaded executor (no hand-off of systems to the task pool's threads).
//!
//! `cargo bench -p bevy_wobble --bench plugin`

use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use bevy_wobble::prelude::*;
use bevy_wobble::wobble;
use criterion::{criterion_group, criterion_main, Criterion};
use std::hint::black_box;

fn plugin_overhead(c: &mut Criterion) {
    let params = wobble::StepParams::default();
    let mut group = c.benchmark_group("plugin_cloth_32");

    let mut body = scenes::cloth(32).expect("the cloth");
    let mut solver = wobble::GaussSeidel::new();
    group.bench_function("step", |b| {
        b.iter(|| black_box(wobble::step(&mut body, &params, &mut solver, None).expect("a step")))
    });

    let mut world = wobble::core::World::new();
    world.set_executor(Some(std::sync::Arc::new(wobble::core::Serial)));
    world
        .add_body(scenes::cloth(32).expect("the cloth"), None)
        .expect("added");
    group.bench_function("world_step", |b| {
        b.iter(|| black_box(world.step(&params).expect("a step")))
    });

    for single in [false, true] {
        let suffix = if single { "_single_threaded" } else { "" };
        let mut bare = app(single);
        bare.update();
        group.bench_function(format!("bevy_frame{suffix}"), |b| b.iter(|| bare.update()));
        let mut with = app(single);
        with.add_plugins(WobblePlugin { threads: 1, params });
        with.world_mut()
            .spawn(SoftBody::new(scenes::cloth(32).expect("the cloth")));
        with.update();
        group.bench_function(format!("plugin_frame{suffix}"), |b| {
            b.iter(|| with.update())
        });
    }
    group.finish();
}

/// An app without a window stepping its fixed clock once per `update`; `single`: every
/// schedule on the single-threaded executor.
fn app(single: bool) -> App {
    let mut app = App::new();
    app.add_plugins((
        MinimalPlugins,
        AssetPlugin::default(),
        bevy::mesh::MeshPlugin,
        TransformPlugin,
    ))
    .insert_resource(TimeUpdateStrategy::FixedTimesteps(1));
    if single {
        use bevy::app::{FixedMain, FixedPostUpdate, FixedPreUpdate, RunFixedMainLoop};
        use bevy::ecs::schedule::{ScheduleLabel, SingleThreadedExecutor};
        fn one_thread(app: &mut App, label: impl ScheduleLabel) {
            app.edit_schedule(label, |s| {
                s.set_executor(SingleThreadedExecutor::new());
            });
        }
        one_thread(&mut app, Main);
        one_thread(&mut app, First);
        one_thread(&mut app, PreUpdate);
        one_thread(&mut app, RunFixedMainLoop);
        one_thread(&mut app, FixedMain);
        one_thread(&mut app, FixedFirst);
        one_thread(&mut app, FixedPreUpdate);
        one_thread(&mut app, FixedUpdate);
        one_thread(&mut app, FixedPostUpdate);
        one_thread(&mut app, FixedLast);
        one_thread(&mut app, Update);
        one_thread(&mut app, PostUpdate);
        one_thread(&mut app, Last);
    }
    app
}

criterion_group!(benches, plugin_overhead);
criterion_main!(benches);
