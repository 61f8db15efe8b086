//! Rapier rigid bodies as a contact source of a [`World`] (feature `rapier`): three soft bodies
//! and five rapier bodies thrown at each other without gravity step 600 frames with every
//! solver and give the same bits on one thread and on two. In one arrangement the soft bodies
//! meet only the rigid bodies (and the rigid bodies each other): the total linear momentum is
//! kept and the rigid bodies take a real share of it. In the other the soft bodies also hit
//! each other, and the total momentum is kept as well (the soft-soft contacts hand each body
//! the other's reaction; [`two_soft_bodies_colliding_keep_their_momentum`] holds a ball
//! hitting the cube alone to it).

#![cfg(feature = "rapier")]

use wobble::glam::Vec3;
use wobble::rapier3d::prelude::{ColliderBuilder, PhysicsWorld, RigidBodyBuilder, Vector};
use wobble::sparse::SolverKind;
use wobble::{figures, Body, SoftBody, SolverOptions, StepParams, TetBody, World};

/// A soft ball of radius 0.2 m and 1 kg centred at `at`, every particle moving at `velocity`.
fn soft_ball(at: Vec3, velocity: Vec3) -> Body {
    let mut body = SoftBody::sphere(0.2, 1)
        .at(at)
        .mass(1.0)
        .stretch(1e-4)
        .build()
        .expect("the ball builds");
    for v in body.particles_mut().v_mut() {
        v.set_xyz(velocity);
    }
    body
}

/// A soft cube of 0.3 m and 1 kg centred at the origin, at rest.
fn soft_cube() -> Body {
    TetBody::cube(0.3, 2)
        .at(Vec3::new(-0.15, -0.15, -0.15))
        .mass(1.0)
        .build()
        .expect("the cube builds")
}

/// How the bodies meet.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Arrangement {
    /// Every soft body meets only rigid bodies: a rapier ball at rest between each soft ball and
    /// the cube.
    SoftMeetsRigid,
    /// The right soft ball hits the cube itself.
    SoftMeetsSoft,
}

/// The world: soft balls at x = -1.1 (moving +x at 3 m/s) and x = 0.9 (moving -x at 3 m/s), a
/// 0.3 m soft cube at rest between them; a rapier ball at rest between the left soft ball and
/// the cube, and between the right one and the cube or (`SoftMeetsSoft`) flying at the cube
/// from the back; three rapier balls and boxes flying at the cube from above, below and the
/// front. No gravity, so nothing but the bodies themselves changes the momentum.
fn world(kind: SolverKind, threads: usize, arrangement: Arrangement) -> World {
    // Without the `parallel` feature a solver refuses more than one thread; the world's own
    // pool (`run`) still differs.
    let options = SolverOptions {
        threads: if cfg!(feature = "parallel") {
            threads
        } else {
            1
        },
        ..SolverOptions::default()
    };
    let solver = || kind.build(&options).expect("the solver builds");
    let mut world = World::new();
    world
        .add_body(
            soft_ball(Vec3::new(-1.1, 0.0, 0.0), Vec3::new(3.0, 0.0, 0.0)),
            Some(solver()),
        )
        .unwrap();
    let cube = soft_cube();
    world.add_body(cube, Some(solver())).unwrap();
    world
        .add_body(
            soft_ball(Vec3::new(0.9, 0.05, 0.02), Vec3::new(-3.0, 0.0, 0.0)),
            Some(solver()),
        )
        .unwrap();
    let mut rapier = PhysicsWorld::new();
    let rigid = [
        (Vec3::new(-0.5, 0.0, 0.0), Vec3::ZERO, true),
        (Vec3::new(0.0, 0.8, 0.0), Vec3::new(0.0, -2.0, 0.0), true),
        (Vec3::new(0.02, -0.8, 0.0), Vec3::new(0.0, 2.0, 0.0), false),
        (Vec3::new(0.0, 0.0, 0.8), Vec3::new(0.0, 0.0, -2.0), true),
        if arrangement == Arrangement::SoftMeetsRigid {
            (Vec3::new(0.45, 0.0, 0.0), Vec3::ZERO, false)
        } else {
            (Vec3::new(0.0, 0.03, -0.8), Vec3::new(0.0, 0.0, 3.0), false)
        },
    ];
    for (at, v, ball) in rigid {
        let body = RigidBodyBuilder::dynamic()
            .translation(Vector::new(at.x, at.y, at.z))
            .linvel(Vector::new(v.x, v.y, v.z));
        // 0.5 kg each.
        let collider = if ball {
            ColliderBuilder::ball(0.1).mass(0.5)
        } else {
            ColliderBuilder::cuboid(0.08, 0.08, 0.08).mass(0.5)
        };
        rapier.insert(body, collider);
    }
    assert!(world.set_rapier(rapier).is_none());
    world
}

