//! The GPU solvers by name, and what the step loop asks of each.

use crate::device::Gpu;
use solver_core::constraints::Tethers;
use solver_core::{Constraints, WobbleError};
use sparse::SolverKind;

/// The solvers the GPU backend runs, by the names the CPU uses.
pub const GPU_SOLVER_NAMES: &[&str] = &["colored", "jacobi", "chebyshev"];

/// Which solver a [`crate::GpuBody`] runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GpuSolver {
    /// Graph-colored Gauss-Seidel, one dispatch per color.
    Colored,
    /// Jacobi: a pass over the constraints, then a gather per particle.
    Jacobi,
    /// Jacobi with Chebyshev acceleration (Wang 2015).
    Chebyshev,
}

impl GpuSolver {
    /// The solver called `name` (one of [`GPU_SOLVER_NAMES`]).
    pub fn parse(name: &str) -> std::result::Result<Self, WobbleError> {
        match name {
            "colored" => Ok(GpuSolver::Colored),
            "jacobi" => Ok(GpuSolver::Jacobi),
            "chebyshev" => Ok(GpuSolver::Chebyshev),
            other => Err(WobbleError::UnknownName {
                what: "GPU solver",
                name: other.into(),
                expected: format!("one of: {}", GPU_SOLVER_NAMES.join(", ")),
            }),
        }
    }

    /// The GPU solver that runs `kind`; the other kinds are refused ([`WobbleError::Unsupported`]).
    pub fn of(kind: &SolverKind) -> std::result::Result<Self, WobbleError> {
        match kind {
            SolverKind::Colored(_) => Ok(GpuSolver::Colored),
            SolverKind::Jacobi(_) => Ok(GpuSolver::Jacobi),
            SolverKind::Chebyshev(_) => Ok(GpuSolver::Chebyshev),
            other => Err(WobbleError::Unsupported(format!(
                "the {other} solver on the GPU (it runs {})",
                GPU_SOLVER_NAMES.join(", ")
            ))),
        }
    }

    /// The solver's name.
    pub fn name(self) -> &'static str {
        match self {
            GpuSolver::Colored => "colored",
            GpuSolver::Jacobi => "jacobi",
            GpuSolver::Chebyshev => "chebyshev",
        }
    }
}

/// The buffers every solver binds: the step's parameters and the positions.
#[derive(Debug)]
pub(crate) struct Shared {
    pub params: wgpu::Buffer,
    pub x: wgpu::Buffer,
}

/// What a solver is prepared from: the device, the shared buffers, the body's constraints and
/// particle count, and the solver with its options (one [`GpuSolver::of`] accepts).
pub(crate) struct Setup<'a> {
    pub gpu: &'a Gpu,
    pub shared: &'a Shared,
    pub constraints: &'a Constraints,
    /// [`constraint_rows`] of `constraints`.
    pub rows: &'a [[u32; 4]],
    /// The uploaded positions and inverse masses, `[x, y, z, w]` per particle.
    pub positions: &'a [[f32; 4]],
    pub particles: usize,
    pub kind: SolverKind,
}

/// What the step loop records of a solver.
pub(crate) trait Solve: std::fmt::Debug {
    /// A substep's start, outside any pass (clearing the multipliers).
    fn begin(&self, encoder: &mut wgpu::CommandEncoder);
    /// A substep's start inside the solve's pass (nothing for most).
    fn begin_in_pass(&self, _pass: &mut wgpu::ComputePass) {}
    /// One iteration.
    fn iterate(&self, pass: &mut wgpu::ComputePass);
    /// Dispatches [`Solve::iterate`] records.
    fn dispatches_per_iteration(&self) -> usize;
    /// Colors swept, for solvers that color.
    fn colors(&self) -> Option<usize> {
        None
    }
}

/// The sign bit of a record's compliance: set on unilateral constraints (tethers), which act
/// only while `C > 0`. Compliances are never negative, so the bit is free, and `abs` restores
/// the value exactly (a compliance of 0 is stored as -0.0).
pub(crate) const UNILATERAL: u32 = 0x8000_0000;

/// The pair constraints as the kernels read them, `[i, j, rest bits, compliance bits]`, in the
/// CPU's global numbering: the distance table, then each tether table of `extra` in order
/// (flagged [`UNILATERAL`]). [`unsupported_kind`] has refused every other kind.
pub(crate) fn constraint_rows(constraints: &Constraints) -> Vec<[u32; 4]> {
    let d = &constraints.distance;
    let mut rows: Vec<[u32; 4]> = (0..d.len())
        .map(|c| {
            let [i, j] = d.pairs[c];
            [i, j, d.rest[c].to_bits(), d.compliance[c].to_bits()]
        })
        .collect();
    for t in constraints
        .extra
        .iter()
        .filter_map(|k| k.as_any().downcast_ref::<Tethers>())
    {
        rows.extend((0..t.pairs.len()).map(|c| {
            let [i, a] = t.pairs[c];
            [
                i,
                a,
                t.rest[c].to_bits(),
                t.compliance[c].to_bits() | UNILATERAL,
            ]
        }));
    }
    rows
}

/// The first constraint kind of `constraints` the kernels do not project (they project
/// distance constraints and tethers, bending links being distance constraints already).
pub(crate) fn unsupported_kind(constraints: &Constraints) -> Option<&'static str> {
    constraints
        .extra
        .iter()
        .find(|k| !k.as_any().is::<Tethers>())
        .map(|k| k.name())
}
