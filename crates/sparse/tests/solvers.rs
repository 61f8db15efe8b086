//! Every solver converges from the same predicted state; parallel solvers give the same bits
//! for any thread count; SIMD and scalar colored agree; gauss-newton-direct converges quadratically.

mod common;

use common::{cloth_with_extra_kinds, max_abs_diff, predicted, solve};
use solver_core::{figures, step, Body, Solver, StepParams, Stiffness};
use sparse::{
    Colored, ColoredOptions, ColoringMethod, InnerSolve, JacobiOptions, SolverKind, SolverOptions,
};

/// Small blocks so that the parallel paths run even on small test scenes.
fn small_blocks(threads: usize) -> SolverOptions {
    SolverOptions {
        threads,
        chunk: 32,
        parallel_threshold: 64,
        ..Default::default()
    }
}

fn scenes_under_test() -> Vec<(&'static str, Body)> {
    vec![
        ("cloth", predicted(scenes::cloth(12).unwrap(), 5)),
        ("rope", predicted(scenes::rope(24).unwrap(), 5)),
        ("cloth+area+floor", predicted(cloth_with_extra_kinds(10), 5)),
    ]
}

#[test]
fn every_solver_lowers_the_residual_over_20_iterations() {
    for (scene, body) in scenes_under_test() {
        for kind in SolverKind::ALL {
            let name = kind.name();
            for threads in sparse::thread_counts(&[1, 2]) {
                let mut solver = kind.build(&small_blocks(threads)).unwrap();
                // chebyshev estimates rho in its first substep; measure the second as well.
                let (r, x) = solve(&body, solver.as_mut(), 20);
                let (r2, _) = solve(&body, solver.as_mut(), 20);
                assert!(x.iter().all(|p| p.is_finite()), "{scene} {name}");
                for r in [&r, &r2] {
                    assert!(
                        r[20] < 0.95 * r[0],
                        "{scene} {name} x{threads}: residual {} -> {}: {r:?}",
                        r[0],
                        r[20]
                    );
                }
            }
        }
    }
}

#[test]
fn every_kind_builds_parses_its_name_and_rejects_bad_input() {
    for kind in SolverKind::ALL {
        let s = kind.build(&SolverOptions::default()).unwrap();
        assert_eq!(s.name(), kind.name());
        assert_eq!(kind.name().parse::<SolverKind>().unwrap(), kind);
        assert_eq!(s.report().threads, 1);
    }
    assert_eq!(sparse::SOLVER_NAMES.len(), SolverKind::ALL.len() + 1);
    assert_eq!(SolverKind::COMPARED.len(), 7);
    assert!("sor".parse::<SolverKind>().is_err());
    // The Gauss-Newton solvers' names before the true Newton solver came still parse.
    for (old, new) in sparse::SOLVER_ALIASES {
        assert_eq!(old.parse::<SolverKind>().unwrap(), new.parse().unwrap());
    }
    assert_eq!(
        "newton-direct".parse::<SolverKind>().unwrap(),
        SolverKind::GaussNewton(InnerSolve::Direct, Default::default())
    );
    let shared_spoilers: [fn(&mut SolverOptions); 2] = [|o| o.threads = 0, |o| o.chunk = 12];
    for spoil in shared_spoilers {
        let mut opts = SolverOptions::default();
        spoil(&mut opts);
        for kind in SolverKind::ALL {
            assert!(kind.build(&opts).is_err(), "{kind} {opts:?}");
        }
    }
    let jacobi = |omega| JacobiOptions {
        omega,
        ..Default::default()
    };
    let spoiled = [
        SolverKind::Colored(ColoredOptions {
            palette_shrink: 0.5,
            ..Default::default()
        }),
        SolverKind::Jacobi(jacobi(0.0)),
        SolverKind::Jacobi(jacobi(f32::NAN)),
        SolverKind::Chebyshev(sparse::ChebyshevOptions {
            jacobi: jacobi(2.5),
            ..Default::default()
        }),
        SolverKind::Chebyshev(sparse::ChebyshevOptions {
            rho: Some(1.0),
            ..Default::default()
        }),
        SolverKind::GaussNewton(
            InnerSolve::GaussSeidel,
            sparse::GaussNewtonOptions {
                sweeps: 0,
                ..Default::default()
            },
        ),
        SolverKind::GaussNewton(
            InnerSolve::Direct,
            sparse::GaussNewtonOptions {
                regularization: -1.0,
                ..Default::default()
            },
        ),
    ];
    for kind in spoiled {
        assert!(kind.build(&SolverOptions::default()).is_err(), "{kind:?}");
    }
    let jacobi = SolverKind::Jacobi(Default::default());
    if sparse::PARALLEL {
        let threaded = jacobi.build(&small_blocks(3)).unwrap();
        assert_eq!(threaded.report().threads, 3);
    } else {
        let refused = jacobi.build(&small_blocks(3)).err().map(|e| e.to_string());
        assert!(
            refused.as_deref().is_some_and(|e| e.contains("parallel")),
            "{refused:?}"
        );
    }
}