/// What a run of `frames` frames ends with.
struct Run {
    /// The total linear momentum at the start and at the end.
    momentum: (Vec3, Vec3),
    /// How much the total momentum moved, in size, summed over the frames whose contacts were
    /// all with rigid bodies, and how many such frames had a rigid contact.
    rigid_frames: (f32, usize),
    /// The momentum the rigid bodies gained or lost, each body's change in size, summed.
    rigid: f32,
    /// The most contacts with rapier colliders, and between soft bodies, in a last substep.
    most: (usize, usize),
    /// Every soft body's world positions and velocities, then every rigid body's pose and
    /// velocity, as bits.
    bits: Vec<u32>,
}

fn run(kind: SolverKind, threads: usize, frames: usize, arrangement: Arrangement) -> Run {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("the pool builds");
    pool.install(|| {
        let mut world = world(kind, threads, arrangement);
        let params = StepParams {
            gravity: Vec3::ZERO,
            substeps: 4,
            ..StepParams::default()
        };
        let before = world.momentum();
        let rigid_momenta = |world: &World| -> Vec<Vec3> {
            let bodies = &world.rapier().unwrap().bodies;
            bodies
                .iter()
                .map(|(_, rb)| rb.mass() * Vec3::from_array(rb.linvel().to_array()))
                .collect()
        };
        let rigid_before = rigid_momenta(&world);
        let mut most = (0, 0);
        let mut rigid_frames = (0.0, 0);
        for frame in 0..frames {
            let at_start = world.momentum();
            let report = world
                .step(&params)
                .unwrap_or_else(|e| panic!("{} frame {frame}: {e}", kind.name()));
            if report.contacts == report.rigid_contacts && report.rigid_contacts > 0 {
                rigid_frames.0 += (world.momentum() - at_start).length();
                rigid_frames.1 += 1;
            }
            // The bodies have no shape colliders: the rest are contacts between soft bodies.
            most.0 = most.0.max(report.rigid_contacts);
            most.1 = most.1.max(report.contacts - report.rigid_contacts);
            for b in world.bodies() {
                assert!(
                    figures::all_finite(b.body()),
                    "{} frame {frame}: {} is not finite",
                    kind.name(),
                    b.handle()
                );
            }
        }
        let mut bits = Vec::new();
        for b in world.bodies() {
            let body = b.body();
            for i in 0..body.len() {
                let p = body.world_position(i);
                bits.extend([p.x, p.y, p.z].map(|c| (c as f32).to_bits()));
            }
            for v in body.particles().v() {
                bits.extend(v.xyz().to_array().map(f32::to_bits));
            }
        }
        for (_, rb) in world.rapier().unwrap().bodies.iter() {
            let (t, q, v) = (rb.translation(), rb.rotation(), rb.linvel());
            bits.extend([t.x, t.y, t.z, q.x, q.y, q.z, q.w, v.x, v.y, v.z].map(f32::to_bits));
        }
        Run {
            momentum: (before, world.momentum()),
            rigid_frames,
            rigid: rigid_momenta(&world)
                .iter()
                .zip(&rigid_before)
                .map(|(a, b)| (*a - *b).length())
                .sum(),
            most,
            bits,
        }
    })
}

/// How far the total momentum may move over the frames whose contacts are all with rigid
/// bodies, summed, and over the whole run, as a fraction of the momentum the bodies carry at
/// the start: the hand-over, rigid and soft-soft, is exact up to f32 rounding for every
/// solver: each moves a particle only through its constraints' multipliers, or (chebyshev)
/// extrapolates the multipliers, the contacts' among them, with the positions.
const MOMENTUM_TOLERANCE: f32 = 0.02;

/// The momentum the bodies carry at the start, each at its own speed (kg m/s): two soft balls
/// of 1 kg at 3 m/s, and four rapier bodies of 0.5 kg at 2 or 3 m/s.
fn carried(arrangement: Arrangement) -> f32 {
    match arrangement {
        Arrangement::SoftMeetsRigid => 2.0 * 3.0 + 3.0 * 2.0 * 0.5,
        Arrangement::SoftMeetsSoft => 2.0 * 3.0 + 3.0 * 2.0 * 0.5 + 3.0 * 0.5,
    }
}

