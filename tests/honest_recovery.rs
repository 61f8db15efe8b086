//! Honest recovery: a bad value a game writes into a body between steps (a position, a pinned
//! particle's position, a velocity, an inverse mass, an external force, a drag target, an
//! attachment target) is refused by the very next step with `WobbleError::BadState` naming
//! the particle (or constraint) and the field; the body is finite afterwards, every value the
//! game did not spoil is as it was, and the next step runs. For the reference Gauss-Seidel,
//! the colored and the Jacobi solver.

mod common;

use common::hit_on;
use solver_core::constraints::Drag;
use solver_core::interaction::picking::grab;
use solver_core::{figures, step, Body, StepParams, WobbleError};
use sparse::{ColoredOptions, JacobiOptions, SolverKind, SolverOptions};

const SOLVERS: [SolverKind; 3] = [
    SolverKind::Gs,
    SolverKind::Colored(ColoredOptions::DEFAULT),
    SolverKind::Jacobi(JacobiOptions::DEFAULT),
];

/// The 8 x 8 cloth with a grab on triangle 20 and an attachment (a moving pin) on particle
/// 60, stepped 5 times.
fn game_cloth(solver: SolverKind) -> (Body, Box<dyn solver_core::Solver>) {
    let mut body = scenes::cloth(8).unwrap();
    let hit = hit_on(&body, 20, [0.2, 0.3, 0.5]);
    grab(&mut body, &hit, 1e-4).unwrap();
    let a = body.attach(60).unwrap();
    body.move_attachment(a, solver_core::glam::Vec3::new(0.5, 1.1, 1.0))
        .unwrap();
    let mut solver = solver.build(&SolverOptions::default()).unwrap();
    for _ in 0..5 {
        step(&mut body, &StepParams::default(), solver.as_mut(), None).unwrap();
    }
    (body, solver)
}

fn drag(body: &mut Body) -> &mut Drag {
    body.constraints_mut()
        .extra
        .iter_mut()
        .find_map(|k| k.as_any_mut().downcast_mut::<Drag>())
        .expect("a grab")
}

/// Every value of the body a step reads is finite.
fn finite(body: &mut Body) -> bool {
    let p = &body.particles();
    let particles = figures::all_finite(body)
        && p.x().iter().all(|x| x.w >= 0.0)
        && p.force().iter().all(|f| f.is_finite());
    let pins = body
        .attachments()
        .iter()
        .all(|a| a.from.is_finite() && a.to.is_finite());
    particles && pins && drag(body).targets.iter().all(|t| t.is_finite())
}

/// One bad write: what it spoils, and what the error must name.
struct Case {
    name: &'static str,
    spoil: fn(&mut Body),
    what: &'static str,
    index: usize,
    field: &'static str,
}

// An attachment's target is set only through `Body::move_attachment`, which refuses a
// non-finite one (`tests/public_mutations.rs`), so it has no case here.
const CASES: [Case; 7] = [
    Case {
        name: "position",
        spoil: |b| b.particles_mut().x_mut()[40].y = f32::NAN,
        what: "particle",
        index: 40,
        field: "position y",
    },
    Case {
        // Particle 0 is pinned (inverse mass 0): a pin.
        name: "pin position",
        spoil: |b| b.particles_mut().x_mut()[0].x = f32::INFINITY,
        what: "particle",
        index: 0,
        field: "position x",
    },
    Case {
        name: "inverse mass",
        spoil: |b| b.particles_mut().x_mut()[33].w = -1.0,
        what: "particle",
        index: 33,
        field: "inverse mass (position w)",
    },
    Case {
        name: "velocity",
        spoil: |b| b.particles_mut().v_mut()[17].z = f32::NAN,
        what: "particle",
        index: 17,
        field: "velocity z",
    },
    Case {
        name: "force",
        spoil: |b| b.particles_mut().force_mut()[50].x = f32::NEG_INFINITY,
        what: "particle",
        index: 50,
        field: "external force x",
    },
    Case {
        name: "drag target",
        spoil: |b| drag(b).targets[0].z = f32::NAN,
        what: "drag constraint",
        index: 0,
        field: "target z",
    },
    Case {
        // A position and a drag target both spoilt: the particle is named, both repaired.
        name: "position and drag target",
        spoil: |b| {
            b.particles_mut().x_mut()[9].z = f32::NAN;
            drag(b).targets[0].x = f32::NAN;
        },
        what: "particle",
        index: 9,
        field: "position z",
    },
];

