//! Solvers chosen by type: [`SolverKind`] names a solver together with the options only it
//! reads; [`SolverKind::build`] makes it with the options every solver shares
//! ([`SolverOptions`]). Names ([`SolverKind::name`], [`FromStr`]) are for the command line and
//! for tests that loop over every solver.

use crate::{chebyshev, colored, Averaging, ColoringMethod, SolverOptions};
use crate::{
    Chebyshev, Colored, GaussNewton, InnerSolve, Jacobi, Newton, NewtonOptions, ShuffledGaussSeidel,
};
use solver_core::error::check_count;
use solver_core::{GaussSeidel, Solver, WobbleError};
use std::str::FromStr;

/// Options of the `colored` solver.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ColoredOptions {
    /// How the constraint graph is colored.
    pub coloring: ColoringMethod,
    /// Seed of the randomized coloring.
    pub seed: u64,
    /// Palette shrink factor of the randomized coloring (>= 1).
    pub palette_shrink: f32,
    /// Particles per tile of the tiled schedule (0: always sweep color after color over the
    /// whole body). Bodies with fewer than four tiles' worth of particles are swept whole; see
    /// [`colored`] for the schedule.
    pub tile_particles: usize,
}

impl ColoredOptions {
    /// The defaults: greedy coloring, tiles of [`colored::DEFAULT_TILE_PARTICLES`].
    pub const DEFAULT: ColoredOptions = ColoredOptions {
        coloring: ColoringMethod::Greedy,
        seed: 1,
        palette_shrink: 2.0,
        tile_particles: colored::DEFAULT_TILE_PARTICLES,
    };

    /// Checks the options.
    pub fn validate(&self) -> Result<(), WobbleError> {
        if !(self.palette_shrink.is_finite() && self.palette_shrink >= 1.0) {
            return Err(WobbleError::BadParameter {
                name: "palette_shrink",
                value: self.palette_shrink as f64,
                reason: "must be finite and >= 1",
            });
        }
        Ok(())
    }
}

impl Default for ColoredOptions {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// Options of the `jacobi` solver (and of `chebyshev`'s Jacobi steps).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct JacobiOptions {
    /// Relaxation factor ω of the Jacobi step, in (0, 2].
    pub omega: f32,
    /// How each constraint's update is scaled.
    pub average: Averaging,
}

impl JacobiOptions {
    /// The defaults: ω = 1, constraint averaging.
    pub const DEFAULT: JacobiOptions = JacobiOptions {
        omega: 1.0,
        average: Averaging::Constraint,
    };

    /// Checks the options.
    pub fn validate(&self) -> Result<(), WobbleError> {
        check_omega(self.omega)
    }
}

impl Default for JacobiOptions {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// Options of the `chebyshev` solver.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ChebyshevOptions {
    /// The Jacobi step it accelerates.
    pub jacobi: JacobiOptions,
    /// Spectral radius ρ of the Jacobi iteration, in [0, 1); `None`: estimated by a plain
    /// Jacobi probe in the first substep after prepare.
    pub rho: Option<f32>,
    /// Iterations of plain Jacobi before the acceleration starts (S in Wang 2015).
    pub delay: usize,
}

impl ChebyshevOptions {
    /// The defaults: Jacobi's, ρ estimated, [`chebyshev::DEFAULT_DELAY`].
    pub const DEFAULT: ChebyshevOptions = ChebyshevOptions {
        jacobi: JacobiOptions::DEFAULT,
        rho: None,
        delay: chebyshev::DEFAULT_DELAY,
    };

    /// Checks the options.
    pub fn validate(&self) -> Result<(), WobbleError> {
        self.jacobi.validate()?;
        if let Some(rho) = self.rho {
            if !(rho.is_finite() && (0.0..1.0).contains(&rho)) {
                return Err(WobbleError::BadParameter {
                    name: "rho",
                    value: rho as f64,
                    reason: "spectral radius must be in [0, 1)",
                });
            }
        }
        Ok(())
    }
}

