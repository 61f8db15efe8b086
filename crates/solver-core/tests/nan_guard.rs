//! The NaN guard: a step that produces a non-finite value names the first bad particle and the
//! stage (or constraint kind) that produced it, and leaves the body at its last good state.

use solver_core::collide::{Collider, Shape};
use solver_core::constraints::{ConstraintKind, MAX_ARITY};
use solver_core::glam::Vec3;
use solver_core::step::diagnose::replay_checked;
use solver_core::{figures, step, Body, GaussSeidel, Packed4, StepParams, WobbleError};

/// Steps once, then returns the body with its state after that good step.
fn settled_cloth() -> (Body, GaussSeidel) {
    let mut body = scenes::cloth(4).unwrap();
    let mut gs = GaussSeidel::new();
    step(&mut body, &StepParams::default(), &mut gs, None).unwrap();
    (body, gs)
}

fn diverged(err: WobbleError) -> (usize, String) {
    match err {
        WobbleError::Diverged {
            particle, stage, ..
        } => (particle, stage),
        other => panic!("expected Diverged, got {other}"),
    }
}

#[test]
fn a_non_finite_force_is_refused_naming_its_particle_and_is_cleared() {
    let (mut body, mut gs) = settled_cloth();
    let (x, v) = (body.particles().x().to_vec(), body.particles().v().to_vec());
    body.particles_mut().force_mut()[7].z = f32::NAN;
    body.particles_mut().force_mut()[2].x = 1.0;
    let err = step(&mut body, &StepParams::default(), &mut gs, None).unwrap_err();
    let text = err.to_string();
    let WobbleError::BadState {
        what, index, field, ..
    } = err
    else {
        panic!("expected BadState, got {text}")
    };
    assert_eq!(
        (what, index, field),
        ("particle", 7, "external force z"),
        "{text}"
    );
    assert_eq!(
        body.particles().x(),
        x,
        "positions as they were: nothing was stepped"
    );
    assert_eq!(body.particles().x_prev(), x);
    assert_eq!(body.particles().v(), v, "velocities as they were");
    assert!(body
        .particles()
        .force()
        .iter()
        .all(|f| *f == Packed4::default()));
    // The body steps on normally afterwards.
    step(&mut body, &StepParams::default(), &mut gs, None).unwrap();
    assert!(figures::all_finite(&body));
}

#[test]
fn the_replay_of_a_non_finite_body_names_the_bad_position_not_a_force_it_spreads_to() {
    // Wind spreads a position's NaN to the forces of every particle sharing a triangle with
    // it, lower indices among them; the replay checks the state before any force.
    let (mut body, _) = settled_cloth();
    body.set_wind(Some(
        solver_core::wind::Wind::new(Vec3::X, 1.2, 1.0, 0.0).unwrap(),
    ))
    .unwrap();
    body.particles_mut().x_mut()[10].y = f32::NAN;
    let finding = replay_checked(&mut body, &StepParams::default(), &mut GaussSeidel::new())
        .expect("a finding");
    assert_eq!(finding.particle, 10, "{finding:?}");
    assert!(
        finding
            .stage
            .starts_with("the body's state at the start of the step"),
        "{finding:?}"
    );
}

#[test]
fn an_overflowing_finite_force_is_caught_at_prediction() {
    let (mut body, mut gs) = settled_cloth();
    let x = body.particles().x().to_vec();
    body.particles_mut().force_mut()[9].y = 3e38;
    let (particle, stage) =
        diverged(step(&mut body, &StepParams::default(), &mut gs, None).unwrap_err());
    assert_eq!(particle, 9);
    assert!(stage.starts_with("prediction"), "{stage}");
    assert_eq!(body.particles().x(), x);
}

/// A constraint kind whose constraint 1 evaluates to NaN: a stand-in for a buggy kind.
#[derive(Clone, Debug)]
struct Poison {
    pairs: Vec<[u32; 2]>,
}

impl ConstraintKind for Poison {
    fn name(&self) -> &'static str {
        "poison"
    }
    fn len(&self) -> usize {
        self.pairs.len()
    }
    fn particles(&self, c: usize) -> &[u32] {
        &self.pairs[c]
    }
    fn compliance(&self, _c: usize) -> f32 {
        0.0
    }
    fn evaluate(&self, c: usize, _x: &[Packed4], grad: &mut [Vec3; MAX_ARITY]) -> f32 {
        grad[0] = Vec3::X;
        grad[1] = -Vec3::X;
        if c == 1 {
            f32::NAN
        } else {
            0.0
        }
    }
    fn scale(&self) -> f32 {
        1.0
    }
    fn particle_indices_mut(&mut self) -> &mut [u32] {
        self.pairs.as_flattened_mut()
    }
}