/// Runs `steps` steps of the cloth (12 x 12, one attached corner moving) and returns the hash.
fn hash_after(kind: SolverKind, opts: &SolverOptions, steps: usize) -> (u64, Option<usize>) {
    let mut body = scenes::cloth(12).unwrap();
    body.attach(5).unwrap();
    let mut solver = kind.build(opts).unwrap();
    let params = StepParams::default();
    for s in 0..steps {
        let t = s as f32 / 60.0;
        body.move_attachment(
            0,
            solver_core::glam::Vec3::new(0.4, 1.0 + 0.2 * t.sin(), 0.1 * t),
        )
        .unwrap();
        step(&mut body, &params, solver.as_mut(), None).unwrap();
    }
    assert!(figures::all_finite(&body));
    (
        figures::state_hash(&body.particles().x()),
        solver.report().colors,
    )
}

#[test]
#[cfg_attr(
    not(feature = "parallel"),
    ignore = "needs the `parallel` feature (threads)"
)]
fn parallel_solvers_give_the_same_bits_for_1_2_and_3_threads() {
    for kind in [
        SolverKind::Colored(Default::default()),
        SolverKind::Jacobi(Default::default()),
        SolverKind::Chebyshev(Default::default()),
    ] {
        let name = kind.name();
        let (one, colors) = hash_after(kind, &small_blocks(1), 200);
        let (two, _) = hash_after(kind, &small_blocks(2), 200);
        let (three, _) = hash_after(kind, &small_blocks(3), 200);
        assert_eq!(one, two, "{name}: 1 vs 2 threads");
        assert_eq!(one, three, "{name}: 1 vs 3 threads");
        assert_eq!(colors.is_some(), name == "colored");
    }
    // With other kinds in the colors: 1 and 2 threads give the same bits.
    let body = predicted(cloth_with_extra_kinds(10), 5);
    let (_, x1) = solve(
        &body,
        SolverKind::Colored(Default::default())
            .build(&small_blocks(1))
            .unwrap()
            .as_mut(),
        8,
    );
    let (_, x2) = solve(
        &body,
        SolverKind::Colored(Default::default())
            .build(&small_blocks(2))
            .unwrap()
            .as_mut(),
        8,
    );
    assert_eq!(
        solver_core::figures::state_hash(&x1),
        solver_core::figures::state_hash(&x2),
        "extra kinds"
    );
    // Randomized coloring too, and the default blocks (serial below the threshold).
    let randomized = SolverKind::Colored(ColoredOptions {
        coloring: ColoringMethod::Randomized,
        ..Default::default()
    });
    let (a, _) = hash_after(randomized, &small_blocks(1), 50);
    let (b, _) = hash_after(
        randomized,
        &SolverOptions {
            threads: 2,
            ..small_blocks(1)
        },
        50,
    );
    assert_eq!(a, b);
}

#[test]
fn colored_simd_and_scalar_agree_within_float_tolerance() {
    let body = predicted(scenes::cloth(16).unwrap(), 10);
    let simd = SolverOptions::default();
    let scalar = SolverOptions {
        kernel: sparse::Kernel::Scalar,
        ..Default::default()
    };
    let (r_simd, x_simd) = solve(
        &body,
        SolverKind::Colored(Default::default())
            .build(&simd)
            .unwrap()
            .as_mut(),
        8,
    );
    let (r_scalar, x_scalar) = solve(
        &body,
        SolverKind::Colored(Default::default())
            .build(&scalar)
            .unwrap()
            .as_mut(),
        8,
    );
    let max_diff = max_abs_diff(&x_simd, &x_scalar);
    assert!(max_diff < 1e-5, "max |Δx| = {max_diff}");
    assert!((r_simd[8] - r_scalar[8]).abs() <= 1e-3 * r_scalar[8]);
    // And over whole steps.
    let mut a = scenes::cloth(16).unwrap();
    let mut b = a.clone();
    let (mut sa, mut sb) = (
        SolverKind::Colored(Default::default())
            .build(&simd)
            .unwrap(),
        SolverKind::Colored(Default::default())
            .build(&scalar)
            .unwrap(),
    );
    let params = StepParams::default();
    for _ in 0..20 {
        step(&mut a, &params, sa.as_mut(), None).unwrap();
        step(&mut b, &params, sb.as_mut(), None).unwrap();
    }
    let max_diff = max_abs_diff(&a.particles().x(), &b.particles().x());
    assert!(max_diff < 1e-4, "after 20 steps max |Δx| = {max_diff}");
}

