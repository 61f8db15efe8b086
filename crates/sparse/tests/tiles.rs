//! The colored solver's tiled schedule: which bodies are tiled, that an iteration is exactly a
//! Gauss-Seidel sweep in tile order, that threads do not change a bit, and that it converges
//! like the whole-body sweep.

mod common;

use common::{cloth_with_extra_kinds, predicted, solve};
use solver_core::{figures, scenes, step, Body, GaussSeidel, Solver, StepParams};
use sparse::ordering::{apply_ordering, Ordering};
use sparse::{Colored, Coloring, Incidence, SolverOptions};

/// Tiles of `tile` particles, small blocks so that the parallel paths run on test scenes.
fn tiled(tile: usize, threads: usize) -> SolverOptions {
    SolverOptions {
        threads,
        tile_particles: tile,
        chunk: 32,
        parallel_threshold: 64,
        ..Default::default()
    }
}

/// The order the tiled schedule promises: per tile, its colors' constraints whose particles
/// all lie in the tile; then per color every other constraint (seams, other kinds).
fn tile_order(body: &Body, tile: usize) -> Vec<u32> {
    let inc = Incidence::new(&body.constraints, body.len()).unwrap();
    let coloring = Coloring::greedy(&inc);
    let nd = body.constraints.distance.len();
    let tile_of = |g: u32| {
        let g = g as usize;
        if g >= nd {
            return None;
        }
        let [i, j] = body.constraints.distance.pairs[g];
        (i as usize / tile == j as usize / tile).then_some(i as usize / tile)
    };
    let tiles = body.len().div_ceil(tile);
    let mut order = Vec::new();
    for t in 0..tiles {
        for k in 0..coloring.colors() {
            order.extend(coloring.color(k).iter().filter(|&&g| tile_of(g) == Some(t)));
        }
    }
    for k in 0..coloring.colors() {
        order.extend(coloring.color(k).iter().filter(|&&g| tile_of(g).is_none()));
    }
    order
}

#[test]
fn a_tiled_iteration_is_gauss_seidel_in_tile_order() {
    for (scene, body, tile) in [
        (
            "cloth 32, tiles of 64",
            predicted(scenes::cloth(32).unwrap(), 5),
            64,
        ),
        (
            "cloth 32, tiles of 100",
            predicted(scenes::cloth(32).unwrap(), 5),
            100,
        ),
        (
            "cloth+area+floor",
            predicted(cloth_with_extra_kinds(24), 5),
            48,
        ),
    ] {
        let mut colored = Colored::new(&tiled(tile, 1)).unwrap();
        let (_, x) = solve(&body, &mut colored, 1);
        let report = colored.tile_report();
        assert!(report.tiles >= 4, "{scene}: {report:?}");
        assert!(
            2 * report.tiled_constraints >= body.constraints.distance.len(),
            "{scene}: {report:?}"
        );
        let mut gs = GaussSeidel::with_order(tile_order(&body, tile));
        let (_, x_gs) = solve(&body, &mut gs, 1);
        let max_diff = x
            .iter()
            .zip(&x_gs)
            .map(|(a, b)| (a.xyz() - b.xyz()).abs().max_element())
            .fold(0.0f32, f32::max);
        assert!(max_diff < 1e-6, "{scene}: max |Δx| = {max_diff}");
    }
}

#[test]
fn tiled_colored_gives_the_same_bits_for_1_2_and_3_threads() {
    let run = |threads: usize| {
        let mut body = scenes::cloth(32).unwrap();
        body.attach(31).unwrap();
        let mut solver = Colored::new(&tiled(64, threads)).unwrap();
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
            figures::state_hash(&body.particles.x),
            body.scratch.lambda.clone(),
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
    let mut tiles = Colored::new(&tiled(64, 1)).unwrap();
    let mut whole = Colored::new(&tiled(0, 1)).unwrap();
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
    let mut colored = Colored::new(&tiled(64, 1)).unwrap();
    colored
        .prepare(
            &shuffled.constraints,
            shuffled.len(),
            shuffled.topology_id(),
        )
        .unwrap();
    assert_eq!(colored.tile_report().tiles, 0);
    // Fewer than four tiles' worth of particles (225 < 4 x 64).
    let small = scenes::cloth(15).unwrap();
    colored
        .prepare(&small.constraints, small.len(), small.topology_id())
        .unwrap();
    assert_eq!(colored.tile_report().tiles, 0);
    // The natural numbering of the same cloth is tiled; every distance constraint is either in
    // a tile or in the whole-body sweep, and the multipliers cover them all.
    let natural = scenes::cloth(32).unwrap();
    colored
        .prepare(&natural.constraints, natural.len(), natural.topology_id())
        .unwrap();
    let report = colored.tile_report();
    assert_eq!(report.tiles, 16);
    assert_eq!(report.tile_particles, 64);
    assert!(report.tiled_constraints < natural.constraints.distance.len());
    assert_eq!(colored.colors(), Some(6));
}
