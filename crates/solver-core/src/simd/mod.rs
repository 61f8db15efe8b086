//! SIMD distance projection over a batch of independent constraints (no two share a particle),
//! `LANES` = 16 at a time, and its scalar twin.
//!
//! # Theory
//! The XPBD distance update (Macklin, Müller, Chentanez 2016, eq. 18 with `|∇C| = 1`), the same
//! as [`crate::constraints::project_distance_pair`]: with `d = x_i - x_j`, `α̃ = α / h²`,
//!
//! ```text
//! Δλ = (l0 - |d| - α̃ λ) / (w_i + w_j + α̃),   λ += Δλ,
//! x_i += k w_i Δλ d / |d|,   x_j -= k w_j Δλ d / |d|        (skipped when |d| = 0 or w_i+w_j+α̃ = 0)
//! ```
//!
//! Independence makes the lanes' writes disjoint, so projecting a batch many lanes at a time
//! equals the scalar sweep over it up to floating-point rounding: the AVX-512 kernel computes
//! `1/|d|` as `rsqrt14` plus one Newton step and `1/(w_i+w_j+α̃)` as `rcp14` plus one Newton
//! step, and uses FMA; it agrees with the scalar twin to a few ulp (the tests allow a relative
//! 2e-5). Pinned particles (`w = 0`) keep their bits: their lanes are not updated at all.
//!
//! # The kernel is a data-layout problem
//! Per constraint the arithmetic is ~30 flops, i.e. two 512-bit instructions; what costs is
//! getting two `Packed4` per constraint into lanes and back. [`EdgeBatch::new`] therefore sorts
//! a color's constraints by particle and cuts them into *quads* of four whose particles sit at
//! fixed offsets (runs `i+k, j+k`, pairs `i+2k, i+2k+1`, stride-2 `i+2k, j+2k`), loaded as whole
//! 64-byte windows, and gathers the rest 16 bytes at a time; a 4 x 4 transpose per 128-bit part
//! turns four such registers into x, y, z, w vectors (see `batch.rs` for the layout). Every
//! memory access touches only the block's own particles, which keeps the range contract safe
//! for threads.
//!
//! # What was tried (cloth n = 32, 2945 constraints in 6 greedy colors, one core)
//! Development measurements, ns per projection, each the best of 300 timings of 20 sweeps over
//! all colors (`examples`-style probe, not kept) on the shared 2-core AVX-512 machine while
//! other jobs ran; differences under ~5% are noise. Scalar in color order measured 5.8-6.0 in
//! the same sessions, the natural-order sweep ~14. The criterion bench `edge_kernel` gives the
//! numbers to quote.
//!
//! | step | ns |
//! |---|---|
//! | `wide::f32x8` lanes gathered/scattered one float at a time (the first kernel) | 8.2 |
//! | the same with `wide::f32x16` (the portable kernel here) | 6.3 |
//! | AVX-512: sorted segments loaded by masked 64-byte windows (one mask per register), masked 16-byte slots for the rest | 3.05 |
//! | + plain 64-byte loads/stores where a block is made of whole windows | 2.7 |
//! | quads sorted by kind, straight-line code per kind (const generics), stride-1 chains found before stride-2 ones | ~1.9 |
//! | `rcp14` + Newton instead of `vdivps` for `1/(w_i+w_j+α̃)` | -0.08 (1.57 -> 1.47 A/B) |
//! | gather quads by `vinsertf32x4`/`vextractf32x4` instead of masked loads/stores | pure gather 3.2 -> 1.9; cloth 1.53 -> 1.47 |
//! | now | 1.46-1.50 |
//!
//! Tried without a measurable effect (A/B within noise): `rsqrt14` + Newton versus
//! `vsqrtps` + `vdivps` for `1/|d|` (kept: it leaves the divider to `1/denominator` on busier
//! blocks); storing only x, y, z with masked stores versus whole `Packed4` (kept whole: w goes
//! back with the bits it was loaded with, and plain stores forward to later loads); aligning
//! runs to 64-byte windows; a masked lambda store versus a plain one. Masked loads and stores
//! of scattered 16-byte slots were the expensive thing (3.2 versus 1.9-2.0 ns per gathered
//! constraint, most of it the stores). Stride-2 quads load and store 16 bytes per particle: a
//! 64-byte window would also cover the odd particles, which belong to other constraints that
//! another thread may be moving, and masked windows measured slower (1.77 versus 1.64 ns on a
//! stride-2 batch). Per quad kind (synthetic batches of one kind,
//! L1-resident): run 1.2-1.3, pair 1.4-1.5, stride-2 1.6, gather 1.9-2.0 ns. By its instruction
//! mix a run block issues ~70 uops to ports 0 and 5 per 16 constraints (32 of them shuffles),
//! so about 1 ns per constraint at 2.3 GHz is the floor of this formulation.
//!
//! Past L2 (the 512 x 512 cloth and up) the sweep streams its constraints from L3 or memory.
//! Keeping the quad heads apart from the full index arrays and skipping a rigid batch's
//! compliances (13 instead of 24 bytes streamed per run-block constraint) was tried and taken
//! out again: five interleaved A/B runs each showed nothing beyond the VM's noise at n = 512
//! (median ratio 0.985) and at n = 1024 (ratios 0.74-1.25). The tiled schedule of the colored
//! solver, which keeps particles in L2 across colors, is what brought the large-n cost down
//! (see `sparse::colored`).
//!
//! Builds without AVX-512 run the portable `wide::f32x16` kernel, which gathers lane by lane
//! and is no faster than the scalar twin (6.3 vs 5.8-6.0 ns above): an AVX2 version of the
//! quad layout is left to do.

