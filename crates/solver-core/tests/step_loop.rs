//! The step loop: residuals fall, PBD/XPBD stiffness rules, colliders, attachments, errors.

use solver_core::collide::{Collider, Shape};
use solver_core::glam::{Quat, Vec3};
use solver_core::{figures, step, GaussSeidel, StepParams, Stiffness, WobbleError};

#[test]
fn residual_is_reported_per_iteration_and_falls() {
    let mut body = scenes::cloth(16).unwrap();
    let mut solver = GaussSeidel::new();
    let params = StepParams {
        iterations: 20,
        ..Default::default()
    };
    for _ in 0..5 {
        step(&mut body, &params, &mut solver, None).unwrap();
    }
    let mut r = Vec::new();
    step(&mut body, &params, &mut solver, Some(&mut r)).unwrap();
    assert_eq!(r.len(), 20);
    assert!(r[19] < 0.9 * r[0], "residual {} -> {}", r[0], r[19]);
    assert!(
        r.windows(2).all(|w| w[1] <= w[0] * 1.0001),
        "GS residual never rises: {r:?}"
    );
}

#[test]
fn iteration_corrected_pbd_stiffness_is_less_iteration_dependent() {
    // Müller 2007 §3.3: with k' the stretch after hanging depends less on the iteration count.
    let stretch_after = |iterations: usize, corrected: bool| {
        let mut body = scenes::cloth(12).unwrap();
        let mut gs = GaussSeidel::new();
        let params = StepParams {
            iterations,
            stiffness: Stiffness::Pbd {
                k: 0.5,
                iteration_corrected: corrected,
            },
            ..Default::default()
        };
        for _ in 0..120 {
            step(&mut body, &params, &mut gs, None).unwrap();
        }
        figures::stretch(&body).0
    };
    let plain = (stretch_after(4, false) / stretch_after(32, false))
        .ln()
        .abs();
    let corrected = (stretch_after(4, true) / stretch_after(32, true))
        .ln()
        .abs();
    assert!(
        corrected < plain,
        "log ratio corrected {corrected} vs plain {plain}"
    );
}

#[test]
fn xpbd_compliance_makes_constraints_softer() {
    let run = |alpha: f32| {
        let mut body = scenes::rope(10).unwrap();
        body.constraints_mut().distance.set_compliance(alpha);
        let mut gs = GaussSeidel::new();
        for _ in 0..200 {
            step(
                &mut body,
                &StepParams {
                    iterations: 20,
                    ..Default::default()
                },
                &mut gs,
                None,
            )
            .unwrap();
        }
        figures::stretch(&body).0
    };
    assert!(run(1e-2) > 2.0 * run(0.0));
}

#[test]
fn a_dropped_rope_rests_on_every_collider_shape() {
    let shapes = [
        Shape::Plane {
            normal: Vec3::Y,
            offset: 0.5,
        },
        Shape::Sphere {
            center: Vec3::new(0.5, 0.0, 0.0),
            radius: 0.5,
        },
        Shape::Capsule {
            a: Vec3::new(-1.0, 0.2, 0.0),
            b: Vec3::new(2.0, 0.2, 0.0),
            radius: 0.3,
        },
        Shape::Cuboid {
            center: Vec3::new(0.5, 0.0, 0.0),
            half: Vec3::new(2.0, 0.5, 1.0),
            rotation: Quat::from_rotation_y(0.3),
        },
    ];
    for shape in shapes {
        let mut body = scenes::rope(8).unwrap();
        body.particles_mut().set_mass(0, 0.1).unwrap();
        body.add_collider(Collider {
            shape,
            friction: 0.5,
            restitution: 0.0,
            motion: None,
        })
        .unwrap();
        let mut gs = GaussSeidel::new();
        for _ in 0..300 {
            step(&mut body, &StepParams::default(), &mut gs, None).unwrap();
        }
        for p in body.particles().x() {
            let (d, _) = shape.signed_distance(p.xyz());
            assert!(d > -1e-3, "{shape:?}: particle inside by {d}");
        }
        let low = figures::lowest_y(&body);
        assert!(low > -0.05, "{shape:?}: fell through to {low}");
    }
}

