//! Moving colliders (issue 35, item 3): a collider given its shape at the end of the next step
//! (a character's body proxy following its skeleton) moves there across the substeps, and
//! contacts, friction and restitution see its surface moving. What a player would see: a cloth
//! lying on a sliding box is carried along, a swinging capsule pushes a hanging cloth aside
//! without any particle ending inside it, and a collider that stays put behaves as before.

use wobble::core::collide::Shape;
use wobble::glam::{Quat, Vec3};
use wobble::{step, Body, Cloth, Collider, GaussSeidel, StepParams};

/// A 12 x 12 cloth of 1 m lying on a 2 m box whose top is at y = 1.
fn cloth_on_a_box() -> (Body, Shape) {
    let mut body = Cloth::new()
        .resolution(12, 12)
        .at(Vec3::new(-0.5, 1.005, -0.5))
        .build()
        .unwrap();
    let shape = Shape::Cuboid {
        center: Vec3::new(0.0, 0.5, 0.0),
        half: Vec3::new(1.0, 0.5, 1.0),
        rotation: Quat::IDENTITY,
    };
    body.add_collider(
        Collider::cuboid(
            Vec3::new(0.0, 0.5, 0.0),
            Vec3::new(1.0, 0.5, 1.0),
            Quat::IDENTITY,
        )
        .unwrap()
        .with_friction(1.0)
        .unwrap(),
    )
    .unwrap();
    (body, shape)
}

fn mean_velocity(body: &Body) -> Vec3 {
    body.particles().v().iter().map(|v| v.xyz()).sum::<Vec3>() / body.len() as f32
}

#[test]
fn a_cloth_on_a_sliding_box_is_carried_along_by_friction() {
    let speed = 0.5;
    let dt = 1.0 / 60.0;
    for substeps in [1, 4] {
        let (mut body, shape) = cloth_on_a_box();
        let params = StepParams {
            substeps,
            ..Default::default()
        };
        let mut gs = GaussSeidel::new();
        for _ in 0..30 {
            step(&mut body, &params, &mut gs, None).unwrap();
        }
        for k in 1..=60 {
            let Shape::Cuboid {
                center,
                half,
                rotation,
            } = shape
            else {
                unreachable!()
            };
            let moved = Shape::Cuboid {
                center: center + Vec3::X * speed * dt * k as f32,
                half,
                rotation,
            };
            body.move_collider(0, moved).unwrap();
            step(&mut body, &params, &mut gs, None).unwrap();
        }
        assert_eq!(
            body.colliders()[0].shape,
            Shape::Cuboid {
                center: Vec3::new(speed * dt * 60.0, 0.5, 0.0),
                half: Vec3::new(1.0, 0.5, 1.0),
                rotation: Quat::IDENTITY
            },
            "the box ends the frames where it was sent"
        );
        let v = mean_velocity(&body);
        assert!(
            (v.x - speed).abs() < 0.05 * speed && v.y.abs() < 0.05,
            "x{substeps}: the cloth moves at {v} on a box moving at {speed} m/s"
        );
        let lowest = wobble::figures::lowest_y(&body);
        assert!(
            lowest > 0.99,
            "x{substeps}: a particle sank to {lowest} into the box"
        );
    }
}

#[test]
fn a_box_that_stays_put_holds_the_cloth_still() {
    let (mut body, _) = cloth_on_a_box();
    let mut gs = GaussSeidel::new();
    for _ in 0..90 {
        step(&mut body, &StepParams::default(), &mut gs, None).unwrap();
    }
    let v = mean_velocity(&body);
    assert!(v.length() < 1e-3, "the cloth drifts at {v}");
}

#[test]
fn a_swinging_capsule_pushes_a_hanging_cloth_and_no_particle_ends_inside() {
    // A cloth hangs from its corners; a capsule (an arm of radius 8 cm) swings through it at
    // about 2 m/s, moved every frame. After every step no particle is inside the capsule. The
    // contact margin is widened to 2 cm (the default 5 mm is for colliders that stay put): a
    // particle found beyond the margin at the substep's prediction is not a contact of that
    // substep, and the capsule's push on its neighbours drags it further than 5 mm in.
    let mut body = Cloth::new()
        .resolution(16, 16)
        .at(Vec3::new(0.0, 1.5, 0.0))
        .pin_corners()
        .build()
        .unwrap();
    let mut gs = GaussSeidel::new();
    let params = StepParams {
        substeps: 4,
        contact_margin: 0.02,
        ..Default::default()
    };
    for _ in 0..120 {
        step(&mut body, &params, &mut gs, None).unwrap();
    }
    let arm = |k: usize| {
        let z = -0.6 + 1.2 * (k as f32 / 40.0).min(1.0);
        Shape::Capsule {
            a: Vec3::new(0.2, 1.0, z),
            b: Vec3::new(0.8, 1.0, z),
            radius: 0.08,
        }
    };
    let Shape::Capsule { a, b, radius } = arm(0) else {
        unreachable!()
    };
    body.add_collider(Collider::capsule(a, b, radius).unwrap())
        .unwrap();
    let mut pushed = 0.0f32;
    for k in 1..=60 {
        body.move_collider(0, arm(k)).unwrap();
        step(&mut body, &params, &mut gs, None).unwrap();
        let shape = body.colliders()[0].shape;
        for (i, x) in body.particles().x().iter().enumerate() {
            let (d, _) = shape.signed_distance(x.xyz());
            assert!(d > -1e-4, "step {k}: particle {i} {d} m inside the capsule");
        }
        pushed = body
            .particles()
            .x()
            .iter()
            .map(|x| x.z)
            .fold(pushed, f32::max);
    }
    assert!(
        pushed > 0.3,
        "the capsule pushed the cloth only to z = {pushed}"
    );
}

#[test]
fn a_collider_moved_to_another_kind_of_shape_is_refused() {
    let (mut body, _) = cloth_on_a_box();
    let sphere = Shape::Sphere {
        center: Vec3::ZERO,
        radius: 1.0,
    };
    let e = body.move_collider(0, sphere).unwrap_err();
    assert!(e.to_string().contains("own kind"), "{e}");
    assert!(body.move_collider(3, sphere).is_err());
    let bad = Shape::Cuboid {
        center: Vec3::NAN,
        half: Vec3::ONE,
        rotation: Quat::IDENTITY,
    };
    assert!(body.move_collider(0, bad).is_err());
    assert_eq!(
        body.colliders()[0].motion,
        None,
        "nothing was set by the refused moves"
    );
}