#[test]
fn colored_reports_six_colors_on_the_cloth_and_matches_serial_gs_per_color() {
    let mut colored = Colored::new(&SolverOptions::default(), ColoredOptions::default()).unwrap();
    let body = predicted(scenes::cloth(16).unwrap(), 5);
    let (_, x) = solve(&body, &mut colored, 1);
    assert_eq!(Solver::report(&colored).colors, Some(6));
    let report = colored.coloring_report();
    assert_eq!(report.colors, 6);
    // One colored iteration equals Gauss-Seidel in color order (constraints of a color are
    // independent, so their order inside the color does not matter).
    let mut order = Vec::new();
    let inc = sparse::Incidence::new(body.constraints(), body.len()).unwrap();
    let coloring = sparse::Coloring::greedy(&inc);
    for k in 0..coloring.colors() {
        order.extend_from_slice(coloring.color(k));
    }
    let mut gs = solver_core::GaussSeidel::with_order(order);
    let (_, x_gs) = solve(&body, &mut gs, 1);
    let max_diff = max_abs_diff(&x, &x_gs);
    assert!(max_diff < 1e-6, "{max_diff}");
}

/// `body` after `iterations` iterations (`begin`, then `iterate` each) of a freshly prepared
/// `name` in default options, and the multipliers they left.
fn iterated(
    body: &Body,
    kind: SolverKind,
    inv_dt2: f32,
    stiffness: f32,
    iterations: usize,
) -> (Body, Vec<f32>) {
    let mut b = body.clone();
    let mut solver = kind.build(&SolverOptions::default()).unwrap();
    let constraints = b.constraints().clone();
    solver.prepare(&constraints, b.len()).unwrap();
    let mut lambda = vec![0.0; constraints.len()];
    let slices = b.particles_mut().slices_mut();
    let mut s = solver_core::SolveState {
        x: slices.x,
        x_prev: slices.x_prev,
        constraints: &constraints,
        lambda: &mut lambda,
        inv_dt2,
        stiffness,
        iterations,
        keep_multipliers: true,
    };
    solver.begin(&mut s);
    for it in 0..iterations {
        solver.iterate(&mut s, it);
    }
    (b, lambda)
}

#[test]
fn colored_writes_the_multipliers_back_after_the_last_iteration() {
    let body = predicted(scenes::cloth(8).unwrap(), 5);
    let (_, lambda) = iterated(
        &body,
        SolverKind::Colored(Default::default()),
        3600.0,
        1.0,
        3,
    );
    assert!(lambda.iter().filter(|l| **l != 0.0).count() > lambda.len() / 2);
}

/// The multipliers a step leaves are its last substep's, whichever solver ran it: the
/// colored solver writes its own copy back only on that substep (`keep_multipliers`).
#[test]
fn colored_leaves_the_last_substeps_multipliers_after_a_substepped_step() {
    let body = scenes::cloth(12).unwrap();
    let inc = sparse::Incidence::new(body.constraints(), body.len()).unwrap();
    let coloring = sparse::Coloring::greedy(&inc);
    let order = (0..coloring.colors())
        .flat_map(|k| coloring.color(k).to_vec())
        .collect();
    let params = StepParams {
        substeps: 4,
        iterations: 2,
        ..Default::default()
    };
    let run = |solver: &mut dyn Solver| {
        let mut b = body.clone();
        for _ in 0..3 {
            step(&mut b, &params, solver, None).unwrap();
        }
        (b.particles().x().to_vec(), b.multipliers().to_vec())
    };
    let mut colored = Colored::new(&SolverOptions::default(), ColoredOptions::default()).unwrap();
    let (x, lambda) = run(&mut colored);
    // Gauss-Seidel in color order projects the same constraints in an equivalent order and
    // keeps its multipliers in `lambda` all along.
    let (x_gs, lambda_gs) = run(&mut solver_core::GaussSeidel::with_order(order));
    assert!(max_abs_diff(&x, &x_gs) < 1e-5);
    let scale = lambda_gs.iter().fold(0.0f32, |m, l| m.max(l.abs()));
    assert!(scale > 0.0);
    for (g, (a, b)) in lambda.iter().zip(&lambda_gs).enumerate() {
        assert!((a - b).abs() <= 1e-3 * scale, "λ[{g}] = {a} vs {b}");
    }
}

