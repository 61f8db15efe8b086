//! One `wobble step` run, in process: the arguments and report ([`args`]), a body ([`body`])
//! or a world ([`world`]), and their shared figures ([`surfaces`]). `wobble step` prints the
//! report; `wobble gpu` runs it in process; `scale`, `cache` and the claims run `wobble step`
//! as a child and read the report back.

pub mod args;
pub mod body;
pub mod surfaces;
pub mod world;

pub use args::{StepArgs, StepReport};

use crate::setup::{BackendArg, Error};

/// Runs the scene of `args` (a body or a world) and returns the report.
pub fn measure(args: &StepArgs) -> Result<StepReport, Error> {
    if args.steps == 0 {
        return Err(Error::Arg("--steps must be at least 1".into()));
    }
    let parts = args.scene == crate::setup::StepSceneArg::Mesh
        && !args.no_part_contacts
        && args.backend == BackendArg::Cpu
        && args.model == crate::setup::ModelArg::Pbd;
    if parts {
        if let Some(path) = args::single_mesh(args)? {
            if let Some(report) = world::measure_mesh_parts(args, &path)? {
                return Ok(report);
            }
        }
    }
    if args.scene.body().is_some() {
        return body::measure_body(args);
    }
    if args.scene == crate::setup::StepSceneArg::Character {
        return body::measure_character(args);
    }
    if args.backend != BackendArg::Cpu {
        return Err(Error::Arg(format!(
            "the world scene {} runs on the CPU only (--backend cpu)",
            args.scene
        )));
    }
    world::measure_world(args)
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
