//! The contacts a [`crate::world::World`] finds for a body each substep, as one constraint
//! table the step loop projects after every solver iteration
//! ([`ConstraintKind::projected_by_step_loop`]), and the friction applied to them after the
//! substep.
//!
//! Theory. A plane contact of particle `i` is the inequality `C = o - n · x_i <= 0` (the
//! half-space `n · x >= o` is free), `∇C = -n`; a pair contact of particles `i`, `j` (self
//! collision) is `C = d - |x_i - x_j| <= 0`, `∇_i C = -u`, `∇_j C = u` with
//! `u = (x_i - x_j) / |x_i - x_j|`; a triangle contact keeps the point `X = Σ b_k x_k` of one of
//! the body's triangles (normal `n`) behind a fixed point `p` of another body,
//! `C = n · X - (n · p - r) <= 0`, `∇_k C = b_k n`. Pair and triangle contacts and contacts
//! with a static or already solved surface are rigid (α = 0), so the XPBD update of
//! [`crate::constraints::project_generic`] moves the particles by exactly the violation,
//! shared by inverse mass; a plane contact with another body's predicted surface has the
//! compliance `α = w_t h²` ([`crate::world`]), which leaves that body its share. The
//! multiplier `λ` accumulates the normal correction: `pushed = -k w λ` for a plane contact
//! (k the PBD scale, 1 in XPBD). Friction (Macklin et al.
//! 2014, §6.1, as [`crate::collide`]): after the substep the tangential part of
//! `Δx = (x - x₀) - Δs` (`Δs` the contact surface's own motion over the substep) is removed
//! whole when `|Δx_t| < μ pushed`, and scaled by `μ pushed / |Δx_t|` otherwise; the velocity
//! loses the same amount over `h`. Pair contacts have no friction, and no contact has
//! restitution (they are inelastic).

use crate::constraints::{project_generic, xpbd_delta_lambda, ConstraintKind, MAX_ARITY};
use crate::geometry::packed::Packed4;
use glam::{Vec3, Vec3A, Vec4};

/// The contacts of one body for one substep: plane contacts (one particle) and pair contacts
/// (two particles of the same body).
#[derive(Clone, Debug, Default)]
pub struct WorldContacts {
    /// Particle indices, flat: contact `c` owns `ids[start[c]..start[c + 1]]`.
    ids: Vec<u32>,
    /// Start of each contact's particles in `ids`, plus the end.
    start: Vec<u32>,
    /// Plane contacts: the offset `o` of `n · x >= o`; pair contacts: the least distance.
    offset: Vec<f32>,
    /// What a contact with a surface holds besides its offset (zero for pair contacts): one
    /// item per contact, so that a pair costs one write for all of it.
    surface: Vec<SurfaceTerms>,
    /// The mean rest distance, the scale of the residual.
    scale: f32,
    /// The first of the pair contacts that end the table (the contacts after the last contact
    /// with a surface): [`WorldContacts::project_all`] reads their particles two by two.
    pairs_from: usize,
}

/// The terms of a contact with a surface.
#[derive(Clone, Copy, Debug, Default)]
struct SurfaceTerms {
    /// Plane and triangle contacts: the normal of the free half-space.
    normal: Vec3,
    /// Coulomb friction coefficient.
    friction: f32,
    /// The contact surface's displacement over the substep (zero for a static one).
    motion: Vec3,
    /// XPBD compliance α (m/N).
    compliance: f32,
    /// Triangle contacts: the barycentric coordinates of the contact point.
    bary: Vec3,
}

impl WorldContacts {
    /// Removes every contact; `scale` is the typical length the residual divides by.
    pub fn clear(&mut self, scale: f32) {
        self.ids.clear();
        self.start.clear();
        self.start.push(0);
        self.offset.clear();
        self.surface.clear();
        self.scale = scale;
        self.pairs_from = 0;
    }

    /// Adds a contact with a surface.
    fn push(&mut self, ids: &[u32], offset: f32, surface: SurfaceTerms) {
        if self.start.is_empty() {
            self.start.push(0);
        }
        // One push each: a copy call per contact costs more than its one to three ids.
        for &i in ids {
            self.ids.push(i);
        }
        self.start.push(self.ids.len() as u32);
        self.offset.push(offset);
        self.surface.push(surface);
        self.pairs_from = self.len();
    }

