//! [`BendBatch`]: a batch of independent bending constraints (four particles each, no two
//! sharing a particle), projected [`LANES`] at a time by the vector kernels, with its scalar
//! twin.
//!
//! The updates are those of [`DihedralBending`] and [`IsometricBending`] through
//! [`crate::constraints::project_generic`], rewritten so that they vectorize:
//!
//! - dihedral: with `nA = e × (x2 - x0)`, `nB = (x3 - x0) × e`, the unsigned angle is
//!   `|θ| = atan2(|(nA × nB) · e|, (nA · nB) |e|)` (the generic path divides the first argument
//!   by `|e|` instead, the same angle), computed by [`atan2_abs`]: a reduction to `[0, 1]` by
//!   `min / max` and an odd polynomial of degree 13 ([`ATAN_MAX_ERROR`]), then the quadrant by
//!   two selects. `C = clamp(|θ| - θ0, ±DIHEDRAL_MAX_STEP)` (the same trust region), and the
//!   sign of `θ` flips the step instead of the four gradients (the same bits);
//! - isometric: `C = |v|`, `v = Σ k_i (x_i - x0)`, `∇_i C = k_i v̂`, with
//!   `|∇_i C|² = |v̂|² k_i²`.
//!
//! Degenerate stencils (a vanishing edge or triangle, `v = 0`) get no gradient and `θ = 0`
//! (dihedral: `C = clamp(-θ0)`) or `C = 0` (isometric), as in the generic path: nothing moves,
//! and the multiplier follows the compliance term alone.
//!
//! Layout: a bend touches four particles that rarely sit at fixed offsets, so every particle is
//! one 16-byte load and store (a gather of `Packed4`), and the in-register 4 x 4 transpose of
//! the distance kernels turns them into x, y, z, w vectors: slot `k` of quad `m` of a block is
//! the constraint at position `16b + 4k + m`, as in [`super::EdgeBatch`]. The constraints are
//! sorted by their first particle, so that a block's particles are near each other. A partial
//! last block is copied to a stack buffer padded with degenerate lanes and run the same way.

use super::block::{Isa, Job};
use super::lane::{abs, arr4, max, min, positive_finite, Lane, V3, W};
use super::{Kernel, LaneBatch, LANES};
use crate::body::particles::Packed4;
use crate::constraints::bending::DIHEDRAL_MAX_STEP;
use crate::constraints::{DihedralBending, IsometricBending, MIN_DENOMINATOR};
use crate::error::check_index;
use crate::error::Result;

/// The bending model of a [`BendBatch`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BendModel {
    /// [`DihedralBending`]: `C = clamp(|θ| - θ0, ±0.5 rad)`.
    #[default]
    Dihedral,
    /// [`IsometricBending`]: `C = |Σ k_i x_i|`.
    Isometric,
}

/// One batch of independent bending constraints of one table, laid out for the kernels.
///
/// `ids[k]` is the table's (local) id of the constraint at position `k`, whose multiplier is
/// `lambda[k]` in every projection call.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BendBatch {
    /// Local id (in its table) of the constraint at each position.
    pub ids: Vec<u32>,
    model: BendModel,
    /// The particles of each slot of the stencil `[x0, x1, x2, x3]`.
    p: [Vec<u32>; 4],
    /// Dihedral: the rest angle in `param[0]`; isometric: the weights `k_0..k_3`.
    param: [Vec<f32>; 4],
    compliance: Vec<f32>,
    particles_needed: usize,
}

impl BendBatch {
    /// A batch of dihedral constraints `ids` of `table`; checks they are in range for
    /// `particles` particles and share no particle.
    pub fn dihedral(table: &DihedralBending, ids: &[u32], particles: usize) -> Result<Self> {
        Self::build(
            BendModel::Dihedral,
            ids,
            table.stencils.len(),
            particles,
            |c| {
                (
                    table.stencils[c],
                    [table.rest[c], 0.0, 0.0, 0.0],
                    table.compliance[c],
                )
            },
        )
    }

