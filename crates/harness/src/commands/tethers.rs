//! `wobble tethers`: how much long-range attachments (Kim, Chentanez and Müller 2012) cut the
//! hanging cloth's rubber-banding. The same cloth, solver and iteration count run with and
//! without one tether per free particle to its nearest pin (Euclidean rest distance, unilateral
//! `|x - x_pin| <= L`), and the mean stretch over the run and the step time are compared.

use crate::measure::stats::quantile;
use crate::output::csv::RowWriter;
use crate::output::section::{link, Section};
use crate::setup::{build_solver, check_solvers, Error, SolverArg};
use clap::Args;
use solver_core::constraints::{TetherDistance, Tethers};
use solver_core::{figures, step, StepParams};
use sparse::SolverOptions;
use std::path::PathBuf;
use std::time::Instant;

/// Arguments of `wobble tethers`.
#[derive(Args, Debug, Clone)]
pub struct TethersArgs {
    /// Cloth size n (n x n vertices).
    #[arg(long, default_value_t = 32)]
    pub n: usize,
    /// Solvers, comma-separated.
    #[arg(long, value_enum, value_delimiter = ',', default_value = "gs,colored")]
    pub solvers: Vec<SolverArg>,
    /// Solver iterations per step.
    #[arg(long, default_value_t = 8)]
    pub iterations: usize,
    /// Steps from rest.
    #[arg(long, default_value_t = 120)]
    pub steps: usize,
    /// Output directory.
    #[arg(long, default_value = "results")]
    pub out: PathBuf,
}

/// Columns of tethers.csv, one row per solver and tether setting.
const TETHERS_HEADER: &[&str] = &[
    "scene",
    "n",
    "solver",
    "iterations",
    "steps",
    "tethers",
    "stretch_mean_avg",
    "ms_per_step_median",
];

/// `wobble tethers`.
pub fn run(a: &TethersArgs) -> Result<Section, Error> {
    check_solvers(&a.solvers)?;
    let solvers = SolverArg::names(&a.solvers);
    if a.steps == 0 {
        return Err(Error::Arg("--steps must be at least 1".into()));
    }
    let params = StepParams {
        iterations: a.iterations,
        ..Default::default()
    };
    params.validate()?;
    let path = a.out.join("tethers.csv");
    let mut w = RowWriter::create(&path, TETHERS_HEADER)?;
    let mut sec = Section::new("Tethers (long-range attachments)");
    sec.line(format!(
        "Cloth n = {} ({} vertices), {} iterations, {} steps from rest; one tether per free particle to its nearest pin. Data: {}.\n",
        a.n,
        a.n * a.n,
        a.iterations,
        a.steps,
        link(&path, &a.out)
    ));
    sec.line(
        "| solver | stretch_mean_avg without | with tethers | ratio | ms/step without | with |",
    );
    sec.line("|---|---|---|---|---|---|");
    for name in &solvers {
        let mut row = Vec::new();
        for tethered in [false, true] {
            let mut body = scenes::cloth(a.n)?;
            if tethered {
                let t = Tethers::from_pins(
                    &body.particles().x(),
                    &body.constraints().distance,
                    TetherDistance::Euclidean,
                    1,
                    0.0,
                )?;
                body.constraints_mut().push_kind(Box::new(t));
                body.topology_changed();
            }
            let mut solver = build_solver(name.parse()?, &SolverOptions::default())?;
            let (mut sum, mut times) = (0.0f64, Vec::with_capacity(a.steps));
            for _ in 0..a.steps {
                let t0 = Instant::now();
                step(&mut body, &params, solver.as_mut(), None)?;
                times.push(t0.elapsed().as_secs_f64() * 1e3);
                sum += figures::stretch(&body).0 as f64;
            }
            let (stretch, ms) = (sum / a.steps as f64, quantile(&times, 0.5));
            w.record(&[
                "cloth".to_string(),
                a.n.to_string(),
                name.clone(),
                a.iterations.to_string(),
                a.steps.to_string(),
                tethered.to_string(),
                stretch.to_string(),
                ms.to_string(),
            ])?;
            row.push((stretch, ms));
        }
        sec.line(format!(
            "| {name} | {:.4} | {:.4} | {:.1}x lower | {:.3} | {:.3} |",
            row[0].0,
            row[1].0,
            row[0].0 / row[1].0,
            row[0].1,
            row[1].1
        ));
    }
    sec.add_files([path]);
    Ok(sec)
}
