//! The AVX-512 kernel: one 512-bit vector holds the four `Packed4` of a quad's side, so a
//! block is one part (see `batch.rs`). Quads of a side are loaded as whole 64-byte windows
//! (run, pair) or 16 bytes per particle (stride-2, gather); `rsqrt14` and `rcp14` give the
//! estimates.
//!
//! `std::arch` rather than `wide`: `wide` picks its code at compile time from the build's
//! target features, and this kernel must exist in every x86-64 build, chosen at run time.

use super::block::{self, isa_arithmetic, Isa, Job};
use core::arch::x86_64::*;

/// AVX-512F registers.
pub(super) struct Avx512;

impl Isa for Avx512 {
    type V = __m512;
    type M = __mmask16;
    const WIDTH: usize = 16;
    const LOAD_AHEAD: bool = true;

    isa_arithmetic! {
        __m512 {
            load: _mm512_loadu_ps, store: _mm512_storeu_ps,
            splat: _mm512_set1_ps, add: _mm512_add_ps, sub: _mm512_sub_ps, mul: _mm512_mul_ps,
            div: _mm512_div_ps, sqrt: _mm512_sqrt_ps, mul_add: _mm512_fmadd_ps,
            mul_sub: _mm512_fmsub_ps, neg_mul_add: _mm512_fnmadd_ps, abs: _mm512_abs_ps,
            rsqrt_estimate: _mm512_rsqrt14_ps, recip_estimate: _mm512_rcp14_ps,
        }
    }
    #[inline(always)]
    unsafe fn neither_le_zero(a: __m512, b: __m512) -> __mmask16 {
        let zero = _mm512_setzero_ps();
        _mm512_cmp_ps_mask::<_CMP_NLE_UQ>(a, zero) & _mm512_cmp_ps_mask::<_CMP_NLE_UQ>(b, zero)
    }
    #[inline(always)]
    unsafe fn and_nonzero(m: __mmask16, w: __m512) -> __mmask16 {
        _mm512_mask_cmp_ps_mask::<_CMP_NEQ_UQ>(m, w, _mm512_setzero_ps())
    }
    #[inline(always)]
    unsafe fn select(m: __mmask16, t: __m512, f: __m512) -> __m512 {
        _mm512_mask_blend_ps(m, f, t)
    }
    #[inline(always)]
    unsafe fn lt(a: __m512, b: __m512) -> __mmask16 {
        _mm512_cmp_ps_mask::<_CMP_LT_OQ>(a, b)
    }
    #[inline(always)]
    unsafe fn and(a: __mmask16, b: __mmask16) -> __mmask16 {
        a & b
    }
    #[inline(always)]
    unsafe fn min(a: __m512, b: __m512) -> __m512 {
        _mm512_min_ps(a, b)
    }
    #[inline(always)]
    unsafe fn max(a: __m512, b: __m512) -> __m512 {
        _mm512_max_ps(a, b)
    }
    #[inline(always)]
    unsafe fn keep_or_zero(m: __mmask16, a: __m512) -> __m512 {
        _mm512_maskz_mov_ps(m, a)
    }
    #[inline(always)]
    unsafe fn negate_where(m: __mmask16, a: __m512) -> __m512 {
        let bits = _mm512_castps_si512(a);
        let sign = _mm512_set1_epi32(i32::MIN);
        _mm512_castsi512_ps(_mm512_mask_xor_epi32(bits, m, bits, sign))
    }
    #[inline(always)]
    unsafe fn any(m: __mmask16) -> bool {
        m != 0
    }
    #[inline(always)]
    unsafe fn transpose(r: [__m512; 4]) -> [__m512; 4] {
        let t0 = _mm512_castps_pd(_mm512_unpacklo_ps(r[0], r[1]));
        let t1 = _mm512_castps_pd(_mm512_unpackhi_ps(r[0], r[1]));
        let t2 = _mm512_castps_pd(_mm512_unpacklo_ps(r[2], r[3]));
        let t3 = _mm512_castps_pd(_mm512_unpackhi_ps(r[2], r[3]));
        [
            _mm512_castpd_ps(_mm512_unpacklo_pd(t0, t2)),
            _mm512_castpd_ps(_mm512_unpackhi_pd(t0, t2)),
            _mm512_castpd_ps(_mm512_unpacklo_pd(t1, t3)),
            _mm512_castpd_ps(_mm512_unpackhi_pd(t1, t3)),
        ]
    }
    #[inline(always)]
    unsafe fn gather(at: impl Fn(usize) -> *const f32) -> __m512 {
        let mut v = _mm512_castps128_ps512(_mm_loadu_ps(at(0)));
        v = _mm512_insertf32x4::<1>(v, _mm_loadu_ps(at(1)));
        v = _mm512_insertf32x4::<2>(v, _mm_loadu_ps(at(2)));
        _mm512_insertf32x4::<3>(v, _mm_loadu_ps(at(3)))
    }
    #[inline(always)]
    unsafe fn scatter(v: __m512, at: impl Fn(usize) -> *mut f32) {
        _mm_storeu_ps(at(0), _mm512_castps512_ps128(v));
        _mm_storeu_ps(at(1), _mm512_extractf32x4_ps::<1>(v));
        _mm_storeu_ps(at(2), _mm512_extractf32x4_ps::<2>(v));
        _mm_storeu_ps(at(3), _mm512_extractf32x4_ps::<3>(v));
    }
    #[inline(always)]
    unsafe fn deinterleave(lo: __m512, hi: __m512) -> (__m512, __m512) {
        (
            _mm512_shuffle_f32x4::<0x88>(lo, hi),
            _mm512_shuffle_f32x4::<0xDD>(lo, hi),
        )
    }
    #[inline(always)]
    unsafe fn interleave(a: __m512, b: __m512) -> (__m512, __m512) {
        let lo = _mm512_setr_epi32(0, 1, 2, 3, 16, 17, 18, 19, 4, 5, 6, 7, 20, 21, 22, 23);
        let hi = _mm512_setr_epi32(8, 9, 10, 11, 24, 25, 26, 27, 12, 13, 14, 15, 28, 29, 30, 31);
        (
            _mm512_permutex2var_ps(a, lo, b),
            _mm512_permutex2var_ps(a, hi, b),
        )
    }
}

/// [`block::project_range`] on this instruction set.
///
/// # Safety
/// The CPU has AVX-512F; otherwise as [`block::project_range`].
#[target_feature(enable = "avx512f")]
pub(super) unsafe fn project_range(job: Job<super::EdgeBatch>) {
    block::project_range::<Avx512>(job)
}
