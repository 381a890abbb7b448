//! The summary table every view shares: one row per point with the parameters, runs, wall time
//! mean ± σ, speed-up, efficiency, %CPU, throughput, user and system time and peak memory.

use super::format::{bytes, mean_pm, num, throughput_scale};
use crate::results::Analysis;
use crate::results::{Results, value_text};

/// A table of text cells with per-column alignment.
#[derive(Clone, Debug, PartialEq)]
pub struct Table {
    /// Column headers.
    pub headers: Vec<String>,
    /// Whether each column is numeric (right-aligned).
    pub numeric: Vec<bool>,
    /// Rows of cells.
    pub rows: Vec<Vec<String>>,
}

const NONE: &str = "—";

/// Builds the summary table of a results document.
pub fn summary(doc: &Results, analysis: Option<&Analysis>) -> Table {
    let mut headers: Vec<String> = doc.plan.params.iter().map(|p| p.name.clone()).collect();
    let mut numeric: Vec<bool> = doc
        .plan
        .params
        .iter()
        .map(|p| doc.points.iter().all(|pt| pt.params.get(&p.name).is_some_and(|v| v.is_number())))
        .collect();
    let tp_unit = doc.throughput_unit.clone().unwrap_or_default();
    let largest = doc.points.iter().filter_map(|p| p.stats.throughput.as_ref()).map(|t| t.mean).fold(0.0, f64::max);
    let (tp_div, tp_label) = throughput_scale(&tp_unit, largest);
    let has_tp = doc.points.iter().any(|p| p.stats.throughput.is_some());
    let point = |i: usize| analysis.and_then(|a| a.point(i));
    let has_eff = (0..doc.points.len()).any(|i| point(i).is_some_and(|p| p.efficiency.is_some()));
    let mut cols = vec!["runs", "time (s)", "speed-up"];
    if has_eff {
        cols.push("efficiency");
    }
    cols.push("%CPU");
    let tp_header = format!("throughput ({tp_label})");
    if has_tp {
        cols.push(&tp_header);
    }
    cols.extend(["user (s)", "sys (s)", "max RSS"]);
    let sampled: Vec<Option<String>> = doc.points.iter().map(super::threads::capacity_cell).collect();
    let has_threads = sampled.iter().any(Option::is_some);
    if has_threads {
        cols.push("how the CPUs were used");
    }
    headers.extend(cols.iter().map(|c| c.to_string()));
    numeric.extend(std::iter::repeat_n(true, cols.len()));
    if has_threads {
        *numeric.last_mut().expect("a column") = false;
    }

    let rows = doc
        .points
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let sp = point(i);
            let mut row: Vec<String> = p.params.values().map(value_text).collect();
            let s = &p.stats;
            let failed = p.runs.iter().filter(|r| !r.succeeded()).count();
            let runs = match (failed, p.target_runs) {
                (0, Some(t)) if (p.runs.len() as u32) < t => format!("{}/{t}", p.runs.len()),
                (0, _) => p.runs.len().to_string(),
                (f, _) => format!("{} ({f} failed)", p.runs.len()),
            };
            row.push(runs);
            row.push(s.wall_s.as_ref().map_or(NONE.into(), mean_pm));
            row.push(sp.map_or(NONE.into(), |x| format!("{:.2}×", x.speedup)));
            if has_eff {
                row.push(sp.and_then(|x| x.efficiency).map_or(NONE.into(), |x| format!("{:.0}%", 100.0 * x)));
            }
            row.push(s.cpu_pct.as_ref().map_or(NONE.into(), |c| format!("{:.0}", c.mean)));
            if has_tp {
                row.push(s.throughput.as_ref().map_or(NONE.into(), |t| num(t.mean / tp_div)));
            }
            row.push(s.user_s.as_ref().map_or(NONE.into(), |x| num(x.mean)));
            row.push(s.sys_s.as_ref().map_or(NONE.into(), |x| num(x.mean)));
            row.push(s.max_rss_bytes.as_ref().map_or(NONE.into(), |x| bytes(x.max)));
            if has_threads {
                row.push(sampled[i].clone().unwrap_or_else(|| NONE.into()));
            }
            row
        })
        .collect();
    Table { headers, numeric, rows }
}

/// The largest waits of every sampled point, and what the sampler could not see.
pub fn waits(doc: &Results) -> Vec<String> {
    let mut out = Vec::new();
    let mut limits: Vec<String> = Vec::new();
    let last = doc.points.iter().rposition(|p| p.runs.iter().any(|r| r.threads.is_some()));
    for (i, p) in doc.points.iter().enumerate() {
        if let Some(t) = super::threads::of_point(p) {
            // Where on-CPU time went rarely differs between points: said once, for the last.
            out.extend(super::threads::wait_lines(&p.label(), &t, Some(i) == last));
            limits.extend(t.limits.into_iter().filter(|l| !limits.contains(l)).collect::<Vec<_>>());
        }
    }
    out.extend(limits.into_iter().map(|l| format!("not seen: {l}")));
    out
}

/// Warnings of every point, as `label: warning` lines.
pub fn notes(doc: &Results) -> Vec<String> {
    doc.points.iter().flat_map(|p| p.warnings.iter().map(move |w| format!("{}: {w}", p.label()))).collect()
}

/// Lines comparing each point's read rate with the measured ceiling of its input files.
pub fn ceiling(doc: &Results) -> Vec<String> {
    let Some(c) = &doc.ceiling else { return vec![] };
    let mut lines = vec![format!(
        "readspeed over {} ({}): {}",
        c.files.join(" "),
        if c.cold { "evicted before each read" } else { "as cached" },
        c.points
            .iter()
            .map(|p| format!("{} {:.1} MB/s", threads(p.threads), p.mean_bytes_per_s / 1e6))
            .collect::<Vec<_>>()
            .join(", ")
    )];
    let Some(name) = doc.plan.axis.as_ref().map(|a| a.param.clone()) else { return lines };
    for p in &doc.points {
        let count = p.params.get(&name).and_then(|v| v.as_f64().or_else(|| v.as_str()?.parse().ok()));
        let (Some(count), Some(rate)) = (count, crate::diagnose::evidence::read_rate(p, c.cold)) else { continue };
        if let Some(cp) = c.at(count).filter(|cp| cp.mean_bytes_per_s > 0.0) {
            lines.push(format!(
                "{}: the job read {:.1} MB/s = {:.0}% of the ceiling at {}",
                p.label(),
                rate / 1e6,
                100.0 * rate / cp.mean_bytes_per_s,
                threads(cp.threads)
            ));
        }
    }
    lines
}

fn threads(n: u32) -> String {
    format!("{n} thread{}", if n == 1 { "" } else { "s" })
}
