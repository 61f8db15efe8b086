//! What every vector kernel shares: the block driver (quads loaded by kind, the in-register
//! transpose, the moves added back) and the XPBD update, written once over an instruction set's
//! [`Isa`] primitives. Each kernel module implements [`Isa`] for its register type and wraps
//! [`project_range`] in an entry point compiled for its instructions.

use super::batch::{BlockKind, EdgeBatch, GATHER, PAIR, QUAD, RUN, STRIDE2};
use super::{DETERMINISTIC, LANES};
use solver_core::geometry::packed::Packed4;
use std::ops::Range;

/// `[e(0), e(1), e(2), e(3)]` for `arr4!(k => e(k))`: a macro, not a function of a closure,
/// because closures (and `core::array::from_fn`, `map`) stay out of line in the
/// `#[target_feature]` kernels when their bodies are large, a call per vector operation.
macro_rules! arr4 {
    ($k:ident => $e:expr) => {
        [
            {
                let $k = 0usize;
                $e
            },
            {
                let $k = 1usize;
                $e
            },
            {
                let $k = 2usize;
                $e
            },
            {
                let $k = 3usize;
                $e
            },
        ]
    };
}
pub(super) use arr4;

/// A quad kind that is only known per quad at run time (mixed blocks).
const MIXED: u8 = u8::MAX;

/// One instruction set's vector of [`Isa::WIDTH`] f32 lanes and the operations the kernel
/// needs. Every function is `#[inline(always)]` and free of `#[target_feature]`, so that it is
/// inlined into the kernel's entry point and compiled with that entry point's features.
///
/// # Safety
/// Implementations may only be called where the instructions they use are available (the
/// entry points check this once, through [`super::Kernel::available`]).
pub(super) trait Isa {
    /// `WIDTH` f32 lanes.
    type V: Copy;
    /// A lane mask from a comparison.
    type M: Copy;
    /// Lanes per vector; a block of `LANES` constraints is `LANES / WIDTH` parts.
    const WIDTH: usize;
    /// Whether the bend kernel loads a part's particles before solving the previous part:
    /// it pays where the registers hold both (32 vector registers), not with 16 `ymm`.
    const LOAD_AHEAD: bool;

