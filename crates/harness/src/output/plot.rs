//! Line plots written as SVG and PNG from one description.
//!
//! SVG text is left to the viewer's fonts; PNG text is rasterized by plotters' `ab_glyph`
//! feature with the DejaVu Sans font shipped in `assets/` (registered once by
//! [`register_font`]), so no system font or fontconfig is needed.

use crate::setup::{io_error, Error};
use plotters::coord::ranged1d::{
    AsRangedCoord, BoldPoints, DefaultFormatting, KeyPointHint, LightPoints, Ranged, ValueFormatter,
};
use plotters::coord::{CoordTranslate, Shift};
use plotters::prelude::*;
use std::path::{Path, PathBuf};

/// The font drawn into PNGs (DejaVu Sans; license beside it in `assets/`).
static FONT: &[u8] = include_bytes!("../../assets/DejaVuSans.ttf");

/// Registers the shipped font as plotters' "sans-serif"; call once before drawing.
pub fn register_font() -> Result<(), Error> {
    plotters::style::register_font("sans-serif", FontStyle::Normal, FONT)
        .map_err(|_| Error::Io("the shipped font assets/DejaVuSans.ttf is not a valid font".into()))
}

/// Tick labels asked of plotters on the x axis.
const X_LABELS: usize = 9;

/// The most measured x values a log x axis labels one by one (`Plot::x_ticks`).
pub const MAX_MEASURED_TICKS: usize = 12;

/// Size of every plot in pixels.
pub const SIZE: (u32, u32) = (900, 560);

/// Ten distinguishable colors (matplotlib's tab10).
pub const PALETTE: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

/// One line of a plot.
#[derive(Debug, Clone, Default)]
pub struct Series {
    /// Legend text.
    pub name: String,
    /// (x, y) points in drawing order; non-finite points (and non-positive ones on a log axis)
    /// are left out.
    pub points: Vec<(f64, f64)>,
    /// Dashed instead of solid.
    pub dashed: bool,
    /// Palette index; the series index when `None`.
    pub color: Option<usize>,
}

impl Series {
    /// A solid line named `name` through the points (`xs[i]`, `ys[i]`), in the next color.
    pub fn xy(name: impl Into<String>, xs: impl IntoIterator<Item = f64>, ys: &[f64]) -> Series {
        Series {
            name: name.into(),
            points: xs.into_iter().zip(ys.iter().copied()).collect(),
            ..Default::default()
        }
    }

    /// A solid line named `name` through (k, `values[k]`) for k up to `max`: a curve over
    /// iterations.
    pub fn curve(name: impl Into<String>, values: &[f64], max: usize) -> Series {
        Series {
            name: name.into(),
            points: values
                .iter()
                .enumerate()
                .take(max.saturating_add(1))
                .map(|(k, &v)| (k as f64, v))
                .collect(),
            ..Default::default()
        }
    }

    /// [`Series::curve`] for each named curve.
    pub fn curves(named: &[(String, Vec<f64>)], max: usize) -> Vec<Series> {
        named
            .iter()
            .map(|(n, c)| Series::curve(n.clone(), c, max))
            .collect()
    }
}

/// A labelled vertical line (e.g. where the working set passes a cache size).
#[derive(Debug, Clone)]
pub struct Marker {
    /// Where.
    pub x: f64,
    /// What.
    pub label: String,
}

/// Where the legend goes.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub enum Legend {
    /// The corner whose legend-sized box covers the least of the drawn lines.
    #[default]
    Auto,
    /// Upper left.
    UpperLeft,
    /// Upper right.
    UpperRight,
    /// Lower left.
    LowerLeft,
    /// Lower right.
    LowerRight,
}

/// A plot description.
#[derive(Debug, Clone, Default)]
pub struct Plot {
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
    pub series: Vec<Series>,
    /// Vertical markers.
    pub markers: Vec<Marker>,
    /// Legend position.
    pub legend: Legend,
}

/// A flat dashed line across `xs` at `y`, for a rule's threshold or target.
pub fn level(name: &str, xs: (f64, f64), y: f64, color: usize) -> Series {
    Series {
        name: name.into(),
        points: vec![(xs.0, y), (xs.1, y)],
        dashed: true,
        color: Some(color),
    }
}

/// A single point named in the legend (drawn as a dot of its color), e.g. where a curve
/// crosses a threshold.
pub fn dot(name: &str, at: (f64, f64), color: usize) -> Series {
    Series {
        name: name.into(),
        points: vec![at],
        dashed: false,
        color: Some(color),
    }
}

