//! Each run's time series in the files production monitors write (HSF's prmon): a tab-separated
//! table with prmon's column names and units, and a JSON summary with its `Max`, `Avg`, `HW` and
//! `Units` keys, so that prmon's plotting script and the pipelines that ingest its summaries read
//! them unchanged. Columns come in prmon's order (its monitors by name: counts, CPU, I/O, memory,
//! wall time); the network columns, which it measures per device and not per process, are left
//! out, as prmon leaves out a monitor it does not run.

use super::figure::file_safe;
use crate::results::Results;
use crate::sample::{RunMemory, RunSeries, ThreadReport};
use serde_json::{Map, Value, json};
use std::fmt::Write;

/// One run's files: the base name (`threads_4-run2`), the table and the summary.
pub struct Export {
    /// File name without its extension.
    pub name: String,
    /// The time series, `.txt` as prmon names it.
    pub tsv: String,
    /// The summary, `.json`.
    pub json: String,
}

/// prmon's columns after `Time`, with their units in `Units`.
const COLUMNS: [(&str, &str); 13] = [
    ("nprocs", "1"),
    ("nthreads", "1"),
    ("stime", "s"),
    ("utime", "s"),
    ("rchar", "B"),
    ("read_bytes", "B"),
    ("wchar", "B"),
    ("write_bytes", "B"),
    ("pss", "kB"),
    ("rss", "kB"),
    ("swap", "kB"),
    ("vmem", "kB"),
    ("wtime", "s"),
];

/// One series to export and what its summary needs: a run's, or one rank's or copy's.
struct Watched<'a> {
    /// When the run started, Unix seconds.
    started_unix_s: f64,
    /// Its wall time.
    wall_s: f64,
    /// Its peaks and means, when read.
    memory: Option<RunMemory>,
    /// Its time series.
    series: &'a RunSeries,
}

/// The files of every run that has a time series, point by point. A launched run (copies, ranks)
/// has one pair per rank, each from that rank's own tree, as prmon watches one job step each.
pub fn exports(doc: &Results) -> Vec<Export> {
    let mut out = Vec::new();
    for p in &doc.points {
        let label = file_safe(&p.label());
        for (i, r) in p.runs.iter().enumerate() {
            let mut push = |name: String, wall_s: f64, t: Option<&ThreadReport>| {
                let Some(t) = t else { return };
                let Some(series) = t.series.as_ref().filter(|s| !s.is_empty()) else { return };
                let w = Watched { started_unix_s: r.started_unix_s, wall_s, memory: t.memory, series };
                out.push(Export { name, tsv: table(&w), json: summary(doc, &w) });
            };
            if r.ranks.is_empty() {
                push(format!("{label}-run{}", i + 1), r.wall_s, r.threads.as_deref());
            }
            for part in &r.ranks {
                push(format!("{label}-run{}-rank{}", i + 1, part.rank), part.wall_s, part.threads.as_ref());
            }
        }
    }
    out
}

/// The value of column `c` at sample `i`, as prmon writes it (integers but for the times).
fn cell(s: &RunSeries, c: &str, i: usize) -> String {
    match c {
        "nprocs" => s.nprocs[i].to_string(),
        "nthreads" => s.nthreads[i].to_string(),
        "stime" => format!("{:.2}", s.stime_s[i]),
        "utime" => format!("{:.2}", s.utime_s[i]),
        "rchar" => s.rchar[i].to_string(),
        "read_bytes" => s.read_bytes[i].to_string(),
        "wchar" => s.wchar[i].to_string(),
        "write_bytes" => s.write_bytes[i].to_string(),
        "pss" => s.pss_kb[i].to_string(),
        "rss" => s.rss_kb[i].to_string(),
        "swap" => s.swap_kb[i].to_string(),
        "vmem" => s.vmem_kb[i].to_string(),
        _ => format!("{:.3}", s.t_s[i]),
    }
}

/// The table: `Time` (Unix seconds, whole as prmon's), then the columns.
fn table(w: &Watched) -> String {
    let s = w.series;
    let mut out = String::from("Time");
    for (c, _) in COLUMNS {
        out.push('\t');
        out.push_str(c);
    }
    out.push('\n');
    for i in 0..s.len() {
        let _ = write!(out, "{}", (w.started_unix_s + f64::from(s.t_s[i])).floor() as u64);
        for (c, _) in COLUMNS {
            out.push('\t');
            out.push_str(&cell(s, c, i));
        }
        out.push('\n');
    }
    out
}