    /// Every lane `v`.
    unsafe fn splat(v: f32) -> Self::V;
    /// `WIDTH` floats from `p` (unaligned).
    unsafe fn load(p: *const f32) -> Self::V;
    /// `WIDTH` floats to `p` (unaligned).
    unsafe fn store(p: *mut f32, v: Self::V);
    /// `a + b`.
    unsafe fn add(a: Self::V, b: Self::V) -> Self::V;
    /// `a - b`.
    unsafe fn sub(a: Self::V, b: Self::V) -> Self::V;
    /// `a * b`.
    unsafe fn mul(a: Self::V, b: Self::V) -> Self::V;
    /// `a / b`, correctly rounded.
    unsafe fn div(a: Self::V, b: Self::V) -> Self::V;
    /// `√a`, correctly rounded.
    unsafe fn sqrt(a: Self::V) -> Self::V;
    /// `a * b + c`, fused where the instruction set has FMA.
    unsafe fn mul_add(a: Self::V, b: Self::V, c: Self::V) -> Self::V;
    /// `a * b - c`, fused where the instruction set has FMA.
    unsafe fn mul_sub(a: Self::V, b: Self::V, c: Self::V) -> Self::V;
    /// `c - a * b`, fused where the instruction set has FMA.
    unsafe fn neg_mul_add(a: Self::V, b: Self::V, c: Self::V) -> Self::V;
    /// `|a|`: the sign bit cleared.
    unsafe fn abs(a: Self::V) -> Self::V;
    /// An estimate of `1/√a` that one Newton step makes accurate to a few ulp.
    unsafe fn rsqrt_estimate(a: Self::V) -> Self::V;
    /// An estimate of `1/a` that one Newton step makes accurate to a few ulp.
    unsafe fn recip_estimate(a: Self::V) -> Self::V;
    /// Lanes where neither `a <= 0` nor `b <= 0` (NaN lanes included, as in the scalar twin).
    unsafe fn neither_le_zero(a: Self::V, b: Self::V) -> Self::M;
    /// Lanes of `m` where `w != 0`.
    unsafe fn and_nonzero(m: Self::M, w: Self::V) -> Self::M;
    /// `t` where `m`, else `f`.
    unsafe fn select(m: Self::M, t: Self::V, f: Self::V) -> Self::V;
    /// Lanes where `a < b` (false where either is NaN).
    unsafe fn lt(a: Self::V, b: Self::V) -> Self::M;
    /// Lanes set in both masks.
    unsafe fn and(a: Self::M, b: Self::M) -> Self::M;
    /// `a < b ? a : b` per lane (`b` where either is NaN): x86's `minps` computes exactly this.
    #[inline(always)]
    unsafe fn min(a: Self::V, b: Self::V) -> Self::V {
        Self::select(Self::lt(a, b), a, b)
    }
    /// `b < a ? a : b` per lane (`b` where either is NaN), as x86's `maxps`.
    #[inline(always)]
    unsafe fn max(a: Self::V, b: Self::V) -> Self::V {
        Self::select(Self::lt(b, a), a, b)
    }
    /// `a` where `m`, else +0.0: a select against zero, which a bitwise and (or a zeroing
    /// mask) does in one operation.
    unsafe fn keep_or_zero(m: Self::M, a: Self::V) -> Self::V;
    /// `-a` (the sign bit flipped) where `m`, else `a`.
    unsafe fn negate_where(m: Self::M, a: Self::V) -> Self::V;
    /// Whether any lane of `m` is set.
    unsafe fn any(m: Self::M) -> bool;
    /// Transposes the 4 x 4 matrix in each 128-bit part of four vectors: one `Packed4` per
    /// part to one component per vector, and back (it is an involution).
    unsafe fn transpose(r: [Self::V; 4]) -> [Self::V; 4];
    /// One vector of `WIDTH / 4` particles, the `s`-th from `at(s)` (16 bytes each).
    unsafe fn gather(at: impl Fn(usize) -> *const f32) -> Self::V;
    /// Stores the `s`-th particle of `v` to `at(s)`.
    unsafe fn scatter(v: Self::V, at: impl Fn(usize) -> *mut f32);
    /// Adds the `s`-th particle of `v` to the 16 bytes at `at(s)`.
    #[inline(always)]
    unsafe fn scatter_add(v: Self::V, at: impl Fn(usize) -> *mut f32) {
        let old = Self::gather(|s| at(s).cast_const());
        Self::scatter(Self::add(old, v), at)
    }
    /// From two vectors of particles `[a0 b0 a1 b1 ...]` (`lo` then `hi`), the `a`s and the
    /// `b`s, each in order.
    unsafe fn deinterleave(lo: Self::V, hi: Self::V) -> (Self::V, Self::V);
    /// The inverse of [`Isa::deinterleave`].
    unsafe fn interleave(a: Self::V, b: Self::V) -> (Self::V, Self::V);
}

