//! Charts of a report, as SVG written here and as PNG rasterised from that same SVG with resvg,
//! so the two always agree.
//!
//! Two charts per k: recall against the line budget (`recall_at_100/300/500`, then full recall),
//! one line per explorer; and grouped bars of the key metrics per explorer. When rows of an
//! explorer were run at several line budgets (`swex bench --budget`), trade-off charts too: a
//! metric counted with real lengths against the mean lines returned (log scale), one line per
//! explorer through its budgets and one point for each answer set without a budget sweep (a peer
//! such as CoSIL). All values are rates, so the y axis is always 0–1.
//!
//! PNG text needs a font: resvg uses the system's fonts (DejaVu Sans, Liberation Sans or any
//! sans-serif). Without any, the PNG is drawn without its text and [`png`] says so.

use super::Report;
use super::render::KEY_METRICS;
use std::fmt::Write as _;
use std::sync::{Arc, OnceLock};

/// How a chart draws its series.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChartKind {
    /// One polyline with markers per series.
    Lines,
    /// One bar per series in each x group.
    Bars,
    /// Numeric x on a log scale: each series is its `points`, joined when there are several.
    LogX,
}

/// One named series of values, one per x label.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub name: String,
    /// One value per x label ([`ChartKind::Lines`], [`ChartKind::Bars`]).
    pub values: Vec<f64>,
    /// `(x, y)` points with a label each ([`ChartKind::LogX`]).
    pub points: Vec<(f64, f64, String)>,
}

/// A chart with categorical x and a 0–1 y axis.
#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    /// File stem, e.g. `recall-budget-k5`.
    pub id: String,
    pub title: String,
    pub x_title: String,
    pub y_title: String,
    pub x_labels: Vec<String>,
    pub series: Vec<Series>,
    pub kind: ChartKind,
}

const WIDTH: f64 = 760.0;
const HEIGHT: f64 = 440.0;
const LEFT: f64 = 64.0;
const RIGHT: f64 = 180.0;
const TOP: f64 = 48.0;
const BOTTOM: f64 = 100.0;
const FONT: &str = "DejaVu Sans, Liberation Sans, Arial, sans-serif";
/// Colour-blind-friendly palette (Okabe–Ito), repeated when there are more series.
const PALETTE: [&str; 8] = [
    "#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000",
];

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The chart as a standalone SVG document: frame and title, y axis, x axis, then each series
/// with its legend entry.
pub fn svg(chart: &Chart) -> String {
    let frame = Frame::of(chart);
    let mut s = String::new();
    frame.header(&mut s, chart);
    frame.y_axis(&mut s, chart);
    if chart.kind == ChartKind::LogX {
        frame.log_x_ticks(&mut s);
    }
    frame.x_axis(&mut s, chart);
    for (index, series) in chart.series.iter().enumerate() {
        let colour = PALETTE[index % PALETTE.len()];
        match chart.kind {
            ChartKind::Lines => frame.lines(&mut s, chart, series, colour),
            ChartKind::LogX => frame.log_x_points(&mut s, series, colour),
            ChartKind::Bars => frame.bars(&mut s, chart, series, index, colour),
        }
        frame.legend_entry(&mut s, index, colour, &series.name);
    }
    s.push_str("</svg>\n");
    s
}

/// Where things go on a chart: the plot area, the x groups, and the log-x range.
struct Frame {
    plot_w: f64,
    plot_h: f64,
    group_w: f64,
    /// Series count, for the bars' width.
    series: f64,
    /// The log10 range of the x axis ([`ChartKind::LogX`]).
    lo: f64,
    hi: f64,
}

