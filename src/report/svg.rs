//! Charts as inline SVG: readable without JavaScript, printable, and the same files for papers
//! and slides. Line charts with error bars (x on a log2 scale when counts double), stacked bars
//! and stacked areas. Every text is escaped.

use std::fmt::Write;

/// Colours that stay distinct for colour-blind readers (Okabe–Ito), then greys.
pub const PALETTE: [&str; 10] = [
    "#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000",
    "#999999", "#666666",
];

/// How a series is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    /// Measured points joined by lines.
    Measured,
    /// A model curve: a smooth dashed line, no markers.
    Model,
    /// A reference line (ideal speed-up): thin, grey, dotted.
    Reference,
    /// A run's time series: a solid line through many samples, no markers.
    Trace,
}

/// One line of a chart.
#[derive(Clone, Debug)]
pub struct Series {
    /// Legend text.
    pub name: String,
    /// (x, y) points in x order.
    pub points: Vec<(f64, f64)>,
    /// Error bar (low, high) per point, when known.
    pub errors: Vec<Option<(f64, f64)>>,
    /// How to draw it.
    pub style: Style,
    /// Colour (an SVG colour).
    pub colour: String,
}

/// A line chart.
#[derive(Clone, Debug)]
pub struct Chart {
    /// Heading above the plot.
    pub title: String,
    /// X axis label.
    pub x_label: String,
    /// Y axis label.
    pub y_label: String,
    /// The lines.
    pub series: Vec<Series>,
}

/// Stacked bars, one per category, each stack summing to 100.
#[derive(Clone, Debug)]
pub struct Bars {
    /// Heading.
    pub title: String,
    /// Label under each bar.
    pub categories: Vec<String>,
    /// (name, colour, value per category in percent).
    pub stacks: Vec<(String, String, Vec<f64>)>,
}

const W: f64 = 560.0;
const H: f64 = 320.0;
const LEFT: f64 = 64.0;
const RIGHT: f64 = 16.0;
const TOP: f64 = 36.0;
const BOTTOM: f64 = 48.0;

/// Escapes text for SVG and HTML content and attributes.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

/// Round tick values covering [lo, hi].
fn ticks(lo: f64, hi: f64) -> Vec<f64> {
    if hi.partial_cmp(&lo) != Some(std::cmp::Ordering::Greater) {
        return vec![lo];
    }
    let raw = (hi - lo) / 5.0;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    let first = (lo / step).ceil() * step;
    (0..).map(|i| first + i as f64 * step).take_while(|v| *v <= hi + step * 1e-9).collect()
}

