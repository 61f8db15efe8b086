//! Interleaved timing of several alternatives ("arms"), and distribution-free intervals for
//! their medians and for their paired ratios.
//!
//! On a shared virtual machine the speed of one and the same run drifts by tens of percent
//! between time windows, so timing arm A and then arm B measures the drift as much as the
//! difference. Here the arms take turns, in an order rotated each round, so drift hits every
//! arm alike; each round then yields one paired sample of every ratio. The interval of a median
//! is the classical order-statistic one (the binomial distribution of how many samples fall
//! below the true median, in its normal approximation), which assumes nothing about the
//! distribution of the times.

/// What [`interleave`] measured: per arm, every sample and the median of each round's turn.
#[derive(Debug, Clone, Default)]
pub struct Interleaved {
    /// All samples of each arm, in the order taken.
    pub samples: Vec<Vec<f64>>,
    /// Per arm, the median of its turn in each round (index: round).
    pub turn_medians: Vec<Vec<f64>>,
}

impl Interleaved {
    /// The median of arm `arm`'s samples with its interval at `confidence` (e.g. 0.95).
    pub fn median(&self, arm: usize, confidence: f64) -> Interval {
        median_interval(&self.samples[arm], confidence)
    }

    /// The paired ratio `arm a / arm b` (median over rounds of the ratio of the turn medians)
    /// with its interval at `confidence`.
    pub fn ratio(&self, a: usize, b: usize, confidence: f64) -> Interval {
        let r: Vec<f64> = self.turn_medians[a]
            .iter()
            .zip(&self.turn_medians[b])
            .map(|(x, y)| x / y)
            .collect();
        median_interval(&r, confidence)
    }
}

/// Runs `rounds` rounds; in round `r` every arm runs one turn, starting with arm `r % arms`.
/// `turn(arm)` runs that arm's turn and returns its samples (e.g. step times).
pub fn interleave<E>(
    arms: usize,
    rounds: usize,
    mut turn: impl FnMut(usize) -> Result<Vec<f64>, E>,
) -> Result<Interleaved, E> {
    let mut m = Interleaved {
        samples: vec![Vec::new(); arms],
        turn_medians: vec![Vec::with_capacity(rounds); arms],
    };
    for round in 0..rounds {
        for k in 0..arms {
            let arm = (k + round) % arms;
            let s = turn(arm)?;
            m.turn_medians[arm].push(crate::measure::stats::quantile(&s, 0.5));
            m.samples[arm].extend(s);
        }
    }
    Ok(m)
}

/// A median and the interval that holds the true median with the stated confidence.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Interval {
    /// Lower end.
    pub lo: f64,
    /// The sample median.
    pub median: f64,
    /// Upper end.
    pub hi: f64,
    /// Number of samples behind it.
    pub samples: usize,
}

/// Where an interval lies against a threshold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// The whole interval is below the threshold.
    Below,
    /// The whole interval is above it.
    Above,
    /// The threshold lies inside the interval: the data cannot decide.
    Straddles,
}

impl Interval {
    /// The median and the interval's ends as CSV cells, in that order.
    pub fn cells(&self) -> [String; 3] {
        [self.median, self.lo, self.hi].map(|x| x.to_string())
    }

    /// Which side of `threshold` the interval lies on.
    pub fn side(&self, threshold: f64) -> Side {
        if self.hi < threshold {
            Side::Below
        } else if self.lo > threshold {
            Side::Above
        } else {
            Side::Straddles
        }
    }

    /// `median [lo, hi]` with `digits` decimals.
    pub fn display(&self, digits: usize) -> String {
        format!(
            "{:.d$} [{:.d$}, {:.d$}]",
            self.median,
            self.lo,
            self.hi,
            d = digits
        )
    }
}

