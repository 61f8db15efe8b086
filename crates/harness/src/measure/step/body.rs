//! `wobble step` on one body: a standard scene or a mesh, stepped by a PBD solver (on the CPU
//! or the GPU) or by the force-based mass-spring model.

use super::args::{mesh_options, single_mesh, solver_kind, solver_options, StepArgs, StepReport};
use super::surfaces::{dump_obj, intersections, triangle_pairs};
use crate::measure::stats::quantile;
#[cfg(feature = "gpu")]
use crate::setup::gpu_error;
use crate::setup::{build_body_with, build_solver, BackendArg, Error, ModelArg};
use scenes::mass_spring::{MassSpring, SpringParams};
use solver_core::constraints::{ConstraintKind, DihedralBending, IsometricBending};
use solver_core::{figures, step, Solver, StepParams};
use std::time::Instant;

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

/// Runs the single-body scene of `args` and returns the report.
pub fn measure_body(args: &StepArgs) -> Result<StepReport, Error> {
    let (mut body, ordering) = build_body_with(
        args.scene.name(),
        args.n(),
        single_mesh(args)?,
        args.layout.ordering.name(),
        &mesh_options(args),
    )?;
    apply_switches(&mut body, args)?;
    let at_load = {
        let surfaces = [(&body.topology().triangles[..], &body.particles().x()[..])];
        triangle_pairs(args, false, &surfaces)?
    };
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
    match args.backend {
        BackendArg::Cpu => {}
        #[cfg(feature = "gpu")]
        BackendArg::Gpu => return measure_gpu(args, body, ordering, params, substeps),
        #[cfg(not(feature = "gpu"))]
        BackendArg::Gpu => {
            return Err(Error::Arg(
                "--backend gpu: this wobble was built without the `gpu` feature".into(),
            ))
        }
    }
    let mut model = match args.model {
        ModelArg::Pbd => Model::Pbd(build_solver(solver_kind(args), &solver_options(args))?),
        ModelArg::MassSpring => {
            let springs = SpringParams::uniform(args.stiffness, args.damping);
            let integrator = args.integrator.integrator();
            Model::MassSpring(MassSpring::from_body(&body, springs, integrator)?)
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
            name: solver.name().to_string(),
            threads: solver.report().threads,
            colors: solver.report().colors,
            per_substep: body.constraints().len() * args.passes.iterations,
            kernel: solver.report().kernel.map(|k| k.to_string()),
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
    let mut r = report(args, &body, ordering, params, substeps, &timed, facts)?;
    r.intersecting_pairs_at_load = at_load;
    Ok(r)
}

/// Runs the `character` scene (docs/SCENES.md): the skeleton posed and the proxy moved before
/// each step (untimed), the clothing stepped by the solver of `args` (timed); the report adds
/// the scene's figures after the last step.
pub fn measure_character(args: &StepArgs) -> Result<StepReport, Error> {
    if args.backend != BackendArg::Cpu || args.model != ModelArg::Pbd {
        return Err(Error::Arg(
            "the character scene runs the pbd model on the CPU only (skinned constraints and moving colliders are CPU features)".into(),
        ));
    }
    if !args.mesh.is_empty() {
        return Err(Error::Arg(
            "--mesh is for the mesh scene and the bodies world; the character builds its own clothing".into(),
        ));
    }
    let mut character = scenes::character::Character::new(args.n())?;
    apply_switches(&mut character.body, args)?;
    let params = StepParams {
        dt: args.dt,
        substeps: args.passes.substeps,
        iterations: args.passes.iterations,
        contact_margin: scenes::character::CONTACT_MARGIN,
        ..Default::default()
    };
    params.validate()?;
    let substeps = params.planned()?.substeps;
    let mut solver = build_solver(solver_kind(args), &solver_options(args))?;
    let mut times = Vec::with_capacity(args.steps);
    let mut stretch_sum = 0.0f64;
    for s in 0..args.warmup + args.steps {
        character.animate(params.dt)?;
        let t0 = Instant::now();
        step(&mut character.body, &params, solver.as_mut(), None)?;
        let elapsed = t0.elapsed().as_secs_f64() * 1e3;
        if s >= args.warmup {
            times.push(elapsed);
        }
        stretch_sum += figures::stretch(&character.body).0 as f64;
    }
    let timed = Timed { times, stretch_sum };
    let facts = RunFacts {
        name: solver.name().to_string(),
        threads: solver.report().threads,
        colors: solver.report().colors,
        per_substep: character.body.constraints().len() * args.passes.iterations,
        kernel: solver.report().kernel.map(|k| k.to_string()),
        adapter: None,
    };
    let mut r = report(
        args,
        &character.body,
        sparse::Ordering::Natural,
        params,
        substeps,
        &timed,
        facts,
    )?;
    let f = character.figures();
    r.skin_max_distance_violations = Some(f.skin_max_distance_violations);
    r.skin_backstop_violations = Some(f.skin_backstop_violations);
    r.proxy_penetrations = Some(f.proxy_penetrations);
    Ok(r)
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
        .constraints()
        .extra
        .iter()
        .filter(|k| is_bending(k.as_ref()))
        .map(|k| k.len())
        .sum();
    let surfaces = [(&body.topology().triangles[..], &body.particles().x()[..])];
    let self_intersections = intersections(args, &surfaces)?;
    let intersecting_pairs = triangle_pairs(args, false, &surfaces)?;
    if let Some(path) = &args.dump_obj {
        dump_obj(path, &[body])?;
    }
    Ok(StepReport {
        contacts: body.contacts().len(),
        self_intersections,
        intersecting_pairs_at_load: None,
        intersecting_pairs,
        bodies: Some(1),
        runs_ns_per_projection: None,
        skin_max_distance_violations: None,
        skin_backstop_violations: None,
        proxy_penetrations: None,
        intersecting_pairs_max: None,
        thinnest_gap: None,
        scene: args.scene.name().to_string(),
        n: args.n(),
        vertices: body.len(),
        constraints: body.constraints().len(),
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
        state_hash: format!("{:016x}", figures::state_hash(&body.particles().x())),
        colors: facts.colors,
        ordering: ordering.name().to_string(),
        kernel: facts.kernel,
        bending,
        wind: body.wind().is_some(),
        distance_compliance: args.compliance,
        backend: args.backend.name().to_string(),
        adapter: facts.adapter,
    })
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
    if args.model != ModelArg::Pbd {
        return Err(Error::Arg("--backend gpu runs the pbd model only".into()));
    }
    let solver = gpu::GpuSolver::parse(args.solver.name())?;
    let device = gpu::Gpu::new().map_err(gpu_error)?;
    let mut on_gpu = gpu::GpuBody::new(&device, &body, solver_kind(args)).map_err(gpu_error)?;
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
        per_substep: body.constraints().len() * args.passes.iterations,
        kernel: None,
        adapter: Some(device.adapter()),
    };
    report(args, &body, ordering, params, substeps, &timed, facts)
}

/// Whether `kind` is one `--no-bending` drops: dihedral or isometric bending.
fn is_bending(kind: &dyn ConstraintKind) -> bool {
    let kind = kind.as_any();
    kind.is::<DihedralBending>() || kind.is::<IsometricBending>()
}

/// Applies `--no-bending`, `--no-wind` and `--compliance` to the scene's body.
fn apply_switches(body: &mut solver_core::Body, args: &StepArgs) -> Result<(), Error> {
    if args.no_bending {
        body.constraints_mut()
            .extra
            .retain(|k| !is_bending(k.as_ref()));
        body.topology_changed();
    }
    if args.no_wind {
        body.set_wind(None).expect("no wind is always accepted");
    }
    if let Some(alpha) = args.compliance {
        if !(alpha.is_finite() && alpha >= 0.0) {
            return Err(Error::Arg(format!(
                "--compliance must be finite and >= 0 (m/N), got {alpha}"
            )));
        }
        body.constraints_mut().distance.set_compliance(alpha);
    }
    Ok(())
}
