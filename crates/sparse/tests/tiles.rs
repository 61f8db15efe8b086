//! The colored solver's tiled schedule: which bodies are tiled, that an iteration is exactly a
//! Gauss-Seidel sweep in tile order, that threads do not change a bit, and that it converges
//! like the whole-body sweep.

mod common;

use common::{
    cloth_with_extra_kinds, max_abs_diff, predicted, solve, solve_all_at_once,
    solve_with_multipliers,
};
use solver_core::glam::Vec3;
use solver_core::{
    figures, step, Body, Constraints, GaussSeidel, Particles, Solver, StepParams, Topology,
};
use sparse::ordering::{apply_ordering, Ordering};
use sparse::{Colored, ColoredOptions, Coloring, Incidence, Kernel, SolverOptions};

/// Small blocks so that the parallel paths run on test scenes.
fn small_blocks(threads: usize) -> SolverOptions {
    SolverOptions {
        threads,
        chunk: 32,
        parallel_threshold: 64,
        ..Default::default()
    }
}

/// Tiles of `tile` particles.
fn tiles(tile: usize) -> ColoredOptions {
    ColoredOptions {
        tile_particles: tile,
        ..Default::default()
    }
}

/// A colored solver with tiles of `tile` particles on small blocks.
fn tiled(tile: usize, threads: usize) -> Colored {
    Colored::new(&small_blocks(threads), tiles(tile)).unwrap()
}

/// The order the tiled schedule promises: per tile, its colors' constraints whose particles
/// all lie in the tile; then per seam tile (tiles shifted by half a tile) its colors' other
/// constraints that lie in it; then per color every other constraint (long edges, other kinds).
fn tile_order(body: &Body, tile: usize) -> Vec<u32> {
    let inc = Incidence::new(body.constraints(), body.len()).unwrap();
    let coloring = Coloring::greedy(&inc);
    let nd = body.constraints().distance.len();
    let tile_of = |g: u32, shift: usize| {
        let g = g as usize;
        if g >= nd {
            return None;
        }
        let [i, j] = body.constraints().distance.pairs[g].map(|p| p as usize + shift);
        (i / tile == j / tile).then_some(i / tile)
    };
    let in_tile = |g: u32| tile_of(g, 0);
    let in_seam = |g: u32| in_tile(g).is_none().then(|| tile_of(g, tile / 2)).flatten();
    let tiles = body.len().div_ceil(tile) + 1;
    let mut order = Vec::new();
    for place in [&in_tile as &dyn Fn(u32) -> Option<usize>, &in_seam] {
        for t in 0..tiles {
            for k in 0..coloring.colors() {
                order.extend(coloring.color(k).iter().filter(|&&g| place(g) == Some(t)));
            }
        }
    }
    for k in 0..coloring.colors() {
        order.extend(
            coloring
                .color(k)
                .iter()
                .filter(|&&g| in_tile(g).is_none() && in_seam(g).is_none()),
        );
    }
    order
}

/// A predicted 32 x 32 cloth cut into tiles of two rows, and of 100 particles (rows cut anywhere).
fn cloth_tilings() -> Vec<(&'static str, Body, usize)> {
    let cloth = predicted(scenes::cloth(32).unwrap(), 5);
    vec![
        ("cloth 32, tiles of 64", cloth.clone(), 64),
        ("cloth 32, tiles of 100", cloth, 100),
    ]
}

#[test]
fn a_tiled_iteration_is_gauss_seidel_in_tile_order() {
    let mut cases = cloth_tilings();
    cases.push((
        "cloth+area+floor",
        predicted(cloth_with_extra_kinds(24), 5),
        48,
    ));
    for (scene, body, tile) in cases {
        let mut colored = tiled(tile, 1);
        let (_, x, lambda) = solve_with_multipliers(&body, &mut colored, 1);
        let report = colored.tile_report();
        assert!(report.tiles >= 4, "{scene}: {report:?}");
        assert!(
            2 * report.tiled_constraints >= body.constraints().distance.len(),
            "{scene}: {report:?}"
        );
        assert!(report.seam_constraints > 0, "{scene}: {report:?}");
        let mut gs = GaussSeidel::with_order(tile_order(&body, tile));
        let (_, x_gs, lambda_gs) = solve_with_multipliers(&body, &mut gs, 1);
        let max_diff = max_abs_diff(&x, &x_gs);
        assert!(max_diff < 1e-6, "{scene}: max |Δx| = {max_diff}");
        // The multipliers, written back batch by batch, land on their constraints.
        let scale = lambda_gs.iter().fold(0.0f32, |m, l| m.max(l.abs()));
        assert!(scale > 0.0, "{scene}");
        for (g, (a, b)) in lambda.iter().zip(&lambda_gs).enumerate() {
            assert!(
                (a - b).abs() <= 1e-4 * scale,
                "{scene}: λ[{g}] = {a} vs {b}"
            );
        }
    }
}

