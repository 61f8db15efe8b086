//! `wobble step` on a world of several bodies (the `drape`, `tunnel`, `stack`, `crowd` and
//! `bodies` scenes of docs/SCENES.md, and the `mesh` scene of a mesh of several parts, one body per
//! part).

use super::args::{mesh_options, solver_kind, solver_options, StepArgs, StepReport};
use super::surfaces::{dump_obj, triangle_pairs, world_x};
use crate::measure::stats::quantile;
use crate::setup::{build_body_with, build_solver, Error, StepSceneArg};
use solver_core::figures::{self, Surface};
use solver_core::glam::Vec3;
use solver_core::mesh::repair::MeshOptions;
use solver_core::{Body, StepParams, World};
use sparse::{SolverKind, SolverOptions};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Vertical gap between the bodies of the `bodies` world as they are stacked (m).
pub const STACK_GAP: f32 = 0.05;

/// Self-collision thickness of a `bodies` body, as a fraction of its mean edge rest length.
pub const BODY_THICKNESS: f32 = 0.5;

/// What a world scene is built from: the command-line settings `wobble step` and
/// `wobble render` share.
#[derive(Debug, Clone)]
pub struct WorldSpec<'a> {
    /// The scene (a world: `drape`, `tunnel`, `stack` or `bodies`).
    pub scene: StepSceneArg,
    /// The size parameter (`drape`'s grid side).
    pub n: usize,
    /// The `bodies` world's meshes, one per body.
    pub meshes: &'a [PathBuf],
    /// The particle ordering of a `bodies` body.
    pub ordering: &'a str,
    /// How a `bodies` mesh is loaded (`--strict`).
    pub mesh_options: MeshOptions,
    /// Self-collision for `drape` and `bodies` (off with `--no-self-collision`).
    pub self_collision: bool,
    /// The `layers` world's cloth count.
    pub layers: usize,
}

/// The `bodies` world: one body per `--mesh` file (built as the `mesh` scene builds it, on its
/// ground plane), stacked in the order given, each lifted so that its lowest point is
/// [`STACK_GAP`] above the highest point of the one before, so that they fall onto each other;
/// each with self-collision unless `--no-self-collision`.
fn bodies_world(spec: &WorldSpec) -> Result<World, Error> {
    if spec.meshes.is_empty() {
        return Err(Error::Arg(
            "--scene bodies needs one --mesh FILE per body (repeat --mesh)".into(),
        ));
    }
    let mut world = World::new();
    let mut top = f32::NEG_INFINITY;
    for path in spec.meshes {
        let (mut body, _) = build_body_with(
            "mesh",
            spec.n,
            Some(path.clone()),
            spec.ordering,
            &spec.mesh_options,
        )?;
        let ys = body.particles().x().iter().map(|p| p.y);
        let (low, high) = ys.fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), y| {
            (lo.min(y), hi.max(y))
        });
        let lift = if top.is_finite() {
            top + STACK_GAP - low
        } else {
            0.0
        };
        for p in body.particles_mut().x_mut().iter_mut() {
            p.y += lift;
        }
        top = high + lift;
        let thickness = BODY_THICKNESS * body.constraints().distance.mean_rest();
        let k = world.add_body(body, None)?;
        if spec.self_collision {
            world.enable_self_collision(k, thickness)?;
        }
    }
    Ok(world)
}

/// The world of `spec`, every body stepped by a fresh solver of `kind` with `opts`; a
/// `--mesh` given to a world other than `bodies` is refused rather than ignored.
pub fn build_world(
    spec: &WorldSpec,
    kind: SolverKind,
    opts: &SolverOptions,
) -> Result<World, Error> {
    build_scripted_world(spec, kind, opts).map(|(world, _)| world)
}

