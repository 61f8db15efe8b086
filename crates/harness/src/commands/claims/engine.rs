//! The one verdict engine of `wobble claims`: every claim as a record ([`Spec`]: what its
//! source asserts and how far, what is measured, the comparison, the tolerance with its reason
//! and the range it is swept over) and one function, [`judge`], that decides every claim from
//! the CSVs its experiment wrote and nothing else. `wobble claims` writes the CSVs, then calls
//! [`judge`] on them; `wobble claims --verify DIR` calls the same [`judge`] on DIR's CSVs and
//! compares with DIR/CLAIMS.md, so the verdict a referee recomputes is the one printed.
//!
//! The rules several claims share are named here and are the only ones of their kind:
//! - [`stable`], the stability rule (C6, C19);
//! - [`to_level`], the convergence measure: iterations to a residual level, as a multiple of
//!   the budget that set the level (C2, C9, C11, C17);
//! - [`level_of`], the level-picking rule: the residual the reference solver reaches after
//!   [`LEVEL_BUDGET`] iterations;
//! - [`crossing`], the iteration count from which a figure stays within a tolerance (C5, C12);
//! - [`over_sweep`], how a verdict is stated over the tolerance's sweep.
//!
//! A claim's verdict is computed at every tolerance of its sweep; it is stated as one word only
//! where the word holds over the whole sweep, and otherwise as the ranges where each word holds.

use super::claim::{Judgement, Outcome, Verdict};
use super::rules::{self, parts, side_holds, slope_of_ratio};
use crate::measure::paired::Interval;
use crate::setup::{io_error, Error};
use std::path::{Path, PathBuf};

// ------------------------------------------------------------------------------------------
// The records.

/// How a tolerance is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fmt {
    /// A fraction written as a percentage.
    Percent,
    /// A plain number (a factor, a slope).
    Plain,
    /// A small number in scientific notation.
    Sci,
}

impl Fmt {
    /// `x` as this format writes it.
    pub fn show(self, x: f64) -> String {
        match self {
            // Rounded to 1e-6 so that 0.05 prints as 5%, not 5.000000000000001%.
            Fmt::Percent => format!("{}%", (100.0 * x * 1e6).round() / 1e6),
            Fmt::Plain => format!("{x}"),
            Fmt::Sci => format!("{x:e}"),
        }
    }
}

/// The tolerance a claim's comparison needs: what it bounds, its value, why that value, and the
/// values it is swept over (ascending, the stated value among them).
#[derive(Debug, Clone, Copy)]
pub struct Tolerance {
    /// What it bounds, e.g. "the mean stretch above the converged run's".
    pub what: &'static str,
    /// The stated value.
    pub value: f64,
    /// Why this value.
    pub reason: &'static str,
    /// The values the verdict is also computed at.
    pub sweep: &'static [f64],
    /// How it is written.
    pub fmt: Fmt,
}

/// One claim as data.
#[derive(Debug, Clone, Copy)]
pub struct Spec {
    /// C1..C20.
    pub id: &'static str,
    /// Where in the source (section, or the seed text's part).
    pub section: &'static str,
    /// What the source itself asserts, in one sentence.
    pub asserts: &'static str,
    /// How far it asserts it: what it speaks of and what it does not.
    pub scope: &'static str,
    /// Which error the source speaks about (the iteration error, a solver's distance to its
    /// own converged answer, or the formulation's, that answer's distance to the exact implicit
    /// step), or, where the quantity is no such distance, that it is neither and what it is.
    pub errors: &'static str,
    /// The quantity measured.
    pub quantity: &'static str,
    /// The comparison that decides, naming the shared rule it uses.
    pub comparison: &'static str,
    /// The tolerance, if the comparison needs one (None: the comparison is exact).
    pub tolerance: Option<Tolerance>,
}

// ------------------------------------------------------------------------------------------
// The shared rules.

/// The stability rule's bound on the growth of a run's largest edge stretch (its second half's
/// peak over its first half's): a bounded body swings about a level, a body coming apart keeps
/// stretching. 10% is above the swing-to-swing change of the stable runs (their growth stays
/// below 1.0 in c6.csv) and far below the growth of the runs that come apart (1.3x to 3x).
pub const STRETCH_GROWTH: f64 = 1.1;
/// The stability rule's bound on the growth of a run's energy above its rest state (the second
/// half's peak over the first's): an undamped conservative run keeps its level, a pumping one
/// gains; 1e-3 is rounding, not physics.
pub const ENERGY_GROWTH: f64 = 1.0 + 1e-3;

/// What the stability rule needs of one run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Health {
    /// The run finished (no step refused as diverged).
    pub finished: bool,
    /// The largest rise of its energy above its start, in the claim's unit of energy.
    pub rise: f64,
    /// Its energy growth (second half's peak above rest over the first half's), where measured.
    pub energy_growth: Option<f64>,
    /// Its largest stretch's growth (second half's peak over the first half's).
    pub stretch_growth: f64,
}

/// The stability rule: a run is stable if it finished, its energy rose above its start by at
/// most `rise_bound`, its energy did not grow ([`ENERGY_GROWTH`], where measured) and its edges
/// stayed bounded ([`STRETCH_GROWTH`]). A figure that is NaN fails its check.
pub fn stable(h: &Health, rise_bound: f64) -> bool {
    unstable_because(h, rise_bound).is_none()
}

/// Whether `x` is at most `bound`; false for a NaN, so that a figure that could not be
/// measured fails the check it is put to.
pub fn within_bound(x: f64, bound: f64) -> bool {
    x <= bound
}

/// Why [`stable`] fails a run, in words; None if it is stable.
pub fn unstable_because(h: &Health, rise_bound: f64) -> Option<String> {
    if !h.finished {
        Some("diverged".into())
    } else if !within_bound(h.stretch_growth, STRETCH_GROWTH) {
        Some(format!(
            "largest stretch still growing, {:.2}x over the second half",
            h.stretch_growth
        ))
    } else if h
        .energy_growth
        .is_some_and(|g| !within_bound(g, ENERGY_GROWTH))
    {
        Some(format!(
            "energy growing, {:.3}x over the second half",
            h.energy_growth.unwrap_or(f64::NAN)
        ))
    } else if !within_bound(h.rise, rise_bound) {
        Some(format!("energy rose {:.3e} above the start", h.rise))
    } else {
        None
    }
}

/// The iteration budget that sets a convergence claim's level: 20, the edge-constraint count
/// of the Godot article's claims and a typical real-time budget per frame.
pub const LEVEL_BUDGET: usize = 20;

/// The level-picking rule: the residual `reference` has after `budget` iterations (None if it
/// ran fewer).
pub fn level_of(reference: &[f64], budget: usize) -> Option<f64> {
    reference.get(budget).copied().filter(|r| r.is_finite())
}

/// First iteration k >= 1 at which `curve` is at or below `level`.
pub fn iterations_to(curve: &[f64], level: f64) -> Option<usize> {
    curve
        .iter()
        .skip(1)
        .position(|&r| r <= level)
        .map(|p| p + 1)
}

/// The convergence measure: the iterations another solver needs to reach the level the
/// reference reached in `budget` ([`level_of`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ToLevel {
    /// The level.
    pub level: f64,
    /// The reference's iterations to it.
    pub budget: usize,
    /// The other's iterations to it (None: not within its run).
    pub other: Option<usize>,
    /// The iterations the other ran.
    pub ran: usize,
}

/// The convergence measure of `other` against `reference` ([`ToLevel`]); None if the
/// reference ran fewer than `budget` iterations.
pub fn to_level(reference: &[f64], other: &[f64], budget: usize) -> Option<ToLevel> {
    let level = level_of(reference, budget)?;
    Some(ToLevel {
        level,
        budget,
        other: iterations_to(other, level),
        ran: other.len().saturating_sub(1),
    })
}

impl ToLevel {
    /// The other's iterations over the reference's (a lower bound when not reached).
    pub fn ratio(&self) -> f64 {
        self.other.unwrap_or(self.ran + 1) as f64 / self.budget as f64
    }

    /// Whether the other needs at least `f` times the reference's iterations; None when it did
    /// not reach the level and its run was too short to tell.
    pub fn at_least(&self, f: f64) -> Option<bool> {
        match self.other {
            Some(_) => Some(self.ratio() >= f),
            None if self.ratio() >= f => Some(true),
            None => None,
        }
    }

    /// Whether the other needs at most `f` times the reference's iterations.
    pub fn at_most(&self, f: f64) -> Option<bool> {
        match self.other {
            Some(_) => Some(self.ratio() <= f),
            None if self.ratio() > f => Some(false),
            None => None,
        }
    }

    /// "k/budget = r" or "> ran/budget".
    pub fn show(&self) -> String {
        match self.other {
            Some(k) => format!("{k}/{} = {:.2}", self.budget, self.ratio()),
            None => format!("> {}/{} (not reached)", self.ran, self.budget),
        }
    }
}

/// Where a figure measured at ascending iteration counts comes within a tolerance for good.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Crossing {
    /// Already within at the first tested count.
    AtMost(f64),
    /// Between two tested counts, interpolated (log of the count, linear in the figure).
    At(f64),
    /// Not within at the last tested count.
    Beyond(f64),
}

/// The iteration count from which `figure` (measured at ascending counts `its`) stays at or
/// below `tol` at every higher tested count, interpolated between the last count above and the
/// first within, so that the grid of tested counts does not decide.
pub fn crossing(its: &[usize], figure: &[f64], tol: f64) -> Crossing {
    let n = its.len().min(figure.len());
    let mut first = n;
    for i in (0..n).rev() {
        if figure[i] <= tol {
            first = i;
        } else {
            break;
        }
    }
    if n == 0 || first == n {
        return Crossing::Beyond(its.get(n.wrapping_sub(1)).map_or(0.0, |&k| k as f64));
    }
    if first == 0 {
        return Crossing::AtMost(its[0] as f64);
    }
    let (k0, k1) = (its[first - 1] as f64, its[first] as f64);
    let (e0, e1) = (figure[first - 1], figure[first]);
    let t = if e0 > e1 { (e0 - tol) / (e0 - e1) } else { 1.0 };
    Crossing::At((k0.ln() + t.clamp(0.0, 1.0) * (k1.ln() - k0.ln())).exp())
}