#[test]
#[cfg_attr(
    not(feature = "parallel"),
    ignore = "needs the `parallel` feature (threads)"
)]
fn tiled_colored_gives_the_same_bits_for_1_2_and_3_threads() {
    let run = |threads: usize| {
        let mut body = scenes::cloth(32).unwrap();
        body.attach(31).unwrap();
        let mut solver = tiled(64, threads);
        let params = StepParams::default();
        for s in 0..200 {
            let t = s as f32 / 60.0;
            body.move_attachment(
                0,
                solver_core::glam::Vec3::new(1.0, 1.0 + 0.2 * t.sin(), 0.1 * t),
            )
            .unwrap();
            step(&mut body, &params, &mut solver, None).unwrap();
        }
        assert!(figures::all_finite(&body));
        assert!(solver.tile_report().tiles >= 4);
        (
            figures::state_hash(&body.particles().x()),
            body.multipliers().to_vec(),
        )
    };
    let (one, lambda_one) = run(1);
    for threads in [2, 3] {
        let (h, lambda) = run(threads);
        assert_eq!(one, h, "1 vs {threads} threads");
        assert_eq!(lambda_one, lambda, "multipliers, 1 vs {threads} threads");
    }
}

#[test]
fn tiled_and_whole_body_sweeps_converge_alike() {
    let body = predicted(scenes::cloth(32).unwrap(), 10);
    let mut tiles = tiled(64, 1);
    let mut whole = tiled(0, 1);
    let (rt, xt) = solve(&body, &mut tiles, 20);
    let (rw, _) = solve(&body, &mut whole, 20);
    assert_eq!(whole.tile_report().tiles, 0);
    assert!(xt.iter().all(|p| p.is_finite()));
    for k in [1, 5, 20] {
        let ratio = rt[k] / rw[k];
        assert!(
            (0.67..1.5).contains(&ratio),
            "iteration {k}: tiled {} vs whole-body {}",
            rt[k],
            rw[k]
        );
    }
    // On a 32 x 32 cloth the first iterations raise the residual as the stretch spreads out;
    // from then on both sweeps lower it.
    assert!(rt[20] < rt[5] && rw[20] < rw[5], "{rt:?} {rw:?}");
}

#[test]
fn bodies_without_locality_or_too_small_are_swept_whole() {
    // A shuffled numbering leaves almost no constraint inside a tile.
    let mut shuffled = scenes::cloth(32).unwrap();
    apply_ordering(&mut shuffled, Ordering::Shuffled { seed: 7 }).unwrap();
    let mut colored = tiled(64, 1);
    colored
        .prepare(shuffled.constraints(), shuffled.len())
        .unwrap();
    assert_eq!(colored.tile_report().tiles, 0);
    // Fewer than four tiles' worth of particles (225 < 4 x 64).
    let small = scenes::cloth(15).unwrap();
    colored.prepare(small.constraints(), small.len()).unwrap();
    assert_eq!(colored.tile_report().tiles, 0);
    // The natural numbering of the same cloth is tiled; every distance constraint is either in
    // a tile or in the whole-body sweep, and the multipliers cover them all.
    let natural = scenes::cloth(32).unwrap();
    colored
        .prepare(natural.constraints(), natural.len())
        .unwrap();
    let report = colored.tile_report();
    assert_eq!(report.tiles, 16);
    assert_eq!(report.tile_particles, 64);
    // Tiles of two rows: each of the 15 seam tiles takes the 32 verticals and 31 diagonals
    // across its boundary, which leaves no distance constraint to the whole-body sweep.
    assert_eq!(report.seam_constraints, 15 * 63);
    let nd = natural.constraints().distance.len();
    assert_eq!(report.tiled_constraints + report.seam_constraints, nd);
    assert_eq!(colored.report().colors, Some(6));
}

