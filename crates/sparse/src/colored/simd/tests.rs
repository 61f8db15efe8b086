//! The SIMD kernels against their scalar twin, range-split invariance, and batch building.

use super::*;
use solver_core::constraints::{project_distance_scalar, DistanceConstraints};
use solver_core::WobbleError;

/// splitmix64: a small deterministic generator, so failures reproduce.
pub(super) struct Rng(pub u64);

impl Rng {
    pub(super) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    pub(super) fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
    pub(super) fn unit(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32
    }
    pub(super) fn range(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * self.unit()
    }
    pub(super) fn shuffle<T>(&mut self, v: &mut [T]) {
        for k in (1..v.len()).rev() {
            v.swap(k, self.below(k + 1));
        }
    }
}

/// Random positions in the unit cube (some exactly -0.0), a fifth of them pinned.
fn random_particles(rng: &mut Rng, n: usize) -> Vec<Packed4> {
    (0..n)
        .map(|_| {
            let mut c = [
                rng.range(-1.0, 1.0),
                rng.range(-1.0, 1.0),
                rng.range(-1.0, 1.0),
            ];
            if rng.below(10) == 0 {
                c[rng.below(3)] = -0.0;
            }
            let w = if rng.below(5) == 0 {
                0.0
            } else {
                rng.range(0.1, 10.0)
            };
            Packed4 {
                x: c[0],
                y: c[1],
                z: c[2],
                w,
            }
        })
        .collect()
}

/// How a random constraint set is drawn.
#[derive(Clone, Copy, Debug)]
enum Pattern {
    /// Random disjoint pairs.
    Scattered,
    /// Runs `(a + t, b + t)` of random lengths.
    Runs,
    /// Runs `(a + 2t, a + 2t + 1)` of random lengths.
    Pairs,
    /// Runs `(a + 2t, b + 2t)` of random lengths.
    Stride2,
    /// All four mixed.
    Mixed,
}

/// Random independent constraints over `n` particles: the table (in a shuffled storage order)
/// and the ids of all its constraints.
fn random_constraints(rng: &mut Rng, x: &[Packed4], pattern: Pattern) -> DistanceConstraints {
    let n = x.len();
    let mut used = vec![false; n];
    let mut pairs: Vec<[u32; 2]> = Vec::new();
    let mut take = |pairs: &mut Vec<[u32; 2]>, i: usize, j: usize| {
        if i < n && j < n && i != j && !used[i] && !used[j] {
            used[i] = true;
            used[j] = true;
            pairs.push(if i.is_multiple_of(3) {
                [j as u32, i as u32]
            } else {
                [i as u32, j as u32]
            });
        }
    };
    for _ in 0..n / 3 {
        let kind = match pattern {
            Pattern::Mixed => rng.below(4),
            Pattern::Scattered => 0,
            Pattern::Runs => 1,
            Pattern::Pairs => 2,
            Pattern::Stride2 => 3,
        };
        let (a, b) = (rng.below(n), rng.below(n));
        let len = 1 + rng.below(40);
        match kind {
            0 => take(&mut pairs, a, b),
            1 => (0..len).for_each(|t| take(&mut pairs, a + t, b + t)),
            2 => (0..len).for_each(|t| take(&mut pairs, a + 2 * t, a + 2 * t + 1)),
            _ => (0..len).for_each(|t| take(&mut pairs, a + 2 * t, b + 2 * t)),
        }
    }
    rng.shuffle(&mut pairs);
    let mut d = DistanceConstraints::default();
    for [i, j] in pairs {
        let len = (x[i as usize].xyz() - x[j as usize].xyz()).length();
        let compliance = if rng.below(2) == 0 {
            0.0
        } else {
            rng.range(1e-6, 1e-2)
        };
        d.push(i, j, len * rng.range(0.5, 1.5), compliance).unwrap();
    }
    d
}

fn bits(x: &[Packed4]) -> Vec<[u32; 4]> {
    x.iter()
        .map(|p| [p.x.to_bits(), p.y.to_bits(), p.z.to_bits(), p.w.to_bits()])
        .collect()
}

/// Relative tolerance of one SIMD projection against the scalar one: reciprocal estimates plus
/// a Newton step and FMA differ from sqrt and two divisions by a few ulp of the values.
const TOL: f32 = 2e-5;