impl Crossing {
    /// Whether the count lies in `[lo, hi)`: None when a bound cannot tell.
    pub fn within(&self, lo: f64, hi: f64) -> bool {
        match *self {
            Crossing::At(k) => k >= lo && k < hi,
            // Within already at the first count: the count needed is at most it.
            Crossing::AtMost(k) => k >= lo && k < hi && k <= lo,
            Crossing::Beyond(_) => false,
        }
    }

    /// In words.
    pub fn show(&self) -> String {
        match *self {
            Crossing::At(k) => format!("{k:.1} iterations"),
            Crossing::AtMost(k) => format!("at most {k} iterations (the first tested)"),
            Crossing::Beyond(k) => format!("more than {k} iterations (never within)"),
        }
    }
}

/// The verdict over the sweep, in words: one word where it holds over the whole sweep,
/// otherwise the ranges where each holds ("refuted from 1% to 3%; confirmed from 5% to 10%").
pub fn over_sweep(sweep: &[(f64, Verdict)], fmt: Fmt) -> String {
    let Some(((first, v0), (last, _))) = sweep.first().zip(sweep.last()) else {
        return String::new();
    };
    if sweep.iter().all(|(_, v)| v == v0) {
        return format!(
            "{} over the whole sweep ({} to {})",
            v0.word(),
            fmt.show(*first),
            fmt.show(*last)
        );
    }
    let mut segments: Vec<(f64, f64, &Verdict)> = Vec::new();
    for (t, v) in sweep {
        match segments.last_mut() {
            Some(s) if s.2 == v => s.1 = *t,
            _ => segments.push((*t, *t, v)),
        }
    }
    let words: Vec<String> = segments
        .iter()
        .map(|(a, b, v)| {
            if a == b {
                format!("{} at {}", v.word(), fmt.show(*a))
            } else {
                format!("{} from {} to {}", v.word(), fmt.show(*a), fmt.show(*b))
            }
        })
        .collect();
    format!("depends on the tolerance: {}", words.join("; "))
}

// ------------------------------------------------------------------------------------------
// Judging.

type Measure = Box<dyn Fn(f64) -> Outcome>;

/// The record of claim `id`.
pub fn spec(id: &str) -> Option<&'static Spec> {
    SPECS.iter().find(|s| s.id == id)
}

/// Decides claim `spec` from the CSVs under `dir` (the claims directory, `out/claims`) alone.
pub fn judge(spec: &Spec, dir: &Path) -> Result<Judgement, Error> {
    let m = measure(spec.id, dir)?;
    Ok(decide(spec, &*m))
}

/// Applies a measurement at the stated tolerance and over the sweep.
fn decide(spec: &Spec, m: &dyn Fn(f64) -> Outcome) -> Judgement {
    match spec.tolerance {
        None => {
            let stated = m(f64::NAN);
            let word = stated.verdict.word().to_string();
            Judgement {
                headline: word.clone(),
                word,
                stated,
                sweep: Vec::new(),
            }
        }
        Some(t) => {
            let stated = m(t.value);
            let sweep: Vec<(f64, Verdict)> = t.sweep.iter().map(|&x| (x, m(x).verdict)).collect();
            let uniform = sweep.iter().all(|(_, v)| *v == stated.verdict);
            let headline = format!(
                "{} (at the stated {}: {})",
                over_sweep(&sweep, t.fmt),
                t.fmt.show(t.value),
                stated.verdict.word()
            );
            Judgement {
                word: if uniform {
                    stated.verdict.word().to_string()
                } else {
                    "depends-on-tolerance".into()
                },
                headline,
                stated,
                sweep,
            }
        }
    }
}