    /// A batch of isometric constraints `ids` of `table`; checks as [`BendBatch::dihedral`].
    pub fn isometric(table: &IsometricBending, ids: &[u32], particles: usize) -> Result<Self> {
        Self::build(
            BendModel::Isometric,
            ids,
            table.stencils.len(),
            particles,
            |c| (table.stencils[c], table.weights[c], table.compliance[c]),
        )
    }

    fn build(
        model: BendModel,
        ids: &[u32],
        table_len: usize,
        particles: usize,
        get: impl Fn(usize) -> ([u32; 4], [f32; 4], f32),
    ) -> Result<Self> {
        let what = match model {
            BendModel::Dihedral => "dihedral bending",
            BendModel::Isometric => "isometric bending",
        };
        let mut items = Vec::with_capacity(ids.len());
        let mut ends: Vec<(u32, u32)> = Vec::with_capacity(4 * ids.len());
        for (k, &c) in ids.iter().enumerate() {
            check_index("batch constraint", k, c as usize, table_len)?;
            let (s, param, compliance) = get(c as usize);
            for p in s {
                check_index(what, c as usize, p as usize, particles)?;
                ends.push((p, k as u32));
            }
            items.push((s, param, compliance, c));
        }
        super::batch::check_independent(
            &mut ends,
            ids,
            "bend batch (constraints not independent)",
        )?;
        // Nearby first particles put a block's loads near each other.
        items.sort_unstable_by_key(|it| (it.0[0], it.3));
        let mut b = BendBatch {
            model,
            particles_needed: ends.last().map_or(0, |e| e.0 as usize + 1),
            ..Default::default()
        };
        for (s, param, compliance, c) in items {
            b.ids.push(c);
            for k in 0..4 {
                b.p[k].push(s[k]);
                b.param[k].push(param[k]);
            }
            b.compliance.push(compliance);
        }
        // Zeros up to whole blocks: the kernels load a partial last block's parameters whole.
        let padded = b.len().next_multiple_of(LANES);
        for v in b.param.iter_mut().chain([&mut b.compliance]) {
            v.resize(padded, 0.0);
        }
        Ok(b)
    }

    /// Number of constraints.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// The model of the batch's constraints.
    pub fn model(&self) -> BendModel {
        self.model
    }

    /// The stencil `[x0, x1, x2, x3]` of the constraint at position `k`.
    pub fn stencil(&self, k: usize) -> [u32; 4] {
        [self.p[0][k], self.p[1][k], self.p[2][k], self.p[3][k]]
    }

    /// The shortest particle slice the projections accept (largest index + 1).
    pub fn particles_needed(&self) -> usize {
        self.particles_needed
    }
}

/// Coefficients of `atan(t) ≈ t Σ c_k t^{2k}` on `[0, 1]`: a least-squares fit to `atan`
/// reweighted towards minimax (Lawson's iteration).
const ATAN: [f32; 7] = [
    0.999_996_1,
    -0.333_173_7,
    0.198_078_2,
    -0.132_333_5,
    0.079_623_84,
    -0.033_604_35,
    0.006_811_83,
];

/// The largest error of the kernels' polynomial `atan2_abs` against `f64::atan2`, in radians,
/// over every argument
/// (the polynomial's 2.5e-7 plus f32 rounding; tested).
pub const ATAN_MAX_ERROR: f32 = 1e-6;

/// `atan2(|y|, x)` in `[0, π]`: the angle reduced to `t = min / max` of `|y|`, `|x|` in
/// `[0, 1]`, the polynomial, then `π/2 - r` above the diagonal and `π - r` for `x < 0`.
/// NaN when both are 0.
#[inline(always)]
pub(super) unsafe fn atan2_abs<L: Lane>(y: L, x: L) -> L {
    let (ay, ax) = (abs(y), abs(x));
    let steep = ax.lt(ay);
    let t = L::select(steep, ax, ay).div(L::select(steep, ay, ax));
    let z = t.mul(t);
    let mut p = L::splat(ATAN[6]);
    for &c in ATAN[..6].iter().rev() {
        p = p.fma(z, L::splat(c));
    }
    let r = p.mul(t);
    let r = L::select(steep, L::splat(std::f32::consts::FRAC_PI_2).sub(r), r);
    L::select(
        x.lt(L::splat(0.0)),
        L::splat(std::f32::consts::PI).sub(r),
        r,
    )
}

