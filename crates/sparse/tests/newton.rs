//! The `newton` reference: exact second derivatives, quadratic convergence near the solution
//! on the rope and the cloth, a residual converged to its tolerance (checked from the public
//! constraint API, not the solver's own figure), momentum kept, kinds it cannot solve refused.

mod common;

use common::{on_a_copy, predicted};
use solver_core::constraints::{Hessian, MAX_ARITY};
use solver_core::glam::{DMat3, DVec3};
use solver_core::{step, Body, Solver, StepParams, WobbleError};
use sparse::{Newton, NewtonOptions, NewtonReport, SolverKind, SolverOptions};

/// Runs `iterations` Newton iterations on a copy of `body` (XPBD, dt = 1/60); returns the
/// solver (its report and f64 state) and the inverse step `1/h²` used.
fn newton_on(body: &Body, iterations: usize) -> (Newton, f32) {
    let mut newton = Newton::new(NewtonOptions::default()).unwrap();
    let dt = StepParams::default().dt;
    on_a_copy(body, &mut newton, iterations, |solver, s| {
        solver.begin(s);
        for it in 0..iterations {
            solver.iterate(s, it);
        }
    });
    (newton, 1.0 / (dt * dt))
}

/// The XPBD residual `Σ |w g|² + Σ h²` recomputed from the constraints' own `second_order`
/// at the solver's f64 state, with the prediction `x_pred`.
fn residual_from_outside(body: &Body, newton: &Newton, x_pred: &[DVec3], inv_dt2: f32) -> f64 {
    let x = newton.positions_f64();
    let lambda = newton.multipliers_f64();
    let mut force = vec![DVec3::ZERO; x.len()];
    let mut sum_h = 0.0;
    let mut grad = [DVec3::ZERO; MAX_ARITY];
    let mut hess: Hessian = [[DMat3::ZERO; MAX_ARITY]; MAX_ARITY];
    let mut g = 0;
    for kind in body.constraints().kinds() {
        for c in 0..kind.len() {
            let v = kind.second_order(c, x, &mut grad, &mut hess).unwrap();
            if !(kind.unilateral() && v <= 0.0) {
                let alpha = (kind.compliance(c) * inv_dt2) as f64;
                sum_h += (v + alpha * lambda[g]).powi(2);
                for (k, &p) in kind.particles(c).iter().enumerate() {
                    force[p as usize] += grad[k] * lambda[g];
                }
            }
            g += 1;
        }
    }
    let mut sum_g = 0.0;
    for (p, q) in body.particles().x().iter().enumerate() {
        if q.w > 0.0 {
            sum_g += ((x[p] - x_pred[p]) - force[p] * q.w as f64).length_squared();
        }
    }
    (sum_g + sum_h).sqrt()
}

fn prediction(body: &Body) -> Vec<DVec3> {
    body.particles()
        .x()
        .iter()
        .map(|q| q.xyz().as_dvec3())
        .collect()
}

/// The contraction factors of the iterations after the residual first fell below
/// `close · r₀`.
fn near_solution_factors(report: &NewtonReport, close: f64) -> Vec<f64> {
    let r = &report.residuals;
    let first = r.iter().position(|&v| v <= close * r[0]).unwrap_or(r.len());
    r[first..].windows(2).map(|w| w[1] / w[0]).collect()
}

/// The standard cloth with every edge given `compliance` (m/N): a well-posed step.
fn compliant_cloth(n: usize, compliance: f32) -> Body {
    let mut b = scenes::cloth(n).unwrap();
    b.constraints_mut()
        .distance
        .compliance
        .iter_mut()
        .for_each(|a| *a = compliance);
    b
}

