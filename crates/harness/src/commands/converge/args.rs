//! The arguments of `wobble converge`, which its CPU and GPU runners and its writers read.

use crate::setup::{BackendArg, Common, OrderingArg, SceneArg, SolverArg, ALL_SOLVERS};
use clap::Args;
use std::path::PathBuf;

/// Arguments of `wobble converge`.
#[derive(Args, Debug, Clone)]
pub struct ConvergeArgs {
    /// Scene.
    #[arg(long, value_enum, default_value_t = SceneArg::Cloth)]
    pub scene: SceneArg,
    /// Size parameter (grid side; subdivision level for jelly).
    #[arg(long, default_value_t = 23)]
    pub n: usize,
    /// Mesh file for the mesh scene.
    #[arg(long)]
    pub mesh: Option<PathBuf>,
    /// Solvers, comma-separated.
    #[arg(long, value_enum, value_delimiter = ',', default_value = ALL_SOLVERS)]
    pub solvers: Vec<SolverArg>,
    /// Iterations of the measured step.
    #[arg(long, default_value_t = 50)]
    pub iters: usize,
    /// Warm-up steps (reference Gauss-Seidel) before the common state is taken.
    #[arg(long, default_value_t = 10)]
    pub warm: usize,
    /// Repetitions of each timing (median taken).
    #[arg(long, default_value_t = 5)]
    pub reps: usize,
    /// Iteration counts for the stretch-over-a-run figure.
    #[arg(long, default_value = "1,2,4,8,16,32")]
    pub stretch_iters: String,
    /// Steps of each stretch run (from rest).
    #[arg(long, default_value_t = 120)]
    pub stretch_steps: usize,
    /// Rayon threads for parallel solvers.
    #[arg(long, default_value_t = 1)]
    pub threads: usize,
    /// Where the solvers run: `cpu`, or `gpu` (colored, jacobi and chebyshev on the first
    /// adapter; the residuals are read back after every iteration).
    #[arg(long, value_enum, default_value_t = BackendArg::Cpu)]
    pub backend: BackendArg,
    /// Particle ordering.
    #[arg(long, value_enum, default_value_t = OrderingArg::Natural)]
    pub ordering: OrderingArg,
    /// The solvers' tuning and the output directory.
    #[command(flatten)]
    pub common: Common,
}