/// The order-statistic interval of the median of `values` (non-finite values are dropped); with
/// fewer than 3 samples the interval is the whole range. NaN everywhere for no samples.
pub fn median_interval(values: &[f64], confidence: f64) -> Interval {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n == 0 {
        return Interval {
            lo: f64::NAN,
            median: f64::NAN,
            hi: f64::NAN,
            samples: 0,
        };
    }
    let median = crate::measure::stats::quantile(&v, 0.5);
    let z = normal_quantile(0.5 + confidence.clamp(0.5, 0.999) / 2.0);
    let half = z * (n as f64).sqrt() / 2.0;
    // Ranks (0-based) of the order statistics that bound the interval.
    let lo = ((n as f64 / 2.0 - half).floor().max(0.0) as usize).min(n - 1);
    let hi = ((n as f64 / 2.0 + half).ceil() as usize).min(n - 1);
    Interval {
        lo: v[lo].min(median),
        median,
        hi: v[hi].max(median),
        samples: n,
    }
}

/// The standard normal quantile function (Acklam's rational approximation, |error| < 1.2e-9).
fn normal_quantile(p: f64) -> f64 {
    const A: [f64; 6] = [
        -3.969683028665376e1,
        2.209460984245205e2,
        -2.759285104469687e2,
        1.38357751867269e2,
        -3.066479806614716e1,
        2.506628277459239,
    ];
    const B: [f64; 5] = [
        -5.447609879822406e1,
        1.615858368580409e2,
        -1.556989798598866e2,
        6.680131188771972e1,
        -1.328068155288572e1,
    ];
    const C: [f64; 6] = [
        -7.784894002430293e-3,
        -3.223964580411365e-1,
        -2.400758277161838,
        -2.549732539343734,
        4.374664141464968,
        2.938163982698783,
    ];
    const D: [f64; 4] = [
        7.784695709041462e-3,
        3.224671290700398e-1,
        2.445134137142996,
        3.754408661907416,
    ];
    let tail = |q: f64| {
        (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    };
    if p < 0.02425 {
        tail((-2.0 * p.ln()).sqrt())
    } else if p > 1.0 - 0.02425 {
        -tail((-2.0 * (1.0 - p).ln()).sqrt())
    } else {
        let q = p - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normal_quantile_matches_tables() {
        assert!((normal_quantile(0.975) - 1.959964).abs() < 1e-5);
        assert!((normal_quantile(0.5)).abs() < 1e-9);
        assert!((normal_quantile(0.005) + 2.575829).abs() < 1e-5);
    }

    #[test]
    fn median_interval_narrows_with_samples_and_holds_the_median() {
        let few: Vec<f64> = (0..9).map(|i| i as f64).collect();
        let many: Vec<f64> = (0..401).map(|i| (i % 9) as f64).collect();
        let a = median_interval(&few, 0.95);
        let b = median_interval(&many, 0.95);
        assert_eq!(a.median, 4.0);
        assert!(a.lo <= 4.0 && a.hi >= 4.0 && a.hi - a.lo >= 4.0);
        assert_eq!((b.lo, b.median, b.hi), (4.0, 4.0, 4.0));
        assert_eq!(a.side(10.0), Side::Below);
        assert_eq!(a.side(-1.0), Side::Above);
        assert_eq!(a.side(4.5), Side::Straddles);
        assert_eq!(median_interval(&[], 0.95).samples, 0);
    }

    #[test]
    fn interleave_rotates_the_order_and_pairs_rounds() {
        let mut order = Vec::new();
        let m = interleave::<()>(3, 3, |arm| {
            order.push(arm);
            Ok(vec![1.0 + arm as f64])
        })
        .unwrap();
        assert_eq!(order, vec![0, 1, 2, 1, 2, 0, 2, 0, 1]);
        let r = m.ratio(1, 0, 0.95);
        assert_eq!((r.lo, r.median, r.hi), (2.0, 2.0, 2.0));
        assert_eq!(m.median(2, 0.95).median, 3.0);
    }
}
