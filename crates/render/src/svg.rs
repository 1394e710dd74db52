//! A small SVG chart module of our own: time-series lines, stacked areas
//! and threshold lines, with axes, units and legends, drawn without
//! measuring any text (labels are plain `<text>` anchored by
//! `text-anchor`), so the output is the same byte for byte natively and in
//! WebAssembly, in a page or a Web Worker. Every string goes through maud,
//! which escapes it.
//!
//! Gaps (`None`) break lines and areas. More points than the plot is wide
//! are grouped into buckets drawn as a min/max envelope with the mean line
//! on top, so a spike is never lost.

use maud::{Markup, html};

/// Plot size in SVG units (the SVG scales to its container).
const W: f64 = 760.0;
const H: f64 = 250.0;
const LEFT: f64 = 64.0;
const RIGHT: f64 = 16.0;
const TOP: f64 = 14.0;
const BOTTOM: f64 = 58.0;
/// Most buckets drawn across the plot.
const MAX_POINTS: usize = 240;

/// How a series is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A line.
    Line,
    /// A dashed line.
    Dashed,
    /// A filled band stacked on the series before it.
    Stacked,
}

/// One series.
#[derive(Clone, Debug)]
pub struct Series {
    /// Legend text.
    pub name: String,
    /// One value per window (`None`: no data).
    pub values: Vec<Option<f64>>,
    /// How it is drawn.
    pub kind: Kind,
    /// Palette index.
    pub color: usize,
}

/// A horizontal reference line (an SLO threshold).
#[derive(Clone, Debug)]
pub struct Threshold {
    /// Where.
    pub value: f64,
    /// Its label.
    pub label: String,
}

/// A chart.
#[derive(Clone, Debug)]
pub struct Chart {
    /// Heading above it.
    pub title: String,
    /// The y axis' unit.
    pub unit: String,
    /// Fixed top of the y axis (100 for percentages), or from the data.
    pub y_max: Option<f64>,
    /// Window start times, ms (the x axis).
    pub times: Vec<i64>,
    /// Window width, ms.
    pub window_ms: i64,
    /// The series.
    pub series: Vec<Series>,
    /// Reference lines.
    pub thresholds: Vec<Threshold>,
}

/// The palette: distinct hues with distinct lightness, so the series stay
/// apart in greyscale print.
pub const PALETTE: [&str; 6] = [
    "#1f4e9e", "#e8912d", "#5fb3a9", "#6b6b6b", "#c0392b", "#a4c8ec",
];

/// Dash patterns paired with the palette for lines.
const DASHES: [&str; 6] = ["", "6 3", "2 2", "8 3 2 3", "", "4 4"];

fn nice_step(range: f64, ticks: usize) -> f64 {
    let raw = range / ticks as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let norm = raw / mag;
    let step = if norm <= 1.0 {
        1.0
    } else if norm <= 2.0 {
        2.0
    } else if norm <= 2.5 {
        2.5
    } else if norm <= 5.0 {
        5.0
    } else {
        10.0
    };
    step * mag
}

