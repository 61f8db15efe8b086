//! The portable kernel: `wide::f32x16` arithmetic on lanes gathered and scattered one particle
//! at a time. It runs where AVX-512 is not enabled at compile time, and is the "straightforward
//! gather/scatter" point the AVX-512 kernel is measured against.

use super::batch::EdgeBatch;
use super::LANES;
use crate::body::particles::Packed4;
use std::ops::Range;
use wide::f32x16;

/// The portable body of [`super::project_distance_batch_range`]; lane `l` of a block is
/// position `base + l`.
///
/// # Safety
/// As [`super::project_distance_batch_range`].
// Lane `l` indexes nine arrays at once; a range loop says that best.
#[allow(clippy::needless_range_loop)]
pub(crate) unsafe fn project_range(
    x: *mut Packed4,
    b: &EdgeBatch,
    range: Range<usize>,
    lambda: *mut f32,
    inv_dt2: f32,
    k: f32,
) {
    debug_assert!(range.start.is_multiple_of(LANES) && range.end <= b.len());
    let inv_dt2 = f32x16::splat(inv_dt2);
    let k = f32x16::splat(k);
    let zero = f32x16::splat(0.0);
    let mut base = range.start;
    while base < range.end {
        let count = (range.end - base).min(LANES);
        // Lanes past `count` stay zero: zero length, so they are skipped.
        let mut a = [[0.0f32; LANES]; 9];
        for l in 0..count {
            let pi = *x.add(*b.i.get_unchecked(base + l) as usize);
            let pj = *x.add(*b.j.get_unchecked(base + l) as usize);
            a[0][l] = pi.x;
            a[1][l] = pi.y;
            a[2][l] = pi.z;
            a[3][l] = pi.w;
            a[4][l] = pj.x;
            a[5][l] = pj.y;
            a[6][l] = pj.z;
            a[7][l] = pj.w;
            a[8][l] = *lambda.add(base + l);
        }
        let [xi, yi, zi, wi, xj, yj, zj, wj, lam] = a.map(f32x16::from);
        let rest = f32x16::from(&b.rest[base..base + LANES]);
        let alpha = f32x16::from(&b.compliance[base..base + LANES]) * inv_dt2;
        let (dx, dy, dz) = (xi - xj, yi - yj, zi - zj);
        let len = (dx * dx + dy * dy + dz * dz).sqrt();
        let denom = wi + wj + alpha;
        let ok = len.simd_gt(zero) & denom.simd_gt(zero);
        let dl = ok.select((rest - len - alpha * lam) / denom, zero);
        let s = ok.select(k * dl / len, zero);
        let (si, sj) = (s * wi, s * wj);
        // Pinned particles (w = 0) keep their exact bits.
        let ki = ok & wi.simd_ne(zero);
        let kj = ok & wj.simd_ne(zero);
        let out = [
            ki.select(xi + si * dx, xi),
            ki.select(yi + si * dy, yi),
            ki.select(zi + si * dz, zi),
            kj.select(xj - sj * dx, xj),
            kj.select(yj - sj * dy, yj),
            kj.select(zj - sj * dz, zj),
            lam + dl,
        ]
        .map(|v| v.to_array());
        for l in 0..count {
            let pi = &mut *x.add(*b.i.get_unchecked(base + l) as usize);
            pi.x = out[0][l];
            pi.y = out[1][l];
            pi.z = out[2][l];
            let pj = &mut *x.add(*b.j.get_unchecked(base + l) as usize);
            pj.x = out[3][l];
            pj.y = out[4][l];
            pj.z = out[5][l];
            *lambda.add(base + l) = out[6][l];
        }
        base += LANES;
    }
}