/// The first point where the line through `points` (in drawing order) reaches `y` from
/// either side, interpolated linearly, in log10 on a log axis; `None` if it never does.
pub fn crossing(points: &[(f64, f64)], y: f64, x_log: bool, y_log: bool) -> Option<(f64, f64)> {
    let t = |v: f64, log: bool| if log { v.log10() } else { v };
    let pts: Vec<(f64, f64)> = points
        .iter()
        .copied()
        .filter(|&p| keep(p, x_log, y_log))
        .map(|(a, b)| (t(a, x_log), t(b, y_log)))
        .collect();
    let ty = t(y, y_log);
    pts.windows(2).find_map(|w| {
        let ((x0, y0), (x1, y1)) = (w[0], w[1]);
        if (y0 - ty) * (y1 - ty) > 0.0 || y0 == y1 {
            return None;
        }
        let x = x0 + (ty - y0) / (y1 - y0) * (x1 - x0);
        Some((if x_log { 10f64.powf(x) } else { x }, y))
    })
}

/// The corner of the unit square (x right, y up) whose `w` x `h` box holds the fewest of
/// `pts`, and how many it holds; ties go to the first of upper right, upper left, lower
/// right, lower left.
fn emptiest_corner(pts: &[(f64, f64)], w: f64, h: f64) -> (Legend, usize) {
    let corners = [
        (Legend::UpperRight, 1.0 - w, 1.0 - h),
        (Legend::UpperLeft, 0.0, 1.0 - h),
        (Legend::LowerRight, 1.0 - w, 0.0),
        (Legend::LowerLeft, 0.0, 0.0),
    ];
    let count = |&(_, x0, y0): &(Legend, f64, f64)| {
        pts.iter()
            .filter(|p| p.0 >= x0 && p.0 <= x0 + w && p.1 >= y0 && p.1 <= y0 + h)
            .count()
    };
    corners
        .iter()
        .map(|c| (c.0, count(c)))
        .min_by_key(|c| c.1)
        .unwrap_or((Legend::UpperRight, 0))
}

fn keep(p: (f64, f64), x_log: bool, y_log: bool) -> bool {
    p.0.is_finite() && p.1.is_finite() && (!x_log || p.0 > 0.0) && (!y_log || p.1 > 0.0)
}