/// The loads, stores and arithmetic methods of an [`Isa`] implementation (inside its `impl`):
/// on a vector that is one register of type `$v`, each method the function named; or,
/// `pair of $half`, on a vector of two registers, each half through the same method of the
/// one-register `$half`.
macro_rules! isa_arithmetic {
    ($v:ty {
        load: $load:path,
        store: $store:path,
        splat: $splat:path,
        add: $add:path,
        sub: $sub:path,
        mul: $mul:path,
        div: $div:path,
        sqrt: $sqrt:path,
        mul_add: $mul_add:path,
        mul_sub: $mul_sub:path,
        neg_mul_add: $neg_mul_add:path,
        abs: $abs:path,
        rsqrt_estimate: $rsqrt:path,
        recip_estimate: $recip:path $(,)?
    }) => {
        #[inline(always)]
        unsafe fn load(p: *const f32) -> $v {
            $load(p)
        }
        #[inline(always)]
        unsafe fn store(p: *mut f32, v: $v) {
            $store(p, v)
        }
        #[inline(always)]
        unsafe fn splat(v: f32) -> $v {
            $splat(v)
        }
        isa_arithmetic!(@binary $v; add $add, sub $sub, mul $mul, div $div);
        isa_arithmetic!(@unary $v;
            sqrt $sqrt, abs $abs, rsqrt_estimate $rsqrt, recip_estimate $recip);
        isa_arithmetic!(@ternary $v;
            mul_add $mul_add, mul_sub $mul_sub, neg_mul_add $neg_mul_add);
    };
    (pair of $half:ty) => {
        #[inline(always)]
        unsafe fn load(p: *const f32) -> Self::V {
            [<$half as Isa>::load(p), <$half as Isa>::load(p.add(<$half as Isa>::WIDTH))]
        }
        #[inline(always)]
        unsafe fn store(p: *mut f32, v: Self::V) {
            <$half as Isa>::store(p, v[0]);
            <$half as Isa>::store(p.add(<$half as Isa>::WIDTH), v[1]);
        }
        #[inline(always)]
        unsafe fn splat(v: f32) -> Self::V {
            let v = <$half as Isa>::splat(v);
            [v, v]
        }
        isa_arithmetic!(@pair_binary $half; add, sub, mul, div);
        isa_arithmetic!(@pair_unary $half; sqrt, abs, rsqrt_estimate, recip_estimate);
        isa_arithmetic!(@pair_ternary $half; mul_add, mul_sub, neg_mul_add);
    };
    (@ternary $v:ty; $($name:ident $f:path),*) => {$(
        #[inline(always)]
        unsafe fn $name(a: $v, b: $v, c: $v) -> $v {
            $f(a, b, c)
        }
    )*};
    (@pair_ternary $half:ty; $($name:ident),*) => {$(
        #[inline(always)]
        unsafe fn $name(a: Self::V, b: Self::V, c: Self::V) -> Self::V {
            [
                <$half as Isa>::$name(a[0], b[0], c[0]),
                <$half as Isa>::$name(a[1], b[1], c[1]),
            ]
        }
    )*};
    (@binary $v:ty; $($name:ident $f:path),*) => {$(
        #[inline(always)]
        unsafe fn $name(a: $v, b: $v) -> $v {
            $f(a, b)
        }
    )*};
    (@unary $v:ty; $($name:ident $f:path),*) => {$(
        #[inline(always)]
        unsafe fn $name(a: $v) -> $v {
            $f(a)
        }
    )*};
    (@pair_binary $half:ty; $($name:ident),*) => {$(
        #[inline(always)]
        unsafe fn $name(a: Self::V, b: Self::V) -> Self::V {
            [<$half as Isa>::$name(a[0], b[0]), <$half as Isa>::$name(a[1], b[1])]
        }
    )*};
    (@pair_unary $half:ty; $($name:ident),*) => {$(
        #[inline(always)]
        unsafe fn $name(a: Self::V) -> Self::V {
            [<$half as Isa>::$name(a[0]), <$half as Isa>::$name(a[1])]
        }
    )*};
}
pub(super) use isa_arithmetic;

/// `(1 / √x, √x)` from the estimate `y` and one Newton step `y (3/2 - x y² / 2)`, ordered as
/// `(x y) y` so that a tiny `x` cannot overflow `y²`; accurate to a few ulp, NaN at 0.
#[inline(always)]
pub(super) unsafe fn rsqrt_sqrt_newton<I: Isa>(x: I::V) -> (I::V, I::V) {
    let y0 = I::rsqrt_estimate(x);
    let h = I::mul(x, y0);
    let t = I::mul_add(I::mul(I::splat(-0.5), h), y0, I::splat(1.5));
    (I::mul(y0, t), I::mul(h, t))
}

/// `1 / x` from the estimate `r` and one Newton step `r (2 - x r)`; a few ulp, NaN at 0.
#[inline(always)]
pub(super) unsafe fn recip_newton<I: Isa>(x: I::V) -> I::V {
    let r0 = I::recip_estimate(x);
    I::mul(r0, I::neg_mul_add(x, r0, I::splat(2.0)))
}

/// Scalars shared by every block of a call.
#[derive(Clone, Copy)]
struct Params<V> {
    inv_dt2: V,
    k: V,
}

/// The batch's columns as raw pointers, read once per call: through `&EdgeBatch` the kernel
/// would reload each `Vec`'s pointer after every particle store (raw stores may alias it).
#[derive(Clone, Copy)]
struct Columns {
    /// First particle of each position.
    i: *const u32,
    /// Second particle of each position.
    j: *const u32,
    /// Rest lengths (padded to whole blocks).
    rest: *const f32,
    /// Compliances (padded to whole blocks).
    compliance: *const f32,
}

