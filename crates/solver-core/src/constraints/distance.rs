//! Distance constraints `C = |x_i - x_j| - l0`, stored as a structure of arrays.

use super::{xpbd_delta_lambda, ConstraintKind, MAX_ARITY};
use crate::error::check_index;
use crate::error::check_non_negative;
use crate::error::{Result, WobbleError};
use crate::geometry::packed::Packed4;
use glam::{DMat3, DVec3, Vec3};

/// Distance constraints between particle pairs: indices, rest lengths, compliances.
#[derive(Clone, Debug, Default)]
pub struct DistanceConstraints {
    /// Particle pairs `[i, j]`, i != j.
    pub pairs: Vec<[u32; 2]>,
    /// Rest lengths l0 (> 0).
    pub rest: Vec<f32>,
    /// Compliances α (>= 0; 0 = rigid).
    pub compliance: Vec<f32>,
}

impl DistanceConstraints {
    /// Number of constraints.
    #[inline]
    pub fn len(&self) -> usize {
        self.pairs.len()
    }

    /// True when empty.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }

    /// Adds a constraint between `i` and `j` whose rest length is their distance in `x`.
    pub fn push_rest(&mut self, x: &[Packed4], i: u32, j: u32, compliance: f32) -> Result<()> {
        let index = self.len();
        for p in [i, j] {
            check_index("distance constraint", index, p as usize, x.len())?;
        }
        let rest = (x[i as usize].xyz() - x[j as usize].xyz()).length();
        self.push(i, j, rest, compliance)
    }

    /// Adds a constraint with an explicit rest length.
    pub fn push(&mut self, i: u32, j: u32, rest: f32, compliance: f32) -> Result<()> {
        let index = self.len();
        if i == j {
            return Err(WobbleError::RepeatedParticle {
                kind: "distance",
                index,
                particle: i,
            });
        }
        if !rest.is_finite() {
            return Err(WobbleError::NonFinite {
                what: "rest length",
                index,
                value: rest,
            });
        }
        if rest <= 0.0 {
            return Err(WobbleError::ZeroLengthConstraint {
                kind: "distance",
                index,
                i,
                j,
            });
        }
        check_non_negative("compliance", compliance)?;
        self.pairs.push([i, j]);
        self.rest.push(rest);
        self.compliance.push(compliance);
        Ok(())
    }

    /// Sets every constraint's compliance.
    pub fn set_compliance(&mut self, alpha: f32) {
        self.compliance.iter_mut().for_each(|a| *a = alpha);
    }

    /// Mean rest length (1 when empty).
    pub fn mean_rest(&self) -> f32 {
        super::mean_rest(&self.rest)
    }
}

impl DistanceConstraints {
    /// Appends Godot/Bullet bending links: one distance constraint (with `compliance`) between
    /// every pair of the `x.len()` particles two edges apart in the graph of the constraints
    /// already in the table and not already joined, at their distance in `x`. Returns how many
    /// were added.
    pub fn push_bending_links(&mut self, x: &[Packed4], compliance: f32) -> Result<usize> {
        check_non_negative("compliance", compliance)?;
        let n = x.len();
        let (start, mut nbr) = neighbours(n, &self.pairs);
        for v in 0..n {
            nbr[start[v] as usize..start[v + 1] as usize].sort_unstable();
        }
        let around = |v: usize| &nbr[start[v] as usize..start[v + 1] as usize];
        // mark[k] == i + 1 when k is i itself, a neighbour of i, or already linked to i.
        let mut mark = vec![0u32; n];
        let mut links = Vec::new();
        for i in 0..n {
            let tag = i as u32 + 1;
            mark[i] = tag;
            for &j in around(i) {
                mark[j as usize] = tag;
            }
            for &j in around(i) {
                for &k in around(j as usize) {
                    if k as usize > i && mark[k as usize] != tag {
                        mark[k as usize] = tag;
                        links.push([i as u32, k]);
                    }
                }
            }
        }
        let before = self.len();
        for [i, k] in links {
            let rest = (x[i as usize].xyz() - x[k as usize].xyz()).length();
            if rest > 0.0 {
                self.push(i, k, rest, compliance)?;
            }
        }
        Ok(self.len() - before)
    }
}

/// The neighbours of each of `n` particles through the constraint `pairs`, as offsets `start`
/// (`n + 1` of them) and neighbours `nbr`: particle `v`'s are `nbr[start[v]..start[v + 1]]`, in
/// constraint order.
pub(crate) fn neighbours(n: usize, pairs: &[[u32; 2]]) -> (Vec<u32>, Vec<u32>) {
    let mut start = vec![0u32; n + 1];
    for &[i, j] in pairs {
        start[i as usize + 1] += 1;
        start[j as usize + 1] += 1;
    }
    for v in 0..n {
        start[v + 1] += start[v];
    }
    let mut fill = start.clone();
    let mut nbr = vec![0u32; start[n] as usize];
    for &[i, j] in pairs {
        nbr[fill[i as usize] as usize] = j;
        fill[i as usize] += 1;
        nbr[fill[j as usize] as usize] = i;
        fill[j as usize] += 1;
    }
    (start, nbr)
}

