//! # sparse
//!
//! The solvers wobble compares, each behind solver-core's [`Solver`] trait, on the same
//! constraints and scenes so that a difference in a plot is the solver's and nothing else's.
//!
//! - [`make_solver`] builds a solver by the name the CLI accepts, from [`SolverOptions`].
//! - [`ordering`]: particle renumberings applied once to a body (natural, shuffled, RCM, Morton).

pub mod ordering;

pub use ordering::{apply_ordering, Ordering};

use solver_core::{GaussSeidel, Solver, WobbleError};

/// Options shared by the solvers; each solver reads the ones that concern it.
#[derive(Clone, Debug, PartialEq)]
pub struct SolverOptions {
    /// Rayon threads for parallel solvers (1 = serial).
    pub threads: usize,
    /// Relaxation factor ω (Jacobi family).
    pub omega: f32,
    /// Inner sweeps per outer iteration (newton-gs, newton-jacobi).
    pub inner: usize,
    /// Seed for randomized choices (shuffled orders, randomized coloring).
    pub seed: u64,
}

impl Default for SolverOptions {
    fn default() -> Self {
        SolverOptions {
            threads: 1,
            omega: 1.0,
            inner: 4,
            seed: 1,
        }
    }
}

/// The solver names [`make_solver`] accepts.
pub const SOLVER_NAMES: &[&str] = &["gs"];

/// Builds the solver called `name`.
pub fn make_solver(name: &str, opts: &SolverOptions) -> Result<Box<dyn Solver>, WobbleError> {
    let _ = opts;
    match name {
        "gs" => Ok(Box::new(GaussSeidel::new())),
        other => Err(WobbleError::Unsupported(format!(
            "unknown solver '{other}'; expected one of: {}",
            SOLVER_NAMES.join(", ")
        ))),
    }
}
