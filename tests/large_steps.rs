//! Safe large steps: a frame time longer than `StepParams::max_substep` is split into more
//! substeps (up to `max_substeps`) and the `StepReport` says so; one beyond the cap is
//! refused before anything moves; and no combination of parameters returns Ok with a mean
//! stretch above `StepParams::stretch_warning` without a warning in the report. For the
//! reference Gauss-Seidel, the colored and the Jacobi solver, on the 8 x 8 cloth of
//! docs/SCENES.md.

use solver_core::step::{StepReport, StepWarning};
use solver_core::{figures, step, Body, StepParams, WobbleError};
use sparse::{ColoredOptions, JacobiOptions, SolverKind, SolverOptions};

const SOLVERS: [SolverKind; 3] = [
    SolverKind::Gs,
    SolverKind::Colored(ColoredOptions::DEFAULT),
    SolverKind::Jacobi(JacobiOptions::DEFAULT),
];

fn solver(kind: SolverKind) -> Box<dyn solver_core::Solver> {
    kind.build(&SolverOptions::default()).unwrap()
}

#[test]
fn dt_10_s_is_refused_by_default_and_changes_nothing() {
    for name in SOLVERS {
        let mut body = scenes::cloth(8).unwrap();
        let mut s = solver(name);
        step(&mut body, &StepParams::default(), s.as_mut(), None).unwrap();
        let (x, v) = (body.particles().x().to_vec(), body.particles().v().to_vec());
        let params = StepParams {
            dt: 10.0,
            ..Default::default()
        };
        let err = step(&mut body, &params, s.as_mut(), None).unwrap_err();
        let text = err.to_string();
        assert!(
            matches!(
                err,
                WobbleError::StepTooLarge {
                    needed: 300.0,
                    max_substeps: 16,
                    ..
                }
            ),
            "{name}: {text}"
        );
        // The message names dt, the cap and the fix.
        for part in ["dt = 10 s", "max_substeps = 16", "step a shorter dt"] {
            assert!(text.contains(part), "{name}: {text}");
        }
        assert_eq!(body.particles().x(), x, "{name}");
        assert_eq!(body.particles().v(), v, "{name}");
    }
}

/// Runs `steps` steps of `params` on the 8 x 8 cloth with every solver, handing `check` the
/// solver's name, the step's number, its report and the body after it.
fn check_each_step(
    params: &StepParams,
    steps: usize,
    mut check: impl FnMut(&str, usize, &StepReport, &Body),
) {
    for name in SOLVERS {
        let mut body = scenes::cloth(8).unwrap();
        let mut s = solver(name);
        for k in 0..steps {
            let report = step(&mut body, params, s.as_mut(), None)
                .unwrap_or_else(|e| panic!("{name} step {k}: {e}"));
            check(name.name(), k, &report, &body);
        }
    }
}

#[test]
fn dt_10_s_with_the_cap_raised_substeps_safely() {
    let params = StepParams {
        dt: 10.0,
        max_substeps: 300,
        ..Default::default()
    };
    check_each_step(&params, 3, |name, k, report, body| {
        assert_eq!((report.substeps, report.split), (300, true), "{name}");
        assert!(figures::all_finite(body), "{name} step {k}");
        let (mean, max) = figures::stretch(body);
        assert!(
            mean < 0.25 && max < 1.0,
            "{name} step {k}: stretch {mean} (max {max})"
        );
        assert!(
            body.particles()
                .x()
                .iter()
                .all(|p| p.xyz().abs().max_element() < 3.0),
            "{name} step {k}: left the 3 m box"
        );
        assert_eq!(report.is_clean(), mean <= 0.25, "{name}: {report:?}");
    });
}

