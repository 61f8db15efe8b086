//! The AVX2 twins of the per-particle passes (`velocity_and_predict_block`, `velocity_block`,
//! `predict_block`): `std::arch`, since `wide` picks its instructions when the crate is compiled
//! and these must run in a build for the default target.

use super::Motion;
use crate::geometry::packed::Packed4;
use core::arch::x86_64::*;

/// Lanes x, y, z of both particles set, lane w clear.
const XYZ: i32 = 0b0111_0111;

/// Each particle's squared speed `(x² + y²) + z²` in its lane x, summed in the scalar
/// pass's order.
#[inline(always)]
unsafe fn speed2(v: __m256) -> __m256 {
    let s = _mm256_mul_ps(v, v);
    _mm256_add_ps(
        _mm256_add_ps(s, _mm256_permute_ps::<0b01_01_01_01>(s)),
        _mm256_permute_ps::<0b10_10_10_10>(s),
    )
}

/// All-ones in the lanes whose value is finite (exponent not all ones).
#[inline(always)]
unsafe fn finite(v: __m256) -> __m256i {
    let exponent = _mm256_set1_epi32(0x7f80_0000);
    let e = _mm256_and_si256(_mm256_castps_si256(v), exponent);
    _mm256_xor_si256(_mm256_cmpeq_epi32(e, exponent), _mm256_set1_epi32(-1))
}

/// What a pass over pairs of particles found: the lanes found finite, the running
/// largest squared speed (lane 0 for the even particles, lane 4 for the odd ones) and the
/// lanes of a non-zero force.
struct Found {
    finite: __m256i,
    max2: __m256,
    forced: __m256,
}

impl Found {
    /// Whether all was finite, the largest squared speed, whether any force was non-zero.
    #[inline(always)]
    unsafe fn reduce(self) -> (bool, f32, bool) {
        let lanes: [f32; 8] = core::mem::transmute(self.max2);
        let fastest = if lanes[4] > lanes[0] {
            lanes[4]
        } else {
            lanes[0]
        };
        (
            _mm256_movemask_ps(_mm256_castsi256_ps(self.finite)) == 0xFF,
            fastest,
            _mm256_movemask_ps(self.forced) != 0,
        )
    }
}

/// The velocity update of particles `0..2 pairs` and, with `PREDICT`, the next prediction
/// (`x_prev ← x`, then `v`, `x` as [`super::predict_block`] without wind, backup or check).
/// Without `PREDICT` neither `x` nor `x_prev` is written, nor `force` read.
///
/// # Safety
/// The CPU has AVX2; the pointers hold at least `2 pairs` particles.
#[inline(always)]
unsafe fn pass<const PREDICT: bool>(
    [px, pp, pv, pf]: [*mut f32; 4],
    pairs: usize,
    vh: f32,
    m: Motion,
) -> Found {
    let Motion { h, g, damp } = m;
    let (vh8, h8, damp8) = (_mm256_set1_ps(vh), _mm256_set1_ps(h), _mm256_set1_ps(damp));
    let g8 = _mm256_setr_ps(g.x, g.y, g.z, 0.0, g.x, g.y, g.z, 0.0);
    let zero = _mm256_setzero_ps();
    let mut found = Found {
        finite: _mm256_set1_epi32(-1),
        max2: zero,
        forced: zero,
    };
    for k in 0..pairs {
        // Particles 2k and 2k + 1: `Packed4` is four f32, 16-byte aligned, so two of them
        // are 32 contiguous bytes.
        let o = 8 * k;
        let xv = _mm256_loadu_ps(px.add(o));
        let vold = _mm256_loadu_ps(pv.add(o));
        // The velocity update (w keeps v's lane).
        let vel = _mm256_div_ps(_mm256_sub_ps(xv, _mm256_loadu_ps(pp.add(o))), vh8);
        let vv = _mm256_blend_ps::<XYZ>(vold, vel);
        let both = _mm256_and_si256(finite(xv), finite(vv));
        found.finite = _mm256_and_si256(found.finite, both);
        // NaN never wins (maxps returns its second operand then), as in the scalar pass.
        found.max2 = _mm256_max_ps(speed2(vv), found.max2);
        if !PREDICT {
            _mm256_storeu_ps(pv.add(o), vv);
            continue;
        }
        _mm256_storeu_ps(pp.add(o), xv);
        let f = _mm256_loadu_ps(pf.add(o));
        found.forced = _mm256_or_ps(found.forced, _mm256_cmp_ps::<_CMP_NEQ_UQ>(f, zero));
        let w = _mm256_permute_ps::<0b11_11_11_11>(xv);
        let moving = _mm256_blend_ps::<XYZ>(zero, _mm256_cmp_ps::<_CMP_NEQ_UQ>(w, zero));
        let vn = _mm256_add_ps(
            _mm256_mul_ps(vv, damp8),
            _mm256_mul_ps(h8, _mm256_add_ps(g8, _mm256_mul_ps(f, w))),
        );
        _mm256_storeu_ps(pv.add(o), _mm256_blendv_ps(vv, vn, moving));
        let xn = _mm256_add_ps(xv, _mm256_mul_ps(h8, vn));
        _mm256_storeu_ps(px.add(o), _mm256_blendv_ps(xv, xn, moving));
    }
    found
}

