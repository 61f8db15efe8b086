//! The world's scenes (docs/SCENES.md): `drape` (self-collision), `tunnel` (no tunnelling at
//! 20 m/s), `stack` (three jellies at rest on each other), and the world's thread-count
//! invariance; `crowd` (64 small bodies, jellies in hammocks) and its thread-count and
//! executor invariance.

use scenes::drape;
use scenes::stack;
use scenes::tunnel;
use scenes::STACK_BLOCK;
use scenes::STACK_STAGGER;
use solver_core::figures::volume_ratio;
use solver_core::figures::{self_intersections, Surface};
use solver_core::glam::Vec3;
use solver_core::{StepParams, World};

fn surfaces(world: &World) -> Vec<Surface<'_>> {
    world
        .bodies()
        .map(|b| {
            (
                &b.body().topology().triangles[..],
                &b.body().particles().x()[..],
            )
        })
        .collect()
}

fn all_finite(world: &World) -> bool {
    world
        .bodies()
        .all(|b| b.body().particles().x().iter().all(|p| p.is_finite()))
}

/// Steps of the drape test and its parameters.
const DRAPE_STEPS: usize = 300;

fn drape_params() -> StepParams {
    StepParams {
        substeps: 2,
        iterations: 8,
        ..Default::default()
    }
}

fn run_drape(self_collision: bool) -> (World, u64) {
    let mut world = drape(64, self_collision).unwrap();
    let params = drape_params();
    for _ in 0..DRAPE_STEPS {
        world.step(&params).unwrap();
    }
    let count = self_intersections(&surfaces(&world)).unwrap();
    (world, count)
}

#[test]
fn drape_folds_without_intersecting_itself_and_rests_on_the_sphere() {
    let (world, with) = run_drape(true);
    let (_, without) = run_drape(false);
    println!("drape self_intersections: with self-collision {with}, without {without}");
    assert!(all_finite(&world));
    assert_eq!(with, 0, "self-collision on");
    assert!(
        without > 0,
        "self-collision off must intersect, or the test proves nothing"
    );
    // Resting on the sphere: the cloth's highest point lies on the sphere's top (radius 0.3 at
    // y = 0.3), within the thickness, and the cloth has stopped.
    let x = &world.bodies().next().unwrap().body().particles().x();
    let top = x.iter().map(|p| p.y).fold(f32::MIN, f32::max);
    assert!((top - 0.6).abs() < 0.03, "top of the cloth at {top}");
    let vmax = world
        .bodies()
        .next()
        .unwrap()
        .body()
        .particles()
        .v()
        .iter()
        .map(|v| v.xyz().length())
        .fold(0.0, f32::max);
    println!("drape top {top}, fastest particle {vmax} m/s");
}

#[test]
fn tunnel_bodies_at_20_m_per_s_stop_at_a_1_cm_box_and_a_thin_mesh_wall() {
    let mut world = tunnel().unwrap();
    let params = StepParams {
        gravity: Vec3::ZERO,
        ..Default::default()
    };
    assert_eq!((params.substeps, params.dt), (1, 1.0 / 60.0));
    let mut hit = [false; 2];
    for step in 0..30 {
        let report = world.step(&params).unwrap();
        assert!(all_finite(&world));
        for (k, b) in world.bodies().enumerate() {
            let far = b
                .body()
                .particles()
                .x()
                .iter()
                .map(|p| p.x)
                .fold(f32::MIN, f32::max);
            // The box's near face is at x = -0.005, the wall at x = 0.
            assert!(
                far < 0.0,
                "step {step}: body {k} reached x = {far}, beyond the wall"
            );
            hit[k] |= far > -0.02;
        }
        if step == 1 {
            println!("tunnel contacts after the impact: {}", report.contacts);
        }
    }
    assert_eq!(hit, [true, true], "both bodies reach their wall");
}

/// The lowest and highest height of body `i` and its centre.
fn extent(world: &World, i: usize) -> (f32, f32, Vec3) {
    let x = &world.bodies().nth(i).unwrap().body().particles().x();
    let lo = x.iter().map(|p| p.y).fold(f32::INFINITY, f32::min);
    let hi = x.iter().map(|p| p.y).fold(f32::NEG_INFINITY, f32::max);
    let centre = x.iter().map(|p| p.xyz()).sum::<Vec3>() / x.len() as f32;
    (lo, hi, centre)
}

