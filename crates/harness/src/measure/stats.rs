//! Medians and percentiles of timings, and least-squares fits for scaling laws.

/// The `q`-quantile (0..=1) of `values` by linear interpolation between order statistics.
pub fn quantile(values: &[f64], q: f64) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    let mut v = values.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    let pos = q.clamp(0.0, 1.0) * (v.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    v[lo] + (v[hi] - v[lo]) * (pos - lo as f64)
}

/// A least-squares line `y = intercept + slope x`, with its coefficient of determination.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fit {
    /// Slope.
    pub slope: f64,
    /// Intercept.
    pub intercept: f64,
    /// R² (1 = every point on the line).
    pub r2: f64,
}

/// Least-squares line through `(x, y)` points (finite ones only); `None` with fewer than two
/// distinct x.
pub fn linear_fit(points: &[(f64, f64)]) -> Option<Fit> {
    let p: Vec<(f64, f64)> = points
        .iter()
        .copied()
        .filter(|(x, y)| x.is_finite() && y.is_finite())
        .collect();
    if p.len() < 2 {
        return None;
    }
    let n = p.len() as f64;
    let mx = p.iter().map(|q| q.0).sum::<f64>() / n;
    let my = p.iter().map(|q| q.1).sum::<f64>() / n;
    let sxx: f64 = p.iter().map(|q| (q.0 - mx) * (q.0 - mx)).sum();
    let sxy: f64 = p.iter().map(|q| (q.0 - mx) * (q.1 - my)).sum();
    let syy: f64 = p.iter().map(|q| (q.1 - my) * (q.1 - my)).sum();
    if sxx <= 0.0 {
        return None;
    }
    let slope = sxy / sxx;
    let r2 = if syy > 0.0 {
        (sxy * sxy) / (sxx * syy)
    } else {
        1.0
    };
    Some(Fit {
        slope,
        intercept: my - slope * mx,
        r2,
    })
}

/// The exponent `b` of `y = a x^b` fitted on a log-log scale (positive points only).
pub fn loglog_fit(points: &[(f64, f64)]) -> Option<Fit> {
    let logs: Vec<(f64, f64)> = points
        .iter()
        .filter(|(x, y)| *x > 0.0 && *y > 0.0)
        .map(|(x, y)| (x.ln(), y.ln()))
        .collect();
    linear_fit(&logs)
}

#[cfg(test)]
mod tests {
    use super::{linear_fit, loglog_fit, quantile};

    #[test]
    fn fits_recover_lines_and_power_laws() {
        let f = linear_fit(&[(0.0, 1.0), (1.0, 3.0), (2.0, 5.0)]).unwrap();
        assert!((f.slope - 2.0).abs() < 1e-12 && (f.intercept - 1.0).abs() < 1e-12);
        assert!((f.r2 - 1.0).abs() < 1e-12);
        let g = loglog_fit(&[(1.0, 3.0), (2.0, 12.0), (4.0, 48.0)]).unwrap();
        assert!((g.slope - 2.0).abs() < 1e-12);
        assert!(linear_fit(&[(1.0, 1.0)]).is_none());
        assert!(linear_fit(&[(1.0, 1.0), (1.0, 2.0)]).is_none());
    }

    #[test]
    fn quantile_interpolates_between_order_statistics() {
        let v = [4.0, 1.0, 3.0, 2.0];
        assert_eq!(quantile(&v, 0.5), 2.5);
        assert_eq!(quantile(&v, 0.0), 1.0);
        assert_eq!(quantile(&v, 1.0), 4.0);
        assert!(quantile(&[], 0.5).is_nan());
    }
}