fn assert_close(what: &str, simd: f32, scalar: f32, scale: f32) {
    assert!(
        (simd - scalar).abs() <= TOL * scale.max(scalar.abs()),
        "{what}: simd {simd} vs scalar {scalar}"
    );
}

/// The vector kernels this CPU can run; those it cannot are printed as skipped, by name.
pub(super) fn vector_kernels(test: &str) -> Vec<Kernel> {
    Kernel::CONCRETE[1..]
        .iter()
        .copied()
        .filter(|k| {
            let ok = k.available();
            if !ok {
                eprintln!("{test}: kernel {k} skipped: this CPU lacks {}", k.needs());
            }
            ok
        })
        .collect()
}

/// Projects `b` with `kernel` and the scalar twin from the same state. With
/// `enhanced-determinism` the bits must be the scalar twin's; else they must agree within
/// [`TOL`], w must never change, and pinned particles must keep their bits. Particles outside
/// the batch always keep theirs.
fn check_against_scalar(kernel: Kernel, x0: &[Packed4], b: &EdgeBatch, rng: &mut Rng) {
    let lam0: Vec<f32> = (0..b.len()).map(|_| rng.range(-0.01, 0.01)).collect();
    for (inv_dt2, k) in [(0.0, 1.0), (3600.0, 1.0), (14400.0, 0.7)] {
        let (mut xs, mut ls) = (x0.to_vec(), lam0.clone());
        let (mut xv, mut lv) = (x0.to_vec(), lam0.clone());
        project_batch_with(Kernel::Scalar, &mut xs, b, &mut ls, inv_dt2, k).unwrap();
        project_batch_with(kernel, &mut xv, b, &mut lv, inv_dt2, k).unwrap();
        let mut in_batch = vec![false; x0.len()];
        for c in 0..b.len() {
            let [i, j] = b.pair(c);
            in_batch[i as usize] = true;
            in_batch[j as usize] = true;
            if DETERMINISTIC {
                assert_eq!(lv[c].to_bits(), ls[c].to_bits(), "{kernel}: lambda {c}");
            } else {
                assert_close("lambda", lv[c], ls[c], b.rest(c));
            }
        }
        for (p, ((v, s), o)) in xv.iter().zip(&xs).zip(x0).enumerate() {
            if !in_batch[p] {
                assert_eq!(
                    bits(&[*v]),
                    bits(&[*o]),
                    "{kernel}: particle {p} is not in the batch"
                );
            }
            if DETERMINISTIC {
                assert_eq!(bits(&[*v]), bits(&[*s]), "{kernel}: particle {p}");
                continue;
            }
            assert_eq!(
                v.w.to_bits(),
                o.w.to_bits(),
                "{kernel}: w of particle {p} changed"
            );
            if o.w == 0.0 {
                assert_eq!(
                    bits(&[*v]),
                    bits(&[*o]),
                    "{kernel}: pinned particle {p} moved"
                );
            }
            for (a, b_) in [(v.x, s.x), (v.y, s.y), (v.z, s.z)] {
                assert_close("position", a, b_, 1.0);
            }
        }
    }
}

fn all_ids(d: &DistanceConstraints) -> Vec<u32> {
    (0..d.len() as u32).collect()
}