impl Columns {
    /// The columns of `b`, valid while `b` is borrowed and unchanged.
    #[inline(always)]
    fn of(b: &EdgeBatch) -> Self {
        Columns {
            i: b.i.as_ptr(),
            j: b.j.as_ptr(),
            rest: b.rest.as_ptr(),
            compliance: b.compliance.as_ptr(),
        }
    }
}

/// Pointer to particle `p` as floats.
#[inline(always)]
unsafe fn at(x: *mut f32, p: u32) -> *mut f32 {
    x.add(4 * p as usize)
}

/// Particles per vector.
#[inline(always)]
const fn per_vector<I: Isa>() -> usize {
    I::WIDTH / 4
}

/// Loads part `part` of quad `m` of the block at `base` (slots `part * W/4 ..`, W = WIDTH),
/// whose kind is `KIND` (`MIXED`: `kind`): the `i` side and the `j` side.
///
/// # Safety
/// See [`project_range`]; the quad really is of that kind.
#[inline(always)]
unsafe fn load_quad<I: Isa, const KIND: u8>(
    x: *mut f32,
    b: Columns,
    base: usize,
    m: usize,
    part: usize,
    kind: u8,
) -> (I::V, I::V) {
    let pv = per_vector::<I>();
    let first = part * pv;
    let i = *b.i.add(base + m);
    let j = *b.j.add(base + m);
    match if KIND == MIXED { kind } else { KIND } {
        RUN => (
            I::load(at(x, i + first as u32)),
            I::load(at(x, j + first as u32)),
        ),
        PAIR => {
            // Slots `first..` are particles `i + 2 first ..`, i and j alternating.
            let p = at(x, i + 2 * first as u32);
            I::deinterleave(I::load(p), I::load(p.add(I::WIDTH)))
        }
        STRIDE2 => (
            // Every other particle, 16 bytes each: the odd ones are other constraints'
            // (maybe moved by another thread) and are never read.
            I::gather(|s| at(x, i + 2 * (first + s) as u32)),
            I::gather(|s| at(x, j + 2 * (first + s) as u32)),
        ),
        _ => (
            // Slot k of quad m is at position 4k + m.
            I::gather(|s| at(x, *b.i.add(base + QUAD * (first + s) + m))),
            I::gather(|s| at(x, *b.j.add(base + QUAD * (first + s) + m))),
        ),
    }
}

/// Adds the moves `di`, `dj` of part `part` of quad `m` (one vector per side, laid out as
/// [`load_quad`] loaded them, w = -0.0) to the particles in memory.
///
/// Adding to memory rather than storing moved particles lets a particle's registers go once
/// `x_i - x_j` is formed, which spills less with 16 `ymm` registers; a skipped lane's move of
/// -0.0 leaves every bit of the particle as it was (`x + -0.0 = x`, also for `x = -0.0`), w
/// included.
///
/// # Safety
/// As [`load_quad`].
#[allow(clippy::too_many_arguments)]
#[inline(always)]
unsafe fn add_quad<I: Isa, const KIND: u8>(
    x: *mut f32,
    b: Columns,
    base: usize,
    m: usize,
    part: usize,
    kind: u8,
    di: I::V,
    dj: I::V,
) {
    let pv = per_vector::<I>();
    let first = part * pv;
    let i = *b.i.add(base + m);
    let j = *b.j.add(base + m);
    let add_to = |p: *mut f32, d: I::V| I::store(p, I::add(I::load(p), d));
    match if KIND == MIXED { kind } else { KIND } {
        RUN => {
            add_to(at(x, i + first as u32), di);
            add_to(at(x, j + first as u32), dj);
        }
        PAIR => {
            let p = at(x, i + 2 * first as u32);
            let (lo, hi) = I::interleave(di, dj);
            add_to(p, lo);
            add_to(p.add(I::WIDTH), hi);
        }
        STRIDE2 => {
            I::scatter_add(di, |s| at(x, i + 2 * (first + s) as u32));
            I::scatter_add(dj, |s| at(x, j + 2 * (first + s) as u32));
        }
        _ => {
            I::scatter_add(di, |s| at(x, *b.i.add(base + QUAD * (first + s) + m)));
            I::scatter_add(dj, |s| at(x, *b.j.add(base + QUAD * (first + s) + m)));
        }
    }
}

