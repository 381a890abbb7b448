//! One CSV row per point with plain numbers (no units in cells), for spreadsheets and pandas.

use crate::results::Analysis;
use crate::results::{Results, value_text};
use crate::stats::Summary;

/// Quotes a CSV field when it holds a comma, quote or line break.
pub fn field(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) { format!("\"{}\"", text.replace('"', "\"\"")) } else { text.to_string() }
}

/// Renders the points as CSV.
pub fn render(doc: &Results, analysis: Option<&Analysis>) -> String {
    let metrics: Vec<String> = {
        let mut names: Vec<String> = doc.points.iter().flat_map(|p| p.stats.metrics.keys().cloned()).collect();
        names.sort();
        names.dedup();
        names
    };
    let mut header: Vec<String> = doc.plan.params.iter().map(|p| p.name.clone()).collect();
    header.extend(
        [
            "runs",
            "failed_runs",
            "wall_mean_s",
            "wall_stddev_s",
            "wall_median_s",
            "wall_min_s",
            "wall_max_s",
            "wall_ci95_low_s",
            "wall_ci95_high_s",
            "speedup",
            "speedup_ci95_low",
            "speedup_ci95_high",
            "efficiency",
            "karp_flatt",
            "cpu_pct_mean",
            "user_mean_s",
            "sys_mean_s",
            "max_rss_bytes",
            "throughput_mean",
            "throughput_stddev",
            "throughput_unit",
        ]
        .map(String::from),
    );
    header.extend(metrics.iter().map(|m| format!("{m}_mean")));
    let mut out = header.iter().map(|h| field(h)).collect::<Vec<_>>().join(",");
    out.push('\n');
    let n = |x: Option<f64>| x.map_or(String::new(), |v| v.to_string());
    let mean = |s: &Option<Summary>| n(s.as_ref().map(|s| s.mean));
    for (i, p) in doc.points.iter().enumerate() {
        let sp = analysis.and_then(|a| a.point(i));
        let s = &p.stats;
        let w = s.wall_s.as_ref();
        let mut row: Vec<String> = p.params.values().map(value_text).collect();
        row.push(p.runs.len().to_string());
        row.push(p.runs.iter().filter(|r| !r.succeeded()).count().to_string());
        row.push(mean(&s.wall_s));
        row.push(n(w.map(|w| w.stddev)));
        row.push(n(w.map(|w| w.median)));
        row.push(n(w.map(|w| w.min)));
        row.push(n(w.map(|w| w.max)));
        row.push(n(w.and_then(|w| w.ci95).map(|c| c[0])));
        row.push(n(w.and_then(|w| w.ci95).map(|c| c[1])));
        row.push(n(sp.map(|x| x.speedup)));
        row.push(n(sp.and_then(|x| x.speedup_ci95).map(|c| c[0])));
        row.push(n(sp.and_then(|x| x.speedup_ci95).map(|c| c[1])));
        row.push(n(sp.and_then(|x| x.efficiency)));
        row.push(n(sp.and_then(|x| x.karp_flatt)));
        row.push(mean(&s.cpu_pct));
        row.push(mean(&s.user_s));
        row.push(mean(&s.sys_s));
        row.push(n(s.max_rss_bytes.as_ref().map(|x| x.max)));
        row.push(mean(&s.throughput));
        row.push(n(s.throughput.as_ref().map(|t| t.stddev)));
        row.push(doc.throughput_unit.clone().unwrap_or_default());
        row.extend(metrics.iter().map(|m| n(s.metrics.get(m).map(|x| x.mean))));
        out.push_str(&row.iter().map(|c| field(c)).collect::<Vec<_>>().join(","));
        out.push('\n');
    }
    out
}
