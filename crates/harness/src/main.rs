//! # wobble (the harness)
//!
//! The `wobble` command. One module per subcommand; each builds a body from a standard scene
//! (solver-core), a solver by name (sparse), runs it, and prints or writes its figures.
//!
//! - [`setup`]: scene, ordering and solver from command-line arguments.
//! - [`stats`]: medians and percentiles of timings.
//! - [`step`]: `wobble step`, one scene run printed as one JSON object.

mod setup;
mod stats;
mod step;

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
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Step(args) => step::run(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("wobble: error: {e}");
            ExitCode::FAILURE
        }
    }
}
