//! Tearing: a cloth pulled apart past its threshold splits into two pieces whose surface
//! opens.

use solver_core::effects::tearing::{connected_components, tear, Tearing};
use solver_core::glam::Vec3;
use solver_core::{figures, step, GaussSeidel, StepParams};

#[test]
fn a_cloth_pulled_apart_tears_into_two_pieces() {
    let n = 10;
    let mut body = scenes::cloth(n).unwrap();
    // Hold the left and right columns; move the right one away.
    let mut right = Vec::new();
    for j in 0..n {
        body.attach((j * n) as u32).unwrap();
        right.push(body.attach((j * n + n - 1) as u32).unwrap());
    }
    let mass_before: f32 = body.particles().mass().iter().sum();
    let rule = Tearing {
        threshold: 0.3,
        max_per_step: 2,
    };
    let mut gs = GaussSeidel::new();
    let params = StepParams {
        gravity: Vec3::ZERO,
        ..Default::default()
    };
    let (mut broken, mut added) = (0, 0);
    for s in 0..240 {
        let pull = 0.01 * (s + 1) as f32;
        for (j, &a) in right.iter().enumerate() {
            let p = Vec3::new(1.0 + pull, 1.0, j as f32 / (n - 1) as f32);
            body.move_attachment(a, p).unwrap();
        }
        step(&mut body, &params, &mut gs, None).unwrap();
        let r = tear(&mut body, &rule).unwrap();
        broken += r.broken;
        added += r.duplicated;
        if connected_components(&body) > 1 {
            break;
        }
    }
    eprintln!(
        "broken {broken}, particles added {added}, pieces {}",
        connected_components(&body)
    );
    assert_eq!(connected_components(&body), 2);
    assert!(
        broken >= n - 1,
        "a cut across the sheet breaks at least n - 1 edges: {broken}"
    );
    assert!(added > 0, "particles were duplicated to open the surface");
    assert_eq!(body.len(), n * n + added);
    let mass_after: f32 = body.particles().mass().iter().sum();
    assert!(
        (mass_after - mass_before).abs() < 1e-5,
        "mass kept: {mass_before} -> {mass_after}"
    );
    // Every triangle still has three distinct, in-range corners and the body validates.
    body.validate().unwrap();
    // The torn body keeps stepping (solvers re-prepare for the new topology).
    for _ in 0..30 {
        step(&mut body, &params, &mut gs, None).unwrap();
    }
    assert!(figures::all_finite(&body));
}

#[test]
fn below_the_threshold_nothing_tears_and_bad_rules_are_errors() {
    let mut body = scenes::cloth(6).unwrap();
    let id = body.topology_id();
    let r = tear(
        &mut body,
        &Tearing {
            threshold: 0.1,
            max_per_step: 5,
        },
    )
    .unwrap();
    assert_eq!(r.broken, 0);
    assert_eq!(body.topology_id(), id);
    assert!(tear(
        &mut body,
        &Tearing {
            threshold: 0.0,
            max_per_step: 5
        }
    )
    .is_err());
    assert!(tear(
        &mut body,
        &Tearing {
            threshold: f32::NAN,
            max_per_step: 5
        }
    )
    .is_err());
    assert!(tear(
        &mut body,
        &Tearing {
            threshold: 0.1,
            max_per_step: 0
        }
    )
    .is_err());
    let mut cube = scenes::cube(1).unwrap();
    assert!(tear(
        &mut cube,
        &Tearing {
            threshold: 0.1,
            max_per_step: 1
        }
    )
    .is_err());
}

#[test]
fn a_slit_from_the_border_duplicates_only_the_border_particle() {
    // Cloth 3x3: pulling the centre (4) away stretches edge (3, 4) most. Cutting it opens a
    // slit from the border vertex 3 inward: 3's triangles fall into two fans (3 is copied),
    // while the centre's triangles stay connected around it (no copy).
    let mut body = scenes::cloth(3).unwrap();
    body.particles_mut().x_mut()[4].x += 0.5;
    let r = tear(
        &mut body,
        &Tearing {
            threshold: 0.5,
            max_per_step: 1,
        },
    )
    .unwrap();
    assert_eq!(r.broken, 1);
    assert!(!body.constraints().distance.pairs.contains(&[3, 4]));
    assert_eq!(r.duplicated, 1);
    assert_eq!(body.len(), 10);
    assert_eq!(body.particles().position(9), body.particles().position(3));
    assert!((body.particles().mass()[3] + body.particles().mass()[9] - 1.0 / 9.0).abs() < 1e-7);
    let uses = |v: u32| {
        body.topology()
            .triangles
            .iter()
            .filter(|t| t.contains(&v))
            .count()
    };
    assert_eq!(
        uses(3) + uses(9),
        3,
        "vertex 3's three triangles are shared between its copies"
    );
    assert!(uses(3) > 0 && uses(9) > 0);
    assert_eq!(
        connected_components(&body),
        1,
        "a slit does not cut the sheet in two"
    );
}