/// A tick label: few digits, no trailing zeros.
fn label(v: f64) -> String {
    let a = v.abs();
    if a >= 1e4 {
        let (div, suffix) = [(1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")]
            .into_iter()
            .find(|(d, _)| a >= *d)
            .unwrap_or((1.0, ""));
        return format!("{}{suffix}", label(v / div));
    }
    let s = if a < 1e-3 && a > 0.0 {
        format!("{v:.1e}")
    } else if a >= 100.0 || v.fract() == 0.0 {
        format!("{v:.0}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    };
    if s.contains('.') && !s.contains('e') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

fn header(out: &mut String, title: &str) {
    let _ = write!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {H}" width="{W}" height="{H}" role="img" aria-label="{t}" font-family="system-ui, sans-serif" font-size="12"><title>{t}</title><rect width="{W}" height="{H}" fill="white"/><text x="{x}" y="20" font-size="14" font-weight="bold">{t}</text>"#,
        t = escape(title),
        x = LEFT
    );
}

fn legend(out: &mut String, items: &[(&str, &str, Style)]) {
    let mut x = LEFT + 8.0;
    let mut y = TOP + 10.0;
    for (name, colour, style) in items {
        let width = 36.0 + 7.0 * name.chars().count() as f64;
        if x + width > W - RIGHT && x > LEFT + 8.0 {
            x = LEFT + 8.0;
            y += 16.0;
        }
        let dash = match style {
            Style::Model => r#" stroke-dasharray="6 4""#,
            Style::Reference => r#" stroke-dasharray="2 3""#,
            Style::Measured | Style::Trace => "",
        };
        let _ = write!(
            out,
            r#"<line x1="{x}" y1="{y}" x2="{x2}" y2="{y}" stroke="{colour}" stroke-width="2"{dash}/><text x="{tx}" y="{ty}">{n}</text>"#,
            x2 = x + 18.0,
            tx = x + 22.0,
            ty = y + 4.0,
            n = escape(name)
        );
        x += width;
    }
}

/// Horizontal grid lines at pixel heights, each labelled on the left.
fn grid(out: &mut String, lines: impl Iterator<Item = (f64, String)>) {
    for (y, l) in lines {
        let _ = write!(
            out,
            r##"<line x1="{LEFT}" y1="{y}" x2="{r}" y2="{y}" stroke="#ddd"/><text x="{tx}" y="{ty}" text-anchor="end">{l}</text>"##,
            r = W - RIGHT,
            tx = LEFT - 6.0,
            ty = y + 4.0,
            l = escape(&l)
        );
    }
}

/// A legend of the layers that have a value somewhere.
fn layer_legend(out: &mut String, layers: &[(String, String, Vec<f64>)]) {
    let used: Vec<(&str, &str, Style)> = layers
        .iter()
        .filter(|(_, _, v)| v.iter().any(|x| *x > 0.0))
        .map(|(n, c, _)| (n.as_str(), c.as_str(), Style::Measured))
        .collect();
    legend(out, &used);
}

/// Renders a line chart. X is on a log2 scale when all x are positive and span a factor of 8.
pub fn line_chart(c: &Chart) -> String {
    let xs: Vec<f64> = c
        .series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.0))
        .filter(|x| x.is_finite())
        .collect();
    let ys: Vec<f64> = c
        .series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.1).chain(s.errors.iter().flatten().map(|e| e.1)))
        .filter(|y| y.is_finite())
        .collect();
    let mut out = String::new();
    header(&mut out, &c.title);
    if xs.is_empty() || ys.is_empty() {
        out.push_str(r#"<text x="280" y="160" text-anchor="middle">no data</text></svg>"#);
        return out;
    }
    let (xmin, xmax) = xs.iter().fold((f64::MAX, f64::MIN), |(a, b), &x| (a.min(x), b.max(x)));
    let log = xmin > 0.0 && xmax / xmin >= 8.0;
    let fx = |x: f64| if log { x.log2() } else { x };
    let (lo, hi) =
        if fx(xmax) > fx(xmin) { (fx(xmin), fx(xmax)) } else { (fx(xmin) - 1.0, fx(xmax) + 1.0) };
    let ymax = ys.iter().cloned().fold(0.0, f64::max) * 1.08;
    let ymax = if ymax > 0.0 { ymax } else { 1.0 };
    let px = |x: f64| LEFT + (fx(x) - lo) / (hi - lo) * (W - LEFT - RIGHT);
    let py = |y: f64| H - BOTTOM - y / ymax * (H - TOP - BOTTOM);
    let _ = write!(out, r##"<g stroke="#ddd">"##);
    for t in ticks(0.0, ymax) {
        let _ = write!(
            out,
            r#"<line x1="{LEFT}" y1="{y}" x2="{x2}" y2="{y}"/>"#,
            y = py(t),
            x2 = W - RIGHT
        );
    }
    out.push_str("</g>");
    let mut distinct: Vec<f64> = c
        .series
        .iter()
        .filter(|s| s.style == Style::Measured)
        .flat_map(|s| s.points.iter().map(|p| p.0))
        .filter(|x| x.is_finite())
        .collect();
    distinct.sort_by(f64::total_cmp);
    distinct.dedup();
    // Time series (no measured points) get evenly spaced ticks.
    let xticks = if !distinct.is_empty() && distinct.len() <= 12 {
        distinct
    } else if log {
        (lo.ceil() as i32..=hi.floor() as i32).map(|e| 2f64.powi(e)).collect()
    } else {
        ticks(xmin, xmax)
    };
    for t in &xticks {
        let _ = write!(
            out,
            r#"<text x="{x}" y="{y}" text-anchor="middle">{l}</text>"#,
            x = px(*t),
            y = H - BOTTOM + 16.0,
            l = label(*t)
        );
    }
    for t in ticks(0.0, ymax) {
        let _ = write!(
            out,
            r#"<text x="{x}" y="{y}" text-anchor="end">{l}</text>"#,
            x = LEFT - 6.0,
            y = py(t) + 4.0,
            l = label(t)
        );
    }
    let _ = write!(
        out,
        r##"<line x1="{LEFT}" y1="{b}" x2="{r}" y2="{b}" stroke="#333"/><line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{b}" stroke="#333"/><text x="{cx}" y="{lx}" text-anchor="middle">{xl}</text><text transform="translate(14 {cy}) rotate(-90)" text-anchor="middle">{yl}</text>"##,
        b = H - BOTTOM,
        r = W - RIGHT,
        cx = (LEFT + W - RIGHT) / 2.0,
        lx = H - 12.0,
        cy = (TOP + H - BOTTOM) / 2.0,
        xl = escape(&format!("{}{}", c.x_label, if log { " (log scale)" } else { "" })),
        yl = escape(&c.y_label)
    );
    for s in &c.series {
        let pts: Vec<String> = s
            .points
            .iter()
            .filter(|p| p.1.is_finite())
            .map(|p| format!("{:.1},{:.1}", px(p.0), py(p.1)))
            .collect();
        let (width, dash) = match s.style {
            Style::Measured => (2.0, ""),
            Style::Trace => (1.5, ""),
            Style::Model => (1.5, r#" stroke-dasharray="6 4""#),
            Style::Reference => (1.0, r#" stroke-dasharray="2 3""#),
        };
        let _ = write!(
            out,
            r#"<polyline class="series" fill="none" stroke="{c}" stroke-width="{width}"{dash} points="{p}"><title>{n}</title></polyline>"#,
            c = s.colour,
            p = pts.join(" "),
            n = escape(&s.name)
        );
        if s.style == Style::Measured {
            for (i, &(x, y)) in s.points.iter().enumerate().filter(|(_, p)| p.1.is_finite()) {
                if let Some(Some((a, b))) = s.errors.get(i) {
                    let _ = write!(
                        out,
                        r#"<line x1="{x}" y1="{y1}" x2="{x}" y2="{y2}" stroke="{c}"/>"#,
                        x = px(x),
                        y1 = py(*a),
                        y2 = py(*b),
                        c = s.colour
                    );
                }
                let _ = write!(
                    out,
                    r#"<circle cx="{cx:.1}" cy="{cy:.1}" r="3.5" fill="{c}"><title>{n}: {xl} → {yl}</title></circle>"#,
                    cx = px(x),
                    cy = py(y),
                    c = s.colour,
                    n = escape(&s.name),
                    xl = label(x),
                    yl = label(y)
                );
            }
        }
    }
    let items: Vec<(&str, &str, Style)> =
        c.series.iter().map(|s| (s.name.as_str(), s.colour.as_str(), s.style)).collect();
    if items.len() > 1 {
        legend(&mut out, &items);
    }
    out.push_str("</svg>");
    out
}

/// Renders stacked bars summing to 100%.
pub fn stacked_bars(b: &Bars) -> String {
    let mut out = String::new();
    header(&mut out, &b.title);
    let n = b.categories.len().max(1) as f64;
    let slot = (W - LEFT - RIGHT) / n;
    let bw = (slot * 0.6).min(60.0);
    let py = |v: f64| H - BOTTOM - v / 100.0 * (H - TOP - BOTTOM - 24.0);
    grid(&mut out, [0.0, 25.0, 50.0, 75.0, 100.0].iter().map(|&t| (py(t), format!("{t}%"))));
    for (i, cat) in b.categories.iter().enumerate() {
        let x = LEFT + slot * (i as f64 + 0.5) - bw / 2.0;
        let mut base = 0.0;
        for (name, colour, values) in &b.stacks {
            let v = values.get(i).copied().unwrap_or(0.0).max(0.0);
            if v <= 0.0 {
                continue;
            }
            let _ = write!(
                out,
                r#"<rect class="bar" x="{x:.1}" y="{y:.1}" width="{bw:.1}" height="{h:.1}" fill="{colour}"><title>{c}: {n} {v:.1}%</title></rect>"#,
                y = py(base + v),
                h = py(base) - py(base + v),
                c = escape(cat),
                n = escape(name)
            );
            base += v;
        }
        let _ = write!(
            out,
            r#"<text x="{cx:.1}" y="{y}" text-anchor="middle">{c}</text>"#,
            cx = x + bw / 2.0,
            y = H - BOTTOM + 16.0,
            c = escape(cat)
        );
    }
    layer_legend(&mut out, &b.stacks);
    out.push_str("</svg>");
    out
}

/// Renders stacked areas over time: `layers` are (name, colour, value per bin), bins `bin_s` wide.
pub fn stacked_areas(
    title: &str,
    y_label: &str,
    bin_s: f64,
    layers: &[(String, String, Vec<f64>)],
) -> String {
    let mut out = String::new();
    header(&mut out, title);
    let bins = layers.iter().map(|l| l.2.len()).max().unwrap_or(0);
    let totals: Vec<f64> = (0..bins)
        .map(|i| layers.iter().map(|l| l.2.get(i).copied().unwrap_or(0.0)).sum())
        .collect();
    let ymax = totals.iter().cloned().fold(0.0, f64::max).max(1.0) * 1.1;
    let tmax = bins as f64 * bin_s;
    let px = |t: f64| LEFT + t / tmax.max(1e-9) * (W - LEFT - RIGHT);
    let py = |v: f64| H - BOTTOM - v / ymax * (H - TOP - BOTTOM - 24.0);
    grid(&mut out, ticks(0.0, ymax).into_iter().map(|t| (py(t), label(t))));
    for t in ticks(0.0, tmax) {
        let _ = write!(
            out,
            r#"<text x="{x}" y="{y}" text-anchor="middle">{l}</text>"#,
            x = px(t),
            y = H - BOTTOM + 16.0,
            l = label(t)
        );
    }
    let mut base = vec![0.0; bins];
    for (name, colour, values) in layers {
        if values.iter().all(|v| *v <= 0.0) {
            continue;
        }
        let top: Vec<f64> =
            (0..bins).map(|i| base[i] + values.get(i).copied().unwrap_or(0.0)).collect();
        let mut pts: Vec<String> = (0..bins)
            .flat_map(|i| [(i as f64 * bin_s, top[i]), ((i + 1) as f64 * bin_s, top[i])])
            .map(|(t, v)| format!("{:.1},{:.1}", px(t), py(v)))
            .collect();
        pts.extend(
            (0..bins)
                .rev()
                .flat_map(|i| [((i + 1) as f64 * bin_s, base[i]), (i as f64 * bin_s, base[i])])
                .map(|(t, v)| format!("{:.1},{:.1}", px(t), py(v))),
        );
        let _ = write!(
            out,
            r#"<polygon class="area" fill="{colour}" points="{p}"><title>{n}</title></polygon>"#,
            p = pts.join(" "),
            n = escape(name)
        );
        base = top;
    }
    let _ = write!(
        out,
        r#"<text x="{cx}" y="{ly}" text-anchor="middle">seconds since the run started</text><text transform="translate(14 {cy}) rotate(-90)" text-anchor="middle">{yl}</text>"#,
        cx = (LEFT + W - RIGHT) / 2.0,
        ly = H - 12.0,
        cy = (TOP + H - BOTTOM) / 2.0,
        yl = escape(y_label)
    );
    layer_legend(&mut out, layers);
    out.push_str("</svg>");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round_and_cover_the_range() {
        assert_eq!(ticks(0.0, 10.0), [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
        assert_eq!(ticks(0.0, 0.9), [0.0, 0.2, 0.4, 0.6000000000000001, 0.8]);
        assert_eq!(label(2.50), "2.5");
        assert_eq!(label(1200.0), "1200");
        assert_eq!(label(6.0e6), "6M");
        assert_eq!(label(2.5e4), "25k");
    }

    #[test]
    fn text_is_escaped_and_a_chart_without_data_says_so() {
        let c = Chart {
            title: "<script>alert(1)</script>".into(),
            x_label: "\"'&".into(),
            y_label: "y".into(),
            series: vec![],
        };
        let s = line_chart(&c);
        assert!(!s.contains("<script>") && s.contains("&lt;script&gt;") && s.contains("no data"));
        let c = Chart {
            title: "t".into(),
            x_label: "\"'&".into(),
            y_label: "y".into(),
            series: vec![Series {
                name: "a".into(),
                points: vec![(1.0, 1.0), (2.0, 1.9), (64.0, 30.0)],
                errors: vec![Some((0.9, 1.1)), None, None],
                style: Style::Measured,
                colour: PALETTE[0].into(),
            }],
        };
        let s = line_chart(&c);
        assert!(
            s.contains("&quot;&#39;&amp; (log scale)") && s.matches("<circle").count() == 3,
            "{s}"
        );
    }
}