/// A CSV read back: its header and rows as text.
pub struct Table {
    path: PathBuf,
    header: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl Table {
    /// Reads `path`; a missing or malformed file is an error naming it.
    pub fn read(path: &Path) -> Result<Table, Error> {
        let mut r = csv::Reader::from_path(path).map_err(|e| io_error(path, e))?;
        let header = r
            .headers()
            .map_err(|e| io_error(path, e))?
            .iter()
            .map(str::to_string)
            .collect();
        let mut rows = Vec::new();
        for rec in r.records() {
            let rec = rec.map_err(|e| io_error(path, e))?;
            rows.push(rec.iter().map(str::to_string).collect());
        }
        Ok(Table {
            path: path.to_path_buf(),
            header,
            rows,
        })
    }

    fn bad(&self, what: impl std::fmt::Display) -> Error {
        io_error(&self.path, what)
    }

    fn col(&self, name: &str) -> Result<usize, Error> {
        self.header
            .iter()
            .position(|h| h == name)
            .ok_or_else(|| self.bad(format!("no column '{name}'")))
    }

    /// The number of rows.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Whether it has no rows.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Row `r`'s text in column `name`.
    pub fn text(&self, r: usize, name: &str) -> Result<&str, Error> {
        let c = self.col(name)?;
        self.rows
            .get(r)
            .and_then(|row| row.get(c))
            .map(String::as_str)
            .ok_or_else(|| self.bad(format!("row {} has no column '{name}'", r + 1)))
    }

    /// Row `r`'s number in column `name` (an empty cell is NaN).
    pub fn num(&self, r: usize, name: &str) -> Result<f64, Error> {
        let s = self.text(r, name)?.trim();
        if s.is_empty() {
            return Ok(f64::NAN);
        }
        s.parse::<f64>().map_err(|_| {
            self.bad(format!(
                "row {}, column '{name}': '{s}' is not a number",
                r + 1
            ))
        })
    }

    /// The rows whose column `key` is `value`.
    pub fn rows_where(&self, key: &str, value: &str) -> Result<Vec<usize>, Error> {
        let c = self.col(key)?;
        Ok((0..self.rows.len())
            .filter(|&r| self.rows[r].get(c).is_some_and(|v| v == value))
            .collect())
    }

    /// Column `col` of the rows whose column `key` is `value`, in file order.
    pub fn curve(&self, key: &str, value: &str, col: &str) -> Result<Vec<f64>, Error> {
        self.rows_where(key, value)?
            .into_iter()
            .map(|r| self.num(r, col))
            .collect()
    }
}

fn read(dir: &Path, name: &str) -> Result<Table, Error> {
    Table::read(&dir.join(name))
}

fn read_opt(dir: &Path, name: &str) -> Result<Option<Table>, Error> {
    let p = dir.join(name);
    if p.exists() {
        Table::read(&p).map(Some)
    } else {
        Ok(None)
    }
}

/// An interval from a row's `<prefix>median`, `<prefix>lo`, `<prefix>hi` and `samples` (or
/// `rounds`).
fn interval(t: &Table, r: usize, prefix: &str) -> Result<Interval, Error> {
    Ok(Interval {
        median: t.num(r, &format!("{prefix}median"))?,
        lo: t.num(r, &format!("{prefix}lo"))?,
        hi: t.num(r, &format!("{prefix}hi"))?,
        // c11_parallel.csv counts its samples as interleaved rounds.
        samples: t
            .num(r, "samples")
            .or_else(|_| t.num(r, "rounds"))?
            .max(0.0) as usize,
    })
}

fn verdict_of(holds: Option<bool>) -> Verdict {
    parts(&[holds])
}

fn yes(b: bool) -> Option<bool> {
    Some(b)
}

/// The measurement of claim `id` from the CSVs under `dir`: a function of the tolerance.
fn measure(id: &str, dir: &Path) -> Result<Measure, Error> {
    match id {
        "C1" => c1(dir),
        "C2" => c2(dir),
        "C3" => c3(dir),
        "C4" => c4(dir),
        "C5" => c5(dir),
        "C6" => c6(dir),
        "C7" => c7(dir),
        "C8" => c8(dir),
        "C9" => c9(dir),
        "C10" => c10(dir),
        "C11" => c11(dir),
        "C12" => c12(dir),
        "C13" => c13(dir),
        "C14" => c14(dir),
        "C15" => c15(dir),
        "C16" => c16(dir),
        "C17" => c17(dir),
        "C18" => c18(dir),
        "C19" => c19(dir),
        "C20" => c20(dir),
        _ => Err(Error::Arg(format!("no claim '{id}'"))),
    }
}

/// Local convergence orders ln(r(k+1)/r(k)) / ln(r(k)/r(k-1)) of a residual history over the
/// iterations before its floor (every residual of the triple more than 1e3 times the history's
/// smallest, so the step that lands on the f64 floor is left out), the last `n` of them.
pub fn local_orders(r: &[f64], n: usize) -> Vec<(usize, f64)> {
    let floor = r
        .iter()
        .copied()
        .filter(|x| x.is_finite() && *x > 0.0)
        .fold(f64::INFINITY, f64::min);
    let above = |x: f64| x.is_finite() && x > 1e3 * floor;
    let mut q = Vec::new();
    for k in 1..r.len().saturating_sub(1) {
        let (a, b, c) = (r[k - 1], r[k], r[k + 1]);
        if above(a) && above(b) && above(c) && c < b && b < a {
            q.push((k, (c / b).ln() / (b / a).ln()));
        }
    }
    let skip = q.len().saturating_sub(n);
    q.split_off(skip)
}

fn c1(dir: &Path) -> Result<Measure, Error> {
    let t = read(dir, "c1.csv")?;
    let col = "error_to_reference_rest_lengths";
    let gs = t.curve("solver", "gs", col)?;
    let target = *gs
        .get(20)
        .ok_or_else(|| t.bad("gs's error curve has fewer than 21 iterations"))?;
    let mut globals = Vec::new();
    for name in [
        "gauss-newton-gs",
        "gauss-newton-jacobi",
        "gauss-newton-direct",
    ] {
        let c = t.curve("solver", name, col)?;
        if !c.is_empty() {
            globals.push((name, c));
        }
    }
    let time = match read_opt(dir, "c1_time.csv")? {
        Some(tt) if !tt.is_empty() => Some((
            tt.text(0, "solver")?.to_string(),
            tt.num(0, "iterations")?,
            interval(&tt, 0, "ratio_")?,
        )),
        _ => None,
    };
    let reference = read(dir, "c1_reference.csv")?.curve("cloth", "compliant", "residual")?;
    let orders = local_orders(&reference, 3);
    let orders_text = if orders.is_empty() {
        "no three decreasing residuals above its floor".to_string()
    } else {
        orders
            .iter()
            .map(|(k, q)| format!("{q:.2} at {k}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    Ok(Box::new(move |tol| {
        let level = target * (1.0 + tol);
        let best = globals
            .iter()
            .filter_map(|(n, c)| iterations_to(c, level).map(|k| (*n, k)))
            .min_by_key(|p| p.1);
        // The article asserts a count of iterations, not a time: the time is reported only.
        let iters = yes(best.is_some_and(|b| b.1 <= 6));
        Outcome {
            verdict: verdict_of(iters),
            figure: format!(
                "fewest global-solve iterations within {} of gs's error after 20 ({target:.3e} rest lengths): {}; reported, not judged: {}; newton reference's local convergence orders before its floor: {orders_text}",
                Fmt::Percent.show(tol),
                best.map_or("none within the run".into(), |(n, k)| format!("{n} {k}")),
                time.as_ref().map_or("no equal-quality time measured".into(), |(n, k, iv)| format!(
                    "time of {n} at {k} iterations over gs at 20: {}",
                    iv.display(2)
                ))
            ),
        }
    }))
}

/// Residual curves of a converge.csv-layout file, by solver.
fn curves(t: &Table, names: &[&str]) -> Result<Vec<Vec<f64>>, Error> {
    names
        .iter()
        .map(|n| {
            let c = t.curve("solver", n, "residual")?;
            if c.len() <= LEVEL_BUDGET {
                Err(t.bad(format!(
                    "{n}'s residual curve has {} iterations; the level needs {}",
                    c.len().saturating_sub(1),
                    LEVEL_BUDGET
                )))
            } else {
                Ok(c)
            }
        })
        .collect()
}

fn level_or_err(t: &Table, reference: &[f64], other: &[f64]) -> Result<ToLevel, Error> {
    to_level(reference, other, LEVEL_BUDGET)
        .ok_or_else(|| t.bad("the reference curve does not reach the level's budget"))
}

fn c2(dir: &Path) -> Result<Measure, Error> {
    let t = read(dir, "c2.csv")?;
    let c = curves(&t, &["gs", "jacobi"])?;
    let m = level_or_err(&t, &c[0], &c[1])?;
    Ok(Box::new(move |tol| Outcome {
        verdict: verdict_of(m.at_least(tol)),
        figure: format!(
            "jacobi's iterations to gs's residual after {LEVEL_BUDGET} ({:.3e}): {}",
            m.level,
            m.show()
        ),
    }))
}

/// A slope of log time against log vertices from a `cN_ratio.csv` row of `solver`.
fn slope(t: &Table, solver: &str) -> Result<Interval, Error> {
    let r = *t
        .rows_where("solver", solver)?
        .first()
        .ok_or_else(|| t.bad(format!("no row of {solver}")))?;
    let ratio = interval(t, r, "ratio_")?;
    let size = t.num(r, "vertices_large")? / t.num(r, "vertices_small")?;
    Ok(slope_of_ratio(&ratio, size))
}

fn c3(dir: &Path) -> Result<Measure, Error> {
    let t = read(dir, "c3_ratio.csv")?;
    let s = slope(&t, "gauss-newton-gs")?;
    let growth = match read_opt(dir, "c3_misses.csv")? {
        Some(m) if m.len() >= 2 => {
            Some(m.num(1, "d1_misses_per_projection")? / m.num(0, "d1_misses_per_projection")?)
        }
        _ => None,
    };
    Ok(Box::new(move |tol| Outcome {
        verdict: rules::c3(&s, growth, tol),
        figure: format!(
            "gauss-newton-gs slope {}{}",
            s.display(2),
            growth.map_or(String::new(), |g| format!(
                "; D1 misses per projection x{g:.2}"
            ))
        ),
    }))
}

/// R² of a straight-line fit.
pub fn r_squared(x: &[f64], y: &[f64]) -> f64 {
    let n = x.len().min(y.len()) as f64;
    let (mx, my) = (x.iter().sum::<f64>() / n, y.iter().sum::<f64>() / n);
    let sxy: f64 = x.iter().zip(y).map(|(a, b)| (a - mx) * (b - my)).sum();
    let sxx: f64 = x.iter().map(|a| (a - mx).powi(2)).sum();
    let syy: f64 = y.iter().map(|b| (b - my).powi(2)).sum();
    sxy * sxy / (sxx * syy)
}

fn c4(dir: &Path) -> Result<Measure, Error> {
    let s = slope(&read(dir, "c4_ratio.csv")?, "gs")?;
    // The sweep over iterations is the size with the most rows.
    let t = read(dir, "c4.csv")?;
    let mut by_n: Vec<(String, Vec<usize>)> = Vec::new();
    for r in 0..t.len() {
        let n = t.text(r, "n")?.to_string();
        match by_n.iter_mut().find(|(k, _)| *k == n) {
            Some((_, rows)) => rows.push(r),
            None => by_n.push((n, vec![r])),
        }
    }
    let mut rows = by_n
        .into_iter()
        .max_by_key(|(_, r)| r.len())
        .map(|(_, r)| r)
        .unwrap_or_default();
    // The size sweep's row at that size repeats an iteration count: each count once.
    let mut seen = Vec::new();
    rows.retain(|&r| {
        let it = t.text(r, "iterations").unwrap_or_default().to_string();
        let first = !seen.contains(&it);
        seen.push(it);
        first
    });
    let x: Vec<f64> = rows
        .iter()
        .map(|&r| t.num(r, "iterations"))
        .collect::<Result<_, _>>()?;
    let y: Vec<f64> = rows
        .iter()
        .map(|&r| t.num(r, "ms_per_step_median"))
        .collect::<Result<_, _>>()?;
    let r2 = r_squared(&x, &y);
    Ok(Box::new(move |tol| Outcome {
        verdict: rules::c4(r2, &s, tol),
        figure: format!(
            "slope against vertices {}; R² in iterations {r2:.3}",
            s.display(2)
        ),
    }))
}

/// The runs and the converged reference of a C5/C12 CSV (column `role`): the tested counts and
/// `f` of each run minus `f` of the reference.
fn excess_over_reference(
    t: &Table,
    f: &dyn Fn(&Table, usize) -> Result<f64, Error>,
) -> Result<(Vec<usize>, Vec<f64>, f64), Error> {
    let reference = *t
        .rows_where("role", "reference")?
        .first()
        .ok_or_else(|| t.bad("no reference row (role = reference)"))?;
    let r0 = f(t, reference)?;
    let mut its = Vec::new();
    let mut excess = Vec::new();
    for r in t.rows_where("role", "run")? {
        its.push(t.num(r, "iterations")? as usize);
        excess.push(f(t, r)? - r0);
    }
    Ok((its, excess, r0))
}

fn c5(dir: &Path) -> Result<Measure, Error> {
    let t = read(dir, "c5.csv")?;
    let (its, excess, r0) = excess_over_reference(&t, &|t, r| t.num(r, "stretch_mean_avg"))?;
    Ok(Box::new(move |tol| {
        let k = crossing(&its, &excess, tol);
        Outcome {
            verdict: Verdict::from_parts(k.within(10.0, 20.0) as usize, 1),
            figure: format!(
                "mean stretch within {} of the converged run's ({:.3}%) from {}",
                Fmt::Percent.show(tol),
                100.0 * r0,
                k.show()
            ),
        }
    }))
}

fn c12(dir: &Path) -> Result<Measure, Error> {
    let t = read(dir, "c12.csv")?;
    let (its, excess, r0) =
        excess_over_reference(&t, &|t, r| Ok((1.0 - t.num(r, "volume_ratio_mean")?).abs()))?;
    Ok(Box::new(move |tol| {
        let k = crossing(&its, &excess, tol);
        let enough = match k {
            Crossing::At(x) | Crossing::AtMost(x) => x <= 5.0,
            Crossing::Beyond(_) => false,
        };
        Outcome {
            verdict: Verdict::from_parts(enough as usize, 1),
            figure: format!(
                "mean volume deficit within {} of the converged run's ({:.4}%) from {}",
                Fmt::Percent.show(tol),
                100.0 * r0,
                k.show()
            ),
        }
    }))
}

/// One run of a stability claim: its label, whether it is the claim's subject, its health.
struct Judged {
    label: String,
    subject: bool,
    health: Health,
}

/// The unstable runs of `runs` under the stability rule at `bound`.
fn unstable(runs: &[Judged], bound: f64) -> Vec<(&Judged, String)> {
    runs.iter()
        .filter_map(|r| unstable_because(&r.health, bound).map(|w| (r, w)))
        .collect()
}

fn c6(dir: &Path) -> Result<Measure, Error> {
    let t = read(dir, "c6.csv")?;
    let mut runs = Vec::new();
    for r in 0..t.len() {
        let solver = t.text(r, "solver")?;
        runs.push(Judged {
            label: format!(
                "{} {} {solver} dt=1/{:.0}",
                t.text(r, "scene")?,
                t.text(r, "start")?,
                1.0 / t.num(r, "dt")?
            ),
            subject: solver == "gs",
            health: Health {
                finished: t.text(r, "status")? == "ok",
                rise: t.num(r, "rise_over_kick")?,
                energy_growth: Some(t.num(r, "energy_growth")?),
                stretch_growth: t.num(r, "stretch_growth")?,
            },
        });
    }
    if !runs.iter().any(|r| r.subject) {
        return Err(t.bad("no gs run"));
    }
    Ok(Box::new(move |tol| {
        let bad = unstable(&runs, tol);
        let gs: Vec<_> = bad.iter().filter(|(r, _)| r.subject).collect();
        let others = bad.len() - gs.len();
        Outcome {
            verdict: if !gs.is_empty() {
                Verdict::Refuted
            } else if others > 0 {
                Verdict::Partly
            } else {
                Verdict::Confirmed
            },
            figure: format!(
                "gs unstable in {} of {} runs{}; other solvers unstable in {others} of {}",
                gs.len(),
                runs.iter().filter(|r| r.subject).count(),
                gs.first().map_or(String::new(), |(r, w)| format!(
                    " (deciding: {}, {w})",
                    r.label
                )),
                runs.iter().filter(|r| !r.subject).count()
            ),
        }
    }))
}

fn c19(dir: &Path) -> Result<Measure, Error> {
    let t = read(dir, "c19.csv")?;
    let mut runs = Vec::new();
    let mut keys = Vec::new();
    for r in 0..t.len() {
        let solver = t.text(r, "solver")?.to_string();
        let (scene, it) = (
            t.text(r, "scene")?.to_string(),
            t.text(r, "iterations")?.to_string(),
        );
        runs.push(Judged {
            label: format!("{scene} {solver} at {it}"),
            subject: solver == "colored",
            health: Health {
                finished: t.text(r, "status")? == "ok",
                rise: t.num(r, "energy_rise_over_start")?,
                energy_growth: None,
                stretch_growth: t.num(r, "stretch_growth")?,
            },
        });
        keys.push((scene, solver, it));
    }
    if !runs.iter().any(|r| r.subject) {
        return Err(t.bad("no colored run"));
    }
    Ok(Box::new(move |tol| {
        let ok: Vec<bool> = runs.iter().map(|r| stable(&r.health, tol)).collect();
        let colored_bad: Vec<usize> = (0..runs.len())
            .filter(|&i| runs[i].subject && !ok[i])
            .collect();
        let mut variants: Vec<&str> = keys
            .iter()
            .zip(&runs)
            .filter(|(_, r)| !r.subject)
            .map(|(k, _)| k.1.as_str())
            .collect();
        variants.sort_unstable();
        variants.dedup();
        // A variant fails where it is unstable at a scene and budget where colored is stable.
        let fails = |v: &str| {
            (0..runs.len()).any(|i| {
                keys[i].1 == v
                    && !ok[i]
                    && (0..runs.len()).any(|j| {
                        runs[j].subject && ok[j] && keys[j].0 == keys[i].0 && keys[j].2 == keys[i].2
                    })
            })
        };
        let failing: Vec<&str> = variants.iter().copied().filter(|v| fails(v)).collect();
        let verdict = if !colored_bad.is_empty() || variants.is_empty() {
            Verdict::Refuted
        } else {
            Verdict::from_parts(failing.len(), variants.len())
        };
        Outcome {
            verdict,
            figure: format!(
                "colored unstable in {} of {} runs{}; Jacobi-type variants unstable where colored is stable: {} of {}{}",
                colored_bad.len(),
                runs.iter().filter(|r| r.subject).count(),
                colored_bad.first().map_or(String::new(), |&i| format!(
                    " (first: {}, {})",
                    runs[i].label,
                    unstable_because(&runs[i].health, tol).unwrap_or_default()
                )),
                failing.len(),
                variants.len(),
                {
                    let stable_everywhere: Vec<&str> =
                        variants.iter().copied().filter(|v| !fails(v)).collect();
                    if stable_everywhere.is_empty() {
                        String::new()
                    } else {
                        format!(" (not failing: {})", stable_everywhere.join(", "))
                    }
                }
            ),
        }
    }))
}

fn c7(dir: &Path) -> Result<Measure, Error> {
    let t = read(dir, "c7.csv")?;
    let k = |name: &str| -> Result<f64, Error> {
        let r = *t
            .rows_where("integrator", name)?
            .first()
            .ok_or_else(|| t.bad(format!("no {name} row")))?;
        t.num(r, "k_max_n_per_m")
    };
    let (ex, si, ve) = (k("explicit")?, k("semi-implicit")?, k("verlet")?);
    Ok(Box::new(move |tol| Outcome {
        verdict: rules::c7(ex, si, ve, tol),
        figure: format!(
            "k_max semi-implicit / explicit {:.1}; Verlet / explicit {:.1}",
            si / ex,
            ve / ex
        ),
    }))
}

fn c8(dir: &Path) -> Result<Measure, Error> {
    let t = read(dir, "c8.csv")?;
    let mut pairs = Vec::new();
    for r in 0..t.len() {
        let (total, sub, its) = (
            t.num(r, "total")?,
            t.num(r, "substeps")?,
            t.num(r, "iterations")?,
        );
        if sub == total && its == 1.0 {
            let other = (0..t.len()).find(|&q| {
                t.num(q, "total").ok() == Some(total)
                    && t.num(q, "substeps").ok() == Some(1.0)
                    && t.num(q, "iterations").ok() == Some(total)
            });
            if let Some(q) = other {
                pairs.push((
                    t.num(r, "stretch_mean_avg")?,
                    t.num(r, "ms_per_step_median")?,
                    t.num(q, "stretch_mean_avg")?,
                    t.num(q, "ms_per_step_median")?,
                ));
            }
        }
    }
    Ok(Box::new(move |tol| {
        let stretch_wins = pairs.iter().filter(|p| p.0 < p.2).count();
        let wins = pairs
            .iter()
            .filter(|p| p.0 < p.2 && p.1 <= tol * p.3)
            .count();
        let worst_cost = pairs.iter().map(|p| p.1 / p.3).fold(f64::NAN, f64::max);
        Outcome {
            verdict: rules::c8(stretch_wins, wins, pairs.len()),
            figure: format!(
                "substeps win at {wins} of {} totals (lower stretch at {stretch_wins}; largest time ratio {worst_cost:.2})",
                pairs.len()
            ),
        }
    }))
}

fn c9(dir: &Path) -> Result<Measure, Error> {
    let t = read(dir, "c9.csv")?;
    let c = curves(&t, &["jacobi", "chebyshev"])?;
    let m = level_or_err(&t, &c[0], &c[1])?;
    let time = match read_opt(dir, "c9_time.csv")? {
        Some(tt) if !tt.is_empty() => Some(interval(&tt, 0, "ratio_")?),
        _ => None,
    };
    Ok(Box::new(move |tol| {
        // Faster by more than `tol`: chebyshev needs fewer than budget / tol iterations.
        let iters = match m.other {
            Some(k) => Some((k as f64) < m.budget as f64 / tol),
            None => Some(false),
        };
        let mut p = vec![iters];
        if let Some(iv) = &time {
            p.push(side_holds(iv, tol, true));
        }
        Outcome {
            verdict: parts(&p),
            figure: format!(
                "chebyshev's iterations to jacobi's residual after {LEVEL_BUDGET} ({:.3e}): {}; time of jacobi over chebyshev to it {}",
                m.level,
                m.show(),
                time.map_or("not measured".into(), |iv| iv.display(2))
            ),
        }
    }))
}

/// (max - min) / mean of the finite values.
/// (max - min) / mean of finite values.
pub fn spread(v: &[f64]) -> f64 {
    let f: Vec<f64> = v.iter().copied().filter(|x| x.is_finite()).collect();
    if f.len() < 2 {
        return f64::NAN;
    }
    let (lo, hi) = f
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &x| {
            (l.min(x), h.max(x))
        });
    (hi - lo) / (f.iter().sum::<f64>() / f.len() as f64)
}