mod batch;
mod portable;

#[cfg(all(target_arch = "x86_64", target_feature = "avx512f"))]
mod avx512;

#[cfg(test)]
mod tests;

pub use batch::{BatchLayout, EdgeBatch};

use crate::body::particles::Packed4;
use std::ops::Range;

/// Constraints per SIMD block: ranges handed to [`project_distance_batch_range`] start at
/// multiples of it.
pub const LANES: usize = 16;

/// True when this build runs the AVX-512 kernel (else the portable `wide` one).
pub const AVX512: bool = cfg!(all(target_arch = "x86_64", target_feature = "avx512f"));

/// Scalar twin of [`project_distance_batch`]: projects the batch's constraints one after
/// another in the batch's order; `lambda` is indexed like the batch.
pub fn project_distance_batch_scalar(
    x: &mut [Packed4],
    b: &EdgeBatch,
    lambda: &mut [f32],
    inv_dt2: f32,
    k: f32,
) {
    assert!(lambda.len() >= b.len() && x.len() >= b.particles_needed());
    // SAFETY: lengths checked above; the batch's indices were checked when it was built and
    // its constraints are independent; we hold both slices exclusively.
    unsafe {
        project_distance_batch_range_scalar(
            x.as_mut_ptr(),
            b,
            0..b.len(),
            lambda.as_mut_ptr(),
            inv_dt2,
            k,
        )
    }
}

/// Scalar twin of [`project_distance_batch_range`]: positions `range` one after another.
///
/// # Safety
/// As for [`project_distance_batch_range`].
pub unsafe fn project_distance_batch_range_scalar(
    x: *mut Packed4,
    b: &EdgeBatch,
    range: Range<usize>,
    lambda: *mut f32,
    inv_dt2: f32,
    k: f32,
) {
    for c in range.start..range.end.min(b.len()) {
        crate::constraints::distance::project_distance_pair(
            &mut *x.add(b.i[c] as usize),
            &mut *x.add(b.j[c] as usize),
            b.rest[c],
            b.compliance[c] * inv_dt2,
            &mut *lambda.add(c),
            k,
        );
    }
}

/// Projects a batch of independent distance constraints `LANES` at a time; `lambda` is indexed
/// like the batch (`lambda[k]` belongs to global constraint `b.ids[k]`).
///
/// # Panics
/// When `x` is shorter than [`EdgeBatch::particles_needed`] or `lambda` shorter than the batch
/// (a caller bug: the batch was built for other particles).
pub fn project_distance_batch(
    x: &mut [Packed4],
    b: &EdgeBatch,
    lambda: &mut [f32],
    inv_dt2: f32,
    k: f32,
) {
    assert!(
        lambda.len() >= b.len(),
        "one multiplier per batch constraint"
    );
    assert!(
        x.len() >= b.particles_needed(),
        "batch indices in range of the particles"
    );
    // SAFETY: lengths checked above; the batch's indices were checked when it was built and
    // its constraints are independent; we hold both slices exclusively.
    unsafe {
        project_distance_batch_range(
            x.as_mut_ptr(),
            b,
            0..b.len(),
            lambda.as_mut_ptr(),
            inv_dt2,
            k,
        )
    }
}

/// Projects the constraints at positions `range` of a batch; the unit of work of the parallel
/// colored solver.
///
/// Each constraint's result depends only on the particles and multiplier it reads, never on
/// how the batch is cut, as long as every range starts at a multiple of [`LANES`] (so 1, 2 or N
/// threads give bit-identical states). A range that starts elsewhere runs its positions up to
/// the next multiple of `LANES` through the scalar twin (correct, not bit-identical); a range
/// end past the batch is clipped.
///
/// # Safety
/// `x` must point to at least [`EdgeBatch::particles_needed`] particles and `lambda` to at least
/// `range.end` multipliers (positions of this batch), and no other thread may access the
/// particles or multipliers of this range during the call.
pub unsafe fn project_distance_batch_range(
    x: *mut Packed4,
    b: &EdgeBatch,
    range: Range<usize>,
    lambda: *mut f32,
    inv_dt2: f32,
    k: f32,
) {
    let end = range.end.min(b.len());
    let start = range.start.next_multiple_of(LANES).min(end);
    project_distance_batch_range_scalar(x, b, range.start..start, lambda, inv_dt2, k);
    if start >= end {
        return;
    }
    #[cfg(all(target_arch = "x86_64", target_feature = "avx512f"))]
    avx512::project_range(x, b, start..end, lambda, inv_dt2, k);
    #[cfg(not(all(target_arch = "x86_64", target_feature = "avx512f")))]
    portable::project_range(x, b, start..end, lambda, inv_dt2, k);
}

/// The portable `wide` kernel, whatever the build: for tests and benches that compare it with
/// the AVX-512 one. Same contract as [`project_distance_batch`].
#[doc(hidden)]
pub fn project_distance_batch_portable(
    x: &mut [Packed4],
    b: &EdgeBatch,
    lambda: &mut [f32],
    inv_dt2: f32,
    k: f32,
) {
    assert!(lambda.len() >= b.len() && x.len() >= b.particles_needed());
    // SAFETY: as in `project_distance_batch`.
    unsafe {
        portable::project_range(
            x.as_mut_ptr(),
            b,
            0..b.len(),
            lambda.as_mut_ptr(),
            inv_dt2,
            k,
        )
    }
}