#[test]
fn kernels_match_scalar_on_random_batches() {
    let kernels = vector_kernels("kernels_match_scalar_on_random_batches");
    let mut rng = Rng(7);
    let mut seen = BatchLayout::default();
    let mut zero_lengths = 0;
    for round in 0..80 {
        let pattern = [
            Pattern::Scattered,
            Pattern::Runs,
            Pattern::Pairs,
            Pattern::Stride2,
            Pattern::Mixed,
        ][round % 5];
        let n = 2 + rng.below(400);
        let mut x = random_particles(&mut rng, n);
        let table = random_constraints(&mut rng, &x, pattern);
        // Some constraints with both particles at one place (|d| = 0: skipped by every kernel).
        for [i, j] in table.pairs.iter().step_by(7) {
            x[*j as usize] = Packed4 {
                w: x[*j as usize].w,
                ..x[*i as usize]
            };
            zero_lengths += 1;
        }
        // A random subset too, so lengths are not always what the patterns give.
        let mut ids = all_ids(&table);
        ids.truncate(rng.below(ids.len() + 1));
        let b = EdgeBatch::new(&table, &ids, n).unwrap();
        assert_eq!(b.len(), ids.len());
        assert!(b.quads_hold());
        let l = b.layout();
        assert_eq!(l.in_runs + l.in_pairs + l.in_stride2 + l.gathered, b.len());
        seen.in_runs += l.in_runs;
        seen.in_pairs += l.in_pairs;
        seen.in_stride2 += l.in_stride2;
        seen.gathered += l.gathered;
        seen.mixed_blocks += l.mixed_blocks;
        for &kernel in &kernels {
            check_against_scalar(kernel, &x, &b, &mut rng);
        }
    }
    // Every load path of the kernels was exercised.
    assert!(seen.in_runs > 0 && seen.in_pairs > 0 && seen.in_stride2 > 0);
    assert!(seen.gathered > 0 && seen.mixed_blocks > 0, "{seen:?}");
    assert!(zero_lengths > 0);
    // The portable kernel runs everywhere, so at least one kernel was tested.
    assert!(kernels.contains(&Kernel::Portable));
}

#[test]
fn auto_is_the_best_available_kernel_and_refusals_name_the_cpu() {
    let best = Kernel::best();
    assert!(best.available() && best != Kernel::Auto && best != Kernel::Scalar);
    assert_eq!(Kernel::Auto.resolve().unwrap(), best);
    // Nothing faster than `best` is available.
    let rank = |k: Kernel| Kernel::CONCRETE.iter().position(|&c| c == k).unwrap();
    for k in Kernel::CONCRETE {
        assert!(!k.available() || rank(k) <= rank(best), "{k} beats {best}");
        match k.resolve() {
            Ok(r) => assert_eq!(r, k),
            Err(e) => {
                assert!(!k.available());
                let text = e.to_string();
                assert!(
                    text.contains(k.name()) && text.contains(k.needs()),
                    "{text}"
                );
                assert!(text.contains(&cpu_features().join(" ")), "{text}");
            }
        }
        assert_eq!(k.name().parse::<Kernel>().unwrap(), k);
    }
    assert!("sse9".parse::<Kernel>().is_err());
}

#[test]
fn batch_keeps_every_constraint_once_and_ids_index_lambda() {
    let mut rng = Rng(11);
    let x = random_particles(&mut rng, 300);
    let table = random_constraints(&mut rng, &x, Pattern::Mixed);
    let b = EdgeBatch::new(&table, &all_ids(&table), x.len()).unwrap();
    let mut sorted = b.ids.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, all_ids(&table));
    // The scalar twin in batch order equals the reference scalar sweep over the table in the
    // order `ids`, with multipliers in global numbering: bit for bit.
    let lam0: Vec<f32> = (0..table.len()).map(|_| rng.range(-0.01, 0.01)).collect();
    let (mut xa, mut la) = (
        x.clone(),
        b.ids.iter().map(|&g| lam0[g as usize]).collect::<Vec<_>>(),
    );
    project_batch_with(Kernel::Scalar, &mut xa, &b, &mut la, 3600.0, 1.0).unwrap();
    let (mut xb, mut lb) = (x.clone(), lam0.clone());
    let order = b.ids.iter().map(|&g| g as usize);
    project_distance_scalar(&mut xb, &table, order, &mut lb, 3600.0, 1.0);
    assert_eq!(bits(&xa), bits(&xb));
    for (k, &g) in b.ids.iter().enumerate() {
        assert_eq!(la[k].to_bits(), lb[g as usize].to_bits());
        let [i, j] = table.pairs[g as usize];
        assert_eq!(b.pair(k), [i.min(j), i.max(j)]);
    }
}

/// Projects `b` with `kernel` in random ranges starting at multiples of LANES (some ending
/// mid-block).
fn project_in_ranges(
    kernel: Kernel,
    x: &mut [Packed4],
    b: &EdgeBatch,
    lambda: &mut [f32],
    rng: &mut Rng,
) {
    let mut start = 0;
    while start < b.len() {
        let end = if rng.below(3) == 0 {
            b.len()
        } else {
            (start + LANES * (1 + rng.below(3))).min(b.len())
        };
        // SAFETY: `kernel` is available; `x` and `lambda` are the batch's, held exclusively.
        unsafe {
            project_batch_range(
                kernel,
                x.as_mut_ptr(),
                b,
                start..end,
                lambda.as_mut_ptr(),
                3600.0,
                1.0,
            )
        };
        start = end;
    }
}

