//! The AVX2 + FMA kernel: one 256-bit vector holds two `Packed4`, so a quad's side is two
//! vectors, one for slots 0-1 and one for slots 2-3 (see `batch.rs`), and after the transpose
//! per 128-bit lane the first holds lanes 0-7 of the block, the second lanes 8-15. A run quad
//! is two 32-byte loads per side; a pair quad four 32-byte loads split into the sides by
//! 128-bit lane permutes; stride-2 and gather quads load 16 bytes per particle. `rsqrt` and
//! `rcp` (12 bits) give the estimates.
//!
//! `std::arch` rather than `wide`: `wide` picks its code at compile time from the build's
//! target features, and this kernel must exist in every x86-64 build, chosen at run time.

use super::block::{self, arr4, isa_arithmetic, Isa, Job};
use core::arch::x86_64::*;

/// AVX2 + FMA registers, two at a time: a block's two parts (slots 0-1 and 2-3 of every
/// quad) go through the update side by side, each operation on both, so that two independent
/// dependency chains are interleaved instruction by instruction (one chain alone leaves the
/// core waiting on latencies; the out-of-order window does not hold two parts).
pub(super) struct Avx2;

/// Two 256-bit vectors: lanes 0-7 and 8-15.
type Y2 = [__m256; 2];

/// `f` on each half.
#[inline(always)]
fn each(f: impl Fn(usize) -> __m256) -> Y2 {
    [f(0), f(1)]
}

