//! The step loop's per-particle passes (prediction with the rollback backup and the check of
//! the input state, velocity update with the finiteness check, clearing buffers) and the
//! stretch figure's pass over the distance constraints, cut into blocks of [`PARTICLE_BLOCK`]
//! particles (or [`CONSTRAINT_BLOCK`] constraints) that the solver's threads may run
//! ([`Executor::run_blocks`]).
//!
//! At a million particles these passes stream ~150 MB per step, more than one solver
//! iteration; left serial, they would cap what a second thread can gain
//! (`docs/performance-notes.md` gives the command that measures their share). Each pass
//! computes every particle from that particle alone, so how the blocks are shared out never
//! changes a bit of the result.
//!
//! Each block runs on `wide::f32x4` (one particle per vector), or, where the running CPU has
//! AVX2, on its twin in `avx2` with two particles per 256-bit vector, chosen at run time: the
//! same IEEE operations in the same order and nothing fused, so both give the same bits (the
//! unit tests compare them), and the prediction is checked, backed up and rolled back exactly
//! as the portable block does it.

use crate::body::particles::Particles;
use crate::geometry::packed::Packed4;
use crate::shared_mut::SharedMut;
use crate::solver::Executor;
use glam::Vec3;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use wide::f32x4;

/// Particles per block of a pass (a constant, so the cut never depends on the thread count).
pub const PARTICLE_BLOCK: usize = 16384;

/// Constraints per block of the stretch pass (a constant, for the same reason).
pub const CONSTRAINT_BLOCK: usize = 32768;

/// Runs `f` on the ranges of `0..n`, block by block, on the solver's threads.
fn for_each_range(executor: &dyn Executor, n: usize, f: impl Fn(Range<usize>) + Sync) {
    let blocks = n.div_ceil(PARTICLE_BLOCK);
    executor.run_blocks(blocks, &|b| {
        f(b * PARTICLE_BLOCK..((b + 1) * PARTICLE_BLOCK).min(n))
    });
}

/// What the prediction integrates: substep, gravity and the damping factor.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Motion {
    pub h: f32,
    pub g: Vec3,
    pub damp: f32,
}

/// What [`predict`] found besides the new state.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Predicted {
    /// Some external force (not wind) was non-zero, so the forces must be cleared (a 16 MB
    /// write at a million particles, skipped when none was).
    pub forces: bool,
    /// With `check`: some particle's input (position, inverse mass, velocity or force) was not
    /// finite, or its inverse mass negative.
    pub bad_input: bool,
}

