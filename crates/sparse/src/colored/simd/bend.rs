//! [`BendBatch`]: a batch of independent bending constraints (four particles each, no two
//! sharing a particle), projected [`LANES`] at a time by the vector kernels, with its scalar
//! twin.
//!
//! The updates are those of [`DihedralBending`] and [`IsometricBending`] through
//! [`solver_core::constraints::project_generic`], rewritten so that they vectorize:
//!
//! - dihedral: with `nA = e × (x2 - x0)`, `nB = (x3 - x0) × e`, the signed angle is
//!   `θ = atan2(S, D)` with `S = -|e| (nA · b)`, `D = nA · nB` (`b = x3 - x0`; the generic
//!   path's `atan2((nA × nB) · e / |e|, nA · nB)` is the same angle, as
//!   `nA × nB = -e (nA · b)`). The wrapped deviation `wrap(θ - θ0)` of the generic path is
//!   the angle of `(S, D)` turned back by `θ0`, `atan2(S cos θ0 - D sin θ0, D cos θ0 + S sin θ0)`,
//!   which lies in `[-π, π]` with no wrap to decide after the angle; each product with `|e|`
//!   is one fused product, as the old `|e| (nA · b)` was one product, so the rotation adds
//!   nothing to the angle's chain. The batch stores `cos θ0` and `sin θ0`. The angle is
//!   [`atan2`]: a reduction to `[0, 1]` by `min / max` and an odd polynomial of degree 13
//!   ([`ATAN_MAX_ERROR`]), the quadrant and the sign of `S` folded into its last fused
//!   product. `C = clamp(wrap(θ - θ0), ±DIHEDRAL_MAX_STEP)` (the same trust region). The four
//!   gradients are combinations of `nA` and `nB` (Bridson's `∇θ`), and their squared norms
//!   come from `|e|²`, `|nA|²`, `|nB|²` and `nA · nB` (see [`dihedral`]), arranged so that the
//!   update's longest dependency chain is the angle's;
//! - isometric: `C = |v|`, `v = Σ k_i (x_i - x0)`, `∇_i C = k_i v̂`, with
//!   `|∇_i C|² = |v̂|² k_i²`.
//!
//! Degenerate stencils (a vanishing edge or triangle, `v = 0`) get no gradient and `θ = 0`
//! (dihedral: `C = clamp(wrap(-θ0))`) or `C = 0` (isometric), as in the generic path: nothing moves,
//! and the multiplier follows the compliance term alone.
//!
//! Layout: a bend touches four particles that rarely sit at fixed offsets, so every particle is
//! one 16-byte load and store (a gather of `Packed4`), and the in-register 4 x 4 transpose of
//! the distance kernels turns them into x, y, z, w vectors: slot `k` of quad `m` of a block is
//! the constraint at position `16b + 4k + m`, as in [`super::EdgeBatch`]. The constraints are
//! sorted by their first particle, so that a block's particles are near each other. A partial
//! last block is copied to a stack buffer padded with degenerate lanes and run the same way.

use super::block::arr4;
use super::block::{Isa, Job};
use super::lane::{positive_finite, Lane, V3, W};
use super::{Kernel, LaneBatch, LANES};
use solver_core::constraints::bending::{dihedral_deviation, DIHEDRAL_MAX_STEP};
use solver_core::constraints::{DihedralBending, IsometricBending, MIN_DENOMINATOR};
use solver_core::error::check_index;
use solver_core::error::{Result, WobbleError};
use solver_core::geometry::packed::Packed4;