/// [`build_world`] with the script of a contact scene (`layers`, `fold`: what moves its sphere
/// or pins between steps; `None` for the other worlds).
pub fn build_scripted_world(
    spec: &WorldSpec,
    kind: SolverKind,
    opts: &SolverOptions,
) -> Result<(World, Option<scenes::contact::ContactScript>), Error> {
    let mut script = None;
    if spec.scene != StepSceneArg::Bodies && !spec.meshes.is_empty() {
        return Err(Error::Arg(format!(
            "--mesh is for the mesh scene and the bodies world; the {} world builds its own bodies",
            spec.scene
        )));
    }
    let mut world = match spec.scene {
        StepSceneArg::Drape => scenes::drape(spec.n, spec.self_collision)?,
        StepSceneArg::Tunnel => scenes::tunnel()?,
        StepSceneArg::Stack => scenes::stack()?,
        StepSceneArg::Crowd => scenes::crowd()?,
        StepSceneArg::Bodies => bodies_world(spec)?,
        StepSceneArg::Layers | StepSceneArg::Fold => {
            let scene = if spec.scene == StepSceneArg::Layers {
                scenes::contact::layers(spec.layers, spec.n)?
            } else {
                scenes::contact::fold(spec.n)?
            };
            script = Some(scene.script);
            scene.world
        }
        other => return Err(Error::Arg(format!("'{other}' is not a world scene"))),
    };
    for b in world.bodies_mut() {
        b.set_solver(build_solver(kind, opts)?);
    }
    Ok((world, script))
}

/// The gravity of a world scene: docs/SCENES.md's tunnel has none, the others the step's
/// default.
pub fn world_gravity(scene: StepSceneArg) -> Vec3 {
    if scene == StepSceneArg::Tunnel {
        Vec3::ZERO
    } else {
        StepParams::default().gravity
    }
}

/// Runs a world scene as `wobble step` runs a body, and reports the sums over its bodies
/// (stretch figures of the first body; `volume_ratio` null).
pub fn measure_world(args: &StepArgs) -> Result<StepReport, Error> {
    let spec = WorldSpec {
        scene: args.scene,
        n: args.n(),
        meshes: &args.mesh,
        ordering: args.layout.ordering.name(),
        mesh_options: mesh_options(args),
        self_collision: !args.no_self_collision,
        layers: args.layers,
    };
    let (world, script) = build_scripted_world(&spec, solver_kind(args), &solver_options(args))?;
    run_world(args, world, world_gravity(args.scene), script)
}

/// The `mesh FILE` scene of a mesh of several parts: one body per part
/// ([`scenes::mesh_parts_world`]), each stepped by a fresh solver of `args`; `None` for a
/// mesh of one part (or a TetGen mesh), which [`super::body`] steps.
pub fn measure_mesh_parts(args: &StepArgs, path: &Path) -> Result<Option<StepReport>, Error> {
    let Some((mut world, report)) = scenes::mesh_parts_world(path, &mesh_options(args))? else {
        return Ok(None);
    };
    if !report.is_clean() {
        eprintln!("wobble: warning: {}: {report}", path.display());
    }
    if args.layout.ordering.name() != "natural" {
        return Err(Error::Arg(format!(
            "--ordering {}: a mesh of several parts is stepped as one body per part in file \
             order (natural); use --no-part-contacts to renumber it as one body",
            args.layout.ordering.name()
        )));
    }
    for b in world.bodies_mut() {
        b.set_solver(build_solver(solver_kind(args), &solver_options(args))?);
    }
    run_world(args, world, StepParams::default().gravity, None).map(Some)
}

