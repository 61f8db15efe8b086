//! The enumerated command-line values, as `clap::ValueEnum`s: `--help` lists the choices and a
//! typo gets clap's suggestion. Each spells its values exactly as the library parses them
//! (`name()` gives that spelling), so the harness hands the library the same strings as before
//! and the library's own types stay at the library's side of the edge.

use clap::ValueEnum;
use scenes::mass_spring::Integrator;
use sparse::{Kernel, SolverKind};
use std::fmt;

/// Declares a `ValueEnum` whose variants each carry their command-line name once, with
/// `name()` (that spelling), `ALL` (every variant in order) and `Display` (the name).
macro_rules! value_enum {
    ($(#[$m:meta])* $t:ident { $($(#[$vm:meta])* $v:ident = $name:literal,)+ }) => {
        $(#[$m])*
        #[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum $t {
            $($(#[$vm])* #[value(name = $name)] $v,)+
        }

        impl $t {
            /// Every value, in the order `--help` lists them.
            pub const ALL: &'static [$t] = &[$($t::$v,)+];

            /// The name on the command line, which the library parses too.
            pub fn name(self) -> &'static str {
                match self {
                    $($t::$v => $name,)+
                }
            }
        }

        impl fmt::Display for $t {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.name())
            }
        }
    };
}

value_enum! {
    /// A standard scene of docs/SCENES.md (one body).
    SceneArg {
        /// n x n cloth pinned at two corners (the reference scene).
        Cloth = "cloth",
        /// n vertices on a line, one end pinned.
        Rope = "rope",
        /// (2n-1) x n flag on a pole, in the wind.
        Flag = "flag",
        /// Icosphere of n subdivision levels with a volume constraint, on the ground.
        Jelly = "jelly",
        /// Cube of n x n x n cells of tetrahedra, on the ground.
        Cube = "cube",
        /// The body of `--mesh FILE` (OBJ, or TetGen .node/.ele), dropped on the ground.
        Mesh = "mesh",
    }
}

impl SceneArg {
    /// The size a run takes when `--n` is not given: the 32 x 32 reference cloth (the
    /// size of docs/SCENES.md's runs and claims), and for the other scenes a size of the same
    /// order, well inside their range: jelly's 3 subdivisions (642 vertices), cube's 4 cells
    /// per side (125 vertices). A mesh has no size parameter (0).
    pub fn default_n(self) -> usize {
        match self {
            SceneArg::Cloth | SceneArg::Rope | SceneArg::Flag => 32,
            SceneArg::Jelly => 3,
            SceneArg::Cube => 4,
            SceneArg::Mesh => 0,
        }
    }
}

value_enum! {
    /// A scene `wobble step` runs: a standard scene, or a world of several bodies.
    StepSceneArg {
        /// n x n cloth pinned at two corners (the reference scene).
        Cloth = "cloth",
        /// n vertices on a line, one end pinned.
        Rope = "rope",
        /// (2n-1) x n flag on a pole, in the wind.
        Flag = "flag",
        /// Icosphere of n subdivision levels with a volume constraint, on the ground.
        Jelly = "jelly",
        /// Cube of n x n x n cells of tetrahedra, on the ground.
        Cube = "cube",
        /// The body of `--mesh FILE` (OBJ, or TetGen .node/.ele), dropped on the ground.
        Mesh = "mesh",
        /// World: an n x n cloth dropped over a sphere, with self-collision.
        Drape = "drape",
        /// World: two fast jellies against a thin box and a thin wall.
        Tunnel = "tunnel",
        /// World: three jelly blocks falling onto each other.
        Stack = "stack",
        /// World: one body per `--mesh`, stacked and dropped.
        Bodies = "bodies",
        /// World: 64 small bodies, 32 hammocks and 32 jellies, half of them in the hammocks.
        Crowd = "crowd",
        /// World: `--layers` n x n cloths 4 mm apart dropped over a sphere that then turns
        /// (triangle contacts at 1 mm).
        Layers = "layers",
        /// World: an n x n cloth folded onto itself three times by moving pins (triangle
        /// contacts at 1 mm).
        Fold = "fold",
        /// A cape and a skirt of n x n cloth skinned to an animated character (a body proxy of
        /// capsules, a turn and a teleport in the script).
        Character = "character",
    }
}

