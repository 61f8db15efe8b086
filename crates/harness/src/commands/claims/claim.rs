//! What every claim shares: the verdict, the decision a claim's rule returns, the claim as
//! CLAIMS.md shows it, the sizes of the experiments and the context each claim function gets.
//! The claim files and `mod.rs` (which lists them and writes CLAIMS.md) import these; this
//! file imports none of them, so no claim file and `mod.rs` import each other.

use crate::measure::machine::Machine;
use crate::output::plot::Plot;
use crate::setup::{Error, Tuning};
use solver_core::Body;
use std::cell::RefCell;
use std::collections::HashMap;
use std::path::PathBuf;

/// A verdict, computed from measured numbers.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// The measurement agrees with the claim.
    Confirmed,
    /// The measurement contradicts it.
    Refuted,
    /// Some of it holds.
    Partly,
    /// Measured, but the interval of the deciding figure straddles the rule's threshold: the
    /// data cannot decide at the stated confidence.
    Inconclusive,
    /// Cannot be tested with this build or machine; why.
    Untestable(String),
}

impl Verdict {
    /// The word written in CLAIMS.md.
    pub fn word(&self) -> &'static str {
        match self {
            Verdict::Confirmed => "confirmed",
            Verdict::Refuted => "refuted",
            Verdict::Partly => "partly",
            Verdict::Inconclusive => "inconclusive",
            Verdict::Untestable(_) => "untestable-here",
        }
    }

    /// All parts hold: confirmed; none: refuted; some: partly.
    pub fn from_parts(held: usize, of: usize) -> Verdict {
        if held == of {
            Verdict::Confirmed
        } else if held == 0 {
            Verdict::Refuted
        } else {
            Verdict::Partly
        }
    }
}

/// The figure a verdict rests on, the threshold the rule compares it with, and its interval
/// (NaN when the figure is exact, e.g. an iteration count, or nothing was measured).
#[derive(Debug, Clone)]
pub struct Decision {
    /// The figure, e.g. "slope 1.04 [0.98, 1.10]".
    pub figure: String,
    /// The threshold, e.g. "1.5".
    pub threshold: String,
    /// Lower end of the figure's interval.
    pub lo: f64,
    /// Upper end.
    pub hi: f64,
}

impl Default for Decision {
    fn default() -> Self {
        Decision {
            figure: "-".into(),
            threshold: "-".into(),
            lo: f64::NAN,
            hi: f64::NAN,
        }
    }
}

impl Decision {
    /// An exact figure (no interval).
    pub fn exact(figure: impl Into<String>, threshold: impl Into<String>) -> Decision {
        Decision {
            figure: figure.into(),
            threshold: threshold.into(),
            ..Default::default()
        }
    }

    /// A figure with its interval.
    pub fn interval(
        figure: impl Into<String>,
        threshold: impl Into<String>,
        iv: &crate::measure::paired::Interval,
    ) -> Decision {
        Decision {
            figure: figure.into(),
            threshold: threshold.into(),
            lo: iv.lo,
            hi: iv.hi,
        }
    }
}

/// What a claim's measurement gives at one tolerance: the verdict and the figure it rests on.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// The verdict.
    pub verdict: Verdict,
    /// The deciding figure, in words.
    pub figure: String,
}

/// A claim decided: at its stated tolerance and over the sweep.
#[derive(Debug, Clone, PartialEq)]
pub struct Judgement {
    /// At the stated tolerance.
    pub stated: Outcome,
    /// The verdict at each tolerance of the sweep.
    pub sweep: Vec<(f64, Verdict)>,
    /// The verdict as stated: a word that holds over the whole sweep, or where it flips.
    pub headline: String,
    /// One word for tables: the verdict if it holds over the whole sweep, else
    /// "depends-on-tolerance".
    pub word: String,
}

/// One tested claim.
#[derive(Debug, Clone)]
pub struct Claim {
    /// C1..C20.
    pub id: &'static str,
    /// Short name of the source (the full citation and quote come from [`sources`](super::sources)).
    pub source: &'static str,
    /// What exactly is tested: the claim's scope here.
    pub text: &'static str,
    /// What was run and the figures measured.
    pub measured: String,
    /// The verdict: `Untestable(why)` from a claim function that could not measure, otherwise
    /// set by `claims::run` from the engine's judgement of the CSVs (`engine::judge`).
    pub verdict: Verdict,
    /// The figure the verdict rests on, set with the verdict.
    pub decision: Decision,
    /// CSV and plots behind it.
    pub files: Vec<PathBuf>,
    /// The engine's judgement of it (`engine::judge`), once decided; None if untestable.
    pub judgement: Option<Judgement>,
}

impl Claim {
    /// The rest of a measured claim (a claim function gives id, source, text, measured and
    /// files): its verdict and deciding figure are not the function's to give; `claims::run`
    /// sets them from the engine's judgement of the CSVs the function wrote.
    pub fn measured() -> Claim {
        Claim {
            id: "-",
            source: "-",
            text: "-",
            measured: String::new(),
            verdict: Verdict::Inconclusive,
            decision: Decision::default(),
            files: Vec::new(),
            judgement: None,
        }
    }

