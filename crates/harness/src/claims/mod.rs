//! `wobble claims`: tests fourteen published claims about PBD solvers on this code and machine
//! and writes CLAIMS.md. One function per claim runs what the claim needs, writes the CSV and
//! plot behind it under `claims/`, and computes its verdict from the measured numbers by the
//! rule it states; nothing in CLAIMS.md is typed by hand.
//!
//! - [`convergence`]: C1, C2, C9, C11 (residual curves from one common state).
//! - [`cost`]: C3, C4 (step time against size and iterations; cache misses).
//! - [`behaviour`]: C5, C6, C8, C10, C12 (stretch, energy, substeps, stiffness, jelly).
//! - [`mass_spring`]: C7 (largest stable stiffness per mass-spring integrator).
//! - [`jacobi`]: C13, C14 (the Jacobi variants' fixed point on the hanging chain and momentum
//!   on the free cloth).

pub mod behaviour;
pub mod convergence;
pub mod cost;
pub mod jacobi;
pub mod mass_spring;

use crate::machine::{self, Machine};
use crate::progress;
use crate::section::{link, rel, Section};
use crate::setup::{all_solvers_csv, parse_solvers, Error, Tuning};
use clap::Args;
use solver_core::Body;
use std::cell::RefCell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Arguments of `wobble claims`.
#[derive(Args, Debug, Clone)]
pub struct ClaimsArgs {
    /// Smaller sizes and shorter runs (about a quarter of the time).
    #[arg(long)]
    pub quick: bool,
    /// Only these claim ids (comma-separated, e.g. C1,C5); CLAIMS.md lists the others as not run.
    #[arg(long)]
    pub only: Option<String>,
    /// Solvers whose energy behaviour C6 checks (the reference gs decides its verdict).
    #[arg(long, default_value_t = all_solvers_csv())]
    pub solvers: String,
    /// Build an x86-64-v3 binary for cachegrind when valgrind cannot run this one (C3).
    #[arg(long)]
    pub build_cachegrind_bin: bool,
    /// Options for particular solvers: Jacobi relaxation, Newton inner sweeps, seed, kernel.
    #[command(flatten)]
    pub tuning: Tuning,
    /// Output directory (CLAIMS.md goes here, data under claims/).
    #[arg(long, default_value = "results")]
    pub out: PathBuf,
}

/// A verdict, computed from measured numbers.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// The measurement agrees with the claim.
    Confirmed,
    /// The measurement contradicts it.
    Refuted,
    /// Some of it holds.
    Partly,
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

/// One tested claim.
#[derive(Debug, Clone)]
pub struct Claim {
    /// C1..C14.
    pub id: &'static str,
    /// Where the claim comes from.
    pub source: &'static str,
    /// The claim.
    pub text: &'static str,
    /// What was run and the figures measured.
    pub measured: String,
    /// The rule that turns the figures into the verdict.
    pub rule: String,
    /// The verdict.
    pub verdict: Verdict,
    /// CSV and plots behind it.
    pub files: Vec<PathBuf>,
}