/// The XPBD update of `WIDTH` constraints: particles `pi`, `pj` as x, y, z, w vectors, rest
/// lengths, compliances and multipliers; returns each side's move (x, y, z) and the new
/// multipliers. A lane that the scalar twin skips (`|d| <= 0` or `w_i + w_j + α̃ <= 0`) moves
/// by -0.0, which leaves its particles' bits as they are.
///
/// With `enhanced-determinism` this is the scalar twin's arithmetic, operation for operation
/// (IEEE `sqrt` and division, nothing fused): the twin's `x_i + s_i d` and `x_j - s_j d` are
/// `x_i + (s_i d)` and `x_j + ((s (-w_j)) d)` here, the same bits (negation is exact, and
/// `a - b` is `a + (-b)`), so every lane has the scalar twin's bits. Else `1/|d|` and
/// `1/(w_i + w_j + α̃)` are estimates plus a Newton step, products are fused where the
/// instruction set has FMA, and pinned particles (`w = 0`) keep their bits.
#[inline(always)]
unsafe fn update<I: Isa>(
    pi: [I::V; 4],
    pj: [I::V; 4],
    rest: I::V,
    compliance: I::V,
    lam: I::V,
    c: Params<I::V>,
) -> ([I::V; 3], [I::V; 3], I::V) {
    let [xi, yi, zi, wi] = pi;
    let [xj, yj, zj, wj] = pj;
    let dx = I::sub(xi, xj);
    let dy = I::sub(yi, yj);
    let dz = I::sub(zi, zj);
    let alpha = I::mul(compliance, c.inv_dt2);
    let denom = I::add(I::add(wi, wj), alpha);
    let keep = I::splat(-0.0);
    if DETERMINISTIC {
        let len = I::sqrt(I::add(
            I::add(I::mul(dx, dx), I::mul(dy, dy)),
            I::mul(dz, dz),
        ));
        let ok = I::neither_le_zero(len, denom);
        let dl = I::div(I::sub(I::sub(rest, len), I::mul(alpha, lam)), denom);
        let s = I::div(I::mul(c.k, dl), len);
        let (si, sj) = (I::mul(s, wi), I::mul(s, I::sub(keep, wj)));
        return (
            [
                I::select(ok, I::mul(si, dx), keep),
                I::select(ok, I::mul(si, dy), keep),
                I::select(ok, I::mul(si, dz), keep),
            ],
            [
                I::select(ok, I::mul(sj, dx), keep),
                I::select(ok, I::mul(sj, dy), keep),
                I::select(ok, I::mul(sj, dz), keep),
            ],
            I::select(ok, I::add(lam, dl), lam),
        );
    }
    let len2 = I::mul_add(dz, dz, I::mul_add(dy, dy, I::mul(dx, dx)));
    let (inv_len, len) = rsqrt_sqrt_newton::<I>(len2);
    let num = I::neg_mul_add(alpha, lam, I::sub(rest, len));
    let dl = I::mul(num, recip_newton::<I>(denom));
    let ok = I::neither_le_zero(len2, denom);
    // k w / |d| per side is known before Δλ, which leaves one product between Δλ and the moves.
    let kl = I::mul(c.k, inv_len);
    // `-(k w_j / |d|)` as one fused `-(a b) + -0.0`: the product rounded once, then negated.
    let (kwi, kwj) = (I::mul(kl, wi), I::neg_mul_add(kl, wj, keep));
    let (nsi, nsj) = (I::mul(dl, kwi), I::mul(dl, kwj));
    // Pinned particles (w = 0) keep their exact bits: their lanes move by -0.0.
    let (ki, kj) = (I::and_nonzero(ok, wi), I::and_nonzero(ok, wj));
    (
        [
            I::select(ki, I::mul(nsi, dx), keep),
            I::select(ki, I::mul(nsi, dy), keep),
            I::select(ki, I::mul(nsi, dz), keep),
        ],
        [
            I::select(kj, I::mul(nsj, dx), keep),
            I::select(kj, I::mul(nsj, dy), keep),
            I::select(kj, I::mul(nsj, dz), keep),
        ],
        // Not `select(ok, lam + Δλ, lam)`: stored back over `lam`, that select becomes a masked
        // store (`vmaskmovps`), slow on AVX2.
        I::add(lam, I::select(ok, dl, I::splat(0.0))),
    )
}

