//! `wobble claims`: tests twenty published claims about PBD solvers on this code and machine
//! and writes CLAIMS.md. One function per claim runs what the claim needs and writes the CSV
//! and plot behind it under `claims/`; one engine ([`engine`]) computes every verdict from
//! those CSVs; nothing in CLAIMS.md is typed by hand.
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
//! - [`engine`]: the claims as data (source's assertion and scope, quantity, comparison,
//!   tolerance with its reason and sweep) and the one engine that decides every verdict from
//!   the CSVs alone, with the shared rules (stability, convergence measure, level, crossing);
//!   `--verify DIR` runs it on a results directory and compares with its CLAIMS.md.
//! - [`errors`]: iteration error and formulation error, apart (C1, C5, C10).
//! - [`rules`]: the claim-specific comparisons the engine applies, as pure functions;
//!   [`timing`]: interleaved timing; [`sources`]: the quotes and citations.
//!
//! The claim functions measure and write; they do not judge. `run` calls [`engine::judge`] on
//! what each wrote, so the verdict printed is the one `--verify` recomputes from the CSVs.

pub mod behaviour;
pub mod budget;
pub mod claim;
pub mod classic;
pub mod convergence;
pub mod cost;
pub mod damping;
pub mod engine;
pub mod errors;
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
    /// Run nothing: recompute every verdict from DIR/claims/*.csv alone and compare with
    /// DIR/CLAIMS.md; exits non-zero where they disagree.
    #[arg(long, value_name = "DIR")]
    pub verify: Option<PathBuf>,
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
    if let Some(dir) = &a.verify {
        return verify(dir);
    }
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
        let mut c = if only.as_ref().is_some_and(|o| !o.iter().any(|x| x == e.id)) {
            Claim::untestable(e.id, "-", "-", "not run (excluded with --only)".into())
        } else {
            (e.run)(&ctx)?
        };
        decide(&mut c, &ctx.dir)?;
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

/// `wobble claims --verify DIR`: [`engine::verify`], its lines printed; an error naming the
/// claims where DIR/CLAIMS.md and DIR's CSVs disagree.
fn verify(dir: &Path) -> Result<Section, Error> {
    let (bad, lines) = engine::verify(dir)?;
    for l in &lines {
        println!("{l}");
    }
    if bad.is_empty() {
        println!(
            "all {} verdicts of {} agree with its CSVs",
            lines.len(),
            dir.join("CLAIMS.md").display()
        );
        Ok(Section::new("Claims verified"))
    } else {
        Err(Error::Arg(format!(
            "{} of {} verdicts of {} disagree with its CSVs: {}",
            bad.len(),
            lines.len(),
            dir.join("CLAIMS.md").display(),
            bad.iter()
                .map(|d| format!(
                    "{}: CLAIMS.md says \"{}\", the CSVs give \"{}\"",
                    d.id, d.written, d.recomputed
                ))
                .collect::<Vec<_>>()
                .join("; ")
        )))
    }
}

/// Sets the claim's verdict and deciding figure from [`engine::judge`] on the CSVs its
/// function wrote under `dir` (an untestable claim keeps its reason).
fn decide(c: &mut Claim, dir: &Path) -> Result<(), Error> {
    if matches!(c.verdict, Verdict::Untestable(_)) {
        return Ok(());
    }
    let spec = engine::spec(c.id)
        .ok_or_else(|| Error::Arg(format!("claim {} has no record in engine::SPECS", c.id)))?;
    let j = engine::judge(spec, dir)?;
    c.verdict = j.stated.verdict.clone();
    c.decision = Decision::exact(j.stated.figure.clone(), tolerance_text(spec));
    c.judgement = Some(j);
    Ok(())
}

/// A claim's tolerance as CLAIMS.md states it: what it bounds, its value, why, and its sweep.
fn tolerance_text(spec: &engine::Spec) -> String {
    match spec.tolerance {
        None => "none (the comparison is exact)".into(),
        Some(t) => format!(
            "{} = {} ({}); swept over {}",
            t.what,
            t.fmt.show(t.value),
            t.reason,
            t.sweep
                .iter()
                .map(|&x| t.fmt.show(x))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// The verdict as stated: over the sweep where the engine judged it.
fn headline(c: &Claim) -> String {
    match &c.judgement {
        Some(j) => j.headline.clone(),
        None => verdict_text(&c.verdict),
    }
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
            } else {
                format!(": {}", d.figure)
            };
            format!("- **{}** {}{}", c.id, headline(c), fig)
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
            "verdict_at_stated_tolerance",
            "over_the_sweep",
            "figure",
            "tolerance",
        ],
    )?;
    for c in claims {
        w.record(&[
            c.id.to_string(),
            entry(c.id).map_or(c.source.to_string(), |e| {
                let mut cites: Vec<&str> = e.sources.iter().map(|s| s.cite).collect();
                cites.dedup();
                cites.join("; ")
            }),
            c.judgement
                .as_ref()
                .map_or(c.verdict.word().to_string(), |j| j.word.clone()),
            c.verdict.word().to_string(),
            one_line(&headline(c)),
            one_line(&c.decision.figure),
            one_line(&c.decision.threshold),
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
         computed from its CSVs by one engine (`crates/harness/src/commands/claims/engine.rs`), which \
         `wobble claims --verify DIR` reruns on a results directory's CSVs alone. Each claim states \
         what its source asserts and how far, the quantity measured, the comparison (naming the shared \
         rule: stability, convergence measure = iterations to a level, level = the reference solver's \
         residual after 20 iterations, crossing), the tolerance with its reason and the sweep it is \
         computed over. A verdict is one word only where it holds over the whole sweep; otherwise it \
         says where it flips. Words: confirmed, refuted, partly, inconclusive (the interval of a timed \
         figure straddles the threshold), or untestable-here (with why). Timed figures come from interleaved, \
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
        if let Some(sp) = engine::spec(c.id) {
            s.push_str(&format!("- **Section:** {}\n", sp.section));
            s.push_str(&format!("- **The source asserts:** {}\n", sp.asserts));
            s.push_str(&format!("- **Its scope:** {}\n", sp.scope));
            if !sp.errors.is_empty() {
                s.push_str(&format!("- **Which error it speaks of:** {}\n", sp.errors));
            }
        }
        s.push_str(&format!("- **Tested:** {}\n", c.text));
        s.push_str(&format!("- **Measured:** {}\n", c.measured));
        if let Some(sp) = engine::spec(c.id) {
            s.push_str(&format!("- **Quantity:** {}\n", sp.quantity));
            s.push_str(&format!("- **Comparison:** {}\n", sp.comparison));
            s.push_str(&format!("- **Tolerance:** {}\n", tolerance_text(sp)));
        }
        s.push_str(&format!("- **Verdict:** {}\n", headline(c)));
        if let Some(j) = &c.judgement {
            if !j.sweep.is_empty() {
                let fmt = engine::spec(c.id)
                    .and_then(|sp| sp.tolerance)
                    .map_or(engine::Fmt::Plain, |t| t.fmt);
                s.push_str(&format!(
                    "- **Over the sweep:** {}\n",
                    j.sweep
                        .iter()
                        .map(|(t, v)| format!("{} {}", fmt.show(*t), v.word()))
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
        }
        if let Some((wall, cpu)) = seconds.get(k) {
            s.push_str(&format!(
                "- **Run time:** {wall:.1} s wall, {cpu:.1} s CPU\n"
            ));
        }
        if c.decision.figure != "-" {
            s.push_str(&format!(
                "- **Deciding figure (at the stated tolerance):** {}\n",
                c.decision.figure
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
