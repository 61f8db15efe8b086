//! Incidence and coloring: the CSR structures agree with nalgebra-sparse, colorings are
//! conflict-free for every arity, the cloth colors greedily in 6 colors.

mod common;

use common::{cloth_with_extra_kinds, Tuples};
use proptest::prelude::*;
use solver_core::Constraints;
use sparse::colored::simd::LANES;
use sparse::{Coloring, CsrPattern, Incidence, LaneSplit};

fn tuples(n: usize, ids: Vec<Vec<u32>>) -> (Constraints, usize) {
    let mut c = Constraints::default();
    c.push_kind(Box::new(Tuples::new(ids)));
    (c, n)
}

#[test]
fn incidence_rows_follow_constraint_slots_and_transpose_matches_nalgebra() {
    let body = cloth_with_extra_kinds(6);
    let inc = Incidence::new(body.constraints(), body.len()).unwrap();
    assert_eq!(inc.constraints(), body.constraints().len());
    assert_eq!(inc.particles(), body.len());
    let mut g = 0;
    for kind in body.constraints().kinds() {
        for c in 0..kind.len() {
            assert_eq!(inc.constraint_particles.row(g), kind.particles(c));
            g += 1;
        }
    }
    let ours = inc.particle_constraints.to_sparsity_pattern().unwrap();
    let theirs = inc
        .constraint_particles
        .to_sparsity_pattern()
        .unwrap()
        .transpose();
    assert_eq!(ours, theirs);
    // Every entry of Bᵀ points at the same (constraint, particle) entry of B.
    let b = &inc.constraint_particles;
    for p in 0..inc.particles() {
        for e in inc.particle_constraints.row_range(p) {
            let g = inc.particle_constraints.indices()[e] as usize;
            let be = inc.particle_entries[e] as usize;
            assert!(b.row_range(g).contains(&be));
            assert_eq!(b.indices()[be] as usize, p);
        }
    }
    // Round trip through nalgebra-sparse (rows sorted there).
    let back = CsrPattern::from_sparsity_pattern(&ours).unwrap();
    assert_eq!(back, inc.particle_constraints);
}

#[test]
fn incidence_rejects_out_of_range_particles() {
    let (c, _) = tuples(3, vec![vec![0, 5]]);
    assert!(Incidence::new(&c, 3).is_err());
    assert!(CsrPattern::new(vec![0, 2], vec![0, 3], 3).is_err());
    assert!(CsrPattern::new(vec![0, 3], vec![0, 1], 3).is_err());
}

#[test]
fn cloth_colors_greedily_in_six_balanced_colors() {
    for n in [4, 16, 33] {
        let body = scenes::cloth(n).unwrap();
        let inc = Incidence::new(body.constraints(), body.len()).unwrap();
        let coloring = Coloring::greedy(&inc);
        coloring.check(&inc).unwrap();
        assert_eq!(coloring.colors(), 6, "n = {n}");
        let report = coloring.report(body.constraints().distance.len());
        assert_eq!(report.sizes.iter().sum::<usize>(), body.constraints().len());
        if n >= 16 {
            // Horizontal edges split in 2 colors, vertical in 2, diagonals in 2: sizes about
            // n²/2 each, so the largest is within 10% of the mean.
            assert!(report.balance < 1.1, "n = {n}: {report:?}");
        }
        for (k, split) in report.lanes.iter().enumerate() {
            assert_eq!(
                split.simd_groups * LANES + split.scalar_tail,
                coloring.color(k).len()
            );
            assert_eq!(split.generic, 0);
        }
    }
}

#[test]
fn rope_colors_in_two() {
    let body = scenes::rope(50).unwrap();
    let inc = Incidence::new(body.constraints(), body.len()).unwrap();
    let greedy = Coloring::greedy(&inc);
    greedy.check(&inc).unwrap();
    assert_eq!(greedy.colors(), 2);
    let random = Coloring::randomized(&inc, 3, 1.0).unwrap();
    random.check(&inc).unwrap();
    assert!(random.colors() <= 3, "{}", random.colors());
}

