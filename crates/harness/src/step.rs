//! `wobble step`: runs warmup + steps steps of one scene from rest, times the last `steps`
//! (each step timed whole) and prints one JSON object.

use crate::setup::{build_body_with, build_solver, Error, Layout, Passes};
use crate::stats::quantile;
use clap::Args;
use scenes::mass_spring::{Integrator, MassSpring, SpringParams};
use serde::{Deserialize, Serialize};
use solver_core::mesh::repair::MeshOptions;
use solver_core::{figures, step, Solver, StepParams};
use sparse::SolverOptions;
use std::path::PathBuf;
use std::time::Instant;

/// Arguments of `wobble step`.
#[derive(Args, Debug, Clone)]
pub struct StepArgs {
    /// Scene: cloth, rope, flag, jelly, cube or mesh; or the worlds drape, tunnel, stack and bodies.
    #[arg(long, default_value = "cloth")]
    pub scene: String,
    /// Size parameter (grid side; subdivision level for jelly; cells per side for cube).
    #[arg(long, default_value_t = 32)]
    pub n: usize,
    /// Solver name.
    #[arg(long, default_value = "gs")]
    pub solver: String,
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
    #[arg(long, default_value = "pbd")]
    pub model: String,
    /// Mass-spring integrator: explicit, semi-implicit, verlet or rk4.
    #[arg(long, default_value = "semi-implicit")]
    pub integrator: String,
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
    #[arg(long, default_value = "cpu")]
    pub backend: String,
    // Contacts and worlds (`crate::world_step`).
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
    /// Threads the solver ran on (1 for serial solvers and for mass-spring).
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
    /// With `--repeat` above 1: every run's ns per projection, in the order run (the report's
    /// other figures are those of the median run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runs_ns_per_projection: Option<Vec<f64>>,
}

/// The backend of a report that names none (written before backends existed).
fn cpu_backend() -> String {
    "cpu".into()
}

/// What a run contributes to its report beyond the body and the times.
struct RunFacts {
    name: String,
    threads: usize,
    colors: Option<usize>,
    /// Projections per substep (constraints x iterations; springs for mass-spring).
    per_substep: usize,
    kernel: Option<String>,
    adapter: Option<String>,
}

/// Step times and the stretch summed over every step.
struct Timed {
    times: Vec<f64>,
    stretch_sum: f64,
}

impl Timed {
    /// Runs `step` warmup + steps times, timing each call whole, and `after` (untimed) after
    /// each, whose result is the stretch figure of that step.
    fn run(
        args: &StepArgs,
        mut step: impl FnMut() -> Result<(), Error>,
        mut after: impl FnMut() -> Result<f32, Error>,
    ) -> Result<Self, Error> {
        let mut times = Vec::with_capacity(args.steps);
        let mut stretch_sum = 0.0f64;
        for s in 0..args.warmup + args.steps {
            let t0 = Instant::now();
            step()?;
            let elapsed = t0.elapsed().as_secs_f64() * 1e3;
            if s >= args.warmup {
                times.push(elapsed);
            }
            stretch_sum += after()? as f64;
        }
        Ok(Timed { times, stretch_sum })
    }
}

/// What advances the body: a PBD solver, or the force-based mass-spring model.
// One value per run, so its size costs nothing; a box would add an indirection in the timed step.
#[allow(clippy::large_enum_variant)]
enum Model {
    Pbd(Box<dyn Solver>),
    MassSpring(MassSpring),
}

/// The mesh options `--strict` asks for.
pub(crate) fn mesh_options(args: &StepArgs) -> MeshOptions {
    MeshOptions {
        strict: args.strict,
        ..MeshOptions::default()
    }
}

/// The one `--mesh` of a single-body scene (only the `bodies` world takes several).
fn single_mesh(args: &StepArgs) -> Result<Option<PathBuf>, Error> {
    match &args.mesh[..] {
        [] => Ok(None),
        [one] => Ok(Some(one.clone())),
        more => Err(Error::Arg(format!(
            "--mesh given {} times; only --scene bodies takes one mesh per body",
            more.len()
        ))),
    }
}

