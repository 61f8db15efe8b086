//! SIMD distance projection over a batch of independent constraints (no two share a particle),
//! `LANES` at a time, and its scalar twin.
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
//! equals the scalar sweep over it up to floating-point rounding.
//!
//! TODO(kernel): measurements.

mod batch;
mod portable;

#[cfg(all(target_arch = "x86_64", target_feature = "avx512f"))]
mod avx512;

#[cfg(test)]
mod tests;

pub use batch::{BatchLayout, EdgeBatch};

use crate::particles::Packed4;
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
    for (c, lambda) in lambda[..b.len()].iter_mut().enumerate() {
        crate::constraints::distance::project_distance_one(
            x,
            b.i[c] as usize,
            b.j[c] as usize,
            b.rest[c],
            b.compliance[c] * inv_dt2,
            lambda,
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
    let mut start = range.start;
    while start < end && !start.is_multiple_of(LANES) {
        let (pi, pj) = (b.i[start] as usize, b.j[start] as usize);
        crate::constraints::distance::project_distance_pair(
            &mut *x.add(pi),
            &mut *x.add(pj),
            b.rest[start],
            b.compliance[start] * inv_dt2,
            &mut *lambda.add(start),
            k,
        );
        start += 1;
    }
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