fn bounds(values: impl Iterator<Item = f64>, log: bool) -> (f64, f64) {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for v in values {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if !lo.is_finite() || !hi.is_finite() {
        return if log { (1.0, 10.0) } else { (0.0, 1.0) };
    }
    if log {
        if hi <= lo * 1.0001 {
            (lo / 2.0, hi * 2.0)
        } else {
            let f = (hi / lo).powf(0.04);
            (lo / f, hi * f)
        }
    } else if hi - lo <= f64::EPSILON * hi.abs().max(1.0) {
        (lo - 0.5 * lo.abs().max(1.0), hi + 0.5 * hi.abs().max(1.0))
    } else {
        let pad = 0.04 * (hi - lo);
        (lo - pad, hi + pad)
    }
}

impl Plot {
    /// A plot of `series` on linear axes, the legend placed where it hides the least.
    pub fn new(
        title: impl Into<String>,
        x_label: &str,
        y_label: &str,
        series: Vec<Series>,
    ) -> Plot {
        Plot {
            title: title.into(),
            x_label: x_label.into(),
            y_label: y_label.into(),
            series,
            ..Default::default()
        }
    }

    /// The plot with a logarithmic x axis.
    pub fn log_x(self) -> Plot {
        Plot {
            x_log: true,
            ..self
        }
    }

    /// The plot with a logarithmic y axis.
    pub fn log_y(self) -> Plot {
        Plot {
            y_log: true,
            ..self
        }
    }

    /// The points of series `i` that can be drawn.
    fn drawable(&self, i: usize) -> Vec<(f64, f64)> {
        self.series[i]
            .points
            .iter()
            .copied()
            .filter(|&p| keep(p, self.x_log, self.y_log))
            .collect()
    }

    /// Writes `stem.svg` and `stem.png`; returns both paths.
    pub fn save(&self, stem: &Path) -> Result<Vec<PathBuf>, Error> {
        save_svg_png(self, stem)
    }

    /// Draws the plot on any plotters drawing area.
    ///
    /// A log axis whose range holds at least two powers of ten uses plotters' log coordinate;
    /// a narrower one (where plotters would print one tick label or none) is drawn as a linear
    /// axis over log10 of the values, labelled with the values themselves.
    pub fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String> {
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let pts: Vec<(f64, f64)> = (0..self.series.len())
            .flat_map(|i| self.drawable(i))
            .collect();
        let (x0, x1) = bounds(pts.iter().map(|p| p.0), self.x_log);
        let (y0, y1) = bounds(pts.iter().map(|p| p.1), self.y_log);
        let (legend, y1) = self.place_legend((x0, x1), (y0, y1));
        let xa = Axis::pick(self.x_log, x0, x1);
        let ya = Axis::pick(self.y_log, y0, y1);
        let (tx0, tx1) = (xa.to(x0), xa.to(x1));
        let (ty0, ty1) = (ya.to(y0), ya.to(y1));
        let x_ticks = self
            .x_ticks()
            .map(|t| t.iter().map(|&v| xa.to(v)).collect());
        let r = (legend, xa, ya, tx0, tx1, ty0, ty1, x_ticks);
        match (xa == Axis::Log, ya == Axis::Log) {
            (false, false) => self.draw_in(root, tx0..tx1, ty0..ty1, r),
            (true, false) => self.draw_in(root, (tx0..tx1).log_scale(), ty0..ty1, r),
            (false, true) => self.draw_in(root, tx0..tx1, (ty0..ty1).log_scale(), r),
            (true, true) => self.draw_in(root, (tx0..tx1).log_scale(), (ty0..ty1).log_scale(), r),
        }
    }

    /// The x ticks of a log x axis over a few measured values (at most [`MAX_MEASURED_TICKS`]
    /// distinct x among the drawable points): those values, so that every tick label names a
    /// measured setting (iterations 4, 8, 16, 32) rather than a power of ten or its even
    /// subdivision between them; `None` leaves plotters' ticks.
    fn x_ticks(&self) -> Option<Vec<f64>> {
        if !self.x_log {
            return None;
        }
        let mut xs: Vec<f64> = (0..self.series.len())
            .flat_map(|i| self.drawable(i))
            .map(|p| p.0)
            .collect();
        xs.sort_by(f64::total_cmp);
        xs.dedup_by(|a, b| (*a - *b).abs() <= 1e-9 * b.abs());
        (xs.len() >= 2 && xs.len() <= MAX_MEASURED_TICKS).then_some(xs)
    }

    /// Where the legend goes, and the top of the y range: an explicit position as given; for
    /// [`Legend::Auto`] the corner whose legend-sized box (estimated from the label lengths)
    /// covers the fewest points of the lines sampled densely, and when every corner covers
    /// some, the upper right with the y range raised so that the data stay below the box.
    fn place_legend(&self, (x0, x1): (f64, f64), (y0, y1): (f64, f64)) -> (Legend, f64) {
        let names: Vec<usize> = self
            .series
            .iter()
            .filter(|s| !s.name.is_empty())
            .map(|s| s.name.chars().count())
            .collect();
        if self.legend != Legend::Auto || names.is_empty() {
            return (self.legend, y1);
        }
        let t = |v: f64, log: bool| if log { v.log10() } else { v };
        let unit = |v: f64, log: bool, lo: f64, hi: f64| {
            (t(v, log) - t(lo, log)) / (t(hi, log) - t(lo, log))
        };
        let area = (SIZE.0 as f64 - 108.0, SIZE.1 as f64 - 106.0);
        let w = (names.iter().max().copied().unwrap_or(0) as f64 * 7.5 + 50.0) / area.0;
        let h = ((names.len() as f64 * 19.0 + 14.0) / area.1).min(0.6);
        let mut samples = Vec::new();
        for i in 0..self.series.len() {
            let u: Vec<(f64, f64)> = self
                .drawable(i)
                .into_iter()
                .map(|(x, y)| (unit(x, self.x_log, x0, x1), unit(y, self.y_log, y0, y1)))
                .collect();
            samples.extend(u.iter().copied());
            for seg in u.windows(2) {
                for k in 1..24 {
                    let f = k as f64 / 24.0;
                    samples.push((
                        seg[0].0 + f * (seg[1].0 - seg[0].0),
                        seg[0].1 + f * (seg[1].1 - seg[0].1),
                    ));
                }
            }
        }
        // A marker's label is drawn along the top edge, rightwards from its line: the legend
        // must not cover it either.
        let (label_w, label_h) = (7.0 / area.0, 18.0 / area.1);
        for m in &self.markers {
            let mx = unit(m.x, self.x_log, x0, x1);
            if !(0.0..=1.0).contains(&mx) {
                continue;
            }
            let len = m.label.chars().count() as f64 * label_w;
            for k in 0..=24 {
                let x = mx + len * k as f64 / 24.0;
                samples.extend([(x, 1.0), (x, 1.0 - label_h)]);
            }
        }
        let (corner, covered) = emptiest_corner(&samples, w, h);
        if covered == 0 {
            return (corner, y1);
        }
        // Raise the top so the data fill only the lower 1 - h of the height.
        let (b, top) = (t(y0, self.y_log), t(y1, self.y_log));
        let raised = b + (top - b) / (1.0 - h);
        (
            Legend::UpperRight,
            if self.y_log {
                10f64.powf(raised)
            } else {
                raised
            },
        )
    }

    #[allow(clippy::type_complexity)]
    fn draw_in<DB, X, Y>(
        &self,
        root: &DrawingArea<DB, Shift>,
        xr: X,
        yr: Y,
        (legend, xa, ya, x0, x1, y0, y1, x_ticks): (
            Legend,
            Axis,
            Axis,
            f64,
            f64,
            f64,
            f64,
            Option<Vec<f64>>,
        ),
    ) -> Result<(), String>
    where
        DB: DrawingBackend,
        X: AsRangedCoord<Value = f64>,
        Y: AsRangedCoord<Value = f64>,
        X::CoordDescType: Ranged<ValueType = f64>,
        Y::CoordDescType: ValueFormatter<f64>,
    {
        let s = |e: &dyn std::fmt::Display| e.to_string();
        // The x ticks are bound to the coordinate: the measured values where given, plotters'
        // own otherwise (the light grid lines are plotters' in both cases).
        let xc: X::CoordDescType = xr.into();
        let light = xc.key_points(LightPoints::new(X_LABELS, X_LABELS * 10));
        let bold = x_ticks.unwrap_or_else(|| xc.key_points(BoldPoints(X_LABELS)));
        let xr = Ticked {
            inner: xc,
            bold,
            light,
        };
        let mut chart = ChartBuilder::on(root)
            .caption(&self.title, ("sans-serif", 22))
            .margin(14)
            .x_label_area_size(48)
            .y_label_area_size(80)
            .build_cartesian_2d(xr, yr)
            .map_err(|e| s(&e))?;
        let xf = move |v: &f64| fmt_num(xa.from(*v));
        let yf = move |v: &f64| fmt_num(ya.from(*v));
        draw_mesh(&mut chart, (&self.x_label, &self.y_label), &xf, &yf)?;
        let grey = RGBColor(110, 110, 110);
        for m in &self.markers {
            let mx = xa.to(m.x);
            if !(mx.is_finite() && mx >= x0 && mx <= x1) {
                continue;
            }
            let style = ShapeStyle {
                color: grey.mix(0.8),
                filled: false,
                stroke_width: 1,
            };
            chart
                .draw_series(DashedLineSeries::new(vec![(mx, y0), (mx, y1)], 4, 4, style))
                .map_err(|e| s(&e))?;
            chart
                .draw_series(std::iter::once(Text::new(
                    m.label.clone(),
                    (mx, y1),
                    ("sans-serif", 13).into_font().color(&grey),
                )))
                .map_err(|e| s(&e))?;
        }
        let mut labelled = false;
        // A line identical to an earlier one would hide under it: it is drawn dashed over it
        // and its legend entry says which it equals.
        let same_as: Vec<Option<usize>> = (0..self.series.len())
            .map(|i| {
                let mine = self.drawable(i);
                (mine.len() >= 2)
                    .then(|| (0..i).find(|&j| self.drawable(j) == mine))
                    .flatten()
            })
            .collect();
        for (i, series) in self.series.iter().enumerate() {
            let pts: Vec<(f64, f64)> = self
                .drawable(i)
                .into_iter()
                .map(|(x, y)| (xa.to(x), ya.to(y)))
                .collect();
            let (dashed, name) = match same_as[i] {
                Some(j) => (
                    true,
                    format!("{} (same as {})", series.name, self.series[j].name),
                ),
                None => (series.dashed, series.name.clone()),
            };
            let color = PALETTE[series.color.unwrap_or(i) % PALETTE.len()];
            let style = ShapeStyle {
                color: color.to_rgba(),
                filled: false,
                stroke_width: 2,
            };
            let anno = if dashed {
                chart.draw_series(DashedLineSeries::new(pts.clone(), 7, 5, style))
            } else {
                chart.draw_series(LineSeries::new(pts.clone(), style))
            }
            .map_err(|e| s(&e))?;
            if !series.name.is_empty() {
                labelled = true;
                anno.label(name).legend(move |(x, y)| {
                    if dashed {
                        PathElement::new(vec![(x, y), (x + 8, y)], style)
                    } else {
                        PathElement::new(vec![(x, y), (x + 20, y)], style)
                    }
                });
            }
            if pts.len() <= 60 {
                chart
                    .draw_series(pts.iter().map(|&p| {
                        Circle::new(p, if pts.len() == 1 { 6 } else { 3 }, color.filled())
                    }))
                    .map_err(|e| s(&e))?;
            }
        }
        if labelled {
            let pos = match legend {
                Legend::Auto | Legend::UpperRight => SeriesLabelPosition::UpperRight,
                Legend::UpperLeft => SeriesLabelPosition::UpperLeft,
                Legend::LowerLeft => SeriesLabelPosition::LowerLeft,
                Legend::LowerRight => SeriesLabelPosition::LowerRight,
            };
            draw_legend(&mut chart, pos, 13)?;
        }
        Ok(())
    }
}

/// A figure that draws itself on any plotters drawing area, so that it can be written both as
/// SVG and as PNG by [`save_svg_png`].
pub trait Figure {
    /// Draws the figure.
    fn draw_on<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String>;
}

impl Figure for Plot {
    fn draw_on<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String> {
        self.draw(root)
    }
}

/// Draws the grid, the axis labels and the tick values, formatted by `xf` and `yf`, the same
/// way in every plot.
pub fn draw_mesh<DB, X, Y>(
    chart: &mut ChartContext<'_, DB, Cartesian2d<X, Y>>,
    (x_label, y_label): (&str, &str),
    xf: &dyn Fn(&f64) -> String,
    yf: &dyn Fn(&f64) -> String,
) -> Result<(), String>
where
    DB: DrawingBackend,
    X: Ranged<ValueType = f64> + ValueFormatter<f64>,
    Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    chart
        .configure_mesh()
        .x_desc(x_label)
        .y_desc(y_label)
        .x_labels(X_LABELS)
        .y_labels(9)
        .x_label_formatter(xf)
        .y_label_formatter(yf)
        .label_style(("sans-serif", 14))
        .axis_desc_style(("sans-serif", 16))
        .light_line_style(RGBColor(235, 235, 235))
        .draw()
        .map_err(|e| e.to_string())
}