#[test]
fn newton_converges_quadratically_near_the_solution_on_the_rope_and_the_cloth() {
    for (name, body) in [
        ("rigid rope", predicted(scenes::rope(32).unwrap(), 5)),
        (
            "cloth, compliance 1e-6",
            predicted(compliant_cloth(23, 1e-6), 10),
        ),
        (
            "cloth, compliance 1e-7",
            predicted(compliant_cloth(23, 1e-7), 10),
        ),
    ] {
        let (newton, _) = newton_on(&body, 150);
        let report = newton.report();
        assert!(report.converged, "{name}: {report:?}");
        // Near the solution (residual below 1e-3 of the start) the factors fall towards 0:
        // below 0.1 by the third iteration, the last below 1e-2.
        let factors = near_solution_factors(report, 1e-3);
        assert!(!factors.is_empty(), "{name}: {factors:?} ({report:?})");
        assert!(
            factors.iter().take(3).any(|&f| f < 0.1),
            "{name}: {factors:?}"
        );
        assert!(factors.last().unwrap() < &1e-2, "{name}: {factors:?}");
    }
}

#[test]
fn the_reference_is_converged_to_its_stated_tolerance() {
    for (name, body) in [
        ("rigid rope", predicted(scenes::rope(32).unwrap(), 5)),
        ("compliant cloth", predicted(compliant_cloth(23, 1e-6), 10)),
        (
            "compliant cloth, hanging still",
            predicted(compliant_cloth(16, 1e-6), 200),
        ),
    ] {
        let (newton, inv_dt2) = newton_on(&body, 150);
        let report = newton.report();
        let tol = NewtonOptions::default().tolerance;
        assert!(
            report.converged && !report.at_floor,
            "{name}: not converged: {report:?}"
        );
        assert!(report.reduction() <= tol, "{name}: {report:?}");
        let outside = residual_from_outside(&body, &newton, &prediction(&body), inv_dt2);
        let r0 = report.residuals[0];
        assert!(
            outside <= 2.0 * tol * r0,
            "{name}: recomputed residual {outside:e} against r0 {r0:e}"
        );
    }
}

#[test]
fn on_a_degenerate_rigid_cloth_the_report_says_it_did_not_converge() {
    // A rigid cloth's rows are redundant: no converged claim without the residual to back it.
    let body = predicted(scenes::cloth(16).unwrap(), 10);
    let (newton, inv_dt2) = newton_on(&body, 150);
    let report = newton.report();
    let tol = NewtonOptions::default().tolerance;
    let outside = residual_from_outside(&body, &newton, &prediction(&body), inv_dt2);
    let r0 = report.residuals[0];
    assert_eq!(
        report.converged,
        outside <= 2.0 * tol * r0,
        "{report:?}, outside {outside:e}"
    );
    assert!(
        report.converged || report.at_floor || report.residuals.len() == 151,
        "{report:?}"
    );
    assert!(newton.positions_f64().iter().all(|p| p.is_finite()));
}

#[test]
fn a_free_cloth_keeps_its_momentum_through_the_solve() {
    // Every constraint is translation invariant, so Σ m (x - x̃) = Σ Jᵀ λ sums to zero.
    let mut free = scenes::analytic::free_cloth(12).unwrap();
    free.constraints_mut()
        .distance
        .compliance
        .iter_mut()
        .for_each(|a| *a = 1e-6);
    let body = predicted(free, 3);
    let (newton, _) = newton_on(&body, 100);
    // It barely moves (r₀ ~ 5e-8 m): the floor of f64 comes before 1e-10 of r₀.
    let report = newton.report();
    assert!(report.converged || report.at_floor, "{report:?}");
    assert!(*report.residuals.last().unwrap() < 1e-14, "{report:?}");
    let x = newton.positions_f64();
    let mut moved = DVec3::ZERO;
    let mut scale = 0.0;
    for (p, q) in body.particles().x().iter().enumerate() {
        let d = (x[p] - q.xyz().as_dvec3()) / q.w as f64;
        moved += d;
        scale += d.length();
    }
    assert!(scale > 0.0, "the solve moved nothing");
    assert!(
        moved.length() <= 1e-9 * scale,
        "Σ m Δx = {moved} against Σ |m Δx| = {scale}"
    );
}

