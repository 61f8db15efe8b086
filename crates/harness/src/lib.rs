//! # harness: the `wobble` command
//!
//! The `wobble` command as a library (its tests call it in-process); `src/main.rs` is the
//! `wobble` binary, which `cargo run --release -- report` at the repository root runs (the
//! workspace's default members).
//!
//! ## Parts, from the command line down
//!
//! - [`cli_main`] (here): parses the command line with clap and hands each subcommand's
//!   arguments to its module.
//! - [`commands`]: one module per subcommand (`step`, `converge`, `scale`, `cache`,
//!   `substeps`, `claims`, `advise`, `render`, `tethers`, `threads`, `bodies`, `hitch`, `gpu`,
//!   `report`). `report` runs the others; `claims` and `cache` are folders of their own.
//! - [`measure`]: what the subcommands measure with: one `wobble step` run in process
//!   ([`measure::step`]), sweeps of `wobble step` child processes ([`measure::sweep`],
//!   [`measure::child`]), residual curves from a common state ([`measure::residuals`]),
//!   in-process runs with per-step figures ([`measure::sim`]), interleaved timing with
//!   intervals ([`measure::paired`]), statistics ([`measure::stats`]), the machine
//!   ([`measure::machine`]).
//! - [`output`]: CSV row by row, SVG + PNG plots, JSON, report sections, progress bars.
//! - [`setup`]: the CLI edge: the enumerated argument values as `clap::ValueEnum`s
//!   ([`setup::values`]: scene, solver, ordering, kernel, model, integrator, backend, each
//!   spelled as the library parses it), the argument groups several subcommands share, the
//!   checks of sizes and lists, the harness's error, and the body and solver built from the
//!   arguments through solver-core and sparse.
//!
//! ## Data flow
//!
//! arguments (clap) -> [`setup`] checks them and builds the body (solver-core's scenes, sparse's
//! orderings) and the solver (`sparse::SolverKind`) -> [`measure`] steps it and takes the
//! figures (in process, or in a `wobble step` child whose JSON report is read back) ->
//! [`output`] writes rows as they come, then plots and a report [`output::section::Section`]
//! -> `report` gathers the sections into REPORT.md and the claims into CLAIMS.md.
//!
//! Imports point down that list only: a command imports measure, output and setup; measure
//! imports output and setup; output imports setup; setup imports only the library crates. No
//! file imports a file that imports it, directly or through others.

pub mod commands;
pub mod measure;
pub mod output;
pub mod setup;

/// `harness::claims` as the root package's tests name it (`tests/seed_quotes.rs`).
pub use commands::claims;

use commands::{
    advise, bodies, cache, converge, hitch, render, report, scale, step, substeps, tethers, threads,
};

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// Real-time soft-body and cloth solvers: runs, sweeps and reports.
#[derive(Parser, Debug)]
#[command(name = "wobble", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run one scene with one solver and print its figures as one JSON object.
    Step(step::StepArgs),
    /// Residual per iteration of one step from a common state, per solver; stretch against iterations.
    Converge(converge::ConvergeArgs),
    /// Step time against size per solver and thread count (log-log, cache levels marked).
    Scale(scale::ScaleArgs),
    /// Step time per particle ordering around the L1 boundary and up to 1M vertices; cachegrind misses.
    Cache(cache::CacheArgs),
    /// Stretch and time of every substeps x iterations split at equal projections per step.
    Substeps(substeps::SubstepsArgs),
    /// Test the twenty published claims (C1..C20) and write CLAIMS.md with a verdict each.
    Claims(claims::ClaimsArgs),
    /// Recommend a solver, iteration and substep count for a body, a time budget and a stretch target.
    Advise(advise::AdviseArgs),
    /// Draw a simulation (flat-shaded 3D projection) as a GIF and PNG stills.
    Render(render::RenderArgs),
    /// Hanging cloth with and without long-range attachments: stretch and step time.
    Tethers(tethers::TethersArgs),
    /// One parallel solver's step time at several thread counts, measured in turns on one body.
    Threads(threads::ThreadsArgs),
    /// A world of 64 small bodies on one pool per thread count, against its bodies stepped alone.
    Bodies(bodies::BodiesArgs),
    /// The GPU backend against the CPU solvers: step time per size, crossover, 1024 x 1024 goal.
    Gpu(commands::gpu::GpuArgs),
    /// What a grab or a release costs its frame, against the frames before it.
    Hitch(hitch::HitchArgs),
    /// The main job: run converge, scale, cache, substeps, claims and render; write REPORT.md.
    Report(report::ReportArgs),
}

/// Parses the command line, runs the subcommand and turns an error into a one-line message
/// and a non-zero exit.
pub fn cli_main() -> ExitCode {
    let cli = Cli::parse();
    let result = output::plot::register_font().and_then(|()| match cli.command {
        Command::Step(args) => step::run(&args),
        Command::Converge(args) => converge::run(&args).map(|s| s.print_files()),
        Command::Scale(args) => scale::run(&args).map(|s| s.print_files()),
        Command::Cache(args) => cache::run(&args).map(|s| s.print_files()),
        Command::Substeps(args) => substeps::run(&args).map(|s| s.print_files()),
        Command::Claims(args) => claims::run(&args).map(|s| s.print_files()),
        Command::Advise(args) => advise::run(&args).map(|_| ()),
        Command::Render(args) => render::run(&args).map(|s| s.print_files()),
        Command::Tethers(args) => tethers::run(&args).map(|s| s.print_files()),
        Command::Threads(args) => threads::run(&args),
        Command::Bodies(args) => bodies::run(&args),
        Command::Gpu(args) => commands::gpu::run(&args).map(|s| s.print_files()),
        Command::Hitch(args) => hitch::run(&args),
        Command::Report(args) => report::run(&args).map(|s| {
            println!("wrote {} files", s.files.len());
        }),
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("wobble: error: {e}");
            ExitCode::FAILURE
        }
    }
}