/// The bending model of a [`BendBatch`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BendModel {
    /// [`DihedralBending`]: `C = clamp(wrap(θ - θ0), ±0.5 rad)`, `θ` signed.
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
    /// The particles of each slot of the stencil `[x0, x1, x2, x3]`, as offsets in floats
    /// (4 per particle): a kernel's address is then one load and an addressing mode, where
    /// indices would need a shift each, which the compiler vectorizes into extracts.
    p: [Vec<u32>; 4],
    /// Dihedral: the rest angle's cosine and sine in `param[0]`, `param[1]`, and in `param[2]`
    /// the value `wrap(0 - θ0)` of a degenerate stencil (θ = 0, as the generic path); isometric:
    /// the weights `k_0..k_3`.
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
                let rest = table.rest[c];
                let (sin, cos) = rest.sin_cos();
                let degenerate = dihedral_deviation(0.0, rest);
                (
                    table.stencils[c],
                    [cos, sin, degenerate, 0.0],
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
        // Offsets in floats (4 per particle) must fit in u32.
        const MAX_PARTICLES: u64 = u32::MAX as u64 / 4 + 1;
        if particles as u64 > MAX_PARTICLES {
            return Err(WobbleError::BadCount {
                name: "particles of a body with a bend batch",
                value: particles as u64,
                max: MAX_PARTICLES,
            });
        }
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
                b.p[k].push(4 * s[k]);
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
        arr4!(s => self.p[s][k] / 4)
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

/// The largest error of the kernels' polynomial `atan2` against `f64::atan2`, in radians,
/// over every argument
/// (the polynomial's 2.5e-7 plus f32 rounding; tested).
pub const ATAN_MAX_ERROR: f32 = 1e-6;

/// `atan2(y, x)` in `[-π, π]`: the angle reduced to `t = min / max` of `|y|`, `|x|` in
/// `[0, 1]`, the polynomial `r = t P(t²)`, then `π/2 - r` above the diagonal, `π - r` for
/// `x < 0`, and the whole negated for `y < 0`. Those quadrant steps are folded into one last
/// product and sum, `P (±t) ± offset`, whose signs and offset come from the comparisons while
/// the polynomial is evaluated: the angle waits on one operation after `P` instead of six.
/// `+π` for `y = ±0`, `x < 0`; NaN when both are 0.
#[inline(always)]
pub(super) unsafe fn atan2<L: Lane>(y: L, x: L) -> L {
    atan2_negated_where(y, x, y.lt(L::splat(0.0)))
}

/// `atan2(|y|, x)`, negated in the lanes of `below`: [`atan2`] with the sign's mask given, so
/// that a caller holding `-y` takes `atan2(y, x)` as `atan2_negated_where(-y, x, 0 < -y)`
/// without negating it.
#[inline(always)]
unsafe fn atan2_negated_where<L: Lane>(y: L, x: L, below: L::M) -> L {
    let (ay, ax) = (y.abs(), x.abs());
    let zero = L::splat(0.0);
    let (steep, negative) = (ax.lt(ay), x.lt(zero));
    let t = ax.min(ay).div(ay.max(ax));
    // Estrin's scheme in z = t²: three products deep instead of Horner's six.
    let z = t.mul(t);
    let (z2, c) = (z.mul(z), |k: usize| L::splat(ATAN[k]));
    let z4 = z2.mul(z2);
    let low = z2.fma(z.fma(c(3), c(2)), z.fma(c(1), c(0)));
    let high = z2.fma(c(6), z.fma(c(5), c(4)));
    let poly = z4.fma(high, low);
    // r, π/2 - r, π - r, π/2 + r (steep and x < 0: π - (π/2 - r)), each negated for y < 0.
    let signed_t = L::negate_where(below, L::negate_where(steep, L::negate_where(negative, t)));
    let offset = L::select(
        steep,
        L::splat(std::f32::consts::FRAC_PI_2),
        L::keep_or_zero(negative, L::splat(std::f32::consts::PI)),
    );
    poly.fma(signed_t, L::negate_where(below, offset))
}

/// Scalar `atan2` (the kernels' polynomial atan2), for tests and reports of its accuracy.
pub fn atan2_scalar(y: f32, x: f32) -> f32 {
    // SAFETY: the f32 implementation of `Lane` needs no instruction set.
    unsafe { atan2(y, x) }
}

/// Scalars shared by every constraint of a call.
#[derive(Clone, Copy)]
struct Params<L> {
    inv_dt2: L,
    k: L,
}

/// The XPBD multiplier step of the isometric update (the dihedral folds its own into the
/// moves, see [`dihedral`]) given `C`, the four gradients' squared norms and whether the
/// stencil is usable (`geom`; else no gradient): returns the new multiplier, `-Δλ` (0 in lanes
/// that must not move; negated, which saves the negation of `C + α̃λ`) and the lanes where it
/// is usable.
#[inline(always)]
unsafe fn multiplier<L: Lane>(
    value: L,
    q: [L; 4],
    w: [L; 4],
    geom: L::M,
    compliance: L,
    lam: L,
    c: Params<L>,
) -> (L, L, L::M) {
    let alpha = compliance.mul(c.inv_dt2);
    // As the generic path: α̃ + Σ w_i |∇_i C|², slot after slot.
    let full = w[3].fma(q[3], w[2].fma(q[2], w[1].fma(q[1], w[0].fma(q[0], alpha))));
    let denom = L::select(geom, full, alpha);
    let ok = positive_finite(denom, MIN_DENOMINATOR);
    let neg_dl = L::select(ok, alpha.fma(lam, value).mul(denom.recip()), L::splat(0.0));
    // `lam - 0` is `lam` to the bit: no select of the old multiplier, which stored back over it
    // would become a masked store (`vmaskmovps`, slow on AVX2).
    (lam.sub(neg_dl), neg_dl, ok)
}

/// The dihedral update of one lane (or vector of lanes): stencil positions `p`, inverse
/// masses `w`, rest angle (`[cos θ0, sin θ0, wrap(-θ0)]`, see [`BendBatch`]), compliance,
/// multiplier; returns the new positions and multiplier.
///
/// The gradients are combinations of `nA` and `nB` (Bridson et al., for the signed `θ`):
/// `∇₂ = c₂ nA`, `∇₃ = c₃ nB` with `c = -|e| / |n|²`, `∇₀ = (s₂ - 1) ∇₂ + (s₃ - 1) ∇₃` and `∇₁ = -(s₂ ∇₂ + s₃ ∇₃)` with
/// `s = (x - x0) · e / |e|²`. With `q₂ = |∇₂|² = |e|² / |nA|²`, `q₃` alike and
/// `h = ∇₂ · ∇₃ = |e|² (nA · nB) / (|nA|² |nB|²)`, the denominator's sum is
/// `Σ wᵢ |∇ᵢ|² = q₂ (w₀ o₂² + w₁ s₂² + w₂) + q₃ (w₀ o₃² + w₁ s₃² + w₃) + 2h (w₀ o₂ o₃ + w₁ s₂ s₃)`
/// (`o = s - 1`), three products of terms known early instead of a chain through `∇₀`, `∇₁`.
/// Each move is `x_i += Δλ k wᵢ (aᵢ nA + bᵢ nB)`, its vector formed before `Δλ` for x0 and x1
/// (x2 and x3 move along one normal each), and
/// `-Δλ = C r + α̃ λ r` with `r = 1 / (α̃ + Σ wᵢ |∇ᵢ|²)`, so that the angle `C` is one fused
/// product away from the moves: the update's longest chain runs through the `atan2`.
#[inline(always)]
unsafe fn dihedral<L: Lane>(
    p: [V3<L>; 4],
    w: [L; 4],
    rest: [L; 3],
    compliance: L,
    lam: L,
    c: Params<L>,
) -> ([V3<L>; 4], L) {
    let [cos0, sin0, degenerate] = rest;
    let zero = L::splat(0.0);
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
    // nA × nB = -e (nA · b), so the sine term S = (nA × nB) · e / |e| is -|e| (nA · b); with
    // D = nA · nB, θ - θ0 is the angle of (S cos θ0 - D sin θ0, D cos θ0 + S sin θ0), each
    // component one fused product after |e|. The sine is formed negated,
    // |e| (nA · b) cos θ0 + D sin θ0, and its sign taken from `0 < -sine`.
    let (vol, d) = (na.dot(b), na.dot(nb));
    let neg_sine = el.fma(vol.mul(cos0), d.mul(sin0));
    let cosine = el.neg_mul_add(vol.mul(sin0), d.mul(cos0));
    let angle = atan2_negated_where(neg_sine, cosine, zero.lt(neg_sine));
    // Degenerate lanes: θ = 0, so C = clamp(wrap(-θ0)), and no gradient (below).
    let deviation = L::select(geom, angle, degenerate);
    let max_step = L::splat(DIHEDRAL_MAX_STEP);
    let value = deviation.min(max_step).max(L::splat(-DIHEDRAL_MAX_STEP));
    // Degenerate lanes get zero coefficients, so their positions stay as they are (adding 0
    // turns a -0.0 coordinate into +0.0, the only bits that change).
    // Divisions, not estimates and a Newton step: one operation each (the divider is idle
    // most of the update) where the step takes three (`cargo bench --bench bend_kernel`
    // compares the kernels).
    let one = L::splat(1.0);
    let (rla2, rlb2) = (one.div(la2), one.div(lb2));
    let ce = zero.sub(el);
    let c2 = L::keep_or_zero(geom, ce.mul(rla2));
    let c3 = L::keep_or_zero(geom, ce.mul(rlb2));
    let inv_el2 = L::keep_or_zero(geom, one.div(el2));
    let s2 = a.dot(e).mul(inv_el2);
    let s3 = b.dot(e).mul(inv_el2);
    let (o2, o3) = (s2.sub(one), s3.sub(one));
    let (q2, q3) = (el2.mul(rla2), el2.mul(rlb2));
    let h2 = q2.mul(rlb2).mul(d.add(d));
    let a2 = w[0].fma(o2.mul(o2), w[1].fma(s2.mul(s2), w[2]));
    let a3 = w[0].fma(o3.mul(o3), w[1].fma(s3.mul(s3), w[3]));
    let cross_terms = w[0].fma(o2.mul(o3), w[1].mul(s2.mul(s3)));
    let alpha = compliance.mul(c.inv_dt2);
    let full = q2.fma(a2, q3.fma(a3, h2.fma(cross_terms, alpha)));
    let denom = L::select(geom, full, alpha);
    let r = L::keep_or_zero(positive_finite(denom, MIN_DENOMINATOR), one.div(denom));
    let neg_dl = value.fma(r, alpha.mul(lam).mul(r));
    // The coefficients carry -k, as `neg_dl` is -Δλ. The moves of x0 and x1 combine `nA` and
    // `nB` before `Δλ` (one fused product after it); x2 and x3 move along one normal each.
    let neg_k = zero.sub(c.k);
    let (k2, k3) = (neg_k.mul(c2), neg_k.mul(c3));
    let g0 = nb.scale_add(w[0].mul(o3).mul(k3), na.scale(w[0].mul(o2).mul(k2)));
    let g1 = nb.scale_add(w[1].mul(s3).mul(k3), na.scale(w[1].mul(s2).mul(k2)));
    let moved = [
        g0.scale_add(neg_dl, p[0]),
        g1.neg_scale_add(neg_dl, p[1]),
        na.scale_add(neg_dl.mul(w[2].mul(k2)), p[2]),
        nb.scale_add(neg_dl.mul(w[3].mul(k3)), p[3]),
    ];
    // `lam - 0` is `lam` to the bit: no select of the old multiplier, which stored back over it
    // would become a masked store (`vmaskmovps`, slow on AVX2).
    (moved, lam.sub(neg_dl))
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
    let (lam, neg_dl, ok) = multiplier(value, q, w, geom, compliance, lam, c);
    let (kdl, moving) = (L::splat(0.0).sub(c.k).mul(neg_dl), L::and(ok, geom));
    let s = arr4!(k => kdl.mul(w[k]));
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
        BendModel::Dihedral => {
            let rest = [b.param[0][c], b.param[1][c], b.param[2][c]];
            dihedral(p, w, rest, b.compliance[c], lam, prm)
        }
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

/// `WIDTH` floats from `at`, as a lane vector (a function: a closure holding an intrinsic
/// stays out of line in the kernels).
///
/// # Safety
/// `WIDTH` floats are readable at `at`; `I`'s instructions are available.
#[inline(always)]
pub(super) unsafe fn load<I: Isa>(at: *const f32) -> W<I> {
    W::new(I::load(at))
}

/// A batch's arrays as pointers taken once per call: read through `&BendBatch`, each `Vec`'s
/// pointer is reloaded after every store to the particles, which may alias it as far as the
/// compiler knows.
#[derive(Clone, Copy)]
struct Arrays {
    p: [*const u32; 4],
    param: [*const f32; 4],
    compliance: *const f32,
}

/// The vector body of [`super::project_batch_range`] on instruction set `I`: full blocks of
/// `range` (which starts at a multiple of `LANES`), then a partial last block through a
/// buffer (the same lanes' arithmetic).
///
/// # Safety
/// `I`'s instructions are available; otherwise as [`super::project_batch_range`].
#[inline(always)]
pub(super) unsafe fn project_range<I: Isa>(job: Job<BendBatch>) {
    match job.b.model {
        BendModel::Dihedral => project_model::<I, true>(job),
        BendModel::Isometric => project_model::<I, false>(job),
    }
}

/// [`project_range`] for one model: `DIHEDRAL`, else isometric.
///
/// # Safety
/// As [`project_range`].
#[inline(always)]
unsafe fn project_model<I: Isa, const DIHEDRAL: bool>(job: Job<BendBatch>) {
    let (x, b, range, lambda, inv_dt2, k) = job.vector_parts();
    let xf = x.cast::<f32>();
    let prm = Params {
        inv_dt2: W::<I>::splat(inv_dt2),
        k: W::<I>::splat(k),
    };
    let arrays = Arrays {
        p: arr4!(s => b.p[s].as_ptr()),
        param: arr4!(s => b.param[s].as_ptr()),
        compliance: b.compliance.as_ptr(),
    };
    // Full blocks part by part. With `LOAD_AHEAD` each part's particles are loaded before the
    // previous part is solved: the loads and transposes of the next part give the core
    // independent work while the previous one waits on its long chain (the constraints share
    // no particle, so loading ahead of the stores reads what the scalar order would).
    let full_end = range.start + (range.end - range.start) / LANES * LANES;
    let addr_at = |at_part: usize| {
        move |s: usize, m: usize, q: usize| xf.add(*arrays.p[s].add(at_part + 4 * q + m) as usize)
    };
    let mut at_part = range.start;
    if !I::LOAD_AHEAD {
        while at_part < full_end {
            let addr = addr_at(at_part);
            let loaded = load_part::<I>(&addr);
            solve_part::<I, DIHEDRAL>(loaded, arrays, at_part, lambda.add(at_part), prm, &addr);
            at_part += I::WIDTH;
        }
    } else if at_part < full_end {
        let mut loaded = load_part::<I>(&addr_at(at_part));
        while at_part + I::WIDTH < full_end {
            let next = load_part::<I>(&addr_at(at_part + I::WIDTH));
            let (lam, addr) = (lambda.add(at_part), addr_at(at_part));
            solve_part::<I, DIHEDRAL>(loaded, arrays, at_part, lam, prm, &addr);
            loaded = next;
            at_part += I::WIDTH;
        }
        let (lam, addr) = (lambda.add(at_part), addr_at(at_part));
        solve_part::<I, DIHEDRAL>(loaded, arrays, at_part, lam, prm, &addr);
    }
    let base = full_end;
    let count = range.end - base;
    if count > 0 {
        // The partial last block through a stack buffer, slot s of lane l at 16 s + l; lanes
        // past `count` hold zeros (a degenerate, rigid stencil: nothing moves).
        let mut buf = [Packed4::default(); 4 * LANES];
        let mut lam = [0.0f32; LANES];
        let particle = |s: usize, l: usize| xf.add(*arrays.p[s].add(base + l) as usize).cast();
        for l in 0..count {
            for s in 0..4 {
                buf[s * LANES + l] = *particle(s, l);
            }
            lam[l] = *lambda.add(base + l);
        }
        let bf = buf.as_mut_ptr().cast::<f32>();
        block::<I, DIHEDRAL>(
            arrays,
            base,
            |s, l| bf.add(4 * (s * LANES + l)),
            lam.as_mut_ptr(),
            prm,
        );
        for l in 0..count {
            for s in 0..4 {
                *particle(s, l) = buf[s * LANES + l];
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
unsafe fn block<I: Isa, const DIHEDRAL: bool>(
    arrays: Arrays,
    base: usize,
    at: impl Fn(usize, usize) -> *mut f32,
    lambda: *mut f32,
    prm: Params<W<I>>,
) {
    for part in 0..LANES / I::WIDTH {
        let first = part * I::WIDTH;
        let addr = |s: usize, m: usize, q: usize| at(s, first + 4 * q + m);
        let loaded = load_part::<I>(&addr);
        solve_part::<I, DIHEDRAL>(loaded, arrays, base + first, lambda.add(first), prm, &addr);
    }
}

/// The particles of one part (`WIDTH` constraints) as x, y, z, w vectors per slot: vector `m`
/// of slot `s` holds the particles of lanes `4q + m` (q = 0..WIDTH/4), at `addr(s, m, q)`, so
/// that after the transpose lane `4q + m` is the part's constraint `4q + m`.
///
/// # Safety
/// As [`project_range`].
#[inline(always)]
unsafe fn load_part<I: Isa>(addr: &impl Fn(usize, usize, usize) -> *mut f32) -> [[I::V; 4]; 4] {
    arr4!(s => I::transpose(arr4!(m => I::gather(|q| addr(s, m, q).cast_const()))))
}

/// Projects the part [`load_part`] loaded (batch position `at_part`, multipliers at `lambda`)
/// and stores its particles back where they came from.
///
/// # Safety
/// As [`block`].
#[inline(always)]
unsafe fn solve_part<I: Isa, const DIHEDRAL: bool>(
    loaded: [[I::V; 4]; 4],
    arrays: Arrays,
    at_part: usize,
    lambda: *mut f32,
    prm: Params<W<I>>,
    addr: &impl Fn(usize, usize, usize) -> *mut f32,
) {
    let p = arr4!(s => {
        let v = loaded[s];
        V3([W::<I>::new(v[0]), W::new(v[1]), W::new(v[2])])
    });
    let w = arr4!(s => W::<I>::new(loaded[s][3]));
    let compliance = load::<I>(arrays.compliance.add(at_part));
    let lam = W::<I>::new(I::load(lambda));
    let (moved, lam) = if DIHEDRAL {
        let rest = [
            load::<I>(arrays.param[0].add(at_part)),
            load::<I>(arrays.param[1].add(at_part)),
            load::<I>(arrays.param[2].add(at_part)),
        ];
        dihedral(p, w, rest, compliance, lam, prm)
    } else {
        let kw = arr4!(j => load::<I>(arrays.param[j].add(at_part)));
        isometric(p, w, kw, compliance, lam, prm)
    };
    I::store(lambda, lam.0);
    // Unrolled (a loop over `s` or `m` keeps `moved` in memory, indexed).
    arr4!(s => {
        let [mx, my, mz] = moved[s].0;
        let out = I::transpose([mx.0, my.0, mz.0, loaded[s][3]]);
        arr4!(m => I::scatter(out[m], |q| addr(s, m, q)));
    });
}

#[cfg(target_arch = "x86_64")]
/// [`project_range`] on this instruction set.
///
/// # Safety
/// The CPU has AVX2 and FMA; otherwise as [`project_range`].
#[target_feature(enable = "avx2,fma")]
unsafe fn project_range_avx2(job: Job<BendBatch>) {
    project_range::<super::avx2::Avx2x1>(job)
}

#[cfg(target_arch = "x86_64")]
/// [`project_range`] on this instruction set.
///
/// # Safety
/// The CPU has AVX-512F; otherwise as [`project_range`].
#[target_feature(enable = "avx512f")]
unsafe fn project_range_avx512(job: Job<BendBatch>) {
    project_range::<super::avx512::Avx512>(job)
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
            Kernel::Avx512 => project_range_avx512(job),
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2 => project_range_avx2(job),
            _ => project_range::<super::portable::Portable>(job),
        }
    }
}
