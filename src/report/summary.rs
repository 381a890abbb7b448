//! The summary table every view shares (terminal, Markdown, HTML): one row per point with the
//! parameters, runs, wall time mean ± σ, speed-up, efficiency, %CPU, throughput, each metric,
//! user and system time, peak memory and how the CPUs were used.

use super::format::{bytes, mean_pm, num, scale, throughput_scale};
use super::table::{Column, NONE, Table};
use super::threads::capacity_cell;
use crate::results::analysis::PointScaling;
use crate::results::{Analysis, PointResult, PointStats, Results, value_text};
use crate::stats::Summary;

/// One point as the tables see it: its results and its scaling figures.
pub struct PointRow<'a> {
    /// Position in the document's points.
    pub index: usize,
    /// The point.
    pub point: &'a PointResult,
    /// Its statistics over the runs, computed once for the row.
    pub stats: PointStats,
    /// Speed-up, efficiency and Karp–Flatt, when the analysis covers the point.
    pub scaling: Option<&'a PointScaling>,
}

/// The rows of `doc`'s points, with the figures of `analysis`.
pub fn rows<'a>(doc: &'a Results, analysis: Option<&'a Analysis>) -> Vec<PointRow<'a>> {
    doc.points
        .iter()
        .enumerate()
        .map(|(index, point)| PointRow {
            index,
            point,
            stats: point.stats(),
            scaling: analysis.and_then(|a| a.point(index)),
        })
        .collect()
}

/// Metrics that get columns of their own: every metric of the run, in the order of `--metric`,
/// then by name, but for `throughput` when the throughput column is read from it.
pub fn metric_names(doc: &Results) -> Vec<String> {
    let mut names: Vec<String> = doc.plan.metrics.iter().map(|m| m.name.clone()).collect();
    let mut found: Vec<String> =
        doc.points.iter().flat_map(|p| p.stats().metrics.into_keys()).collect();
    found.sort();
    for n in found {
        if !names.contains(&n) {
            names.push(n);
        }
    }
    names.retain(|n| n != "throughput" || doc.plan.work.is_some());
    names
}

/// `16 (3 failed)`, `2/5` while runs are still to come, or the number of runs.
pub fn runs_text(p: &PointResult) -> String {
    let failed = p.runs.iter().filter(|r| !r.succeeded()).count();
    match (failed, p.target_runs) {
        (0, Some(t)) if (p.runs.len() as u32) < t => format!("{}/{t}", p.runs.len()),
        (0, _) => p.runs.len().to_string(),
        (f, _) => format!("{} ({f} failed)", p.runs.len()),
    }
}

/// Builds the summary table of a results document.
pub fn summary(doc: &Results, analysis: Option<&Analysis>) -> Table {
    let rows = rows(doc, analysis);
    Table::of(&columns(doc, &rows), &rows)
}

