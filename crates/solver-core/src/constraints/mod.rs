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

/// The [`ConstraintKind`] methods of a table named `$name` whose constraints are fixed-size
/// index arrays in the field `$indices`, with one compliance each in `compliance`: `name`,
/// `len`, `particles`, `compliance` and `particle_indices_mut`.
macro_rules! index_table_accessors {
    ($name:literal, $indices:ident) => {
        fn name(&self) -> &'static str {
            $name
        }
        fn len(&self) -> usize {
            self.$indices.len()
        }
        fn particles(&self, c: usize) -> &[u32] {
            &self.$indices[c]
        }
        fn compliance(&self, c: usize) -> f32 {
            self.compliance[c]
        }
        fn particle_indices_mut(&mut self) -> &mut [u32] {
            self.$indices.as_flattened_mut()
        }
    };
}

/// The [`ConstraintKind`] methods of a contact table the step loop projects (a world's or a
/// coupling's), whose particle indices are the field `$ids` and residual scale `scale`:
/// `scale`, `unilateral` (true), `projected_by_step_loop` (true), `particle_indices_mut`.
macro_rules! step_loop_contact_accessors {
    ($ids:ident) => {
        fn scale(&self) -> f32 {
            self.scale
        }
        fn unilateral(&self) -> bool {
            true
        }
        fn projected_by_step_loop(&self) -> bool {
            true
        }
        fn particle_indices_mut(&mut self) -> &mut [u32] {
            &mut self.$ids
        }
    };
}
pub(crate) use step_loop_contact_accessors;

pub mod bending;
pub(crate) mod distance;
pub mod drag;
pub mod material;
pub mod neohookean;
pub mod skinned;
pub mod tether;
pub mod volume;

pub use bending::{DihedralBending, IsometricBending};
pub use distance::{project_distance_pair, project_distance_scalar, DistanceConstraints};
pub use drag::{Drag, GrabId};
pub use neohookean::NeoHookean;
pub use skinned::{SkinConstraints, SkinnedVertex};
pub use tether::{project_tethers, TetherDistance, Tethers};
pub use volume::{project_tet_volumes, SurfaceVolume, TetVolume};

use crate::error::Result;
use crate::geometry::packed::Packed4;
use glam::{DMat3, DVec3, Vec3};
use std::any::Any;
use std::fmt::Debug;

/// Mean of a table's rest values (1 when empty), the scale of its constraint values.
pub(crate) fn mean_rest(rest: &[f32]) -> f32 {
    if rest.is_empty() {
        1.0
    } else {
        (rest.iter().map(|&r| r as f64).sum::<f64>() / rest.len() as f64) as f32
    }
}

/// The largest number of particles one (non-global) constraint may involve.
pub const MAX_ARITY: usize = 4;

/// Second derivatives of one constraint: `hess[a][b] = ∂²C / ∂x_a ∂x_b` over its particles.
pub type Hessian = [[DMat3; MAX_ARITY]; MAX_ARITY];

/// What every kind gets for free from `Clone`: boxed copies and downcasts (implemented for
/// every `ConstraintKind + Clone`, so no kind writes them).
pub trait KindObject {
    /// A boxed copy (constraint sets are cloned with their body).
    fn clone_box(&self) -> Box<dyn ConstraintKind>;
    /// The concrete table, for code that edits a kind it knows (drag targets, plastic rest
    /// values).
    fn as_any_mut(&mut self) -> &mut dyn Any;
    /// The concrete table to read (a body's saved state reads the drag targets).
    fn as_any(&self) -> &dyn Any;
}

impl<T: ConstraintKind + Clone + 'static> KindObject for T {
    fn clone_box(&self) -> Box<dyn ConstraintKind> {
        Box::new(self.clone())
    }
    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// One kind of constraint, stored as a table.