/// Steps `world` as `wobble step` steps a body and reports the sums over its bodies, the
/// bodies spread over `--threads` threads.
fn run_world(
    args: &StepArgs,
    mut world: World,
    gravity: Vec3,
    mut script: Option<scenes::contact::ContactScript>,
) -> Result<StepReport, Error> {
    world.set_executor(Some(sparse::Pool::new(args.threads)?.world_executor()));
    let at_load = {
        let xs: Vec<_> = world.bodies().map(|b| world_x(b.body())).collect();
        let surfaces: Vec<Surface> = world
            .bodies()
            .zip(&xs)
            .map(|(b, x)| (&b.body().topology().triangles[..], &x[..]))
            .collect();
        triangle_pairs(args, true, &surfaces)?
    };
    let params = StepParams {
        dt: args.dt,
        substeps: args.passes.substeps,
        iterations: args.passes.iterations,
        damping: args.damping,
        gravity,
        ..Default::default()
    };
    let mut times = Vec::with_capacity(args.steps);
    let mut stretch_sum = 0.0f64;
    let mut report = Default::default();
    let total = args.warmup + args.steps;
    // A contact scene's largest count of intersecting pairs after any frame and thinnest gap.
    let mut contact: Option<(u64, Option<f32>)> = script.as_ref().map(|_| (0, None));
    for s in 0..total {
        if let Some(script) = &mut script {
            script.before_step(&mut world, params.dt)?;
        }
        let t0 = Instant::now();
        report = world.step(&params)?;
        let elapsed = t0.elapsed().as_secs_f64() * 1e3;
        if s >= args.warmup {
            times.push(elapsed);
        }
        if let Some((worst, thinnest)) = &mut contact {
            let xs: Vec<_> = world.bodies().map(|b| world_x(b.body())).collect();
            let surfaces: Vec<Surface> = world
                .bodies()
                .zip(&xs)
                .map(|(b, x)| (&b.body().topology().triangles[..], &x[..]))
                .collect();
            *worst = (*worst).max(figures::intersecting_triangle_pairs(&surfaces)?);
            if let Some((d, _, _)) = world.triangle_contacts().and_then(|t| t.thinnest()) {
                *thinnest = Some(thinnest.map_or(d, |t: f32| t.min(d)));
            }
        }
        stretch_sum += figures::stretch(world.bodies().next().expect("a body").body()).0 as f64;
    }
    let bodies: Vec<&Body> = world.bodies().map(|b| b.body()).collect();
    let xs: Vec<_> = bodies.iter().map(|b| world_x(b)).collect();
    let surfaces: Vec<Surface> = bodies
        .iter()
        .zip(&xs)
        .map(|(b, x)| (&b.topology().triangles[..], &x[..]))
        .collect();
    let self_intersections = Some(figures::self_intersections(&surfaces)?);
    let intersecting_pairs = triangle_pairs(args, true, &surfaces)?;
    if let Some(path) = &args.dump_obj {
        dump_obj(path, &bodies)?;
    }
    let first = bodies[0];
    let (stretch_mean, stretch_max) = figures::stretch(first);
    let constraints: usize = bodies.iter().map(|b| b.constraints().len()).sum();
    let all_x: Vec<_> = bodies
        .iter()
        .flat_map(|b| b.particles().x().iter().copied())
        .collect();
    let median = quantile(&times, 0.5);
    let first_solver = world.bodies().next().expect("a body").solver();
    let solver = first_solver.report();
    let projections = (constraints * args.passes.iterations * report.substeps).max(1) as f64;
    Ok(StepReport {
        scene: args.scene.name().to_string(),
        n: args.n(),
        vertices: all_x.len(),
        constraints,
        solver: first_solver.name().to_string(),
        iterations: args.passes.iterations,
        substeps: report.substeps,
        dt: args.dt,
        // The world's pool steps whole bodies on its threads, each body's solver on its own.
        threads: args.threads.max(solver.threads),
        warmup: args.warmup,
        steps: args.steps,
        ms_per_step_median: median,
        ms_per_step_p10: quantile(&times, 0.1),
        ms_per_step_p90: quantile(&times, 0.9),
        ns_per_projection: median * 1e6 / projections,
        stretch_mean,
        stretch_max,
        stretch_mean_avg: stretch_sum / total as f64,
        energy: bodies.iter().map(|b| figures::energy(b, gravity)).sum(),
        volume_ratio: None,
        finite: bodies.iter().all(|b| figures::all_finite(b)),
        state_hash: format!("{:016x}", figures::state_hash(&all_x)),
        colors: solver.colors,
        ordering: "natural".into(),
        kernel: solver.kernel.map(|k| k.to_string()),
        bending: 0,
        wind: false,
        distance_compliance: None,
        backend: "cpu".into(),
        adapter: None,
        contacts: report.contacts,
        self_intersections,
        intersecting_pairs_at_load: at_load,
        intersecting_pairs,
        bodies: Some(bodies.len()),
        runs_ns_per_projection: None,
        skin_max_distance_violations: None,
        skin_backstop_violations: None,
        proxy_penetrations: None,
        intersecting_pairs_max: contact.as_ref().map(|c| c.0),
        thinnest_gap: contact.and_then(|c| c.1),
    })
}