/// A number for an axis label: no needless decimals.
pub fn axis_number(v: f64) -> String {
    let a = v.abs();
    if a == 0.0 {
        "0".into()
    } else if a >= 1e6 {
        format!("{:.1}M", v / 1e6).replace(".0M", "M")
    } else if a >= 1e4 {
        format!("{:.0}k", v / 1e3)
    } else if a >= 100.0 || (v.fract() == 0.0) {
        format!("{v:.0}")
    } else if a >= 1.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// `HH:MM` (UTC) of a time in ms.
pub fn hhmm(ms: i64) -> String {
    let s = ms.div_euclid(1000).rem_euclid(86_400);
    format!("{:02}:{:02}", s / 3600, s / 60 % 60)
}

fn f(v: f64) -> String {
    // One decimal is finer than a pixel: keeps the output small and stable.
    let r = (v * 10.0).round() / 10.0;
    if r.fract() == 0.0 {
        format!("{r:.0}")
    } else {
        format!("{r:.1}")
    }
}

/// A series ready to draw: its index, (min, mean, max) per bucket, and the
/// stack base per bucket.
type Drawn = (usize, Vec<Option<(f64, f64, f64)>>, Vec<Option<f64>>);

/// Buckets of consecutive windows: (first index, last index).
fn buckets(n: usize) -> Vec<(usize, usize)> {
    if n <= MAX_POINTS {
        return (0..n).map(|i| (i, i)).collect();
    }
    (0..MAX_POINTS)
        .map(|b| {
            (
                b * n / MAX_POINTS,
                ((b + 1) * n / MAX_POINTS).max(b * n / MAX_POINTS + 1) - 1,
            )
        })
        .collect()
}

/// (min, mean, max) of a bucket's present values.
fn stats(values: &[Option<f64>], (a, b): (usize, usize)) -> Option<(f64, f64, f64)> {
    let v: Vec<f64> = values
        .get(a..=b.min(values.len().saturating_sub(1)))
        .unwrap_or(&[])
        .iter()
        .flatten()
        .copied()
        .filter(|x| x.is_finite())
        .collect();
    if v.is_empty() {
        return None;
    }
    let min = v.iter().copied().fold(f64::INFINITY, f64::min);
    let max = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    Some((min, v.iter().sum::<f64>() / v.len() as f64, max))
}

/// Paths through points, broken at `None`.
fn polyline(points: &[Option<(f64, f64)>]) -> String {
    let mut d = String::new();
    let mut pen_down = false;
    for p in points {
        match p {
            Some((x, y)) => {
                d.push_str(if pen_down { " L" } else { " M" });
                d.push_str(&f(*x));
                d.push(' ');
                d.push_str(&f(*y));
                pen_down = true;
            }
            None => pen_down = false,
        }
    }
    d.trim_start().to_string()
}

/// A closed band between two lines over each run of present points.
fn band(upper: &[Option<(f64, f64)>], lower: &[Option<(f64, f64)>]) -> String {
    let mut d = String::new();
    let mut i = 0;
    while i < upper.len() {
        if upper[i].is_none() || lower[i].is_none() {
            i += 1;
            continue;
        }
        let start = i;
        while i < upper.len() && upper[i].is_some() && lower[i].is_some() {
            i += 1;
        }
        let run = start..i;
        d.push_str(" M");
        for (k, j) in run.clone().enumerate() {
            let (x, y) = upper[j].expect("present");
            if k > 0 {
                d.push_str(" L");
            }
            d.push_str(&format!("{} {}", f(x), f(y)));
        }
        for j in run.rev() {
            let (x, y) = lower[j].expect("present");
            d.push_str(&format!(" L{} {}", f(x), f(y)));
        }
        d.push_str(" Z");
    }
    d.trim_start().to_string()
}

/// The horizontal grid with its y labels, and both axes, of a plot area
/// `ph` high (shared by every chart).
fn grid_and_axes(y_ticks: &[f64], y_of: impl Fn(f64) -> f64, ph: f64) -> Markup {
    html! {
        @for t in y_ticks {
            line.grid x1=(f(LEFT)) x2=(f(W - RIGHT)) y1=(f(y_of(*t))) y2=(f(y_of(*t))) {}
            text.ylab x=(f(LEFT - 6.0)) y=(f(y_of(*t) + 4.0)) text-anchor="end" { (axis_number(*t)) }
        }
        line.axis x1=(f(LEFT)) x2=(f(LEFT)) y1=(f(TOP)) y2=(f(TOP + ph)) {}
        line.axis x1=(f(LEFT)) x2=(f(W - RIGHT)) y1=(f(TOP + ph)) y2=(f(TOP + ph)) {}
    }
}

/// Renders a chart; `None` when no series has a value (the caller shows
/// "no data" instead).
pub fn render(chart: &Chart) -> Option<Markup> {
    let n = chart.times.len();
    if n == 0
        || chart
            .series
            .iter()
            .all(|s| s.values.iter().all(Option::is_none))
    {
        return None;
    }
    let groups = buckets(n);
    // Stacked series: cumulative tops per bucket (means).
    let mut stack_base: Vec<Option<f64>> = vec![Some(0.0); groups.len()];
    let mut drawn: Vec<Drawn> = Vec::new();
    let mut y_top: f64 = 0.0;
    for (si, s) in chart.series.iter().enumerate() {
        let st: Vec<Option<(f64, f64, f64)>> =
            groups.iter().map(|g| stats(&s.values, *g)).collect();
        let base: Vec<Option<f64>> = if s.kind == Kind::Stacked {
            stack_base.clone()
        } else {
            vec![Some(0.0); groups.len()]
        };
        for (b, x) in st.iter().enumerate() {
            if let Some((_, mean, max)) = x {
                let top =
                    base[b].unwrap_or(0.0) + if s.kind == Kind::Stacked { *mean } else { *max };
                y_top = y_top.max(top);
            }
        }
        if s.kind == Kind::Stacked {
            for (b, x) in st.iter().enumerate() {
                stack_base[b] = match (stack_base[b], x) {
                    (Some(a), Some((_, mean, _))) => Some(a + mean),
                    _ => None,
                };
            }
        }
        drawn.push((si, st, base));
    }
    for t in &chart.thresholds {
        y_top = y_top.max(t.value * 1.1);
    }
    let y_max = match chart.y_max {
        Some(m) => m,
        None => {
            let step = nice_step(if y_top > 0.0 { y_top } else { 1.0 }, 4);
            (y_top / step).ceil().max(1.0) * step
        }
    };
    let step = nice_step(y_max, 4);
    let (pw, ph) = (W - LEFT - RIGHT, H - TOP - BOTTOM);
    let t0 = chart.times[0];
    let t1 = chart.times[n - 1].saturating_add(chart.window_ms);
    let span = t1.saturating_sub(t0).max(1) as f64;
    let x_of = |g: (usize, usize)| {
        let mid = (chart.times[g.0] + chart.times[g.1] + chart.window_ms) as f64 / 2.0;
        LEFT + (mid - t0 as f64) / span * pw
    };
    let y_of = |v: f64| TOP + ph - (v.clamp(0.0, y_max) / y_max) * ph;
    // Bounded whatever the model holds (a property test feeds it extremes).
    let y_ticks: Vec<f64> = (0..=16)
        .map(|k| f64::from(k) * step)
        .take_while(|v| *v <= y_max * 1.0001)
        .collect();
    let x_ticks: Vec<i64> = {
        let minutes = [1, 2, 5, 10, 15, 30, 60, 120, 180, 360, 720];
        let day = 1_440 * 60_000i64;
        let per = minutes
            .iter()
            .map(|m| m * 60_000)
            .find(|m| t1.saturating_sub(t0) / m <= 8)
            .unwrap_or_else(|| (t1.saturating_sub(t0) / 8 / day + 1).saturating_mul(day));
        let first = t0.saturating_add(per - 1).div_euclid(per) * per;
        (0..16)
            .map(|k| first.saturating_add(k * per))
            .take_while(|t| *t <= t1)
            .collect()
    };
    let svg_title = format!("{} ({})", chart.title, chart.unit);
    Some(html! {
        figure.chart {
            figcaption { (chart.title) span.unit { " · " (chart.unit) } }
            svg viewBox=(format!("0 0 {W} {H}")) role="img" aria-label=(svg_title) {
                title { (svg_title) }
                // Grid and y axis.
                (grid_and_axes(&y_ticks, y_of, ph))
                @for t in &x_ticks {
                    @let x = LEFT + (*t - t0) as f64 / span * pw;
                    line.tick x1=(f(x)) x2=(f(x)) y1=(f(TOP + ph)) y2=(f(TOP + ph + 4.0)) {}
                    text.xlab x=(f(x)) y=(f(TOP + ph + 16.0)) text-anchor="middle" { (hhmm(*t)) }
                }
                text.xlab x=(f(W - RIGHT)) y=(f(TOP + ph + 30.0)) text-anchor="end" { "time (UTC)" }
                // Series.
                @for (si, st, base) in &drawn {
                    @let s = &chart.series[*si];
                    @let color = PALETTE[s.color % PALETTE.len()];
                    @if s.kind == Kind::Stacked {
                        @let upper: Vec<Option<(f64, f64)>> = st.iter().enumerate().map(|(b, x)| match (x, base[b]) { (Some((_, mean, _)), Some(bs)) => Some((x_of(groups[b]), y_of(bs + mean))), _ => None }).collect();
                        @let lower: Vec<Option<(f64, f64)>> = st.iter().enumerate().map(|(b, x)| match (x, base[b]) { (Some(_), Some(bs)) => Some((x_of(groups[b]), y_of(bs))), _ => None }).collect();
                        path.area d=(band(&upper, &lower)) fill=(color) {}
                    } @else {
                        @if groups.iter().any(|(a, b)| a != b) {
                            @let hi: Vec<Option<(f64, f64)>> = st.iter().enumerate().map(|(b, x)| x.map(|(_, _, mx)| (x_of(groups[b]), y_of(mx)))).collect();
                            @let lo: Vec<Option<(f64, f64)>> = st.iter().enumerate().map(|(b, x)| x.map(|(mn, _, _)| (x_of(groups[b]), y_of(mn)))).collect();
                            path.envelope d=(band(&hi, &lo)) fill=(color) {}
                        }
                        @let pts: Vec<Option<(f64, f64)>> = st.iter().enumerate().map(|(b, x)| x.map(|(_, mean, _)| (x_of(groups[b]), y_of(mean)))).collect();
                        @let single = pts.iter().filter(|p| p.is_some()).count() == 1;
                        path.line d=(polyline(&pts)) stroke=(color) stroke-dasharray=(if s.kind == Kind::Dashed { "6 3" } else { DASHES[s.color % DASHES.len()] }) {}
                        @if single {
                            @for (x, y) in pts.iter().flatten() {
                                circle cx=(f(*x)) cy=(f(*y)) r="3" fill=(color) {}
                            }
                        }
                    }
                }
                @for t in &chart.thresholds {
                    line.slo x1=(f(LEFT)) x2=(f(W - RIGHT)) y1=(f(y_of(t.value))) y2=(f(y_of(t.value))) {}
                    text.slolab x=(f(W - RIGHT - 4.0)) y=(f(y_of(t.value) - 4.0)) text-anchor="end" { (t.label) }
                }
                // Legend, one row under the axis; entries at fixed steps.
                @for (i, s) in chart.series.iter().enumerate() {
                    @let x = LEFT + (i as f64) * (pw / chart.series.len().max(4) as f64);
                    @let color = PALETTE[s.color % PALETTE.len()];
                    @if s.kind == Kind::Stacked {
                        rect x=(f(x)) y=(f(H - 16.0)) width="14" height="9" fill=(color) {}
                    } @else {
                        line.legend x1=(f(x)) x2=(f(x + 14.0)) y1=(f(H - 11.5)) y2=(f(H - 11.5)) stroke=(color) stroke-dasharray=(if s.kind == Kind::Dashed { "6 3" } else { DASHES[s.color % DASHES.len()] }) {}
                    }
                    text.legendlab x=(f(x + 18.0)) y=(f(H - 8.0)) { (s.name) }
                }
            }
            @if groups.iter().any(|(a, b)| a != b) {
                p.note { "Each point groups " (n / groups.len()) "–" (n.div_ceil(groups.len())) " windows: the line is their mean, the band their minimum to maximum." }
            }
        }
    })
}

/// One window on a latency-against-concurrency chart: the bucket its
/// quantile lies in, drawn as a vertical bar at its concurrency.
#[derive(Clone, Debug, PartialEq)]
pub struct RangePoint {
    /// Concurrency.
    pub x: f64,
    /// The bucket's lower edge.
    pub low: f64,
    /// The bucket's upper edge (`None`: the `+Inf` bucket).
    pub high: Option<f64>,
}

/// A chart of value ranges against a quantity (not time).
#[derive(Clone, Debug)]
pub struct RangeChart {
    /// Heading.
    pub title: String,
    /// The x axis' label.
    pub x_label: String,
    /// The y axis' unit.
    pub unit: String,
    /// The points.
    pub points: Vec<RangePoint>,
    /// Horizontal lines (objectives, floors).
    pub lines: Vec<Threshold>,
}

/// Most bars drawn; more are merged by concurrency (the widest range of
/// each group), so a week stays small.
const MAX_BARS: usize = 300;

/// Renders a range chart; `None` without points.
pub fn render_ranges(c: &RangeChart) -> Option<Markup> {
    let pts: Vec<&RangePoint> = c
        .points
        .iter()
        .filter(|p| p.x.is_finite() && p.low.is_finite())
        .collect();
    if pts.is_empty() {
        return None;
    }
    let x_top = pts.iter().map(|p| p.x).fold(0.0, f64::max);
    let x_step = nice_step(if x_top > 0.0 { x_top } else { 1.0 }, 5);
    let x_max = ((x_top / x_step).ceil().max(1.0)) * x_step;
    // Merge into at most MAX_BARS groups along x.
    let mut bars: Vec<(f64, f64, Option<f64>)> = Vec::new();
    if pts.len() > MAX_BARS {
        let width = x_max / MAX_BARS as f64;
        let mut groups: std::collections::BTreeMap<i64, (f64, f64, Option<f64>, bool)> =
            std::collections::BTreeMap::new();
        for p in &pts {
            let k = (p.x / width).floor() as i64;
            let slot = groups.entry(k).or_insert((p.x, p.low, p.high, false));
            slot.1 = slot.1.min(p.low);
            slot.2 = match (slot.2, p.high) {
                (Some(a), Some(b)) if !slot.3 => Some(a.max(b)),
                _ => {
                    slot.3 = true;
                    None
                }
            };
        }
        bars.extend(groups.into_values().map(|(x, lo, hi, _)| (x, lo, hi)));
    } else {
        bars.extend(pts.iter().map(|p| (p.x, p.low, p.high)));
    }
    let finite_top = bars
        .iter()
        .map(|b| b.2.unwrap_or(b.1))
        .chain(c.lines.iter().map(|t| t.value * 1.1))
        .fold(0.0, f64::max);
    let y_step = nice_step(if finite_top > 0.0 { finite_top } else { 1.0 }, 4);
    let y_max = ((finite_top / y_step).ceil().max(1.0)) * y_step;
    let (pw, ph) = (W - LEFT - RIGHT, H - TOP - BOTTOM);
    let x_of = |v: f64| LEFT + (v.clamp(0.0, x_max) / x_max) * pw;
    let y_of = |v: f64| TOP + ph - (v.clamp(0.0, y_max) / y_max) * ph;
    let y_ticks: Vec<f64> = (0..=16)
        .map(|k| f64::from(k) * y_step)
        .take_while(|v| *v <= y_max * 1.0001)
        .collect();
    let x_ticks: Vec<f64> = (0..=16)
        .map(|k| f64::from(k) * x_step)
        .take_while(|v| *v <= x_max * 1.0001)
        .collect();
    let svg_title = format!("{} ({})", c.title, c.unit);
    Some(html! {
        figure.chart {
            figcaption { (c.title) span.unit { " · " (c.unit) } }
            svg viewBox=(format!("0 0 {W} {H}")) role="img" aria-label=(svg_title) {
                title { (svg_title) }
                (grid_and_axes(&y_ticks, y_of, ph))
                @for t in &x_ticks {
                    line.tick x1=(f(x_of(*t))) x2=(f(x_of(*t))) y1=(f(TOP + ph)) y2=(f(TOP + ph + 4.0)) {}
                    text.xlab x=(f(x_of(*t))) y=(f(TOP + ph + 16.0)) text-anchor="middle" { (axis_number(*t)) }
                }
                text.xlab x=(f(W - RIGHT)) y=(f(TOP + ph + 30.0)) text-anchor="end" { (c.x_label) }
                @for (x, lo, hi) in &bars {
                    @let top = hi.map_or(TOP, y_of);
                    line.range x1=(f(x_of(*x))) x2=(f(x_of(*x))) y1=(f(y_of(*lo))) y2=(f(top)) stroke=(PALETTE[0]) {}
                    line.range x1=(f(x_of(*x) - 3.0)) x2=(f(x_of(*x) + 3.0)) y1=(f(y_of(*lo))) y2=(f(y_of(*lo))) stroke=(PALETTE[0]) {}
                    @if hi.is_some() {
                        line.range x1=(f(x_of(*x) - 3.0)) x2=(f(x_of(*x) + 3.0)) y1=(f(top)) y2=(f(top)) stroke=(PALETTE[0]) {}
                    }
                }
                // Labels alternate right and left so close lines stay legible.
                @for (k, t) in c.lines.iter().enumerate() {
                    line.slo x1=(f(LEFT)) x2=(f(W - RIGHT)) y1=(f(y_of(t.value))) y2=(f(y_of(t.value))) {}
                    @if k % 2 == 0 {
                        text.slolab x=(f(W - RIGHT - 4.0)) y=(f(y_of(t.value) - 4.0)) text-anchor="end" { (t.label) }
                    } @else {
                        text.slolab x=(f(LEFT + 4.0)) y=(f(y_of(t.value) - 4.0)) text-anchor="start" { (t.label) }
                    }
                }
                line.legend x1=(f(LEFT)) x2=(f(LEFT)) y1=(f(H - 16.0)) y2=(f(H - 6.0)) stroke=(PALETTE[0]) {}
                text.legendlab x=(f(LEFT + 8.0)) y=(f(H - 8.0)) { "one window: the bucket its p95 lies in (an open bar: above the top edge)" }
            }
            @if pts.len() > MAX_BARS {
                p.note { (pts.len()) " windows merged by concurrency into " (bars.len()) " bars (each the widest range of its group)." }
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chart(values: Vec<Option<f64>>) -> Chart {
        Chart {
            title: "t".into(),
            unit: "ms".into(),
            y_max: None,
            times: (0..values.len() as i64).map(|i| i * 60_000).collect(),
            window_ms: 60_000,
            series: vec![Series {
                name: "a <b>".into(),
                values,
                kind: Kind::Line,
                color: 0,
            }],
            thresholds: vec![Threshold {
                value: 5.0,
                label: "SLO".into(),
            }],
        }
    }

    #[test]
    fn gaps_break_the_line_and_text_is_escaped() {
        let svg = render(&chart(vec![Some(1.0), Some(2.0), None, Some(3.0)]))
            .expect("chart")
            .into_string();
        let d = svg.split("class=\"line\" d=\"").nth(1).expect("path");
        let d = &d[..d.find('"').expect("end")];
        assert_eq!(d.matches('M').count(), 2, "{d}");
        assert!(svg.contains("a &lt;b&gt;"));
    }

    #[test]
    fn long_series_keep_their_spikes() {
        let mut v = vec![Some(1.0); 2000];
        v[1234] = Some(500.0);
        let svg = render(&chart(v)).expect("chart").into_string();
        assert!(svg.contains("class=\"envelope\""));
        // The y axis reaches the spike.
        let top = svg
            .split("class=\"ylab\"")
            .skip(1)
            .filter_map(|t| t.split('>').nth(1)?.split('<').next()?.parse::<f64>().ok())
            .fold(0.0, f64::max);
        assert!(top >= 500.0, "top label {top}");
    }

    #[test]
    fn ranges_draw_buckets_and_merge_long_captures() {
        let c = RangeChart {
            title: "ITL <p95>".into(),
            x_label: "running".into(),
            unit: "ms".into(),
            points: vec![
                RangePoint {
                    x: 8.0,
                    low: 10.0,
                    high: Some(25.0),
                },
                RangePoint {
                    x: 32.0,
                    low: 25.0,
                    high: None,
                },
            ],
            lines: vec![Threshold {
                value: 50.0,
                label: "SLO".into(),
            }],
        };
        let svg = render_ranges(&c).expect("chart").into_string();
        assert_eq!(svg.matches("class=\"range\"").count(), 5);
        assert!(svg.contains("ITL &lt;p95&gt;"));
        let many = RangeChart {
            points: (0..5000)
                .map(|i| RangePoint {
                    x: f64::from(i % 40),
                    low: 1.0,
                    high: Some(2.0),
                })
                .collect(),
            ..c
        };
        let svg = render_ranges(&many).expect("chart").into_string();
        assert!(svg.matches("class=\"range\"").count() <= 3 * MAX_BARS);
        assert!(
            render_ranges(&RangeChart {
                points: vec![],
                ..many
            })
            .is_none()
        );
    }

    #[test]
    fn no_data_is_no_chart() {
        assert!(render(&chart(vec![None, None])).is_none());
    }
}
