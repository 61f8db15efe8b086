//! Splits of a fixed number of solver iterations per step into substeps x iterations, run in
//! process: `wobble substeps` and claim C8 compare them.

use crate::measure::sim::{RunFigures, Sim, Spec, FIGURE_COLUMNS};
use crate::setup::{or_note, Error};
use serde::Serialize;

/// Header of a CSV of [`SplitRow`]s (`substeps.csv`, the C8 claim's `c8.csv`).
pub fn split_header() -> Vec<&'static str> {
    let split = ["scene", "n", "solver", "total", "substeps", "iterations"];
    [&split[..], &FIGURE_COLUMNS].concat()
}

/// One row of substeps.csv.
#[derive(Serialize, Debug, Clone)]
pub struct SplitRow {
    /// Scene name.
    pub scene: String,
    /// Size parameter of the scene.
    pub n: usize,
    /// Solver name.
    pub solver: String,
    /// Solver iterations per step in all, substeps x iterations (the total the splits share).
    pub total: usize,
    /// Substeps per step.
    pub substeps: usize,
    /// Solver iterations per substep.
    pub iterations: usize,
    /// Steps, stretch, the median step time after the first tenth of the steps, and status.
    pub figures: RunFigures,
}

/// Every (substeps, iterations) with substeps x iterations = `total`, substeps ascending.
pub fn splits(total: usize) -> Vec<(usize, usize)> {
    (1..=total)
        .filter(|s| total.is_multiple_of(*s))
        .map(|s| (s, total / s))
        .collect()
}

/// Runs one split of `base` (scene, size, solver, threads, tuning); a refusal or divergence
/// becomes the row's status.
pub fn run_split(
    base: &Spec,
    (substeps, iterations): (usize, usize),
    steps: usize,
) -> Result<SplitRow, Error> {
    let spec = base.clone().iterations(iterations).substeps(substeps);
    let (scene, n, solver) = (&spec.scene, spec.n, &spec.solver);
    let figures = match or_note(Sim::new(&spec))? {
        Err(note) => RunFigures::unmeasured(note),
        Ok(mut sim) => RunFigures::of(&sim.run(steps), steps / 10),
    };
    Ok(SplitRow {
        scene: scene.clone(),
        n,
        solver: solver.clone(),
        total: substeps * iterations,
        substeps,
        iterations,
        figures,
    })
}

#[cfg(test)]
mod tests {
    use super::{split_header, splits, SplitRow};
    use crate::measure::sim::RunFigures;

    #[test]
    fn a_row_fills_the_header_with_its_figures_last() {
        let row = SplitRow {
            scene: "cloth".into(),
            n: 4,
            solver: "gs".into(),
            total: 4,
            substeps: 2,
            iterations: 2,
            figures: RunFigures {
                steps: 5,
                stretch_mean_avg: 0.25,
                stretch_max_final: 0.5,
                ms_per_step_median: 1.5,
                status: "ok".into(),
            },
        };
        let mut w = csv::WriterBuilder::new()
            .has_headers(false)
            .from_writer(Vec::new());
        w.serialize(&row).unwrap();
        let line = String::from_utf8(w.into_inner().unwrap()).unwrap();
        assert_eq!(line, "cloth,4,gs,4,2,2,5,0.25,0.5,1.5,ok\n");
        assert_eq!(line.split(',').count(), split_header().len());
    }

    #[test]
    fn splits_cover_every_divisor() {
        assert_eq!(splits(8), vec![(1, 8), (2, 4), (4, 2), (8, 1)]);
        assert_eq!(splits(30).len(), 8);
        assert!(splits(30).iter().all(|(s, i)| s * i == 30));
    }
}
