//! The three CSVs `wobble converge` writes, and the rows its CPU and GPU runners hand them.

use super::args::ConvergeArgs;
use crate::measure::residuals::{ConvergeRow, CONVERGE_HEADER};
use crate::measure::sim::{RunFigures, FIGURE_COLUMNS};
use crate::output::csv::RowWriter;
use crate::setup::Error;
use serde::Serialize;
use std::path::{Path, PathBuf};

/// A solver's residual and elapsed-time curves, or the note of why it refused the body.
pub(super) type Curves = Result<(Vec<f64>, Vec<f64>), String>;

/// The three CSVs `wobble converge` writes.
pub(super) struct Writers {
    /// converge.csv: residual and time per iteration.
    pub(super) rows: RowWriter,
    /// converge_runs.csv: what ran and what was refused.
    pub(super) notes: RowWriter,
    /// converge_stretch.csv: stretch against iterations.
    pub(super) srows: RowWriter,
}

impl Writers {
    pub(super) fn create(out: &Path) -> Result<Writers, Error> {
        Ok(Writers {
            rows: RowWriter::create(&out.join("converge.csv"), CONVERGE_HEADER)?,
            notes: RowWriter::create(
                &out.join("converge_runs.csv"),
                &["solver", "part", "status"],
            )?,
            srows: RowWriter::create(
                &out.join("converge_stretch.csv"),
                &[&["scene", "n", "solver", "iterations"][..], &FIGURE_COLUMNS].concat(),
            )?,
        })
    }

    pub(super) fn paths(&self) -> [PathBuf; 3] {
        [
            self.rows.path().into(),
            self.notes.path().into(),
            self.srows.path().into(),
        ]
    }
}

impl Writers {
    /// Writes one solver's curves to converge.csv and `note` to converge_runs.csv.
    pub(super) fn curves(
        &mut self,
        a: &ConvergeArgs,
        name: &str,
        curve: &[f64],
        elapsed: &[f64],
        note: &str,
    ) -> Result<(), Error> {
        for (k, (&r, &t)) in curve.iter().zip(elapsed).enumerate() {
            self.rows.row(&ConvergeRow {
                scene: a.scene.name().to_string(),
                n: a.n,
                solver: name.to_string(),
                iteration: k,
                residual: r,
                elapsed_us: t,
            })?;
        }
        self.notes.record(&[name, "residual", note])
    }
}

impl StretchRow {
    /// The row of a run of `name` at `iterations` with its `figures`.
    pub(super) fn new(
        a: &ConvergeArgs,
        name: &str,
        iterations: usize,
        figures: RunFigures,
    ) -> Self {
        StretchRow {
            scene: a.scene.name().to_string(),
            n: a.n,
            solver: name.to_string(),
            iterations,
            figures,
        }
    }
}

/// One row of converge_stretch.csv.
#[derive(Serialize, Debug, Clone)]
pub struct StretchRow {
    /// Scene name.
    pub scene: String,
    /// Size parameter of the scene.
    pub n: usize,
    /// Solver name.
    pub solver: String,
    /// Solver iterations per step.
    pub iterations: usize,
    /// Steps, stretch, the median step time over the run, and status.
    pub figures: RunFigures,
}