#[test]
fn restitution_bounces_and_friction_stops_sliding() {
    let drop = |restitution: f32| {
        let mut body = scenes::rope(2).unwrap();
        body.particles_mut().set_mass(0, 0.5).unwrap();
        body.add_collider(Collider {
            shape: Shape::Plane {
                normal: Vec3::Y,
                offset: 0.0,
            },
            friction: 0.0,
            restitution,
            motion: None,
        })
        .unwrap();
        let mut gs = GaussSeidel::new();
        let mut max_up = 0.0f32;
        for _ in 0..60 {
            step(&mut body, &StepParams::default(), &mut gs, None).unwrap();
            max_up = max_up.max(body.particles().velocity(0).y);
        }
        max_up
    };
    assert!(drop(0.8) > 1.0, "a bouncy particle goes back up");
    assert!(drop(0.0) < 0.5, "an inelastic one does not");

    let slide = |friction: f32| {
        let mut body = scenes::rope(2).unwrap();
        body.particles_mut().set_mass(0, 0.5).unwrap();
        for i in 0..2 {
            body.particles_mut()
                .teleport(i, Vec3::new(i as f32, 0.0, 0.0))
                .unwrap();
            body.particles_mut().v_mut()[i].x = 3.0;
        }
        body.add_collider(Collider {
            shape: Shape::Plane {
                normal: Vec3::Y,
                offset: 0.0,
            },
            friction,
            restitution: 0.0,
            motion: None,
        })
        .unwrap();
        let mut gs = GaussSeidel::new();
        for _ in 0..120 {
            step(&mut body, &StepParams::default(), &mut gs, None).unwrap();
        }
        body.particles().velocity(0).x.abs()
    };
    assert!(
        slide(1.0) < 0.05 && slide(0.0) > 2.5,
        "friction {} vs frictionless {}",
        slide(1.0),
        slide(0.0)
    );
}

#[test]
fn attachments_are_driven_every_substep() {
    let mut body = scenes::rope(5).unwrap();
    let a = body.attach(4).unwrap();
    let target = Vec3::new(1.0, 1.5, 0.3);
    body.move_attachment(a, target).unwrap();
    let mut gs = GaussSeidel::new();
    step(
        &mut body,
        &StepParams {
            substeps: 4,
            ..Default::default()
        },
        &mut gs,
        None,
    )
    .unwrap();
    assert!((body.particles().position(4) - target).length() < 1e-6);
    let v = body.particles().velocity(4);
    let expected = (target - Vec3::new(1.0, 1.0, 0.0)) * 60.0;
    assert!(
        (v - expected).length() < 1e-2 * expected.length(),
        "velocity {v} vs {expected}"
    );
    body.release_attachment(a, 0.2).unwrap();
    assert!(body.particles().inv_mass(4) > 0.0);
}

#[test]
fn bad_parameters_are_errors_not_panics() {
    let mut body = scenes::cloth(4).unwrap();
    let mut gs = GaussSeidel::new();
    let bad = [
        StepParams {
            dt: 0.0,
            ..Default::default()
        },
        StepParams {
            dt: -1.0,
            ..Default::default()
        },
        StepParams {
            dt: f32::NAN,
            ..Default::default()
        },
        StepParams {
            iterations: 0,
            ..Default::default()
        },
        StepParams {
            substeps: 0,
            ..Default::default()
        },
        StepParams {
            iterations: 10_000_000,
            ..Default::default()
        },
        StepParams {
            stiffness: Stiffness::Pbd {
                k: 1.5,
                iteration_corrected: false,
            },
            ..Default::default()
        },
        StepParams {
            gravity: Vec3::new(0.0, f32::INFINITY, 0.0),
            ..Default::default()
        },
    ];
    for p in bad {
        let before = body.particles().x().to_vec();
        assert!(step(&mut body, &p, &mut gs, None).is_err(), "{p:?}");
        assert_eq!(before, body.particles().x());
    }
}

#[test]
fn a_non_finite_force_is_refused_and_the_body_kept() {
    let mut body = scenes::cloth(4).unwrap();
    let mut gs = GaussSeidel::new();
    step(&mut body, &StepParams::default(), &mut gs, None).unwrap();
    let good = body.particles().x().to_vec();
    body.particles_mut().force_mut()[5].y = f32::INFINITY;
    let err = step(&mut body, &StepParams::default(), &mut gs, None).unwrap_err();
    assert!(
        matches!(err, WobbleError::BadState { index: 5, .. }),
        "{err}"
    );
    assert_eq!(body.particles().x(), good);
    assert!(body
        .particles_mut()
        .add_force(5, Vec3::new(f32::NAN, 0.0, 0.0))
        .is_err());
}
