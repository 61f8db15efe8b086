//! The portable kernel: `wide::f32x4` (SSE on x86-64, NEON on aarch64), one `Packed4` per
//! vector, so a block is four parts of four lanes (slot `k` of the four quads) and every
//! particle is one 16-byte load, whatever its quad's kind.

use super::block::{isa_arithmetic, Isa};
use wide::f32x4;

/// Four floats from `p` (unaligned).
#[inline(always)]
unsafe fn load4(p: *const f32) -> f32x4 {
    f32x4::from(p.cast::<[f32; 4]>().read_unaligned())
}

/// Four floats to `p` (unaligned).
#[inline(always)]
unsafe fn store4(p: *mut f32, v: f32x4) {
    p.cast::<[f32; 4]>().write_unaligned(v.to_array())
}

/// `wide::f32x4` registers.
pub(super) struct Portable;

impl Isa for Portable {
    type V = f32x4;
    type M = f32x4;
    const WIDTH: usize = 4;
    const LOAD_AHEAD: bool = true;

    // `wide`'s operators and methods.
    isa_arithmetic! {
        f32x4 {
            load: load4, store: store4,
            splat: f32x4::splat, add: core::ops::Add::add, sub: core::ops::Sub::sub,
            mul: core::ops::Mul::mul, div: core::ops::Div::div, sqrt: f32x4::sqrt,
            mul_add: f32x4::mul_add, mul_sub: f32x4::mul_sub,
            neg_mul_add: f32x4::mul_neg_add, abs: f32x4::abs,
            rsqrt_estimate: f32x4::recip_sqrt, recip_estimate: f32x4::recip,
        }
    }
    #[inline(always)]
    unsafe fn neither_le_zero(a: f32x4, b: f32x4) -> f32x4 {
        let zero = f32x4::ZERO;
        !(a.simd_le(zero) | b.simd_le(zero))
    }
    #[inline(always)]
    unsafe fn and_nonzero(m: f32x4, w: f32x4) -> f32x4 {
        m & w.simd_ne(f32x4::ZERO)
    }
    #[inline(always)]
    unsafe fn select(m: f32x4, t: f32x4, f: f32x4) -> f32x4 {
        m.select(t, f)
    }
    #[inline(always)]
    unsafe fn lt(a: f32x4, b: f32x4) -> f32x4 {
        a.simd_lt(b)
    }
    #[inline(always)]
    unsafe fn and(a: f32x4, b: f32x4) -> f32x4 {
        a & b
    }
    #[inline(always)]
    unsafe fn keep_or_zero(m: f32x4, a: f32x4) -> f32x4 {
        m & a
    }
    #[inline(always)]
    unsafe fn negate_where(m: f32x4, a: f32x4) -> f32x4 {
        a ^ (m & f32x4::splat(-0.0))
    }
    #[inline(always)]
    unsafe fn any(m: f32x4) -> bool {
        m.any()
    }
    #[inline(always)]
    unsafe fn transpose(r: [f32x4; 4]) -> [f32x4; 4] {
        f32x4::transpose(r)
    }
    #[inline(always)]
    unsafe fn gather(at: impl Fn(usize) -> *const f32) -> f32x4 {
        Self::load(at(0))
    }
    #[inline(always)]
    unsafe fn scatter(v: f32x4, at: impl Fn(usize) -> *mut f32) {
        Self::store(at(0), v)
    }
    #[inline(always)]
    unsafe fn deinterleave(lo: f32x4, hi: f32x4) -> (f32x4, f32x4) {
        (lo, hi)
    }
    #[inline(always)]
    unsafe fn interleave(a: f32x4, b: f32x4) -> (f32x4, f32x4) {
        (a, b)
    }
}
