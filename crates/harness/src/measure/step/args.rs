//! What one `wobble step` run is: its arguments, and the report it prints (which sweeps read
//! back from child processes). The runners (`body.rs`, `world.rs`) and `surfaces.rs` import
//! these; this file imports none of them.

use crate::setup::{
    BackendArg, Error, IntegratorArg, Layout, ModelArg, Passes, SolverArg, StepSceneArg, Tuning,
};
use clap::Args;
use serde::{Deserialize, Serialize};
use solver_core::mesh::repair::MeshOptions;
use sparse::{SolverKind, SolverOptions};
use std::path::PathBuf;

/// Arguments of `wobble step`.
#[derive(Args, Debug, Clone)]
pub struct StepArgs {
    /// Scene: a standard scene of docs/SCENES.md, or a world of several bodies.
    #[arg(long, value_enum, default_value_t = StepSceneArg::Cloth)]
    pub scene: StepSceneArg,
    /// Size parameter: grid side for cloth, rope, flag and drape; subdivision level for jelly;
    /// cells per side for cube; unused by mesh, tunnel, stack and bodies. Default per scene:
    /// cloth, rope and flag 32, jelly 3, cube 4, drape 64 (the others 0).
    #[arg(long)]
    pub n: Option<usize>,
    /// Solver.
    #[arg(long, value_enum, default_value_t = SolverArg::Gs)]
    pub solver: SolverArg,
    /// Solver iterations per substep, substeps per step.
    #[command(flatten)]
    pub passes: Passes,
    /// Time step in seconds.
    #[arg(long, default_value_t = 1.0 / 60.0)]
    pub dt: f32,
    /// Untimed steps before the timed ones.
    #[arg(long, default_value_t = 20)]
    pub warmup: usize,
    /// Timed steps.
    #[arg(long, default_value_t = 100)]
    pub steps: usize,
    /// Rayon threads for parallel solvers.
    #[arg(long, default_value_t = 1)]
    pub threads: usize,
    /// Whole measurements to run (each on a fresh body and solver): the report is the run with
    /// the median ns per projection, and `runs_ns_per_projection` lists every run's, in order,
    /// so that one noisy run does not make the figure.
    #[arg(long, default_value_t = 1)]
    pub repeat: usize,
    /// Relaxation factor for the Jacobi family.
    #[arg(long, default_value_t = 1.0)]
    pub omega: f32,
    /// Inner sweeps per Newton iteration.
    #[arg(long, default_value_t = 4)]
    pub inner: usize,
    /// Particle ordering, `colored`'s tile and distance kernel.
    #[command(flatten)]
    pub layout: Layout,
    /// Mesh file for the mesh scene; the `bodies` world takes one per body (repeat `--mesh`).
    #[arg(long)]
    pub mesh: Vec<PathBuf>,
    /// Refuse a mesh with any defect instead of repairing it (duplicate vertices or triangles,
    /// zero-area triangles, unused vertices, non-manifold edges).
    #[arg(long)]
    pub strict: bool,
    /// Physics model: `pbd` (constraints, solved by --solver) or `mass-spring` (force-based
    /// springs on the body's edges, integrated by --integrator; no solver, no iterations).
    #[arg(long, value_enum, default_value_t = ModelArg::Pbd)]
    pub model: ModelArg,
    /// Mass-spring integrator.
    #[arg(long, value_enum, default_value_t = IntegratorArg::SemiImplicit)]
    pub integrator: IntegratorArg,
    /// Mass-spring stiffness in N/m (structural, shear and bend springs alike); stiff springs
    /// on light particles need a small dt (`wobble claims` measures each integrator's limit).
    #[arg(long, default_value_t = 1.0)]
    pub stiffness: f32,
    /// Mass-spring damping along each spring, in N·s/m.
    #[arg(long, default_value_t = 0.0)]
    pub damping: f32,
    /// Drop the scene's bending constraints (dihedral and isometric: the flag's), to measure
    /// what they cost.
    #[arg(long)]
    pub no_bending: bool,
    /// Turn the scene's wind off (the flag's).
    #[arg(long)]
    pub no_wind: bool,
    /// Compliance α of every distance constraint, in m/N (0: rigid; default: the scene's).
    #[arg(long)]
    pub compliance: Option<f32>,
    /// Print compact JSON on one line (the default is pretty-printed).
    #[arg(long)]
    pub json: bool,
    /// Where the step runs: `cpu`, or `gpu` (the `gpu` crate's colored, jacobi and chebyshev on
    /// the first adapter found; positions read back after each timed step, untimed, for the
    /// figures).
    #[arg(long, value_enum, default_value_t = BackendArg::Cpu)]
    pub backend: BackendArg,
    // Contacts and worlds (`world.rs`).
    /// Write the final positions of every body as OBJ to FILE (one object per body).
    #[arg(long, value_name = "FILE")]
    pub dump_obj: Option<PathBuf>,
    /// Count `self_intersections` for a single-body scene too (world scenes always count it;
    /// it tests every edge against the triangles near it, which takes seconds at a million).
    #[arg(long)]
    pub intersections: bool,
    /// World scenes: turn the self-collision of `drape` and `bodies` off.
    #[arg(long)]
    pub no_self_collision: bool,
    /// The `layers` world: how many cloths.
    #[arg(long, default_value_t = 8)]
    pub layers: usize,
    /// The mesh scene: step a mesh of several parts as one body whose parts get no contacts
    /// with each other (what the scene did before parts were split), to compare.
    #[arg(long)]
    pub no_part_contacts: bool,
}