/// Scalar `atan2_abs` (the kernels' polynomial atan2), for tests and reports of its accuracy.
pub fn atan2_abs_scalar(y: f32, x: f32) -> f32 {
    // SAFETY: the f32 implementation of `Lane` needs no instruction set.
    unsafe { atan2_abs(y, x) }
}

/// Scalars shared by every constraint of a call.
#[derive(Clone, Copy)]
struct Params<L> {
    inv_dt2: L,
    k: L,
}

/// The XPBD update given `C`, the four gradients' squared norms and whether the stencil is
/// usable (`geom`; else no gradient): returns the new multiplier, each particle's step factor
/// `k w_i Δλ` to multiply its gradient by, and the lanes that move (the others may hold NaN
/// gradients and steps and must keep their positions).
#[inline(always)]
unsafe fn xpbd<L: Lane>(
    value: L,
    q: [L; 4],
    w: [L; 4],
    geom: L::M,
    compliance: L,
    lam: L,
    c: Params<L>,
) -> (L, [L; 4], L::M) {
    let zero = L::splat(0.0);
    let alpha = compliance.mul(c.inv_dt2);
    // As the generic path: α̃ + Σ w_i |∇_i C|², slot after slot.
    let full = w[3].fma(q[3], w[2].fma(q[2], w[1].fma(q[1], w[0].fma(q[0], alpha))));
    let denom = L::select(geom, full, alpha);
    let ok = positive_finite(denom, MIN_DENOMINATOR);
    let dl = value.mul(L::splat(-1.0)).sub(alpha.mul(lam)).div(denom);
    let dl = L::select(ok, dl, zero);
    let lam = L::select(ok, lam.add(dl), lam);
    let moving = L::and(ok, geom);
    let kdl = c.k.mul(dl);
    let s = arr4!(k => kdl.mul(w[k]));
    (lam, s, moving)
}

/// The dihedral update of one lane (or vector of lanes): stencil positions `p`, inverse
/// masses `w`, rest angle, compliance, multiplier; returns the new positions and multiplier.
#[inline(always)]
unsafe fn dihedral<L: Lane>(
    p: [V3<L>; 4],
    w: [L; 4],
    rest: L,
    compliance: L,
    lam: L,
    c: Params<L>,
) -> ([V3<L>; 4], L) {
    let one = L::splat(1.0);
    let e = p[1].sub(p[0]);
    let a = p[2].sub(p[0]);
    let b = p[3].sub(p[0]);
    let el2 = e.dot(e);
    let na = e.cross(a);
    let nb = b.cross(e);
    let (la2, lb2) = (na.dot(na), nb.dot(nb));
    let tiny = L::splat(1e-12).mul(el2).mul(el2);
    let geom = L::and(
        L::and(L::splat(f32::MIN_POSITIVE).lt(el2), tiny.lt(la2)),
        tiny.lt(lb2),
    );
    let el = el2.sqrt();
    let y = na.cross(nb).dot(e);
    let theta = L::select(geom, atan2_abs(y, na.dot(nb).mul(el)), L::splat(0.0));
    let max_step = L::splat(DIHEDRAL_MAX_STEP);
    let value = max(min(theta.sub(rest), max_step), max_step.mul(L::splat(-1.0)));
    // Bridson et al.'s gradients of θ; for θ < 0 the generic path negates all four, here the
    // step factor is negated instead (the same bits).
    let neg_el = el.mul(L::splat(-1.0));
    let g2 = na.scale(neg_el.div(la2));
    let g3 = nb.scale(neg_el.div(lb2));
    let inv_el2 = one.div(el2);
    let s2 = a.dot(e).mul(inv_el2);
    let s3 = b.dot(e).mul(inv_el2);
    let minus = L::splat(-1.0);
    let g0 = g2
        .scale(one.sub(s2))
        .add(g3.scale(one.sub(s3)))
        .scale(minus);
    let g1 = g2.scale(s2).add(g3.scale(s3)).scale(minus);
    let g = [g0, g1, g2, g3];
    let q = arr4!(k => g[k].dot(g[k]));
    let (lam, s, moving) = xpbd(value, q, w, geom, compliance, lam, c);
    let sign = L::select(y.lt(L::splat(0.0)), minus, one);
    let moved = arr4!(k => g[k].scale_add(s[k].mul(sign), p[k]).keep(moving, p[k]));
    (moved, lam)
}