impl StepSceneArg {
    /// The single-body scene, or `None` for a world.
    pub fn body(self) -> Option<SceneArg> {
        SceneArg::ALL
            .iter()
            .copied()
            .find(|s| s.name() == self.name())
    }

    /// The size a run takes when `--n` is not given: [`SceneArg::default_n`] for a body;
    /// docs/SCENES.md's n = 64 for `drape`; 0 for the worlds without a size parameter.
    pub fn default_n(self) -> usize {
        match (self.body(), self) {
            (Some(s), _) => s.default_n(),
            (None, StepSceneArg::Drape) => 64,
            (None, StepSceneArg::Character) => 16,
            (None, StepSceneArg::Layers | StepSceneArg::Fold) => 48,
            (None, _) => 0,
        }
    }
}

value_enum! {
    /// A solver of sparse's `SOLVER_NAMES`, in that order (the compared ones first).
    SolverArg {
        /// Sequential Gauss-Seidel in storage order (solver-core's reference).
        Gs = "gs",
        /// Graph-colored parallel Gauss-Seidel.
        Colored = "colored",
        /// Jacobi with averaged corrections.
        Jacobi = "jacobi",
        /// Chebyshev-accelerated Jacobi (Wang 2015).
        Chebyshev = "chebyshev",
        /// Gauss-Newton with Gauss-Seidel inner sweeps.
        #[value(alias = "newton-gs")]
        GaussNewtonGs = "gauss-newton-gs",
        /// Gauss-Newton with Jacobi inner sweeps.
        #[value(alias = "newton-jacobi")]
        GaussNewtonJacobi = "gauss-newton-jacobi",
        /// Gauss-Newton with a direct inner solve.
        #[value(alias = "newton-direct")]
        GaussNewtonDirect = "gauss-newton-direct",
        /// Gauss-Seidel in a random order fixed at prepare (seeded).
        GsShuffled = "gs-shuffled",
        /// Newton's method in f64 with the geometric stiffness: the converged reference
        /// (distance, tether and tetrahedron-volume constraints only).
        Newton = "newton",
    }
}

/// Every solver but the `newton` reference, comma-separated in [`SolverArg`]'s order (the
/// compared ones first): the default of every `--solvers` list, written out so that `--help`
/// shows it as it is typed.
pub const ALL_SOLVERS: &str =
    "gs,colored,jacobi,chebyshev,gauss-newton-gs,gauss-newton-jacobi,gauss-newton-direct,gs-shuffled";

impl SolverArg {
    /// The library's solver, with its default options.
    pub fn kind(self) -> SolverKind {
        use sparse::{ChebyshevOptions, ColoredOptions, InnerSolve, JacobiOptions};
        let gauss_newton = |inner| SolverKind::GaussNewton(inner, Default::default());
        match self {
            SolverArg::Gs => SolverKind::Gs,
            SolverArg::Colored => SolverKind::Colored(ColoredOptions::DEFAULT),
            SolverArg::Jacobi => SolverKind::Jacobi(JacobiOptions::DEFAULT),
            SolverArg::Chebyshev => SolverKind::Chebyshev(ChebyshevOptions::DEFAULT),
            SolverArg::GaussNewtonGs => gauss_newton(InnerSolve::GaussSeidel),
            SolverArg::GaussNewtonJacobi => gauss_newton(InnerSolve::Jacobi),
            SolverArg::GaussNewtonDirect => gauss_newton(InnerSolve::Direct),
            SolverArg::GsShuffled => SolverKind::GsShuffled { seed: 1 },
            SolverArg::Newton => SolverKind::REFERENCE,
        }
    }

    /// The names of `solvers`, as the sweeps record them.
    pub fn names(solvers: &[SolverArg]) -> Vec<String> {
        solvers.iter().map(|s| s.name().to_string()).collect()
    }
}

