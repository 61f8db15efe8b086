//! # sparse
//!
//! The solvers wobble compares, each behind solver-core's [`Solver`](solver_core::Solver)
//! trait, on the same constraints and scenes so that a difference in a plot is the solver's and
//! nothing else's.
//!
//! - [`SolverKind`] chooses a solver, with the options only it reads ([`ColoredOptions`],
//!   [`JacobiOptions`], [`ChebyshevOptions`], [`GaussNewtonOptions`]); [`SolverKind::build`] makes
//!   it with the [`SolverOptions`] every solver shares. The command line's names
//!   ([`SOLVER_NAMES`]) parse into a `SolverKind` (`"colored".parse()`).
//! - [`incidence`]: the constraint -> particle incidence and its transpose (CSR, `u32`).
//! - [`coloring`]: greedy and randomized (Vivace) colorings of the constraint graph.
//! - [`ordering`]: particle renumberings applied once to a body (natural, shuffled, RCM, Morton).
//! - One module per solver: [`gs`] (shuffled Gauss-Seidel; plain `gs` is solver-core's),
//!   [`colored`] (with its data layout and SIMD batch kernels, [`colored::simd`]), [`jacobi`], [`chebyshev`], [`gauss_newton`] (`gauss-newton-gs`, `gauss-newton-jacobi`,
//!   `gauss-newton-direct`), and [`newton`], Newton's method with the geometric stiffness in
//!   `f64`: the converged reference ([`SolverKind::REFERENCE`]) the convergence claims measure
//!   against.
//! - [`Averaging`]: how the Jacobi family scales its constraints' updates.
//! - [`bodies`]: several bodies stepped at once, one body per thread of a shared [`Pool`].
//!
//! ```
//! use sparse::{ColoredOptions, JacobiOptions, SolverKind, SolverOptions};
//!
//! let colored = SolverKind::Colored(ColoredOptions::default()).build(&SolverOptions::default())?;
//! assert_eq!(colored.name(), "colored");
//! let relaxed = SolverKind::Jacobi(JacobiOptions { omega: 0.8, ..Default::default() });
//! let jacobi = relaxed.build(&SolverOptions::default())?;
//! # let _ = jacobi;
//! # Ok::<(), solver_core::WobbleError>(())
//! ```

pub mod bodies;
pub mod chebyshev;
mod cholesky;
pub mod colored;
pub mod coloring;
pub mod gauss_newton;
pub mod gs;
pub mod incidence;
pub mod jacobi;
pub mod kind;
pub mod newton;
pub mod ordering;
mod parallel;
mod wavefront;

pub use bodies::step_bodies;
pub use chebyshev::Chebyshev;
pub use colored::Colored;
pub use coloring::{Coloring, ColoringReport, LaneSplit};
pub use gauss_newton::{GaussNewton, InnerSolve};
pub use gs::ShuffledGaussSeidel;
pub use incidence::{CsrPattern, Incidence};
pub use jacobi::Jacobi;
pub use kind::{
    ChebyshevOptions, ColoredOptions, GaussNewtonOptions, JacobiOptions, SolverKind,
    SOLVER_ALIASES, SOLVER_NAMES,
};
pub use newton::{Newton, NewtonOptions, NewtonReport};
pub use ordering::{apply_ordering, Ordering};
pub use parallel::{Pool, MAX_THREADS};

pub use crate::colored::simd::Kernel;
use crate::colored::simd::LANES;
use solver_core::WobbleError;