/// The isometric update of one lane (or vector of lanes): weights `kw`, otherwise as
/// [`dihedral`].
#[inline(always)]
unsafe fn isometric<L: Lane>(
    p: [V3<L>; 4],
    w: [L; 4],
    kw: [L; 4],
    compliance: L,
    lam: L,
    c: Params<L>,
) -> ([V3<L>; 4], L) {
    // Σ k_i = 0, so positions relative to x0 give the same v with less rounding.
    let v = p[3].sub(p[0]).scale_add(
        kw[3],
        p[2].sub(p[0]).scale_add(kw[2], p[1].sub(p[0]).scale(kw[1])),
    );
    let len = v.dot(v).sqrt();
    let geom = L::splat(f32::MIN_POSITIVE).lt(len);
    let n = v.scale(L::splat(1.0).div(len));
    let nn = n.dot(n);
    let q = arr4!(k => nn.mul(kw[k].mul(kw[k])));
    let value = L::select(geom, len, L::splat(0.0));
    let (lam, s, moving) = xpbd(value, q, w, geom, compliance, lam, c);
    let moved = arr4!(k => n.scale_add(s[k].mul(kw[k]), p[k]).keep(moving, p[k]));
    (moved, lam)
}

/// Projects the constraint at position `c` with the scalar twin.
///
/// # Safety
/// As [`super::project_batch_range`] for position `c`.
#[inline(always)]
unsafe fn project_one(
    x: *mut Packed4,
    b: &BendBatch,
    c: usize,
    lambda: *mut f32,
    prm: Params<f32>,
) {
    let ids = b.stencil(c);
    let q = arr4!(k => *x.add(ids[k] as usize));
    let p = arr4!(k => V3([q[k].x, q[k].y, q[k].z]));
    let w = arr4!(k => q[k].w);
    let lam = *lambda.add(c);
    let (moved, lam) = match b.model {
        BendModel::Dihedral => dihedral(p, w, b.param[0][c], b.compliance[c], lam, prm),
        BendModel::Isometric => {
            let kw = arr4!(k => b.param[k][c]);
            isometric(p, w, kw, b.compliance[c], lam, prm)
        }
    };
    *lambda.add(c) = lam;
    for (s, &i) in ids.iter().enumerate() {
        let r = &mut *x.add(i as usize);
        [r.x, r.y, r.z] = moved[s].0;
    }
}

/// `WIDTH` floats of `v` from `at`, as a lane vector (a function: a closure holding an
/// intrinsic stays out of line in the kernels).
///
/// # Safety
/// `at + WIDTH <= v.len()`; `I`'s instructions are available.
#[inline(always)]
pub(super) unsafe fn load<I: Isa>(v: &[f32], at: usize) -> W<I> {
    W::new(I::load(v.as_ptr().add(at)))
}