#[test]
fn a_bad_value_written_between_steps_is_named_on_the_next_step_and_the_body_stays_finite() {
    for solver in SOLVERS {
        for case in &CASES {
            let (mut body, mut s) = game_cloth(solver);
            let label = format!("{solver}, {}", case.name);
            let (x, v) = (body.particles().x().to_vec(), body.particles().v().to_vec());
            let targets = drag(&mut body).targets.clone();
            (case.spoil)(&mut body);
            let params = StepParams::default();
            let err = step(&mut body, &params, s.as_mut(), None).unwrap_err();
            let text = err.to_string();
            let WobbleError::BadState {
                what, index, field, ..
            } = err
            else {
                panic!("{label}: expected BadState, got {text}")
            };
            assert_eq!(
                (what, index, field),
                (case.what, case.index, case.field),
                "{label}: {text}"
            );
            assert!(text.contains("nothing was stepped"), "{label}: {text}");
            assert!(
                finite(&mut body),
                "{label}: the body is not finite after: {text}"
            );
            // Nothing was stepped: every particle the write did not touch is where it was.
            let spoilt = [40, 0, 33, 17, 9];
            for i in 0..body.len() {
                if !spoilt.contains(&i) {
                    assert_eq!(body.particles().x()[i], x[i], "{label}: particle {i} moved");
                    assert_eq!(
                        body.particles().v()[i],
                        v[i],
                        "{label}: particle {i} velocity"
                    );
                }
            }
            if case.what != "drag constraint" && case.index != 9 {
                assert_eq!(
                    drag(&mut body).targets,
                    targets,
                    "{label}: targets untouched"
                );
            }
            // The repaired body steps on, finite.
            for k in 0..3 {
                step(&mut body, &params, s.as_mut(), None)
                    .unwrap_or_else(|e| panic!("{label}: step {k} after the refusal: {e}"));
            }
            assert!(finite(&mut body), "{label}: not finite after stepping on");
        }
    }
}

#[test]
fn a_repaired_position_is_the_last_finite_one_and_an_untouched_component_is_kept() {
    for solver in SOLVERS {
        let (mut body, mut s) = game_cloth(solver);
        let (x, x_prev) = (body.particles().x()[40], body.particles().x_prev()[40]);
        body.particles_mut().x_mut()[40].y = f32::NAN;
        body.particles_mut().x_mut()[40].x += 0.01;
        step(&mut body, &StepParams::default(), s.as_mut(), None).unwrap_err();
        let got = body.particles().x()[40];
        assert_eq!(got.x, x.x + 0.01, "{solver}: the finite write is kept");
        assert_eq!(got.y, x_prev.y, "{solver}: the NaN component is x_prev's");
        assert_eq!((got.z, got.w), (x.z, x.w), "{solver}");
        assert_eq!(body.particles().x_prev()[40], got, "{solver}");
    }
}

#[test]
fn a_divergence_after_finite_input_restores_the_finite_start() {
    // A finite force too large for f32 once integrated: the input check passes, the step
    // diverges, and the body is back at the (finite) state it started from.
    for solver in SOLVERS {
        let (mut body, mut s) = game_cloth(solver);
        let (x, v) = (body.particles().x().to_vec(), body.particles().v().to_vec());
        body.particles_mut().force_mut()[45].y = 3e38;
        let err = step(&mut body, &StepParams::default(), s.as_mut(), None).unwrap_err();
        assert!(
            matches!(err, WobbleError::Diverged { .. }),
            "{solver}: {err}"
        );
        assert!(finite(&mut body), "{solver}: {err}");
        assert_eq!(body.particles().x(), x, "{solver}");
        assert_eq!(body.particles().v(), v, "{solver}");
        step(&mut body, &StepParams::default(), s.as_mut(), None).unwrap();
    }
}