    /// Adds the plane contact `n · x_particle >= offset` (`n` unit length) with friction `mu`
    /// and compliance `alpha` against a surface that moves by `motion` over the substep.
    pub fn push_plane(
        &mut self,
        particle: u32,
        n: Vec3,
        offset: f32,
        mu: f32,
        motion: Vec3,
        alpha: f32,
    ) {
        let surface = SurfaceTerms {
            normal: n,
            friction: mu,
            motion,
            compliance: alpha,
            bary: Vec3::ZERO,
        };
        self.push(&[particle], offset, surface);
    }

    /// Adds the triangle contact `n · (b₀ x_a + b₁ x_b + b₂ x_c) <= offset` for this body's
    /// triangle `tri` at barycentric coordinates `bary` (`n` its outward unit normal): the
    /// triangle kept behind a fixed point of another body, rigidly.
    pub fn push_triangle(&mut self, tri: [u32; 3], bary: Vec3, n: Vec3, offset: f32) {
        let surface = SurfaceTerms {
            normal: n,
            bary,
            ..SurfaceTerms::default()
        };
        self.push(&tri, offset, surface);
    }

    /// Adds the pair contact `|x_i - x_j| >= distance` (`i != j`).
    #[inline]
    pub fn push_pair(&mut self, i: u32, j: u32, distance: f32) {
        if self.start.is_empty() {
            self.start.push(0);
        }
        self.ids.push(i);
        self.ids.push(j);
        self.start.push(self.ids.len() as u32);
        self.offset.push(distance);
        self.surface.push(SurfaceTerms::default());
    }

    /// Number of contacts with surfaces (plane and triangle contacts) and of pair contacts.
    pub fn counts(&self) -> (usize, usize) {
        let pairs = self.start.windows(2).filter(|w| w[1] - w[0] == 2).count();
        (self.len() - pairs, pairs)
    }

    /// The linear momentum times `h` (kg m) contact `c` gave this body's particles over the
    /// substep, from its multiplier `lambda` and the PBD scale `k`: every projection moved
    /// particle `j` by `k w_j Δλ ∇_j C`, so the momentum moved by `k λ Σ_j ∇_j C`
    /// (`-k λ n` for a plane contact, `k λ n Σ b_k` for a triangle contact, zero for a pair).
    #[must_use]
    pub fn pushed_momentum(&self, c: usize, lambda: f32, k: f32) -> Vec3 {
        let SurfaceTerms {
            normal: n, bary: b, ..
        } = self.surface[c];
        match self.particles(c).len() {
            1 => -n * (k * lambda),
            3 => n * (k * lambda * (b.x + b.y + b.z)),
            _ => Vec3::ZERO,
        }
    }

    /// Friction on the plane contacts that pushed during the substep: `lambda` holds the
    /// table's multipliers, `k` the PBD correction scale, `inv_h` = 1/h; moves `x` and `v` back
    /// by the friction's share of the tangential motion since `x_prev`, and tells `removed`
    /// each contact's momentum change, `-m Δx_t / h` (kg m/s), so that the surface's body can
    /// be given the opposite.
    #[allow(clippy::too_many_arguments)]
    pub fn apply_friction(
        &self,
        lambda: &[f32],
        k: f32,
        inv_h: f32,
        x: &mut [Packed4],
        x_prev: &[Packed4],
        v: &mut [Packed4],
        mut removed_momentum: impl FnMut(usize, Vec3),
    ) {
        for (c, &l) in lambda.iter().enumerate().take(self.len()) {
            let ids = self.particles(c);
            let SurfaceTerms {
                normal: n,
                friction: mu,
                motion,
                ..
            } = self.surface[c];
            if ids.len() != 1 || mu <= 0.0 {
                continue;
            }
            let i = ids[0] as usize;
            let pushed = -k * x[i].w * l;
            if pushed <= 0.0 {
                continue;
            }
            let dx = x[i].xyz() - x_prev[i].xyz() - motion;
            let Some(removed) = friction_removal(dx, n, mu, pushed) else {
                continue;
            };
            x[i].set_xyz(x[i].xyz() - removed);
            v[i].set_xyz(v[i].xyz() - removed * inv_h);
            removed_momentum(c, -removed * (inv_h / x[i].w));
        }
    }
}