/// The prediction: `x_prev ← x`, then for every particle with inverse mass `w ≠ 0`:
/// `v ← v · damp + h (g + w f)`, `x ← x + h v` (pinned particles keep `x` and `v`). `wind`
/// is added to the force; `backup` (positions, velocities) first receives `x` and `v` (the
/// positions only when their slice is not empty: with one substep `x_prev` keeps them).
///
/// With `check` (the first substep, which also takes the backup), every particle's input is
/// checked in the same pass: a particle whose position, inverse mass, velocity or force is
/// not finite (or whose inverse mass is negative) is not predicted; its `x` gets the last
/// finite value of each bad component (that of `x_prev` before this pass) and its `v` zero in
/// each non-finite component, while `x_prev` and the backup get its input as for every
/// particle, so that the caller finds every particle's input there and the repaired values of
/// the bad ones in `x` and `v` ([`crate::step::input`]).
pub(crate) fn predict(
    executor: &dyn Executor,
    p: &mut Particles,
    wind: Option<&[Packed4]>,
    backup: Option<(&mut [Packed4], &mut [Packed4])>,
    m: Motion,
    check: bool,
) -> Predicted {
    let n = p.x.len();
    assert!(p.x_prev.len() == n && p.v.len() == n && p.force.len() == n);
    let forces = AtomicBool::new(false);
    let bad_input = AtomicBool::new(false);
    assert!(wind.is_none_or(|w| w.len() == n));
    let (x, x_prev, v) = (
        SharedMut::new(&mut p.x),
        SharedMut::new(&mut p.x_prev),
        SharedMut::new(&mut p.v),
    );
    let force = &p.force[..];
    let (bx, bv) = match backup {
        Some((bx, bv)) => {
            assert!((bx.is_empty() || bx.len() == n) && bv.len() == n);
            (
                (!bx.is_empty()).then(|| SharedMut::new(bx)),
                Some(SharedMut::new(bv)),
            )
        }
        None => (None, None),
    };
    for_each_range(executor, n, |r| {
        // SAFETY: every slice has n elements (asserted above); ranges of different blocks
        // are disjoint, and the slices are borrowed for the whole call.
        let (x, x_prev, v) = unsafe {
            (
                x.range(r.clone()),
                x_prev.range(r.clone()),
                v.range(r.clone()),
            )
        };
        let f = &force[r.clone()];
        // SAFETY: as above.
        let backup = bv.map(|bv| unsafe {
            let bx = match bx {
                Some(bx) => bx.range(r.clone()),
                None => &mut [][..],
            };
            (bx, bv.range(r.clone()))
        });
        let (any, bad) = match (backup, wind, check) {
            (Some((bx, bv)), Some(w), true) => {
                predict_best::<true, true, true>(x, x_prev, v, f, &w[r], bx, bv, m)
            }
            (Some((bx, bv)), None, true) => {
                predict_best::<true, false, true>(x, x_prev, v, f, &[], bx, bv, m)
            }
            (Some((bx, bv)), Some(w), false) => {
                predict_best::<true, true, false>(x, x_prev, v, f, &w[r], bx, bv, m)
            }
            (Some((bx, bv)), None, false) => {
                predict_best::<true, false, false>(x, x_prev, v, f, &[], bx, bv, m)
            }
            (None, Some(w), _) => {
                predict_best::<false, true, false>(x, x_prev, v, f, &w[r], &mut [], &mut [], m)
            }
            (None, None, _) => {
                predict_best::<false, false, false>(x, x_prev, v, f, &[], &mut [], &mut [], m)
            }
        };
        if any {
            forces.store(true, Ordering::Relaxed);
        }
        if bad {
            bad_input.store(true, Ordering::Relaxed);
        }
    });
    Predicted {
        forces: forces.into_inner(),
        bad_input: bad_input.into_inner(),
    }
}

/// A particle's four floats as one vector.
#[inline(always)]
fn lanes(p: Packed4) -> f32x4 {
    f32x4::from([p.x, p.y, p.z, p.w])
}

/// The vector as a particle.
#[inline(always)]
fn packed(v: f32x4) -> Packed4 {
    let [x, y, z, w] = v.to_array();
    Packed4 { x, y, z, w }
}

/// Lanes x, y, z set, lane w clear: where a pass writes.
#[inline(always)]
fn xyz_lanes() -> f32x4 {
    let on = f32::from_bits(u32::MAX);
    f32x4::from([on, on, on, 0.0])
}

/// [`predict_block`], two particles per 256-bit register where the CPU has AVX2 (the same
/// operations in the same order, so the same bits).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn predict_best<const BACKUP: bool, const WIND: bool, const CHECK: bool>(
    x: &mut [Packed4],
    x_prev: &mut [Packed4],
    v: &mut [Packed4],
    force: &[Packed4],
    wind: &[Packed4],
    backup_x: &mut [Packed4],
    backup_v: &mut [Packed4],
    m: Motion,
) -> (bool, bool) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2 (checked just above).
        return unsafe {
            avx2::predict_block::<BACKUP, WIND, CHECK>(
                x, x_prev, v, force, wind, backup_x, backup_v, m,
            )
        };
    }
    predict_block::<BACKUP, WIND, CHECK>(x, x_prev, v, force, wind, backup_x, backup_v, m)
}

