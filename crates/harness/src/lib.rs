//! # harness: the `wobble` command
//!
//! The `wobble` command as a library (its tests call it in-process); `src/main.rs` is the
//! `wobble` binary, which `cargo run --release -- report` at the repository root runs (the
//! workspace's default members). One module per subcommand; each builds a body from a standard scene
//! (solver-core), a solver by name (sparse), runs it, and prints or writes its figures.
//!
//! - [`setup`]: scene, ordering and solver from command-line arguments; argument checks.
//! - [`stats`]: medians, percentiles and least-squares fits; [`paired`]: interleaved timing of
//!   alternatives, with intervals for medians and paired ratios.
//! - [`sim`]: in-process runs with per-step figures.
//! - [`child`]: `wobble step` (or valgrind) as a child process, with its peak RSS.
//! - [`csv`]: CSV written row by row; [`plot`]: SVG + PNG plots; [`machine`]: CPU and caches.
//! - [`section`]: what a subcommand hands to the report.
//! - subcommands: [`step`], [`converge`], [`scale`], [`cache`], [`substeps`], [`claims`],
//!   [`advise`], [`render`], [`tethers`], [`threads`], [`hitch`], [`gpu_backend`] (`wobble gpu`),
//!   [`report`].

pub mod advise;
pub mod cache;
pub mod child;
pub mod claims;
pub mod converge;
#[cfg(feature = "gpu")]
pub mod converge_gpu;
pub mod csv;
pub mod gpu_backend;
pub mod hitch;
pub mod machine;
pub mod paired;
pub mod plot;
pub mod progress;
pub mod render;
pub mod report;
pub mod scale;
pub mod section;
pub mod setup;
pub mod sim;
pub mod stats;
pub mod step;
pub mod substeps;
pub mod tethers;
pub mod threads;
pub mod world_step;

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
    /// The GPU backend against the CPU solvers: step time per size, crossover, 1024 x 1024 goal.
    Gpu(gpu_backend::GpuArgs),
    /// What a grab or a release costs its frame, against the frames before it.
    Hitch(hitch::HitchArgs),
    /// The main job: run converge, scale, cache, substeps, claims and render; write REPORT.md.
    Report(report::ReportArgs),
}

/// Parses the command line, runs the subcommand and turns an error into a one-line message
/// and a non-zero exit.
pub fn cli_main() -> ExitCode {
    let cli = Cli::parse();
    let result = plot::register_font().and_then(|()| match cli.command {
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
        Command::Gpu(args) => gpu_backend::run(&args).map(|s| s.print_files()),
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
