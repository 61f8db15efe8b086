//! The `Solver` trait, the only thing the step loop knows about solvers, and the reference
//! sequential Gauss-Seidel solver.

use crate::constraints::{project_distance_scalar, project_generic, Constraints};
use crate::error::Result;
use crate::particles::Packed4;
use std::sync::Arc;

/// What a solver works on during one substep's solve.
pub struct SolveState<'a> {
    /// Predicted positions, moved in place; `w` is the inverse mass.
    pub x: &'a mut [Packed4],
    /// Positions at the start of the substep (read only; for solvers that need them).
    pub x_prev: &'a [Packed4],
    /// The constraints.
    pub constraints: &'a Constraints,
    /// One XPBD multiplier per constraint (global numbering), zeroed before the solve (by the
    /// step loop, or by a solver whose `begin_zeroes_multipliers` says it does so itself).
    pub lambda: &'a mut [f32],
    /// `1/h²` with h the substep in XPBD mode (α̃ = α · inv_dt2); 0 in PBD mode.
    pub inv_dt2: f32,
    /// Scale on every position change: the (iteration-corrected) PBD stiffness, 1 in XPBD mode.
    pub stiffness: f32,
    /// Number of iterations this solve will run.
    pub iterations: usize,
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
/// The step loop calls [`Solver::prepare`] whenever the body's topology id differs from the one
/// the solver last prepared for, then per substep [`Solver::begin`] once and
/// [`Solver::iterate`] `iterations` times. Between two iterations the loop projects contacts
/// and, when asked, measures the residual, so a solver never pays for figures nobody reads.
pub trait Solver: Send {
    /// The name the CLI knows it by.
    fn name(&self) -> String;
    /// Builds structures that depend only on topology (colorings, CSR patterns, scratch).
    fn prepare(
        &mut self,
        constraints: &Constraints,
        particles: usize,
        topology_id: u64,
    ) -> Result<()>;
    /// The topology id of the last successful `prepare`, if any.
    fn prepared_for(&self) -> Option<u64>;
    /// Called once per substep before the first iteration.
    fn begin(&mut self, _state: &mut SolveState) {}
    /// True when [`Solver::begin`] zeroes every multiplier of `SolveState::lambda` that the
    /// solve reads before writing it, so that the step loop need not clear them all first
    /// (12 MB per substep on the 1024 x 1024 cloth). False by default.
    fn begin_zeroes_multipliers(&self) -> bool {
        false
    }
    /// Runs one iteration (`iteration` counts from 0).
    fn iterate(&mut self, state: &mut SolveState, iteration: usize);
    /// Runs all `state.iterations` iterations in one call; the step loop uses it for a substep
    /// that looks at nothing between iterations (no contacts, no residuals, no NaN-guard
    /// replay). Must leave exactly the state that [`Solver::iterate`] for each iteration in turn
    /// leaves, bit for bit (the guard's replay calls those); the default does just that.
    fn iterate_all(&mut self, state: &mut SolveState) {
        for it in 0..state.iterations {
            self.iterate(state, it);
        }
    }
    /// Number of colors, for colored solvers.
    fn colors(&self) -> Option<usize> {
        None
    }
    /// The SIMD distance-batch kernel the solver runs (`None`: it runs none).
    fn kernel(&self) -> Option<crate::simd::Kernel> {
        None
    }
    /// Number of rayon threads the solver uses (1 for serial solvers).
    fn threads(&self) -> usize {
        1
    }
    /// Where [`crate::step()`] runs a whole step: one of the solver's own threads (`None`: the
    /// caller's). Handing a parallel section to a sleeping pool from an outside thread costs a
    /// wake-up and a hand-back (15-65 µs measured on a 2-core virtual machine), from one of its
    /// own threads a fraction of a microsecond; a step has dozens of such sections.
    fn home(&self) -> Option<Arc<dyn ThreadHome>> {
        None
    }
    /// Runs `f(block)` for every block in `0..blocks`, in any order, possibly at once: the step
    /// loop lends its per-particle passes ([`crate::passes`]) to a solver's threads. Blocks
    /// are independent, so the result never depends on how they are run. Serial by default.
    fn run_blocks(&self, blocks: usize, f: &(dyn Fn(usize) + Sync)) {
        (0..blocks).for_each(f)
    }
}

/// A place to run work on a solver's threads (see [`Solver::home`]).
pub trait ThreadHome: Send + Sync {
    /// Runs `f` to completion on one of the threads, blocking the caller meanwhile.
    fn run(&self, f: &mut (dyn FnMut() + Send));
}

/// Nonlinear Gauss-Seidel over all constraints in storage order, scalar: the reference solver.
#[derive(Debug, Default, Clone)]
pub struct GaussSeidel {
    prepared: Option<u64>,
    /// Optional visiting order (a permutation of global constraint ids); storage order if `None`.
    pub order: Option<Vec<u32>>,
}

impl GaussSeidel {
    /// A solver that visits constraints in storage order.
    pub fn new() -> Self {
        Self::default()
    }

    /// A solver that visits constraints in the given order (a permutation of global ids).
    pub fn with_order(order: Vec<u32>) -> Self {
        GaussSeidel {
            prepared: None,
            order: Some(order),
        }
    }
}

impl Solver for GaussSeidel {
    fn name(&self) -> String {
        "gs".into()
    }

    fn prepare(
        &mut self,
        constraints: &Constraints,
        _particles: usize,
        topology_id: u64,
    ) -> Result<()> {
        if let Some(order) = &self.order {
            if order.len() != constraints.len() {
                return Err(crate::WobbleError::BadCount {
                    name: "Gauss-Seidel order length",
                    value: order.len() as u64,
                    max: constraints.len() as u64,
                });
            }
        }
        self.prepared = Some(topology_id);
        Ok(())
    }

    fn prepared_for(&self) -> Option<u64> {
        self.prepared
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
                    for c in 0..kind.len() {
                        let a = kind.compliance(c) * s.inv_dt2;
                        project_generic(kind.as_ref(), c, s.x, &mut s.lambda[g], a, s.stiffness);
                        g += 1;
                    }
                }
            }
            Some(order) => {
                for &g in order {
                    let g = g as usize;
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
                        let a = kind.compliance(c) * s.inv_dt2;
                        project_generic(kind, c, s.x, &mut s.lambda[g], a, s.stiffness);
                    }
                }
            }
        }
    }
}
