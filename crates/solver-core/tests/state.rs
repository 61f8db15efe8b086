//! Saving and restoring a body's state: a body stepped on from a restored state gives the same
//! bits as the one it was taken from (same body or a fresh copy of the scene, gs and colored,
//! in memory and, with the `serde` feature, through JSON); states that do not fit are refused.

use solver_core::figures::state_hash;
use solver_core::glam::Vec3;
use solver_core::interaction::picking::{grab, move_grab, GrabId, Hit};
use solver_core::{step, Body, BodyState, Solver, StepParams, WobbleError};
use sparse::{SolverKind, SolverOptions};

/// A hanging cloth with everything a state holds in use: a moving attachment, a grab whose
/// target moves, and a force pending between steps.
fn scene() -> (Body, GrabId) {
    let mut body = scenes::cloth(12).unwrap();
    body.attach(11 * 12 + 6).unwrap();
    let corners = body.topology().triangles[40];
    let barycentric = [0.2, 0.3, 0.5];
    let point = (0..3)
        .map(|k| body.particles().position(corners[k] as usize) * barycentric[k])
        .sum();
    let hit = Hit {
        triangle: 40,
        corners,
        barycentric,
        distance: 1.0,
        point,
    };
    let id = grab(&mut body, &hit, 1e-3).unwrap();
    (body, id)
}

/// Steps `count` frames from frame `from`, moving the pin every frame and the grab every 7th,
/// and leaving a force pending after each step (so a saved state has one).
fn drive(body: &mut Body, solver: &mut dyn Solver, id: GrabId, from: usize, count: usize) {
    // Two substeps, so that the pin moves from its saved start (one substep jumps to its target).
    let params = StepParams {
        substeps: 2,
        iterations: 4,
        ..StepParams::default()
    };
    for f in from..from + count {
        let t = f as f32 / 60.0;
        body.move_attachment(0, Vec3::new(0.5 + 0.2 * t.sin(), 1.0, 1.0))
            .unwrap();
        // Not every frame, so that frame 100 starts from the saved target.
        if f % 7 == 0 {
            move_grab(body, id, Vec3::new(0.3, 0.6 + 0.1 * (2.0 * t).cos(), 0.4)).unwrap();
        }
        step(body, &params, solver, None).unwrap();
        body.particles_mut()
            .add_force(17, Vec3::new(0.0, 0.0, 0.02 * (3.0 * t).cos()))
            .unwrap();
    }
}

fn hash(body: &Body) -> (u64, u64, u64) {
    let p = &body.particles();
    (
        state_hash(&p.x()),
        state_hash(&p.v()),
        state_hash(&p.force()),
    )
}

fn solver(kind: SolverKind) -> Box<dyn Solver> {
    kind.build(&SolverOptions::default()).unwrap()
}

/// Steps 100, saves, steps 100 more (hash H); then from the saved state, `resume` must reach H.
fn continues_bit_for_bit(name: SolverKind, via: impl Fn(&BodyState) -> BodyState) {
    let (mut body, id) = scene();
    let mut s = solver(name);
    drive(&mut body, s.as_mut(), id, 0, 100);
    let saved = via(&body.state());
    drive(&mut body, s.as_mut(), id, 100, 100);
    let h = hash(&body);
    assert_ne!(h, hash(&scene().0), "the body moved");

    // Rewind the same body; its solver keeps its structures.
    body.restore(&saved).unwrap();
    drive(&mut body, s.as_mut(), id, 100, 100);
    assert_eq!(hash(&body), h, "{name}: rewound in place");

    // A fresh copy of the scene (another topology id) with a fresh solver, and with the
    // solver prepared for the first body, which must prepare again.
    for fresh_solver in [true, false] {
        let (mut copy, copy_id) = scene();
        assert_ne!(copy.topology_id(), body.topology_id());
        copy.restore(&saved).unwrap();
        // Everything comes back, the previous positions too (which the next step overwrites).
        let back = BodyState {
            topology_id: saved.topology_id,
            ..copy.state()
        };
        assert_eq!(back, saved);
        let mut other = solver(name);
        let run: &mut dyn Solver = if fresh_solver {
            other.as_mut()
        } else {
            s.as_mut()
        };
        drive(&mut copy, run, copy_id, 100, 100);
        assert_eq!(
            hash(&copy),
            h,
            "{name}: fresh copy, fresh solver {fresh_solver}"
        );
    }
}

