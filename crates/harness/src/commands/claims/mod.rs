//! `wobble claims`: tests twenty published claims about PBD solvers on this code and machine
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
//! - [`classic`]: C15-C18 (rho(GS) = rho(J)^2, plain PBD stiffness, Gauss-Seidel ordering,
//!   Jacobi averaging and relaxation).
//! - [`budget`]: C19 (colored Gauss-Seidel against Jacobi-type solvers at 1-4 iterations).
//! - [`damping`]: C20 (numerical damping of substeps against iterations).
//! - [`rules`]: every verdict rule as a pure function; [`timing`]: interleaved timing;
//!   [`sources`]: the quotes and citations.

pub mod behaviour;
pub mod budget;
pub mod claim;
pub mod classic;
pub mod convergence;
pub mod cost;
pub mod damping;
pub mod jacobi;
pub mod mass_spring;
pub mod rules;
pub mod sources;
pub mod timing;

use crate::measure::machine;
use crate::output::progress;
use crate::output::section::{link, rel, Section};
use crate::setup::{check_solvers, Error, SolverArg, Tuning, ALL_SOLVERS};
pub use claim::{count_or_more, run_columns, Claim, Ctx, Decision, Scale, Verdict, RUN_COLUMNS};
use clap::Args;
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
    /// Solvers whose energy behaviour C6 checks (a gs failure refutes it, another solver's makes it partly).
    #[arg(long, value_enum, value_delimiter = ',', default_value = ALL_SOLVERS)]
    pub solvers: Vec<SolverArg>,
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

type ClaimFn = fn(&Ctx) -> Result<Claim, Error>;

/// One claim's entry: its id, the function that tests it and the sources it is quoted from.
pub struct Entry {
    /// C1..C20.
    pub id: &'static str,
    /// Runs it.
    pub run: ClaimFn,
    /// Where it comes from, quoted or paraphrased.
    pub sources: &'static [sources::Source],
}

impl Entry {
    /// Claim `id`, tested by `run`, quoted from `sources`.
    const fn new(id: &'static str, run: ClaimFn, sources: &'static [sources::Source]) -> Entry {
        Entry { id, run, sources }
    }
}

/// The claims in order.
pub const CLAIMS: &[Entry] = &[
    Entry::new("C1", convergence::c1, &[sources::C1]),
    Entry::new("C2", convergence::c2, &[sources::C2]),
    Entry::new("C3", cost::c3, &[sources::C3]),
    Entry::new("C4", cost::c4, &[sources::C4]),
    Entry::new("C5", behaviour::c5, &[sources::C5]),
    Entry::new("C6", behaviour::c6, &sources::C6),
    Entry::new("C7", mass_spring::c7, &sources::C7),
    Entry::new("C8", behaviour::c8, &[sources::C8]),
    Entry::new("C9", convergence::c9, &[sources::C9]),
    Entry::new("C10", behaviour::c10, &sources::C10),
    Entry::new("C11", convergence::c11, &[sources::C11]),
    Entry::new("C12", behaviour::c12, &[sources::C12]),
    Entry::new("C13", jacobi::c13, &[sources::C13]),
    Entry::new("C14", jacobi::c14, &[sources::C14]),
    Entry::new("C15", classic::c15, &[sources::C15]),
    Entry::new("C16", classic::c16, &[sources::C16]),
    Entry::new("C17", classic::c17, &[sources::C17]),
    Entry::new("C18", classic::c18, &[sources::C18]),
    Entry::new("C19", budget::c19, &[sources::C19]),
    Entry::new("C20", damping::c20, &[sources::C20]),
];

/// Parses `--only`: the upper-cased ids, each checked against [`CLAIMS`].
pub fn parse_only(list: &str) -> Result<Vec<String>, Error> {
    let ids: Vec<String> = list
        .split(',')
        .map(|s| s.trim().to_uppercase())
        .filter(|s| !s.is_empty())
        .collect();
    if let Some(bad) = ids
        .iter()
        .find(|id| !CLAIMS.iter().any(|e| e.id == id.as_str()))
    {
        return Err(Error::Arg(format!(
            "unknown claim id '{bad}'; expected C1..C{}",
            CLAIMS.len()
        )));
    }
    Ok(ids)
}

/// Runs the claims and writes CLAIMS.md and claims.csv.
pub fn run(a: &ClaimsArgs) -> Result<Section, Error> {
    check_solvers(&a.solvers)?;
    let solvers = SolverArg::names(&a.solvers);
    a.tuning.check()?;
    let only = a.only.as_deref().map(parse_only).transpose()?;
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
    let mut seconds = Vec::new();
    for e in CLAIMS {
        pb.set_message(e.id.to_string());
        let (t0, c0) = (std::time::Instant::now(), cpu_seconds());
        let c = if only.as_ref().is_some_and(|o| !o.iter().any(|x| x == e.id)) {
            Claim::untestable(e.id, "-", "-", "not run (excluded with --only)".into())
        } else {
            (e.run)(&ctx)?
        };
        seconds.push((t0.elapsed().as_secs_f64(), cpu_seconds() - c0));
        claims.push(c);
        pb.inc(1);
    }
    pb.finish_and_clear();
    let md = markdown(&claims, &seconds, &ctx);
    let path = a.out.join("CLAIMS.md");
    std::fs::write(&path, md).map_err(|e| crate::setup::io_error(&path, e))?;
    let csv = a.out.join("claims.csv");
    write_csv(&csv, &claims)?;
    let mut sec = Section::new("Claims");
    sec.add_files([path.clone(), csv.clone()]);
    for c in &claims {
        sec.add_files(c.files.iter().cloned());
    }
    sec.line(format!(
        "{} published claims tested on this code ({} mode); quotes, rules and data in {}, one row per claim in {}.\n",
        CLAIMS.len(),
        if a.quick { "quick" } else { "full" },
        link(&path, &a.out),
        link(&csv, &a.out)
    ));
    sec.line(summary_lines(&claims));
    Ok(sec)
}