/// The vector body of [`super::project_batch_range`] on instruction set `I`: full blocks of
/// `range` (which starts at a multiple of `LANES`), then a partial last block through a
/// buffer (the same lanes' arithmetic).
///
/// # Safety
/// `I`'s instructions are available; otherwise as [`super::project_batch_range`].
#[inline(always)]
pub(super) unsafe fn project_range<I: Isa>(job: Job<BendBatch>) {
    let (x, b, range, lambda, inv_dt2, k) = job.vector_parts();
    let xf = x.cast::<f32>();
    let prm = Params {
        inv_dt2: W::<I>::splat(inv_dt2),
        k: W::<I>::splat(k),
    };
    let mut base = range.start;
    while base + LANES <= range.end {
        // Slot s of lane l is particle `p[s][base + l]`.
        let at = |s: usize, l: usize| xf.add(4 * *b.p[s].get_unchecked(base + l) as usize);
        block::<I>(b, base, at, lambda.add(base), prm);
        base += LANES;
    }
    let count = range.end - base;
    if count > 0 {
        // The partial last block through a stack buffer, slot s of lane l at 16 s + l; lanes
        // past `count` hold zeros (a degenerate, rigid stencil: nothing moves).
        let mut buf = [Packed4::default(); 4 * LANES];
        let mut lam = [0.0f32; LANES];
        for l in 0..count {
            for s in 0..4 {
                buf[s * LANES + l] = *x.add(*b.p[s].get_unchecked(base + l) as usize);
            }
            lam[l] = *lambda.add(base + l);
        }
        let bf = buf.as_mut_ptr().cast::<f32>();
        block::<I>(
            b,
            base,
            |s, l| bf.add(4 * (s * LANES + l)),
            lam.as_mut_ptr(),
            prm,
        );
        for l in 0..count {
            for s in 0..4 {
                *x.add(*b.p[s].get_unchecked(base + l) as usize) = buf[s * LANES + l];
            }
            *lambda.add(base + l) = lam[l];
        }
    }
}

/// One block of `LANES` constraints at batch position `base`: slot `s` of lane `l` at
/// `at(s, l)`, multipliers at `lambda` (lanes 0..LANES).
///
/// # Safety
/// As [`project_range`]; `base + LANES` lies within the batch's padded parameter arrays.
#[inline(always)]
unsafe fn block<I: Isa>(
    b: &BendBatch,
    base: usize,
    at: impl Fn(usize, usize) -> *mut f32,
    lambda: *mut f32,
    prm: Params<W<I>>,
) {
    let pv = I::WIDTH / 4;
    for part in 0..LANES / I::WIDTH {
        let first = part * I::WIDTH;
        // Vector m of slot s holds the particles of lanes 4q + m (q = 0..WIDTH/4) of this
        // part: after the transpose, lane 4q + m is lane `first + 4q + m` of the block.
        let addr = |s: usize, m: usize, q: usize| at(s, first + 4 * q + m);
        debug_assert!(pv * 4 == I::WIDTH);
        let loaded: [[I::V; 4]; 4] =
            arr4!(s => I::transpose(arr4!(m => I::gather(|q| addr(s, m, q).cast_const()))));
        let p = arr4!(s => {
            let v = loaded[s];
            V3([W::<I>::new(v[0]), W::new(v[1]), W::new(v[2])])
        });
        let w = arr4!(s => W::<I>::new(loaded[s][3]));
        let ld = |v: &Vec<f32>| load::<I>(v, base + first);
        let lam = W::<I>::new(I::load(lambda.add(first)));
        let (moved, lam) = match b.model {
            BendModel::Dihedral => dihedral(p, w, ld(&b.param[0]), ld(&b.compliance), lam, prm),
            BendModel::Isometric => {
                let kw = arr4!(j => ld(&b.param[j]));
                isometric(p, w, kw, ld(&b.compliance), lam, prm)
            }
        };
        I::store(lambda.add(first), lam.0);
        for s in 0..4 {
            let [mx, my, mz] = moved[s].0;
            let out = I::transpose([mx.0, my.0, mz.0, loaded[s][3]]);
            for (m, &v) in out.iter().enumerate() {
                I::scatter(v, |q| addr(s, m, q));
            }
        }
    }
}

impl LaneBatch for BendBatch {
    super::lane_batch_sizes!(BendBatch);
    unsafe fn project_scalar(job: Job<Self>) {
        let prm = Params {
            inv_dt2: job.inv_dt2,
            k: job.k,
        };
        for c in job.range {
            project_one(job.x, job.b, c, job.lambda, prm);
        }
    }
    unsafe fn project_vector(kernel: Kernel, job: Job<Self>) {
        match kernel {
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx512 => super::avx512::project_bend_range(job),
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2 => super::avx2::project_bend_range(job),
            _ => project_range::<super::portable::Portable>(job),
        }
    }
}