/// [`super::predict_block`], two particles at a time. A pair holding a bad input (with
/// `CHECK`) and an odd last particle go through the portable block, which treats each
/// particle on its own, so the result is the same.
///
/// # Safety
/// The CPU has AVX2.
#[allow(clippy::too_many_arguments)]
#[target_feature(enable = "avx2")]
pub(super) unsafe fn predict_block<const BACKUP: bool, const WIND: bool, const CHECK: bool>(
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
    let with_bx = BACKUP && !backup_x.is_empty();
    let (backup_x, backup_v) = if BACKUP {
        let bx = if with_bx {
            &mut backup_x[..n]
        } else {
            backup_x
        };
        (bx, &mut backup_v[..n])
    } else {
        (backup_x, backup_v)
    };
    let Motion { h, g, damp } = m;
    let (h8, damp8) = (_mm256_set1_ps(h), _mm256_set1_ps(damp));
    let g8 = _mm256_setr_ps(g.x, g.y, g.z, 0.0, g.x, g.y, g.z, 0.0);
    let zero = _mm256_setzero_ps();
    let mut forced = zero;
    let mut any_bad = false;
    let xyz = _mm256_castps_si256(_mm256_blend_ps::<XYZ>(
        zero,
        _mm256_castsi256_ps(_mm256_set1_epi32(-1)),
    ));
    for k in 0..n / 2 {
        let (i, o) = (2 * k, 8 * k);
        let px = x.as_mut_ptr().cast::<f32>();
        let xv = _mm256_loadu_ps(px.add(o));
        let vv = _mm256_loadu_ps(v.as_ptr().cast::<f32>().add(o));
        let f = _mm256_loadu_ps(force.as_ptr().cast::<f32>().add(o));
        if CHECK {
            // Lanes x, y, z finite; lane w (the inverse mass) finite and >= 0.
            let non_negative = _mm256_castps_si256(_mm256_cmp_ps::<_CMP_GE_OQ>(xv, zero));
            let x_ok = _mm256_and_si256(finite(xv), _mm256_or_si256(xyz, non_negative));
            let ok = _mm256_and_si256(x_ok, _mm256_and_si256(finite(vv), finite(f)));
            if _mm256_movemask_ps(_mm256_castsi256_ps(ok)) != 0xFF {
                let r = i..i + 2;
                let bx = if with_bx {
                    &mut backup_x[r.clone()]
                } else {
                    &mut [][..]
                };
                let w = if WIND { &wind[r.clone()] } else { wind };
                let (fo, bad) = super::predict_block::<BACKUP, WIND, CHECK>(
                    &mut x[r.clone()],
                    &mut x_prev[r.clone()],
                    &mut v[r.clone()],
                    &force[r.clone()],
                    w,
                    bx,
                    &mut backup_v[r],
                    m,
                );
                if fo {
                    forced = _mm256_castsi256_ps(_mm256_set1_epi32(-1));
                }
                any_bad |= bad;
                continue;
            }
        }
        if BACKUP {
            // Streaming, 16 bytes a particle (the backup is only 16-byte aligned).
            let (lo, hi) = (_mm256_castps256_ps128(xv), _mm256_extractf128_ps::<1>(xv));
            if with_bx {
                let bx = backup_x.as_mut_ptr().cast::<f32>().add(o);
                _mm_stream_ps(bx, lo);
                _mm_stream_ps(bx.add(4), hi);
            }
            let bv = backup_v.as_mut_ptr().cast::<f32>().add(o);
            _mm_stream_ps(bv, _mm256_castps256_ps128(vv));
            _mm_stream_ps(bv.add(4), _mm256_extractf128_ps::<1>(vv));
        }
        _mm256_storeu_ps(x_prev.as_mut_ptr().cast::<f32>().add(o), xv);
        forced = _mm256_or_ps(forced, _mm256_cmp_ps::<_CMP_NEQ_UQ>(f, zero));
        let f = if WIND {
            _mm256_add_ps(f, _mm256_loadu_ps(wind.as_ptr().cast::<f32>().add(o)))
        } else {
            f
        };
        let w = _mm256_permute_ps::<0b11_11_11_11>(xv);
        let moving = _mm256_blend_ps::<XYZ>(zero, _mm256_cmp_ps::<_CMP_NEQ_UQ>(w, zero));
        let vn = _mm256_add_ps(
            _mm256_mul_ps(vv, damp8),
            _mm256_mul_ps(h8, _mm256_add_ps(g8, _mm256_mul_ps(f, w))),
        );
        _mm256_storeu_ps(
            v.as_mut_ptr().cast::<f32>().add(o),
            _mm256_blendv_ps(vv, vn, moving),
        );
        let xn = _mm256_add_ps(xv, _mm256_mul_ps(h8, vn));
        _mm256_storeu_ps(px.add(o), _mm256_blendv_ps(xv, xn, moving));
    }
    if BACKUP {
        _mm_sfence();
    }
    let mut any_force = _mm256_movemask_ps(forced) != 0;
    if n % 2 == 1 {
        let r = n - 1..n;
        let bx = if with_bx {
            &mut backup_x[r.clone()]
        } else {
            &mut [][..]
        };
        let w = if WIND { &wind[r.clone()] } else { wind };
        let bv = if BACKUP {
            &mut backup_v[r.clone()]
        } else {
            &mut [][..]
        };
        let (fo, bad) = super::predict_block::<BACKUP, WIND, CHECK>(
            &mut x[r.clone()],
            &mut x_prev[r.clone()],
            &mut v[r.clone()],
            &force[r],
            w,
            bx,
            bv,
            m,
        );
        any_force |= fo;
        any_bad |= bad;
    }
    (any_force, any_bad)
}