/// The 4 x 4 transpose in each 128-bit lane of four vectors.
#[inline(always)]
unsafe fn transpose4(r: [__m256; 4]) -> [__m256; 4] {
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

impl Isa for Avx2 {
    type V = Y2;
    type M = Y2;
    const WIDTH: usize = 16;
    const LOAD_AHEAD: bool = false;

    isa_arithmetic!(pair of Avx2x1);
    #[inline(always)]
    unsafe fn neither_le_zero(a: Y2, b: Y2) -> Y2 {
        let zero = _mm256_setzero_ps();
        each(|h| {
            _mm256_and_ps(
                _mm256_cmp_ps::<_CMP_NLE_UQ>(a[h], zero),
                _mm256_cmp_ps::<_CMP_NLE_UQ>(b[h], zero),
            )
        })
    }
    #[inline(always)]
    unsafe fn and_nonzero(m: Y2, w: Y2) -> Y2 {
        let zero = _mm256_setzero_ps();
        each(|h| _mm256_and_ps(m[h], _mm256_cmp_ps::<_CMP_NEQ_UQ>(w[h], zero)))
    }
    #[inline(always)]
    unsafe fn select(m: Y2, t: Y2, f: Y2) -> Y2 {
        each(|h| _mm256_blendv_ps(f[h], t[h], m[h]))
    }
    #[inline(always)]
    unsafe fn lt(a: Y2, b: Y2) -> Y2 {
        each(|h| _mm256_cmp_ps::<_CMP_LT_OQ>(a[h], b[h]))
    }
    #[inline(always)]
    unsafe fn and(a: Y2, b: Y2) -> Y2 {
        each(|h| _mm256_and_ps(a[h], b[h]))
    }
    #[inline(always)]
    unsafe fn min(a: Y2, b: Y2) -> Y2 {
        each(|h| _mm256_min_ps(a[h], b[h]))
    }
    #[inline(always)]
    unsafe fn max(a: Y2, b: Y2) -> Y2 {
        each(|h| _mm256_max_ps(a[h], b[h]))
    }
    #[inline(always)]
    unsafe fn keep_or_zero(m: Y2, a: Y2) -> Y2 {
        each(|h| _mm256_and_ps(m[h], a[h]))
    }
    #[inline(always)]
    unsafe fn negate_where(m: Y2, a: Y2) -> Y2 {
        each(|h| Avx2x1::negate_where(m[h], a[h]))
    }
    #[inline(always)]
    unsafe fn any(m: Y2) -> bool {
        _mm256_movemask_ps(_mm256_or_ps(m[0], m[1])) != 0
    }
    #[inline(always)]
    unsafe fn transpose(r: [Y2; 4]) -> [Y2; 4] {
        let a = transpose4(arr4!(k => r[k][0]));
        let b = transpose4(arr4!(k => r[k][1]));
        arr4!(c => [a[c], b[c]])
    }
    // Particle moves on each half as `Avx2x1`'s.
    #[inline(always)]
    unsafe fn gather(at: impl Fn(usize) -> *const f32) -> Y2 {
        each(|h| Avx2x1::gather(|s| at(2 * h + s)))
    }
    // `h` also picks the lane offset; the plain loop keeps this kernel's codegen as it is.
    #[allow(clippy::needless_range_loop)]
    #[inline(always)]
    unsafe fn scatter(v: Y2, at: impl Fn(usize) -> *mut f32) {
        for h in 0..2 {
            Avx2x1::scatter(v[h], |s| at(2 * h + s));
        }
    }
    // `h` also picks the lane offset; the plain loop keeps this kernel's codegen as it is.
    #[allow(clippy::needless_range_loop)]
    #[inline(always)]
    unsafe fn scatter_add(v: Y2, at: impl Fn(usize) -> *mut f32) {
        for h in 0..2 {
            Avx2x1::scatter_add(v[h], |s| at(2 * h + s));
        }
    }
    #[inline(always)]
    unsafe fn deinterleave(lo: Y2, hi: Y2) -> (Y2, Y2) {
        // lo = [a0 b0 | a1 b1], hi = [a2 b2 | a3 b3], one `Packed4` per 128-bit lane.
        let (a0, b0) = Avx2x1::deinterleave(lo[0], lo[1]);
        let (a1, b1) = Avx2x1::deinterleave(hi[0], hi[1]);
        ([a0, a1], [b0, b1])
    }
    #[inline(always)]
    unsafe fn interleave(a: Y2, b: Y2) -> (Y2, Y2) {
        let (l0, h0) = Avx2x1::interleave(a[0], b[0]);
        let (l1, h1) = Avx2x1::interleave(a[1], b[1]);
        ([l0, h0], [l1, h1])
    }
}

/// [`block::project_range`] on this instruction set.
///
/// # Safety
/// The CPU has AVX2 and FMA; otherwise as [`block::project_range`].
#[target_feature(enable = "avx2,fma")]
pub(super) unsafe fn project_range(job: Job<super::EdgeBatch>) {
    block::project_range::<Avx2>(job)
}

/// `|a|` by clearing the sign bit: AVX has no float absolute value.
#[inline(always)]
unsafe fn abs256(a: __m256) -> __m256 {
    _mm256_andnot_ps(_mm256_set1_ps(-0.0), a)
}

/// One 256-bit register at a time: the bend update keeps some 40 values live per vector, which
/// two registers per value ([`Avx2`]) would spill from the 16 `ymm` registers.
pub(super) struct Avx2x1;

impl Isa for Avx2x1 {
    type V = __m256;
    type M = __m256;
    const WIDTH: usize = 8;
    const LOAD_AHEAD: bool = false;

    isa_arithmetic! {
        __m256 {
            load: _mm256_loadu_ps, store: _mm256_storeu_ps,
            splat: _mm256_set1_ps, add: _mm256_add_ps, sub: _mm256_sub_ps, mul: _mm256_mul_ps,
            div: _mm256_div_ps, sqrt: _mm256_sqrt_ps, mul_add: _mm256_fmadd_ps,
            mul_sub: _mm256_fmsub_ps, neg_mul_add: _mm256_fnmadd_ps, abs: abs256,
            rsqrt_estimate: _mm256_rsqrt_ps, recip_estimate: _mm256_rcp_ps,
        }
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
    unsafe fn lt(a: __m256, b: __m256) -> __m256 {
        _mm256_cmp_ps::<_CMP_LT_OQ>(a, b)
    }
    #[inline(always)]
    unsafe fn and(a: __m256, b: __m256) -> __m256 {
        _mm256_and_ps(a, b)
    }
    #[inline(always)]
    unsafe fn min(a: __m256, b: __m256) -> __m256 {
        _mm256_min_ps(a, b)
    }
    #[inline(always)]
    unsafe fn max(a: __m256, b: __m256) -> __m256 {
        _mm256_max_ps(a, b)
    }
    #[inline(always)]
    unsafe fn keep_or_zero(m: __m256, a: __m256) -> __m256 {
        _mm256_and_ps(m, a)
    }
    #[inline(always)]
    unsafe fn negate_where(m: __m256, a: __m256) -> __m256 {
        _mm256_xor_ps(a, _mm256_and_ps(m, _mm256_set1_ps(-0.0)))
    }
    #[inline(always)]
    unsafe fn any(m: __m256) -> bool {
        _mm256_movemask_ps(m) != 0
    }
    #[inline(always)]
    unsafe fn transpose(r: [__m256; 4]) -> [__m256; 4] {
        transpose4(r)
    }
    #[inline(always)]
    unsafe fn gather(at: impl Fn(usize) -> *const f32) -> __m256 {
        let lo = _mm256_castps128_ps256(_mm_loadu_ps(at(0)));
        _mm256_insertf128_ps::<1>(lo, _mm_loadu_ps(at(1)))
    }
    #[inline(always)]
    unsafe fn scatter(v: __m256, at: impl Fn(usize) -> *mut f32) {
        _mm_storeu_ps(at(0), _mm256_castps256_ps128(v));
        _mm_storeu_ps(at(1), _mm256_extractf128_ps::<1>(v));
    }
    #[inline(always)]
    unsafe fn scatter_add(v: __m256, at: impl Fn(usize) -> *mut f32) {
        // Each half is added where it is stored: no 256-bit value of the old particles.
        let add_to = |p: *mut f32, d: __m128| _mm_storeu_ps(p, _mm_add_ps(_mm_loadu_ps(p), d));
        add_to(at(0), _mm256_castps256_ps128(v));
        add_to(at(1), _mm256_extractf128_ps::<1>(v));
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
        (
            _mm256_permute2f128_ps::<0x20>(a, b),
            _mm256_permute2f128_ps::<0x31>(a, b),
        )
    }
}
