//! # sparse
//!
//! The solvers wobble compares, each behind solver-core's [`Solver`] trait, on the same
//! constraints and scenes so that a difference in a plot is the solver's and nothing else's.
//!
//! - [`make_solver`] builds a solver by the name the CLI accepts ([`SOLVER_NAMES`]), from
//!   [`SolverOptions`].
//! - [`incidence`]: the constraint -> particle incidence and its transpose (CSR, `u32`).
//! - [`coloring`]: greedy and randomized (Vivace) colorings of the constraint graph.
//! - [`ordering`]: particle renumberings applied once to a body (natural, shuffled, RCM, Morton).
//! - One module per solver: [`gs`] (shuffled Gauss-Seidel; plain `gs` is solver-core's),
//!   [`colored`], [`jacobi`], [`chebyshev`], [`newton`] (`newton-gs`, `newton-jacobi`,
//!   `newton-direct`).
//! - [`Averaging`]: how the Jacobi family scales its constraints' updates.
//! - [`bodies`]: several bodies stepped at once, one body per thread of a shared [`Pool`].

pub mod bodies;
pub mod chebyshev;
pub mod colored;
pub mod coloring;
pub mod gs;
pub mod incidence;
pub mod jacobi;
pub mod newton;
pub mod ordering;
mod parallel;
mod wavefront;

pub use bodies::step_bodies;
pub use chebyshev::Chebyshev;
pub use colored::Colored;
pub use coloring::{Coloring, ColoringReport, LaneSplit};
pub use gs::ShuffledGaussSeidel;
pub use incidence::{CsrPattern, Incidence};
pub use jacobi::Jacobi;
pub use newton::{InnerSolve, Newton};
pub use ordering::{apply_ordering, Ordering};
pub use parallel::{Pool, MAX_THREADS};

pub use solver_core::simd::Kernel;
use solver_core::simd::LANES;
use solver_core::{GaussSeidel, Solver, WobbleError};

/// How the Jacobi family (`jacobi`, `chebyshev`) scales each constraint's update (see
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
    /// Macklin et al. 2014: each particle's summed correction divided by its count of active
    /// constraints and relaxed by ω, the multipliers unscaled. It converges to a different,
    /// softer equilibrium and does not conserve a free body's momentum (`wobble claims` C13 and
    /// C14 give the figures); kept to measure it.
    Particle,
}

/// How the colored solver colors the constraint graph.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColoringMethod {
    /// Greedy in storage order.
    Greedy,
    /// Vivace's randomized palette coloring, seeded with [`SolverOptions::seed`].
    Randomized,
}

/// Options shared by the solvers; each solver reads the ones that concern it.
#[derive(Clone, Debug, PartialEq)]
pub struct SolverOptions {
    /// Rayon threads for parallel solvers (`colored`, `jacobi`, `chebyshev`; 1 = serial); each
    /// such solver makes a pool of its own, unless [`SolverOptions::pool`] is given.
    pub threads: usize,
    /// A pool to run on instead of a new one (then `threads` is not read): give the solvers
    /// of several bodies one [`Pool`] so that they share its threads.
    pub pool: Option<Pool>,
    /// Relaxation factor ω: of the Jacobi step (`jacobi`, `chebyshev`, in (0, 2]) and of the
    /// inner Jacobi sweeps of `newton-jacobi`.
    pub omega: f32,
    /// Inner sweeps per outer iteration (`newton-gs`, `newton-jacobi`).
    pub inner: usize,
    /// Seed for randomized choices (`gs-shuffled`'s order, the randomized coloring).
    pub seed: u64,
    /// Constraint averaging of the Jacobi family (`jacobi`, `chebyshev`); for `newton-jacobi`,
    /// anything but `Off` scales its inner sweeps by the absolute row sums.
    pub average: Averaging,
    /// Coloring of the `colored` solver.
    pub coloring: ColoringMethod,
    /// Palette shrink factor of the randomized coloring (>= 1).
    pub palette_shrink: f32,
    /// The distance-batch kernel of the `colored` solver (`Scalar`: its scalar twin, same
    /// order; `Auto`: the best the CPU has). A kernel the CPU lacks is refused.
    pub kernel: Kernel,
    /// Work block of the parallel solvers: constraints per block for `colored` (a multiple of
    /// `LANES`), constraints and particles per block for the Jacobi family. Block boundaries
    /// never depend on the thread count.
    pub chunk: usize,
    /// Smallest color (`colored`) or constraint count (Jacobi family) worth splitting across
    /// threads.
    pub parallel_threshold: usize,
    /// `colored`: particles per tile of the tiled schedule (0: always sweep color after color
    /// over the whole body). Bodies with fewer than four tiles' worth of particles are swept
    /// whole; see [`colored`] for the schedule.
    pub tile_particles: usize,
    /// Spectral radius ρ of the Jacobi iteration for `chebyshev`, in [0, 1); `None`: estimated
    /// by a plain Jacobi probe in the first substep after prepare.
    pub rho: Option<f32>,
    /// Iterations of plain Jacobi before the Chebyshev acceleration starts (S in Wang 2015).
    pub chebyshev_delay: usize,
    /// `newton-direct`: `A + ε·diag(A)` is factored, ε this value (>= 0; see [`newton`] for
    /// why the default is `1e-6` and not smaller).
    pub regularization: f64,
}