/// [`predict`] on one block; `WIND` and `BACKUP` say whether `wind` and the backups are used,
/// `CHECK` whether the input is checked (only with `BACKUP`). One `wide::f32x4` per particle
/// (SSE, NEON): every lane computes the scalar formula, lane w is kept by a select, and so is
/// a pinned particle. Returns whether any force was non-zero and whether any input was bad.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn predict_block<const BACKUP: bool, const WIND: bool, const CHECK: bool>(
    x: &mut [Packed4],
    x_prev: &mut [Packed4],
    v: &mut [Packed4],
    force: &[Packed4],
    wind: &[Packed4],
    backup_x: &mut [Packed4],
    backup_v: &mut [Packed4],
    m: Motion,
) -> (bool, bool) {
    let n = x.len();
    let (x_prev, v, force) = (&mut x_prev[..n], &mut v[..n], &force[..n]);
    let wind = if WIND { &wind[..n] } else { wind };
    let (backup_x, backup_v) = if BACKUP {
        let bx = if backup_x.is_empty() {
            backup_x
        } else {
            &mut backup_x[..n]
        };
        (bx, &mut backup_v[..n])
    } else {
        (backup_x, backup_v)
    };
    let Motion { h, g, damp } = m;
    let (h, damp) = (f32x4::splat(h), f32x4::splat(damp));
    let g = f32x4::from([g.x, g.y, g.z, 0.0]);
    let (xyz, zero) = (xyz_lanes(), f32x4::ZERO);
    let mut any_force = zero;
    let mut any_bad = false;
    // Lane w of a position is an inverse mass: finite and >= 0; lanes x, y, z finite.
    let non_negative_w = !xyz;
    for i in 0..n {
        let xi = x[i];
        let vi = v[i];
        if CHECK {
            let (xv, vv, fv) = (lanes(xi), lanes(vi), lanes(force[i]));
            let x_ok = xv.is_finite() & (xyz | (xv.simd_ge(zero) & non_negative_w));
            // One compare-and-branch per particle, never taken on a healthy body.
            if !(x_ok & vv.is_finite() & fv.is_finite()).all() {
                any_bad = true;
                if !backup_x.is_empty() {
                    backup_x[i] = xi;
                }
                backup_v[i] = vi;
                x[i] = packed(x_ok.select(xv, lanes(x_prev[i])));
                v[i] = packed(vv.is_finite().select(vv, zero));
                x_prev[i] = xi;
                continue;
            }
        }
        if BACKUP {
            if !backup_x.is_empty() {
                store_streaming(&mut backup_x[i], xi);
            }
            store_streaming(&mut backup_v[i], vi);
        }
        x_prev[i] = xi;
        let mut f = lanes(force[i]);
        any_force |= f.simd_ne(zero);
        if WIND {
            f += lanes(wind[i]);
        }
        let w = f32x4::splat(xi.w);
        let moving = xyz & w.simd_ne(zero);
        let (xv, vv) = (lanes(xi), lanes(vi));
        // Only the velocity carried in is damped: damping the increment as well would make a
        // body at rest sag (1 - damping h) too little (its weight scaled by the damping).
        let vn = vv * damp + h * (g + f * w);
        v[i] = packed(moving.select(vn, vv));
        x[i] = packed(moving.select(xv + h * vn, xv));
    }
    if BACKUP {
        streaming_done();
    }
    (any_force.any(), any_bad)
}

/// Stores `v` at `dst`, bypassing the caches where the CPU can: the backup is read only after
/// a failed step, and a plain store would first read every line it writes.
#[inline(always)]
fn store_streaming(dst: &mut Packed4, v: Packed4) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: SSE is part of x86-64; `Packed4` is 16-byte aligned (`align(16)`) and 16 bytes,
    // so both the load from `v` and the streaming store to `dst` are aligned and in bounds.
    unsafe {
        use core::arch::x86_64::{_mm_load_ps, _mm_stream_ps};
        let value = _mm_load_ps((&v as *const Packed4).cast());
        _mm_stream_ps((dst as *mut Packed4).cast(), value);
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        *dst = v;
    }
}

/// Orders the streaming stores before whatever this thread does next.
#[inline(always)]
fn streaming_done() {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: SSE is part of x86-64.
    unsafe {
        core::arch::x86_64::_mm_sfence()
    };
}

