//! The `Solver` trait, the only thing the step loop knows about solvers, and the reference
//! sequential Gauss-Seidel solver.

use crate::constraints::{project_distance_scalar, project_generic, Constraints};
use crate::error::Result;
use crate::geometry::packed::Packed4;
use std::sync::Arc;

/// What a solver works on during one substep's solve.
pub struct SolveState<'a> {
    /// Predicted positions, moved in place; `w` is the inverse mass.
    pub x: &'a mut [Packed4],
    /// Positions at the start of the substep (read only; for solvers that need them).
    pub x_prev: &'a [Packed4],
    /// The constraints.
    pub constraints: &'a Constraints,
    /// One XPBD multiplier per constraint (global numbering), zeroed by [`Solver::begin`]
    /// before the solve reads them.
    pub lambda: &'a mut [f32],
    /// `1/h²` with h the substep in XPBD mode (α̃ = α · inv_dt2); 0 in PBD mode.
    pub inv_dt2: f32,
    /// Scale on every position change: the (iteration-corrected) PBD stiffness, 1 in XPBD mode.
    pub stiffness: f32,
    /// Number of iterations this solve will run.
    pub iterations: usize,
    /// Whether `lambda` must hold every multiplier after the last iteration. The step loop
    /// asks it on a step's last substep and whenever a checker reads the multipliers; a solver
    /// that keeps its own copy may leave `lambda` stale otherwise (an earlier substep's
    /// multipliers are overwritten unread).
    pub keep_multipliers: bool,
}

impl SolveState<'_> {
    /// α̃ of a constraint with compliance `alpha`.
    #[inline]
    pub fn alpha_tilde(&self, alpha: f32) -> f32 {
        alpha * self.inv_dt2
    }
}

/// A constraint solver: runs iterations over a body's constraints.
///
/// Per substep the step loop calls [`Solver::begin`] once and [`Solver::iterate`]
/// `iterations` times. After each iteration the step loop itself projects the kinds it owns
/// ([`project_step_loop_kinds`]: a closed surface's volume, which couples every particle and so
/// is neither colored nor assembled, and the drag of a grab, which comes and goes from frame to
/// frame), then contacts, and, when asked, measures the residual; so a solver projects only the
/// other kinds' constraints and never pays for figures nobody reads.
///
/// The step loop also owns the topology bookkeeping ([`prepare_solver`]): it calls
/// [`Solver::prepare`] when the body's topology id differs from the one recorded in the
/// solver's [`Preparation`], or before every step for a solver that keeps none (the default,
/// right for a solver whose `prepare` costs nothing). What renews the topology id: adding or
/// removing constraints of a solver's kinds, renumbering particles, tearing, plasticity's
/// rebuilt rest state. Grabbing and releasing (while the drag table is the last kind, as
/// `interaction::picking::grab` leaves it), moving a grab, pinning, attaching and moving an
/// attachment change no structure a solver builds, so they cost no re-prepare. One solver may
/// step several bodies in turn, but it re-prepares every time the body changes; give each body
/// its own solver (the parallel ones can share one thread pool).
pub trait Solver: Send {
    /// The name the CLI knows it by.
    fn name(&self) -> &'static str;
    /// Builds structures that depend only on topology (colorings, CSR patterns, scratch); the
    /// default builds nothing.
    fn prepare(&mut self, constraints: &Constraints, particles: usize) -> Result<()> {
        let _ = (constraints, particles);
        Ok(())
    }
    /// Where the step loop records the topology this solver is prepared for; `None` (the
    /// default) makes the step loop call [`Solver::prepare`] before every step.
    fn preparation(&mut self) -> Option<&mut Preparation> {
        None
    }
    /// Called once per substep before the first iteration; it owns the multipliers' start:
    /// the default zeroes them all, and a solver that overrides it must leave every multiplier
    /// it reads zero before reading it.
    fn begin(&mut self, state: &mut SolveState) {
        state.lambda.fill(0.0);
    }
    /// Runs one iteration (`iteration` counts from 0) over the non-global constraints.
    fn iterate(&mut self, state: &mut SolveState, iteration: usize);
    /// Runs all `state.iterations` iterations in one call; the step loop uses it for a substep
    /// that looks at nothing between iterations (no contacts, no residuals, no step-loop kinds,
    /// no NaN-guard replay). Must leave exactly the state that [`Solver::iterate`] for each
    /// iteration in turn leaves, bit for bit (the guard's replay calls those); the default does
    /// just that.
    fn iterate_all(&mut self, state: &mut SolveState) {
        for it in 0..state.iterations {
            self.iterate(state, it);
        }
    }
    /// Where the step loop runs a whole step and its per-particle passes: the solver's own
    /// threads, or `None` for the caller's thread.
    fn executor(&self) -> Option<Arc<dyn Executor>> {
        None
    }
    /// What the solver can say about itself (thread count, colors once prepared).
    fn report(&self) -> SolverReport {
        SolverReport::default()
    }
}