/// Regression: the bodies of a world took their share of each contact against the others'
/// frozen predictions, so a block resting on another dented it, sank into the dent and the
/// stack blew apart within 20 steps (speeds 3 -> 98 m/s); and a block's face met only the
/// other block's vertices pushed the other way, so a staggered block tipped over the lower
/// one's edge. Now a body is solved against the solved surfaces of the bodies before it that
/// it may touch, both ways (its particles against their faces, their vertices against its
/// faces).
#[test]
fn stack_of_three_jellies_comes_to_rest_on_each_other() {
    let mut world = stack().unwrap();
    let params = StepParams {
        substeps: 8,
        iterations: 10,
        ..Default::default()
    };
    let (steps, last_second) = (600, 60);
    let positions = |world: &World| -> Vec<Vec3> {
        world
            .bodies()
            .flat_map(|b| b.body().particles().x().iter().map(|p| p.xyz()))
            .collect()
    };
    let mut before = Vec::new();
    for s in 0..steps {
        if s == steps - last_second {
            before = positions(&world);
        }
        world.step(&params).unwrap();
    }
    assert!(all_finite(&world));
    let moved = positions(&world)
        .iter()
        .zip(&before)
        .map(|(a, b)| (*a - *b).length())
        .fold(0.0f32, f32::max);
    let intersections = self_intersections(&surfaces(&world)).unwrap();
    println!(
        "stack after {steps} steps: self_intersections {intersections}, largest particle \
         motion over the last second {moved:.2e} m"
    );
    let start_centre = |i: usize| STACK_STAGGER * i as f32;
    for i in 0..3 {
        let (lo, hi, centre) = extent(&world, i);
        let volume = volume_ratio(world.bodies().nth(i).unwrap().body()).unwrap();
        println!(
            "  block {i}: y {lo:.4}..{hi:.4}, centre ({:.4}, {:.4}, {:.4}), volume ratio \
             {volume:.4}",
            centre.x, centre.y, centre.z
        );
        assert!(
            (volume - 1.0).abs() <= 0.05,
            "block {i} volume ratio {volume}"
        );
        let drift = (centre - start_centre(i)) * Vec3::new(1.0, 0.0, 1.0);
        assert!(drift.length() < 0.01, "block {i} slid by {drift}");
        assert!(
            (hi - lo - STACK_BLOCK).abs() < 0.02,
            "block {i} is {} m tall",
            hi - lo
        );
        if i == 0 {
            assert!(
                lo.abs() < 0.01,
                "the lowest block rests on the ground, lowest y {lo}"
            );
        } else {
            let gap = lo - extent(&world, i - 1).1;
            assert!((0.0..0.02).contains(&gap), "gap under block {i}: {gap} m");
        }
    }
    assert_eq!(intersections, 0, "no edge of one block crosses another");
    assert!(
        moved < 0.005,
        "the stack is at rest: a particle moved {moved} m in the last second"
    );
}

#[cfg(feature = "parallel")]
#[test]
fn world_step_gives_the_same_bits_on_one_and_two_threads() {
    let run = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| {
            // The tunnel's bodies are solved together, the stack's one after the other.
            [tunnel().unwrap(), stack().unwrap()]
                .into_iter()
                .flat_map(|mut world| {
                    for _ in 0..20 {
                        world.step(&StepParams::default()).unwrap();
                    }
                    world
                        .bodies()
                        .flat_map(|b| b.body().particles().x().iter().map(|p| p.xyz().to_array()))
                        .collect::<Vec<_>>()
                })
                .collect::<Vec<_>>()
        })
    };
    assert_eq!(run(1), run(2));
}