/// The velocity update `v ← (x - x_prev) / h` (`vh` = h, a division, not a product with a
/// rounded `1/h`: `h · fl(1/h)` misses 1 by up to 6e-8, a bias of the velocity the same every
/// substep, which a body pushed for seconds accumulates; `w` of `v` is kept); returns
/// whether every position and every updated velocity is finite, and the largest squared speed
/// (both found in the same pass, so the divergence guard costs no pass of its own).
pub(crate) fn update_velocities(
    executor: &dyn Executor,
    v: &mut [Packed4],
    x: &[Packed4],
    x_prev: &[Packed4],
    vh: f32,
) -> (bool, f32) {
    let n = v.len();
    assert!(x.len() == n && x_prev.len() == n);
    let vp = SharedMut::new(v);
    let ok = AtomicBool::new(true);
    // Squared speeds are >= 0, whose f32 bits order as the values do.
    let fastest = AtomicU32::new(0);
    for_each_range(executor, n, |r| {
        // SAFETY: `v` has n elements; block ranges are disjoint; `v` is borrowed for the call.
        let v = unsafe { vp.range(r.clone()) };
        let (finite, max2) = velocity_best(v, &x[r.clone()], &x_prev[r], vh);
        if !finite {
            ok.store(false, Ordering::Relaxed);
        }
        fastest.fetch_max(max2.to_bits(), Ordering::Relaxed);
    });
    (ok.into_inner(), f32::from_bits(fastest.into_inner()))
}

/// [`velocity_block`], two particles per 256-bit register where the CPU has AVX2 (the same
/// operations in the same order, so the same bits).
fn velocity_best(v: &mut [Packed4], x: &[Packed4], x_prev: &[Packed4], vh: f32) -> (bool, f32) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2 (checked just above).
        return unsafe { avx2::velocity_block(v, x, x_prev, vh) };
    }
    velocity_block(v, x, x_prev, vh)
}

/// [`update_velocities`] on one block: whether every position and new velocity is finite, and
/// the largest squared speed.
#[inline(always)]
fn velocity_block(v: &mut [Packed4], x: &[Packed4], x_prev: &[Packed4], vh: f32) -> (bool, f32) {
    let (xyz, vh) = (xyz_lanes(), f32x4::splat(vh));
    let mut finite = f32x4::splat(f32::from_bits(u32::MAX));
    let mut max2 = 0.0f32;
    for ((v, x), x0) in v.iter_mut().zip(x).zip(x_prev) {
        let (xv, vv) = (lanes(*x), lanes(*v));
        let vn = xyz.select((xv - lanes(*x0)) / vh, vv);
        *v = packed(vn);
        // Accumulated without an early exit, so the loop stays branch-free.
        finite &= xv.is_finite() & vn.is_finite();
        let s2 = vn * vn;
        let s2 = s2.as_array()[0] + s2.as_array()[1] + s2.as_array()[2];
        // NaN never wins the max; the finiteness flag catches it.
        max2 = if s2 > max2 { s2 } else { max2 };
    }
    (finite.all(), max2)
}

/// [`update_velocities`] at the end of one substep and [`predict`] (no wind, no backup, no
/// check) of the next, in one pass over the particles: what the step loop runs between two
/// substeps when nothing acts in between (no contacts, no wind, no checker). Every particle
/// gets the two passes' arithmetic in their order, so the bits are theirs. Returns whether
/// every position and velocity of the velocity update was finite, its largest squared speed,
/// and whether any force was non-zero.
pub(crate) fn update_velocities_and_predict(
    executor: &dyn Executor,
    p: &mut Particles,
    vh: f32,
    m: Motion,
) -> (bool, f32, bool) {
    let n = p.x.len();
    assert!(p.x_prev.len() == n && p.v.len() == n && p.force.len() == n);
    let (x, x_prev, v) = (
        SharedMut::new(&mut p.x),
        SharedMut::new(&mut p.x_prev),
        SharedMut::new(&mut p.v),
    );
    let force = &p.force[..];
    let ok = AtomicBool::new(true);
    let any_force = AtomicBool::new(false);
    let fastest = AtomicU32::new(0);
    for_each_range(executor, n, |r| {
        // SAFETY: every slice has n elements (asserted above); ranges of different blocks
        // are disjoint, and the slices are borrowed for the whole call.
        let (x, x_prev, v) = unsafe {
            (
                x.range(r.clone()),
                x_prev.range(r.clone()),
                v.range(r.clone()),
            )
        };
        let f = &force[r];
        let (finite, max2, forced) = velocity_and_predict_best(x, x_prev, v, f, vh, m);
        if !finite {
            ok.store(false, Ordering::Relaxed);
        }
        if forced {
            any_force.store(true, Ordering::Relaxed);
        }
        fastest.fetch_max(max2.to_bits(), Ordering::Relaxed);
    });
    (
        ok.into_inner(),
        f32::from_bits(fastest.into_inner()),
        any_force.into_inner(),
    )
}