impl Default for SolverOptions {
    fn default() -> Self {
        SolverOptions {
            threads: 1,
            pool: None,
            omega: 1.0,
            inner: 4,
            seed: 1,
            average: Averaging::Constraint,
            coloring: ColoringMethod::Greedy,
            palette_shrink: 2.0,
            kernel: Kernel::Auto,
            chunk: 1024,
            parallel_threshold: 4096,
            tile_particles: colored::DEFAULT_TILE_PARTICLES,
            rho: None,
            chebyshev_delay: chebyshev::DEFAULT_DELAY,
            regularization: 1e-6,
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

    /// Checks every option; [`make_solver`] calls it.
    pub fn validate(&self) -> Result<(), WobbleError> {
        if self.threads == 0 || self.threads > MAX_THREADS {
            return Err(WobbleError::BadCount {
                name: "threads",
                value: self.threads as u64,
                max: MAX_THREADS as u64,
            });
        }
        if !(self.omega.is_finite() && self.omega > 0.0 && self.omega <= 2.0) {
            return Err(WobbleError::BadParameter {
                name: "omega",
                value: self.omega as f64,
                reason: "must be in (0, 2]",
            });
        }
        solver_core::error::check_count("inner sweeps", self.inner, 100_000)?;
        self.kernel.resolve()?;
        if self.chunk == 0 || !self.chunk.is_multiple_of(LANES) || self.chunk > u32::MAX as usize {
            return Err(WobbleError::BadParameter {
                name: "chunk",
                value: self.chunk as f64,
                reason: "must be a positive multiple of the SIMD width (LANES = 16)",
            });
        }
        if !(self.palette_shrink.is_finite() && self.palette_shrink >= 1.0) {
            return Err(WobbleError::BadParameter {
                name: "palette_shrink",
                value: self.palette_shrink as f64,
                reason: "must be finite and >= 1",
            });
        }
        if let Some(rho) = self.rho {
            if !(rho.is_finite() && (0.0..1.0).contains(&rho)) {
                return Err(WobbleError::BadParameter {
                    name: "rho",
                    value: rho as f64,
                    reason: "spectral radius must be in [0, 1)",
                });
            }
        }
        if !(self.regularization.is_finite() && self.regularization >= 0.0) {
            return Err(WobbleError::BadParameter {
                name: "regularization",
                value: self.regularization,
                reason: "must be finite and >= 0",
            });
        }
        Ok(())
    }
}

/// The solver names [`make_solver`] accepts: the project's comparison set
/// ([`COMPARED_SOLVERS`] of them), then the variants.
pub const SOLVER_NAMES: &[&str] = &[
    "gs",
    "colored",
    "jacobi",
    "chebyshev",
    "newton-gs",
    "newton-jacobi",
    "newton-direct",
    "gs-shuffled",
];

/// How many of [`SOLVER_NAMES`], from the first, are the solvers the project compares.
pub const COMPARED_SOLVERS: usize = 7;

/// Builds the solver called `name` (one of [`SOLVER_NAMES`]).
///
/// `gs` is solver-core's sequential Gauss-Seidel in storage order; `gs-shuffled` visits the
/// constraints in a random order fixed at prepare (seeded by `opts.seed`).
pub fn make_solver(name: &str, opts: &SolverOptions) -> Result<Box<dyn Solver>, WobbleError> {
    opts.validate()?;
    match name {
        "gs" => Ok(Box::new(GaussSeidel::new())),
        "gs-shuffled" => Ok(Box::new(ShuffledGaussSeidel::new(opts.seed))),
        "colored" => Ok(Box::new(Colored::new(opts)?)),
        "jacobi" => Ok(Box::new(Jacobi::new(opts)?)),
        "chebyshev" => Ok(Box::new(Chebyshev::new(opts)?)),
        "newton-gs" => Ok(Box::new(Newton::new(InnerSolve::GaussSeidel, opts)?)),
        "newton-jacobi" => Ok(Box::new(Newton::new(InnerSolve::Jacobi, opts)?)),
        "newton-direct" => Ok(Box::new(Newton::new(InnerSolve::Direct, opts)?)),
        other => Err(WobbleError::UnknownName {
            what: "solver",
            name: other.into(),
            expected: format!("one of: {}", SOLVER_NAMES.join(", ")),
        }),
    }
}