pub trait ConstraintKind: KindObject + Send + Sync + Debug {
    /// Short name of the kind ("distance", "bending", ...).
    fn name(&self) -> &'static str;
    /// Number of constraints in the table.
    fn len(&self) -> usize;
    /// True when the table holds no constraint.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The particles of constraint `c` (1 to [`MAX_ARITY`] of them, all distinct; any number
    /// for a global kind, see [`ConstraintKind::is_global`]).
    fn particles(&self, c: usize) -> &[u32];
    /// Compliance α of constraint `c` (inverse stiffness, SI units; 0 = rigid).
    fn compliance(&self, c: usize) -> f32;
    /// `C(x)` of constraint `c`; writes `∇_k C` for each of its particles into `grad[k]`
    /// (global kinds write no gradient: they have more particles than `grad` holds).
    fn evaluate(&self, c: usize, x: &[Packed4], grad: &mut [Vec3; MAX_ARITY]) -> f32;
    /// Typical magnitude of `C` (the mean rest length, rest volume, ...), used to normalise
    /// residuals so that kinds with different units can be summed.
    fn scale(&self) -> f32;
    /// True for inequality constraints `C(x) <= 0`, which act only while `C > 0`.
    fn unilateral(&self) -> bool {
        false
    }
    /// True when the kind has [`ConstraintKind::second_order`]: its value, gradient and
    /// Hessian in `f64`, which the Newton solver needs.
    fn has_second_order(&self) -> bool {
        false
    }
    /// `C(x)` of constraint `c` in `f64` at positions `x`, with `∇_a C` in `grad[a]` and the
    /// second derivatives `∂²C / ∂x_a ∂x_b` in `hess[a][b]` (`a`, `b` over the constraint's
    /// particles, in [`ConstraintKind::particles`] order). `None` for a kind without
    /// [`ConstraintKind::has_second_order`].
    fn second_order(
        &self,
        c: usize,
        x: &[DVec3],
        grad: &mut [DVec3; MAX_ARITY],
        hess: &mut Hessian,
    ) -> Option<f64> {
        let _ = (c, x, grad, hess);
        None
    }
    /// Every particle index the table stores, as one slice (renumbering goes through it).
    fn particle_indices_mut(&mut self) -> &mut [u32];
    /// Renumbers every particle index the table stores: `new_index[old] = new`.
    fn remap_particles(&mut self, new_index: &[u32]) {
        for p in self.particle_indices_mut() {
            *p = new_index[*p as usize];
        }
    }
    /// True for a global kind: each of its constraints couples more than [`MAX_ARITY`]
    /// particles (the volume of a closed surface). Solvers must not color or assemble it;
    /// they project it whole with [`project_generic`] (which calls
    /// [`ConstraintKind::project_global`]) once per iteration, after their own sweep.
    fn is_global(&self) -> bool {
        false
    }
    /// True for a kind the step loop projects itself, once per iteration after the solver's
    /// sweep, in storage order: the global kinds, and kinds that come and go from frame to
    /// frame (the drag of a grab), so that adding or removing one never makes a solver rebuild
    /// its colorings or patterns. Solvers skip these kinds, and the step loop zeroes their
    /// multipliers at the start of each substep.
    fn projected_by_step_loop(&self) -> bool {
        self.is_global()
    }
    /// Projects every constraint of the kind once, in storage order, `lambda` holding their
    /// multipliers: the step loop's sweep over a kind it projects itself. One call per kind
    /// through the vtable, the loop inside monomorphic, so that `evaluate` inlines; the
    /// update is [`project_generic`]'s, bit for bit.
    fn project_all(&self, x: &mut [Packed4], lambda: &mut [f32], inv_dt2: f32, k: f32) {
        for (c, l) in lambda.iter_mut().enumerate().take(self.len()) {
            project_generic(self, c, x, l, self.compliance(c) * inv_dt2, k);
        }
    }
    /// Called by the step loop at the start of each substep's solve with the fraction `t` of
    /// the frame done at the substep's end (of the step, or of a world's frame when a world
    /// or a coupling steps the body one substep at a time): a kind whose targets move over the
    /// frame (the skinned constraints) interpolates them. The default does nothing.
    fn begin_substep(&mut self, t: f32) {
        let _ = t;
    }
    /// Re-expresses the positions the table stores (targets, not particle indices) after the
    /// body frame's origin moved by `shift` (world = origin + local), each computed in `f64`
    /// and rounded once. The default stores none.
    fn move_frame(&mut self, shift: DVec3) {
        let _ = shift;
    }
    /// The XPBD projection of global constraint `c` over all its particles; returns `Δλ`.
    /// Only global kinds implement it; the default does nothing.
    fn project_global(
        &self,
        _c: usize,
        _x: &mut [Packed4],
        _lambda: &mut f32,
        _alpha_tilde: f32,
        _k: f32,
    ) -> f32 {
        0.0
    }
}