/// Runs [`update`] on one part of a block, given the part's particles as loaded (one vector
/// of `WIDTH / 4` particles per quad and side), the batch position `at` of its first lane and
/// its multipliers `lam`; returns each side's moves laid out as loaded (w = -0.0), to add to
/// the particles.
///
/// # Safety
/// `at + WIDTH` lies within the batch's padded arrays and `lam` points to `WIDTH` multipliers.
#[inline(always)]
unsafe fn update_part<I: Isa>(
    b: Columns,
    at: usize,
    lam: *mut f32,
    qi: [I::V; 4],
    qj: [I::V; 4],
    c: Params<I::V>,
) -> ([I::V; 4], [I::V; 4]) {
    let rest = I::load(b.rest.add(at));
    let compliance = I::load(b.compliance.add(at));
    let (di, dj, new) = update::<I>(
        I::transpose(qi),
        I::transpose(qj),
        rest,
        compliance,
        I::load(lam),
        c,
    );
    I::store(lam, new);
    let keep = I::splat(-0.0);
    (
        I::transpose([di[0], di[1], di[2], keep]),
        I::transpose([dj[0], dj[1], dj[2], keep]),
    )
}

/// A full block whose quads are of kind `KIND` (`MIXED`: of the kinds `kinds`).
///
/// # Safety
/// See [`project_range`].
#[inline(always)]
unsafe fn full_block<I: Isa, const KIND: u8>(
    x: *mut f32,
    b: Columns,
    base: usize,
    kinds: [u8; QUAD],
    lambda: *mut f32,
    c: Params<I::V>,
) {
    for part in 0..LANES / I::WIDTH {
        // `arr4!`, not `from_fn` or `map`: their closures stay out of line here (lane.rs).
        let q: [(I::V, I::V); QUAD] =
            arr4!(m => load_quad::<I, KIND>(x, b, base, m, part, kinds[m]));
        let at = base + part * I::WIDTH;
        let (qi, qj) = (arr4!(m => q[m].0), arr4!(m => q[m].1));
        let (di, dj) = update_part::<I>(b, at, lambda.add(at), qi, qj, c);
        for m in 0..QUAD {
            add_quad::<I, KIND>(x, b, base, m, part, kinds[m], di[m], dj[m]);
        }
    }
}

/// A block with constraints at lanes `0..count` only (the batch's partial last block, or a
/// block cut by the end of a range): gathered lane by lane through a stack buffer laid out
/// like run quads. Lanes past `count` hold zeros, so [`update`] leaves them alone; each lane's
/// result is the same as in a full block.
///
/// # Safety
/// See [`project_range`]; `count <= LANES` and lanes `0..count` of the block exist.
#[inline(always)]
unsafe fn partial_block<I: Isa>(
    x: *mut Packed4,
    b: Columns,
    base: usize,
    count: usize,
    lambda: *mut f32,
    c: Params<I::V>,
) {
    // Row m holds quad m's slots (lane 4s + m at column s): side i, then side j at QUAD + m.
    let mut buf = [[Packed4::default(); QUAD]; 2 * QUAD];
    for l in 0..count {
        buf[l % QUAD][l / QUAD] = *x.add(*b.i.add(base + l) as usize);
        buf[QUAD + l % QUAD][l / QUAD] = *x.add(*b.j.add(base + l) as usize);
    }
    let mut lam = [0.0f32; LANES];
    lam[..count].copy_from_slice(std::slice::from_raw_parts(lambda.add(base), count));
    let rows = buf.as_mut_ptr().cast::<f32>();
    for part in 0..LANES / I::WIDTH {
        let row = |r: usize| rows.add(4 * QUAD * r + part * I::WIDTH);
        let qi = arr4!(m => I::load(row(m)));
        let qj = arr4!(m => I::load(row(QUAD + m)));
        let lam = lam.as_mut_ptr().add(part * I::WIDTH);
        let (di, dj) = update_part::<I>(b, base + part * I::WIDTH, lam, qi, qj, c);
        for m in 0..QUAD {
            I::store(row(m), I::add(I::load(row(m)), di[m]));
            I::store(row(QUAD + m), I::add(I::load(row(QUAD + m)), dj[m]));
        }
    }
    std::slice::from_raw_parts_mut(lambda.add(base), count).copy_from_slice(&lam[..count]);
    for l in 0..count {
        *x.add(*b.i.add(base + l) as usize) = buf[l % QUAD][l / QUAD];
        *x.add(*b.j.add(base + l) as usize) = buf[QUAD + l % QUAD][l / QUAD];
    }
}

