//! One figure over the history of a series of comparable sweeps: a table (one row per sweep, the
//! steps marked) for the terminal, and a chart in a self-contained HTML page.

use super::check::Step;
use super::figures::Track;
use super::record::Sweep;
use crate::report::html;
use crate::report::svg::{self, Chart, Series, Style};
use crate::report::{NONE, Table};

/// `2026-11-30 14:02`: a sweep's start, shortened.
pub fn when(created: &str) -> String {
    created.get(..16).unwrap_or(created).replace('T', " ")
}

/// The tags as `key=value key=value`.
pub fn tags(s: &Sweep) -> String {
    s.tags.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(" ")
}

/// One row per sweep: its number, start, commit (or label), tags, the figure and the step that
/// starts there.
pub fn table(sweeps: &[Sweep], t: &Track, steps: &[Step]) -> Table {
    let mut rows = Vec::new();
    for (i, e) in t.entries.iter().enumerate() {
        let s = &sweeps[e.sweep];
        let value = match (e.value, &e.text) {
            (Some(v), _) => t.show(v),
            (None, Some(text)) => text.clone(),
            _ => NONE.to_string(),
        };
        // Runs other processes disturbed are left out: the figure is of the others, or none is
        // left when every run at a count it needs was.
        let value = match e.left_out {
            0 => value,
            1 => format!("{value} (1 run left out: other processes)"),
            n => format!("{value} ({n} runs left out: other processes)"),
        };
        let interval = e
            .interval
            .map_or_else(String::new, |[lo, hi]| format!("{} – {}", t.show(lo), t.show(hi)));
        let step = steps.iter().find(|st| st.at == i).map_or_else(String::new, step_text);
        rows.push(vec![
            format!("#{}", s.id),
            when(&s.created),
            s.commit_column(),
            tags(s),
            value,
            interval,
            step,
        ]);
    }
    let mut headers: Vec<String> =
        ["sweep", "started (UTC)", "commit", "tags", &t.name, "95% interval", "step"]
            .map(String::from)
            .to_vec();
    let mut numeric = vec![true, false, false, false, true, true, false];
    // A figure that has no interval (the efficiency, the first finding) leaves the column out.
    if t.entries.iter().all(|e| e.interval.is_none()) {
        headers.remove(5);
        numeric.remove(5);
        for r in &mut rows {
            r.remove(5);
        }
    }
    Table { headers, numeric, rows }
}

/// `▲ +27% (regression, p = 0.001)`; for the serial fraction, `▲ +21% in time at the largest count (…)`.
pub fn step_text(s: &Step) -> String {
    let arrow = if s.after > s.before { "▲" } else { "▼" };
    let what = match (s.regression, s.improvement) {
        (true, _) => "regression",
        (false, true) => "improvement",
        _ => "change",
    };
    let p = s.p.map_or_else(|| ", by the threshold".to_string(), |p| format!(", {}", p_text(p)));
    format!("{arrow} {} ({what}{p})", s.change_text())
}

/// `p = 0.003`, `p < 0.001`.
pub fn p_text(p: f64) -> String {
    if p < 0.001 { "p < 0.001".into() } else { format!("p = {p:.3}") }
}

/// The figure's chart: its value per sweep against the sweep's number, with intervals, and the
/// steps marked as vertical lines.
pub fn chart(title: &str, sweeps: &[Sweep], t: &Track, steps: &[Step]) -> String {
    let scale = if t.unit == "%" { 100.0 } else { 1.0 };
    let number = |i: usize| sweeps[t.entries[i].sweep].id as f64;
    let points: Vec<(usize, f64, Option<[f64; 2]>)> = t
        .entries
        .iter()
        .enumerate()
        .filter_map(|(i, e)| Some((i, e.value? * scale, e.interval)))
        .collect();
    let mut series = vec![Series {
        name: t.name.clone(),
        points: points.iter().map(|&(i, v, _)| (number(i), v)).collect(),
        errors: points
            .iter()
            .map(|&(_, _, ci)| ci.map(|[lo, hi]| (lo * scale, hi * scale)))
            .collect(),
        style: Style::Measured,
        colour: svg::PALETTE[0].into(),
    }];
    let (lo, hi) = points
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), p| (l.min(p.1), h.max(p.1)));
    for (k, s) in steps.iter().enumerate() {
        let x = number(s.at) - 0.5;
        series.push(Series {
            name: format!("step at #{}", sweeps[t.entries[s.at].sweep].id),
            points: vec![(x, lo), (x, hi)],
            errors: vec![None, None],
            style: Style::Reference,
            colour: svg::PALETTE[(3 + k) % svg::PALETTE.len()].into(),
        });
    }
    let y_label = match t.unit {
        "%" => format!("{} (%)", t.name),
        "" => t.name.clone(),
        u => format!("{} ({u})", t.name),
    };
    svg::line_chart(&Chart {
        title: title.to_string(),
        x_label: "sweep (its number in the history)".into(),
        y_label,
        series,
    })
}

/// The HTML page of one or more series' trends: per series its chart and its table.
pub fn page(title: &str, parts: &[(String, String, Table)]) -> String {
    let mut body = format!("<h1>{}</h1>", svg::escape(title));
    for (heading, chart, table) in parts {
        body.push_str(&format!("<h2>{}</h2><figure>{chart}</figure>", svg::escape(heading)));
        body.push_str(&html::table(table));
    }
    html::page(title, &body)
}