/// Checks a compliance: finite and >= 0.
pub(crate) fn check_compliance(alpha: f32) -> Result<()> {
    crate::error::check_non_negative("compliance", alpha)
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

    /// Where the first table of type `K` is in `extra`, if any.
    pub fn position_of<K: ConstraintKind + 'static>(&self) -> Option<usize> {
        self.extra.iter().position(|k| k.as_any().is::<K>())
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

    /// True when some kind is global (see [`ConstraintKind::is_global`]).
    pub fn has_global(&self) -> bool {
        self.extra.iter().any(|k| k.is_global())
    }

    /// Global ids, ascending, of the constraints a solver projects (those of kinds not
    /// [`ConstraintKind::projected_by_step_loop`]).
    pub fn solver_ids(&self) -> Vec<u32> {
        let mut ids: Vec<u32> = (0..self.distance.len() as u32).collect();
        let mut g = self.distance.len() as u32;
        for kind in &self.extra {
            let n = kind.len() as u32;
            if !kind.projected_by_step_loop() {
                ids.extend(g..g + n);
            }
            g += n;
        }
        ids
    }

    /// Number of tables (the distance table counted) a solver sees: every table up to the
    /// last one a solver projects. The tables after it are the step loop's alone (a world's or
    /// a coupling's contacts, a grab's drag), and their sizes change from substep to substep
    /// without renewing the topology, so a solver prepares nothing for them and never indexes
    /// their multipliers.
    pub fn solver_tables(&self) -> usize {
        1 + self
            .extra
            .iter()
            .rposition(|k| !k.projected_by_step_loop())
            .map_or(0, |t| t + 1)
    }

    /// Global ids `0..solver_len()` are those of the [`Constraints::solver_tables`] tables: the
    /// only ids a solver indexes (step-loop tables inside that range included, skipped).
    pub fn solver_len(&self) -> usize {
        self.distance.len()
            + self.extra[..self.solver_tables() - 1]
                .iter()
                .map(|k| k.len())
                .sum::<usize>()
    }

    /// [`Constraints::offsets`] over the [`Constraints::solver_tables`] tables only: the first
    /// global id of each, and [`Constraints::solver_len`] at the end.
    pub fn solver_offsets(&self) -> Vec<usize> {
        let mut out = self.offsets();
        out.truncate(self.solver_tables() + 1);
        out
    }

    /// A fingerprint of the numbering a solver sees: the count and lengths of the
    /// [`Constraints::solver_tables`] tables. The step loop re-prepares a solver when it
    /// changes (a step-loop table that changed size in front of a solver's table shifts the
    /// solver's global ids); the tables after them may change size freely.
    pub fn solver_layout(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        let tables = self.solver_tables();
        tables.hash(&mut h);
        for kind in self.kinds().take(tables) {
            kind.len().hash(&mut h);
        }
        h.finish()
    }

    /// True when some kind is projected by the step loop (see
    /// [`ConstraintKind::projected_by_step_loop`]).
    pub fn has_step_loop_kinds(&self) -> bool {
        self.extra.iter().any(|k| k.projected_by_step_loop())
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
/// Global kinds are projected whole through [`ConstraintKind::project_global`].
/// `alpha_tilde` is `α / h²` (0 in PBD mode); `k` scales the position change (the PBD
/// stiffness, 1 in XPBD mode). Generic over the kind, so that a concrete kind gets it without
/// dynamic dispatch, and a `&dyn ConstraintKind` through its vtable.
#[inline(always)]
pub fn project_generic<K: ConstraintKind + ?Sized>(
    kind: &K,
    c: usize,
    x: &mut [Packed4],
    lambda: &mut f32,
    alpha_tilde: f32,
    k: f32,
) -> f32 {
    if kind.is_global() {
        return kind.project_global(c, x, lambda, alpha_tilde, k);
    }
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
    let Some(dl) = xpbd_delta_lambda(value, *lambda, alpha_tilde, denom) else {
        return 0.0;
    };
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

/// Denominators at or below this are degenerate: every particle of the constraint pinned and
/// the constraint rigid, or a vanishing gradient. Such a constraint is not projected.
pub const MIN_DENOMINATOR: f32 = f32::EPSILON * 1e-6;

/// The XPBD multiplier update of one constraint (Macklin, Müller, Chentanez 2016, eq. 18),
/// `Δλ = (-C - α̃ λ) / (Σ_k w_k |∇_k C|² + α̃)`, with `denom` that denominator: the one update
/// every kind and solver applies (the SIMD kernels have their own lanes, tested against it).
/// `None` when the denominator is degenerate ([`MIN_DENOMINATOR`]) or not finite.
#[inline(always)]
pub fn xpbd_delta_lambda(value: f32, lambda: f32, alpha_tilde: f32, denom: f32) -> Option<f32> {
    (denom > MIN_DENOMINATOR && denom.is_finite()).then(|| (-value - alpha_tilde * lambda) / denom)
}

/// Gauss-Seidel over constraints `range` of one concrete local kind, without dynamic
/// dispatch: the specialised scalar path of every kind, equal to [`project_generic`] on each in
/// turn. `lambda` is indexed like the table; `inv_dt2` is `1/h²` (0 in PBD mode).
pub fn project_range<K: ConstraintKind>(
    kind: &K,
    range: std::ops::Range<usize>,
    x: &mut [Packed4],
    lambda: &mut [f32],
    inv_dt2: f32,
    k: f32,
) {
    let global = kind.is_global();
    for c in range {
        let alpha = kind.compliance(c) * inv_dt2;
        if global {
            kind.project_global(c, x, &mut lambda[c], alpha, k);
        } else {
            project_generic(kind, c, x, &mut lambda[c], alpha, k);
        }
    }
}
