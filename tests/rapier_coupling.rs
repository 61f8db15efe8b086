//! The rapier coupling (feature `rapier`): a jelly hitting a free rapier box conserves the
//! total linear momentum (no gravity, friction or damping) while the box gains a real share of
//! it; a moving rapier box pushes a resting jelly; bad input is refused with an error.

#![cfg(feature = "rapier")]

use wobble::core::scenes;
use wobble::glam::Vec3;
use wobble::rapier3d::prelude::{ColliderBuilder, ColliderHandle, RigidBodyBuilder, Vector};
use wobble::{Body, RapierCoupling, StepParams, WobbleError};

/// The jelly (42 particles, 1 kg, radius 0.25 m at (0, 1, 0)) without its ground plane, every
/// particle moving at `velocity`.
fn jelly(velocity: Vec3) -> Body {
    let mut body = scenes::jelly(1).expect("the jelly builds");
    body.colliders.clear();
    for v in body.particles.v.iter_mut() {
        v.set_xyz(velocity);
    }
    body
}

/// No gravity, four substeps of 1/240 s per frame.
fn weightless() -> StepParams {
    StepParams {
        gravity: Vec3::ZERO,
        substeps: 4,
        ..StepParams::default()
    }
}

#[test]
fn a_jelly_hitting_a_free_box_conserves_linear_momentum() {
    let mut coupling = RapierCoupling::new(jelly(Vec3::new(3.0, 0.0, 0.0)), None).unwrap();
    coupling.friction = 0.0;
    // A 0.4 m box of 1 kg (density 1 / 0.4³), 0.75 m ahead of the jelly's centre, at rest.
    let (box_handle, box_collider) = coupling.rapier.insert(
        RigidBodyBuilder::dynamic().translation(Vector::new(0.75, 1.0, 0.0)),
        ColliderBuilder::cuboid(0.2, 0.2, 0.2)
            .density(1.0 / 0.064)
            .friction(0.0),
    );
    let before = coupling.momentum();
    let mut impulse = Vec3::ZERO;
    let mut deepest = 0.0f32;
    for _ in 0..60 {
        impulse += coupling.step(&weightless()).unwrap().impulse;
        deepest = deepest.max(deepest_inside(&coupling, box_collider));
    }
    let after = coupling.momentum();
    let rigid = coupling.rigid_momentum();
    let soft = coupling.soft_momentum();
    let box_body = coupling.rigid_body(box_handle).unwrap();
    println!(
        "momentum before {before:?}, after {after:?} (soft {soft:?}, box {rigid:?}); impulse given to the box {impulse:?}; box mass {} kg, at x = {}",
        box_body.mass(),
        box_body.translation().x
    );
    let error = (after - before).length() / before.length();
    println!("relative change of the total linear momentum: {error:e}");
    assert!(
        error < 0.01,
        "total momentum changed by {:.3}% over the collision",
        100.0 * error
    );
    assert!(
        rigid.x > 0.1 * before.x,
        "the box must gain a real share of the momentum: {rigid:?} of {before:?}"
    );
    assert!(
        (impulse - rigid).length() < 1e-3 * before.length(),
        "the box's momentum is the impulses the coupling gave it"
    );
    assert!(box_body.translation().x > 0.8, "and the box moved away");
    println!("deepest particle inside the box after a step: {deepest:e} m");
    assert!(
        deepest < 0.01,
        "the contacts keep the jelly out of the box: {deepest} m inside"
    );
}

#[test]
fn with_friction_an_off_centre_hit_conserves_linear_momentum_and_spins_the_box() {
    let mut coupling = RapierCoupling::new(jelly(Vec3::new(3.0, 0.0, 0.0)), None).unwrap();
    coupling.friction = 0.5;
    // The same box, its centre 0.2 m below the jelly's path: the hit is off centre.
    let (box_handle, _) = coupling.rapier.insert(
        RigidBodyBuilder::dynamic().translation(Vector::new(0.75, 0.8, 0.0)),
        ColliderBuilder::cuboid(0.2, 0.2, 0.2).density(1.0 / 0.064),
    );
    let before = coupling.momentum();
    for _ in 0..60 {
        coupling.step(&weightless()).unwrap();
    }
    let after = coupling.momentum();
    let rigid = coupling.rigid_momentum();
    let spin = coupling.rigid_body(box_handle).unwrap().angvel();
    let error = (after - before).length() / before.length();
    println!(
        "friction 0.5, off centre: momentum before {before:?}, after {after:?} (box {rigid:?}), relative change {error:e}; box angular velocity {spin:?}"
    );
    assert!(
        error < 0.01,
        "total momentum changed by {:.3}%",
        100.0 * error
    );
    assert!(
        rigid.x > 0.1 * before.x,
        "the box gains momentum: {rigid:?}"
    );
    // Pushed above its centre along +x, the box turns about -z.
    assert!(spin.z < -0.1, "the off-centre hit spins the box: {spin:?}");
}

