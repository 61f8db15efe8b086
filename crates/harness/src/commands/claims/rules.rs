//! The claim-specific comparisons the engine (`engine.rs`) applies, as pure functions of
//! measured numbers with the tolerance as a parameter, so that a test can feed each one a
//! synthetic measurement that must confirm and one that must refute. The rules several claims
//! share (stability, convergence measure, level, crossing) are in `engine.rs`.
//!
//! A rule in several parts gives each part as `Some(true)` (holds), `Some(false)` (fails) or
//! `None` (a timed part whose interval straddles its threshold). [`parts`] then returns the
//! verdict every way of settling the undecided parts agrees on, or `inconclusive` when they
//! disagree; so a timing part can only move a verdict to `inconclusive`, and two runs whose
//! intervals both hold the true value cannot give one `confirmed` and the other `refuted`.

use super::claim::Verdict;
use crate::measure::paired::{Interval, Side};

/// `Some(true)` if the interval lies wholly on the confirming side of `threshold` (above it
/// when `above_holds`), `Some(false)` if wholly on the other, `None` if it straddles.
pub fn side_holds(iv: &Interval, threshold: f64, above_holds: bool) -> Option<bool> {
    if iv.samples == 0 || !iv.lo.is_finite() || !iv.hi.is_finite() {
        return None;
    }
    match iv.side(threshold) {
        Side::Above => Some(above_holds),
        Side::Below => Some(!above_holds),
        Side::Straddles => None,
    }
}

/// All parts hold: confirmed; none: refuted; some: partly; undecided parts that could change
/// which of these it is: inconclusive.
pub fn parts(p: &[Option<bool>]) -> Verdict {
    let held = p.iter().filter(|x| **x == Some(true)).count();
    let open = p.iter().filter(|x| x.is_none()).count();
    let lo = Verdict::from_parts(held, p.len());
    let hi = Verdict::from_parts(held + open, p.len());
    if lo == hi {
        lo
    } else {
        Verdict::Inconclusive
    }
}

/// The verdict of one timed figure against one threshold.
pub fn timed(iv: &Interval, threshold: f64, above_holds: bool) -> Verdict {
    parts(&[side_holds(iv, threshold, above_holds)])
}

/// The log-log slope implied by a time ratio between two sizes, with its interval (the map is
/// monotone, so the ratio's interval maps onto the slope's).
pub fn slope_of_ratio(ratio: &Interval, size_ratio: f64) -> Interval {
    let f = |r: f64| r.ln() / size_ratio.ln();
    Interval {
        lo: f(ratio.lo),
        median: f(ratio.median),
        hi: f(ratio.hi),
        samples: ratio.samples,
    }
}

/// C3: the slope of step time against vertices from 529 to 1024 vertices (its interval above
/// `threshold` counts as superlinear) and, where measured, the growth of cache misses per
/// projection over the same sizes (the stated cause; at least 1.5x).
pub fn c3(slope: &Interval, miss_growth: Option<f64>, threshold: f64) -> Verdict {
    let superlinear = side_holds(slope, threshold, true);
    match miss_growth {
        Some(g) => parts(&[superlinear, Some(g >= 1.5)]),
        None => parts(&[superlinear]),
    }
}

/// C4: the claimed product iterations x vertices x edges has slope 2 against vertices (edges
/// grow with vertices); cost proportional to iterations x constraints has slope 1. The slope
/// decides (interval above `threshold`: the product; below: refuted); linearity in iterations
/// (straight-line R² >= 0.98) is needed for a full confirmation.
pub fn c4(r2_iterations: f64, slope: &Interval, threshold: f64) -> Verdict {
    match side_holds(slope, threshold, true) {
        Some(true) if r2_iterations >= 0.98 => Verdict::Confirmed,
        Some(true) => Verdict::Partly,
        Some(false) => Verdict::Refuted,
        None => Verdict::Inconclusive,
    }
}