fn columns<'a>(doc: &'a Results, rows: &[PointRow]) -> Vec<Column<'a, PointRow<'a>>> {
    let mut cols: Vec<Column<PointRow>> = Vec::new();
    for p in &doc.plan.params {
        let name = p.name.as_str();
        let cell = move |r: &PointRow| r.point.params.get(name).map_or(NONE.into(), value_text);
        let numeric = rows.iter().all(|r| r.point.params.get(name).is_some_and(|v| v.is_number()));
        cols.push(if numeric { Column::number(name, cell) } else { Column::text(name, cell) });
    }
    cols.push(Column::number("runs", |r: &PointRow| runs_text(r.point)));
    cols.push(Column::number("time (s)", |r: &PointRow| {
        r.stats.wall_s.as_ref().map_or(NONE.into(), mean_pm)
    }));
    cols.push(Column::number("speed-up", |r: &PointRow| {
        r.scaling.map_or(NONE.into(), |x| format!("{:.2}×", x.speedup))
    }));
    if rows.iter().any(|r| r.scaling.is_some_and(|x| x.efficiency.is_some())) {
        cols.push(Column::number("efficiency", |r: &PointRow| {
            r.scaling
                .and_then(|x| x.efficiency)
                .map_or(NONE.into(), |e| format!("{:.0}%", 100.0 * e))
        }));
    }
    cols.push(Column::number("%CPU", |r: &PointRow| {
        r.stats.cpu_pct.as_ref().map_or(NONE.into(), |c| format!("{:.0}", c.mean))
    }));
    if rows.iter().any(|r| r.stats.throughput.is_some()) {
        let largest = rows
            .iter()
            .filter_map(|r| r.stats.throughput.as_ref())
            .map(|t| t.mean)
            .fold(0.0, f64::max);
        let (div, label) =
            throughput_scale(doc.throughput_unit.as_deref().unwrap_or_default(), largest);
        cols.push(Column::number(format!("throughput ({label})"), move |r: &PointRow| {
            scaled(r.stats.throughput.as_ref(), div)
        }));
    }
    for name in metric_names(doc) {
        let of = |r: &PointRow| r.stats.metrics.get(&name).map(|s| s.mean);
        let largest = rows.iter().filter_map(of).fold(0.0, f64::max);
        let (div, label) = scale(doc.metric_units.get(&name).map_or("", String::as_str), largest);
        let header = if label.is_empty() { name.clone() } else { format!("{name} ({label})") };
        cols.push(Column::number(header, move |r: &PointRow| {
            scaled(r.stats.metrics.get(&name), div)
        }));
    }
    cols.push(Column::number("user (s)", |r: &PointRow| {
        r.stats.user_s.as_ref().map_or(NONE.into(), |x| num(x.mean))
    }));
    cols.push(Column::number("sys (s)", |r: &PointRow| {
        r.stats.sys_s.as_ref().map_or(NONE.into(), |x| num(x.mean))
    }));
    cols.push(Column::number("max RSS", |r: &PointRow| {
        r.stats.max_rss_bytes.as_ref().map_or(NONE.into(), |x| bytes(x.max))
    }));
    memory_columns(doc, rows, &mut cols);
    let capacity: Vec<Option<String>> = rows.iter().map(|r| capacity_cell(r.point)).collect();
    if capacity.iter().any(Option::is_some) {
        cols.push(Column::text("how the CPUs were used", move |r: &PointRow| {
            capacity[r.index].clone().unwrap_or_else(|| NONE.into())
        }));
    }
    cols
}

/// The tree's memory, when the sampler read it: its peak PSS (mean over the runs), per worker
/// when the count is one of workers, and the throughput per GB of it (how much work a gigabyte of
/// the node's memory buys at each count: threads against copies).
fn memory_columns<'a>(
    doc: &'a Results,
    rows: &[PointRow],
    cols: &mut Vec<Column<'a, PointRow<'a>>>,
) {
    if !rows.iter().any(|r| r.stats.peak_pss_bytes.is_some()) {
        return;
    }
    cols.push(Column::number("peak PSS", |r: &PointRow| {
        r.stats.peak_pss_bytes.as_ref().map_or(NONE.into(), |x| bytes(x.mean))
    }));
    if rows.iter().any(|r| r.scaling.is_some_and(|x| x.efficiency.is_some())) {
        cols.push(Column::number("PSS/worker", |r: &PointRow| {
            match (
                r.stats.peak_pss_bytes.as_ref(),
                r.scaling.filter(|x| x.efficiency.is_some() && x.count > 0.0),
            ) {
                (Some(p), Some(x)) => bytes(p.mean / x.count),
                _ => NONE.into(),
            }
        }));
    }
    let per_gb = |r: &PointRow| {
        Some(r.stats.throughput.as_ref()?.mean / (r.stats.peak_pss_bytes.as_ref()?.mean / 1e9))
    };
    if rows.iter().any(|r| per_gb(r).is_some()) {
        let largest = rows.iter().filter_map(per_gb).fold(0.0, f64::max);
        let (div, label) =
            throughput_scale(doc.throughput_unit.as_deref().unwrap_or_default(), largest);
        cols.push(Column::number(format!("{label} per GB PSS"), move |r: &PointRow| {
            per_gb(r).map_or(NONE.into(), |v| num(v / div))
        }));
    }
}

/// A mean in a column's scale.
fn scaled(s: Option<&Summary>, div: f64) -> String {
    s.map_or(NONE.into(), |s| num(s.mean / div))
}