#[test]
fn a_constraint_kind_that_produces_nan_is_named() {
    let (mut body, mut gs) = settled_cloth();
    body.constraints_mut().push_kind(Box::new(Poison {
        pairs: vec![[2, 3], [5, 6], [9, 10]],
    }));
    body.topology_changed();
    let x = body.particles().x().to_vec();
    let err = step(&mut body, &StepParams::default(), &mut gs, None).unwrap_err();
    let text = err.to_string();
    let (particle, stage) = diverged(err);
    assert_eq!(particle, 5, "{text}");
    assert!(
        stage.starts_with("constraint kind 'poison', constraint 1 (particles [5, 6]), in solver 'gs' iteration 0, substep 0"),
        "{text}"
    );
    assert_eq!(body.particles().x(), x);
}

#[test]
fn the_checked_replay_of_a_healthy_step_is_the_step_bit_for_bit() {
    // Every stage active: substeps, damping, a force, an attachment that moves, a collider the
    // cloth touches (contacts, friction, restitution).
    let make = || {
        let mut body = scenes::cloth(6).unwrap();
        body.add_collider(Collider {
            shape: Shape::Plane {
                normal: Vec3::Y,
                offset: 0.999,
            },
            friction: 0.5,
            restitution: 0.5,
            motion: None,
        })
        .unwrap();
        let a = body.attach(20).unwrap();
        body.move_attachment(a, Vec3::new(0.3, 1.2, 0.5)).unwrap();
        body.particles_mut().force_mut()[11] = Packed4::new(Vec3::new(0.5, -2.0, 0.1), 0.0);
        body
    };
    let params = StepParams {
        substeps: 3,
        iterations: 5,
        damping: 0.3,
        ..Default::default()
    };
    let mut stepped = make();
    step(&mut stepped, &params, &mut GaussSeidel::new(), None).unwrap();
    let mut replayed = make();
    assert_eq!(
        replay_checked(&mut replayed, &params, &mut GaussSeidel::new()),
        None
    );
    assert_eq!(
        figures::state_hash(&stepped.particles().x()),
        figures::state_hash(&replayed.particles().x())
    );
    assert_eq!(stepped.particles().v(), replayed.particles().v());
    assert!(
        !stepped.contacts().is_empty(),
        "the collider must be touched for this test to cover contacts"
    );
}

#[test]
fn a_finite_speed_above_the_bound_is_a_divergence_and_the_body_is_restored() {
    // 1e9 N on a particle of 1/16 kg for 1/60 s: 2.7e8 m/s after the prediction, finite but
    // above `MAX_SPEED` (and still 1.7e7 m/s if the constraints shared it with the whole 1 kg:
    // the pins are released, so that they cannot take the momentum).
    let (mut body, mut gs) = settled_cloth();
    for i in [0, 3] {
        body.particles_mut().set_mass(i, 1.0 / 16.0).unwrap();
    }
    let (x, v) = (body.particles().x().to_vec(), body.particles().v().to_vec());
    body.particles_mut().force_mut()[5].x = 1e9;
    let err = step(&mut body, &StepParams::default(), &mut gs, None).unwrap_err();
    let text = err.to_string();
    let WobbleError::Diverged {
        particle,
        stage,
        speed,
    } = err
    else {
        panic!("expected Diverged, got {text}")
    };
    assert_eq!(particle, 5, "{text}");
    assert!(stage.starts_with("prediction"), "{text}");
    let speed = speed.expect("a speed, not a non-finite value");
    assert!(
        speed > solver_core::step::MAX_SPEED && speed.is_finite(),
        "{text}"
    );
    assert!(text.contains("above the speed bound of 1e6 m/s"), "{text}");
    assert_eq!(
        body.particles().x(),
        x,
        "positions back at the last good state"
    );
    assert_eq!(
        body.particles().v(),
        v,
        "velocities back at the last good state"
    );
    step(&mut body, &StepParams::default(), &mut gs, None).unwrap();
}