impl Claim {
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
            rule: "-".into(),
            verdict: Verdict::Untestable(why),
            files: Vec::new(),
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
    /// Steps of C6's energy runs.
    pub energy_steps: usize,
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
                energy_steps: 1000,
                parallel_n: 64,
                target_s: 0.05,
                jelly_n: 2,
            }
        } else {
            Scale {
                conv_n: 23,
                conv_iters: 400,
                stretch_n: 32,
                energy_steps: 10_000,
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
    base: RefCell<Option<Result<Body, String>>>,
    curves: RefCell<HashMap<String, Result<Vec<f64>, String>>>,
}

impl Ctx {
    /// The common state of the convergence claims (built once).
    pub fn base(&self) -> Result<Result<Body, String>, Error> {
        if let Some(b) = self.base.borrow().as_ref() {
            return Ok(b.clone());
        }
        let b = crate::setup::or_note(crate::converge::common_state(
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
            Ok(base) => {
                crate::converge::curve_for(&base, solver, &self.tuning, 1, self.scale.conv_iters)?
            }
        };
        self.curves
            .borrow_mut()
            .insert(solver.to_string(), c.clone());
        Ok(c)
    }

    /// A path under the claims directory.
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }
}

type ClaimFn = fn(&Ctx) -> Result<Claim, Error>;

/// The claims in order.
pub const CLAIMS: &[(&str, ClaimFn)] = &[
    ("C1", convergence::c1),
    ("C2", convergence::c2),
    ("C3", cost::c3),
    ("C4", cost::c4),
    ("C5", behaviour::c5),
    ("C6", behaviour::c6),
    ("C7", mass_spring::c7),
    ("C8", behaviour::c8),
    ("C9", convergence::c9),
    ("C10", behaviour::c10),
    ("C11", convergence::c11),
    ("C12", behaviour::c12),
    ("C13", jacobi::c13),
    ("C14", jacobi::c14),
];

/// Runs the claims and writes CLAIMS.md.
pub fn run(a: &ClaimsArgs) -> Result<Section, Error> {
    let solvers = parse_solvers(&a.solvers)?;
    a.tuning.check()?;
    let only: Option<Vec<String>> = match &a.only {
        None => None,
        Some(list) => {
            let ids: Vec<String> = list
                .split(',')
                .map(|s| s.trim().to_uppercase())
                .filter(|s| !s.is_empty())
                .collect();
            if let Some(bad) = ids.iter().find(|id| !CLAIMS.iter().any(|(c, _)| c == id)) {
                return Err(Error::Arg(format!(
                    "unknown claim id '{bad}'; expected C1..C{}",
                    CLAIMS.len()
                )));
            }
            Some(ids)
        }
    };
    let ctx = Ctx {
        dir: a.out.join("claims"),
        out: a.out.clone(),
        quick: a.quick,
        scale: Scale::new(a.quick),
        tuning: a.tuning.clone(),
        solvers,
        machine: machine::probe(),
        build_cachegrind_bin: a.build_cachegrind_bin,
        base: RefCell::new(None),
        curves: RefCell::new(HashMap::new()),
    };
    std::fs::create_dir_all(&ctx.dir).map_err(|e| crate::setup::io_error(&ctx.dir, e))?;
    let pb = progress::bar(CLAIMS.len(), "claims");
    let mut claims = Vec::new();
    for (id, f) in CLAIMS {
        pb.set_message(id.to_string());
        let c = if only.as_ref().is_some_and(|o| !o.iter().any(|x| x == id)) {
            let mut c = f_skipped(id);
            c.verdict = Verdict::Untestable("not run (excluded with --only)".into());
            c
        } else {
            f(&ctx)?
        };
        claims.push(c);
        pb.inc(1);
    }
    pb.finish_and_clear();
    let md = markdown(&claims, &ctx);
    let path = a.out.join("CLAIMS.md");
    std::fs::write(&path, md).map_err(|e| crate::setup::io_error(&path, e))?;
    let mut sec = Section::new("Claims");
    sec.add_files([path.clone()]);
    for c in &claims {
        sec.add_files(c.files.iter().cloned());
    }
    sec.line(format!(
        "{} published claims tested on this code ({} mode); details, rules and data in {}.\n",
        CLAIMS.len(),
        if a.quick { "quick" } else { "full" },
        link(&path, &a.out)
    ));
    sec.line(summary_table(&claims, &a.out));
    Ok(sec)
}

fn f_skipped(id: &'static str) -> Claim {
    Claim::untestable(id, "-", "-", String::new())
}

fn one_line(s: &str) -> String {
    s.replace('\n', " ").replace('|', "/")
}

/// The summary table (id, verdict, measured figure).
pub fn summary_table(claims: &[Claim], out: &Path) -> String {
    let mut t = vec![
        "| id | verdict | measured |".to_string(),
        "| --- | --- | --- |".to_string(),
    ];
    for c in claims {
        let v = match &c.verdict {
            Verdict::Untestable(why) => format!("untestable-here ({})", one_line(why)),
            v => v.word().to_string(),
        };
        let _ = out;
        t.push(format!(
            "| {} | **{}** | {} |",
            c.id,
            v,
            one_line(&c.measured)
        ));
    }
    t.join("\n")
}

/// CLAIMS.md.
pub fn markdown(claims: &[Claim], ctx: &Ctx) -> String {
    let mut s = String::new();
    s.push_str("# Claims tested\n\n");
    s.push_str(&format!(
        "Written by `wobble claims{}`: every figure below was measured by that run and every verdict \
         computed from the figures by the rule stated beside it (see `crates/harness/src/claims/`). \
         Verdicts: confirmed, refuted, partly, or untestable-here (with why).\n\n",
        if ctx.quick { " --quick" } else { "" }
    ));
    s.push_str("Machine:\n\n");
    s.push_str(&ctx.machine.markdown());
    s.push_str("\n## Summary\n\n");
    s.push_str(&summary_table(claims, &ctx.out));
    s.push('\n');
    for c in claims {
        s.push_str(&format!("\n## {}\n\n", c.id));
        s.push_str(&format!("- **Source:** {}\n", c.source));
        s.push_str(&format!("- **Claim:** {}\n", c.text));
        s.push_str(&format!("- **Measured:** {}\n", c.measured));
        s.push_str(&format!("- **Rule:** {}\n", c.rule));
        match &c.verdict {
            Verdict::Untestable(why) => {
                s.push_str(&format!("- **Verdict:** untestable-here: {why}\n"))
            }
            v => s.push_str(&format!("- **Verdict:** {}\n", v.word())),
        }
        if !c.files.is_empty() {
            let links: Vec<String> = c.files.iter().map(|f| link(f, &ctx.out)).collect();
            s.push_str(&format!("- **Data:** {}\n", links.join(", ")));
            if let Some(png) = c
                .files
                .iter()
                .find(|f| f.extension().is_some_and(|e| e == "png"))
            {
                s.push_str(&format!("\n![{} plot]({})\n", c.id, rel(png, &ctx.out)));
            }
        }
    }
    s
}

/// Formats an optional iteration count, with "> max" when it was never reached.
pub fn count_or_more(k: Option<usize>, max: usize) -> String {
    k.map_or(format!("> {max}"), |k| k.to_string())
}