impl StepArgs {
    /// The size parameter: `--n`, or the scene's default ([`StepSceneArg::default_n`]).
    pub fn n(&self) -> usize {
        self.n.unwrap_or_else(|| self.scene.default_n())
    }
}

/// What `wobble step` prints (read back by sweeps that run `wobble step` as a child).
#[derive(Serialize, Deserialize, Debug, Clone)]
pub struct StepReport {
    /// Scene name.
    pub scene: String,
    /// Size parameter of the scene.
    pub n: usize,
    /// Particle count of the body.
    pub vertices: usize,
    /// Constraint count of the body.
    pub constraints: usize,
    /// Solver name, as the solver reports it (`mass-spring/<integrator>` for mass-spring).
    pub solver: String,
    /// Solver iterations per substep.
    pub iterations: usize,
    /// Substeps per step the step loop ran (more than asked when dt exceeded `max_substep`).
    pub substeps: usize,
    /// Time step, in s.
    pub dt: f32,
    /// Threads the solver ran on (1 for serial solvers and for mass-spring; for a world, the
    /// pool its bodies are spread over).
    pub threads: usize,
    /// Untimed steps before the timed ones.
    pub warmup: usize,
    /// Timed steps.
    pub steps: usize,
    /// Median time of one whole step over the timed steps, in ms.
    pub ms_per_step_median: f64,
    /// 10th percentile of the step time, in ms.
    pub ms_per_step_p10: f64,
    /// 90th percentile of the step time, in ms.
    pub ms_per_step_p90: f64,
    /// Median step time per constraint projection, in ns (mass-spring: per spring evaluation).
    pub ns_per_projection: f64,
    /// Mean structural stretch `|l - l0| / l0` after the last step, as a fraction.
    pub stretch_mean: f32,
    /// Largest structural stretch after the last step, as a fraction.
    pub stretch_max: f32,
    /// Mean structural stretch averaged over every step, warm-up included, as a fraction.
    pub stretch_mean_avg: f64,
    /// Kinetic plus gravitational energy of the unpinned particles after the last step, in J.
    pub energy: f64,
    /// Current over rest volume after the last step (`null` for open meshes).
    pub volume_ratio: Option<f64>,
    /// Whether every position and velocity is finite after the last step.
    pub finite: bool,
    /// FNV-1a hash of the final positions' bits, 16 hex digits (equal: bitwise-equal states).
    pub state_hash: String,
    /// Colors the solver sweeps (`null` for solvers that color none).
    pub colors: Option<usize>,
    /// Particle ordering the body was built with.
    pub ordering: String,
    /// The distance kernel the solver ran (`null` for solvers that run none).
    pub kernel: Option<String>,
    /// Bending constraints (dihedral and isometric) the body kept (0 with `--no-bending`).
    #[serde(default)]
    pub bending: usize,
    /// Whether the body had wind.
    #[serde(default)]
    pub wind: bool,
    /// The distance compliance set by `--compliance`, in m/N (`null`: the scene's own).
    #[serde(default)]
    pub distance_compliance: Option<f32>,
    /// Where the step ran: `cpu` or `gpu`.
    #[serde(default = "cpu_backend")]
    pub backend: String,
    /// The GPU adapter's name and driver (`null` on the CPU).
    #[serde(default)]
    pub adapter: Option<String>,
    /// Contacts of the last substep of the last step (shape colliders; in a world also
    /// meshes, other bodies and self-collision pairs).
    #[serde(default)]
    pub contacts: usize,
    /// Intersecting (edge, triangle) pairs of every surface with itself and the others after
    /// the last step, exactly (`solver_core::figures::self_intersections`); `null` for a
    /// single-body scene without `--intersections`.
    #[serde(default)]
    pub self_intersections: Option<u64>,
    /// Intersecting triangle pairs of every surface with itself (pairs sharing no vertex) and
    /// the others before the first step (`solver_core::figures::intersecting_triangle_pairs`);
    /// `null` for a scene other than `mesh` and the worlds without `--intersections`.
    #[serde(default)]
    pub intersecting_pairs_at_load: Option<u64>,
    /// The same after the last step.
    #[serde(default)]
    pub intersecting_pairs: Option<u64>,
    /// Bodies stepped: 1, or a world's (the parts of a mesh of several parts).
    #[serde(default)]
    pub bodies: Option<usize>,
    /// With `--repeat` above 1: every run's ns per projection, in the order run (the report's
    /// other figures are those of the median run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runs_ns_per_projection: Option<Vec<f64>>,
    /// The `character` scene's figures after the last step (`null` for the other scenes):
    /// skinned vertices beyond their max distance or inside their back stop, and vertices
    /// inside a proxy capsule, each by more than 1 mm.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skin_max_distance_violations: Option<usize>,
    /// See `skin_max_distance_violations`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skin_backstop_violations: Option<usize>,
    /// See `skin_max_distance_violations`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proxy_penetrations: Option<usize>,
    /// The `layers` and `fold` worlds: the most intersecting triangle pairs after any frame
    /// (`solver_core::figures::intersecting_triangle_pairs`, counted after every frame,
    /// warmup included, outside the timing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intersecting_pairs_max: Option<u64>,
    /// The `layers` and `fold` worlds: the least distance between two triangles that share no
    /// vertex at the start of any frame's last substep (the triangle contacts' search, m).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinnest_gap: Option<f32>,
}