impl Frame {
    fn of(chart: &Chart) -> Frame {
        let plot_w = WIDTH - LEFT - RIGHT;
        // Log-scale x: from the smallest to the largest x of any point, a decade padded.
        let (lo, hi) = chart
            .series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.0.max(1.0)))
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), x| {
                (lo.min(x.log10()), hi.max(x.log10()))
            });
        let (lo, hi) = if lo.is_finite() {
            (lo - 0.15, hi + 0.15)
        } else {
            (0.0, 1.0)
        };
        Frame {
            plot_w,
            plot_h: HEIGHT - TOP - BOTTOM,
            group_w: plot_w / chart.x_labels.len().max(1) as f64,
            series: chart.series.len().max(1) as f64,
            lo,
            hi,
        }
    }

    fn y_of(&self, v: f64) -> f64 {
        TOP + self.plot_h * (1.0 - v.clamp(0.0, 1.0))
    }

    fn x_center(&self, i: usize) -> f64 {
        LEFT + self.group_w * (i as f64 + 0.5)
    }

    fn x_of(&self, x: f64) -> f64 {
        LEFT + self.plot_w * (x.max(1.0).log10() - self.lo) / (self.hi - self.lo).max(1e-9)
    }

    /// The document's opening, background and title.
    fn header(&self, s: &mut String, chart: &Chart) {
        let _ = write!(
            s,
            r##"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" font-family="{FONT}" role="img" aria-label="{title}">"##,
            title = escape(&chart.title)
        );
        let _ = write!(
            s,
            r##"<rect width="{WIDTH}" height="{HEIGHT}" fill="#ffffff"/><text x="{}" y="28" font-size="16" font-weight="bold" text-anchor="middle">{}</text>"##,
            LEFT + self.plot_w / 2.0,
            escape(&chart.title)
        );
    }

    /// Grid lines, y ticks, both axis lines and the y title.
    fn y_axis(&self, s: &mut String, chart: &Chart) {
        let (plot_w, plot_h) = (self.plot_w, self.plot_h);
        for tick in 0..=5 {
            let value = tick as f64 / 5.0;
            let y = self.y_of(value);
            let _ = write!(
                s,
                r##"<line x1="{LEFT}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#dddddd" stroke-width="1"/><text x="{:.1}" y="{:.1}" font-size="11" text-anchor="end">{value:.1}</text>"##,
                LEFT + plot_w,
                LEFT - 6.0,
                y + 4.0
            );
        }
        let _ = write!(
            s,
            r##"<line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{:.1}" stroke="#333333"/><line x1="{LEFT}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="#333333"/>"##,
            TOP + plot_h,
            TOP + plot_h,
            LEFT + plot_w,
            TOP + plot_h
        );
        let _ = write!(
            s,
            r##"<text x="16" y="{:.1}" font-size="12" text-anchor="middle" transform="rotate(-90 16 {:.1})">{}</text>"##,
            TOP + plot_h / 2.0,
            TOP + plot_h / 2.0,
            escape(&chart.y_title)
        );
    }

    /// Ticks at 1 and 3 of each decade of the log-x range.
    fn log_x_ticks(&self, s: &mut String) {
        for decade in (self.lo.floor() as i32)..=(self.hi.ceil() as i32) {
            for step in [1.0, 3.0] {
                let tick = step * 10f64.powi(decade);
                let t = tick.log10();
                if t < self.lo || t > self.hi {
                    continue;
                }
                let x = self.x_of(tick);
                let _ = write!(
                    s,
                    r##"<line x1="{x:.1}" y1="{TOP}" x2="{x:.1}" y2="{:.1}" stroke="#eeeeee"/><text x="{x:.1}" y="{:.1}" font-size="11" text-anchor="middle">{tick}</text>"##,
                    TOP + self.plot_h,
                    TOP + self.plot_h + 16.0
                );
            }
        }
    }

    /// X labels (slanted when many) and the x title.
    fn x_axis(&self, s: &mut String, chart: &Chart) {
        let slanted = chart.x_labels.len() > 5;
        for (i, label) in chart.x_labels.iter().enumerate() {
            let x = self.x_center(i);
            let y = TOP + self.plot_h + 16.0;
            if slanted {
                let _ = write!(
                    s,
                    r##"<text x="{x:.1}" y="{y:.1}" font-size="10" text-anchor="end" transform="rotate(-30 {x:.1} {y:.1})">{}</text>"##,
                    escape(label)
                );
            } else {
                let _ = write!(
                    s,
                    r##"<text x="{x:.1}" y="{y:.1}" font-size="11" text-anchor="middle">{}</text>"##,
                    escape(label)
                );
            }
        }
        let _ = write!(
            s,
            r##"<text x="{:.1}" y="{:.1}" font-size="12" text-anchor="middle">{}</text>"##,
            LEFT + self.plot_w / 2.0,
            HEIGHT - 10.0,
            escape(&chart.x_title)
        );
    }

    /// A series as a polyline with a marker per value.
    fn lines(&self, s: &mut String, chart: &Chart, series: &Series, colour: &str) {
        let points: Vec<String> = series
            .values
            .iter()
            .enumerate()
            .map(|(i, v)| format!("{:.1},{:.1}", self.x_center(i), self.y_of(*v)))
            .collect();
        let _ = write!(
            s,
            r##"<polyline points="{}" fill="none" stroke="{colour}" stroke-width="2.5"/>"##,
            points.join(" ")
        );
        for (i, v) in series.values.iter().enumerate() {
            let _ = write!(
                s,
                r##"<circle cx="{:.1}" cy="{:.1}" r="4" fill="{colour}"><title>{}: {} = {v:.4}</title></circle>"##,
                self.x_center(i),
                self.y_of(*v),
                escape(&series.name),
                escape(&chart.x_labels[i])
            );
        }
    }

    /// A series' points on the log-x axis, joined when there are several.
    fn log_x_points(&self, s: &mut String, series: &Series, colour: &str) {
        let mut points = series.points.clone();
        points.sort_by(|a, b| a.0.total_cmp(&b.0));
        if points.len() > 1 {
            let line: Vec<String> = points
                .iter()
                .map(|(x, y, _)| format!("{:.1},{:.1}", self.x_of(*x), self.y_of(*y)))
                .collect();
            let _ = write!(
                s,
                r##"<polyline points="{}" fill="none" stroke="{colour}" stroke-width="2"/>"##,
                line.join(" ")
            );
        }
        let radius = if points.len() > 1 { 3.5 } else { 6.0 };
        for (x, y, label) in &points {
            let _ = write!(
                s,
                r##"<circle cx="{:.1}" cy="{:.1}" r="{radius}" fill="{colour}"><title>{} {}: {:.0} lines, {y:.4}</title></circle>"##,
                self.x_of(*x),
                self.y_of(*y),
                escape(&series.name),
                escape(label),
                x
            );
        }
    }

    /// The `index`-th series' bar in each x group.
    fn bars(&self, s: &mut String, chart: &Chart, series: &Series, index: usize, colour: &str) {
        let bar_w = self.group_w * 0.8 / self.series;
        for (i, v) in series.values.iter().enumerate() {
            let x = LEFT + self.group_w * i as f64 + self.group_w * 0.1 + bar_w * index as f64;
            let y = self.y_of(*v);
            let _ = write!(
                s,
                r##"<rect x="{x:.1}" y="{y:.1}" width="{:.1}" height="{:.1}" fill="{colour}"><title>{}: {} = {v:.4}</title></rect>"##,
                bar_w.max(1.0),
                (TOP + self.plot_h - y).max(0.0),
                escape(&series.name),
                escape(&chart.x_labels[i])
            );
        }
    }

    /// The `index`-th entry of the legend, right of the plot.
    fn legend_entry(&self, s: &mut String, index: usize, colour: &str, name: &str) {
        let y = TOP + 8.0 + 20.0 * index as f64;
        let x = LEFT + self.plot_w + 16.0;
        let _ = write!(
            s,
            r##"<rect x="{x:.1}" y="{:.1}" width="12" height="12" fill="{colour}"/><text x="{:.1}" y="{:.1}" font-size="12">{}</text>"##,
            y - 10.0,
            x + 18.0,
            y,
            escape(name)
        );
    }
}

