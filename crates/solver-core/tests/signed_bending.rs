//! Signed dihedral bending (issue #34, "fidelity", item 1): a hinge of two triangles, three
//! corners pinned, the fourth free, held at a rest angle by a dihedral constraint of
//! compliance 0, pushed and released, must come back to its own rest state, never to its
//! mirror image. Jolt's settings: dt = 1/60, 5 substeps, one iteration. Every solver path that
//! runs bending is checked: `gs` (the generic path, `ConstraintKind::evaluate`) and `colored`
//! with each bend kernel the CPU has (the scalar twin and the vector kernels).

use solver_core::build::body_from_trimesh;
use solver_core::constraints::bending::{
    dihedral_angle_and_grad, dihedral_deviation, signed_rest_angle, DIHEDRAL_MAX_STEP,
};
use solver_core::constraints::{ConstraintKind, DihedralBending, IsometricBending, MAX_ARITY};
use solver_core::glam::Vec3;
use solver_core::mesh::TriMesh;
use solver_core::{step, Body, Packed4, StepParams};
use sparse::colored::simd::Kernel;
use sparse::{ColoredOptions, SolverKind, SolverOptions};
use std::f32::consts::{FRAC_PI_2, FRAC_PI_4, PI};

/// Distance of the free corner from the hinge line.
const WING: f32 = 0.5;

/// The free corner x3 at signed dihedral angle `theta`: the hinge is x0 = 0 → x1 = (1, 0, 0),
/// the pinned wing x2 = (0.5, 0.5, 0), so `nA = +z`, and x3 turns about the hinge from
/// (0.4, -WING, 0) (flat, θ = 0) to (0.4, +WING, 0) (folded onto x2's triangle, θ = ±π; its x
/// is off x2's so that the folded corners do not coincide).
fn corner(theta: f32) -> Vec3 {
    Vec3::new(0.4, -WING * theta.cos(), -WING * theta.sin())
}

fn hinge_positions(theta: f32) -> [Vec3; 4] {
    [Vec3::ZERO, Vec3::X, Vec3::new(0.5, 0.5, 0.0), corner(theta)]
}

/// The hinge at rest angle `rest`: triangles (0, 1, 2) and (1, 0, 3), distance constraints on
/// their edges and one dihedral (or isometric) constraint, all of compliance 0; x0, x1, x2
/// pinned.
fn hinge(rest: f32, isometric: bool) -> Body {
    let pos = hinge_positions(rest).to_vec();
    let mesh = TriMesh::new(pos, vec![[0, 1, 2], [1, 0, 3]]).unwrap();
    let mut body = body_from_trimesh(&mesh, 0.4, 0.0).unwrap();
    for p in 0..3 {
        body.particles_mut().pin(p).unwrap();
    }
    let x = &body.particles().x();
    let kind: Box<dyn ConstraintKind> = if isometric {
        Box::new(IsometricBending::from_triangles(x, &body.topology().triangles, 0.0).unwrap())
    } else {
        Box::new(DihedralBending::from_triangles(x, &body.topology().triangles, 0.0).unwrap())
    };
    assert_eq!(kind.len(), 1);
    assert_eq!(kind.particles(0), &[0, 1, 2, 3]);
    body.constraints_mut().push_kind(kind);
    body.topology_changed();
    body
}

fn theta_of(body: &Body) -> f32 {
    theta_of_positions(&body.particles().x())
}

/// A push: where the free corner is put (at rest distance from the hinge or off it) and the
/// velocity it is given, as a function of the rest angle.
struct Push {
    name: &'static str,
    apply: fn(rest: f32) -> (Vec3, Vec3),
}

/// The tangent of the free corner's circle at angle `theta`, towards growing θ.
fn tangent(theta: f32) -> Vec3 {
    Vec3::new(0.0, WING * theta.sin(), -WING * theta.cos())
}