/// Draws the legend box at `pos`, its labels `font_px` high, the same way in every plot.
pub fn draw_legend<'a, DB, CT>(
    chart: &mut ChartContext<'a, DB, CT>,
    pos: SeriesLabelPosition,
    font_px: u32,
) -> Result<(), String>
where
    DB: DrawingBackend + 'a,
    CT: CoordTranslate,
{
    chart
        .configure_series_labels()
        .position(pos)
        .label_font(("sans-serif", font_px))
        .background_style(WHITE.mix(0.85))
        .border_style(RGBColor(180, 180, 180))
        .draw()
        .map_err(|e| e.to_string())
}

/// Writes `fig` as `stem.svg` and `stem.png` (creating the directory); returns both paths.
pub fn save_svg_png(fig: &impl Figure, stem: &Path) -> Result<Vec<PathBuf>, Error> {
    if let Some(dir) = stem.parent() {
        if !dir.as_os_str().is_empty() {
            std::fs::create_dir_all(dir).map_err(|e| io_error(dir, e))?;
        }
    }
    let svg = stem.with_extension("svg");
    let png = stem.with_extension("png");
    {
        let root = SVGBackend::new(&svg, SIZE).into_drawing_area();
        fig.draw_on(&root).map_err(|e| io_error(&svg, e))?;
        root.present().map_err(|e| io_error(&svg, e))?;
    }
    {
        let root = BitMapBackend::new(&png, SIZE).into_drawing_area();
        fig.draw_on(&root).map_err(|e| io_error(&png, e))?;
        root.present().map_err(|e| io_error(&png, e))?;
    }
    Ok(vec![svg, png])
}

