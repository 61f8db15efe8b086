//! Gauss-Seidel in a shuffled constraint order.
//!
//! Theory: nonlinear Gauss-Seidel projects one constraint at a time with the XPBD update
//! `Δλ = (-C - α̃λ) / (Σ w |∇C|² + α̃)` (Macklin et al. 2016) on the latest positions; the
//! visiting order changes the result (and, with a random order, the cache behaviour) but not
//! the fixed point. The storage-order solver is solver-core's [`GaussSeidel`]; this one draws a
//! seeded random permutation of the global constraint ids at prepare and hands it to it.

use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_pcg::Pcg64;
use solver_core::{Constraints, GaussSeidel, Preparation, SolveState, Solver, WobbleError};

/// Sequential Gauss-Seidel over a seeded random permutation of the constraints.
#[derive(Debug, Clone)]
pub struct ShuffledGaussSeidel {
    seed: u64,
    inner: GaussSeidel,
}

impl ShuffledGaussSeidel {
    /// A solver whose order is drawn with `seed` at prepare.
    pub fn new(seed: u64) -> Self {
        ShuffledGaussSeidel {
            seed,
            inner: GaussSeidel::new(),
        }
    }

    /// The visiting order (global ids), once prepared.
    pub fn order(&self) -> Option<&[u32]> {
        self.inner.order.as_deref()
    }
}

impl Solver for ShuffledGaussSeidel {
    fn name(&self) -> &'static str {
        "gs-shuffled"
    }

    fn prepare(&mut self, constraints: &Constraints, particles: usize) -> Result<(), WobbleError> {
        if constraints.len() > u32::MAX as usize {
            return Err(WobbleError::BadCount {
                name: "constraints",
                value: constraints.len() as u64,
                max: u32::MAX as u64,
            });
        }
        // Only the constraints this solver projects: a grab's drag, which the step loop
        // projects, must not change the order of the others.
        let mut order = constraints.solver_ids();
        order.shuffle(&mut Pcg64::seed_from_u64(self.seed));
        self.inner = GaussSeidel::with_order(order);
        self.inner.prepare(constraints, particles)
    }

    fn preparation(&mut self) -> Option<&mut Preparation> {
        self.inner.preparation()
    }

    fn iterate(&mut self, state: &mut SolveState, iteration: usize) {
        self.inner.iterate(state, iteration)
    }
}