/// The mean of a column over the run, each sample held until the next, the last until `end_s`.
fn time_mean(s: &RunSeries, end_s: f64, v: impl Fn(usize) -> f64) -> f64 {
    let n = s.len();
    let until = |i: usize| if i + 1 < n { f64::from(s.t_s[i + 1]) } else { end_s.max(f64::from(s.t_s[i])) };
    let span = until(n - 1) - f64::from(s.t_s[0]);
    if span <= 0.0 {
        return (0..n).map(&v).sum::<f64>() / n as f64;
    }
    (0..n).map(|i| v(i) * (until(i) - f64::from(s.t_s[i]))).sum::<f64>() / span
}

/// The summary: `Max` of every column, `Avg` of memory and counts over time and of I/O per second
/// of the run (prmon's meanings), the machine in `HW`, and `Units`.
fn summary(doc: &Results, w: &Watched) -> String {
    let s = w.series;
    let last = s.len() - 1;
    let max_u64 = |v: &[u64]| v.iter().copied().max().unwrap_or(0);
    let max_u32 = |v: &[u32]| v.iter().copied().max().unwrap_or(0);
    let mem = w.memory;
    let wall = w.wall_s.max(f64::from(s.t_s[last]));
    let round = |x: f64| (x * 100.0).round() / 100.0;
    let max = json!({
        "nprocs": max_u32(&s.nprocs),
        "nthreads": max_u32(&s.nthreads),
        "stime": round(f64::from(s.stime_s[last])),
        "utime": round(f64::from(s.utime_s[last])),
        "rchar": s.rchar[last],
        "read_bytes": s.read_bytes[last],
        "wchar": s.wchar[last],
        "write_bytes": s.write_bytes[last],
        "pss": mem.map_or(max_u64(&s.pss_kb), |m| m.peak_pss_bytes / 1024),
        "rss": mem.map_or(max_u64(&s.rss_kb), |m| m.peak_rss_bytes / 1024),
        "swap": mem.map_or(max_u64(&s.swap_kb), |m| m.peak_swap_bytes / 1024),
        "vmem": mem.map_or(max_u64(&s.vmem_kb), |m| m.peak_vmem_bytes / 1024),
        "wtime": round(wall),
    });
    let per_s = |v: u64| if wall > 0.0 { round(v as f64 / wall) } else { 0.0 };
    let avg = json!({
        "nprocs": round(time_mean(s, wall, |i| f64::from(s.nprocs[i]))),
        "nthreads": round(time_mean(s, wall, |i| f64::from(s.nthreads[i]))),
        "rchar": per_s(s.rchar[last]),
        "read_bytes": per_s(s.read_bytes[last]),
        "wchar": per_s(s.wchar[last]),
        "write_bytes": per_s(s.write_bytes[last]),
        "pss": mem.map_or_else(|| round(time_mean(s, wall, |i| s.pss_kb[i] as f64)), |m| round(m.mean_pss_bytes as f64 / 1024.0)),
        "rss": mem.map_or_else(|| round(time_mean(s, wall, |i| s.rss_kb[i] as f64)), |m| round(m.mean_rss_bytes as f64 / 1024.0)),
        "swap": round(time_mean(s, wall, |i| s.swap_kb[i] as f64)),
        "vmem": round(time_mean(s, wall, |i| s.vmem_kb[i] as f64)),
    });
    let units = |avg: bool| -> Map<String, Value> {
        COLUMNS
            .iter()
            .filter(|(c, _)| !avg || !matches!(*c, "stime" | "utime" | "wtime"))
            .map(|&(c, u)| {
                let u = if avg && u == "B" { "B/s" } else { u };
                (c.to_string(), Value::from(u))
            })
            .collect()
    };
    let m = &doc.machine;
    let doc = json!({
        "Max": max,
        "Avg": avg,
        "HW": {
            "cpu": { "ModelName": m.cpu_model, "CPUs": m.logical_cpus },
            "mem": { "MemTotal": m.memory_bytes / 1024 },
        },
        "Units": { "Max": units(false), "Avg": units(true) },
    });
    serde_json::to_string_pretty(&doc).expect("a summary serialises") + "\n"
}