/// Perturbations of every kind: turned either way by small and large angles (short of the
/// half turn, where the way back is ambiguous), pushed flat and on towards the mirror image,
/// thrown with a velocity either way, and moved off the circle (stretching the wing).
const PUSHES: [Push; 9] = [
    Push {
        name: "turned +0.3 rad",
        apply: |r| (corner(r + 0.3), Vec3::ZERO),
    },
    Push {
        name: "turned -0.3 rad",
        apply: |r| (corner(r - 0.3), Vec3::ZERO),
    },
    Push {
        name: "turned +2 rad",
        apply: |r| (corner(r + 2.0), Vec3::ZERO),
    },
    Push {
        name: "turned -2 rad",
        apply: |r| (corner(r - 2.0), Vec3::ZERO),
    },
    Push {
        // Flat (for the flat rest state: a quarter turn down), still moving towards the
        // mirror image at 3 m/s: the reported failure.
        name: "pushed flat, moving on towards the mirror",
        apply: |r| {
            let at = if r == 0.0 { -FRAC_PI_2 } else { 0.0 };
            let towards_mirror = if r > 0.0 { -1.0 } else { 1.0 };
            (corner(at), tangent(at) * (6.0 * towards_mirror))
        },
    },
    Push {
        name: "thrown at 4 m/s towards growing θ",
        apply: |r| (corner(r), tangent(r) * 8.0),
    },
    Push {
        name: "thrown at 4 m/s towards falling θ",
        apply: |r| (corner(r), tangent(r) * -8.0),
    },
    Push {
        name: "pulled 0.1 m off the hinge and turned",
        apply: |r| (corner(r + 0.5) * Vec3::new(1.0, 1.2, 1.2), Vec3::ZERO),
    },
    Push {
        name: "moved 0.2 m along the hinge, out of its plane",
        apply: |r| (corner(r - 0.7) + Vec3::new(0.2, 0.05, 0.05), Vec3::ZERO),
    },
];

/// The solver paths that run bending here: `gs` (generic) and `colored` with each kernel.
fn solvers() -> Vec<(String, Box<dyn solver_core::Solver>)> {
    let mut out: Vec<(String, Box<dyn solver_core::Solver>)> = vec![(
        "gs".into(),
        SolverKind::Gs.build(&SolverOptions::default()).unwrap(),
    )];
    for kernel in Kernel::CONCRETE {
        if !kernel.available() {
            eprintln!("colored/{}: not on this CPU, skipped", kernel.name());
            continue;
        }
        let opts = SolverOptions {
            kernel,
            ..Default::default()
        };
        out.push((
            format!("colored/{}", kernel.name()),
            SolverKind::Colored(ColoredOptions::default())
                .build(&opts)
                .unwrap(),
        ));
    }
    out
}

fn jolt_params() -> StepParams {
    StepParams {
        dt: 1.0 / 60.0,
        substeps: 5,
        iterations: 1,
        ..Default::default()
    }
}

/// Pushes the hinge at rest angle `rest` by `push`, steps a quarter of a second (15 frames),
/// and returns how far the free corner ends from its rest position.
fn released(rest: f32, isometric: bool, push: &Push, solver: &mut dyn solver_core::Solver) -> f32 {
    let mut body = hinge(rest, isometric);
    let at_rest = body.particles().x()[3].xyz();
    let (to, v) = (push.apply)(rest);
    let w = body.particles().x()[3].w;
    body.particles_mut().x_mut()[3] = Packed4::new(to, w);
    body.particles_mut().x_prev_mut()[3] = Packed4::new(to, w);
    body.particles_mut().v_mut()[3] = Packed4::new(v, 0.0);
    let params = jolt_params();
    for _ in 0..15 {
        step(&mut body, &params, solver, None).unwrap();
    }
    (body.particles().x()[3].xyz() - at_rest).length()
}

/// The rest angles of the issue: flat, ±45, ±90, 135 degrees and fully folded, and -135.
const RESTS: [(&str, f32); 8] = [
    ("flat", 0.0),
    ("+45", FRAC_PI_4),
    ("-45", -FRAC_PI_4),
    ("+90", FRAC_PI_2),
    ("-90", -FRAC_PI_2),
    ("+135", 3.0 * FRAC_PI_4),
    ("-135", -3.0 * FRAC_PI_4),
    ("folded", PI),
];

