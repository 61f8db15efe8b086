//! The AVX-512 kernel: per quad one register of four `Packed4` per side (window loads for run
//! and pair quads, 16-byte loads for gather quads), an in-register 4 x 4 transpose per 128-bit
//! part, the XPBD update on 16 lanes, the transpose back and the matching stores.

use super::batch::{BlockKind, EdgeBatch, GATHER, PAIR, QUAD, RUN, STRIDE2};
use super::LANES;
use crate::body::particles::Packed4;
use core::arch::x86_64::*;
use std::ops::Range;

/// Transposes the 4 x 4 float matrix in each 128-bit part of four registers: from one
/// `Packed4` per part to one component per register (and back: it is an involution).
///
/// # Safety
/// AVX-512F must be available (this module is compiled only when it is enabled).
#[inline(always)]
unsafe fn transpose4(r: [__m512; 4]) -> [__m512; 4] {
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

/// The particles of one block: `i` side and `j` side, one register per quad.
type Sides = ([__m512; QUAD], [__m512; QUAD]);

/// Pointer to particle `p` as floats.
#[inline(always)]
unsafe fn at(x: *mut f32, p: u32) -> *mut f32 {
    x.add(4 * p as usize)
}

/// Loads quad `m` of the block at `base`, whose kind is `KIND`.
///
/// # Safety
/// See [`project_range`]; the quad really is of kind `KIND`.
#[inline(always)]
unsafe fn load_quad<const KIND: u8>(
    x: *mut f32,
    b: &EdgeBatch,
    base: usize,
    m: usize,
) -> (__m512, __m512) {
    let i = b.i.as_ptr().add(base + m);
    let j = b.j.as_ptr().add(base + m);
    match KIND {
        RUN => (_mm512_loadu_ps(at(x, *i)), _mm512_loadu_ps(at(x, *j))),
        PAIR => {
            let lo = _mm512_loadu_ps(at(x, *i));
            let hi = _mm512_loadu_ps(at(x, *i).add(16));
            (
                _mm512_shuffle_f32x4::<0x88>(lo, hi),
                _mm512_shuffle_f32x4::<0xDD>(lo, hi),
            )
        }
        STRIDE2 => {
            // Every other particle: 16-byte loads, so the odd ones (other constraints', maybe
            // moved by another thread) are never read.
            let even = |p: *mut f32| {
                let mut v = _mm512_castps128_ps512(_mm_loadu_ps(p));
                v = _mm512_insertf32x4::<1>(v, _mm_loadu_ps(p.add(8)));
                v = _mm512_insertf32x4::<2>(v, _mm_loadu_ps(p.add(16)));
                _mm512_insertf32x4::<3>(v, _mm_loadu_ps(p.add(24)))
            };
            (even(at(x, *i)), even(at(x, *j)))
        }
        _ => {
            // Slot k of quad m is at lane position 4k + m.
            let gather = |idx: *const u32| {
                let mut v = _mm512_castps128_ps512(_mm_loadu_ps(at(x, *idx)));
                v = _mm512_insertf32x4::<1>(v, _mm_loadu_ps(at(x, *idx.add(4))));
                v = _mm512_insertf32x4::<2>(v, _mm_loadu_ps(at(x, *idx.add(8))));
                _mm512_insertf32x4::<3>(v, _mm_loadu_ps(at(x, *idx.add(12))))
            };
            (gather(i), gather(j))
        }
    }
}

/// Stores quad `m` back (x, y, z as computed; w with the bits it was loaded with).
///
/// # Safety
/// As [`load_quad`].
#[inline(always)]
unsafe fn store_quad<const KIND: u8>(
    x: *mut f32,
    b: &EdgeBatch,
    base: usize,
    m: usize,
    pi: __m512,
    pj: __m512,
) {
    let i = b.i.as_ptr().add(base + m);
    let j = b.j.as_ptr().add(base + m);
    match KIND {
        RUN => {
            _mm512_storeu_ps(at(x, *i), pi);
            _mm512_storeu_ps(at(x, *j), pj);
        }
        PAIR => {
            let lo = _mm512_setr_epi32(0, 1, 2, 3, 16, 17, 18, 19, 4, 5, 6, 7, 20, 21, 22, 23);
            let hi =
                _mm512_setr_epi32(8, 9, 10, 11, 24, 25, 26, 27, 12, 13, 14, 15, 28, 29, 30, 31);
            _mm512_storeu_ps(at(x, *i), _mm512_permutex2var_ps(pi, lo, pj));
            _mm512_storeu_ps(at(x, *i).add(16), _mm512_permutex2var_ps(pi, hi, pj));
        }
        STRIDE2 => {
            let even = |p: *mut f32, v: __m512| {
                _mm_storeu_ps(p, _mm512_castps512_ps128(v));
                _mm_storeu_ps(p.add(8), _mm512_extractf32x4_ps::<1>(v));
                _mm_storeu_ps(p.add(16), _mm512_extractf32x4_ps::<2>(v));
                _mm_storeu_ps(p.add(24), _mm512_extractf32x4_ps::<3>(v));
            };
            even(at(x, *i), pi);
            even(at(x, *j), pj);
        }
        _ => {
            let scatter = |idx: *const u32, v: __m512| {
                _mm_storeu_ps(at(x, *idx), _mm512_castps512_ps128(v));
                _mm_storeu_ps(at(x, *idx.add(4)), _mm512_extractf32x4_ps::<1>(v));
                _mm_storeu_ps(at(x, *idx.add(8)), _mm512_extractf32x4_ps::<2>(v));
                _mm_storeu_ps(at(x, *idx.add(12)), _mm512_extractf32x4_ps::<3>(v));
            };
            scatter(i, pi);
            scatter(j, pj);
        }
    }
}

/// The XPBD update of the 16 constraints at `base` whose particles are in `p` (one register
/// per quad and side) and multipliers in `lam`; returns the moved particles and the new
/// multipliers. A lane whose particles are all zero (no constraint) is left alone.
///
/// # Safety
/// `base + LANES` is within the batch's padded arrays.
#[inline(always)]
unsafe fn update(b: &EdgeBatch, base: usize, p: Sides, lam: __m512, c: Params) -> (Sides, __m512) {
    let [xi, yi, zi, wi] = transpose4(p.0);
    let [xj, yj, zj, wj] = transpose4(p.1);
    let zero = _mm512_setzero_ps();
    let dx = _mm512_sub_ps(xi, xj);
    let dy = _mm512_sub_ps(yi, yj);
    let dz = _mm512_sub_ps(zi, zj);
    let len2 = _mm512_fmadd_ps(dz, dz, _mm512_fmadd_ps(dy, dy, _mm512_mul_ps(dx, dx)));
    // rsqrt14 (relative error < 2^-14) and one Newton step y (3/2 - len2 y² / 2), ordered as
    // (len2 y) y so that a tiny len2 cannot overflow y².
    let y0 = _mm512_rsqrt14_ps(len2);
    let h = _mm512_mul_ps(len2, y0);
    let t = _mm512_fnmadd_ps(
        _mm512_mul_ps(_mm512_set1_ps(0.5), h),
        y0,
        _mm512_set1_ps(1.5),
    );
    let inv_len = _mm512_mul_ps(y0, t);
    let len = _mm512_mul_ps(h, t);

    let alpha = _mm512_mul_ps(_mm512_loadu_ps(b.compliance.as_ptr().add(base)), c.inv_dt2);
    let denom = _mm512_add_ps(_mm512_add_ps(wi, wj), alpha);
    let rest = _mm512_loadu_ps(b.rest.as_ptr().add(base));
    let num = _mm512_fnmadd_ps(alpha, lam, _mm512_sub_ps(rest, len));
    let r0 = _mm512_rcp14_ps(denom);
    let r = _mm512_mul_ps(r0, _mm512_fnmadd_ps(denom, r0, _mm512_set1_ps(2.0)));
    let dl = _mm512_mul_ps(num, r);
    let ok = _mm512_cmp_ps_mask::<_CMP_GT_OQ>(len2, zero)
        & _mm512_cmp_ps_mask::<_CMP_GT_OQ>(denom, zero);
    let lam = _mm512_mask_add_ps(lam, ok, lam, dl);

    let s = _mm512_mul_ps(_mm512_mul_ps(c.k, dl), inv_len);
    let si = _mm512_mul_ps(s, wi);
    let sj = _mm512_mul_ps(s, wj);
    // Pinned particles (w = 0) keep their exact bits: their lanes are not updated at all.
    let ki = _mm512_mask_cmp_ps_mask::<_CMP_NEQ_UQ>(ok, wi, zero);
    let kj = _mm512_mask_cmp_ps_mask::<_CMP_NEQ_UQ>(ok, wj, zero);
    let pi = transpose4([
        _mm512_mask3_fmadd_ps(si, dx, xi, ki),
        _mm512_mask3_fmadd_ps(si, dy, yi, ki),
        _mm512_mask3_fmadd_ps(si, dz, zi, ki),
        wi,
    ]);
    let pj = transpose4([
        _mm512_mask3_fnmadd_ps(sj, dx, xj, kj),
        _mm512_mask3_fnmadd_ps(sj, dy, yj, kj),
        _mm512_mask3_fnmadd_ps(sj, dz, zj, kj),
        wj,
    ]);
    ((pi, pj), lam)
}

/// Loads quad `m` whose kind is known only at run time.
///
/// # Safety
/// As [`load_quad`].
#[inline(always)]
unsafe fn load_any(
    x: *mut f32,
    b: &EdgeBatch,
    base: usize,
    m: usize,
    kind: u8,
) -> (__m512, __m512) {
    match kind {
        RUN => load_quad::<RUN>(x, b, base, m),
        PAIR => load_quad::<PAIR>(x, b, base, m),
        STRIDE2 => load_quad::<STRIDE2>(x, b, base, m),
        _ => load_quad::<GATHER>(x, b, base, m),
    }
}

/// Stores quad `m` whose kind is known only at run time.
///
/// # Safety
/// As [`store_quad`].
#[inline(always)]
unsafe fn store_any(
    x: *mut f32,
    b: &EdgeBatch,
    base: usize,
    m: usize,
    kind: u8,
    p: (__m512, __m512),
) {
    match kind {
        RUN => store_quad::<RUN>(x, b, base, m, p.0, p.1),
        PAIR => store_quad::<PAIR>(x, b, base, m, p.0, p.1),
        STRIDE2 => store_quad::<STRIDE2>(x, b, base, m, p.0, p.1),
        _ => store_quad::<GATHER>(x, b, base, m, p.0, p.1),
    }
}

/// Scalars shared by every block of a call.
#[derive(Clone, Copy)]
struct Params {
    inv_dt2: __m512,
    k: __m512,
}

/// A full block of four quads of kind `KIND`: straight-line code.
///
/// # Safety
/// See [`project_range`].
#[inline(never)]
unsafe fn uniform_block<const KIND: u8>(
    x: *mut f32,
    b: &EdgeBatch,
    base: usize,
    lambda: *mut f32,
    c: Params,
) {
    let q: [(__m512, __m512); QUAD] = core::array::from_fn(|m| load_quad::<KIND>(x, b, base, m));
    let lam = _mm512_loadu_ps(lambda.add(base));
    let ((pi, pj), lam) = update(b, base, (q.map(|q| q.0), q.map(|q| q.1)), lam, c);
    _mm512_storeu_ps(lambda.add(base), lam);
    for m in 0..QUAD {
        store_quad::<KIND>(x, b, base, m, pi[m], pj[m]);
    }
}

/// A full block whose quads are of the kinds `kinds`.
///
/// # Safety
/// See [`project_range`].
#[inline(never)]
unsafe fn mixed_block(
    x: *mut f32,
    b: &EdgeBatch,
    base: usize,
    kinds: [u8; QUAD],
    lambda: *mut f32,
    c: Params,
) {
    let q: [(__m512, __m512); QUAD] = core::array::from_fn(|m| load_any(x, b, base, m, kinds[m]));
    let lam = _mm512_loadu_ps(lambda.add(base));
    let ((pi, pj), lam) = update(b, base, (q.map(|q| q.0), q.map(|q| q.1)), lam, c);
    _mm512_storeu_ps(lambda.add(base), lam);
    for m in 0..QUAD {
        store_any(x, b, base, m, kinds[m], (pi[m], pj[m]));
    }
}

/// A block with constraints at lanes `0..count` only (the batch's partial last block, or a
/// block cut by the end of a range): gathered lane by lane through a stack buffer. Lanes past
/// `count` hold zeros, so [`update`] leaves them alone; the result of each lane is the same
/// as in a full block.
///
/// # Safety
/// See [`project_range`]; `count <= LANES` and lanes `0..count` of the block exist.
#[inline(never)]
unsafe fn partial_block(
    x: *mut Packed4,
    b: &EdgeBatch,
    base: usize,
    count: usize,
    lambda: *mut f32,
    c: Params,
) {
    // Register m, part s holds lane 4s + m (the layout of a full block).
    let mut buf = [[Packed4::default(); QUAD]; 2 * QUAD];
    for l in 0..count {
        buf[l % QUAD][l / QUAD] = *x.add(b.i[base + l] as usize);
        buf[QUAD + l % QUAD][l / QUAD] = *x.add(b.j[base + l] as usize);
    }
    let reg = |r: usize| _mm512_loadu_ps(buf[r].as_ptr().cast());
    let p = (
        [reg(0), reg(1), reg(2), reg(3)],
        [reg(4), reg(5), reg(6), reg(7)],
    );
    let mut lam = [0.0f32; LANES];
    lam[..count].copy_from_slice(std::slice::from_raw_parts(lambda.add(base), count));
    let ((pi, pj), lam_new) = update(b, base, p, _mm512_loadu_ps(lam.as_ptr()), c);
    _mm512_storeu_ps(lam.as_mut_ptr(), lam_new);
    std::slice::from_raw_parts_mut(lambda.add(base), count).copy_from_slice(&lam[..count]);
    for m in 0..QUAD {
        _mm512_storeu_ps(buf[m].as_mut_ptr().cast(), pi[m]);
        _mm512_storeu_ps(buf[QUAD + m].as_mut_ptr().cast(), pj[m]);
    }
    for l in 0..count {
        *x.add(b.i[base + l] as usize) = buf[l % QUAD][l / QUAD];
        *x.add(b.j[base + l] as usize) = buf[QUAD + l % QUAD][l / QUAD];
    }
}

/// The AVX-512 body of [`super::project_distance_batch_range`].
///
/// # Safety
/// `range.start` is a multiple of `LANES`, `range.end <= b.len()`; `x` points to at least
/// `b.particles_needed()` particles and `lambda` to at least `range.end` multipliers, none of
/// which another thread touches during the call.
pub(super) unsafe fn project_range(
    x: *mut Packed4,
    b: &EdgeBatch,
    range: Range<usize>,
    lambda: *mut f32,
    inv_dt2: f32,
    k: f32,
) {
    debug_assert!(range.start.is_multiple_of(LANES) && range.end <= b.len());
    let xf = x.cast::<f32>();
    let c = Params {
        inv_dt2: _mm512_set1_ps(inv_dt2),
        k: _mm512_set1_ps(k),
    };
    let mut base = range.start;
    while base < range.end {
        let count = range.end - base;
        let kind = *b.blocks.get_unchecked(base / LANES);
        match kind {
            _ if count < LANES => partial_block(x, b, base, count, lambda, c),
            BlockKind::Partial => partial_block(x, b, base, count, lambda, c),
            BlockKind::Uniform(RUN) => uniform_block::<RUN>(xf, b, base, lambda, c),
            BlockKind::Uniform(PAIR) => uniform_block::<PAIR>(xf, b, base, lambda, c),
            BlockKind::Uniform(STRIDE2) => uniform_block::<STRIDE2>(xf, b, base, lambda, c),
            BlockKind::Uniform(_) => uniform_block::<GATHER>(xf, b, base, lambda, c),
            BlockKind::Mixed(kinds) => mixed_block(xf, b, base, kinds, lambda, c),
        }
        base += LANES;
    }
}