#[test]
fn three_soft_and_five_rapier_bodies_step_600_frames_with_every_solver() {
    for kind in SolverKind::ALL {
        let name = kind.name();
        for arrangement in [Arrangement::SoftMeetsRigid, Arrangement::SoftMeetsSoft] {
            let one = run(kind, 1, 600, arrangement);
            let (before, after) = one.momentum;
            let carried = carried(arrangement);
            // Over the frames whose contacts were all with rigid bodies (the soft-soft
            // contacts are held by `two_soft_bodies_colliding_keep_their_momentum`).
            let drift = one.rigid_frames.0 / carried;
            println!(
                "{name}, {arrangement:?}: momentum {before:?} -> {after:?}; over the {} frames with rigid contacts only it moved by {drift:.2e} of {carried} kg m/s; the rigid bodies' momentum changed by {} in all; most contacts: rigid {}, between soft bodies {}",
                one.rigid_frames.1, one.rigid, one.most.0, one.most.1
            );
            assert!(
                one.rigid_frames.1 >= 10,
                "{name}: too few frames with rigid contacts only: {}",
                one.rigid_frames.1
            );
            assert!(
                drift < MOMENTUM_TOLERANCE,
                "{name}, {arrangement:?}: the momentum moved by {drift:.3e} over the rigid contacts"
            );
            // Over the whole run, the soft-soft contacts included.
            let moved = (after - before).length() / carried;
            assert!(
                moved < MOMENTUM_TOLERANCE,
                "{name}, {arrangement:?}: the momentum moved by {moved:.3e} over the run"
            );
            // The soft balls carry 3 kg m/s each into the rigid bodies before them.
            assert!(
                one.rigid > 2.0,
                "{name}: the rigid bodies must take a real share: {}",
                one.rigid
            );
            if arrangement == Arrangement::SoftMeetsSoft {
                assert!(one.most.1 > 0, "{name}: the soft bodies never met");
            }
            let two = run(kind, 2, 600, arrangement);
            assert!(
                one.bits == two.bits,
                "{name}, {arrangement:?}: one thread and two give different bits"
            );
        }
    }
}

/// A soft ball (1 kg at 3 m/s) hitting a soft cube at rest (1 kg) without gravity: the pair
/// keeps its momentum within 2% (`cargo test --release --features rapier --test world_rapier
/// -- --nocapture` prints it). The world solves the ball first against the cube's prediction
/// with the cube's share as a compliance, then the cube rigidly against the ball's solved
/// surface; every contact hands the other body the opposite of the momentum it gave (module
/// doc of `world`, Theory). Without those reactions the cube took the penetration left to it
/// as its own velocity and left at about 4.7 m/s while the ball kept 2.9 (total 7.63 kg m/s).
#[test]
fn two_soft_bodies_colliding_keep_their_momentum() {
    let mut world = World::new();
    world
        .add_body(
            soft_ball(Vec3::new(-0.6, 0.0, 0.0), Vec3::new(3.0, 0.0, 0.0)),
            None,
        )
        .unwrap();
    let cube = soft_cube();
    world.add_body(cube, None).unwrap();
    let params = StepParams {
        gravity: Vec3::ZERO,
        substeps: 4,
        ..StepParams::default()
    };
    let before = world.momentum();
    for _ in 0..60 {
        world.step(&params).unwrap();
    }
    let after = world.momentum();
    println!("ball hits cube: momentum {before:?} -> {after:?}");
    assert!(
        (after - before).length() < 0.02 * before.length(),
        "{before:?} -> {after:?}"
    );
}

/// The rigid bodies take real momentum from the soft bodies: the rapier ball (0.5 kg) between
/// the left soft ball (1 kg at 3 m/s) and the cube leaves along +x at more than 1 m/s before it
/// reaches the cube (an inelastic hit gives both 2 m/s).
#[test]
fn a_soft_body_pushes_a_rapier_body_it_hits() {
    let mut world = world(SolverKind::Gs, 1, Arrangement::SoftMeetsRigid);
    let params = StepParams {
        gravity: Vec3::ZERO,
        substeps: 4,
        ..StepParams::default()
    };
    let ball = world.rapier().unwrap().bodies.iter().next().unwrap().0;
    let mut fastest = 0.0f32;
    for _ in 0..30 {
        world.step(&params).unwrap();
        fastest = fastest.max(world.rapier().unwrap().bodies[ball].linvel().x);
    }
    println!("the first rapier ball's fastest along +x over 30 frames: {fastest} m/s");
    assert!(fastest > 1.0, "{fastest}");
}