impl Default for ChebyshevOptions {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// Options of the Gauss-Newton solvers (`gauss-newton-gs`, `gauss-newton-jacobi`, `gauss-newton-direct`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GaussNewtonOptions {
    /// Inner sweeps per outer iteration (`gauss-newton-gs`, `gauss-newton-jacobi`).
    pub sweeps: usize,
    /// Relaxation factor ω of the inner Jacobi sweeps (`gauss-newton-jacobi`), in (0, 2].
    pub omega: f32,
    /// `gauss-newton-jacobi`: anything but [`Averaging::Off`] scales the inner sweeps by the absolute
    /// row sums.
    pub average: Averaging,
    /// `gauss-newton-direct`: `A + ε·diag(A)` is factored, ε this value (>= 0; see
    /// [`crate::gauss_newton`] for why the default is `1e-6` and not smaller).
    pub regularization: f64,
}

impl GaussNewtonOptions {
    /// The defaults: 4 sweeps, ω = 1, row sums, ε = 1e-6.
    pub const DEFAULT: GaussNewtonOptions = GaussNewtonOptions {
        sweeps: 4,
        omega: 1.0,
        average: Averaging::Constraint,
        regularization: 1e-6,
    };

    /// Checks the options.
    pub fn validate(&self) -> Result<(), WobbleError> {
        check_omega(self.omega)?;
        check_count("inner sweeps", self.sweeps, 100_000)?;
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

impl Default for GaussNewtonOptions {
    fn default() -> Self {
        Self::DEFAULT
    }
}

fn check_omega(omega: f32) -> Result<(), WobbleError> {
    if !(omega.is_finite() && omega > 0.0 && omega <= 2.0) {
        return Err(WobbleError::BadParameter {
            name: "omega",
            value: omega as f64,
            reason: "must be in (0, 2]",
        });
    }
    Ok(())
}

/// A solver and the options only it reads.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum SolverKind {
    /// `gs`: solver-core's sequential Gauss-Seidel in storage order.
    Gs,
    /// `gs-shuffled`: Gauss-Seidel in a random order drawn with `seed` at prepare.
    GsShuffled {
        /// Seed of the order.
        seed: u64,
    },
    /// `colored`: graph-colored parallel Gauss-Seidel.
    Colored(ColoredOptions),
    /// `jacobi`: parallel Jacobi.
    Jacobi(JacobiOptions),
    /// `chebyshev`: Chebyshev-accelerated Jacobi (Wang 2015).
    Chebyshev(ChebyshevOptions),
    /// `gauss-newton-gs`, `gauss-newton-jacobi`, `gauss-newton-direct`: Gauss-Newton on the global system, its linear
    /// system solved by the inner solve.
    GaussNewton(InnerSolve, GaussNewtonOptions),
    /// `newton`: Newton's method on the XPBD step in `f64`, with the geometric stiffness: the
    /// converged reference, not a solver to ship (it refuses bending and Neo-Hookean kinds).
    Newton(NewtonOptions),
}

impl SolverKind {
    /// Every solver with its default options, in [`SOLVER_NAMES`]' order: the ones the project
    /// compares ([`SolverKind::COMPARED`]), then the variants.
    pub const ALL: [SolverKind; 8] = [
        SolverKind::Gs,
        SolverKind::Colored(ColoredOptions::DEFAULT),
        SolverKind::Jacobi(JacobiOptions::DEFAULT),
        SolverKind::Chebyshev(ChebyshevOptions::DEFAULT),
        SolverKind::GaussNewton(InnerSolve::GaussSeidel, GaussNewtonOptions::DEFAULT),
        SolverKind::GaussNewton(InnerSolve::Jacobi, GaussNewtonOptions::DEFAULT),
        SolverKind::GaussNewton(InnerSolve::Direct, GaussNewtonOptions::DEFAULT),
        SolverKind::GsShuffled { seed: 1 },
    ];

    /// The converged reference: Newton with its default options. Not in [`SolverKind::ALL`]
    /// (the loops over every solver run scenes it refuses); [`SOLVER_NAMES`] lists it last.
    pub const REFERENCE: SolverKind = SolverKind::Newton(NewtonOptions::DEFAULT);

    /// The solvers the project compares: the first of [`SolverKind::ALL`].
    pub const COMPARED: &'static [SolverKind] = Self::ALL.split_at(7).0;