/// `C = |x_i - x_j| - rest` of the pair `[i, j]`, with `∇_i C = n = -∇_j C` in `grad[0..2]`
/// (`n = 0` when the particles coincide): the distance and the tether.
pub(crate) fn pair_distance_and_grad(
    x: &[Packed4],
    [i, j]: [u32; 2],
    rest: f32,
    grad: &mut [Vec3; MAX_ARITY],
) -> f32 {
    let d = x[i as usize].xyz() - x[j as usize].xyz();
    let len = d.length();
    let n = if len > 0.0 { d / len } else { Vec3::ZERO };
    grad[0] = n;
    grad[1] = -n;
    len - rest
}

/// `C = |x_i - x_j| - rest` in `f64` with its gradient `±n` and Hessian `±(I - n nᵀ) / |d|`
/// (`d = x_i - x_j`, `n = d / |d|`); all zero where the two particles coincide.
pub(crate) fn pair_second_order(
    x: &[DVec3],
    [i, j]: [u32; 2],
    rest: f32,
    grad: &mut [DVec3; MAX_ARITY],
    hess: &mut super::Hessian,
) -> f64 {
    let d = x[i as usize] - x[j as usize];
    let len = d.length();
    let (n, h) = if len > 0.0 {
        let n = d / len;
        (n, (DMat3::IDENTITY - outer(n, n)) / len)
    } else {
        (DVec3::ZERO, DMat3::ZERO)
    };
    grad[0] = n;
    grad[1] = -n;
    hess[0][0] = h;
    hess[1][1] = h;
    hess[0][1] = -h;
    hess[1][0] = -h;
    len - rest as f64
}

/// The outer product `a bᵀ`.
pub(crate) fn outer(a: DVec3, b: DVec3) -> DMat3 {
    DMat3::from_cols(a * b.x, a * b.y, a * b.z)
}

impl ConstraintKind for DistanceConstraints {
    index_table_accessors!("distance", pairs);
    fn evaluate(&self, c: usize, x: &[Packed4], grad: &mut [Vec3; MAX_ARITY]) -> f32 {
        pair_distance_and_grad(x, self.pairs[c], self.rest[c], grad)
    }
    fn has_second_order(&self) -> bool {
        true
    }
    fn second_order(
        &self,
        c: usize,
        x: &[DVec3],
        grad: &mut [DVec3; MAX_ARITY],
        hess: &mut super::Hessian,
    ) -> Option<f64> {
        Some(pair_second_order(
            x,
            self.pairs[c],
            self.rest[c],
            grad,
            hess,
        ))
    }
    fn scale(&self) -> f32 {
        self.mean_rest()
    }
}

/// Projects distance constraints one after another (Gauss-Seidel), scalar: the reference that
/// the SIMD kernel is tested against and the inner loop of the sequential solver.
///
/// For each constraint `c` in `order`: `Δλ = (-C - α̃ λ) / (w_i + w_j + α̃)`, `λ += Δλ`,
/// `x_i += k w_i n Δλ`, `x_j -= k w_j n Δλ` with `n = (x_i - x_j)/|x_i - x_j|`. `lambda` is
/// indexed like the constraints; `inv_dt2` is `1/h²` in XPBD mode and 0 in PBD mode.
#[inline]
pub fn project_distance_scalar(
    x: &mut [Packed4],
    table: &DistanceConstraints,
    order: impl Iterator<Item = usize>,
    lambda: &mut [f32],
    inv_dt2: f32,
    k: f32,
) {
    for c in order {
        let [i, j] = table.pairs[c];
        let alpha = table.compliance[c] * inv_dt2;
        project_distance_one(
            x,
            i as usize,
            j as usize,
            table.rest[c],
            alpha,
            &mut lambda[c],
            k,
        );
    }
}

/// One scalar distance projection; shared by every scalar path.
#[inline(always)]
pub(crate) fn project_distance_one(
    x: &mut [Packed4],
    i: usize,
    j: usize,
    rest: f32,
    alpha: f32,
    lambda: &mut f32,
    k: f32,
) {
    debug_assert_ne!(i, j);
    let (pi, pj) = if i < j {
        let (lo, hi) = x.split_at_mut(j);
        (&mut lo[i], &mut hi[0])
    } else {
        let (lo, hi) = x.split_at_mut(i);
        (&mut hi[0], &mut lo[j])
    };
    project_distance_pair(pi, pj, rest, alpha, lambda, k);
}

/// The distance projection of one particle pair in place.
#[inline(always)]
pub fn project_distance_pair(
    pi: &mut Packed4,
    pj: &mut Packed4,
    rest: f32,
    alpha: f32,
    lambda: &mut f32,
    k: f32,
) {
    let dx = pi.x - pj.x;
    let dy = pi.y - pj.y;
    let dz = pi.z - pj.z;
    let len = (dx * dx + dy * dy + dz * dz).sqrt();
    if len <= 0.0 {
        return;
    }
    let Some(dl) = xpbd_delta_lambda(len - rest, *lambda, alpha, pi.w + pj.w + alpha) else {
        return;
    };
    *lambda += dl;
    let s = k * dl / len;
    let (si, sj) = (s * pi.w, s * pj.w);
    pi.x += si * dx;
    pi.y += si * dy;
    pi.z += si * dz;
    pj.x -= sj * dx;
    pj.y -= sj * dy;
    pj.z -= sj * dz;
}