fn c10(dir: &Path) -> Result<Measure, Error> {
    let t = read(dir, "c10.csv")?;
    let part = |p: &str| t.curve("part", p, "stretch_late_avg");
    let (plain, corrected) = (part("pbd-k")?, part("pbd-k'")?);
    let reference = part("xpbd-calibration")?
        .into_iter()
        .find(|s| *s >= 0.02)
        .ok_or_else(|| t.bad("no XPBD compliance stretched the cloth 2%"))?;
    let devs: Vec<f64> = part("xpbd-iterations")?
        .iter()
        .map(|s| ((s - reference) / reference).abs())
        .collect();
    let (sp_plain, sp_corr, sp_dt) = (
        spread(&plain),
        spread(&corrected),
        spread(&part("xpbd-dt-converged")?),
    );
    Ok(Box::new(move |tol| {
        Outcome {
        verdict: rules::c10(sp_plain, sp_corr, &devs, sp_dt, tol),
        figure: format!(
            "k' spread {sp_corr:.3} (plain {sp_plain:.3}); XPBD deviation from converged at the most iterations {:.3}; XPBD spread over dt {sp_dt:.3}",
            devs.last().copied().unwrap_or(f64::NAN)
        ),
    }
    }))
}

fn c11(dir: &Path) -> Result<Measure, Error> {
    let t = read(dir, "c11.csv")?;
    let c = curves(&t, &["gs", "colored", "jacobi"])?;
    let near_gs = level_or_err(&t, &c[0], &c[1])?;
    let over_jacobi = level_or_err(&t, &c[1], &c[2])?;
    let mut speedups = Vec::new();
    if let Some(p) = read_opt(dir, "c11_parallel.csv")? {
        for r in 0..p.len() {
            speedups.push((p.text(r, "n")?.to_string(), interval(&p, r, "speedup_")?));
        }
    }
    Ok(Box::new(move |tol| {
        let mut p = vec![near_gs.at_most(tol), over_jacobi.at_least(2.0)];
        p.extend(speedups.iter().map(|(_, s)| side_holds(s, 1.2, true)));
        Outcome {
            verdict: parts(&p),
            figure: format!(
                "colored's iterations to gs's level after {LEVEL_BUDGET}: {}; jacobi's to colored's: {}; speed-up of 2 threads over 1: {}",
                near_gs.show(),
                over_jacobi.show(),
                if speedups.is_empty() {
                    "not measured".into()
                } else {
                    speedups
                        .iter()
                        .map(|(n, s)| format!("n={n} {}", s.display(2)))
                        .collect::<Vec<_>>()
                        .join(", ")
                }
            ),
        }
    }))
}