/// What a solver says about itself, for reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SolverReport {
    /// Threads the solver runs on (1 for serial solvers).
    pub threads: usize,
    /// Number of colors, for colored solvers once prepared.
    pub colors: Option<usize>,
    /// The name of the SIMD distance-batch kernel the solver runs (`None`: it runs none).
    pub kernel: Option<&'static str>,
}

impl Default for SolverReport {
    fn default() -> Self {
        SolverReport {
            threads: 1,
            colors: None,
            kernel: None,
        }
    }
}

/// A set of threads the step loop can borrow (see [`Solver::executor`]).
///
/// Handing a parallel section to a sleeping pool from an outside thread costs a wake-up and a
/// hand-back, from one of its own threads a fraction of that; a step has dozens of such
/// sections, so the step loop runs the whole step on one of the executor's threads.
pub trait Executor: Send + Sync {
    /// Runs `f` to completion on one of the threads, blocking the caller meanwhile.
    fn run_home(&self, f: &mut (dyn FnMut() + Send));
    /// Runs `f(block)` for every block in `0..blocks`, in any order, possibly at once. Blocks
    /// are independent, so the result never depends on how they are run.
    fn run_blocks(&self, blocks: usize, f: &(dyn Fn(usize) + Sync));
}

/// The caller's thread alone: what the step loop uses for a solver without an executor.
#[derive(Clone, Copy, Debug, Default)]
pub struct Serial;

impl Executor for Serial {
    fn run_home(&self, f: &mut (dyn FnMut() + Send)) {
        f()
    }
    fn run_blocks(&self, blocks: usize, f: &(dyn Fn(usize) + Sync)) {
        (0..blocks).for_each(f)
    }
}

/// The topology id, particle count and numbering ([`Constraints::solver_layout`]) a solver was last
/// prepared for, kept in the solver and read and written by the step loop alone
/// ([`prepare_solver`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Preparation(Option<(u64, usize, u64)>);

impl Preparation {
    /// Whether the solver has been prepared for some body.
    pub fn is_prepared(&self) -> bool {
        self.0.is_some()
    }
}

/// Prepares `solver` for a body's constraints unless its [`Preparation`] already records
/// `topology_id`, the particle count `particles` and the constraints'
/// [`Constraints::solver_layout`]; the record is cleared
/// while preparing, so a failed `prepare` is retried.
///
/// The layout makes a step-loop table that changes size without renewing the topology (a
/// world's or a coupling's contacts, a grab's drag) safe wherever it sits: behind the last
/// table a solver projects (where the world, the coupling and a grab put theirs) it changes
/// nothing a solver sees; in front of one it shifts that table's global ids, and the solver is
/// prepared again.
pub fn prepare_solver(
    solver: &mut dyn Solver,
    constraints: &Constraints,
    particles: usize,
    topology_id: u64,
) -> Result<()> {
    let Some(p) = solver.preparation() else {
        return solver.prepare(constraints, particles);
    };
    let key = (topology_id, particles, constraints.solver_layout());
    if p.0 == Some(key) {
        return Ok(());
    }
    p.0 = None;
    solver.prepare(constraints, particles)?;
    if let Some(p) = solver.preparation() {
        p.0 = Some(key);
    }
    Ok(())
}

/// Projects every constraint of the kinds the step loop owns
/// ([`crate::constraints::ConstraintKind::projected_by_step_loop`]) once, in order,
/// Gauss-Seidel style: the step loop calls it after every solver iteration.
pub fn project_step_loop_kinds(s: &mut SolveState) {
    let mut g = s.constraints.distance.len();
    for kind in &s.constraints.extra {
        if kind.projected_by_step_loop() {
            let lambda = &mut s.lambda[g..g + kind.len()];
            kind.project_all(s.x, lambda, s.inv_dt2, s.stiffness);
        }
        g += kind.len();
    }
}

