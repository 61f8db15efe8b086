//! Runs a body in-process for a number of steps, recording per-step time and figures; a
//! diverged step ends the run and is recorded instead of aborting the sweep.

use crate::measure::stats::quantile;
use crate::setup::{build_body, Error, Tuning};
use serde::Serialize;
use solver_core::{figures, step, Body, Solver, StepParams};
use std::path::PathBuf;
use std::time::Instant;

/// What to run.
#[derive(Debug, Clone)]
pub struct Spec {
    /// Scene name.
    pub scene: String,
    /// Size parameter.
    pub n: usize,
    /// Mesh file of the mesh scene.
    pub mesh: Option<PathBuf>,
    /// Particle ordering.
    pub ordering: String,
    /// Solver name.
    pub solver: String,
    /// Rayon threads.
    pub threads: usize,
    /// Solver tuning.
    pub tuning: Tuning,
    /// Step parameters.
    pub params: StepParams,
}

impl Spec {
    /// The docs/SCENES.md defaults for `scene` at size `n` with `solver`.
    pub fn new(scene: &str, n: usize, solver: &str) -> Self {
        Spec {
            scene: scene.to_string(),
            n,
            mesh: None,
            ordering: "natural".into(),
            solver: solver.to_string(),
            threads: 1,
            tuning: Tuning::default(),
            params: StepParams::default(),
        }
    }

    /// With `iterations` per substep.
    pub fn iterations(mut self, it: usize) -> Self {
        self.params.iterations = it;
        self
    }

    /// With `substeps` per step.
    pub fn substeps(mut self, s: usize) -> Self {
        self.params.substeps = s;
        self
    }
}

/// A body with its solver and step parameters.
pub struct Sim {
    /// The body.
    pub body: Body,
    /// The solver.
    pub solver: Box<dyn Solver>,
    /// Step parameters.
    pub params: StepParams,
}

/// Per-step records of a run.
#[derive(Debug, Clone, Default)]
pub struct Trace {
    /// Wall time of each step in ms.
    pub ms: Vec<f64>,
    /// Mean stretch after each step.
    pub stretch_mean: Vec<f64>,
    /// Max stretch after each step.
    pub stretch_max: Vec<f64>,
    /// Energy after each step (index 0: before the first step).
    pub energy: Vec<f64>,
    /// Volume ratio after each step, where the body has one.
    pub volume: Vec<f64>,
    /// Lowest y after each step.
    pub lowest_y: Vec<f64>,
    /// Set when a step diverged (the run stopped there).
    pub diverged: Option<String>,
}

impl Sim {
    /// Builds the body and the solver.
    pub fn new(spec: &Spec) -> Result<Sim, Error> {
        spec.params.validate()?;
        let (body, _) = build_body(&spec.scene, spec.n, spec.mesh.clone(), &spec.ordering)?;
        let solver = spec.tuning.build_named(&spec.solver, spec.threads)?;
        Ok(Sim {
            body,
            solver,
            params: spec.params,
        })
    }

    /// Runs `steps` steps, recording figures after each.
    pub fn run(&mut self, steps: usize) -> Trace {
        let mut t = Trace {
            energy: vec![figures::energy(&self.body, self.params.gravity)],
            ..Default::default()
        };
        for _ in 0..steps {
            let t0 = Instant::now();
            let r = step(&mut self.body, &self.params, self.solver.as_mut(), None);
            let ms = t0.elapsed().as_secs_f64() * 1e3;
            if let Err(e) = r {
                t.diverged = Some(e.to_string());
                break;
            }
            t.ms.push(ms);
            let (mean, max) = figures::stretch(&self.body);
            t.stretch_mean.push(mean as f64);
            t.stretch_max.push(max as f64);
            t.energy
                .push(figures::energy(&self.body, self.params.gravity));
            if let Some(v) = figures::volume_ratio(&self.body) {
                t.volume.push(v);
            }
            t.lowest_y.push(figures::lowest_y(&self.body) as f64);
        }
        t
    }
}

impl Trace {
    /// Steps completed.
    pub fn steps(&self) -> usize {
        self.ms.len()
    }

    /// Median step time in ms over the steps after the first `skip`.
    pub fn ms_median(&self, skip: usize) -> f64 {
        let s = skip.min(self.ms.len().saturating_sub(1));
        quantile(&self.ms[s..], 0.5)
    }

    /// Mean over the steps of the mean stretch (the `stretch_mean_avg` of `wobble step`).
    pub fn stretch_mean_avg(&self) -> f64 {
        mean(&self.stretch_mean)
    }

    /// Mean stretch averaged over the steps from `from` on.
    pub fn stretch_mean_avg_from(&self, from: usize) -> f64 {
        let s = from.min(self.stretch_mean.len());
        mean(&self.stretch_mean[s..])
    }

    /// True when the run finished without diverging.
    pub fn finished(&self) -> bool {
        self.diverged.is_none()
    }
}

/// The CSV columns of [`RunFigures`].
pub const FIGURE_COLUMNS: [&str; 5] = [
    "steps",
    "stretch_mean_avg",
    "stretch_max_final",
    "ms_per_step_median",
    "status",
];

/// A run's closing figures, the last columns of converge_stretch.csv and substeps.csv.
#[derive(Serialize, Debug, Clone)]
pub struct RunFigures {
    /// Steps completed from rest (0 when the solver refused; fewer than asked when it diverged).
    pub steps: usize,
    /// Mean over the steps of the mean structural stretch `|l - l0| / l0`, as a fraction (NaN
    /// when not run).
    pub stretch_mean_avg: f64,
    /// Largest structural stretch after the last step, as a fraction (NaN when not run).
    pub stretch_max_final: f64,
    /// Median step time, in ms (NaN when not run).
    pub ms_per_step_median: f64,
    /// `ok`, `diverged: ...`, or why the solver refused the body.
    pub status: String,
}

impl RunFigures {
    /// The figures of a run that did not happen, with why.
    pub fn unmeasured(status: String) -> RunFigures {
        RunFigures {
            steps: 0,
            stretch_mean_avg: f64::NAN,
            stretch_max_final: f64::NAN,
            ms_per_step_median: f64::NAN,
            status,
        }
    }

    /// The figures of `t`, its median step time over the steps after the first `skip`.
    pub fn of(t: &Trace, skip: usize) -> RunFigures {
        RunFigures {
            steps: t.steps(),
            stretch_mean_avg: t.stretch_mean_avg(),
            stretch_max_final: t.stretch_max.last().copied().unwrap_or(f64::NAN),
            ms_per_step_median: t.ms_median(skip),
            status: t
                .diverged
                .as_ref()
                .map_or("ok".to_string(), |d| format!("diverged: {d}")),
        }
    }
}

/// Arithmetic mean (NaN when empty).
pub fn mean(v: &[f64]) -> f64 {
    if v.is_empty() {
        f64::NAN
    } else {
        v.iter().sum::<f64>() / v.len() as f64
    }
}