/// Recall against the line budget at `k`: one line per explorer.
pub fn recall_budget_chart(report: &Report, k: usize) -> Chart {
    let series = report
        .overall
        .iter()
        .filter(|r| r.top_k == k)
        .map(|r| Series {
            name: r.explorer.clone(),
            points: Vec::new(),
            values: vec![
                r.mean.recall_at_100,
                r.mean.recall_at_300,
                r.mean.recall_at_500,
                r.mean.recall,
            ],
        })
        .collect();
    Chart {
        id: format!("recall-budget-k{k}"),
        title: format!("Recall vs. line budget (k = {k})"),
        x_title: "lines read (budget)".into(),
        y_title: "mean recall".into(),
        x_labels: ["100", "300", "500", "all"].map(String::from).to_vec(),
        series,
        kind: ChartKind::Lines,
    }
}

/// The key metrics at `k` as grouped bars, one bar per explorer.
pub fn metrics_chart(report: &Report, k: usize) -> Chart {
    let series = report
        .overall
        .iter()
        .filter(|r| r.top_k == k)
        .map(|r| Series {
            name: r.explorer.clone(),
            points: Vec::new(),
            values: KEY_METRICS
                .iter()
                .map(|m| r.mean.get(m).expect("known metric"))
                .collect(),
        })
        .collect();
    Chart {
        id: format!("metrics-k{k}"),
        title: format!("Key metrics (k = {k})"),
        x_title: "metric".into(),
        y_title: "mean".into(),
        x_labels: KEY_METRICS.map(String::from).to_vec(),
        series,
        kind: ChartKind::Bars,
    }
}

/// Metrics of the trade-off charts.
pub const TRADEOFF_METRICS: [&str; 8] = crate::metric_list::TRADEOFF_VIEW;

