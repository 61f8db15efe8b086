//! The world's scenes (docs/SCENES.md): `drape` (self-collision), `tunnel` (no tunnelling at
//! 20 m/s), and the world's thread-count invariance.

use solver_core::figures::{self_intersections, Surface};
use solver_core::glam::Vec3;
use solver_core::scenes::{drape, tunnel};
use solver_core::{StepParams, World};

fn surfaces(world: &World) -> Vec<Surface<'_>> {
    world
        .bodies
        .iter()
        .map(|b| (&b.body.topology.triangles[..], &b.body.particles.x[..]))
        .collect()
}

fn all_finite(world: &World) -> bool {
    world
        .bodies
        .iter()
        .all(|b| b.body.particles.x.iter().all(|p| p.is_finite()))
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
    let x = &world.bodies[0].body.particles.x;
    let top = x.iter().map(|p| p.y).fold(f32::MIN, f32::max);
    assert!((top - 0.6).abs() < 0.03, "top of the cloth at {top}");
    let vmax = world.bodies[0]
        .body
        .particles
        .v
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
        for (k, b) in world.bodies.iter().enumerate() {
            let far = b
                .body
                .particles
                .x
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

#[cfg(feature = "parallel")]
#[test]
fn world_step_gives_the_same_bits_on_one_and_two_threads() {
    let run = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| {
            let mut world = tunnel().unwrap();
            for _ in 0..20 {
                world.step(&StepParams::default()).unwrap();
            }
            world
                .bodies
                .iter()
                .flat_map(|b| b.body.particles.x.iter().map(|p| p.xyz().to_array()))
                .collect::<Vec<_>>()
        })
    };
    assert_eq!(run(1), run(2));
}
