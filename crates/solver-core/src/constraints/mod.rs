//! Constraint storage: one table per kind, each a structure of arrays.
//!
//! Every kind implements [`ConstraintKind`]: its particles (arity 1 to 4), its compliance and
//! `C(x)` with its gradient. That is all a solver needs for the generic XPBD update
//!
//! ```text
//! Δλ = (-C - α̃ λ) / (Σ_k w_k |∇_k C|² + α̃),   α̃ = α / h²,   Δx_k = w_k ∇_k C Δλ
//! ```
//!
//! (Macklin, Müller, Chentanez 2016, eq. 18). Distance constraints are also stored in a form the
//! specialised scalar and SIMD kernels read directly ([`DistanceConstraints`]).
//! Constraints are numbered globally: the distance table first, then the other tables in the
//! order they were added.

pub(crate) mod distance;

pub use distance::{project_distance_pair, project_distance_scalar, DistanceConstraints};

use crate::particles::Packed4;
use glam::Vec3;
use std::fmt::Debug;

/// The largest number of particles one constraint may involve.
pub const MAX_ARITY: usize = 4;

/// One kind of constraint, stored as a table.
pub trait ConstraintKind: Send + Sync + Debug {
    /// Short name of the kind ("distance", "bending", ...).
    fn name(&self) -> &'static str;
    /// Number of constraints in the table.
    fn len(&self) -> usize;
    /// True when the table holds no constraint.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The particles of constraint `c` (1 to [`MAX_ARITY`] of them, all distinct).
    fn particles(&self, c: usize) -> &[u32];
    /// Compliance α of constraint `c` (inverse stiffness, SI units; 0 = rigid).
    fn compliance(&self, c: usize) -> f32;
    /// `C(x)` of constraint `c`; writes `∇_k C` for each of its particles into `grad[k]`.
    fn evaluate(&self, c: usize, x: &[Packed4], grad: &mut [Vec3; MAX_ARITY]) -> f32;
    /// Typical magnitude of `C` (the mean rest length, rest volume, ...), used to normalise
    /// residuals so that kinds with different units can be summed.
    fn scale(&self) -> f32;
    /// True for inequality constraints `C(x) <= 0`, which act only while `C > 0`.
    fn unilateral(&self) -> bool {
        false
    }
    /// A boxed copy (constraint sets are cloned with their body).
    fn clone_box(&self) -> Box<dyn ConstraintKind>;
    /// Renames every particle index `p` to `new_index[p]` (a particle renumbering); the
    /// constraints keep their order.
    fn remap_particles(&mut self, new_index: &[u32]);
}

impl Clone for Box<dyn ConstraintKind> {
    fn clone(&self) -> Self {
        self.clone_box()
    }
}

/// All constraints of a body: the distance table and any other kinds.
#[derive(Clone, Debug, Default)]
pub struct Constraints {
    /// Distance constraints: global ids `0..distance.len()`.
    pub distance: DistanceConstraints,
    /// Other kinds, numbered after the distance table in this order.
    pub extra: Vec<Box<dyn ConstraintKind>>,
}

impl Constraints {
    /// Total number of constraints over all kinds.
    pub fn len(&self) -> usize {
        self.distance.len() + self.extra.iter().map(|k| k.len()).sum::<usize>()
    }

    /// True when there is no constraint at all.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every table, distance first, as trait objects.
    pub fn kinds(&self) -> impl Iterator<Item = &dyn ConstraintKind> {
        std::iter::once(&self.distance as &dyn ConstraintKind)
            .chain(self.extra.iter().map(|k| k.as_ref()))
    }

    /// The table and local index of global constraint `c`.
    pub fn locate(&self, mut c: usize) -> (&dyn ConstraintKind, usize) {
        for kind in self.kinds() {
            if c < kind.len() {
                return (kind, c);
            }
            c -= kind.len();
        }
        panic!("constraint index out of range")
    }

    /// Global id of the first constraint of each table, plus the total at the end.
    pub fn offsets(&self) -> Vec<usize> {
        let mut out = vec![0];
        for kind in self.kinds() {
            out.push(out.last().unwrap() + kind.len());
        }
        out
    }

    /// Adds a table of another kind; its constraints are numbered after all existing ones.
    pub fn push_kind(&mut self, kind: Box<dyn ConstraintKind>) {
        self.extra.push(kind);
    }

    /// The table of the given name, if any (distance included).
    pub fn kind_named(&self, name: &str) -> Option<&dyn ConstraintKind> {
        self.kinds().find(|k| k.name() == name)
    }

    /// Visits every constraint as (global id, table, local id).
    pub fn for_each(&self, mut f: impl FnMut(usize, &dyn ConstraintKind, usize)) {
        let mut g = 0;
        for kind in self.kinds() {
            for c in 0..kind.len() {
                f(g, kind, c);
                g += 1;
            }
        }
    }
}

/// The generic XPBD projection of one constraint of any kind, scalar; returns `Δλ`.
///
/// `alpha_tilde` is `α / h²` (0 in PBD mode); `k` scales the position change (the PBD
/// stiffness, 1 in XPBD mode).
#[inline]
pub fn project_generic(
    kind: &dyn ConstraintKind,
    c: usize,
    x: &mut [Packed4],
    lambda: &mut f32,
    alpha_tilde: f32,
    k: f32,
) -> f32 {
    let mut grad = [Vec3::ZERO; MAX_ARITY];
    let value = kind.evaluate(c, x, &mut grad);
    if kind.unilateral() && value <= 0.0 {
        return 0.0;
    }
    let ids = kind.particles(c);
    let mut denom = alpha_tilde;
    for (slot, &p) in ids.iter().enumerate() {
        denom += x[p as usize].w * grad[slot].length_squared();
    }
    if denom <= f32::EPSILON * 1e-6 || !denom.is_finite() {
        return 0.0;
    }
    let dl = (-value - alpha_tilde * *lambda) / denom;
    *lambda += dl;
    for (slot, &p) in ids.iter().enumerate() {
        let q = &mut x[p as usize];
        let s = k * q.w * dl;
        q.x += s * grad[slot].x;
        q.y += s * grad[slot].y;
        q.z += s * grad[slot].z;
    }
    dl
}