/// [`velocity_and_predict_block`], two particles per 256-bit register where the CPU has AVX2
/// (the same operations in the same order, nothing fused, so the same bits).
fn velocity_and_predict_best(
    x: &mut [Packed4],
    x_prev: &mut [Packed4],
    v: &mut [Packed4],
    force: &[Packed4],
    vh: f32,
    m: Motion,
) -> (bool, f32, bool) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2 (checked just above).
        return unsafe { avx2::velocity_and_predict_block(x, x_prev, v, force, vh, m) };
    }
    velocity_and_predict_block(x, x_prev, v, force, vh, m)
}

/// [`update_velocities_and_predict`] on one block: the velocity update's expressions, then
/// [`predict_block`]'s, per particle.
#[inline(always)]
fn velocity_and_predict_block(
    x: &mut [Packed4],
    x_prev: &mut [Packed4],
    v: &mut [Packed4],
    force: &[Packed4],
    vh: f32,
    m: Motion,
) -> (bool, f32, bool) {
    let n = x.len();
    let (x_prev, v, force) = (&mut x_prev[..n], &mut v[..n], &force[..n]);
    let (xyz, zero) = (xyz_lanes(), f32x4::ZERO);
    let vh = f32x4::splat(vh);
    let Motion { h, g, damp } = m;
    let (h, damp) = (f32x4::splat(h), f32x4::splat(damp));
    let g = f32x4::from([g.x, g.y, g.z, 0.0]);
    let mut finite = f32x4::splat(f32::from_bits(u32::MAX));
    let mut max2 = 0.0f32;
    let mut any_force = zero;
    for i in 0..n {
        let xi = x[i];
        let xv = lanes(xi);
        // The velocity update of the substep that ends.
        let vv = xyz.select((xv - lanes(x_prev[i])) / vh, lanes(v[i]));
        finite &= xv.is_finite() & vv.is_finite();
        let s2 = vv * vv;
        let s2 = s2.as_array()[0] + s2.as_array()[1] + s2.as_array()[2];
        max2 = if s2 > max2 { s2 } else { max2 };
        // The prediction of the next one.
        x_prev[i] = xi;
        let f = lanes(force[i]);
        any_force |= f.simd_ne(zero);
        let w = f32x4::splat(xi.w);
        let moving = xyz & w.simd_ne(zero);
        let vn = vv * damp + h * (g + f * w);
        v[i] = packed(moving.select(vn, vv));
        x[i] = packed(moving.select(xv + h * vn, xv));
    }
    (finite.all(), max2, any_force.any())
}

#[cfg(target_arch = "x86_64")]
mod avx2;

/// Sets every element of `a` to its default (zero).
pub(crate) fn clear<T: Default + Copy + Send>(executor: &dyn Executor, a: &mut [T]) {
    let n = a.len();
    let ap = SharedMut::new(a);
    for_each_range(executor, n, |r| {
        // SAFETY: `a` has n elements; block ranges are disjoint; `a` is borrowed for the call.
        unsafe { ap.range(r) }.fill(T::default());
    });
}