#[test]
fn concave_crease_pushed_flat_returns_concave_not_mirrored() {
    // The reported setup: rest at +90 degrees, pushed flat (and on, at 3 m/s, towards the
    // convex mirror image at -90), released.
    let push = &PUSHES[4];
    for (name, mut solver) in solvers() {
        for rest in [FRAC_PI_2, -FRAC_PI_2] {
            let mut body = hinge(rest, false);
            let (to, v) = (push.apply)(rest);
            let w = body.particles().x()[3].w;
            body.particles_mut().x_mut()[3] = Packed4::new(to, w);
            body.particles_mut().x_prev_mut()[3] = body.particles().x()[3];
            body.particles_mut().v_mut()[3] = Packed4::new(v, 0.0);
            assert!(theta_of(&body).abs() < 1e-6);
            let params = jolt_params();
            for _ in 0..15 {
                step(&mut body, &params, solver.as_mut(), None).unwrap();
            }
            let theta = theta_of(&body);
            eprintln!("{name}: rest {rest:+.4} rad, ends at {theta:+.4} rad");
            assert!(
                (theta - rest).abs() < 1e-2,
                "{name}: rest {rest} rad pushed flat ended at {theta} rad (the mirror is {})",
                -rest
            );
        }
    }
}

#[test]
fn every_rest_state_comes_back_from_every_push_within_a_quarter_second() {
    let mut worst = 0.0f32;
    for (solver_name, mut solver) in solvers() {
        for (rest_name, rest) in RESTS {
            for push in &PUSHES {
                let off = released(rest, false, push, solver.as_mut());
                worst = worst.max(off);
                assert!(
                    off <= 1e-3,
                    "{solver_name}: rest {rest_name}, {}: {off} m from rest after 0.25 s",
                    push.name
                );
            }
        }
    }
    eprintln!("dihedral: worst distance from rest after 0.25 s {worst:.2e} m");
}

#[test]
fn isometric_bending_brings_the_flat_hinge_back_from_every_push() {
    // The isometric model has a flat rest state only (its module's theory): checked from flat.
    let mut worst = 0.0f32;
    for (solver_name, mut solver) in solvers() {
        for push in &PUSHES {
            let off = released(0.0, true, push, solver.as_mut());
            worst = worst.max(off);
            assert!(
                off <= 1e-3,
                "{solver_name}: isometric, {}: {off} m from rest after 0.25 s",
                push.name
            );
        }
    }
    eprintln!("isometric: worst distance from rest after 0.25 s {worst:.2e} m");
}

#[test]
fn rest_angles_keep_their_sign_and_the_fold_is_one_state() {
    let mut g = [Vec3::ZERO; MAX_ARITY];
    for (name, rest) in RESTS {
        let body = hinge(rest, false);
        let table = body.constraints().extra[0]
            .as_any()
            .downcast_ref::<DihedralBending>()
            .unwrap();
        assert!(
            dihedral_deviation(table.rest[0], rest).abs() < 1e-5,
            "{name}: stored rest {} for {rest}",
            table.rest[0]
        );
        assert!(table.rest[0] > -PI && table.rest[0] <= PI, "{name}");
        assert!(table.evaluate(0, &body.particles().x(), &mut g).abs() < 1e-5);
    }
    assert_eq!(signed_rest_angle(-PI), PI);
    // The mirror image of a crease is not at rest: its deviation is the whole way back,
    // 2θ0 wrapped (for ±90 degrees exactly half a turn), which the trust region clamps.
    for rest in [FRAC_PI_4, FRAC_PI_2, 3.0 * FRAC_PI_4] {
        let at_rest = packed(&hinge_positions(rest));
        let table = DihedralBending::from_stencils(&at_rest, &[[0, 1, 2, 3]], 0.0).unwrap();
        let mirror = packed(&hinge_positions(-rest));
        let c = table.evaluate(0, &mirror, &mut g);
        assert_eq!(c.abs(), DIHEDRAL_MAX_STEP, "rest {rest}: mirror gives {c}");
        let d = dihedral_deviation(theta_of_positions(&mirror), table.rest[0]);
        let want = dihedral_deviation(-2.0 * rest, 0.0);
        assert!((d - want).abs() < 1e-4, "rest {rest}: mirror deviation {d}");
    }
}

fn theta_of_positions(x: &[Packed4]) -> f32 {
    let p: [Vec3; 4] = core::array::from_fn(|k| x[k].xyz());
    dihedral_angle_and_grad(p, &mut [Vec3::ZERO; MAX_ARITY])
}