/// Runs the scene and returns the report (also used by the sweeps).
pub fn measure(args: &StepArgs) -> Result<StepReport, Error> {
    if args.steps == 0 {
        return Err(Error::Arg("--steps must be at least 1".into()));
    }
    if crate::world_step::WORLD_SCENES.contains(&args.scene.as_str()) {
        if args.backend != "cpu" {
            return Err(Error::Arg(format!(
                "the world scene {} runs on the CPU only (--backend cpu)",
                args.scene
            )));
        }
        return crate::world_step::measure_world(args);
    }
    let (mut body, ordering) = build_body_with(
        &args.scene,
        args.n,
        single_mesh(args)?,
        &args.layout.ordering,
        &mesh_options(args),
    )?;
    apply_switches(&mut body, args)?;
    let params = StepParams {
        dt: args.dt,
        substeps: args.passes.substeps,
        iterations: args.passes.iterations,
        ..Default::default()
    };
    params.validate()?;
    // What the step loop runs: a frame longer than `max_substep` is split into more substeps,
    // and the projections (and the mass-spring model's substeps) count those.
    let substeps = params.planned()?.substeps;
    match args.backend.as_str() {
        "cpu" => {}
        #[cfg(feature = "gpu")]
        "gpu" => return measure_gpu(args, body, ordering, params, substeps),
        #[cfg(not(feature = "gpu"))]
        "gpu" => {
            return Err(Error::Arg(
                "--backend gpu: this wobble was built without the `gpu` feature".into(),
            ))
        }
        other => {
            return Err(Error::Arg(format!(
                "unknown --backend '{other}'; expected cpu or gpu"
            )))
        }
    }
    let mut model = match args.model.as_str() {
        "pbd" => Model::Pbd(build_solver(&args.solver, &solver_options(args))?),
        "mass-spring" => {
            let integrator: Integrator = args.integrator.parse()?;
            let springs = SpringParams::uniform(args.stiffness, args.damping);
            Model::MassSpring(MassSpring::from_body(&body, springs, integrator)?)
        }
        other => {
            return Err(Error::Arg(format!(
                "unknown --model '{other}'; expected pbd or mass-spring"
            )))
        }
    };
    let timed = {
        let body = std::cell::RefCell::new(&mut body);
        let model = &mut model;
        Timed::run(
            args,
            || {
                let mut body = body.borrow_mut();
                match model {
                    Model::Pbd(solver) => {
                        step(&mut body, &params, solver.as_mut(), None)?;
                    }
                    Model::MassSpring(ms) => {
                        let h = params.dt / substeps as f32;
                        for _ in 0..substeps {
                            ms.step(&mut body, h, params.gravity)?;
                        }
                    }
                }
                Ok(())
            },
            || Ok(figures::stretch(&body.borrow()).0),
        )?
    };
    // A mass-spring step evaluates each spring once per substep: its "projections".
    let facts = match &model {
        Model::Pbd(solver) => RunFacts {
            name: solver.name(),
            threads: solver.report().threads,
            colors: solver.report().colors,
            per_substep: body.constraints.len() * args.passes.iterations,
            kernel: solver.report().kernel.map(|k| k.name().to_string()),
            adapter: None,
        },
        Model::MassSpring(ms) => RunFacts {
            name: format!("mass-spring/{}", args.integrator),
            threads: 1,
            colors: None,
            per_substep: ms.pairs.len(),
            kernel: None,
            adapter: None,
        },
    };
    report(args, &body, ordering, params, substeps, &timed, facts)
}

/// The report of a run of `args` on `body` that ended in its last state.
fn report(
    args: &StepArgs,
    body: &solver_core::Body,
    ordering: sparse::Ordering,
    params: StepParams,
    substeps: usize,
    timed: &Timed,
    facts: RunFacts,
) -> Result<StepReport, Error> {
    let (stretch_mean, stretch_max) = figures::stretch(body);
    let median = quantile(&timed.times, 0.5);
    let projections = (facts.per_substep * substeps).max(1) as f64;
    let bending = body
        .constraints
        .extra
        .iter()
        .filter(|k| BENDING_KINDS.contains(&k.name()))
        .map(|k| k.len())
        .sum();
    let surfaces = [(&body.topology.triangles[..], &body.particles.x[..])];
    let self_intersections = crate::world_step::intersections(args, &surfaces)?;
    if let Some(path) = &args.dump_obj {
        crate::world_step::dump_obj(path, &[body])?;
    }
    Ok(StepReport {
        contacts: body.scratch.contacts.len(),
        self_intersections,
        runs_ns_per_projection: None,
        scene: args.scene.clone(),
        n: args.n,
        vertices: body.len(),
        constraints: body.constraints.len(),
        solver: facts.name,
        iterations: args.passes.iterations,
        substeps,
        dt: args.dt,
        threads: facts.threads,
        warmup: args.warmup,
        steps: args.steps,
        ms_per_step_median: median,
        ms_per_step_p10: quantile(&timed.times, 0.1),
        ms_per_step_p90: quantile(&timed.times, 0.9),
        ns_per_projection: median * 1e6 / projections,
        stretch_mean,
        stretch_max,
        stretch_mean_avg: timed.stretch_sum / (args.warmup + args.steps) as f64,
        energy: figures::energy(body, params.gravity),
        volume_ratio: figures::volume_ratio(body),
        finite: figures::all_finite(body),
        state_hash: format!("{:016x}", figures::state_hash(&body.particles.x)),
        colors: facts.colors,
        ordering: ordering.name().to_string(),
        kernel: facts.kernel,
        bending,
        wind: body.wind.is_some(),
        distance_compliance: args.compliance,
        backend: args.backend.clone(),
        adapter: facts.adapter,
    })
}