/// 256 particles on a wavy line, tiles of 32: chains inside tiles 2 and 5 only, and eight
/// constraints across every tile boundary (within a quarter tile of it), all pulled to 1.5x
/// their length. Most seam tiles overlap no tile holding constraints (they run as tasks of their
/// own), seam tiles 2, 3, 5 and 6 wait for one tile each.
fn line_with_empty_tiles() -> Body {
    let n = 256u32;
    let x: Vec<Vec3> = (0..n)
        .map(|i| Vec3::new(i as f32 * 0.01, 1.0 + 0.003 * (i as f32).sin(), 0.0))
        .collect();
    let particles = Particles::new(&x, &vec![1.0 / n as f32; n as usize]).unwrap();
    let mut constraints = Constraints::default();
    let d = &mut constraints.distance;
    let mut push = |i: u32, j: u32| {
        let rest = 1.5 * (x[i as usize] - x[j as usize]).length();
        d.push(i, j, rest, 0.0).unwrap();
    };
    for t in [2, 5] {
        for i in 32 * t..32 * t + 31 {
            push(i, i + 1);
        }
    }
    for b in 1..8 {
        for k in 0..8 {
            push(32 * b - 1 - k, 32 * b + k);
        }
    }
    Body::new(particles, constraints, Topology::default()).unwrap()
}

#[test]
fn seam_tiles_beside_empty_tiles_run_and_keep_the_order() {
    let body = line_with_empty_tiles();
    // The scalar twin, so that the comparison with Gauss-Seidel in the promised order sees the
    // order alone: on these chains pulled to 1.5x, the vector kernels' reciprocal estimates
    // differ from it by a few 1e-6 after three iterations.
    let opts = |threads| SolverOptions {
        kernel: Kernel::Scalar,
        ..small_blocks(threads)
    };
    let mut colored = Colored::new(&opts(1), tiles(32)).unwrap();
    let (_, x) = solve(&body, &mut colored, 3);
    let report = colored.tile_report();
    assert_eq!(
        (report.tiles, report.seam_constraints),
        (2, 56),
        "{report:?}"
    );
    let mut gs = GaussSeidel::with_order(tile_order(&body, 32));
    let (_, x_gs) = solve(&body, &mut gs, 3);
    let max_diff = max_abs_diff(&x, &x_gs);
    assert!(max_diff < 1e-6, "max |Δx| = {max_diff}");
    for threads in sparse::thread_counts(&[2, 3]) {
        let mut parallel = Colored::new(&opts(threads), tiles(32)).unwrap();
        let (_, xt) = solve(&body, &mut parallel, 3);
        assert_eq!(
            figures::state_hash(&x),
            figures::state_hash(&xt),
            "1 vs {threads} threads"
        );
    }
}

/// The positions' bits.
fn bits(x: &[solver_core::Packed4]) -> Vec<u32> {
    x.iter()
        .flat_map(|p| [p.x.to_bits(), p.y.to_bits(), p.z.to_bits(), p.w.to_bits()])
        .collect()
}

#[test]
fn iterations_run_as_one_task_graph_give_the_iteration_by_iteration_bits() {
    let mut cases = cloth_tilings();
    cases.push(("line with empty tiles", line_with_empty_tiles(), 32));
    for (scene, body, tile) in cases {
        let mut serial = tiled(tile, 1);
        let (_, x, lambda) = solve_with_multipliers(&body, &mut serial, 8);
        for threads in sparse::thread_counts(&[1, 2, 3]) {
            let mut graph = tiled(tile, threads);
            let (x_all, lambda_all) = solve_all_at_once(&body, &mut graph, 8);
            assert_eq!(
                bits(&x),
                bits(&x_all),
                "{scene}, {threads} threads: positions"
            );
            let lambda_bits = |l: &[f32]| l.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
            assert_eq!(
                lambda_bits(&lambda),
                lambda_bits(&lambda_all),
                "{scene}, {threads} threads: multipliers"
            );
        }
    }
}
