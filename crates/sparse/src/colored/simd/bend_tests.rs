//! The bend and tether kernels against their scalar twin, and the twin against the generic
//! scalar path (`project_generic`, `project_tethers`), on random batches with pinned particles,
//! degenerate, flat and folded stencils and the dihedral trust region.

use super::tests::{vector_kernels, Rng};
use super::*;
use solver_core::constraints::bending::DIHEDRAL_MAX_STEP;
use solver_core::constraints::{
    project_generic, project_tethers, ConstraintKind, DihedralBending, IsometricBending, Tethers,
};
use solver_core::glam::Vec3;

#[test]
fn atan2_is_within_its_stated_error_in_every_quadrant() {
    let mut rng = Rng(3);
    let mut worst = 0.0f64;
    for k in 0..200_000 {
        let scale = 10f32.powi(rng.below(13) as i32 - 6);
        let (mut y, mut x) = (rng.range(-1.0, 1.0) * scale, rng.range(-1.0, 1.0) * scale);
        if k % 97 == 0 {
            y = 0.0;
        }
        if k % 89 == 0 {
            x = 0.0;
        }
        if y == 0.0 && x == 0.0 {
            continue;
        }
        let got = atan2_scalar(y, x) as f64;
        // The kernels' convention on the fold: +π for y = ±0, x < 0.
        let want = if y == 0.0 {
            (0.0f64).atan2(x as f64)
        } else {
            (y as f64).atan2(x as f64)
        };
        worst = worst.max((got - want).abs());
    }
    println!("atan2: worst error {worst:.3e} rad");
    assert!(worst <= ATAN_MAX_ERROR as f64, "worst error {worst}");
    use std::f32::consts::{FRAC_PI_2, PI};
    assert_eq!(atan2_scalar(0.0, 1.0), 0.0);
    assert_eq!(atan2_scalar(1.0, 0.0), FRAC_PI_2);
    assert_eq!(atan2_scalar(-1.0, 0.0), -FRAC_PI_2);
    assert_eq!(atan2_scalar(0.0, -1.0), PI);
    assert_eq!(atan2_scalar(-0.0, -1.0), PI);
    // Odd in y: the mirror image has the opposite angle, bit for bit.
    for (y, x) in [(0.3, 0.9), (2.0, -0.1), (1e-4, -1.0), (5.0, 5.0)] {
        assert_eq!(atan2_scalar(-y, x), -atan2_scalar(y, x), "({y}, {x})");
    }
}

/// What the random stencils are made of.
#[derive(Default, Debug)]
struct Seen {
    degenerate: usize,
    flat: usize,
    folded: usize,
    pinned: usize,
    clamped: usize,
}