fn c13(dir: &Path) -> Result<Measure, Error> {
    let t = read(dir, "c13_pbd.csv")?;
    let mut macklin = Vec::new();
    let mut gs = f64::NAN;
    let most = (0..t.len())
        .map(|r| t.num(r, "iterations"))
        .collect::<Result<Vec<_>, _>>()?
        .into_iter()
        .fold(f64::NAN, f64::max);
    for r in 0..t.len() {
        if t.num(r, "iterations")? != most {
            continue;
        }
        let worst = if t.text(r, "status")? == "ok" {
            t.num(r, "worst_stretch_over_rest")?
        } else {
            f64::INFINITY
        };
        match t.text(r, "averaging")? {
            "Particle" => macklin.push((t.text(r, "omega")?.to_string(), worst)),
            _ if t.text(r, "solver")? == "gs" => gs = worst,
            _ => {}
        }
    }
    if macklin.is_empty() {
        return Err(t.bad("no run of Macklin 2014's averaging (averaging = Particle)"));
    }
    Ok(Box::new(move |tol| {
        let held = macklin.iter().filter(|(_, w)| *w <= tol).count();
        Outcome {
            verdict: Verdict::from_parts(held, macklin.len()),
            figure: format!(
                "worst segment stretch over rest length after {most} iterations per step, PBD (compliance 0) with Macklin's averaging: {}; gs: {gs:.2e}",
                macklin
                    .iter()
                    .map(|(o, w)| format!("omega {o} {w:.2e}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }))
}

fn c14(dir: &Path) -> Result<Measure, Error> {
    let t = read(dir, "c14.csv")?;
    let fig = |r: usize| -> Result<f64, Error> {
        Ok(if t.text(r, "status")? == "ok" {
            t.num(r, "momentum_change_rel")?
        } else {
            f64::INFINITY
        })
    };
    let gs_row = *t
        .rows_where("solver", "gs")?
        .first()
        .ok_or_else(|| t.bad("no gs row"))?;
    let gs = fig(gs_row)?;
    let mut others = Vec::new();
    for r in 0..t.len() {
        if r != gs_row {
            others.push((t.text(r, "variant")?.to_string(), fig(r)?));
        }
    }
    Ok(Box::new(move |tol| Outcome {
        verdict: Verdict::from_parts((gs <= tol) as usize, 1),
        figure: format!(
            "|p - p0| / |p0| of Müller's projection (gs): {gs:.3e}; reported, not judged: {}",
            others
                .iter()
                .map(|(v, x)| format!("{v} {x:.3e}"))
                .collect::<Vec<_>>()
                .join("; ")
        ),
    }))
}

fn c15(dir: &Path) -> Result<Measure, Error> {
    let t = read(dir, "c15.csv")?;
    if t.is_empty() {
        return Err(t.bad("no rows"));
    }
    let measured = (
        t.num(0, "rate_gs_measured")?,
        t.num(0, "rate_jacobi_measured")?,
    );
    let linear = (
        t.num(0, "rho_gs_linearized")?,
        t.num(0, "rho_jacobi_linearized")?,
    );
    let ratio = |(gs, j): (f64, f64)| gs.ln() / (2.0 * j.ln());
    Ok(Box::new(move |tol| Outcome {
        verdict: rules::c15(measured, linear, tol),
        figure: format!(
            "rope log ratio measured {:.3}, linearized {:.3}",
            ratio(measured),
            ratio(linear)
        ),
    }))
}

fn c16(dir: &Path) -> Result<Measure, Error> {
    let t = read(dir, "c16.csv")?;
    let si = spread(&t.curve("sweep", "iterations", "stretch_late_avg")?);
    let sd = spread(&t.curve("sweep", "dt", "stretch_late_avg")?);
    Ok(Box::new(move |tol| Outcome {
        verdict: rules::c16(si, sd, tol),
        figure: format!("spread over iterations {si:.2}, over dt {sd:.2}"),
    }))
}

fn c17(dir: &Path) -> Result<Measure, Error> {
    let t = read(dir, "c17_curves.csv")?;
    let curve = |o: &str| t.curve("order", o, "residual");
    let gs = curve("gs")?;
    let mut others = Vec::new();
    for o in ["gs-shuffled", "colored"] {
        let c = curve(o)?;
        others.push((o, level_or_err(&t, &gs, &c)?));
    }
    Ok(Box::new(move |tol| {
        let p: Vec<Option<bool>> = others.iter().map(|(_, m)| m.at_most(tol)).collect();
        Outcome {
            verdict: parts(&p),
            figure: format!(
                "iterations to natural order's residual after {LEVEL_BUDGET}: {}",
                others
                    .iter()
                    .map(|(o, m)| format!("{o} {}", m.show()))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }))
}

fn c18(dir: &Path) -> Result<Measure, Error> {
    let t = read(dir, "c18.csv")?;
    let at = |avg: &str| -> Result<f64, Error> {
        for r in t.rows_where("averaging", avg)? {
            if t.num(r, "omega")? == 1.0 {
                return t.num(r, "asymptotic_rate");
            }
        }
        Err(t.bad(format!("no {avg} row at omega 1")))
    };
    let (plain, averaged) = (at("Off")?, at("Particle")?);
    Ok(Box::new(move |_| {
        Outcome {
        verdict: rules::c18(plain, averaged),
        figure: format!(
            "mean contraction per iteration at omega 1: plain {plain:.4}, Macklin's averaging {averaged:.4}"
        ),
    }
    }))
}

fn c20(dir: &Path) -> Result<Measure, Error> {
    let t = read(dir, "c20.csv")?;
    let mut kept = Vec::new();
    for r in 0..t.len() {
        let (sub, its) = (t.num(r, "substeps")?, t.num(r, "iterations")?);
        if its == 1.0 && sub > 1.0 {
            let scene = t.text(r, "scene")?;
            let q = (0..t.len()).find(|&q| {
                t.text(q, "scene").ok() == Some(scene)
                    && t.num(q, "substeps").ok() == Some(1.0)
                    && t.num(q, "iterations").ok() == Some(sub)
            });
            if let Some(q) = q {
                kept.push((
                    t.num(r, "swing_energy_kept")?,
                    t.num(q, "swing_energy_kept")?,
                ));
            }
        }
    }
    Ok(Box::new(move |tol| Outcome {
        verdict: rules::c20(&kept, tol),
        figure: format!(
            "substeps keep more at {} of {} scene-totals",
            rules::damping_wins(&kept, tol),
            kept.len()
        ),
    }))
}

// ------------------------------------------------------------------------------------------
// Verification.

/// One claim where DIR/CLAIMS.md and the verdict recomputed from DIR's CSVs disagree.
#[derive(Debug, Clone, PartialEq)]
pub struct Disagreement {
    /// The claim.
    pub id: String,
    /// What CLAIMS.md says.
    pub written: String,
    /// What the CSVs give.
    pub recomputed: String,
}

/// The verdict line of each claim section of a CLAIMS.md (`## Cn` ... `- **Verdict:** ...`).
pub fn written_verdicts(md: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut id: Option<String> = None;
    for line in md.lines() {
        if let Some(h) = line.strip_prefix("## ") {
            id = spec(h.trim()).map(|s| s.id.to_string());
        } else if let (Some(v), Some(i)) = (line.strip_prefix("- **Verdict:** "), id.as_ref()) {
            out.push((i.clone(), v.trim().to_string()));
            id = None;
        }
    }
    out
}

/// Recomputes every claim's verdict from `out`/claims/*.csv and compares it with
/// `out`/CLAIMS.md: the claims that disagree, and the lines of the check. A claim CLAIMS.md
/// marks untestable or not run agrees when its CSVs are absent.
pub fn verify(out: &Path) -> Result<(Vec<Disagreement>, Vec<String>), Error> {
    let md_path = out.join("CLAIMS.md");
    let md = std::fs::read_to_string(&md_path).map_err(|e| io_error(&md_path, e))?;
    let written = written_verdicts(&md);
    let dir = out.join("claims");
    let mut bad = Vec::new();
    let mut lines = Vec::new();
    for s in SPECS {
        let w = written
            .iter()
            .find(|(i, _)| i == s.id)
            .map(|(_, v)| v.clone());
        let recomputed = match judge(s, &dir) {
            Ok(j) => j.headline,
            Err(e) => format!("untestable-here (cannot recompute: {e})"),
        };
        let agrees = match &w {
            Some(w) if w.starts_with("untestable-here") => {
                recomputed.starts_with("untestable-here")
            }
            Some(w) => *w == recomputed,
            None => false,
        };
        lines.push(format!(
            "{} {}: {}",
            s.id,
            if agrees { "agrees" } else { "DISAGREES" },
            recomputed
        ));
        if !agrees {
            bad.push(Disagreement {
                id: s.id.to_string(),
                written: w.unwrap_or_else(|| "(no verdict line)".into()),
                recomputed,
            });
        }
    }
    Ok((bad, lines))
}

// ------------------------------------------------------------------------------------------
// The claims as data.

const ITERATION_ERROR: &str = "the iteration error only: how fast each solver approaches its own converged answer, measured by its constraint residual (a residual of zero is that answer whatever its distance to the exact implicit step)";

/// Every claim's record, in order.
pub const SPECS: &[Spec] = &[
    Spec {
        id: "C1",
        section: "the article's section on the global CSR solve",
        asserts: "at 500 vertices the global CSR solve keeps the shape after 4-6 iterations as well as edge constraints do after 20",
        scope: "one measurement on the article's own machine and cloth, in iterations; it asserts nothing of time, so the equal-quality time is reported, not judged",
        errors: "the total distance to the exact step after a fixed count (\"shape preservation\"): the iteration error and the formulation error together, which is what the comparison judges; c1_errors.csv and the c1_errors plots split them per solver on the same state at a softer compliance (given in the measured text), where the iterative solvers come closer to settling, with how far each converged point still moved (reported, not judged)",
        quantity: "RMS distance of the free particles to the exact implicit step (sparse::newton, f64) after k iterations, in mean rest lengths (c1.csv); the equal-quality time ratio (c1_time.csv)",
        comparison: "the fewest gauss-newton-* iterations within the tolerance of gs's distance after 20 is at most 6 (the claim's 4-6); the time at that count over gs's at 20 is reported beside it, not judged",
        tolerance: Some(Tolerance {
            what: "slack on \"as close as gs after 20\" (fraction of gs's distance)",
            value: 0.0,
            reason: "\"打平\" (a draw) names no slack; the sweep shows whether a little slack would change the count",
            sweep: &[0.0, 0.05, 0.1, 0.25],
            fmt: Fmt::Percent,
        }),
    },
    Spec {
        id: "C2",
        section: "the article's section on Gauss-Seidel against Jacobi",
        asserts: "Gauss-Seidel's sequential updates converge far better than Jacobi's \"each constraint changes on its own, then average\"",
        scope: "convergence of the constraint solve; no size, iteration count or variant of Jacobi given",
        errors: ITERATION_ERROR,
        quantity: "residual per iteration of one step from the common cloth state (c2.csv)",
        comparison: "convergence measure: jacobi's iterations to the level gs reaches after 20 (level rule), over 20, at least the tolerance",
        tolerance: Some(Tolerance {
            what: "factor \"far better\" (jacobi's iterations over gs's)",
            value: 2.0,
            reason: "远好于 (far better) read as at least twice the iterations to the same level; below 2, ordering alone changes Gauss-Seidel by as much (C17)",
            sweep: &[1.25, 1.5, 2.0, 3.0, 5.0],
            fmt: Fmt::Plain,
        }),
    },
    Spec {
        id: "C3",
        section: "the article's performance figures (M-series Mac, Godot 4.3)",
        asserts: "0.6 ms at 500 vertices and 2.4 ms at 1000 (8 iterations): superlinear growth, caused by the CSR solve's cache-unfriendly memory access",
        scope: "the growth and its cause; the absolute times are another machine's",
        errors: "neither: a step time at a fixed iteration count, not a distance to a converged answer",
        quantity: "slope of log step time against log vertices from the paired time ratio 529 -> 1024 vertices (c3_ratio.csv), with its 95% interval; D1 misses per projection (c3_misses.csv)",
        comparison: "parts: the slope's interval above the tolerance (straddling: undecided); misses per projection grow at least 1.5x (where cachegrind ran)",
        tolerance: Some(Tolerance {
            what: "slope that counts as superlinear",
            value: 1.5,
            reason: "halfway between linear (1) and the article's 4x for 2x vertices (2)",
            sweep: &[1.1, 1.25, 1.5, 1.75],
            fmt: Fmt::Plain,
        }),
    },
    Spec {
        id: "C4",
        section: "the article's cost formula",
        asserts: "iterations x vertices x edges is a soft body's cost, so frame time explodes with the vertex count",
        scope: "the form of the cost; no constants",
        errors: "neither: step time against iterations and size, not a distance to a converged answer",
        quantity: "gs's step time against iterations at one size (c4.csv) and the slope against vertices from the paired ratio of the smallest and largest size (c4_ratio.csv)",
        comparison: "the slope's interval above the tolerance confirms (with a straight line in iterations, R² >= 0.98; partly without), below refutes, straddling is inconclusive",
        tolerance: Some(Tolerance {
            what: "slope against vertices that counts as the product's (2)",
            value: 1.5,
            reason: "halfway between cost per constraint (1) and the product (2)",
            sweep: &[1.1, 1.25, 1.5, 1.75],
            fmt: Fmt::Plain,
        }),
    },
    Spec {
        id: "C5",
        section: "the article's section on edge constraints",
        asserts: "cloth usually needs ten-odd iterations (one pass over every edge each) before it stops being \"rubber bands\"",
        scope: "how stretchy the cloth looks, not its distance to a converged solve; \"usually\", no size given",
        errors: "neither error of one step: the stretch a run accumulates over many steps, against the same run at 256 iterations (the distance to it is reported in the measured text, not judged); c5_errors.csv and the c5_errors plots split one step of that converged run's state into gs's iteration error and formulation error, per iteration and per millisecond (reported, not judged)",
        quantity: "mean stretch over a 120-step hanging-cloth run per iteration count, above the same run's at 256 iterations (c5.csv)",
        comparison: "crossing rule: the iteration count (interpolated between tested counts) from which the excess stays within the tolerance lies in 十几 (ten-odd), 10 to under 20",
        tolerance: Some(Tolerance {
            what: "mean stretch above the converged run's that no longer looks like rubber bands",
            value: 0.05,
            reason: "the article gives none; 5% of the rest length (5 cm on a 1 m cloth) is a judgement, hence the sweep from 1% to 20%",
            sweep: &[0.01, 0.02, 0.03, 0.05, 0.07, 0.1, 0.15, 0.2],
            fmt: Fmt::Percent,
        }),
    },
    Spec {
        id: "C6",
        section: "the Godot article on position projection; the Unity tutorial on PBD's advantages",
        asserts: "a soft body by nature produces no energy explosion (Godot); PBD is unconditionally stable, it never explodes at any time step, though it may turn soft or distorted (Unity)",
        scope: "PBD as such (here gs, the reference); the other solvers are this project's and are reported",
        errors: "neither: whether runs stay bounded (stability rule), not a distance to a converged answer",
        quantity: "per run from a settled, kicked body: finished, energy rise above the start in kick energies, energy growth and largest-stretch growth over the second half (c6.csv)",
        comparison: "stability rule on every run; refuted if a gs run is unstable, partly if only other solvers' are, confirmed if none is. Distortion the Unity source allows is a bounded stretch; a stretch that keeps growing is a body coming apart (the same rule as C19)",
        tolerance: Some(Tolerance {
            what: "energy rise above the kicked start, in kick energies",
            value: 2.0,
            reason: "a soft body stores stretch energy the measured E leaves out and gives it back to the motion, so a bounded rise of a few kicks is not energy pumped in; the sweep runs from a quarter kick to 1000",
            sweep: &[0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 100.0, 1000.0],
            fmt: Fmt::Plain,
        }),
    },
    Spec {
        id: "C7",
        section: "the Unity tutorial's integrators",
        asserts: "semi-implicit Euler is an order of magnitude more stable than explicit Euler; Verlet is usually more stable than explicit Euler",
        scope: "mass-spring particle updates",
        errors: "neither: the largest stable stiffness of explicit integrators, which have no iteration",
        quantity: "largest stable spring stiffness per integrator at dt 1/60 (c7.csv)",
        comparison: "parts: semi-implicit's at least the tolerance times explicit's; Verlet's above explicit's",
        tolerance: Some(Tolerance {
            what: "factor of \"an order of magnitude\"",
            value: 10.0,
            reason: "一个数量级 is a factor 10; the sweep reads it from 5 to 20",
            sweep: &[5.0, 10.0, 20.0],
            fmt: Fmt::Plain,
        }),
    },
    Spec {
        id: "C8",
        section: "Macklin et al. 2019, §4-5",
        asserts: "at equal cost, n substeps of one iteration give lower constraint error than one step of n iterations",
        scope: "equal cost; the constraint error",
        errors: "neither error of one step: the constraint error (mean stretch) runs leave over many steps, the quantity the source names, not a distance to a converged answer",
        quantity: "mean stretch and step time of n x 1 and 1 x n on the cloth (c8.csv)",
        comparison: "per total n, substeps win if their stretch is lower at a step time at most the tolerance times 1 x n's; confirmed if they win at every total, refuted if their stretch is never lower, partly otherwise",
        tolerance: Some(Tolerance {
            what: "step time of n x 1 over 1 x n that still counts as equal cost",
            value: 1.5,
            reason: "substeps redo the prediction and velocity update per substep; the paper counts cost in projections, so a modest overhead is allowed, swept from 1.1x to 3x",
            sweep: &[1.1, 1.25, 1.5, 2.0, 3.0],
            fmt: Fmt::Plain,
        }),
    },
    Spec {
        id: "C9",
        section: "Wang 2015, abstract and §6",
        asserts: "position-based dynamics can be accelerated by the Chebyshev approach too, less obviously on tetrahedral meshes",
        scope: "acceleration of PBD's Jacobi iteration; the order of magnitude is claimed for projective dynamics, not PBD; tetrahedral meshes are not tested here",
        errors: ITERATION_ERROR,
        quantity: "residual per iteration from the common cloth state (c9.csv); time of jacobi to its level over chebyshev's (c9_time.csv)",
        comparison: "convergence measure: chebyshev needs fewer than 20 / tolerance iterations to the level jacobi reaches after 20 (level rule); and the time ratio's interval above the tolerance",
        tolerance: Some(Tolerance {
            what: "gain that counts as accelerated",
            value: 1.1,
            reason: "any gain beyond 10%, which timing noise and the choice of level move by",
            sweep: &[1.1, 1.25, 1.5, 2.0, 5.0],
            fmt: Fmt::Plain,
        }),
    },
    Spec {
        id: "C10",
        section: "Müller et al. 2007, §3.3; Macklin et al. 2016, abstract and §3",
        asserts: "k' = 1 - (1 - k)^(1/n) makes PBD's stiffness independent of the iteration count (not of dt); XPBD's compliance removes the dependence on both",
        scope: "converged or fixed-count solves of the same constraints",
        errors: "the judged figures are stretches, not distances: the iteration part compares each count's stretch with the same solver's converged run (the iteration error as it shows in stretch), the dt part converged steps at three dt (what the formulation gives); c10_errors.csv and the c10_errors plots split one XPBD step of the converged run's state into gs's iteration error and formulation error (its converged point's distance to the exact implicit step XPBD's compliance is derived from), per iteration and per millisecond (reported, not judged)",
        quantity: "late mean stretch of the hanging cloth per setting (c10.csv)",
        comparison: "parts: k' spread within the tolerance and at most half plain k's; XPBD's deviation from its converged stretch shrinking to within the tolerance; XPBD's spread over dt (converged steps) within the tolerance",
        tolerance: Some(Tolerance {
            what: "relative spread or deviation that counts as independent",
            value: 0.2,
            reason: "a fifth of the stretch is below what plain k's dependence gives (1.5 in c10.csv) and above run-to-run motion; swept from 5% to 30%",
            sweep: &[0.05, 0.1, 0.125, 0.15, 0.2, 0.3],
            fmt: Fmt::Plain,
        }),
    },
    Spec {
        id: "C11",
        section: "Fratarcangeli et al. 2016, §3-4",
        asserts: "graph coloring lets Gauss-Seidel run in parallel, color by color, converging close to sequential Gauss-Seidel and far better than Jacobi",
        scope: "convergence per iteration and parallel speed at the sizes parallelism is for",
        errors: ITERATION_ERROR,
        quantity: "residual per iteration from the common cloth state (c11.csv); paired speed-up of 2 threads over 1 (c11_parallel.csv)",
        comparison: "parts: colored needs at most the tolerance times gs's iterations to gs's level after 20; jacobi needs at least 2x colored's to colored's level after 20 (C2's factor); each size's speed-up interval above 1.2",
        tolerance: Some(Tolerance {
            what: "factor \"close to\" sequential Gauss-Seidel",
            value: 1.5,
            reason: "half again as many iterations; swept from 1.1 to 3",
            sweep: &[1.1, 1.25, 1.5, 2.0, 3.0],
            fmt: Fmt::Plain,
        }),
    },
    Spec {
        id: "C12",
        section: "the Unity tutorial, section 5 (the elastic jelly ball)",
        asserts: "more iterations satisfy the constraints better and keep volume and shape better; usually 3-5 are enough",
        scope: "the jelly ball; \"enough\" in volume and shape",
        errors: "neither error of one step: the volume a run keeps over many steps, against the same run at 128 iterations",
        quantity: "mean volume deficit |1 - V/V0| over a 180-step drop per iteration count, above the same run's at 128 iterations (c12.csv)",
        comparison: "crossing rule: the count (interpolated) from which the excess stays within the tolerance is at most 5",
        tolerance: Some(Tolerance {
            what: "mean volume deficit above the converged run's",
            value: 0.005,
            reason: "the tutorial gives none; half a percent of volume is below what a viewer sees on a bouncing ball, swept from 0.1% to 5%",
            sweep: &[0.001, 0.002, 0.005, 0.01, 0.02, 0.05],
            fmt: Fmt::Percent,
        }),
    },
    Spec {
        id: "C13",
        section: "Macklin et al. 2014, §4.2",
        asserts: "averaging each particle's Jacobi corrections by its constraint count (with over-relaxation omega) makes the Jacobi iteration of PBD converge where plain Jacobi may not",
        scope: "plain PBD (compliance 0; the paper predates XPBD); a converged solve satisfies the constraints. The project's hybrid (the same averaging with unscaled XPBD multipliers, `Averaging::Particle` on a compliant chain) is its own variant, reported in c13.csv, not judged under this source",
        errors: "the iteration error: a converged PBD solve at compliance 0 leaves no stretch whatever the path",
        quantity: "worst segment stretch over rest length of a hanging chain at compliance 0 after settling, Macklin's averaging (omega 1, 1.5) and gs (c13_pbd.csv)",
        comparison: "each averaged run at the most iterations is within the tolerance: confirmed if all, refuted if none, partly otherwise",
        tolerance: Some(Tolerance {
            what: "worst segment stretch over rest length",
            value: 1e-3,
            reason: "0.1 mm on a 10 cm segment, well above f32 rounding and below sight; swept from 1e-4 to 1e-2",
            sweep: &[1e-4, 1e-3, 1e-2],
            fmt: Fmt::Sci,
        }),
    },
    Spec {
        id: "C14",
        section: "Müller et al. 2007, §3.3",
        asserts: "projecting internal constraints with inverse-mass weighting conserves linear (and angular) momentum",
        scope: "the paper's projection (Gauss-Seidel); averaging variants are this project's and reported, not judged under this source",
        errors: "neither: momentum, which a projection conserves or not at every iterate, whatever its distance to a converged answer",
        quantity: "|p - p0| / |p0| of a free cloth after 100 steps without gravity (c14.csv)",
        comparison: "gs's figure within the tolerance",
        tolerance: Some(Tolerance {
            what: "relative momentum change",
            value: 1e-4,
            reason: "f32 rounding over 100 steps leaves a few 1e-6; swept from 1e-5 to 1e-3",
            sweep: &[1e-5, 3e-5, 1e-4, 1e-3],
            fmt: Fmt::Sci,
        }),
    },
    Spec {
        id: "C15",
        section: "Young 1954; Saad 2003, §4.2.5",
        asserts: "for a consistently ordered matrix rho(GS) = rho(J)^2",
        scope: "linear systems with consistently ordered matrices (the rope's chain is one; the cloth is not)",
        errors: ITERATION_ERROR,
        quantity: "gs's and plain Jacobi's measured rates and linearized radii on the rope (c15.csv)",
        comparison: "|ln rho_gs / ln rho_j^2 - 1| within the tolerance for the measured rates and for the radii; confirmed if both, refuted if neither",
        tolerance: Some(Tolerance {
            what: "relative deviation of the log ratio from 1",
            value: 0.1,
            reason: "the measured tail rates carry a few percent from the finite tail; swept from 2% to 20%",
            sweep: &[0.02, 0.05, 0.1, 0.2],
            fmt: Fmt::Plain,
        }),
    },
    Spec {
        id: "C16",
        section: "Müller et al. 2007, §3.3",
        asserts: "with a plain stiffness factor k per projection the effective stiffness depends on the iteration count (and the time step)",
        scope: "plain PBD without the k' correction",
        errors: "neither: the stretch of plain PBD runs at several iteration counts and dt, whose dependence on them is the point; no run is compared with a converged answer",
        quantity: "late mean stretch at 2-16 iterations and at dt 1/30-1/120 (c16.csv)",
        comparison: "spread (max - min) / mean at least the tolerance over iterations and over dt; confirmed if both, refuted if neither",
        tolerance: Some(Tolerance {
            what: "spread that counts as dependence",
            value: 0.5,
            reason: "half the mean is far beyond run-to-run motion; swept from 0.1 to 1",
            sweep: &[0.1, 0.25, 0.5, 1.0],
            fmt: Fmt::Plain,
        }),
    },
    Spec {
        id: "C17",
        section: "Fratarcangeli et al. 2016, §3-4 (the assumption behind reordering)",
        asserts: "the order in which Gauss-Seidel visits the constraints matters little for its convergence, so it can be reordered by color",
        scope: "an assumption the paper relies on, not a measured claim of it; for linear systems the rate depends on the order in general (Saad 2003, §4.2)",
        errors: ITERATION_ERROR,
        quantity: "residual per iteration of natural, shuffled and colored order from the common cloth state (c17_curves.csv)",
        comparison: "convergence measure: each other order needs at most the tolerance times natural order's iterations to natural's level after 20 (level rule); confirmed if both do, refuted if neither",
        tolerance: Some(Tolerance {
            what: "factor that still \"matters little\"",
            value: 1.5,
            reason: "half again as many iterations; swept from 1.1 to 3",
            sweep: &[1.1, 1.25, 1.5, 2.0, 3.0],
            fmt: Fmt::Plain,
        }),
    },
    Spec {
        id: "C18",
        section: "Macklin et al. 2014, §4.2",
        asserts: "a Jacobi iteration over constraints can fail to converge when constraints are redundant; averaging by each particle's constraint count makes it converge",
        scope: "plain PBD (the common cloth state is at compliance 0)",
        errors: ITERATION_ERROR,
        quantity: "mean contraction per iteration over 400 iterations, plain and averaged, omega 1 (c18.csv)",
        comparison: "plain's contraction >= 1 and averaged's < 1: exact, no tolerance",
        tolerance: None,
    },
    Spec {
        id: "C19",
        section: "Fratarcangeli et al. 2016, abstract",
        asserts: "colored Gauss-Seidel stays stable with a small fixed budget of iterations per frame where Jacobi-type solvers need more iterations or damping",
        scope: "stability at small budgets, not accuracy",
        errors: "neither: whether runs stay bounded (stability rule), not a distance to a converged answer",
        quantity: "per run from rest: finished, energy rise above the start over |E(0)|, largest-stretch growth over the second half (c19.csv)",
        comparison: "stability rule on every run (the same as C6's); refuted if colored is unstable anywhere; otherwise confirmed if every Jacobi-type variant is unstable somewhere colored is stable, partly if some are",
        tolerance: Some(Tolerance {
            what: "energy rise above the start, over |E(0)|",
            value: 1e-3,
            reason: "a run from rest without damping should not gain energy; 1e-3 is rounding and the secant velocity's wobble; swept from 1e-4 to 0.1",
            sweep: &[1e-4, 1e-3, 1e-2, 0.1],
            fmt: Fmt::Sci,
        }),
    },
    Spec {
        id: "C20",
        section: "Macklin et al. 2019, §4-5",
        asserts: "substepping with one iteration per substep damps less than fewer, larger steps with more iterations at the same cost",
        scope: "numerical damping at equal projections",
        errors: "neither: the swing energy runs keep, not a distance to a converged answer",
        quantity: "swing energy kept after 6 s, n x 1 against 1 x n, rope and cloth (c20.csv)",
        comparison: "substeps keep more than the tolerance times 1 x n's at every scene and total: confirmed; at none: refuted",
        tolerance: Some(Tolerance {
            what: "factor of energy kept that counts as less damping",
            value: 1.1,
            reason: "a tenth more energy is above the run's measurement noise; swept from 1 to 3",
            sweep: &[1.0, 1.1, 1.5, 2.0, 3.0],
            fmt: Fmt::Plain,
        }),
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    fn healthy() -> Health {
        Health {
            finished: true,
            rise: 0.1,
            energy_growth: Some(0.5),
            stretch_growth: 0.97,
        }
    }

    #[test]
    fn the_stability_rule_passes_a_bounded_run_and_fails_each_kind_of_failure() {
        assert!(stable(&healthy(), 2.0));
        for bad in [
            Health {
                finished: false,
                ..healthy()
            },
            Health {
                rise: 3.0,
                ..healthy()
            },
            Health {
                energy_growth: Some(1.2),
                ..healthy()
            },
            Health {
                stretch_growth: 1.29,
                ..healthy()
            },
            Health {
                stretch_growth: f64::NAN,
                ..healthy()
            },
        ] {
            assert!(!stable(&bad, 2.0), "{bad:?}");
        }
        // A growing stretch fails whatever the energy bound: C6 and C19 cannot disagree on it.
        let growing = Health {
            stretch_growth: 1.29,
            ..healthy()
        };
        assert!(!stable(&growing, 1e9));
    }

    #[test]
    fn the_convergence_measure_confirms_a_faster_solver_and_refutes_a_slower_one() {
        // reference halves each iteration; other loses a tenth.
        let fast: Vec<f64> = (0..60).map(|k| 0.5f64.powi(k)).collect();
        let slow: Vec<f64> = (0..60).map(|k| 0.9f64.powi(k)).collect();
        let m = to_level(&slow, &fast, 20).unwrap();
        // 0.9^20 = 0.1216: 0.5^3 = 0.125 is above it, 0.5^4 below.
        assert_eq!(m.other, Some(4));
        assert!(m.ratio() < 1.0);
        let m = to_level(&fast, &slow, 5).unwrap();
        // 0.5^5 = 0.03125; 0.9^k <= it from k = 33.
        assert_eq!(m.other, Some(33));
        assert_eq!(m.at_least(2.0), Some(true));
        assert_eq!(m.at_most(1.5), Some(false));
        // Not reached in a run too short to tell.
        let m = to_level(&fast, &slow[..8], 5).unwrap();
        assert_eq!(m.other, None);
        assert_eq!(m.at_least(2.0), None);
        assert_eq!(m.at_most(1.2), Some(false));
    }

    #[test]
    fn the_level_rule_takes_the_references_residual_at_the_budget() {
        let c = [1.0, 0.8, 0.5, f64::NAN];
        assert_eq!(level_of(&c, 2), Some(0.5));
        assert_eq!(level_of(&c, 3), None);
        assert_eq!(level_of(&c, 9), None);
        // A curve that first rises: the level is where it is after the budget, not its minimum.
        let rising = [1.0, 1.3, 1.2, 0.9];
        assert_eq!(level_of(&rising, 1), Some(1.3));
        assert_eq!(iterations_to(&[1.0, 1.2, 1.1, 0.9], 1.0), Some(3));
    }

    #[test]
    fn the_crossing_interpolates_between_tested_counts() {
        let its = [8, 16, 20, 32];
        let excess = [0.2, 0.06, 0.04, 0.02];
        // 5% is crossed between 16 (6%) and 20 (4%): half-way in the figure.
        match crossing(&its, &excess, 0.05) {
            Crossing::At(k) => {
                assert!((k - (16f64.ln() + 0.5 * (20f64.ln() - 16f64.ln())).exp()).abs() < 1e-9)
            }
            c => panic!("{c:?}"),
        }
        assert!(crossing(&its, &excess, 0.05).within(10.0, 20.0));
        assert!(!crossing(&its, &excess, 0.01).within(10.0, 20.0));
        assert_eq!(crossing(&its, &excess, 0.01), Crossing::Beyond(32.0));
        assert_eq!(crossing(&its, &excess, 0.5), Crossing::AtMost(8.0));
        // A count within the tolerance that a higher count leaves again does not count.
        assert_eq!(
            crossing(&[1, 2, 4], &[0.01, 0.2, 0.01], 0.05),
            Crossing::At(
                (2f64.ln() + ((0.2 - 0.05) / (0.2 - 0.01)) * (4f64.ln() - 2f64.ln())).exp()
            )
        );
    }

    #[test]
    fn a_verdict_is_one_word_only_where_it_holds_over_the_whole_sweep() {
        use Verdict::{Confirmed, Refuted};
        let same = [(1.0, Confirmed), (2.0, Confirmed)];
        assert_eq!(
            over_sweep(&same, Fmt::Plain),
            "confirmed over the whole sweep (1 to 2)"
        );
        let flips = [
            (0.01, Refuted),
            (0.02, Refuted),
            (0.05, Confirmed),
            (0.1, Confirmed),
            (0.2, Refuted),
        ];
        assert_eq!(
            over_sweep(&flips, Fmt::Percent),
            "depends on the tolerance: refuted from 1% to 2%; confirmed from 5% to 10%; refuted at 20%"
        );
    }

    #[test]
    fn local_orders_leave_out_the_step_onto_the_floor() {
        // Quadratic from 1e-1: 1e-2, 1e-4, 1e-8, then the floor at 1e-16 and flat.
        let r = [1.0, 1e-1, 1e-2, 1e-4, 1e-8, 1e-16, 1e-16];
        let q = local_orders(&r, 3);
        // Triples above 1e3 x 1e-16: up to r = 1e-8 (the step onto the floor left out).
        assert_eq!(q.iter().map(|p| p.0).collect::<Vec<_>>(), vec![1, 2, 3]);
        assert!((q[0].1 - 1.0).abs() < 1e-9);
        assert!((q[2].1 - 2.0).abs() < 1e-9);
        // Linear: order 1.
        let lin: Vec<f64> = (0..40).map(|k| 0.5f64.powi(k)).collect();
        let q = local_orders(&lin, 3);
        assert_eq!(q.len(), 3);
        assert!(q.iter().all(|(_, q)| (q - 1.0).abs() < 1e-9));
    }

    #[test]
    fn every_spec_has_a_measurement_and_its_tolerance_in_an_ascending_sweep() {
        assert_eq!(SPECS.len(), super::super::CLAIMS.len());
        for (s, e) in SPECS.iter().zip(super::super::CLAIMS) {
            assert_eq!(s.id, e.id);
            if let Some(t) = s.tolerance {
                assert!(t.sweep.windows(2).all(|w| w[0] < w[1]), "{}", s.id);
                assert!(t.sweep.contains(&t.value), "{}", s.id);
            }
            // A missing directory is an error naming the file, never a panic.
            let err = judge(s, Path::new("/nonexistent-dir")).err();
            assert!(err.is_some(), "{}", s.id);
        }
    }

    /// Writes `text` to `dir`/`name`.
    fn write(dir: &Path, name: &str, text: &str) {
        std::fs::write(dir.join(name), text).unwrap();
    }

    /// Claim `id` judged from `dir` at its stated tolerance.
    fn stated(id: &str, dir: &Path) -> Verdict {
        judge(spec(id).unwrap(), dir).unwrap().stated.verdict
    }

    /// A converge.csv-layout file of gs's and jacobi's residual curves.
    fn residual_csv(gs: f64, jacobi: f64) -> String {
        let mut s = String::from("scene,n,solver,iteration,residual,elapsed_us\n");
        for (name, rate) in [("gs", gs), ("jacobi", jacobi)] {
            for k in 0..400 {
                s.push_str(&format!("cloth,23,{name},{k},{},NaN\n", rate.powi(k)));
            }
        }
        s
    }

    #[test]
    fn the_level_rule_and_convergence_measure_decide_a_claim_both_ways_from_its_csv() {
        let dir = tempfile::tempdir().unwrap();
        // Jacobi losing a hundredth per iteration against gs's tenth: far more than twice the
        // iterations to gs's level after 20 (C2 confirmed).
        write(dir.path(), "c2.csv", &residual_csv(0.9, 0.99));
        assert_eq!(stated("C2", dir.path()), Verdict::Confirmed);
        // Jacobi as fast as gs: the same 20 iterations (C2 refuted).
        write(dir.path(), "c2.csv", &residual_csv(0.9, 0.9));
        assert_eq!(stated("C2", dir.path()), Verdict::Refuted);
    }

    /// A c5.csv with the converged run at 1% stretch and `excess` above it at `its`.
    fn stretch_csv(its: &[usize], excess: &[f64]) -> String {
        let mut s = String::from(
            "role,iterations,steps,distance_to_reference_m,stretch_mean_avg,status\nreference,256,120,0,0.01,ok\n",
        );
        for (k, e) in its.iter().zip(excess) {
            s.push_str(&format!("run,{k},120,0.1,{},ok\n", 0.01 + e));
        }
        s
    }

    #[test]
    fn the_crossing_rule_decides_a_claim_both_ways_from_its_csv() {
        let dir = tempfile::tempdir().unwrap();
        let its = [4, 8, 16, 32, 64];
        // Within 5% from between 8 and 16 iterations on: ten-odd (C5 confirmed).
        write(
            dir.path(),
            "c5.csv",
            &stretch_csv(&its, &[0.3, 0.08, 0.03, 0.01, 0.005]),
        );
        assert_eq!(stated("C5", dir.path()), Verdict::Confirmed);
        // Within 5% only from between 32 and 64 (C5 refuted).
        write(
            dir.path(),
            "c5.csv",
            &stretch_csv(&its, &[0.3, 0.2, 0.15, 0.08, 0.01]),
        );
        assert_eq!(stated("C5", dir.path()), Verdict::Refuted);
    }

    #[test]
    fn verify_reads_the_verdict_line_of_each_claim_section() {
        let md = "# x\n\n## C1\n\n- **Verdict:** refuted over the whole sweep (0% to 25%) (at the stated 0%: refuted)\n## C2\n- **Rule:** r\n- **Verdict:** confirmed\n## Machine\n- **Verdict:** no\n";
        let v = written_verdicts(md);
        assert_eq!(v.len(), 2);
        assert_eq!(v[1], ("C2".into(), "confirmed".into()));
    }
}
