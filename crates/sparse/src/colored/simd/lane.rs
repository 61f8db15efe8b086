//! [`Lane`]: the arithmetic of the bending and tether updates written once for one `f32` (the
//! scalar twin) and for an instruction set's vector ([`W`]), so that both perform the same
//! operations in the same order. Only `fma` differs between them: the scalar twin always
//! multiplies then adds (a software `fmaf` would be slow in a build without FMA), the vector
//! kernels fuse unless `enhanced-determinism` is on, so under that feature every kernel gives
//! the scalar twin's bits.

use super::block::Isa;
use super::DETERMINISTIC;
use std::marker::PhantomData;

/// One lane (or a vector of lanes) of f32 and the operations the updates use. Methods are
/// `unsafe` because the vector implementation needs its instruction set (see [`Isa`]).
pub(super) trait Lane: Copy {
    /// A lane mask.
    type M: Copy;
    /// Every lane `v`.
    unsafe fn splat(v: f32) -> Self;
    /// `self + o`.
    unsafe fn add(self, o: Self) -> Self;
    /// `self - o`.
    unsafe fn sub(self, o: Self) -> Self;
    /// `self * o`.
    unsafe fn mul(self, o: Self) -> Self;
    /// `self / o`, correctly rounded.
    unsafe fn div(self, o: Self) -> Self;
    /// `√self`, correctly rounded.
    unsafe fn sqrt(self) -> Self;
    /// `self * b + c`: fused in the vector kernels unless `enhanced-determinism`.
    unsafe fn fma(self, b: Self, c: Self) -> Self;
    /// `self * b - c`, fused as [`Lane::fma`].
    unsafe fn mul_sub(self, b: Self, c: Self) -> Self;
    /// `c - self * b`, fused as [`Lane::fma`].
    unsafe fn neg_mul_add(self, b: Self, c: Self) -> Self;
    /// `|self|` (the sign bit cleared).
    unsafe fn abs(self) -> Self;
    /// `1 / self`: correctly rounded in the scalar twin and under `enhanced-determinism`, else
    /// the instruction set's estimate and one Newton step (a few ulp; NaN where `self` is 0 or
    /// infinite, where the twin gives infinity or 0: callers mask those lanes).
    unsafe fn recip(self) -> Self;
    /// `self < o ? self : o` (so `o` where either is NaN): the same bits in every
    /// implementation.
    unsafe fn min(self, o: Self) -> Self;
    /// `o < self ? self : o` (so `o` where either is NaN).
    unsafe fn max(self, o: Self) -> Self;
    /// Lanes where `self < o` (false for NaN).
    unsafe fn lt(self, o: Self) -> Self::M;
    /// Lanes set in both.
    unsafe fn and(a: Self::M, b: Self::M) -> Self::M;
    /// `t` where `m`, else `f`.
    unsafe fn select(m: Self::M, t: Self, f: Self) -> Self;
    /// `a` where `m`, else +0.0.
    unsafe fn keep_or_zero(m: Self::M, a: Self) -> Self;
    /// `-a` (the sign bit flipped) where `m`, else `a`.
    unsafe fn negate_where(m: Self::M, a: Self) -> Self;
}

impl Lane for f32 {
    type M = bool;
    #[inline(always)]
    unsafe fn splat(v: f32) -> f32 {
        v
    }
    #[inline(always)]
    unsafe fn add(self, o: f32) -> f32 {
        self + o
    }
    #[inline(always)]
    unsafe fn sub(self, o: f32) -> f32 {
        self - o
    }
    #[inline(always)]
    unsafe fn mul(self, o: f32) -> f32 {
        self * o
    }
    #[inline(always)]
    unsafe fn div(self, o: f32) -> f32 {
        self / o
    }
    #[inline(always)]
    unsafe fn sqrt(self) -> f32 {
        f32::sqrt(self)
    }
    #[inline(always)]
    unsafe fn fma(self, b: f32, c: f32) -> f32 {
        self * b + c
    }
    #[inline(always)]
    unsafe fn mul_sub(self, b: f32, c: f32) -> f32 {
        self * b - c
    }
    #[inline(always)]
    unsafe fn neg_mul_add(self, b: f32, c: f32) -> f32 {
        c - self * b
    }
    #[inline(always)]
    unsafe fn abs(self) -> f32 {
        f32::abs(self)
    }
    #[inline(always)]
    unsafe fn recip(self) -> f32 {
        1.0 / self
    }
    #[inline(always)]
    unsafe fn min(self, o: f32) -> f32 {
        if self < o {
            self
        } else {
            o
        }
    }
    #[inline(always)]
    unsafe fn max(self, o: f32) -> f32 {
        if o < self {
            self
        } else {
            o
        }
    }
    #[inline(always)]
    unsafe fn lt(self, o: f32) -> bool {
        self < o
    }
    #[inline(always)]
    unsafe fn and(a: bool, b: bool) -> bool {
        a & b
    }
    #[inline(always)]
    unsafe fn select(m: bool, t: f32, f: f32) -> f32 {
        if m {
            t
        } else {
            f
        }
    }
    #[inline(always)]
    unsafe fn keep_or_zero(m: bool, a: f32) -> f32 {
        if m {
            a
        } else {
            0.0
        }
    }
    #[inline(always)]
    unsafe fn negate_where(m: bool, a: f32) -> f32 {
        if m {
            -a
        } else {
            a
        }
    }
}

/// A vector of instruction set `I` as a [`Lane`].
pub(super) struct W<I: Isa>(pub I::V, PhantomData<I>);

impl<I: Isa> Clone for W<I> {
    #[inline(always)]
    fn clone(&self) -> Self {
        *self
    }
}
impl<I: Isa> Copy for W<I> {}