#[test]
fn dt_quarter_second_is_split_and_stays_within_the_stretch_bound() {
    let params = StepParams {
        dt: 0.25,
        ..Default::default()
    };
    check_each_step(&params, 40, |name, k, report, body| {
        // 0.25 s in substeps of at most 1/30 s.
        assert_eq!((report.substeps, report.split), (8, true), "{name}");
        assert!((report.substep_dt - 0.25 / 8.0).abs() < 1e-7);
        let (mean, _) = figures::stretch(body);
        assert!(
            (report.stretch_mean - mean).abs() <= 1e-5 * mean.max(1.0),
            "{name}: report {} vs figures {mean}",
            report.stretch_mean
        );
        // Never silent: a stretch above the bound is warned of. Gauss-Seidel and colored
        // converge within the bound at 8 iterations; Jacobi, slower to converge, need not.
        assert_eq!(
            report.is_clean(),
            mean <= params.stretch_warning,
            "{name} {report:?}"
        );
        if name != "jacobi" {
            assert!(
                mean < params.stretch_warning,
                "{name} step {k}: mean stretch {mean}"
            );
        }
    });
}

/// One step of `body` with a fresh Gauss-Seidel solver.
fn gs_step(body: &mut Body, params: &StepParams) -> StepReport {
    step(body, params, &mut solver_core::GaussSeidel::new(), None).unwrap()
}

#[test]
fn a_frame_at_the_stable_substep_is_not_split() {
    let mut body = scenes::cloth(8).unwrap();
    for dt in [1.0 / 60.0, 1.0 / 30.0, 0.0333] {
        let params = StepParams {
            dt,
            ..Default::default()
        };
        let report = gs_step(&mut body, &params);
        assert_eq!((report.substeps, report.split), (1, false), "dt = {dt}");
    }
    // Asked-for substeps above the cap run as asked, and bound the split instead.
    let params = StepParams {
        dt: 1.0,
        substeps: 40,
        ..Default::default()
    };
    let report = gs_step(&mut body, &params);
    assert_eq!((report.substeps, report.split), (40, false));
}

/// No combination of dt, substeps, iterations, max_substep and stretch bound returns Ok with
/// a mean stretch above the bound and no warning; and the unsplit quarter-second frame (what
/// `step` did before it split) does stretch far, so the warning is exercised.
#[test]
#[allow(clippy::neg_cmp_op_on_partial_ord)] // true for NaN too
fn no_parameters_return_ok_with_a_large_stretch_unsaid() {
    let mut warned = 0;
    for name in SOLVERS {
        for dt in [1.0 / 60.0, 0.1, 0.25, 1.0] {
            for (substeps, iterations) in [(1, 1), (1, 8), (4, 2)] {
                for max_substep in [1.0 / 30.0, 10.0] {
                    for bound in [0.05, 0.25] {
                        let params = StepParams {
                            dt,
                            substeps,
                            iterations,
                            max_substep,
                            max_substeps: 30,
                            stretch_warning: bound,
                            ..Default::default()
                        };
                        let mut body = scenes::cloth(8).unwrap();
                        let mut s = solver(name);
                        for k in 0..10 {
                            let label = format!("{name} {params:?} step {k}");
                            match step(&mut body, &params, s.as_mut(), None) {
                                Ok(report) => {
                                    let (mean, _) = figures::stretch(&body);
                                    let says = report
                                        .warnings
                                        .iter()
                                        .any(|w| matches!(w, StepWarning::Stretch { .. }));
                                    assert_eq!(
                                        says,
                                        !(mean <= bound),
                                        "{label}: {mean} {report:?}"
                                    );
                                    warned += says as usize;
                                }
                                Err(WobbleError::Diverged { .. }) => break,
                                Err(e) => panic!("{label}: {e}"),
                            }
                        }
                    }
                }
            }
        }
    }
    assert!(
        warned > 0,
        "no case stretched past its bound: the check went unexercised"
    );
    // The case: 0.25 s in one substep stretches far past 100%, and says so.
    let mut body = scenes::cloth(8).unwrap();
    let params = StepParams {
        dt: 0.25,
        max_substep: 0.25,
        ..Default::default()
    };
    let mut s = solver(SolverKind::Gs);
    let (mut worst, mut warnings) = (0.0f32, 0);
    for _ in 0..20 {
        let report = step(&mut body, &params, s.as_mut(), None).unwrap();
        assert_eq!(
            report.is_clean(),
            report.stretch_mean <= params.stretch_warning
        );
        warnings += !report.is_clean() as usize;
        worst = worst.max(report.stretch_mean);
    }
    println!("dt = 0.25 s unsplit: worst mean stretch {worst}, {warnings} warnings in 20 steps");
    assert!(warnings > 0, "worst mean stretch {worst}");
}