    /// The solver's name on the command line (one of [`SOLVER_NAMES`]).
    pub const fn name(&self) -> &'static str {
        match self {
            SolverKind::Gs => "gs",
            SolverKind::GsShuffled { .. } => "gs-shuffled",
            SolverKind::Colored(_) => "colored",
            SolverKind::Jacobi(_) => "jacobi",
            SolverKind::Chebyshev(_) => "chebyshev",
            SolverKind::GaussNewton(InnerSolve::GaussSeidel, _) => "gauss-newton-gs",
            SolverKind::GaussNewton(InnerSolve::Jacobi, _) => "gauss-newton-jacobi",
            SolverKind::GaussNewton(InnerSolve::Direct, _) => "gauss-newton-direct",
            SolverKind::Newton(_) => "newton",
        }
    }

    /// Checks the solver's own options.
    pub fn validate(&self) -> Result<(), WobbleError> {
        match self {
            SolverKind::Gs | SolverKind::GsShuffled { .. } => Ok(()),
            SolverKind::Colored(o) => o.validate(),
            SolverKind::Jacobi(o) => o.validate(),
            SolverKind::Chebyshev(o) => o.validate(),
            SolverKind::GaussNewton(_, o) => o.validate(),
            SolverKind::Newton(o) => o.validate(),
        }
    }

    /// Builds the solver; `opts` are the options every solver shares. Both are checked first.
    pub fn build(&self, opts: &SolverOptions) -> Result<Box<dyn Solver>, WobbleError> {
        opts.validate()?;
        self.validate()?;
        Ok(match *self {
            SolverKind::Gs => Box::new(GaussSeidel::new()),
            SolverKind::GsShuffled { seed } => Box::new(ShuffledGaussSeidel::new(seed)),
            SolverKind::Colored(o) => Box::new(Colored::new(opts, o)?),
            SolverKind::Jacobi(o) => Box::new(Jacobi::new(opts, o)?),
            SolverKind::Chebyshev(o) => Box::new(Chebyshev::new(opts, o)?),
            SolverKind::GaussNewton(inner, o) => Box::new(GaussNewton::new(inner, o)?),
            SolverKind::Newton(o) => Box::new(Newton::new(o)?),
        })
    }
}

/// Old solver names [`FromStr`] still accepts, each with the name it stands for: the
/// Gauss-Newton solvers were called `newton-*` before the true Newton solver came.
pub const SOLVER_ALIASES: &[(&str, &str)] = &[
    ("newton-gs", "gauss-newton-gs"),
    ("newton-jacobi", "gauss-newton-jacobi"),
    ("newton-direct", "gauss-newton-direct"),
];

/// The solver names [`SolverKind`]'s [`FromStr`] accepts: [`SolverKind::ALL`]'s order, then
/// [`SolverKind::REFERENCE`]'s.
pub const SOLVER_NAMES: &[&str] = &NAMES;

const NAMES: [&str; SolverKind::ALL.len() + 1] = {
    let mut names = [""; SolverKind::ALL.len() + 1];
    let mut i = 0;
    while i < SolverKind::ALL.len() {
        names[i] = SolverKind::ALL[i].name();
        i += 1;
    }
    names[i] = SolverKind::REFERENCE.name();
    names
};

impl FromStr for SolverKind {
    type Err = WobbleError;

    /// The solver called `name` (one of [`SOLVER_NAMES`]), with its default options.
    /// The old names of [`SOLVER_ALIASES`] parse too.
    fn from_str(name: &str) -> Result<Self, WobbleError> {
        let name = SOLVER_ALIASES
            .iter()
            .find(|(old, _)| *old == name)
            .map_or(name, |(_, new)| new);
        SolverKind::ALL
            .into_iter()
            .chain(std::iter::once(SolverKind::REFERENCE))
            .find(|k| k.name() == name)
            .ok_or_else(|| WobbleError::UnknownName {
                what: "solver",
                name: name.into(),
                expected: format!("one of: {}", SOLVER_NAMES.join(", ")),
            })
    }
}

impl std::fmt::Display for SolverKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