/// The options of the solver `args` name (CPU and GPU alike, each body of a world alike).
pub(crate) fn solver_options(args: &StepArgs) -> SolverOptions {
    SolverOptions {
        threads: args.threads,
        omega: args.omega,
        inner: args.inner,
        tile_particles: args.layout.tile,
        kernel: args.layout.kernel,
        ..Default::default()
    }
}

/// `wobble step --backend gpu`: the body on the GPU, each step submitted and waited for
/// (timed), then read back untimed for the stretch figure.
#[cfg(feature = "gpu")]
fn measure_gpu(
    args: &StepArgs,
    mut body: solver_core::Body,
    ordering: sparse::Ordering,
    params: StepParams,
    substeps: usize,
) -> Result<StepReport, Error> {
    if args.model != "pbd" {
        return Err(Error::Arg("--backend gpu runs the pbd model only".into()));
    }
    let solver = gpu::GpuSolver::parse(&args.solver)?;
    let device = gpu::Gpu::new().map_err(gpu_error)?;
    let mut on_gpu =
        gpu::GpuBody::new(&device, &body, solver, &solver_options(args)).map_err(gpu_error)?;
    let timed = {
        let body = std::cell::RefCell::new(&mut body);
        let on_gpu = &mut on_gpu;
        let on_gpu = std::cell::RefCell::new(on_gpu);
        Timed::run(
            args,
            || {
                let mut g = on_gpu.borrow_mut();
                g.step(&params).map_err(gpu_error)?;
                g.finish().map_err(gpu_error)
            },
            || {
                let mut body = body.borrow_mut();
                on_gpu.borrow().read_into(&mut body).map_err(gpu_error)?;
                Ok(figures::stretch(&body).0)
            },
        )?
    };
    let facts = RunFacts {
        name: solver.name().to_string(),
        threads: 1,
        colors: on_gpu.colors(),
        per_substep: body.constraints.len() * args.passes.iterations,
        kernel: None,
        adapter: Some(device.adapter()),
    };
    report(args, &body, ordering, params, substeps, &timed, facts)
}

/// The harness's error for a GPU backend error: what the GPU does not run (no adapter
/// included) is `unsupported`, as sweeps expect.
#[cfg(feature = "gpu")]
pub(crate) fn gpu_error(e: gpu::GpuError) -> Error {
    use solver_core::WobbleError;
    match e {
        gpu::GpuError::Wobble(e) => Error::Wobble(e),
        gpu::GpuError::NoAdapter(why) => {
            Error::Wobble(WobbleError::Unsupported(format!("no GPU adapter ({why})")))
        }
        gpu::GpuError::Unsupported(what) => Error::Wobble(WobbleError::Unsupported(format!(
            "{what}, on the GPU backend"
        ))),
        e @ gpu::GpuError::Device(_) => Error::Gpu(e.to_string()),
    }
}

/// The constraint kinds `--no-bending` drops.
const BENDING_KINDS: [&str; 2] = ["dihedral_bending", "isometric_bending"];

/// Applies `--no-bending`, `--no-wind` and `--compliance` to the scene's body.
fn apply_switches(body: &mut solver_core::Body, args: &StepArgs) -> Result<(), Error> {
    if args.no_bending {
        body.constraints
            .extra
            .retain(|k| !BENDING_KINDS.contains(&k.name()));
        body.topology_changed();
    }
    if args.no_wind {
        body.wind = None;
    }
    if let Some(alpha) = args.compliance {
        if !(alpha.is_finite() && alpha >= 0.0) {
            return Err(Error::Arg(format!(
                "--compliance must be finite and >= 0 (m/N), got {alpha}"
            )));
        }
        body.constraints.distance.set_compliance(alpha);
    }
    Ok(())
}

/// `wobble step`.
pub fn run(args: &StepArgs) -> Result<(), Error> {
    print_json(&measure_repeated(args)?, args.json)
}

/// `--repeat` runs of [`measure`]: the report of the run with the median ns per projection
/// (the upper middle one for an even count), with every run's figure in
/// `runs_ns_per_projection` when there are several.
pub fn measure_repeated(args: &StepArgs) -> Result<StepReport, Error> {
    if args.repeat == 0 {
        return Err(Error::Arg("--repeat must be at least 1".into()));
    }
    let mut reports = (0..args.repeat)
        .map(|_| measure(args))
        .collect::<Result<Vec<_>, _>>()?;
    let runs: Vec<f64> = reports.iter().map(|r| r.ns_per_projection).collect();
    reports.sort_by(|a, b| a.ns_per_projection.total_cmp(&b.ns_per_projection));
    let mut median = reports.swap_remove(reports.len() / 2);
    if runs.len() > 1 {
        median.runs_ns_per_projection = Some(runs);
    }
    Ok(median)
}

/// Prints `report` as JSON: on one line when `compact`, else pretty-printed.
pub fn print_json(report: &impl Serialize, compact: bool) -> Result<(), Error> {
    let text = if compact {
        serde_json::to_string(report)
    } else {
        serde_json::to_string_pretty(report)
    };
    println!("{}", text.map_err(|e| Error::Io(e.to_string()))?);
    Ok(())
}