#[test]
fn newton_direct_converges_quadratically_once_close() {
    // The rope: J has full row rank, so once the residual is small (here below 1e-3 of the
    // mean rest length) every Gauss-Newton step cuts it at least tenfold, until f32 rounding
    // (about 1e-7) stops it. From farther away (the longer ropes start at 3-4e-2) full steps
    // can overshoot for a few iterations first.
    for n in [16, 32, 48] {
        let body = predicted(scenes::rope(n).unwrap(), 5);
        let mut solver = SolverKind::GaussNewton(InnerSolve::Direct, Default::default())
            .build(&SolverOptions::default())
            .unwrap();
        let (r, _) = solve(&body, solver.as_mut(), 20);
        let (close, floor) = (1e-3, 1e-5);
        let first = r
            .iter()
            .position(|&v| v < close)
            .unwrap_or_else(|| panic!("n = {n}: never close: {r:?}"));
        let mut checked = 0;
        for k in first..20 {
            if r[k] <= floor {
                break;
            }
            assert!(
                r[k + 1] <= r[k] / 10.0,
                "n = {n}, iteration {k}: {} -> {}: {r:?}",
                r[k],
                r[k + 1]
            );
            checked += 1;
        }
        assert!(checked >= 1, "n = {n}: no step measured: {r:?}");
        assert!(r[20] < floor, "n = {n}: {r:?}");
    }
}

#[test]
fn newton_variants_beat_per_edge_gauss_seidel_per_iteration_on_the_rope() {
    let body = predicted(scenes::rope(40).unwrap(), 5);
    let (gs, _) = solve(
        &body,
        SolverKind::Gs
            .build(&SolverOptions::default())
            .unwrap()
            .as_mut(),
        20,
    );
    for inner in [InnerSolve::GaussSeidel, InnerSolve::Direct] {
        let kind = SolverKind::GaussNewton(inner, Default::default());
        let name = kind.name();
        let (r, _) = solve(
            &body,
            kind.build(&SolverOptions::default()).unwrap().as_mut(),
            6,
        );
        assert!(r[6] < gs[6], "{name}: {} vs gs {}", r[6], gs[6]);
    }
}

#[test]
fn jacobi_with_averaging_and_omega_one_stays_finite() {
    let opts = small_blocks(if sparse::PARALLEL { 2 } else { 1 });
    let jacobi = JacobiOptions {
        omega: 1.0,
        average: sparse::Averaging::Constraint,
    };
    let params = StepParams::default();
    for (scene, mut body) in [
        ("cloth", scenes::cloth(16).unwrap()),
        ("rope", scenes::rope(32).unwrap()),
        ("cloth+area+floor", cloth_with_extra_kinds(12)),
    ] {
        let chebyshev = sparse::ChebyshevOptions {
            jacobi,
            ..Default::default()
        };
        for kind in [SolverKind::Jacobi(jacobi), SolverKind::Chebyshev(chebyshev)] {
            let name = kind.name();
            let mut solver = kind.build(&opts).unwrap();
            let mut b = body.clone();
            for s in 0..300 {
                step(&mut b, &params, solver.as_mut(), None)
                    .unwrap_or_else(|e| panic!("{scene} {name} step {s}: {e}"));
                assert!(figures::all_finite(&b), "{scene} {name} step {s}");
            }
        }
        // Many iterations in one step, PBD stiffness 1.
        let mut solver = SolverKind::Jacobi(jacobi).build(&opts).unwrap();
        let pbd = StepParams {
            iterations: 200,
            stiffness: Stiffness::Pbd {
                k: 1.0,
                iteration_corrected: false,
            },
            ..Default::default()
        };
        step(&mut body, &pbd, solver.as_mut(), None).unwrap();
        assert!(figures::all_finite(&body), "{scene}");
    }
}

#[test]
fn every_solver_honours_the_pbd_stiffness_scale() {
    // PBD mode (inv_dt2 = 0): k = 0 moves nothing, and a softer k moves the particles less.
    let body = predicted(scenes::cloth(10).unwrap(), 5);
    for kind in SolverKind::ALL {
        let name = kind.name();
        let moved_by = |k: f32| {
            let (b, _) = iterated(&body, kind, 0.0, k, 4);
            b.particles()
                .x()
                .iter()
                .zip(body.particles().x())
                .map(|(p, q)| (p.xyz() - q.xyz()).length_squared() as f64)
                .sum::<f64>()
                .sqrt()
        };
        let (stiff, soft, off) = (moved_by(1.0), moved_by(0.2), moved_by(0.0));
        assert_eq!(off, 0.0, "{name}: k = 0 must not move anything");
        assert!(0.0 < soft && soft < stiff, "{name}: {soft} vs {stiff}");
    }
}
