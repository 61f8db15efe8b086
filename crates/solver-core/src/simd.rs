//! SIMD distance projection over a batch of independent constraints (no two share a particle),
//! many lanes at a time with `wide`, and its scalar twin.
//!
//! Theory: the same XPBD update as [`crate::constraints::project_distance_scalar`], evaluated
//! for `LANES` constraints at once. Independence makes the lanes' writes disjoint, so the result
//! equals the scalar sweep over the batch up to floating-point rounding of the vector ops.

use crate::constraints::DistanceConstraints;
use crate::error::{Result, WobbleError};
use crate::particles::Packed4;
use wide::f32x8;

/// Constraints per SIMD vector.
pub const LANES: usize = 8;

/// One batch of independent distance constraints, laid out for the SIMD kernel.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EdgeBatch {
    /// First particle of each constraint.
    pub i: Vec<u32>,
    /// Second particle of each constraint.
    pub j: Vec<u32>,
    /// Rest lengths.
    pub rest: Vec<f32>,
    /// Compliances α.
    pub compliance: Vec<f32>,
    /// Global id of each constraint (where its multiplier lives in the caller's order).
    pub ids: Vec<u32>,
}

impl EdgeBatch {
    /// Builds a batch from distance constraints `ids` of `table`; checks they are independent
    /// and in range for `particles` particles.
    pub fn new(table: &DistanceConstraints, ids: &[u32], particles: usize) -> Result<Self> {
        let mut seen = vec![false; particles];
        let mut b = EdgeBatch::default();
        for (k, &c) in ids.iter().enumerate() {
            let c = c as usize;
            if c >= table.len() {
                return Err(WobbleError::IndexOutOfRange {
                    what: "batch constraint",
                    index: k,
                    value: c as u64,
                    len: table.len(),
                });
            }
            let [i, j] = table.pairs[c];
            for p in [i, j] {
                if p as usize >= particles {
                    return Err(WobbleError::IndexOutOfRange {
                        what: "distance constraint",
                        index: c,
                        value: p as u64,
                        len: particles,
                    });
                }
                if seen[p as usize] {
                    return Err(WobbleError::RepeatedParticle {
                        kind: "batch (constraints not independent)",
                        index: c,
                        particle: p,
                    });
                }
                seen[p as usize] = true;
            }
            b.i.push(i);
            b.j.push(j);
            b.rest.push(table.rest[c]);
            b.compliance.push(table.compliance[c]);
            b.ids.push(c as u32);
        }
        Ok(b)
    }

    /// Number of constraints.
    pub fn len(&self) -> usize {
        self.i.len()
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.i.is_empty()
    }
}

/// Scalar twin of [`project_distance_batch`]: projects the batch's constraints in order;
/// `lambda` is indexed like the batch.
pub fn project_distance_batch_scalar(
    x: &mut [Packed4],
    b: &EdgeBatch,
    lambda: &mut [f32],
    inv_dt2: f32,
    k: f32,
) {
    for c in 0..b.len() {
        crate::constraints::distance::project_distance_one(
            x,
            b.i[c] as usize,
            b.j[c] as usize,
            b.rest[c],
            b.compliance[c] * inv_dt2,
            &mut lambda[c],
            k,
        );
    }
}

/// Projects a batch of independent distance constraints `LANES` at a time; the remainder runs
/// through the scalar path. `lambda` is indexed like the batch.
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
        b.i.iter().chain(&b.j).all(|&p| (p as usize) < x.len()),
        "batch indices in range"
    );
    // SAFETY: indices are in range (checked above) and the batch's constraints are independent.
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

/// Projects constraints `range` of a batch; the unit of work of the parallel colored solver.
///
/// The result for each constraint does not depend on how a batch is cut into ranges, as long as
/// every range starts at a multiple of [`LANES`] (the remainder of the whole batch alone runs
/// scalar).
///
/// # Safety
/// `x` must point to at least as many particles as the batch's largest index + 1, `lambda` to at
/// least `range.end` multipliers, and no other thread may access the particles or multipliers of
/// this range during the call.
pub unsafe fn project_distance_batch_range(
    x: *mut Packed4,
    b: &EdgeBatch,
    range: std::ops::Range<usize>,
    lambda: *mut f32,
    inv_dt2: f32,
    k: f32,
) {
    let full_end = (b.len() / LANES * LANES).min(range.end);
    let inv_dt2v = f32x8::splat(inv_dt2);
    let kv = f32x8::splat(k);
    let zero = f32x8::splat(0.0);
    let mut base = range.start;
    while base + LANES <= full_end {
        let mut a = [[0.0f32; LANES]; 8];
        for l in 0..LANES {
            let pi = *x.add(b.i[base + l] as usize);
            let pj = *x.add(b.j[base + l] as usize);
            a[0][l] = pi.x;
            a[1][l] = pi.y;
            a[2][l] = pi.z;
            a[3][l] = pi.w;
            a[4][l] = pj.x;
            a[5][l] = pj.y;
            a[6][l] = pj.z;
            a[7][l] = pj.w;
        }
        let [xi, yi, zi, wi, xj, yj, zj, wj] = a.map(f32x8::from);
        let rest = f32x8::from(&b.rest[base..base + LANES]);
        let alpha = f32x8::from(&b.compliance[base..base + LANES]) * inv_dt2v;
        let lam_slice = std::slice::from_raw_parts_mut(lambda.add(base), LANES);
        let lam = f32x8::from(&lam_slice[..]);
        let (dx, dy, dz) = (xi - xj, yi - yj, zi - zj);
        let len = (dx * dx + dy * dy + dz * dz).sqrt();
        let denom = wi + wj + alpha;
        let ok = len.simd_gt(zero) & denom.simd_gt(zero);
        let dl = ok.select((rest - len - alpha * lam) / denom, zero);
        let s = ok.select(kv * dl / len, zero);
        let (si, sj) = (s * wi, s * wj);
        let out = [
            xi + si * dx,
            yi + si * dy,
            zi + si * dz,
            xj - sj * dx,
            yj - sj * dy,
            zj - sj * dz,
        ]
        .map(|v| v.to_array());
        lam_slice.copy_from_slice(&(lam + dl).to_array());
        for l in 0..LANES {
            let pi = &mut *x.add(b.i[base + l] as usize);
            pi.x = out[0][l];
            pi.y = out[1][l];
            pi.z = out[2][l];
            let pj = &mut *x.add(b.j[base + l] as usize);
            pj.x = out[3][l];
            pj.y = out[4][l];
            pj.z = out[5][l];
        }
        base += LANES;
    }
    for c in base..range.end {
        let pi = &mut *x.add(b.i[c] as usize);
        let pj = &mut *x.add(b.j[c] as usize);
        crate::constraints::distance::project_distance_pair(
            pi,
            pj,
            b.rest[c],
            b.compliance[c] * inv_dt2,
            &mut *lambda.add(c),
            k,
        );
    }
}