/// A coordinate with its tick positions fixed: plotters' `WithKeyPoints` keeps its inner
/// coordinate's formatting option, which on a linear f64 axis leaves it without the
/// `ValueFormatter` the mesh asks for; the labels are formatted by [`draw_mesh`]'s formatter
/// anyway.
struct Ticked<R> {
    inner: R,
    bold: Vec<f64>,
    light: Vec<f64>,
}

impl<R: Ranged<ValueType = f64>> Ranged for Ticked<R> {
    type ValueType = f64;
    type FormatOption = DefaultFormatting;

    fn range(&self) -> std::ops::Range<f64> {
        self.inner.range()
    }

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        self.inner.map(value, limit)
    }

    fn key_points<H: KeyPointHint>(&self, hint: H) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            self.light.clone()
        } else {
            self.bold.clone()
        }
    }

    fn axis_pixel_range(&self, limit: (i32, i32)) -> std::ops::Range<i32> {
        self.inner.axis_pixel_range(limit)
    }
}

/// How an axis maps values.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Axis {
    /// Values as they are.
    Linear,
    /// plotters' log coordinate.
    Log,
    /// A linear axis over log10 of the values (log axes narrower than a power of ten).
    Log10Linear,
}

impl Axis {
    fn pick(log: bool, lo: f64, hi: f64) -> Axis {
        if !log {
            Axis::Linear
        } else if 10f64.powf(lo.log10().ceil() + 1.0) <= hi {
            Axis::Log
        } else {
            Axis::Log10Linear
        }
    }
    fn to(self, v: f64) -> f64 {
        match self {
            Axis::Log10Linear => v.log10(),
            _ => v,
        }
    }
    fn from(self, v: f64) -> f64 {
        match self {
            Axis::Log10Linear => 10f64.powf(v),
            _ => v,
        }
    }
}