value_enum! {
    /// A particle ordering (renumbering for locality).
    OrderingArg {
        /// As the scene built it.
        Natural = "natural",
        /// A seeded random permutation (the worst case for caches).
        Shuffled = "shuffled",
        /// Reverse Cuthill-McKee of the particle graph.
        Rcm = "rcm",
        /// Z-order (Morton code) of the rest positions.
        Morton = "morton",
    }
}

value_enum! {
    /// `colored`'s distance kernel (one the CPU lacks is refused when the solver is built).
    KernelArg {
        /// The best kernel this CPU has.
        Auto = "auto",
        /// The scalar twin.
        Scalar = "scalar",
        /// `wide`'s 4 lanes: SSE on x86-64, NEON on aarch64.
        Portable = "portable",
        /// AVX2 + FMA.
        Avx2 = "avx2",
        /// AVX-512F.
        Avx512 = "avx512",
    }
}

impl KernelArg {
    /// The library's kernel.
    pub fn kernel(self) -> Kernel {
        match self {
            KernelArg::Auto => Kernel::Auto,
            KernelArg::Scalar => Kernel::Scalar,
            KernelArg::Portable => Kernel::Portable,
            KernelArg::Avx2 => Kernel::Avx2,
            KernelArg::Avx512 => Kernel::Avx512,
        }
    }
}

value_enum! {
    /// The physics model of `wobble step`.
    ModelArg {
        /// Constraints solved by --solver.
        Pbd = "pbd",
        /// Force-based springs on the body's edges, integrated by --integrator.
        MassSpring = "mass-spring",
    }
}

value_enum! {
    /// The mass-spring model's integrator.
    IntegratorArg {
        /// Forward (explicit) Euler.
        Explicit = "explicit",
        /// Semi-implicit (symplectic) Euler.
        SemiImplicit = "semi-implicit",
        /// Velocity Verlet.
        Verlet = "verlet",
        /// Classic fourth-order Runge-Kutta.
        Rk4 = "rk4",
    }
}

impl IntegratorArg {
    /// The library's integrator.
    pub fn integrator(self) -> Integrator {
        match self {
            IntegratorArg::Explicit => Integrator::ExplicitEuler,
            IntegratorArg::SemiImplicit => Integrator::SemiImplicitEuler,
            IntegratorArg::Verlet => Integrator::Verlet,
            IntegratorArg::Rk4 => Integrator::Rk4,
        }
    }
}

value_enum! {
    /// Where the solvers run.
    BackendArg {
        /// sparse's CPU solvers.
        Cpu = "cpu",
        /// The `gpu` crate's colored, jacobi and chebyshev on the first adapter found.
        Gpu = "gpu",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The CLI's names are the library's: a solver, kernel, integrator or ordering added or
    /// renamed there fails here rather than on a user's command line.
    #[test]
    fn values_spell_the_library_names() {
        let solvers: Vec<&str> = SolverArg::ALL.iter().map(|s| s.name()).collect();
        assert_eq!(solvers, sparse::SOLVER_NAMES);
        let kinds: Vec<SolverKind> = SolverArg::ALL.iter().map(|s| s.kind()).collect();
        let mut expected = SolverKind::ALL.to_vec();
        expected.push(SolverKind::REFERENCE);
        assert_eq!(kinds, expected);
        assert_eq!(ALL_SOLVERS, solvers[..SolverKind::ALL.len()].join(","));
        for k in KernelArg::ALL {
            assert_eq!(k.kernel().name(), k.name());
        }
        for i in IntegratorArg::ALL {
            assert_eq!(i.integrator().name(), i.name());
        }
        for o in OrderingArg::ALL {
            let parsed: sparse::Ordering = o.name().parse().unwrap();
            assert_eq!(parsed.name(), o.name());
        }
        for s in SceneArg::ALL {
            assert_eq!(
                StepSceneArg::from_str(s.name(), false).unwrap().body(),
                Some(*s)
            );
        }
    }
}