#[test]
fn ranges_at_multiples_of_lanes_give_identical_bits() {
    let mut rng = Rng(13);
    let kernels = vector_kernels("ranges_at_multiples_of_lanes_give_identical_bits");
    for round in 0..40 {
        let kernel = kernels[round % kernels.len()];
        let pattern = [
            Pattern::Mixed,
            Pattern::Runs,
            Pattern::Pairs,
            Pattern::Stride2,
        ][round % 4];
        let n = 50 + rng.below(600);
        let x0 = random_particles(&mut rng, n);
        let table = random_constraints(&mut rng, &x0, pattern);
        let b = EdgeBatch::new(&table, &all_ids(&table), n).unwrap();
        let lam0: Vec<f32> = (0..b.len()).map(|_| rng.range(-0.01, 0.01)).collect();
        let (mut whole, mut lw) = (x0.clone(), lam0.clone());
        project_batch_with(kernel, &mut whole, &b, &mut lw, 3600.0, 1.0).unwrap();
        for _ in 0..3 {
            let (mut split, mut ls) = (x0.clone(), lam0.clone());
            project_in_ranges(kernel, &mut split, &b, &mut ls, &mut rng);
            assert_eq!(bits(&split), bits(&whole), "{kernel}, round {round}");
            let lb = |l: &[f32]| l.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
            assert_eq!(lb(&ls), lb(&lw));
        }
    }
}

#[test]
fn a_range_ending_mid_block_projects_only_its_constraints() {
    for kernel in vector_kernels("a_range_ending_mid_block_projects_only_its_constraints") {
        let mut rng = Rng(17);
        let x0 = random_particles(&mut rng, 500);
        let table = random_constraints(&mut rng, &x0, Pattern::Runs);
        let b = EdgeBatch::new(&table, &all_ids(&table), x0.len()).unwrap();
        assert!(b.len() > 2 * LANES);
        let end = LANES + 5;
        let (mut x, mut lam) = (x0.clone(), vec![0.0; b.len()]);
        // SAFETY: `kernel` is available; `x` and `lam` are the batch's, held exclusively.
        unsafe {
            project_batch_range(
                kernel,
                x.as_mut_ptr(),
                &b,
                0..end,
                lam.as_mut_ptr(),
                0.0,
                1.0,
            )
        };
        // The same constraints through the scalar twin of a batch holding just them.
        let first: Vec<u32> = b.ids[..end].to_vec();
        let sub = EdgeBatch::new(&table, &first, x0.len()).unwrap();
        let (mut xs, mut ls) = (x0.clone(), vec![0.0; sub.len()]);
        project_batch_with(Kernel::Scalar, &mut xs, &sub, &mut ls, 0.0, 1.0).unwrap();
        for (p, (a, s)) in x.iter().zip(&xs).enumerate() {
            for (u, v) in [(a.x, s.x), (a.y, s.y), (a.z, s.z)] {
                assert_close(&format!("{kernel}: particle {p}"), u, v, 1.0);
            }
        }
        assert!(lam[end..].iter().all(|&l| l == 0.0));
    }
}

/// Greedy coloring in storage order (first color free at both ends), as the solver does.
fn greedy_colors(d: &DistanceConstraints, n: usize) -> Vec<Vec<u32>> {
    let mut used: Vec<u64> = vec![0; n];
    let mut colors: Vec<Vec<u32>> = Vec::new();
    for (c, &[i, j]) in d.pairs.iter().enumerate() {
        let free = (!(used[i as usize] | used[j as usize])).trailing_zeros() as usize;
        used[i as usize] |= 1 << free;
        used[j as usize] |= 1 << free;
        if colors.len() <= free {
            colors.resize(free + 1, Vec::new());
        }
        colors[free].push(c as u32);
    }
    colors
}