    /// A claim that could not be tested, with why.
    pub fn untestable(
        id: &'static str,
        source: &'static str,
        text: &'static str,
        why: String,
    ) -> Claim {
        Claim {
            id,
            source,
            text,
            measured: "nothing: see why".into(),
            verdict: Verdict::Untestable(why),
            decision: Decision::default(),
            files: Vec::new(),
            judgement: None,
        }
    }
}

/// Sizes and lengths of the claim experiments.
#[derive(Debug, Clone)]
pub struct Scale {
    /// Cloth side of the convergence claims (23: 529 vertices, the claims' "500").
    pub conv_n: usize,
    /// Iterations of the residual curves.
    pub conv_iters: usize,
    /// Cloth side for the stretch claim C5 (32: the reference cloth).
    pub stretch_n: usize,
    /// Simulated seconds of each C6 run after its kick.
    pub energy_s: f64,
    /// Cloth side for C11's parallel timing.
    pub parallel_n: usize,
    /// Seconds of timed steps per child-process point.
    pub target_s: f64,
    /// Jelly subdivision level for C12.
    pub jelly_n: usize,
}

impl Scale {
    /// Full or quick.
    pub fn new(quick: bool) -> Scale {
        if quick {
            Scale {
                conv_n: 16,
                conv_iters: 200,
                stretch_n: 16,
                energy_s: 3.0,
                parallel_n: 64,
                target_s: 0.05,
                jelly_n: 2,
            }
        } else {
            Scale {
                conv_n: 23,
                conv_iters: 400,
                stretch_n: 32,
                energy_s: 8.0,
                parallel_n: 128,
                target_s: 0.3,
                jelly_n: 3,
            }
        }
    }
}

/// What every claim function gets.
pub struct Ctx {
    /// Directory of the claim data (out/claims).
    pub dir: PathBuf,
    /// Directory of CLAIMS.md (links are relative to it).
    pub out: PathBuf,
    /// Quick mode.
    pub quick: bool,
    /// Sizes and lengths.
    pub scale: Scale,
    /// Solver tuning.
    pub tuning: Tuning,
    /// Solvers for C6.
    pub solvers: Vec<String>,
    /// The machine.
    pub machine: Machine,
    /// Build a cachegrind-able binary if needed.
    pub build_cachegrind_bin: bool,
    pub(super) base: RefCell<Option<Result<Body, String>>>,
    pub(super) curves: RefCell<HashMap<String, Result<Vec<f64>, String>>>,
}

impl Ctx {
    /// The common state of the convergence claims (built once).
    pub fn base(&self) -> Result<Result<Body, String>, Error> {
        if let Some(b) = self.base.borrow().as_ref() {
            return Ok(b.clone());
        }
        let b = crate::setup::or_note(crate::measure::residuals::common_state(
            "cloth",
            self.scale.conv_n,
            None,
            "natural",
            10,
        ))?;
        *self.base.borrow_mut() = Some(b.clone());
        Ok(b)
    }

    /// The residual curve of `solver` from the common state (computed once per solver).
    pub fn curve(&self, solver: &str) -> Result<Result<Vec<f64>, String>, Error> {
        if let Some(c) = self.curves.borrow().get(solver) {
            return Ok(c.clone());
        }
        let c = match self.base()? {
            Err(note) => Err(note),
            Ok(base) => crate::measure::residuals::curve_for(
                &base,
                solver,
                &self.tuning,
                1,
                self.scale.conv_iters,
            )?,
        };
        self.curves
            .borrow_mut()
            .insert(solver.to_string(), c.clone());
        Ok(c)
    }

    /// The convergence claims' cloth, as the claims name it: `cloth n=23 (529 vertices)`.
    pub fn conv_cloth(&self) -> String {
        let n = self.scale.conv_n;
        format!("cloth n={n} ({} vertices)", n * n)
    }

    /// A path under the claims directory.
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// A claim's files: its CSV, then each plot written under the claims directory as
    /// `<stem>.svg` and `<stem>.png`.
    pub fn files(&self, csv: PathBuf, plots: &[(&Plot, &str)]) -> Result<Vec<PathBuf>, Error> {
        let mut files = vec![csv];
        for (plot, stem) in plots {
            files.extend(plot.save(&self.path(stem))?);
        }
        Ok(files)
    }
}

/// The first columns of a claim CSV with one row per run.
pub const RUN_COLUMNS: [&str; 5] = ["scene", "n", "solver", "iterations", "steps"];

/// [`RUN_COLUMNS`] followed by `more`.
pub fn run_columns<'a>(more: &[&'a str]) -> Vec<&'a str> {
    RUN_COLUMNS
        .iter()
        .copied()
        .chain(more.iter().copied())
        .collect()
}

/// Formats an optional iteration count, with "> max" when it was never reached.
pub fn count_or_more(k: Option<usize>, max: usize) -> String {
    k.map_or(format!("> {max}"), |k| k.to_string())
}