/// Coulomb friction on one contact (Macklin et al. 2014, §6.1, module doc): of `dx`, the
/// particle's motion over the substep relative to the surface, the tangential part friction
/// takes off, all of it when shorter than `mu pushed` (`pushed` the normal correction) and
/// that length otherwise; `None` when the particle moved along `n` only.
#[inline]
pub(crate) fn friction_removal(dx: Vec3, n: Vec3, mu: f32, pushed: f32) -> Option<Vec3> {
    let tangential = dx - n * dx.dot(n);
    let t_len = tangential.length();
    (t_len > 0.0).then(|| tangential * (mu * pushed / t_len).min(1.0))
}

/// A pair contact whose squared distance exceeds its bound squared by this factor is
/// inactive beyond any rounding of the square root, so [`WorldContacts::project_all`] skips it
/// without the square root.
const CLEARLY_APART: f32 = 1.0 + 1e-5;

/// True when particles `i` and `j` are clearly farther apart than `bound` ([`CLEARLY_APART`]).
#[inline(always)]
fn clearly_apart(x: &[Packed4], [i, j]: [usize; 2], bound: f32) -> bool {
    // Whole registers (the same sum, (x² + y²) + z², as `Vec3`'s): one load a particle.
    let lanes = |p: Packed4| Vec3A::from_vec4(Vec4::new(p.x, p.y, p.z, p.w));
    (lanes(x[i]) - lanes(x[j])).length_squared() > bound * bound * CLEARLY_APART
}

/// The pair contact `|x_i - x_j| >= bound` projected as [`project_generic`] projects it
/// through [`WorldContacts::evaluate`], bit for bit, with the work an inactive pair needs
/// cut: one apart skips the division (and, through [`clearly_apart`] first, the square root).
#[inline(never)]
fn project_pair(
    x: &mut [Packed4],
    [i, j]: [usize; 2],
    bound: f32,
    lambda: &mut f32,
    alpha_tilde: f32,
    k: f32,
) {
    let d = x[i].xyz() - x[j].xyz();
    let len = d.length();
    let value = bound - len;
    if value <= 0.0 {
        return;
    }
    let u = if len > 0.0 { d / len } else { Vec3::ZERO };
    let (wi, wj) = (x[i].w, x[j].w);
    let mut denom = alpha_tilde;
    denom += wi * (-u).length_squared();
    denom += wj * u.length_squared();
    let Some(dl) = xpbd_delta_lambda(value, *lambda, alpha_tilde, denom) else {
        return;
    };
    *lambda += dl;
    for (p, w, g) in [(i, wi, -u), (j, wj, u)] {
        let q = &mut x[p];
        let s = k * w * dl;
        q.x += s * g.x;
        q.y += s * g.y;
        q.z += s * g.z;
    }
}