/// Nonlinear Gauss-Seidel over all constraints in storage order, scalar: the reference solver.
#[derive(Debug, Default, Clone)]
pub struct GaussSeidel {
    prepared: Preparation,
    /// [`Constraints::solver_len`] of the prepared body: ids of `order` at or beyond it belong
    /// to step-loop tables whose sizes change without a prepare, and are skipped.
    solver_len: usize,
    /// Optional visiting order (a permutation of global constraint ids); storage order if `None`.
    pub order: Option<Vec<u32>>,
}

impl GaussSeidel {
    /// A solver that visits constraints in storage order.
    pub fn new() -> Self {
        Self::default()
    }

    /// A solver that visits constraints in the given order: a permutation of
    /// [`Constraints::solver_ids`] (the ids of kinds the step loop projects may be in it too;
    /// they are skipped).
    pub fn with_order(order: Vec<u32>) -> Self {
        GaussSeidel {
            prepared: Preparation::default(),
            solver_len: 0,
            order: Some(order),
        }
    }
}

impl Solver for GaussSeidel {
    fn name(&self) -> &'static str {
        "gs"
    }

    fn prepare(&mut self, constraints: &Constraints, _particles: usize) -> Result<()> {
        if let Some(order) = &self.order {
            let owned = constraints.solver_ids().len();
            if order.len() < owned || order.len() > constraints.len() {
                return Err(crate::WobbleError::BadCount {
                    name: "Gauss-Seidel order length",
                    value: order.len() as u64,
                    max: constraints.len() as u64,
                });
            }
        }
        self.solver_len = constraints.solver_len();
        Ok(())
    }

    fn preparation(&mut self) -> Option<&mut Preparation> {
        Some(&mut self.prepared)
    }

    fn iterate(&mut self, s: &mut SolveState, _iteration: usize) {
        let nd = s.constraints.distance.len();
        match &self.order {
            None => {
                project_distance_scalar(
                    s.x,
                    &s.constraints.distance,
                    0..nd,
                    s.lambda,
                    s.inv_dt2,
                    s.stiffness,
                );
                let mut g = nd;
                for kind in &s.constraints.extra {
                    if !kind.projected_by_step_loop() {
                        for c in 0..kind.len() {
                            let a = kind.compliance(c) * s.inv_dt2;
                            let lambda = &mut s.lambda[g + c];
                            project_generic(kind.as_ref(), c, s.x, lambda, a, s.stiffness);
                        }
                    }
                    g += kind.len();
                }
            }
            Some(order) => {
                for &g in order {
                    let g = g as usize;
                    if g >= self.solver_len {
                        continue;
                    }
                    if g < nd {
                        project_distance_scalar(
                            s.x,
                            &s.constraints.distance,
                            g..g + 1,
                            s.lambda,
                            s.inv_dt2,
                            s.stiffness,
                        );
                    } else {
                        let (kind, c) = s.constraints.locate(g);
                        if !kind.projected_by_step_loop() {
                            let a = kind.compliance(c) * s.inv_dt2;
                            project_generic(kind, c, s.x, &mut s.lambda[g], a, s.stiffness);
                        }
                    }
                }
            }
        }
    }
}

/// A boxed solver (what `sparse::SolverKind::build` returns) is a solver: `&mut boxed` goes
/// wherever a `&mut dyn Solver` does, such as [`crate::step()`].
impl<S: Solver + ?Sized> Solver for Box<S> {
    fn name(&self) -> &'static str {
        (**self).name()
    }
    fn prepare(&mut self, constraints: &Constraints, particles: usize) -> Result<()> {
        (**self).prepare(constraints, particles)
    }
    fn preparation(&mut self) -> Option<&mut Preparation> {
        (**self).preparation()
    }
    fn begin(&mut self, state: &mut SolveState) {
        (**self).begin(state)
    }
    fn iterate(&mut self, state: &mut SolveState, iteration: usize) {
        (**self).iterate(state, iteration)
    }
    fn iterate_all(&mut self, state: &mut SolveState) {
        (**self).iterate_all(state)
    }
    fn executor(&self) -> Option<Arc<dyn Executor>> {
        (**self).executor()
    }
    fn report(&self) -> SolverReport {
        (**self).report()
    }
}