/// A short label for a tick value: up to three significant digits, exponent form outside
/// 1e-3..1e5.
pub fn fmt_num(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    let a = v.abs();
    if !(1e-3..1e5).contains(&a) {
        let s = format!("{v:.2e}");
        // 1.00e-4 -> 1e-4, 2.50e6 -> 2.5e6
        let (m, e) = s.split_once('e').unwrap_or((&s, "0"));
        let m = m.trim_end_matches('0').trim_end_matches('.');
        return format!("{m}e{e}");
    }
    let digits = (3 - 1 - a.log10().floor() as i32).max(0) as usize;
    let s = format!("{v:.digits$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn svg_and_png_are_written_for_log_and_linear_axes() {
        register_font().unwrap();
        let dir = tempfile::tempdir().unwrap();
        for (xl, yl) in [(false, false), (true, true), (false, true)] {
            let p = Plot {
                title: "t".into(),
                x_label: "x".into(),
                y_label: "y".into(),
                x_log: xl,
                y_log: yl,
                series: vec![Series {
                    name: "a".into(),
                    points: vec![(1.0, 1.0), (10.0, 100.0), (0.0, -1.0), (f64::NAN, 1.0)],
                    ..Default::default()
                }],
                markers: vec![Marker {
                    x: 3.0,
                    label: "L1".into(),
                }],
                ..Default::default()
            };
            let stem = dir.path().join(format!("p{xl}{yl}"));
            let files = p.save(&stem).unwrap();
            for f in files {
                assert!(
                    std::fs::metadata(&f).unwrap().len() > 1000,
                    "{}",
                    f.display()
                );
            }
        }
        // A plot with no drawable point still renders (an empty frame), never panics.
        let empty = Plot {
            y_log: true,
            series: vec![Series {
                name: "none".into(),
                points: vec![(1.0, 0.0)],
                ..Default::default()
            }],
            ..Default::default()
        };
        empty.save(&dir.path().join("empty")).unwrap();
    }

    #[test]
    fn a_series_identical_to_an_earlier_one_says_so_in_the_legend() {
        register_font().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let pts = vec![(1.0, 1.0), (2.0, 3.0), (3.0, 2.0)];
        let p = Plot {
            series: vec![
                Series {
                    name: "first".into(),
                    points: pts.clone(),
                    ..Default::default()
                },
                Series {
                    name: "second".into(),
                    points: pts,
                    ..Default::default()
                },
                Series {
                    name: "other".into(),
                    points: vec![(1.0, 2.0), (3.0, 1.0)],
                    ..Default::default()
                },
            ],
            ..Default::default()
        };
        let files = p.save(&dir.path().join("same")).unwrap();
        let svg = std::fs::read_to_string(
            files
                .iter()
                .find(|f| f.extension().unwrap() == "svg")
                .unwrap(),
        )
        .unwrap();
        assert!(svg.contains("second (same as first)"), "{svg}");
        assert!(!svg.contains("other (same as"));
    }

    #[test]
    fn legend_goes_to_the_corner_without_data() {
        // Data along the top edge and down the right side: the lower left is empty.
        let pts = [(0.1, 0.95), (0.5, 0.95), (0.95, 0.95), (0.95, 0.1)];
        assert_eq!(emptiest_corner(&pts, 0.3, 0.3), (Legend::LowerLeft, 0));
        // Data in every corner: the fewest wins and the count says it is covered.
        let full = [(0.0, 0.0), (1.0, 0.0), (0.0, 1.0), (1.0, 1.0), (0.0, 0.9)];
        assert_eq!(emptiest_corner(&full, 0.2, 0.2).1, 1);
    }

    #[test]
    fn legend_over_every_corner_raises_the_top() {
        let p = Plot {
            series: vec![Series {
                name: "a long legend label".into(),
                // The frame of the data range: every corner is covered.
                points: vec![(0.0, 0.0), (0.0, 1.0), (1.5, 1.0), (1.5, 0.0), (0.0, 0.0)],
                ..Default::default()
            }],
            ..Default::default()
        };
        let (legend, top) = p.place_legend((0.0, 1.5), (0.0, 1.0));
        assert_eq!(legend, Legend::UpperRight);
        assert!(top > 1.05, "{top}");
    }

    #[test]
    fn legend_leaves_a_marker_label_uncovered() {
        // Data along the bottom: without a marker the legend takes the upper right.
        let mut p = Plot {
            series: vec![Series {
                name: "a".into(),
                points: vec![(0.0, 0.0), (10.0, 0.1), (20.0, 0.0)],
                ..Default::default()
            }],
            ..Default::default()
        };
        let (lo, hi) = ((0.0, 20.0), (0.0, 1.0));
        assert_eq!(p.place_legend(lo, hi).0, Legend::UpperRight);
        // A marker near the right edge labels the top right: the legend moves off it.
        p.markers.push(Marker {
            x: 17.0,
            label: "gs after 17 iterations".into(),
        });
        assert_eq!(p.place_legend(lo, hi).0, Legend::UpperLeft);
    }

    #[test]
    fn a_log_x_axis_over_few_settings_ticks_at_them() {
        let p = Plot {
            x_log: true,
            series: vec![
                Series::xy("a", [4.0, 8.0, 16.0, 32.0], &[1.0, 2.0, 3.0, 4.0]),
                level("limit", (4.0, 32.0), 2.5, 1),
            ],
            ..Default::default()
        };
        assert_eq!(p.x_ticks(), Some(vec![4.0, 8.0, 16.0, 32.0]));
        // Many settings, or a linear axis: plotters' own ticks.
        let many = Plot {
            x_log: true,
            series: vec![Series::curve("c", &[1.0; 40], usize::MAX)],
            ..Default::default()
        };
        assert_eq!(many.x_ticks(), None);
        assert_eq!(Plot { x_log: false, ..p }.x_ticks(), None);
    }

    #[test]
    fn crossing_interpolates_in_log_space() {
        let pts = [(1.0, 1.0), (10.0, 0.01), (100.0, 0.001)];
        let (x, y) = crossing(&pts, 0.1, true, true).unwrap();
        assert!((x - 10f64.sqrt()).abs() < 1e-9 && y == 0.1, "{x}");
        assert_eq!(crossing(&pts, 10.0, true, true), None);
        let (x, _) = crossing(&[(0.0, 0.0), (2.0, 4.0)], 1.0, false, false).unwrap();
        assert!((x - 0.5).abs() < 1e-12);
    }

    #[test]
    fn tick_labels_are_short() {
        assert_eq!(fmt_num(0.0234), "0.0234");
        assert_eq!(fmt_num(1000.0), "1000");
        assert_eq!(fmt_num(0.5), "0.5");
        assert_eq!(fmt_num(1e-4), "1e-4");
        assert_eq!(fmt_num(1048576.0), "1.05e6");
        assert_eq!(fmt_num(123.456), "123");
    }
}
