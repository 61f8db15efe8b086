//! `wobble hitch`: what a grab or a release costs the frame it happens on, against the frames
//! around it.
//!
//! A game grabs a cloth with the mouse and lets go; the frame of the grab must not stutter.
//! Every `--period` frames the middle triangle of the body is grabbed (and, the next time,
//! released). Each event frame is paired with the median of the `--neighbours` frames before
//! it, so drift of the machine's speed cancels, and the report gives the median ratio with its
//! interval for grabs and for releases. `--renew-topology` renews the topology id at each event,
//! which makes the solver re-prepare as it did when grabs changed the topology: run both in one
//! session to see what that costs.

use crate::measure::paired::{median_interval, Interval};
use crate::setup::{build_body_with, build_solver, Error, KernelArg, SceneArg, SolverArg};
use clap::Args;
use serde::Serialize;
use solver_core::glam::Vec3;
use solver_core::interaction::picking::{grab, move_grab, release, Hit};
use solver_core::mesh::repair::MeshOptions;
use solver_core::{step, Body, StepParams};
use sparse::SolverOptions;
use std::time::Instant;

/// Arguments of `wobble hitch`.
#[derive(Args, Debug, Clone)]
pub struct HitchArgs {
    /// Scene with a surface to grab: cloth, flag, jelly or cube.
    #[arg(long, value_enum, default_value_t = SceneArg::Flag)]
    pub scene: SceneArg,
    /// Size parameter of the scene.
    #[arg(long, default_value_t = 32)]
    pub n: usize,
    /// Solver.
    #[arg(long, value_enum, default_value_t = SolverArg::Colored)]
    pub solver: SolverArg,
    /// Threads of a parallel solver.
    #[arg(long, default_value_t = 1)]
    pub threads: usize,
    /// `colored`'s distance kernel (one the CPU lacks is refused).
    #[arg(long, value_enum, default_value_t = KernelArg::Auto)]
    pub kernel: KernelArg,
    /// Solver iterations per substep.
    #[arg(long, default_value_t = 8)]
    pub iterations: usize,
    /// Frames from one event (grab or release) to the next.
    #[arg(long, default_value_t = 8)]
    pub period: usize,
    /// Events (grabs and releases alternate).
    #[arg(long, default_value_t = 40)]
    pub events: usize,
    /// Frames before each event whose median is its baseline.
    #[arg(long, default_value_t = 3)]
    pub neighbours: usize,
    /// Renew the topology id at each event (the solver re-prepares, as before drags were
    /// projected by the step loop).
    #[arg(long)]
    pub renew_topology: bool,
    /// Print compact JSON on one line (the default is pretty-printed).
    #[arg(long)]
    pub json: bool,
}

/// What `wobble hitch` prints.
#[derive(Serialize, Debug, Clone)]
pub struct HitchReport {
    /// Scene name.
    pub scene: String,
    /// Size parameter.
    pub n: usize,
    /// Particles of the body.
    pub vertices: usize,
    /// Solver name.
    pub solver: String,
    /// Threads the solver runs on.
    pub threads: usize,
    /// Whether the topology id was renewed at each event.
    pub renew_topology: bool,
    /// How many events changed the body's topology id (0 unless `renew_topology`).
    pub topology_changes: usize,
    /// Median frame time of the baseline frames, in ms.
    pub ms_per_frame_median: f64,
    /// Grab frame / baseline, per grab: median and its 95% interval.
    pub grab_ratio: Interval,
    /// Release frame / baseline, per release: median and its 95% interval.
    pub release_ratio: Interval,
}

/// The body's middle triangle, hit at its centroid.
fn middle_hit(body: &Body) -> Result<Hit, Error> {
    let t = body.topology().triangles.len() / 2;
    let corners = *body
        .topology()
        .triangles
        .get(t)
        .ok_or_else(|| Error::Arg("the scene has no surface triangle to grab".into()))?;
    let point = corners
        .iter()
        .map(|&c| body.particles().position(c as usize))
        .sum::<Vec3>()
        / 3.0;
    Ok(Hit {
        triangle: t as u32,
        corners,
        barycentric: [1.0 / 3.0; 3],
        distance: 0.0,
        point,
    })
}

/// Runs the frames and pairs each event with its neighbours (also used by tests).
pub fn measure(args: &HitchArgs) -> Result<HitchReport, Error> {
    if args.period <= args.neighbours || args.neighbours == 0 || args.events < 2 {
        return Err(Error::Arg(
            "--period must exceed --neighbours >= 1, and --events must be at least 2".into(),
        ));
    }
    let opts = SolverOptions {
        threads: args.threads,
        kernel: args.kernel.kernel(),
        ..Default::default()
    };
    let mut solver = build_solver(args.solver.kind(), &opts)?;
    let (mut body, _) = build_body_with(
        args.scene.name(),
        args.n,
        None,
        "natural",
        &MeshOptions::default(),
    )?;
    let params = StepParams {
        iterations: args.iterations,
        ..Default::default()
    };
    params.validate()?;
    for _ in 0..20 {
        step(&mut body, &params, solver.as_mut(), None)?;
    }
    let mut baseline = Vec::new();
    let (mut grabs, mut releases) = (Vec::new(), Vec::new());
    let mut topology_changes = 0;
    let mut held = None;
    for event in 0..args.events {
        let mut before = Vec::with_capacity(args.period - 1);
        for _ in 0..args.period - 1 {
            if let Some((id, target)) = held {
                move_grab(&mut body, id, target)?;
            }
            let t0 = Instant::now();
            step(&mut body, &params, solver.as_mut(), None)?;
            before.push(t0.elapsed().as_secs_f64() * 1e3);
        }
        let topology = body.topology_id();
        let t0 = Instant::now();
        match held.take() {
            None => {
                let hit = middle_hit(&body)?;
                let id = grab(&mut body, &hit, 1e-4)?;
                held = Some((id, hit.point + Vec3::new(0.0, 0.0, 0.1)));
            }
            Some((id, _)) => release(&mut body, id)?,
        }
        if args.renew_topology {
            body.topology_changed();
        }
        step(&mut body, &params, solver.as_mut(), None)?;
        let ms = t0.elapsed().as_secs_f64() * 1e3;
        topology_changes += usize::from(body.topology_id() != topology);
        let tail = &before[before.len() - args.neighbours..];
        let base = crate::measure::stats::quantile(tail, 0.5);
        baseline.extend_from_slice(tail);
        if event % 2 == 0 {
            grabs.push(ms / base);
        } else {
            releases.push(ms / base);
        }
    }
    Ok(HitchReport {
        scene: args.scene.name().to_string(),
        n: args.n,
        vertices: body.len(),
        solver: solver.name().to_string(),
        threads: solver.report().threads,
        renew_topology: args.renew_topology,
        topology_changes,
        ms_per_frame_median: crate::measure::stats::quantile(&baseline, 0.5),
        grab_ratio: median_interval(&grabs, 0.95),
        release_ratio: median_interval(&releases, 0.95),
    })
}

/// `wobble hitch`.
pub fn run(args: &HitchArgs) -> Result<(), Error> {
    crate::output::json::print_json(&measure(args)?, args.json)
}