/// How deep the deepest particle is inside collider `handle` (0 when none is inside).
fn deepest_inside(coupling: &RapierCoupling, handle: ColliderHandle) -> f32 {
    let collider = &coupling.rapier.colliders[handle];
    coupling
        .body
        .particles
        .x
        .iter()
        .map(|p| {
            let point = Vector::new(p.x, p.y, p.z);
            let hit = collider
                .shape()
                .project_point(collider.position(), point, false);
            if hit.is_inside {
                (hit.point - point).length()
            } else {
                0.0
            }
        })
        .fold(0.0, f32::max)
}

#[test]
fn a_moving_rapier_box_pushes_a_resting_jelly() {
    let mut coupling = RapierCoupling::new(jelly(Vec3::ZERO), None).unwrap();
    // A kinematic box (infinite mass for the jelly) moving at 1 m/s towards it from -x.
    coupling.rapier.insert(
        RigidBodyBuilder::kinematic_velocity_based()
            .translation(Vector::new(-0.6, 1.0, 0.0))
            .linvel(Vector::new(1.0, 0.0, 0.0)),
        ColliderBuilder::cuboid(0.2, 0.2, 0.2),
    );
    let centre = |c: &RapierCoupling| {
        let x = &c.body.particles.x;
        x.iter().map(|p| p.xyz()).sum::<Vec3>() / x.len() as f32
    };
    let start = centre(&coupling);
    for _ in 0..60 {
        coupling.step(&weightless()).unwrap();
    }
    let end = centre(&coupling);
    println!("jelly centre of mass from {start:?} to {end:?} after the box pushed it");
    // The box's face starts 0.15 m from the jelly and travels 1 m, so it pushes the jelly at
    // least 0.85 m (more: the squeezed jelly springs ahead of the box).
    assert!(
        end.x - start.x > 0.5,
        "the box must push the jelly along +x: {start:?} -> {end:?}"
    );
    assert!(coupling.body.particles.v.iter().all(|v| v.x > 0.0));
}

#[test]
fn bad_input_is_an_error() {
    let mut coupling = RapierCoupling::new(jelly(Vec3::ZERO), None).unwrap();
    let (b, c) = coupling.rapier.insert(
        RigidBodyBuilder::dynamic().translation(Vector::new(1.0, 1.0, 0.0)),
        ColliderBuilder::ball(0.1),
    );
    for dt in [0.0, -1.0 / 60.0, f32::NAN] {
        let params = StepParams { dt, ..weightless() };
        let e = coupling.step(&params).unwrap_err();
        assert!(matches!(e, WobbleError::BadTimeStep(_)), "dt = {dt}: {e}");
    }
    coupling.thickness = -0.01;
    let e = coupling.step(&weightless()).unwrap_err();
    assert!(matches!(e, WobbleError::BadParameter { .. }), "{e}");
    coupling.thickness = 0.01;

    coupling.rapier.bodies[b].set_linvel(Vector::new(f32::NAN, 0.0, 0.0), true);
    let e = coupling.step(&weightless()).unwrap_err();
    println!("NaN velocity: {e}");
    assert!(matches!(e, WobbleError::NonFinite { .. }), "{e}");
    coupling.rapier.bodies[b].set_linvel(Vector::ZERO, true);
    coupling
        .step(&weightless())
        .expect("a finite state steps again");

    coupling.body.particles.v[3].x = f32::INFINITY;
    let e = coupling.step(&weightless()).unwrap_err();
    assert!(matches!(e, WobbleError::BadState { .. }), "{e}");

    coupling.rapier.remove_body_with_colliders(b, true);
    let e = coupling.set_coupled(c, true).unwrap_err();
    println!("removed collider: {e}");
    assert!(matches!(e, WobbleError::UnknownName { .. }), "{e}");
    assert!(coupling.rigid_body(b).is_err());
}