/// Trade-off charts at `k` (one per metric of [`TRADEOFF_METRICS`]): the metric with real lengths
/// against the mean lines returned (what an answer costs its reader on average). An explorer whose rows came at several line budgets is a
/// line through them (labelled by budget); every other set of rows with real lengths is a point.
/// Empty when no explorer was run at two budgets or more.
pub fn tradeoff_charts(report: &Report, k: usize) -> Vec<Chart> {
    let rows: Vec<&super::MeanRow> = report
        .overall
        .iter()
        .filter(|r| r.top_k == k && r.real.is_some() && r.lines.is_some())
        .collect();
    let base = |r: &super::MeanRow| match r.line_budget {
        Some(_) => r
            .explorer
            .split('[')
            .next()
            .unwrap_or(&r.explorer)
            .to_string(),
        None => r.explorer.clone(),
    };
    let mut names: Vec<String> = Vec::new();
    for row in &rows {
        let name = base(row);
        if !names.contains(&name) {
            names.push(name);
        }
    }
    let swept = names.iter().any(|name| {
        rows.iter()
            .filter(|r| base(r) == *name && r.line_budget.is_some())
            .count()
            > 1
    });
    if !swept {
        return Vec::new();
    }
    TRADEOFF_METRICS
        .iter()
        .map(|metric| {
            let series = names
                .iter()
                .map(|name| Series {
                    name: name.clone(),
                    values: Vec::new(),
                    points: rows
                        .iter()
                        .filter(|r| base(r) == *name)
                        .map(|r| {
                            let real = r.real.as_ref().expect("filtered");
                            let lines = r.lines.as_ref().expect("filtered");
                            let label = match r.line_budget {
                                Some(b) => format!("budget {b}"),
                                None => "no budget".to_string(),
                            };
                            (lines.mean, real.get(metric).expect("known metric"), label)
                        })
                        .collect(),
                })
                .collect();
            Chart {
                id: format!("tradeoff-{metric}-k{k}"),
                title: format!("{metric} vs. lines returned (real lengths, k = {k})"),
                x_title: "lines returned per instance (mean, log scale)".into(),
                y_title: format!("mean {metric}"),
                x_labels: Vec::new(),
                series,
                kind: ChartKind::LogX,
            }
        })
        .collect()
}

/// Every chart of a report: for each k, the recall-budget curve, the metric bars and, for budget
/// sweeps, the trade-off charts.
pub fn charts(report: &Report) -> Vec<Chart> {
    report
        .top_ks()
        .into_iter()
        .flat_map(|k| {
            let mut charts = vec![recall_budget_chart(report, k), metrics_chart(report, k)];
            charts.extend(tradeoff_charts(report, k));
            charts
        })
        .collect()
}

#[derive(Debug, thiserror::Error)]
pub enum ChartError {
    #[error("rendering the chart: {0}")]
    Svg(String),
    #[error("encoding the PNG: {0}")]
    Png(String),
}

fn fonts() -> Arc<resvg::usvg::fontdb::Database> {
    static FONTS: OnceLock<Arc<resvg::usvg::fontdb::Database>> = OnceLock::new();
    FONTS
        .get_or_init(|| {
            let mut db = resvg::usvg::fontdb::Database::new();
            db.load_system_fonts();
            Arc::new(db)
        })
        .clone()
}

/// Whether any system font is available to draw PNG text.
pub fn have_fonts() -> bool {
    !fonts().is_empty()
}

/// Rasterises an SVG document (normally from [`svg`]) to PNG bytes, at 2× for sharp text.
pub fn png(svg: &str) -> Result<Vec<u8>, ChartError> {
    let options = resvg::usvg::Options {
        fontdb: fonts(),
        ..resvg::usvg::Options::default()
    };
    let tree =
        resvg::usvg::Tree::from_str(svg, &options).map_err(|e| ChartError::Svg(e.to_string()))?;
    let scale = 2.0;
    let size = tree
        .size()
        .to_int_size()
        .scale_by(scale)
        .ok_or_else(|| ChartError::Svg("the chart has no size".into()))?;
    let mut pixmap = resvg::tiny_skia::Pixmap::new(size.width(), size.height())
        .ok_or_else(|| ChartError::Svg("the chart has no size".into()))?;
    resvg::render(
        &tree,
        resvg::tiny_skia::Transform::from_scale(scale, scale),
        &mut pixmap.as_mut(),
    );
    pixmap
        .encode_png()
        .map_err(|e| ChartError::Png(e.to_string()))
}