/// The backend of a report that names none (written before backends existed).
fn cpu_backend() -> String {
    "cpu".into()
}

/// The mesh options `--strict` asks for.
pub fn mesh_options(args: &StepArgs) -> MeshOptions {
    MeshOptions {
        strict: args.strict,
        ..MeshOptions::default()
    }
}

/// The one `--mesh` of a single-body scene (only the `bodies` world takes several).
pub fn single_mesh(args: &StepArgs) -> Result<Option<PathBuf>, Error> {
    match &args.mesh[..] {
        [] => Ok(None),
        [one] => Ok(Some(one.clone())),
        more => Err(Error::Arg(format!(
            "--mesh given {} times; only --scene bodies takes one mesh per body",
            more.len()
        ))),
    }
}

/// The shared options of the solver `args` name (each body of a world alike).
pub fn solver_options(args: &StepArgs) -> SolverOptions {
    SolverOptions {
        threads: args.threads,
        kernel: args.layout.kernel.kernel(),
        ..Default::default()
    }
}

/// The solver `args` name with its options: `--omega`, `--inner`, `--tile` (CPU and GPU alike,
/// each body of a world alike).
pub fn solver_kind(args: &StepArgs) -> SolverKind {
    let tuning = Tuning {
        omega: args.omega,
        inner: args.inner,
        kernel: args.layout.kernel,
        ..Default::default()
    };
    args.layout.tune(tuning.tune(args.solver.kind()))
}