impl ConstraintKind for WorldContacts {
    fn name(&self) -> &'static str {
        "contact"
    }
    fn project_all(&self, x: &mut [Packed4], lambda: &mut [f32], inv_dt2: f32, k: f32) {
        let p0 = self.pairs_from.min(lambda.len());
        let (mixed, pairs) = lambda.split_at_mut(p0);
        let contacts = self.start.windows(2).zip(&self.offset).zip(mixed);
        for (c, ((range, &bound), l)) in contacts.enumerate() {
            let s = range[0] as usize;
            let alpha_tilde = self.surface[c].compliance * inv_dt2;
            if range[1] as usize - s == 2 {
                let (i, j) = (self.ids[s] as usize, self.ids[s + 1] as usize);
                if !clearly_apart(x, [i, j], bound) {
                    project_pair(x, [i, j], bound, l, alpha_tilde, k);
                }
            } else {
                project_generic(self, c, x, l, alpha_tilde, k);
            }
        }
        // The closing pairs without their starts: two particles each, in order (an index loop:
        // the zipped iterators kept their state on the stack).
        let ids = &self.ids[self.start.get(p0).map_or(0, |&s| s as usize)..];
        let bounds = &self.offset[p0..];
        let count = pairs.len().min(bounds.len()).min(ids.len() / 2);
        let (ids, bounds) = (&ids[..2 * count], &bounds[..count]);
        for c in 0..count {
            let (ij, bound) = ([ids[2 * c] as usize, ids[2 * c + 1] as usize], bounds[c]);
            if !clearly_apart(x, ij, bound) {
                let alpha_tilde = self.surface[p0 + c].compliance * inv_dt2;
                project_pair(x, ij, bound, &mut pairs[c], alpha_tilde, k);
            }
        }
    }
    fn len(&self) -> usize {
        self.start.len().saturating_sub(1)
    }
    fn particles(&self, c: usize) -> &[u32] {
        &self.ids[self.start[c] as usize..self.start[c + 1] as usize]
    }
    fn compliance(&self, c: usize) -> f32 {
        self.surface[c].compliance
    }
    fn evaluate(&self, c: usize, x: &[Packed4], grad: &mut [Vec3; MAX_ARITY]) -> f32 {
        let ids = self.particles(c);
        if ids.len() == 1 {
            let n = self.surface[c].normal;
            grad[0] = -n;
            return self.offset[c] - n.dot(x[ids[0] as usize].xyz());
        }
        if ids.len() == 3 {
            let SurfaceTerms {
                normal: n, bary: b, ..
            } = self.surface[c];
            grad[0] = n * b.x;
            grad[1] = n * b.y;
            grad[2] = n * b.z;
            let point = x[ids[0] as usize].xyz() * b.x
                + x[ids[1] as usize].xyz() * b.y
                + x[ids[2] as usize].xyz() * b.z;
            return n.dot(point) - self.offset[c];
        }
        let d = x[ids[0] as usize].xyz() - x[ids[1] as usize].xyz();
        let len = d.length();
        let u = if len > 0.0 { d / len } else { Vec3::ZERO };
        grad[0] = -u;
        grad[1] = u;
        self.offset[c] - len
    }
    crate::constraints::step_loop_contact_accessors!(ids);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `project_all`'s pair update, in the mixed part of the table and in its closing pairs,
    /// gives the bits `project_generic` gives on each contact in order.
    #[test]
    fn project_all_gives_the_bits_of_project_generic_on_each_contact_in_order() {
        let x: Vec<Packed4> = (0..6)
            .map(|i| {
                let p = Vec3::new(i as f32 * 0.03, (i % 2) as f32 * 0.01, 0.0);
                Packed4::new(p, if i == 0 { 0.0 } else { 1.0 })
            })
            .collect();
        let mut table = WorldContacts::default();
        table.clear(1.0);
        table.push_pair(0, 1, 0.05);
        table.push_plane(2, Vec3::Y, 0.02, 0.5, Vec3::ZERO, 1e-6);
        table.push_pair(2, 3, 0.05);
        table.push_pair(3, 4, 0.01);
        table.push_pair(4, 5, 0.05);
        let (inv_dt2, k) = (1e4, 1.0);
        let (mut xa, mut la) = (x.clone(), vec![0.0; table.len()]);
        table.project_all(&mut xa, &mut la, inv_dt2, k);
        let (mut xb, mut lb) = (x.clone(), vec![0.0; table.len()]);
        for (c, l) in lb.iter_mut().enumerate() {
            project_generic(&table, c, &mut xb, l, table.compliance(c) * inv_dt2, k);
        }
        let bits = |x: &[Packed4]| -> Vec<[u32; 3]> {
            x.iter()
                .map(|p| [p.x.to_bits(), p.y.to_bits(), p.z.to_bits()])
                .collect()
        };
        assert_eq!(bits(&xa), bits(&xb));
        let lambda_bits = |l: &[f32]| l.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        assert_eq!(lambda_bits(&la), lambda_bits(&lb));
        let pushed = [0, 1, 2, 4].map(|c| la[c] != 0.0);
        assert_eq!(
            pushed, [true; 4],
            "the close pairs and the plane act: {la:?}"
        );
        assert_eq!(la[3], 0.0, "the pair apart does not");
    }
}