/// CPU seconds used so far by this process and its waited-for children (user + system).
fn cpu_seconds() -> f64 {
    let mut total = 0.0;
    for who in [libc::RUSAGE_SELF, libc::RUSAGE_CHILDREN] {
        // SAFETY: getrusage writes one rusage struct into the zeroed one it is given.
        let mut u: libc::rusage = unsafe { std::mem::zeroed() };
        if unsafe { libc::getrusage(who, &mut u) } == 0 {
            for t in [u.ru_utime, u.ru_stime] {
                total += t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
            }
        }
    }
    total
}

/// The entry of claim `id`.
pub fn entry(id: &str) -> Option<&'static Entry> {
    CLAIMS.iter().find(|e| e.id == id)
}

fn one_line(s: &str) -> String {
    s.replace('\n', " ").replace('|', "/")
}

/// The verdict as written in summaries: the word, with why for untestable claims.
fn verdict_text(v: &Verdict) -> String {
    match v {
        Verdict::Untestable(why) => format!("untestable-here ({})", one_line(why)),
        v => v.word().to_string(),
    }
}

/// The summary of findings: one line per claim, its verdict and the figure it rests on.
pub fn summary_lines(claims: &[Claim]) -> String {
    claims
        .iter()
        .map(|c| {
            let d = &c.decision;
            let fig = if d.figure == "-" {
                String::new()
            } else if d.threshold == "-" {
                format!(": {}", d.figure)
            } else {
                format!(": {} (threshold {})", d.figure, d.threshold)
            };
            format!("- **{}** {}{}", c.id, verdict_text(&c.verdict), fig)
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// `claims.csv`: id, source, verdict, the deciding figure, its threshold and interval.
pub fn write_csv(path: &Path, claims: &[Claim]) -> Result<(), Error> {
    let mut w = crate::output::csv::RowWriter::create(
        path,
        &[
            "id",
            "source",
            "verdict",
            "figure",
            "threshold",
            "interval_lo",
            "interval_hi",
        ],
    )?;
    let num = |x: f64| {
        if x.is_finite() {
            x.to_string()
        } else {
            String::new()
        }
    };
    for c in claims {
        w.record(&[
            c.id.to_string(),
            entry(c.id).map_or(c.source.to_string(), |e| {
                let mut cites: Vec<&str> = e.sources.iter().map(|s| s.cite).collect();
                cites.dedup();
                cites.join("; ")
            }),
            c.verdict.word().to_string(),
            one_line(&c.decision.figure),
            one_line(&c.decision.threshold),
            num(c.decision.lo),
            num(c.decision.hi),
        ])?;
    }
    Ok(())
}

/// CLAIMS.md; `seconds` holds each claim's wall and CPU seconds (this process and its
/// children), in the order of `claims`.
pub fn markdown(claims: &[Claim], seconds: &[(f64, f64)], ctx: &Ctx) -> String {
    let mut s = String::new();
    s.push_str("# Claims tested\n\n");
    s.push_str(&format!(
        "Written by `wobble claims{}`: every figure below was measured by that run and every verdict \
         computed from the figures by the rule stated beside it (see `crates/harness/src/commands/claims/`). \
         Verdicts: confirmed, refuted, partly, inconclusive (the interval of a timed figure straddles \
         the rule's threshold), or untestable-here (with why). Timed figures come from interleaved, \
         repeated runs and carry a 95% order-statistic interval of the median (`measure/paired.rs`); the \
         machine is shared, so timings are noisy and the intervals say how much.\n\n",
        if ctx.quick { " --quick" } else { "" }
    ));
    s.push_str("## Summary of findings\n\n");
    s.push_str(&summary_lines(claims));
    s.push_str("\n\nThe same, for programs: [claims.csv](claims.csv).\n");
    s.push_str("\n## Machine and code\n\n");
    s.push_str(&ctx.machine.markdown());
    for (k, c) in claims.iter().enumerate() {
        s.push_str(&format!("\n## {}\n\n", c.id));
        if let Some(e) = entry(c.id) {
            for src in e.sources {
                s.push_str(&format!("- **Source:** {}\n", src.markdown()));
            }
        }
        s.push_str(&format!("- **Tested:** {}\n", c.text));
        s.push_str(&format!("- **Measured:** {}\n", c.measured));
        s.push_str(&format!("- **Rule:** {}\n", c.rule));
        s.push_str(&format!("- **Verdict:** {}\n", verdict_text(&c.verdict)));
        if let Some((wall, cpu)) = seconds.get(k) {
            s.push_str(&format!(
                "- **Run time:** {wall:.1} s wall, {cpu:.1} s CPU\n"
            ));
        }
        if c.decision.figure != "-" {
            s.push_str(&format!(
                "- **Deciding figure:** {} (threshold {})\n",
                c.decision.figure, c.decision.threshold
            ));
        }
        if !c.files.is_empty() {
            let links: Vec<String> = c.files.iter().map(|f| link(f, &ctx.out)).collect();
            s.push_str(&format!("- **Data:** {}\n", links.join(", ")));
            for png in c
                .files
                .iter()
                .filter(|f| f.extension().is_some_and(|e| e == "png"))
            {
                s.push_str(&format!("\n![{} plot]({})\n", c.id, rel(png, &ctx.out)));
            }
        }
    }
    s
}