/// One call's work: positions `range` of batch `b` (an [`EdgeBatch`], `BendBatch` or
/// `TetherBatch`), particles `x`, multipliers `lambda` (indexed like the batch), α̃ scale and
/// stiffness.
pub struct Job<'a, B> {
    /// The particles.
    pub x: *mut Packed4,
    /// The batch.
    pub b: &'a B,
    /// Positions of the batch to project.
    pub range: Range<usize>,
    /// The multipliers, indexed like the batch.
    pub lambda: *mut f32,
    /// `1/h²` (α̃ = α · inv_dt2).
    pub inv_dt2: f32,
    /// Stiffness scale on every position change.
    pub k: f32,
}

impl<'a, B: super::LaneBatch> Job<'a, B> {
    /// The job's fields, for a vector kernel: `range` starts at a multiple of [`LANES`] and
    /// ends within the batch (checked in debug builds).
    #[inline(always)]
    pub(super) fn vector_parts(self) -> (*mut Packed4, &'a B, Range<usize>, *mut f32, f32, f32) {
        let r = self.range;
        debug_assert!(r.start.is_multiple_of(LANES) && r.end <= self.b.len());
        (self.x, self.b, r, self.lambda, self.inv_dt2, self.k)
    }
}

/// Full blocks `blocks` of one kind, `kind`.
///
/// # Safety
/// See [`project_range`]; every block in `blocks` is of that kind and lies within the range.
#[inline(always)]
unsafe fn full_blocks<I: Isa>(
    kind: BlockKind,
    x: *mut f32,
    b: Columns,
    blocks: Range<usize>,
    lambda: *mut f32,
    c: Params<I::V>,
) {
    // Plain loops, no closures: a closure holding `full_block` could stay out of line, compiled
    // without the entry point's target features (see `arr4!` in lane.rs).
    let none = [0; QUAD];
    match kind {
        BlockKind::Uniform(RUN) => {
            for blk in blocks {
                full_block::<I, RUN>(x, b, blk * LANES, none, lambda, c);
            }
        }
        BlockKind::Uniform(PAIR) => {
            for blk in blocks {
                full_block::<I, PAIR>(x, b, blk * LANES, none, lambda, c);
            }
        }
        BlockKind::Uniform(STRIDE2) => {
            for blk in blocks {
                full_block::<I, STRIDE2>(x, b, blk * LANES, none, lambda, c);
            }
        }
        BlockKind::Uniform(_) => {
            for blk in blocks {
                full_block::<I, GATHER>(x, b, blk * LANES, none, lambda, c);
            }
        }
        BlockKind::Mixed(kinds) => {
            for blk in blocks {
                full_block::<I, MIXED>(x, b, blk * LANES, kinds, lambda, c);
            }
        }
        BlockKind::Partial => debug_assert!(false, "a partial block among full ones"),
    }
}

/// The vector body of [`super::project_batch_range`] for an [`EdgeBatch`] on instruction set `I`:
/// the range's full blocks run by run of one kind, then the block cut by the range's end (or
/// the batch's partial last block) through [`partial_block`].
///
/// # Safety
/// `I`'s instructions are available; `range.start` is a multiple of `LANES`,
/// `range.end <= b.len()`; `x` points to at least `b.particles_needed()` particles and
/// `lambda` to at least `range.end` multipliers, none of which another thread touches during
/// the call.
#[inline(always)]
pub(super) unsafe fn project_range<I: Isa>(job: Job<EdgeBatch>) {
    let (x, b, range, lambda, inv_dt2, k) = job.vector_parts();
    if range.is_empty() {
        return;
    }
    let c = Params {
        inv_dt2: I::splat(inv_dt2),
        k: I::splat(k),
    };
    let cols = Columns::of(b);
    let (first, whole) = (range.start / LANES, range.end / LANES);
    let mut s = b
        .segments
        .partition_point(|&(end, _)| end as usize <= first);
    let mut blk = first;
    while blk < whole {
        let (end, kind) = *b.segments.get_unchecked(s);
        let stop = (end as usize).min(whole);
        full_blocks::<I>(kind, x.cast::<f32>(), cols, blk..stop, lambda, c);
        blk = stop;
        s += 1;
    }
    let cut = whole * LANES;
    if cut < range.end {
        partial_block::<I>(x, cols, cut, range.end - cut, lambda, c);
    }
}