impl<I: Isa> W<I> {
    /// Wraps a vector.
    #[inline(always)]
    pub fn new(v: I::V) -> Self {
        W(v, PhantomData)
    }
}

/// [`Lane`] methods `self ∘ o` that are the [`Isa`] method of the same name on the wrapped
/// vectors.
macro_rules! wrapped_binary {
    ($($name:ident),*) => {$(
        #[inline(always)]
        unsafe fn $name(self, o: Self) -> Self {
            W::new(I::$name(self.0, o.0))
        }
    )*};
}

/// [`Lane`] methods `self * b ∘ c` that are the fused [`Isa`] method named after `=>`, or under
/// `enhanced-determinism` the rounded product `p` then the unfused expression of `p` and `c`.
macro_rules! fused {
    ($($name:ident => $isa:ident: |$p:ident, $c:ident| $unfused:expr),* $(,)?) => {$(
        #[inline(always)]
        unsafe fn $name(self, b: Self, c: Self) -> Self {
            if DETERMINISTIC {
                let ($p, $c) = (I::mul(self.0, b.0), c.0);
                W::new($unfused)
            } else {
                W::new(I::$isa(self.0, b.0, c.0))
            }
        }
    )*};
}

impl<I: Isa> Lane for W<I> {
    type M = I::M;
    #[inline(always)]
    unsafe fn splat(v: f32) -> Self {
        W::new(I::splat(v))
    }
    wrapped_binary!(add, sub, mul, div);
    #[inline(always)]
    unsafe fn sqrt(self) -> Self {
        W::new(I::sqrt(self.0))
    }
    fused! {
        fma => mul_add: |p, c| I::add(p, c),
        mul_sub => mul_sub: |p, c| I::sub(p, c),
        neg_mul_add => neg_mul_add: |p, c| I::sub(c, p),
    }
    #[inline(always)]
    unsafe fn abs(self) -> Self {
        W::new(I::abs(self.0))
    }
    #[inline(always)]
    unsafe fn recip(self) -> Self {
        if DETERMINISTIC {
            return W::new(I::div(I::splat(1.0), self.0));
        }
        W::new(super::block::recip_newton::<I>(self.0))
    }
    #[inline(always)]
    unsafe fn min(self, o: Self) -> Self {
        W::new(I::min(self.0, o.0))
    }
    #[inline(always)]
    unsafe fn max(self, o: Self) -> Self {
        W::new(I::max(self.0, o.0))
    }
    #[inline(always)]
    unsafe fn lt(self, o: Self) -> I::M {
        I::lt(self.0, o.0)
    }
    #[inline(always)]
    unsafe fn and(a: I::M, b: I::M) -> I::M {
        I::and(a, b)
    }
    #[inline(always)]
    unsafe fn select(m: I::M, t: Self, f: Self) -> Self {
        W::new(I::select(m, t.0, f.0))
    }
    #[inline(always)]
    unsafe fn keep_or_zero(m: I::M, a: Self) -> Self {
        W::new(I::keep_or_zero(m, a.0))
    }
    #[inline(always)]
    unsafe fn negate_where(m: I::M, a: Self) -> Self {
        W::new(I::negate_where(m, a.0))
    }
}

/// A 3-vector of lanes.
#[derive(Clone, Copy)]
pub(super) struct V3<L>(pub [L; 3]);

impl<L: Lane> V3<L> {
    #[inline(always)]
    pub unsafe fn sub(self, o: Self) -> Self {
        let (a, b) = (self.0, o.0);
        V3([a[0].sub(b[0]), a[1].sub(b[1]), a[2].sub(b[2])])
    }
    #[inline(always)]
    pub unsafe fn scale(self, s: L) -> Self {
        let a = self.0;
        V3([a[0].mul(s), a[1].mul(s), a[2].mul(s)])
    }
    /// `self * s + o`.
    #[inline(always)]
    pub unsafe fn scale_add(self, s: L, o: Self) -> Self {
        let (a, b) = (self.0, o.0);
        V3([a[0].fma(s, b[0]), a[1].fma(s, b[1]), a[2].fma(s, b[2])])
    }
    /// `self` where `m`, else `o`.
    #[inline(always)]
    pub unsafe fn keep(self, m: L::M, o: Self) -> Self {
        let (a, b) = (self.0, o.0);
        V3([
            L::select(m, a[0], b[0]),
            L::select(m, a[1], b[1]),
            L::select(m, a[2], b[2]),
        ])
    }
    /// `x² + y² + z²` in that order (the products after the first fused where allowed).
    #[inline(always)]
    pub unsafe fn dot(self, o: Self) -> L {
        let (a, b) = (self.0, o.0);
        a[2].fma(b[2], a[1].fma(b[1], a[0].mul(b[0])))
    }
    #[inline(always)]
    pub unsafe fn cross(self, o: Self) -> Self {
        let (a, b) = (self.0, o.0);
        V3([
            a[1].mul_sub(b[2], a[2].mul(b[1])),
            a[2].mul_sub(b[0], a[0].mul(b[2])),
            a[0].mul_sub(b[1], a[1].mul(b[0])),
        ])
    }
    /// `o - self * s`.
    #[inline(always)]
    pub unsafe fn neg_scale_add(self, s: L, o: Self) -> Self {
        let (a, b) = (self.0, o.0);
        V3([
            a[0].neg_mul_add(s, b[0]),
            a[1].neg_mul_add(s, b[1]),
            a[2].neg_mul_add(s, b[2]),
        ])
    }
}

/// Lanes where `a` is positive and finite.
#[inline(always)]
pub(super) unsafe fn positive_finite<L: Lane>(a: L, above: f32) -> L::M {
    L::and(L::splat(above).lt(a), a.lt(L::splat(f32::INFINITY)))
}
