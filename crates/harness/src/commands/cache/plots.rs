//! Plots whose points carry intervals (a vertical bar from the lower to the upper end), and
//! plain bound lines beside them, drawn with plotters as SVG and PNG.
//!
//! A log axis is drawn as a linear axis over log10 of the values, labelled with the values.

use crate::output::plot::{draw_legend, draw_mesh, fmt_num, save_svg_png, Figure, PALETTE};
use crate::setup::Error;
use plotters::coord::Shift;
use plotters::prelude::*;
use std::path::{Path, PathBuf};

/// One line of points with intervals.
#[derive(Debug, Clone, Default)]
pub struct Band {
    /// Legend text.
    pub name: String,
    /// (x, lower end, median, upper end); non-finite or (on a log axis) non-positive ones are
    /// left out.
    pub points: Vec<(f64, f64, f64, f64)>,
    /// Palette index.
    pub color: usize,
    /// Dashed line (a bound rather than a measurement); drawn without bars.
    pub dashed: bool,
}

/// A plot of [`Band`]s.
#[derive(Debug, Clone, Default)]
pub struct IntervalPlot {
    /// Caption.
    pub title: String,
    /// X axis label.
    pub x_label: String,
    /// Y axis label.
    pub y_label: String,
    /// Logarithmic x axis.
    pub x_log: bool,
    /// Logarithmic y axis.
    pub y_log: bool,
    /// The lines.
    pub bands: Vec<Band>,
}

fn tr(v: f64, log: bool) -> Option<f64> {
    match (v.is_finite(), log) {
        (false, _) => None,
        (true, true) if v > 0.0 => Some(v.log10()),
        (true, true) => None,
        (true, false) => Some(v),
    }
}

impl IntervalPlot {
    fn transformed(&self, b: &Band) -> Vec<(f64, f64, f64, f64)> {
        b.points
            .iter()
            .filter_map(|&(x, lo, m, hi)| {
                Some((
                    tr(x, self.x_log)?,
                    tr(lo, self.y_log).or(tr(m, self.y_log))?,
                    tr(m, self.y_log)?,
                    tr(hi, self.y_log).or(tr(m, self.y_log))?,
                ))
            })
            .collect()
    }

    /// Writes `stem.svg` and `stem.png`; returns both paths.
    pub fn save(&self, stem: &Path) -> Result<Vec<PathBuf>, Error> {
        save_svg_png(self, stem)
    }

    /// Draws on any plotters area.
    pub fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String> {
        let s = |e: &dyn std::fmt::Display| e.to_string();
        root.fill(&WHITE).map_err(|e| s(&e))?;
        let all: Vec<(f64, f64, f64, f64)> = self
            .bands
            .iter()
            .flat_map(|b| self.transformed(b))
            .collect();
        let span = |lo: f64, hi: f64| {
            if !lo.is_finite() || !hi.is_finite() {
                (0.0, 1.0)
            } else if hi - lo < 1e-9 {
                (lo - 0.5, hi + 0.5)
            } else {
                let pad = 0.05 * (hi - lo);
                (lo - pad, hi + pad)
            }
        };
        let (x0, x1) = span(
            all.iter().map(|p| p.0).fold(f64::INFINITY, f64::min),
            all.iter().map(|p| p.0).fold(f64::NEG_INFINITY, f64::max),
        );
        let (y0, y1) = span(
            all.iter().map(|p| p.1).fold(f64::INFINITY, f64::min),
            all.iter().map(|p| p.3).fold(f64::NEG_INFINITY, f64::max),
        );
        let mut chart = ChartBuilder::on(root)
            .caption(&self.title, ("sans-serif", 20))
            .margin(14)
            .x_label_area_size(48)
            .y_label_area_size(80)
            .build_cartesian_2d(x0..x1, y0..y1)
            .map_err(|e| s(&e))?;
        let (xl, yl) = (self.x_log, self.y_log);
        let xf = move |v: &f64| fmt_num(if xl { 10f64.powf(*v) } else { *v });
        let yf = move |v: &f64| fmt_num(if yl { 10f64.powf(*v) } else { *v });
        draw_mesh(&mut chart, (&self.x_label, &self.y_label), &xf, &yf)?;
        let w = (x1 - x0) * 0.004;
        for b in &self.bands {
            let pts = self.transformed(b);
            let color = PALETTE[b.color % PALETTE.len()];
            let style = ShapeStyle {
                color: color.to_rgba(),
                filled: false,
                stroke_width: 2,
            };
            let line: Vec<(f64, f64)> = pts.iter().map(|p| (p.0, p.2)).collect();
            let anno = if b.dashed {
                chart.draw_series(DashedLineSeries::new(line, 7, 5, style))
            } else {
                chart.draw_series(LineSeries::new(line, style))
            }
            .map_err(|e| s(&e))?;
            let dashed = b.dashed;
            anno.label(b.name.clone()).legend(move |(x, y)| {
                let end = if dashed { x + 8 } else { x + 20 };
                PathElement::new(vec![(x, y), (end, y)], style)
            });
            if !b.dashed {
                let thin = ShapeStyle {
                    color: color.to_rgba(),
                    filled: false,
                    stroke_width: 1,
                };
                for &(x, lo, m, hi) in &pts {
                    chart
                        .draw_series(std::iter::once(PathElement::new(
                            vec![(x, lo), (x, hi)],
                            thin,
                        )))
                        .map_err(|e| s(&e))?;
                    chart
                        .draw_series(
                            [lo, hi]
                                .into_iter()
                                .map(|y| PathElement::new(vec![(x - w, y), (x + w, y)], thin)),
                        )
                        .map_err(|e| s(&e))?;
                    chart
                        .draw_series(std::iter::once(Circle::new((x, m), 2, color.filled())))
                        .map_err(|e| s(&e))?;
                }
            }
        }
        draw_legend(&mut chart, SeriesLabelPosition::UpperLeft, 12)
    }
}

impl Figure for IntervalPlot {
    fn draw_on<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String> {
        self.draw(root)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interval_plots_are_written_with_log_axes_and_bad_points() {
        crate::output::plot::register_font().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let p = IntervalPlot {
            title: "t".into(),
            x_label: "x".into(),
            y_label: "y".into(),
            x_log: true,
            y_log: true,
            bands: vec![
                Band {
                    name: "a".into(),
                    points: vec![
                        (10.0, 1.0, 2.0, 3.0),
                        (100.0, 2.0, 3.0, 5.0),
                        (0.0, 1.0, 1.0, 1.0),
                    ],
                    color: 0,
                    dashed: false,
                },
                Band {
                    name: "bound".into(),
                    points: vec![(10.0, f64::NAN, 1.0, f64::NAN), (100.0, 1.0, 1.5, 1.0)],
                    color: 1,
                    dashed: true,
                },
            ],
        };
        for f in p.save(&dir.path().join("p")).unwrap() {
            assert!(std::fs::metadata(&f).unwrap().len() > 1000);
        }
    }
}