/// `min`, `max`, `keep_or_zero` and `negate_where` (mask `a < b`) of every pair of `a`, `b` on
/// instruction set `I`, as bits: `[min, max, keep, negated]` per pair.
#[inline(always)]
unsafe fn lane_ops<I: super::block::Isa>(a: &[f32], b: &[f32]) -> Vec<[u32; 4]> {
    let mut out = Vec::with_capacity(a.len());
    let mut lanes = vec![[0.0f32; 4]; I::WIDTH];
    for (ca, cb) in a.chunks_exact(I::WIDTH).zip(b.chunks_exact(I::WIDTH)) {
        let (va, vb) = (I::load(ca.as_ptr()), I::load(cb.as_ptr()));
        let m = I::lt(va, vb);
        let results = [
            I::min(va, vb),
            I::max(va, vb),
            I::keep_or_zero(m, va),
            I::negate_where(m, va),
        ];
        for (r, v) in results.into_iter().enumerate() {
            let mut buf = vec![0.0f32; I::WIDTH];
            I::store(buf.as_mut_ptr(), v);
            for (l, x) in buf.into_iter().enumerate() {
                lanes[l][r] = x;
            }
        }
        out.extend(lanes.iter().map(|l| l.map(f32::to_bits)));
    }
    out
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn lane_ops_avx2(a: &[f32], b: &[f32]) -> [Vec<[u32; 4]>; 2] {
    [
        lane_ops::<super::avx2::Avx2x1>(a, b),
        lane_ops::<super::avx2::Avx2>(a, b),
    ]
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn lane_ops_avx512(a: &[f32], b: &[f32]) -> Vec<[u32; 4]> {
    lane_ops::<super::avx512::Avx512>(a, b)
}

#[test]
fn native_min_max_and_sign_masks_give_the_scalar_twins_bits() {
    // x86's `minps`/`maxps` return the second operand on NaN and on ±0 pairs, which is the
    // twin's `a < b ? a : b`; the and-masks and sign flips must keep NaN, ±0 and infinities.
    let special = [
        0.0,
        -0.0,
        1.0,
        -1.0,
        2.5,
        -3.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        -f32::NAN,
        f32::MIN_POSITIVE,
        1e-40,
        -1e-40,
    ];
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for &x in &special {
        for &y in &special {
            a.push(x);
            b.push(y);
        }
    }
    // Whole vectors of every width (16 divides the padded count).
    while a.len() % 16 != 0 {
        a.push(1.0);
        b.push(-1.0);
    }
    // SAFETY: the f32 `Lane` needs no instruction set.
    let twin: Vec<[u32; 4]> = a
        .iter()
        .zip(&b)
        .map(|(&x, &y)| unsafe {
            use super::lane::Lane;
            // Qualified: `x.min(y)` would be the inherent `f32::min`.
            let m = <f32 as Lane>::lt(x, y);
            [
                <f32 as Lane>::min(x, y),
                <f32 as Lane>::max(x, y),
                <f32 as Lane>::keep_or_zero(m, x),
                <f32 as Lane>::negate_where(m, x),
            ]
            .map(f32::to_bits)
        })
        .collect();
    let mut got: Vec<(&str, Vec<[u32; 4]>)> = Vec::new();
    // SAFETY: `Portable` runs on every target.
    got.push(("portable", unsafe {
        lane_ops::<super::portable::Portable>(&a, &b)
    }));
    #[cfg(target_arch = "x86_64")]
    for k in vector_kernels("native_min_max_and_sign_masks_give_the_scalar_twins_bits") {
        // SAFETY: `vector_kernels` lists only kernels the CPU has.
        match k {
            Kernel::Avx2 => {
                let [one, two] = unsafe { lane_ops_avx2(&a, &b) };
                got.push(("avx2 (one register)", one));
                got.push(("avx2 (two registers)", two));
            }
            Kernel::Avx512 => got.push(("avx512", unsafe { lane_ops_avx512(&a, &b) })),
            _ => {}
        }
    }
    for (name, bits) in got {
        for (i, (g, t)) in bits.iter().zip(&twin).enumerate() {
            assert_eq!(
                g, t,
                "{name}: a = {}, b = {}: [min, max, keep, negate] bits differ",
                a[i], b[i]
            );
        }
    }
}

fn v(rng: &mut Rng, a: f32) -> Vec3 {
    Vec3::new(rng.range(-a, a), rng.range(-a, a), rng.range(-a, a))
}

/// `count` stencils of four distinct particles each (indices scattered over the particles),
/// of every configuration; a tenth of the particles pinned.
fn random_stencils(rng: &mut Rng, count: usize, seen: &mut Seen) -> (Vec<Packed4>, Vec<[u32; 4]>) {
    let n = 4 * count + 7;
    let mut order: Vec<u32> = (0..n as u32).collect();
    rng.shuffle(&mut order);
    let mut x = vec![Packed4::new(Vec3::ZERO, 1.0); n];
    let mut stencils = Vec::with_capacity(count);
    for c in 0..count {
        let s: [u32; 4] = core::array::from_fn(|k| order[4 * c + k]);
        let o = v(rng, 2.0);
        let e = Vec3::new(rng.range(0.05, 0.5), 0.0, 0.0) + v(rng, 0.02);
        let wing = |rng: &mut Rng, side: f32, lift: f32| {
            Vec3::new(rng.range(-0.1, 0.6), side * rng.range(0.05, 0.5), lift)
        };
        let p: [Vec3; 4] = match rng.below(6) {
            0 => {
                seen.flat += 1;
                let small = || 0.0;
                [
                    Vec3::ZERO,
                    e,
                    wing(rng, 1.0, small()),
                    wing(rng, -1.0, small()),
                ]
            }
            1 => {
                // x3 on x2's side: a fold near θ = ±π.
                seen.folded += 1;
                let (l2, l3) = (rng.range(-0.01, 0.01), rng.range(-0.01, 0.01));
                [Vec3::ZERO, e, wing(rng, 1.0, l2), wing(rng, 1.0, l3)]
            }
            2 => {
                seen.degenerate += 1;
                match rng.below(3) {
                    // x2 on the hinge line.
                    0 => [
                        Vec3::ZERO,
                        e,
                        e * rng.range(-1.0, 2.0),
                        wing(rng, -1.0, 0.1),
                    ],
                    // A vanishing hinge.
                    1 => [
                        Vec3::ZERO,
                        Vec3::ZERO,
                        wing(rng, 1.0, 0.1),
                        wing(rng, -1.0, 0.1),
                    ],
                    // Everything at one point.
                    _ => [Vec3::ZERO; 4],
                }
            }
            _ => [
                Vec3::ZERO,
                e,
                wing(rng, 1.0, 0.0) + v(rng, 0.3),
                wing(rng, -1.0, 0.0) + v(rng, 0.3),
            ],
        };
        for k in 0..4 {
            let w = if rng.below(8) == 0 {
                seen.pinned += 1;
                0.0
            } else {
                rng.range(0.5, 20.0)
            };
            x[s[k] as usize] = Packed4::new(o + p[k], w);
        }
        stencils.push(s);
    }
    (x, stencils)
}

fn dihedral_table(
    rng: &mut Rng,
    x: &[Packed4],
    stencils: &[[u32; 4]],
    seen: &mut Seen,
) -> DihedralBending {
    let mut t = DihedralBending::default();
    let mut grad = [Vec3::ZERO; 4];
    for s in stencils {
        // Signed rest angles over the whole circle, with the flat, right-angle and folded
        // ones exactly.
        use std::f32::consts::{FRAC_PI_2, PI};
        let rest = match rng.below(8) {
            0 => [0.0, FRAC_PI_2, -FRAC_PI_2, PI][rng.below(4)],
            _ => rng.range(-PI, PI),
        };
        t.stencils.push(*s);
        t.rest.push(rest);
        t.compliance.push([0.0, 1e-6, 1e-4, 1e-2][rng.below(4)]);
        let c = t.len() - 1;
        let value = t.evaluate(c, x, &mut grad);
        if value.abs() >= DIHEDRAL_MAX_STEP {
            seen.clamped += 1;
        }
    }
    t
}

fn isometric_table(rng: &mut Rng, stencils: &[[u32; 4]]) -> IsometricBending {
    let mut t = IsometricBending::default();
    for s in stencils {
        let k: [f32; 3] = core::array::from_fn(|_| rng.range(-20.0, 20.0));
        t.stencils.push(*s);
        t.weights.push([-(k[0] + k[1] + k[2]), k[0], k[1], k[2]]);
        t.compliance.push([0.0, 1e-6, 1e-4][rng.below(3)]);
    }
    t
}

/// Largest coordinate difference between two particle sets, and whether their bits agree.
fn diff(a: &[Packed4], b: &[Packed4]) -> (f32, bool) {
    let d = a
        .iter()
        .zip(b)
        .map(|(p, q)| (p.xyz() - q.xyz()).abs().max_element())
        // NaN wins (f32::max would drop it).
        .fold(0.0f32, |m, d| if d > m || d.is_nan() { d } else { m });
    let same = a.iter().zip(b).all(|(p, q)| {
        [p.x, p.y, p.z, p.w].map(f32::to_bits) == [q.x, q.y, q.z, q.w].map(f32::to_bits)
    });
    (d, same)
}

const INV_DT2: f32 = 3600.0;

/// A projection run with a chosen kernel on positions and multipliers.
type ProjectFn<'a> = dyn Fn(Kernel, &mut [Packed4], &mut [f32]) + 'a;

/// Runs `project` (kernel `k`) against the twin and the twin against `generic`: positions and
/// multipliers; bit-for-bit with `enhanced-determinism`.
#[allow(clippy::too_many_arguments)]
fn check_batch(
    kernels: &[Kernel],
    label: &str,
    x0: &[Packed4],
    len: usize,
    lam0: &[f32],
    project: &ProjectFn<'_>,
    generic: &dyn Fn(&mut [Packed4], &mut [f32]),
    twin_tol: f32,
) {
    let (mut xs, mut ls) = (x0.to_vec(), lam0.to_vec());
    project(Kernel::Scalar, &mut xs, &mut ls);
    let (mut xg, mut lg) = (x0.to_vec(), lam0.to_vec());
    generic(&mut xg, &mut lg);
    let (d, _) = diff(&xs, &xg);
    assert!(
        d <= twin_tol,
        "{label}: twin is {d} m from the generic path"
    );
    let dl = ls
        .iter()
        .zip(&lg)
        .map(|(a, b)| (a - b).abs() / b.abs().max(1e-3))
        .fold(0.0f32, |m, d| if d > m || d.is_nan() { d } else { m });
    assert!(
        dl <= 2e-2,
        "{label}: twin multipliers {dl} (relative) from the generic path: {ls:?} vs {lg:?} from {lam0:?}, x {x0:?}"
    );
    assert!(len > 0);
    for &k in kernels {
        let (mut xk, mut lk) = (x0.to_vec(), lam0.to_vec());
        project(k, &mut xk, &mut lk);
        let (d, same) = diff(&xk, &xs);
        let lsame = lk.iter().zip(&ls).all(|(a, b)| a.to_bits() == b.to_bits());
        if DETERMINISTIC {
            assert!(same && lsame, "{label}: {k} differs from the twin in bits");
        } else {
            assert!(d <= 1e-4, "{label}: {k} is {d} m from the twin");
        }
        // Pinned particles never move.
        for (p, q) in xk.iter().zip(x0) {
            if q.w == 0.0 {
                assert_eq!(p.xyz(), q.xyz(), "{label}: {k} moved a pinned particle");
            }
        }
    }
}

#[test]
fn bend_kernels_match_the_scalar_twin_and_the_generic_path() {
    let kernels = vector_kernels("bend_kernels_match_the_scalar_twin_and_the_generic_path");
    let mut rng = Rng(11);
    let mut seen = Seen::default();
    for round in 0..30 {
        let count = [1, 15, 16, 17, 40, 64, 150][round % 7];
        let (x, stencils) = random_stencils(&mut rng, count, &mut seen);
        let lam0: Vec<f32> = (0..count).map(|_| rng.range(-1e-3, 1e-3)).collect();
        let ids: Vec<u32> = (0..count as u32).collect();

        let dih = dihedral_table(&mut rng, &x, &stencils, &mut seen);
        let b = BendBatch::dihedral(&dih, &ids, x.len()).unwrap();
        // Multipliers in batch order for the batch, table order for the generic path.
        let lam_b: Vec<f32> = b.ids.iter().map(|&c| lam0[c as usize]).collect();
        let to_batch = |l: &[f32]| -> Vec<f32> { b.ids.iter().map(|&c| l[c as usize]).collect() };
        let generic = |kind: &dyn ConstraintKind, x: &mut [Packed4], l: &mut [f32]| {
            let mut lt = lam0.clone();
            for &c in &b.ids {
                let c = c as usize;
                project_generic(kind, c, x, &mut lt[c], kind.compliance(c) * INV_DT2, 1.0);
            }
            l.copy_from_slice(&to_batch(&lt));
        };
        let iso = isometric_table(&mut rng, &stencils);
        let bi = BendBatch::isometric(&iso, &ids, x.len()).unwrap();
        assert_eq!(bi.ids, b.ids, "both batches sort by first particle");
        let models: [(&str, &dyn ConstraintKind, &BendBatch); 2] =
            [("dihedral", &dih, &b), ("isometric", &iso, &bi)];
        for (model, kind, batch) in models {
            check_batch(
                &kernels,
                &format!("{model} round {round}"),
                &x,
                count,
                &lam_b,
                &|k, x, l| project_batch_with(k, x, batch, l, INV_DT2, 1.0).unwrap(),
                &|x, l| generic(kind, x, l),
                2e-4,
            );
        }
    }
    println!("{seen:?}");
    assert!(seen.degenerate > 0 && seen.flat > 0 && seen.folded > 0);
    assert!(seen.pinned > 0 && seen.clamped > 0);
}

#[test]
fn bend_kernels_give_the_same_result_however_the_batch_is_cut() {
    let mut rng = Rng(5);
    let mut seen = Seen::default();
    let (x0, stencils) = random_stencils(&mut rng, 100, &mut seen);
    let dih = dihedral_table(&mut rng, &x0, &stencils, &mut seen);
    let ids: Vec<u32> = (0..100).collect();
    let b = BendBatch::dihedral(&dih, &ids, x0.len()).unwrap();
    for k in vector_kernels("bend_kernels_give_the_same_result_however_the_batch_is_cut") {
        let (mut whole, mut lw) = (x0.clone(), vec![0.0; 100]);
        project_batch_with(k, &mut whole, &b, &mut lw, INV_DT2, 1.0).unwrap();
        let (mut cut, mut lc) = (x0.clone(), vec![0.0f32; 100]);
        for r in [0..32, 32..48, 48..200] {
            // SAFETY: the slices are long enough and held exclusively; `k` is available.
            unsafe {
                project_batch_range(k, cut.as_mut_ptr(), &b, r, lc.as_mut_ptr(), INV_DT2, 1.0)
            };
        }
        assert!(
            diff(&whole, &cut).1 && lw == lc,
            "{k}: cutting the batch changed the result"
        );
    }
}

#[test]
fn bend_batches_refuse_shared_particles_and_bad_indices() {
    let x = [Packed4::new(Vec3::ZERO, 1.0); 8];
    let t = DihedralBending {
        stencils: vec![[0, 1, 2, 3], [3, 4, 5, 6], [4, 5, 6, 9]],
        rest: vec![0.0; 3],
        compliance: vec![0.0; 3],
    };
    assert!(matches!(
        BendBatch::dihedral(&t, &[0, 1], x.len()),
        Err(WobbleError::RepeatedParticle { particle: 3, .. })
    ));
    assert!(matches!(
        BendBatch::dihedral(&t, &[2], x.len()),
        Err(WobbleError::IndexOutOfRange { value: 9, .. })
    ));
    assert!(BendBatch::dihedral(&t, &[7], x.len()).is_err());
    assert_eq!(BendBatch::dihedral(&t, &[0], x.len()).unwrap().len(), 1);
    // The kernels address particles by u32 float offsets (4 per particle).
    let limit = (u32::MAX as usize) / 4 + 1;
    assert_eq!(BendBatch::dihedral(&t, &[0], limit).unwrap().len(), 1);
    assert!(matches!(
        BendBatch::dihedral(&t, &[0], limit + 1),
        Err(WobbleError::BadCount { .. })
    ));
}

/// Random tethers to a few pinned anchors; `free_anchor` frees one anchor (its block runs
/// through the twin).
fn random_tethers(rng: &mut Rng, count: usize, free_anchor: bool) -> (Vec<Packed4>, Tethers) {
    let anchors = 3;
    let n = count + anchors;
    let mut x: Vec<Packed4> = (0..n)
        .map(|_| Packed4::new(v(rng, 1.0), rng.range(0.5, 20.0)))
        .collect();
    for xa in &mut x[..anchors] {
        xa.w = 0.0;
    }
    if free_anchor {
        x[1].w = 2.0;
    }
    let mut t = Tethers::default();
    for i in anchors..n {
        let a = rng.below(anchors);
        let len = (x[i].xyz() - x[a].xyz()).length();
        // Taut, slack, and a few at the anchor itself (|d| = 0).
        if rng.below(20) == 0 {
            x[i] = Packed4::new(x[a].xyz(), x[i].w);
        }
        t.pairs.push([i as u32, a as u32]);
        t.rest.push(len * rng.range(0.6, 1.2));
        t.compliance.push([0.0, 1e-6, 1e-3][rng.below(3)]);
    }
    (x, t)
}

#[test]
fn tether_kernels_match_the_scalar_twin_and_project_tethers() {
    let kernels = vector_kernels("tether_kernels_match_the_scalar_twin_and_project_tethers");
    let mut rng = Rng(23);
    for round in 0..20 {
        let count = [1, 16, 17, 33, 100][round % 5];
        let (x, t) = random_tethers(&mut rng, count, round % 4 == 3);
        let ids: Vec<u32> = (0..count as u32).collect();
        let b = TetherBatch::new(&t, &ids, x.len()).unwrap();
        let lam0: Vec<f32> = (0..count).map(|_| rng.range(-1e-3, 0.0)).collect();
        let lam_b: Vec<f32> = b.ids.iter().map(|&c| lam0[c as usize]).collect();
        let generic = |x: &mut [Packed4], l: &mut [f32]| {
            let mut lt = lam0.clone();
            // In batch order: with a free anchor the order matters.
            for &c in &b.ids {
                let c = c as usize;
                project_tethers(x, &t, c..c + 1, &mut lt, INV_DT2, 1.0);
            }
            for (k, &c) in b.ids.iter().enumerate() {
                l[k] = lt[c as usize];
            }
        };
        check_batch(
            &kernels,
            &format!("tether round {round}"),
            &x,
            count,
            &lam_b,
            &|k, x, l| project_batch_with(k, x, &b, l, INV_DT2, 1.0).unwrap(),
            &generic,
            1e-5,
        );
    }
}

#[test]
fn tether_batches_split_by_particle_and_refuse_moving_anchors() {
    let mut x = [Packed4::new(Vec3::ZERO, 1.0); 6];
    x[0].w = 0.0;
    x[1].w = 0.0;
    let t = Tethers {
        pairs: vec![[2, 0], [2, 1], [3, 0], [3, 1], [4, 0]],
        rest: vec![1.0; 5],
        compliance: vec![0.0; 5],
    };
    let batches = TetherBatch::split(&t, x.len()).unwrap().unwrap();
    assert_eq!(batches.len(), 2);
    assert_eq!(batches[0].ids, vec![0, 2, 4]);
    assert_eq!(batches[1].ids, vec![1, 3]);
    // Particle 2 both moved and an anchor: no independent cut.
    let chained = Tethers {
        pairs: vec![[2, 0], [3, 2]],
        rest: vec![1.0; 2],
        compliance: vec![0.0; 2],
    };
    assert!(TetherBatch::split(&chained, x.len()).unwrap().is_none());
    assert!(TetherBatch::new(&chained, &[0, 1], x.len()).is_err());
    assert!(TetherBatch::new(&t, &[0, 1], x.len()).is_err());
    assert!(TetherBatch::split(&t, 3).is_err());
}