#[test]
fn second_derivatives_match_finite_differences_of_the_gradient() {
    let mut cube = scenes::cube(2).unwrap();
    let mut noise = scenes::analytic::Noise::new(7);
    for q in cube.particles_mut().x_mut().iter_mut() {
        let d = noise.next_vec3() * 0.05;
        q.x += d.x;
        q.y += d.y;
        q.z += d.z;
    }
    let x = prediction(&cube);
    let mut checked = 0;
    for kind in cube.constraints().kinds() {
        if !kind.has_second_order() {
            continue;
        }
        for c in (0..kind.len()).step_by(7) {
            let mut grad = [DVec3::ZERO; MAX_ARITY];
            let mut hess: Hessian = [[DMat3::ZERO; MAX_ARITY]; MAX_ARITY];
            kind.second_order(c, &x, &mut grad, &mut hess).unwrap();
            let ps = kind.particles(c).to_vec();
            let eps = 1e-6;
            for (b, &pb) in ps.iter().enumerate() {
                for axis in 0..3 {
                    let mut xp = x.clone();
                    let mut xm = x.clone();
                    xp[pb as usize][axis] += eps;
                    xm[pb as usize][axis] -= eps;
                    let (mut gp, mut gm) = ([DVec3::ZERO; MAX_ARITY], [DVec3::ZERO; MAX_ARITY]);
                    let mut scratch: Hessian = [[DMat3::ZERO; MAX_ARITY]; MAX_ARITY];
                    let vp = kind.second_order(c, &xp, &mut gp, &mut scratch).unwrap();
                    let vm = kind.second_order(c, &xm, &mut gm, &mut scratch).unwrap();
                    assert!(((vp - vm) / (2.0 * eps) - grad[b][axis]).abs() < 1e-6);
                    for a in 0..ps.len() {
                        let fd = (gp[a] - gm[a]) / (2.0 * eps);
                        let exact = hess[a][b].col(axis);
                        assert!(
                            (fd - exact).abs().max_element()
                                < 1e-5 * (1.0 + exact.abs().max_element()),
                            "{} {c}: ∂²C/∂x{a}∂x{b}[{axis}] = {exact} against {fd}",
                            kind.name()
                        );
                    }
                }
            }
            checked += 1;
        }
    }
    assert!(checked >= 10, "checked {checked}");
}

#[test]
fn newton_refuses_kinds_without_second_derivatives_and_bad_options() {
    let mut flag = scenes::flag(8).unwrap();
    let mut solver = SolverKind::REFERENCE
        .build(&SolverOptions::default())
        .unwrap();
    let err = step(&mut flag, &StepParams::default(), solver.as_mut(), None).unwrap_err();
    match &err {
        WobbleError::Unsupported(msg) => assert!(msg.contains("bending"), "{msg}"),
        other => panic!("expected Unsupported, got {other:?}"),
    }
    for tolerance in [0.0, 1.0, f64::NAN, -1e-3] {
        assert!(
            Newton::new(NewtonOptions { tolerance }).is_err(),
            "{tolerance}"
        );
    }
    assert_eq!(
        "newton".parse::<SolverKind>().unwrap(),
        SolverKind::REFERENCE
    );
}

#[test]
fn stepping_with_newton_converges_every_substep_and_stays_finite() {
    let mut body = compliant_cloth(10, 1e-6);
    let mut newton = Newton::new(NewtonOptions::default()).unwrap();
    let params = StepParams {
        iterations: 100,
        ..Default::default()
    };
    for k in 0..10 {
        step(&mut body, &params, &mut newton, None).unwrap();
        let report = newton.report();
        assert!(report.converged || report.at_floor, "step {k}: {report:?}");
        assert!(report.reduction() < 1e-8, "step {k}: {report:?}");
        assert!(body.particles().x().iter().all(|p| p.xyz().is_finite()));
    }
    // The multipliers it leaves are those of the converged step.
    let _: &dyn Solver = &newton;
}
