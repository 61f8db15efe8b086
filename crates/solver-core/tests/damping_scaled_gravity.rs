//! Regression: the prediction damped gravity's own increment, `v ← (v + h g)(1 - damping h)`,
//! so a damped body at rest sagged by a factor `(1 - damping h)` too little. It must damp only
//! the velocity carried in: `v ← v (1 - damping h) + h g`.

use solver_core::body::Topology;
use solver_core::glam::Vec3;
use solver_core::{step, Body, Constraints, GaussSeidel, Particles, StepParams};

fn particle(v0: Vec3) -> Body {
    let mut body = Body::new(
        Particles::new(&[Vec3::new(0.0, 1.0, 0.0)], &[1.0]).unwrap(),
        Constraints::default(),
        Topology::default(),
    )
    .unwrap();
    body.particles_mut().v_mut()[0].set_xyz(v0);
    body
}

#[test]
fn damping_multiplied_gravity_increment_a_particle_at_rest_gains_exactly_h_g() {
    let params = StepParams {
        damping: 5.0,
        ..Default::default()
    };
    let h = params.dt;
    let mut body = particle(Vec3::ZERO);
    step(&mut body, &params, &mut GaussSeidel::default(), None).unwrap();
    let v = body.particles().velocity(0);
    // The bug gave h g (1 - 5 h) = 0.917 h g; what remains is the rounding of (x - x0) / h.
    let err = (v - params.gravity * h).length() / (params.gravity * h).length();
    assert!(
        err < 1e-5,
        "first-step velocity {v} from rest, relative error {err}"
    );

    // A moving particle keeps the damped part of its velocity plus the whole increment.
    let v0 = Vec3::new(2.0, 0.0, 0.0);
    let mut body = particle(v0);
    step(&mut body, &params, &mut GaussSeidel::default(), None).unwrap();
    let expected = v0 * (1.0 - params.damping * h) + params.gravity * h;
    assert!((body.particles().velocity(0) - expected).length() < 1e-6);
}