#[test]
fn cloth_colors_load_mostly_as_windows_and_match_scalar_over_iterations() {
    // The standard cloth of docs/SCENES.md at n = 32 (the builder with its settings).
    let mut body = solver_core::build::Cloth::new()
        .resolution(32, 32)
        .at(solver_core::glam::Vec3::Y)
        .pin_corners()
        .build()
        .unwrap();
    let n = body.particles().x().len();
    let d = &body.constraints().distance;
    let colors = greedy_colors(d, n);
    assert_eq!(colors.len(), 6);
    let batches: Vec<EdgeBatch> = colors
        .iter()
        .map(|c| EdgeBatch::new(d, c, n).unwrap())
        .collect();
    assert!(batches.iter().all(|b| b.quads_hold()));
    let total: usize = batches.iter().map(|b| b.len()).sum();
    assert_eq!(total, d.len());
    let gathered: usize = batches.iter().map(|b| b.layout().gathered).sum();
    assert!(
        gathered * 5 < total,
        "{gathered} of {total} cloth constraints gathered one by one"
    );
    // Sag the cloth a little so that constraints are violated, then iterate both paths.
    for (v, p) in body.particles_mut().x_mut().iter_mut().enumerate() {
        if p.w != 0.0 {
            p.y -= 0.01 * ((v * 7919) % 13) as f32;
        }
    }
    let x0 = body.particles().x().to_vec();
    for kernel in vector_kernels("cloth_colors_load_mostly_as_windows") {
        let (mut xv, mut xs) = (x0.clone(), x0.clone());
        let mut lv: Vec<Vec<f32>> = batches.iter().map(|b| vec![0.0; b.len()]).collect();
        let mut ls = lv.clone();
        for _ in 0..8 {
            for (bi, b) in batches.iter().enumerate() {
                project_batch_with(kernel, &mut xv, b, &mut lv[bi], 0.0, 1.0).unwrap();
                project_batch_with(Kernel::Scalar, &mut xs, b, &mut ls[bi], 0.0, 1.0).unwrap();
            }
        }
        if DETERMINISTIC {
            assert_eq!(bits(&xv), bits(&xs), "{kernel}");
        }
        for (p, (a, s)) in xv.iter().zip(&xs).enumerate() {
            for (u, v) in [(a.x, s.x), (a.y, s.y), (a.z, s.z)] {
                assert!((u - v).abs() < 1e-4, "{kernel}: particle {p}: {u} vs {v}");
            }
        }
        assert_eq!(bits(&xv[..1]), bits(&x0[..1]));
        assert_eq!(bits(&xv[31..32]), bits(&x0[31..32]));
    }
}

#[test]
fn new_rejects_dependent_and_out_of_range_constraints() {
    let mut d = DistanceConstraints::default();
    d.push(0, 1, 1.0, 0.0).unwrap();
    d.push(1, 2, 1.0, 0.0).unwrap();
    d.push(3, 9, 1.0, 0.0).unwrap();
    assert!(matches!(
        EdgeBatch::new(&d, &[0, 1], 10),
        Err(WobbleError::RepeatedParticle {
            index: 1,
            particle: 1,
            ..
        })
    ));
    assert!(matches!(
        EdgeBatch::new(&d, &[0, 0], 10),
        Err(WobbleError::RepeatedParticle { .. })
    ));
    assert!(matches!(
        EdgeBatch::new(&d, &[0, 3], 10),
        Err(WobbleError::IndexOutOfRange { value: 3, .. })
    ));
    assert!(matches!(
        EdgeBatch::new(&d, &[2], 9),
        Err(WobbleError::IndexOutOfRange {
            value: 9,
            len: 9,
            ..
        })
    ));
    // Memory scales with the batch, not with the particle count it is checked against.
    assert_eq!(EdgeBatch::new(&d, &[2], usize::MAX).unwrap().len(), 1);
    let b = EdgeBatch::new(&d, &[0, 2], 10).unwrap();
    assert_eq!(b.len(), 2);
    assert_eq!(b.particles_needed(), 10);
    let empty = EdgeBatch::new(&d, &[], 10).unwrap();
    assert!(empty.is_empty());
    project_batch_with(Kernel::Auto, &mut [], &empty, &mut [], 0.0, 1.0).unwrap();
}