fn packed(p: &[Vec3]) -> Vec<Packed4> {
    p.iter().map(|&v| Packed4::new(v, 1.0)).collect()
}

#[test]
fn no_two_angles_give_the_same_deviation_and_the_fold_has_no_jump() {
    // For every rest angle, wrap(θ - θ0) over θ around the circle is strictly increasing
    // except for its one jump of 2π at θ = θ0 + π; in particular θ and -θ (the mirror) give
    // different values unless θ = -θ mod 2π.
    let n = 3600;
    for (name, rest) in RESTS {
        let mut values: Vec<f32> = (0..n)
            .map(|k| -PI + 2.0 * PI * (k as f32 + 0.5) / n as f32)
            .map(|theta| {
                let d = dihedral_deviation(theta, rest);
                assert!(d > -PI && d <= PI, "{name}: {d}");
                d
            })
            .collect();
        let jumps = values.windows(2).filter(|w| w[1] <= w[0]).count();
        assert!(
            jumps <= 1,
            "{name}: {jumps} places where the deviation does not grow"
        );
        values.sort_by(f32::total_cmp);
        assert!(
            values.windows(2).all(|w| w[1] > w[0]),
            "{name}: two angles share a value"
        );
        // Across the fold θ = ±π the deviation is continuous (the rest is not half a turn away).
        if rest.abs() > 0.1 {
            let (a, b) = (
                dihedral_deviation(PI - 1e-3, rest),
                dihedral_deviation(-PI + 1e-3, rest),
            );
            assert!((b - a - 2e-3).abs() < 1e-4, "{name}: {a} -> {b}");
        }
    }
    // Through the whole evaluate path: a stencil at rest near the fold, turned across it.
    let mut g = [Vec3::ZERO; MAX_ARITY];
    let table =
        DihedralBending::from_stencils(&packed(&hinge_positions(3.0)), &[[0, 1, 2, 3]], 0.0)
            .unwrap();
    let over = table.evaluate(0, &packed(&hinge_positions(PI - 1e-3)), &mut g);
    let under = table.evaluate(0, &packed(&hinge_positions(-PI + 1e-3)), &mut g);
    assert!(
        (over - (PI - 1e-3 - 3.0)).abs() < 1e-3 && (under - over - 2e-3).abs() < 1e-3,
        "{over} -> {under}"
    );
}

#[test]
fn the_gradient_is_that_of_the_signed_angle_on_both_sides_of_flat_and_of_the_fold() {
    // Central differences of the signed C (within the trust region: rest near the angle).
    let mut g = [Vec3::ZERO; MAX_ARITY];
    let mut scratch = [Vec3::ZERO; MAX_ARITY];
    for theta in [-3.0, -2.0, -0.2, -1e-3, 0.0, 1e-3, 0.2, 1.0, 2.5, 3.1, PI] {
        let rest = theta - 0.1;
        let table =
            DihedralBending::from_stencils(&packed(&hinge_positions(rest)), &[[0, 1, 2, 3]], 0.0)
                .unwrap();
        let x = packed(&hinge_positions(theta));
        let c = table.evaluate(0, &x, &mut g);
        assert!((c - 0.1).abs() < 1e-3, "θ {theta}: C {c}");
        let h = 1e-3;
        for p in 0..4 {
            // `axis` indexes a `Vec3` (`g[p][axis]`); clippy's hint reads it as an index into `g`.
            #[allow(clippy::needless_range_loop)]
            for axis in 0..3 {
                let bump = |d: f32| {
                    let mut y = x.clone();
                    match axis {
                        0 => y[p].x += d,
                        1 => y[p].y += d,
                        _ => y[p].z += d,
                    }
                    y
                };
                let fd = (table.evaluate(0, &bump(h), &mut scratch)
                    - table.evaluate(0, &bump(-h), &mut scratch))
                    / (2.0 * h);
                assert!(
                    (fd - g[p][axis]).abs() < 1e-2 * (1.0 + fd.abs()),
                    "θ {theta}, particle {p}, axis {axis}: analytic {}, numeric {fd}",
                    g[p][axis]
                );
            }
        }
    }
}