#[test]
fn arity_three_and_one_constraints_are_colored_with_the_distance_ones() {
    let body = cloth_with_extra_kinds(8);
    let inc = Incidence::new(body.constraints(), body.len()).unwrap();
    for coloring in [
        Coloring::greedy(&inc),
        Coloring::randomized(&inc, 7, 2.0).unwrap(),
    ] {
        coloring.check(&inc).unwrap();
        let nd = body.constraints().distance.len();
        let report = coloring.report(nd);
        let generic: usize = report.lanes.iter().map(|l| l.generic).sum();
        assert_eq!(generic, body.constraints().len() - nd);
        // Each color is an independent set, checked again by brute force.
        for k in 0..coloring.colors() {
            let mut seen = vec![false; body.len()];
            for &g in coloring.color(k) {
                let (kind, c) = body.constraints().locate(g as usize);
                for &p in kind.particles(c) {
                    assert!(!seen[p as usize], "color {k} repeats particle {p}");
                    seen[p as usize] = true;
                }
            }
        }
    }
}

#[test]
fn checker_catches_a_conflict() {
    // Constraints 0 and 1 share particle 1; a coloring made for a different graph puts them
    // in one color.
    let (c_conflict, n) = tuples(4, vec![vec![0, 1, 2], vec![1, 3]]);
    let (c_free, _) = tuples(4, vec![vec![0, 2], vec![1, 3]]);
    let free = Incidence::new(&c_free, n).unwrap();
    let one_color = Coloring::greedy(&free);
    assert_eq!(one_color.colors(), 1);
    let conflict = Incidence::new(&c_conflict, n).unwrap();
    assert!(one_color.check(&conflict).is_err());
    assert!(Coloring::greedy(&conflict).check(&conflict).is_ok());
}

#[test]
fn randomized_coloring_is_seeded_and_rejects_bad_shrink() {
    let body = scenes::cloth(12).unwrap();
    let inc = Incidence::new(body.constraints(), body.len()).unwrap();
    let a = Coloring::randomized(&inc, 5, 2.0).unwrap();
    let b = Coloring::randomized(&inc, 5, 2.0).unwrap();
    assert_eq!(a, b);
    a.check(&inc).unwrap();
    assert!(Coloring::randomized(&inc, 5, 0.5).is_err());
    assert!(Coloring::randomized(&inc, 5, f32::NAN).is_err());
}

#[test]
fn lane_split_counts_distance_constraints_first() {
    let ids: Vec<u32> = (0..21).chain(100..103).collect();
    assert_eq!(
        LaneSplit::of(&ids, 50),
        LaneSplit {
            simd_groups: 21 / LANES,
            scalar_tail: 21 % LANES,
            generic: 3
        }
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn colorings_of_random_constraints_of_arity_one_to_four_are_conflict_free(
        n in 4usize..40,
        raw in prop::collection::vec(prop::collection::vec(0u32..1000, 1..=4), 0..120),
        seed in 0u64..1000,
    ) {
        // Distinct particles per constraint, in range.
        let ids: Vec<Vec<u32>> = raw
            .into_iter()
            .map(|t| {
                let mut out: Vec<u32> = Vec::new();
                for p in t {
                    let p = p % n as u32;
                    if !out.contains(&p) {
                        out.push(p);
                    }
                }
                out
            })
            .collect();
        let (c, n) = tuples(n, ids);
        let inc = Incidence::new(&c, n).unwrap();
        let greedy = Coloring::greedy(&inc);
        prop_assert!(greedy.check(&inc).is_ok());
        let random = Coloring::randomized(&inc, seed, 2.0).unwrap();
        prop_assert!(random.check(&inc).is_ok());
        // Greedy never needs more than (largest degree + 1) colors.
        let max_degree = (0..inc.constraints())
            .map(|g| {
                let mut nb: Vec<u32> = inc
                    .constraint_particles
                    .row(g)
                    .iter()
                    .flat_map(|&p| inc.particle_constraints.row(p as usize).iter().copied())
                    .filter(|&h| h as usize != g)
                    .collect();
                nb.sort_unstable();
                nb.dedup();
                nb.len()
            })
            .max()
            .unwrap_or(0);
        prop_assert!(greedy.colors() <= max_degree + 1);
    }
}

#[test]
fn incidence_without_entries_matches_the_full_one() {
    let body = cloth_with_extra_kinds(7);
    let full = Incidence::new(body.constraints(), body.len()).unwrap();
    let lean = Incidence::without_entries(body.constraints(), body.len()).unwrap();
    assert_eq!(full.constraint_particles, lean.constraint_particles);
    assert_eq!(full.particle_constraints, lean.particle_constraints);
    assert!(lean.particle_entries.is_empty());
    assert_eq!(full.particle_entries.len(), full.constraint_particles.nnz());
}