/// The mean stretch `|l - l0| / l0` of the first `count` distance constraints at `x` (the
/// definition of [`crate::figures::stretch`]), four constraints at a time, summed per block
/// of [`CONSTRAINT_BLOCK`] into `partials` and then in block order, so that the figure never
/// depends on the thread count. A rest length of 0 or a non-finite value gives a non-finite
/// mean, which the step reports as it is.
pub(crate) fn mean_stretch(
    executor: &dyn Executor,
    d: &crate::constraints::DistanceConstraints,
    count: usize,
    x: &[Packed4],
    partials: &mut Vec<f64>,
) -> f32 {
    if count == 0 {
        return 0.0;
    }
    let (pairs, rest) = (&d.pairs[..count], &d.rest[..count]);
    let blocks = count.div_ceil(CONSTRAINT_BLOCK);
    partials.clear();
    partials.resize(blocks, 0.0);
    let out = SharedMut::new(&mut partials[..]);
    executor.run_blocks(blocks, &|b| {
        let r = b * CONSTRAINT_BLOCK..((b + 1) * CONSTRAINT_BLOCK).min(count);
        let (pairs, rest) = (&pairs[r.clone()], &rest[r.clone()]);
        let mut sum = f32x4::ZERO;
        let quads = pairs.len() / 4;
        for q in 0..quads {
            let c = 4 * q;
            let gather = |k: usize| {
                let [i, j] = pairs[c + k];
                lanes(x[i as usize]) - lanes(x[j as usize])
            };
            // Constraint c + k in lane k: one 4 x 4 transpose of the four differences.
            let [dx, dy, dz, _] = f32x4::transpose([gather(0), gather(1), gather(2), gather(3)]);
            let l = (dx * dx + dy * dy + dz * dz).sqrt();
            let r0 = f32x4::from([rest[c], rest[c + 1], rest[c + 2], rest[c + 3]]);
            sum += (l - r0).abs() / r0;
        }
        let mut tail = 0.0f32;
        for c in 4 * quads..pairs.len() {
            let [i, j] = pairs[c];
            let l = (x[i as usize].xyz() - x[j as usize].xyz()).length();
            tail += (l - rest[c]).abs() / rest[c];
        }
        let s = sum.to_array();
        // SAFETY: `partials` has `blocks` elements; each block writes its own.
        let block_sum = s[0] as f64 + s[1] as f64 + s[2] as f64 + s[3] as f64 + tail as f64;
        unsafe { out.range(b..b + 1)[0] = block_sum };
    });
    (partials.iter().sum::<f64>() / count as f64) as f32
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::solver::Serial;

    /// A few particles with varied positions, velocities, forces and one pinned.
    fn particles() -> Particles {
        let n = 37;
        let positions: Vec<Vec3> = (0..n)
            .map(|i| {
                Vec3::new(
                    i as f32 * 0.37,
                    (i * i) as f32 * -0.011,
                    1.0 / (i + 1) as f32,
                )
            })
            .collect();
        let masses: Vec<f32> = (0..n).map(|i| 0.5 + i as f32 * 0.1).collect();
        let mut p = Particles::new(&positions, &masses).expect("particles");
        // Pinned: inverse mass 0.
        p.x[5].w = 0.0;
        for i in 0..n {
            p.x_prev[i] = p.x[i];
            let moved = p.x[i].xyz() + Vec3::new(0.01 * i as f32, -0.003, 0.002 * (i % 3) as f32);
            if p.x[i].w != 0.0 {
                p.x[i].set_xyz(moved);
            }
            p.v[i] = Packed4::new(Vec3::new(0.5, -1.0, i as f32 * 0.1), 0.0);
            if i % 4 == 0 {
                p.force[i] = Packed4::new(Vec3::new(1.0, 2.0, -3.0), 0.0);
            }
        }
        p
    }

    #[test]
    fn the_fused_velocity_and_prediction_pass_gives_the_bits_of_the_two_passes() {
        let m = Motion {
            h: 1.0 / 480.0,
            g: Vec3::new(0.0, -9.81, 0.0),
            damp: 0.99,
        };
        let vh = m.h;
        let mut apart = particles();
        let (ok, max2) = update_velocities(&Serial, &mut apart.v, &apart.x, &apart.x_prev, vh);
        let predicted = predict(&Serial, &mut apart, None, None, m, false);
        let mut fused = particles();
        let (fused_ok, fused_max2, fused_forces) =
            update_velocities_and_predict(&Serial, &mut fused, vh, m);
        assert_eq!(
            (fused_ok, fused_max2.to_bits(), fused_forces),
            (ok, max2.to_bits(), predicted.forces)
        );
        let bits = |a: &[Packed4]| -> Vec<[u32; 4]> {
            a.iter()
                .map(|p| [p.x, p.y, p.z, p.w].map(f32::to_bits))
                .collect()
        };
        assert_eq!(bits(&fused.x), bits(&apart.x));
        assert_eq!(bits(&fused.x_prev), bits(&apart.x_prev));
        assert_eq!(bits(&fused.v), bits(&apart.v));
        assert!(
            fused.x[5] == particles().x[5],
            "the pinned particle did not move"
        );
    }

    #[test]
    fn the_vector_prediction_gives_the_bits_of_the_portable_one_with_backup_wind_and_bad_input() {
        let m = Motion {
            h: 1.0 / 240.0,
            g: Vec3::new(0.0, -9.81, 0.0),
            damp: 0.98,
        };
        let wind: Vec<Packed4> = (0..37)
            .map(|i| Packed4::new(Vec3::new(0.1 * i as f32, 0.0, -0.2), 0.0))
            .collect();
        let bits = |a: &[Packed4]| -> Vec<[u32; 4]> {
            a.iter()
                .map(|p| [p.x, p.y, p.z, p.w].map(f32::to_bits))
                .collect()
        };
        for bad in [None, Some(10), Some(36)] {
            let mut start = particles();
            if let Some(i) = bad {
                start.v[i].z = f32::NAN;
            }
            let (mut a, mut b) = (start.clone(), start.clone());
            let n = start.len();
            let (mut abx, mut abv) = (vec![Packed4::default(); n], vec![Packed4::default(); n]);
            let (mut bbx, mut bbv) = (abx.clone(), abv.clone());
            let pa = predict_block::<true, true, true>(
                &mut a.x,
                &mut a.x_prev,
                &mut a.v,
                &a.force,
                &wind,
                &mut abx,
                &mut abv,
                m,
            );
            let pb = predict_best::<true, true, true>(
                &mut b.x,
                &mut b.x_prev,
                &mut b.v,
                &b.force,
                &wind,
                &mut bbx,
                &mut bbv,
                m,
            );
            assert_eq!(pa, pb, "{bad:?}");
            assert_eq!(pa.1, bad.is_some());
            for (u, w) in [
                (&a.x, &b.x),
                (&a.x_prev, &b.x_prev),
                (&a.v, &b.v),
                (&abx, &bbx),
                (&abv, &bbv),
            ] {
                assert_eq!(bits(u), bits(w), "{bad:?}");
            }
        }
    }

    #[test]
    fn the_vector_velocity_pass_gives_the_bits_of_the_portable_one() {
        let p = particles();
        let (mut v, mut w) = (p.v.clone(), p.v.clone());
        let portable = velocity_block(&mut v, &p.x, &p.x_prev, 480.0);
        let best = velocity_best(&mut w, &p.x, &p.x_prev, 480.0);
        assert_eq!(
            (best.0, best.1.to_bits()),
            (portable.0, portable.1.to_bits())
        );
        let bits = |a: &[Packed4]| -> Vec<[u32; 4]> {
            a.iter()
                .map(|p| [p.x, p.y, p.z, p.w].map(f32::to_bits))
                .collect()
        };
        assert_eq!(bits(&w), bits(&v));
    }

    #[test]
    fn the_fused_pass_reports_a_non_finite_position_and_the_largest_speed_as_the_two_passes_do() {
        let m = Motion {
            h: 1.0 / 60.0,
            g: Vec3::ZERO,
            damp: 1.0,
        };
        for bad in [None, Some(8), Some(36)] {
            let mut apart = particles();
            if let Some(i) = bad {
                apart.x[i].y = f32::INFINITY;
            }
            apart.x[20].set_xyz(apart.x_prev[20].xyz() + Vec3::new(3.0, -4.0, 12.0));
            let mut fused = apart.clone();
            let (ok, max2) =
                update_velocities(&Serial, &mut apart.v, &apart.x, &apart.x_prev, 1.0 / 60.0);
            let (fused_ok, fused_max2, _) =
                update_velocities_and_predict(&Serial, &mut fused, 1.0 / 60.0, m);
            assert_eq!(ok, bad.is_none());
            let expected = 13.0f32 * 13.0 * 3600.0;
            if bad.is_none() {
                let relative = (max2 / expected - 1.0).abs();
                assert!(relative < 1e-4, "particle 20 is the fastest: {max2}");
            }
            assert_eq!(
                (fused_ok, fused_max2.to_bits()),
                (ok, max2.to_bits()),
                "{bad:?}"
            );
        }
    }
}