#[test]
fn a_restored_body_continues_bit_for_bit_with_gs() {
    continues_bit_for_bit(SolverKind::Gs, |s| s.clone());
}

#[test]
fn a_restored_body_continues_bit_for_bit_with_colored() {
    continues_bit_for_bit(SolverKind::Colored(Default::default()), |s| s.clone());
}

#[cfg(feature = "serde")]
#[test]
fn a_state_through_json_continues_bit_for_bit() {
    let through_json = |s: &BodyState| {
        let text = serde_json::to_string(s).unwrap();
        let back: BodyState = serde_json::from_str(&text).unwrap();
        assert_eq!(&back, s, "JSON keeps every bit");
        back
    };
    continues_bit_for_bit(SolverKind::Gs, through_json);
    continues_bit_for_bit(SolverKind::Colored(Default::default()), through_json);
}

/// `restore` fails and leaves the body as it was; returns the error.
fn refused(body: &mut Body, state: &BodyState) -> WobbleError {
    let before = (hash(body), body.attachments().to_vec());
    let err = body.restore(state).unwrap_err();
    assert_eq!((hash(body), body.attachments().to_vec()), before, "{err}");
    err
}

/// A change that breaks one value of a state, with the field and index the error should name.
type Tamper = (fn(&mut BodyState), &'static str, usize);

#[test]
fn states_that_do_not_fit_are_refused() {
    let (mut body, id) = scene();
    drive(&mut body, &mut solver_core::GaussSeidel::new(), id, 0, 10);
    let good = body.state();

    // Another particle count; the same particles without the grab (another topology); a
    // truncated array (a state assembled by hand or read from a damaged file).
    let mismatch = |body: &mut Body, state: &BodyState| match refused(body, state) {
        WobbleError::StateMismatch {
            what,
            found,
            expected,
        } => (what, found, expected),
        other => panic!("unexpected error: {other}"),
    };
    let (what, found, expected) = mismatch(&mut scenes::cloth(13).unwrap(), &good);
    assert_eq!((what, found, expected), ("particle count", 144, 169));
    let (what, ..) = mismatch(&mut scenes::cloth(12).unwrap(), &good);
    assert!(what.starts_with("topology fingerprint"), "{what}");
    let mut short = good.clone();
    short.v.pop();
    assert_eq!(mismatch(&mut body, &short), ("state velocity", 143, 144));

    // Non-finite values anywhere, named with what and where, and a negative mass.
    let tampered: [Tamper; 4] = [
        (|s| s.v[17].y = f32::NAN, "state velocity", 17),
        (
            |s| s.x_prev[3].z = f32::INFINITY,
            "state previous position",
            3,
        ),
        (|s| s.drag_targets[0].x = f32::NAN, "state drag target", 0),
        (
            |s| s.attachments[0].to.y = f32::NAN,
            "state attachment target",
            0,
        ),
    ];
    for (tamper, name, at) in tampered {
        let mut bad = good.clone();
        tamper(&mut bad);
        let err = refused(&mut body, &bad);
        assert!(
            matches!(err, WobbleError::NonFinite { what, index, .. } if what == name && index == at),
            "{name}: {err}"
        );
    }
    let mut mass = good.clone();
    mass.mass[5] = -1.0;
    let err = refused(&mut body, &mass);
    assert!(
        matches!(err, WobbleError::BadMass { index: 5, .. }),
        "{err}"
    );
    // The good state still restores.
    body.restore(&good).unwrap();
    assert_eq!(body.state(), good);
}