/// C15: measured gs rate against plain Jacobi's squared, and the linearized iteration's
/// spectral radii: confirmed if both `|log rho_gs / log rho_j^2 - 1| <= tol`, refuted if
/// neither, partly otherwise. Rates are per-iteration contraction factors in (0, 1).
pub fn c15(measured: (f64, f64), linearized: (f64, f64), tol: f64) -> Verdict {
    let holds = |(gs, j): (f64, f64)| {
        gs > 0.0
            && gs < 1.0
            && j > 0.0
            && j < 1.0
            && ((gs.ln() / (2.0 * j.ln())) - 1.0).abs() <= tol
    };
    Verdict::from_parts(holds(measured) as usize + holds(linearized) as usize, 2)
}

/// C16: spread = (max - min) / mean of plain PBD's stretch across iteration counts and across
/// time steps; stiffness "depends" on a setting if the spread is at least `min_spread`.
pub fn c16(spread_iterations: f64, spread_dt: f64, min_spread: f64) -> Verdict {
    Verdict::from_parts(
        (spread_iterations >= min_spread) as usize + (spread_dt >= min_spread) as usize,
        2,
    )
}

/// C7: largest stable stiffness of explicit Euler, semi-implicit Euler and Verlet. Parts:
/// semi-implicit >= `factor` x explicit ("an order of magnitude"); Verlet > explicit.
pub fn c7(explicit: f64, semi_implicit: f64, verlet: f64, factor: f64) -> Verdict {
    Verdict::from_parts(
        (semi_implicit >= factor * explicit) as usize + (verlet > explicit) as usize,
        2,
    )
}

/// C8: of `totals` compared totals, `stretch_wins` where substeps stretch less and `wins`
/// where they also cost at most 1.5x. Confirmed if they win at every total, refuted if their
/// stretch is never lower, partly otherwise.
pub fn c8(stretch_wins: usize, wins: usize, totals: usize) -> Verdict {
    if wins == totals && totals > 0 {
        Verdict::Confirmed
    } else if stretch_wins == 0 {
        Verdict::Refuted
    } else {
        Verdict::Partly
    }
}

/// C10: spreads of plain PBD and k' over iterations, XPBD's relative deviations from its
/// converged stretch at each tested iteration count (ascending counts), and XPBD's spread over
/// dt with converged steps. Parts: k' spread <= limit and <= half plain's; XPBD approaches its
/// converged limit (each deviation at most 1.1x the one before, the last <= limit: the paper
/// claims iteration independence of converged solves, not of a few iterations); dt spread <=
/// limit.
pub fn c10(
    spread_plain: f64,
    spread_k_prime: f64,
    xpbd_deviations: &[f64],
    xpbd_dt: f64,
    limit: f64,
) -> Verdict {
    let approaches = !xpbd_deviations.is_empty()
        && xpbd_deviations.windows(2).all(|w| w[1] <= 1.1 * w[0])
        && xpbd_deviations.last().is_some_and(|&d| d <= limit);
    let p = [
        spread_k_prime <= limit && spread_k_prime <= 0.5 * spread_plain,
        approaches,
        xpbd_dt <= limit,
    ];
    Verdict::from_parts(p.iter().filter(|&&b| b).count(), 3)
}

/// C18: mean contraction per iteration of plain Jacobi and of averaged Jacobi at omega 1.
/// Parts: plain does not converge (>= 1); averaged does (< 1).
pub fn c18(plain: f64, averaged: f64) -> Verdict {
    Verdict::from_parts((plain >= 1.0) as usize + (averaged < 1.0) as usize, 2)
}

/// C20: of `kept` (per scene and total n, the fraction of the swing energy kept after the run
/// by n substeps of one iteration and by one step of n iterations), the pairs where substeps
/// keep more than `factor` times as much (a negative fraction counting as 0).
pub fn damping_wins(kept: &[(f64, f64)], factor: f64) -> usize {
    kept.iter()
        .filter(|(sub, its)| sub.is_finite() && its.is_finite() && *sub > factor * its.max(0.0))
        .count()
}

/// C20: substeps damp less at every pair of [`damping_wins`]: confirmed; at none (or nothing
/// measured): refuted; partly otherwise.
pub fn c20(kept: &[(f64, f64)], factor: f64) -> Verdict {
    if kept.is_empty() {
        return Verdict::Refuted;
    }
    Verdict::from_parts(damping_wins(kept, factor), kept.len())
}