/// How the Jacobi family (`jacobi`, `chebyshev`, and `gauss-newton-jacobi`'s inner sweeps) scales each constraint's update (see
/// [`jacobi`] for the theory).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Averaging {
    /// Every constraint's whole update, relaxed by ω (multiplier and positions alike): plain
    /// Jacobi, which diverges where the constraints are far from diagonally dominant (the cloth).
    Off,
    /// Each particle's term of a constraint's multiplier update weighted by the particle's
    /// constraint count, the positions following the multiplier: converges to the true XPBD
    /// equilibrium and conserves momentum (the default).
    Constraint,
    /// A hybrid: Macklin et al. 2014's (PBD) averaging, each particle's summed correction
    /// divided by its count of active constraints and relaxed by ω, with XPBD multipliers left
    /// unscaled. It converges to a different,
    /// softer equilibrium and does not conserve a free body's momentum (`wobble claims` C13 and
    /// C14 give the figures); kept to measure it.
    Particle,
}

/// How the colored solver colors the constraint graph.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColoringMethod {
    /// Greedy in storage order.
    Greedy,
    /// Vivace's randomized palette coloring, seeded with [`ColoredOptions::seed`].
    Randomized,
}

/// The options every solver shares: where the parallel ones run, how they split their work,
/// and the distance kernel. What concerns one solver only is in its [`SolverKind`].
#[derive(Clone, Debug, PartialEq)]
pub struct SolverOptions {
    /// Rayon threads for parallel solvers (`colored`, `jacobi`, `chebyshev`; 1 = serial); each
    /// such solver makes a pool of its own, unless [`SolverOptions::pool`] is given.
    pub threads: usize,
    /// A pool to run on instead of a new one (then `threads` is not read): give the solvers
    /// of several bodies one [`Pool`] so that they share its threads.
    pub pool: Option<Pool>,
    /// The distance-batch kernel (`colored`'s; `Scalar`: its scalar twin, same order; `Auto`:
    /// the best the CPU has). A kernel the CPU lacks is refused.
    pub kernel: Kernel,
    /// Work block of the parallel solvers: constraints per block for `colored` (a multiple of
    /// `LANES`), constraints and particles per block for the Jacobi family. Block boundaries
    /// never depend on the thread count, so neither do the results.
    pub chunk: usize,
    /// Smallest color (`colored`) or constraint count (Jacobi family) worth splitting across
    /// threads.
    pub parallel_threshold: usize,
}

impl Default for SolverOptions {
    fn default() -> Self {
        SolverOptions {
            threads: 1,
            pool: None,
            kernel: Kernel::Auto,
            chunk: 1024,
            parallel_threshold: 4096,
        }
    }
}

/// Whether this build has threads (the `parallel` feature).
pub const PARALLEL: bool = cfg!(feature = "parallel");

/// The thread counts of `wanted` that this build can run: all of them with the `parallel`
/// feature, else only the counts of 1 (tests loop over it, and say what they skipped).
pub fn thread_counts(wanted: &[usize]) -> Vec<usize> {
    let runnable: Vec<usize> = wanted
        .iter()
        .copied()
        .filter(|&t| PARALLEL || t == 1)
        .collect();
    if runnable.len() < wanted.len() {
        eprintln!("skipped thread counts above 1: built without the `parallel` feature");
    }
    runnable
}

impl SolverOptions {
    /// The pool a parallel solver runs on: a handle to [`SolverOptions::pool`], or a new pool
    /// of `threads` threads.
    pub fn make_pool(&self) -> Result<Pool, WobbleError> {
        match &self.pool {
            Some(pool) => Ok(pool.clone()),
            None => Pool::new(self.threads),
        }
    }

    /// Checks the options; [`SolverKind::build`] calls it.
    pub fn validate(&self) -> Result<(), WobbleError> {
        if self.threads == 0 || self.threads > MAX_THREADS {
            return Err(WobbleError::BadCount {
                name: "threads",
                value: self.threads as u64,
                max: MAX_THREADS as u64,
            });
        }
        self.kernel.resolve()?;
        if self.chunk == 0 || !self.chunk.is_multiple_of(LANES) || self.chunk > u32::MAX as usize {
            return Err(WobbleError::BadParameter {
                name: "chunk",
                value: self.chunk as f64,
                reason: "must be a positive multiple of the SIMD width (LANES = 16)",
            });
        }
        Ok(())
    }
}