/// [`super::velocity_and_predict_block`], two particles at a time; an odd last particle
/// goes through the portable block.
///
/// # Safety
/// The CPU has AVX2.
#[target_feature(enable = "avx2")]
pub(super) unsafe fn velocity_and_predict_block(
    x: &mut [Packed4],
    x_prev: &mut [Packed4],
    v: &mut [Packed4],
    force: &[Packed4],
    vh: f32,
    m: Motion,
) -> (bool, f32, bool) {
    let n = x.len();
    let (x_prev, v, force) = (&mut x_prev[..n], &mut v[..n], &force[..n]);
    let pointers = [
        x.as_mut_ptr().cast::<f32>(),
        x_prev.as_mut_ptr().cast::<f32>(),
        v.as_mut_ptr().cast::<f32>(),
        force.as_ptr().cast::<f32>().cast_mut(),
    ];
    // SAFETY: AVX2 (this function's contract); every slice holds n particles.
    let (mut ok, mut fastest, mut forced) = pass::<true>(pointers, n / 2, vh, m).reduce();
    if n % 2 == 1 {
        let t = n - 1;
        let (f, s2, fo) = super::velocity_and_predict_block(
            &mut x[t..],
            &mut x_prev[t..],
            &mut v[t..],
            &force[t..],
            vh,
            m,
        );
        ok &= f;
        fastest = if s2 > fastest { s2 } else { fastest };
        forced |= fo;
    }
    (ok, fastest, forced)
}

/// [`super::velocity_block`], two particles at a time; an odd last particle goes through
/// the portable block.
///
/// # Safety
/// The CPU has AVX2.
#[target_feature(enable = "avx2")]
pub(super) unsafe fn velocity_block(
    v: &mut [Packed4],
    x: &[Packed4],
    x_prev: &[Packed4],
    vh: f32,
) -> (bool, f32) {
    let n = v.len();
    let (x, x_prev) = (&x[..n], &x_prev[..n]);
    // Without `PREDICT` the pass writes only through the velocity pointer, and reads no
    // force (the velocity pointer stands in for it).
    let pv = v.as_mut_ptr().cast::<f32>();
    let pointers = [
        x.as_ptr().cast::<f32>().cast_mut(),
        x_prev.as_ptr().cast::<f32>().cast_mut(),
        pv,
        pv,
    ];
    let still = Motion {
        h: 0.0,
        g: glam::Vec3::ZERO,
        damp: 0.0,
    };
    // SAFETY: AVX2 (this function's contract); every slice holds n particles.
    let (mut ok, mut fastest, _) = pass::<false>(pointers, n / 2, vh, still).reduce();
    if n % 2 == 1 {
        let t = n - 1;
        let (f, s2) = super::velocity_block(&mut v[t..], &x[t..], &x_prev[t..], vh);
        ok &= f;
        fastest = if s2 > fastest { s2 } else { fastest };
    }
    (ok, fastest)
}