/// A jelly sliding at 1 m/s along x onto a floor mesh at y = 0.1 loaded from OBJ (thickness
/// 2 cm, friction `mu`), no ground plane; after 2 s: its lowest particle's height and its
/// centre's velocity along x.
fn on_obj_floor(mu: f32) -> (f32, f32) {
    use scenes::closed_surface_body;
    use solver_core::mesh::shapes::icosphere;
    use solver_core::MeshCollider;
    let dir = std::env::temp_dir().join(format!("wobble-floor-{}-{mu}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("floor.obj");
    std::fs::write(
        &path,
        "v -2 0.1 -2\nv -2 0.1 2\nv 2 0.1 2\nv 2 0.1 -2\nf 1 2 3\nf 1 3 4\n",
    )
    .unwrap();
    let mut world = World::new();
    world.add_mesh_collider(MeshCollider::from_obj(&path, FLOOR_THICKNESS, mu).unwrap());
    let err = MeshCollider::from_obj(&path, -1.0, mu)
        .unwrap_err()
        .to_string();
    assert!(err.contains("thickness"), "{err}");
    std::fs::remove_dir_all(&dir).ok();
    let mesh = icosphere(Vec3::new(0.0, 0.6, 0.0), 0.2, 1).unwrap();
    let mut body = closed_surface_body(&mesh, 1.0).unwrap();
    body.clear_colliders(); // no ground plane: only the mesh holds it
    for v in body.particles_mut().v_mut().iter_mut() {
        v.set_xyz(Vec3::new(1.0, 0.0, 0.0));
    }
    world.add_body(body, None).unwrap();
    let params = StepParams {
        substeps: 4,
        ..Default::default()
    };
    for _ in 0..120 {
        world.step(&params).unwrap();
    }
    let p = &world.bodies().next().unwrap().body().particles();
    let lowest = p.x().iter().map(|p| p.y).fold(f32::MAX, f32::min);
    let vx = p.v().iter().map(|v| v.x).sum::<f32>() / p.len() as f32;
    (lowest, vx)
}

const FLOOR_THICKNESS: f32 = 0.02;

#[test]
fn a_jelly_rests_on_a_triangle_mesh_floor_loaded_from_obj_at_its_thickness() {
    let (lowest, vx_rough) = on_obj_floor(0.5);
    let (_, vx_slick) = on_obj_floor(0.0);
    println!("floor: lowest {lowest}, centre vx {vx_rough} (mu 0.5), {vx_slick} (mu 0)");
    let surface = 0.1 + FLOOR_THICKNESS;
    assert!(
        (lowest - surface).abs() < 2e-3,
        "lowest particle at {lowest}, surface {surface}"
    );
    // Without friction the jelly keeps sliding; with it, it loses speed (and rolls).
    assert!(
        (vx_slick - 1.0).abs() < 0.05,
        "frictionless floor: {vx_slick} m/s"
    );
    assert!(
        vx_rough < 0.8 * vx_slick,
        "friction: {vx_rough} m/s against {vx_slick}"
    );
}

/// Steps of the `crowd` tests (3 s at 60 Hz).
const CROWD_STEPS: usize = 180;

/// How far below the hammock's surface (the grid's triangles, seen from above) each particle
/// of `jelly` is: the deepest, 0 when none is below.
fn depth_below(hammock: &solver_core::Body, jelly: &solver_core::Body) -> f32 {
    let x = &hammock.particles().x();
    let mut deepest = 0.0f32;
    for q in jelly.particles().x() {
        for t in &hammock.topology().triangles {
            let [a, b, c] = t.map(|i| x[i as usize].xyz());
            let d = (b.z - c.z) * (a.x - c.x) + (c.x - b.x) * (a.z - c.z);
            let l1 = ((b.z - c.z) * (q.x - c.x) + (c.x - b.x) * (q.z - c.z)) / d;
            let l2 = ((c.z - a.z) * (q.x - c.x) + (a.x - c.x) * (q.z - c.z)) / d;
            if l1 >= 0.0 && l2 >= 0.0 && l1 + l2 <= 1.0 {
                let y = l1 * a.y + l2 * b.y + (1.0 - l1 - l2) * c.y;
                deepest = deepest.max(y - q.y);
            }
        }
    }
    deepest
}

/// The mean velocity of a body's particles.
fn mean_velocity(body: &solver_core::Body) -> Vec3 {
    let v = &body.particles().v();
    v.iter().map(|v| v.xyz()).sum::<Vec3>() / v.len() as f32
}

#[test]
fn crowd_jellies_land_in_their_hammocks_without_passing_through_and_come_to_rest() {
    let mut world = scenes::crowd().unwrap();
    assert_eq!(world.len(), 64);
    let pins: Vec<Vec<Vec3>> = world
        .bodies()
        .step_by(2)
        .map(|b| {
            let p = &b.body().particles().x();
            p.iter().filter(|q| q.w == 0.0).map(|q| q.xyz()).collect()
        })
        .collect();
    let mut deepest = 0.0f32;
    for _ in 0..CROWD_STEPS {
        world.step(&StepParams::default()).unwrap();
        let bodies: Vec<_> = world.bodies().map(|b| b.body()).collect();
        for cell in (0..scenes::CROWD_CELLS).step_by(2) {
            deepest = deepest.max(depth_below(bodies[2 * cell], bodies[2 * cell + 1]));
        }
    }
    println!("deepest jelly particle below its hammock over {CROWD_STEPS} steps: {deepest} m");
    assert!(all_finite(&world));
    assert!(
        deepest <= 1e-3,
        "a jelly went {deepest} m through its hammock"
    );
    let bodies: Vec<_> = world.bodies().map(|b| b.body()).collect();
    for cell in 0..scenes::CROWD_CELLS {
        let (hammock, jelly) = (bodies[2 * cell], bodies[2 * cell + 1]);
        let low = |b: &solver_core::Body| {
            b.particles()
                .x()
                .iter()
                .map(|p| p.y)
                .fold(f32::INFINITY, f32::min)
        };
        // After 3 s a jelly in its hammock still rocks with it (no damping, so the sway
        // decays slowly) and one on the ground may roll (friction stops sliding, not
        // rolling), but each at under a tenth of its landing speed, and the one on the ground
        // no longer bounces.
        let v = mean_velocity(jelly);
        assert!(
            v.length() < 0.15,
            "cell {cell}: the jelly still moves at {v} m/s"
        );
        if cell % 2 == 1 {
            assert!(
                v.y.abs() < 0.01,
                "cell {cell}: the jelly bounces at {v} m/s"
            );
        }
        let ratio = volume_ratio(jelly).unwrap();
        assert!(
            (ratio - 1.0).abs() < 0.02,
            "cell {cell}: jelly volume {ratio}"
        );
        if cell % 2 == 0 {
            // In its hammock: above the ground, and the hammock sags under it.
            assert!(
                low(jelly) > 0.3,
                "cell {cell}: the jelly fell to {}",
                low(jelly)
            );
            assert!(low(hammock) < 0.95, "cell {cell}: the hammock does not sag");
        } else {
            // Beside it, on the ground.
            assert!(
                low(jelly).abs() < 2e-3,
                "cell {cell}: the jelly rests at {}",
                low(jelly)
            );
        }
        let still: Vec<Vec3> = hammock
            .particles()
            .x()
            .iter()
            .filter(|q| q.w == 0.0)
            .map(|q| q.xyz())
            .collect();
        assert_eq!(still, pins[cell], "cell {cell}: the pins moved");
    }
}

/// A test's own executor: a rayon pool of `threads`, one task per block.
#[cfg(feature = "parallel")]
struct RayonExecutor(rayon::ThreadPool);

#[cfg(feature = "parallel")]
impl solver_core::Executor for RayonExecutor {
    fn run_home(&self, f: &mut (dyn FnMut() + Send)) {
        self.0.install(f)
    }
    fn run_blocks(&self, blocks: usize, f: &(dyn Fn(usize) + Sync)) {
        use rayon::prelude::*;
        self.0
            .install(|| (0..blocks).into_par_iter().with_max_len(1).for_each(f))
    }
}

#[cfg(feature = "parallel")]
#[test]
fn crowd_of_64_bodies_gives_the_same_bits_on_one_and_two_threads_and_every_executor() {
    use std::sync::Arc;
    let pool = |threads: usize| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
    };
    // (executor, rayon pool the step is called in)
    let runs: Vec<(Option<Arc<dyn solver_core::Executor>>, usize)> = vec![
        (None, 1),
        (None, 2),
        (Some(Arc::new(solver_core::Serial)), 2),
        (Some(Arc::new(RayonExecutor(pool(1)))), 2),
        (Some(Arc::new(RayonExecutor(pool(2)))), 1),
    ];
    let hashes: Vec<u64> = runs
        .into_iter()
        .map(|(executor, threads)| {
            let mut world = scenes::crowd().unwrap();
            world.set_executor(executor);
            pool(threads).install(|| {
                for _ in 0..60 {
                    world.step(&StepParams::default()).unwrap();
                }
            });
            let x: Vec<_> = world
                .bodies()
                .flat_map(|b| b.body().particles().x().iter().copied())
                .collect();
            solver_core::figures::state_hash(&x)
        })
        .collect();
    println!("crowd state hashes after 1 s: {hashes:x?}");
    assert!(hashes.windows(2).all(|w| w[0] == w[1]), "{hashes:x?}");
}

#[test]
fn recording_residuals_leaves_the_bits_and_gives_one_per_iteration_and_substep() {
    let params = StepParams::default();
    let run = |record: bool| {
        let mut world = stack().unwrap();
        for b in world.bodies_mut() {
            b.record_residuals(record);
        }
        for _ in 0..30 {
            world.step(&params).unwrap();
        }
        let x: Vec<_> = world
            .bodies()
            .flat_map(|b| {
                b.body()
                    .particles()
                    .x()
                    .iter()
                    .map(|p| [p.x, p.y, p.z, p.w].map(f32::to_bits))
            })
            .collect();
        let residuals: Vec<Vec<f32>> = world.bodies().map(|b| b.residuals().to_vec()).collect();
        (x, residuals)
    };
    let ((plain, none), (recorded, residuals)) = (run(false), run(true));
    assert_eq!(plain, recorded, "recording changed the bits");
    assert!(none.iter().all(Vec::is_empty));
    for r in &residuals {
        assert_eq!(r.len(), params.substeps * params.iterations);
        assert!(r.iter().all(|v| v.is_finite() && *v >= 0.0));
    }
}

#[test]
fn each_body_keeps_the_report_of_its_last_substep() {
    let mut world = drape(16, false).unwrap();
    let params = StepParams {
        substeps: 4,
        ..StepParams::default()
    };
    for _ in 0..20 {
        world.step(&params).unwrap();
    }
    let b = world.bodies().next().unwrap();
    let report = b.last_report();
    assert_eq!(
        report.substeps, 1,
        "the world steps each body one substep at a time"
    );
    let (mean, _) = solver_core::figures::stretch(b.body());
    assert!(mean > 0.0);
    assert!(
        (report.stretch_mean - mean).abs() <= 1e-5 * mean,
        "the last substep's stretch is the step's: {} against {mean}",
        report.stretch_mean
    );
}

/// A body that fails is restored, held and named by its handle, and the others finish the
/// step with the bits they have in a world where nothing failed (issue 54, item 2).
#[test]
fn a_failing_body_is_restored_and_named_and_the_others_finish_the_step() {
    use solver_core::{BodyHandle, Cloth, WobbleError};
    let cloths = |world: &mut World| -> Vec<BodyHandle> {
        [-5.0f32, 0.0, 5.0]
            .into_iter()
            .map(|x| {
                let cloth = Cloth::new()
                    .resolution(6, 6)
                    .at(Vec3::new(x, 1.0, 0.0))
                    .pin_corners()
                    .build()
                    .unwrap();
                world.add_body(cloth, None).unwrap()
            })
            .collect()
    };
    let (mut world, mut reference) = (World::new(), World::new());
    let handles = cloths(&mut world);
    cloths(&mut reference);
    let params = StepParams {
        substeps: 4,
        ..StepParams::default()
    };
    world.step(&params).unwrap();
    reference.step(&params).unwrap();
    let bad = handles[1];
    let start = world.body(bad).unwrap().body().particles().x().to_vec();
    // A push far beyond any speed the step accepts, on the middle cloth.
    world
        .body_mut(bad)
        .unwrap()
        .body_mut()
        .particles_mut()
        .add_force(20, Vec3::new(0.0, 1e15, 0.0))
        .unwrap();
    let err = world.step(&params).unwrap_err();
    assert!(
        matches!(&err, WobbleError::InBody { body, .. } if *body == bad),
        "{err}"
    );
    assert!(
        err.to_string()
            .contains("the other bodies finished the step"),
        "{err}"
    );
    assert_eq!(world.last_report().failed, vec![bad]);
    assert!(matches!(
        world.body(bad).unwrap().failure(),
        Some(WobbleError::Diverged { .. })
    ));
    assert_eq!(world.body(bad).unwrap().body().particles().x(), &start[..]);
    reference.step(&params).unwrap();
    for (&h, r) in handles.iter().zip(reference.bodies()) {
        if h != bad {
            assert_eq!(
                world.body(h).unwrap().body().particles().x(),
                r.body().particles().x(),
                "{h} stepped as if nothing had failed"
            );
        }
    }
    // The push was consumed with the failed step: the next one is healthy.
    let report = world.step(&params).unwrap();
    assert!(report.failed.is_empty() && world.body(bad).unwrap().failure().is_none());
}
