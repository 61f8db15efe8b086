//! An explosion is not Ok: plain Jacobi (no averaging, ω = 1) on the free 16 x 16 cloth with
//! random velocities diverges (before the guard, `step` returned Ok with speeds of 1e14 m/s).
//! Every step must either return Ok with every particle finite and no faster than
//! `solver_core::step::MAX_SPEED`, or return `WobbleError::Diverged` naming a solver iteration
//! and leave the body exactly at its state before the step.

mod common;

use common::{free_cloth, Noise};
use solver_core::glam::Vec3;
use solver_core::step::MAX_SPEED;
use solver_core::{step, StepParams, WobbleError};
use sparse::{Averaging, JacobiOptions, SolverKind, SolverOptions};

#[test]
fn plain_jacobi_on_the_free_cloth_converges_or_returns_diverged() {
    let mut body = free_cloth(16).unwrap();
    let mut noise = Noise::new(16);
    for v in body.particles_mut().v_mut().iter_mut() {
        v.set_xyz(noise.next_vec3());
    }
    let plain = SolverKind::Jacobi(JacobiOptions {
        average: Averaging::Off,
        omega: 1.0,
    });
    let mut solver = plain.build(&SolverOptions::default()).unwrap();
    let params = StepParams {
        gravity: Vec3::ZERO,
        ..Default::default()
    };
    let mut fastest = 0.0f32;
    for s in 0..100 {
        let (x, v) = (body.particles().x().to_vec(), body.particles().v().to_vec());
        match step(&mut body, &params, solver.as_mut(), None) {
            Ok(_) => {
                for (x, v) in body.particles().x().iter().zip(body.particles().v()) {
                    assert!(
                        x.is_finite() && v.is_finite(),
                        "step {s}: Ok but non-finite"
                    );
                    fastest = fastest.max(v.xyz().length());
                }
                assert!(fastest <= MAX_SPEED, "step {s}: Ok at {fastest} m/s");
            }
            Err(e @ WobbleError::Diverged { .. }) => {
                println!("step {s}: {e} (fastest before: {fastest} m/s)");
                assert!(e.to_string().contains("solver 'jacobi' iteration"), "{e}");
                assert_eq!(body.particles().x(), x, "positions restored");
                assert_eq!(body.particles().v(), v, "velocities restored");
                return;
            }
            Err(e) => panic!("step {s}: {e}"),
        }
    }
    println!("plain jacobi converged: fastest {fastest} m/s over 100 steps");
}
