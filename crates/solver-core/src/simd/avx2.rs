//! The AVX2 + FMA kernel: one 256-bit vector holds two `Packed4`, so a quad's side is two
//! vectors and a block two parts of eight lanes (slots 0-1 and 2-3 of every quad; see
//! `batch.rs`). A run quad's part is one 32-byte load per side; a pair quad's part is two
//! 32-byte loads split into the sides by two 128-bit lane permutes; stride-2 and gather quads
//! load 16 bytes per particle. `rsqrt` and `rcp` (12 bits) give the estimates.
//!
//! `std::arch` rather than `wide`: `wide` picks its code at compile time from the build's
//! target features, and this kernel must exist in every x86-64 build, chosen at run time.

use super::batch::EdgeBatch;
use super::block::{self, Isa};
use crate::particles::Packed4;
use core::arch::x86_64::*;
use std::ops::Range;

/// AVX2 + FMA registers.
pub(super) struct Avx2;

impl Isa for Avx2 {
    type V = __m256;
    type M = __m256;
    const WIDTH: usize = 8;

    #[inline(always)]
    unsafe fn splat(v: f32) -> __m256 {
        _mm256_set1_ps(v)
    }
    #[inline(always)]
    unsafe fn load(p: *const f32) -> __m256 {
        _mm256_loadu_ps(p)
    }
    #[inline(always)]
    unsafe fn store(p: *mut f32, v: __m256) {
        _mm256_storeu_ps(p, v)
    }
    #[inline(always)]
    unsafe fn add(a: __m256, b: __m256) -> __m256 {
        _mm256_add_ps(a, b)
    }
    #[inline(always)]
    unsafe fn sub(a: __m256, b: __m256) -> __m256 {
        _mm256_sub_ps(a, b)
    }
    #[inline(always)]
    unsafe fn mul(a: __m256, b: __m256) -> __m256 {
        _mm256_mul_ps(a, b)
    }
    #[inline(always)]
    unsafe fn div(a: __m256, b: __m256) -> __m256 {
        _mm256_div_ps(a, b)
    }
    #[inline(always)]
    unsafe fn sqrt(a: __m256) -> __m256 {
        _mm256_sqrt_ps(a)
    }
    #[inline(always)]
    unsafe fn mul_add(a: __m256, b: __m256, c: __m256) -> __m256 {
        _mm256_fmadd_ps(a, b, c)
    }
    #[inline(always)]
    unsafe fn rsqrt_estimate(a: __m256) -> __m256 {
        _mm256_rsqrt_ps(a)
    }
    #[inline(always)]
    unsafe fn recip_estimate(a: __m256) -> __m256 {
        _mm256_rcp_ps(a)
    }
    #[inline(always)]
    unsafe fn neither_le_zero(a: __m256, b: __m256) -> __m256 {
        let zero = _mm256_setzero_ps();
        _mm256_and_ps(
            _mm256_cmp_ps::<_CMP_NLE_UQ>(a, zero),
            _mm256_cmp_ps::<_CMP_NLE_UQ>(b, zero),
        )
    }
    #[inline(always)]
    unsafe fn and_nonzero(m: __m256, w: __m256) -> __m256 {
        _mm256_and_ps(m, _mm256_cmp_ps::<_CMP_NEQ_UQ>(w, _mm256_setzero_ps()))
    }
    #[inline(always)]
    unsafe fn select(m: __m256, t: __m256, f: __m256) -> __m256 {
        _mm256_blendv_ps(f, t, m)
    }
    #[inline(always)]
    unsafe fn transpose(r: [__m256; 4]) -> [__m256; 4] {
        let t0 = _mm256_castps_pd(_mm256_unpacklo_ps(r[0], r[1]));
        let t1 = _mm256_castps_pd(_mm256_unpackhi_ps(r[0], r[1]));
        let t2 = _mm256_castps_pd(_mm256_unpacklo_ps(r[2], r[3]));
        let t3 = _mm256_castps_pd(_mm256_unpackhi_ps(r[2], r[3]));
        [
            _mm256_castpd_ps(_mm256_unpacklo_pd(t0, t2)),
            _mm256_castpd_ps(_mm256_unpackhi_pd(t0, t2)),
            _mm256_castpd_ps(_mm256_unpacklo_pd(t1, t3)),
            _mm256_castpd_ps(_mm256_unpackhi_pd(t1, t3)),
        ]
    }
    #[inline(always)]
    unsafe fn gather(at: impl Fn(usize) -> *const f32) -> __m256 {
        _mm256_insertf128_ps::<1>(
            _mm256_castps128_ps256(_mm_loadu_ps(at(0))),
            _mm_loadu_ps(at(1)),
        )
    }
    #[inline(always)]
    unsafe fn scatter(v: __m256, at: impl Fn(usize) -> *mut f32) {
        _mm_storeu_ps(at(0), _mm256_castps256_ps128(v));
        _mm_storeu_ps(at(1), _mm256_extractf128_ps::<1>(v));
    }
    #[inline(always)]
    unsafe fn deinterleave(lo: __m256, hi: __m256) -> (__m256, __m256) {
        (
            _mm256_permute2f128_ps::<0x20>(lo, hi),
            _mm256_permute2f128_ps::<0x31>(lo, hi),
        )
    }
    #[inline(always)]
    unsafe fn interleave(a: __m256, b: __m256) -> (__m256, __m256) {
        Self::deinterleave(a, b)
    }
}

/// The AVX2 body of [`super::project_distance_batch_range`].
///
/// # Safety
/// The CPU has AVX2 and FMA; otherwise as [`block::project_range`].
#[target_feature(enable = "avx2,fma")]
pub(super) unsafe fn project_range(
    x: *mut Packed4,
    b: &EdgeBatch,
    range: Range<usize>,
    lambda: *mut f32,
    inv_dt2: f32,
    k: f32,
) {
    block::project_range::<Avx2>(x, b, range, lambda, inv_dt2, k)
}
