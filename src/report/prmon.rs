//! Each run's time series in the files production monitors write (HSF's prmon): a tab-separated
//! table with prmon's column names and units, and a JSON summary with its `Max`, `Avg`, `HW` and
//! `Units` keys, so that prmon's plotting script and the pipelines that ingest its summaries read
//! them unchanged. Columns come in prmon's order (its monitors by name: counts, CPU, I/O, memory,
//! wall time); the network columns, which it measures per device and not per process, are left
//! out, as prmon leaves out a monitor it does not run.

use super::figure::file_safe;
use crate::results::{Results, RunMemory, RunSeries, ThreadReport};
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
    /// Its user and system CPU seconds as `wait4` gave them at its end.
    user_s: f64,
    sys_s: f64,
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
            let mut push = |name: String,
                            (wall_s, user_s, sys_s): (f64, f64, f64),
                            t: Option<&ThreadReport>| {
                let Some(t) = t else { return };
                let Some(series) = t.series.as_ref().filter(|s| !s.is_empty()) else { return };
                let w = Watched {
                    started_unix_s: r.started_unix_s,
                    wall_s,
                    user_s,
                    sys_s,
                    memory: t.memory,
                    series,
                };
                out.push(Export { name, tsv: table(&w), json: summary(doc, &w) });
            };
            if r.ranks.is_empty() {
                push(
                    format!("{label}-run{}", i + 1),
                    (r.wall_s, r.user_s, r.sys_s),
                    r.threads.as_deref(),
                );
            }
            for part in &r.ranks {
                let totals = (part.wall_s, part.user_s, part.sys_s);
                push(
                    format!("{label}-run{}-rank{}", i + 1, part.rank),
                    totals,
                    part.threads.as_ref(),
                );
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

/// The table: `Time` (Unix seconds, whole as prmon's), then the columns; a row per reading, and
/// a last one at the run's end with its CPU totals from `wait4` (the memory, I/O and counts of the
/// last reading held), so that the CPU a short run used after its last reading is not lost.
fn table(w: &Watched) -> String {
    let s = w.series;
    let mut out = String::from("Time");
    for (c, _) in COLUMNS {
        out.push('\t');
        out.push_str(c);
    }
    out.push('\n');
    let last = s.len() - 1;
    let end = (w.wall_s > f64::from(s.t_s[last])).then_some(w.wall_s);
    for (i, at) in (0..s.len()).map(|i| (i, None)).chain(end.map(|e| (last, Some(e)))) {
        let t = at.unwrap_or(f64::from(s.t_s[i]));
        let _ = write!(out, "{}", (w.started_unix_s + t).floor() as u64);
        for (c, _) in COLUMNS {
            out.push('\t');
            match (at, c) {
                (Some(_), "utime") => out.push_str(&format!("{:.2}", w.user_s)),
                (Some(_), "stime") => out.push_str(&format!("{:.2}", w.sys_s)),
                (Some(e), "wtime") => out.push_str(&format!("{e:.3}")),
                _ => out.push_str(&cell(s, c, i)),
            }
        }
        out.push('\n');
    }
    out
}

/// The mean of a column over the run, each sample held until the next, the last until `end_s`.
fn time_mean(s: &RunSeries, end_s: f64, v: impl Fn(usize) -> f64) -> f64 {
    let n = s.len();
    let until =
        |i: usize| if i + 1 < n { f64::from(s.t_s[i + 1]) } else { end_s.max(f64::from(s.t_s[i])) };
    let span = until(n - 1) - f64::from(s.t_s[0]);
    if span <= 0.0 {
        return (0..n).map(&v).sum::<f64>() / n as f64;
    }
    (0..n).map(|i| v(i) * (until(i) - f64::from(s.t_s[i]))).sum::<f64>() / span
}

/// The summary: `Max` of every column (CPU and wall time the run's own totals, from `wait4` and the
/// wall clock), `Avg` of memory and counts over time and of I/O per second of the run (prmon's
/// meanings), the machine in `HW` (`ThreadsPerCore` where the cores were counted; sockets are not
/// recorded), `Units`, and which tool wrote it, in the form of prmon's own `prmon.Version`.
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
        "stime": round(w.sys_s),
        "utime": round(w.user_s),
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
    let mut cpu = json!({ "ModelName": m.cpu_model, "CPUs": m.logical_cpus });
    if m.physical_cores > 0 && m.logical_cpus.is_multiple_of(m.physical_cores) {
        cpu["ThreadsPerCore"] = json!(m.logical_cpus / m.physical_cores);
    }
    let doc = json!({
        "Max": max,
        "Avg": avg,
        "HW": {
            "cpu": cpu,
            "mem": { "MemTotal": m.memory_bytes / 1024 },
        },
        "Units": { "Max": units(false), "Avg": units(true) },
        "scalescope": { "Version": doc.scalescope_version },
    });
    serde_json::to_string_pretty(&doc).expect("a summary serialises") + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::RunRecord;

    /// A run of 1.75 s whose last reading came at 0.856 s, when its threads had used 1.35 s of
    /// user time of the 2.86 s `wait4` gave at its end.
    fn short_run() -> Results {
        let plan = crate::plan::build(
            &crate::plan::Request {
                command: vec!["prog".into(), "{threads}".into()],
                params: vec!["threads=2".into()],
                ..Default::default()
            },
            2,
        )
        .unwrap();
        let mut doc = Results::new(plan, vec![]).unwrap();
        doc.machine.logical_cpus = 8;
        doc.machine.physical_cores = 4;
        let series = RunSeries {
            t_s: vec![0.0, 0.856],
            utime_s: vec![0.0, 1.35],
            stime_s: vec![0.0, 0.1],
            pss_kb: vec![1000, 5000],
            rss_kb: vec![1200, 5200],
            swap_kb: vec![0, 0],
            vmem_kb: vec![9000, 9000],
            rchar: vec![0, 10],
            wchar: vec![0, 20],
            read_bytes: vec![0, 0],
            write_bytes: vec![0, 0],
            nprocs: vec![1, 1],
            nthreads: vec![2, 2],
        };
        let threads = ThreadReport { series: Some(series), ..Default::default() };
        doc.points[0].runs.push(RunRecord {
            wall_s: 1.75,
            user_s: 2.86,
            sys_s: 0.2,
            started_unix_s: 1000.5,
            exit_code: Some(0),
            threads: Some(Box::new(threads)),
            ..Default::default()
        });
        doc
    }

    #[test]
    fn the_totals_are_the_runs_own_and_the_table_ends_at_the_runs_end() {
        let e = exports(&short_run()).pop().unwrap();
        let json: Value = serde_json::from_str(&e.json).unwrap();
        assert_eq!(
            (json["Max"]["utime"].as_f64(), json["Max"]["stime"].as_f64()),
            (Some(2.86), Some(0.2)),
            "{json}"
        );
        assert_eq!(json["Max"]["wtime"].as_f64(), Some(1.75));
        assert_eq!(json["HW"]["cpu"]["ThreadsPerCore"], 2);
        assert_eq!(json["scalescope"]["Version"], env!("CARGO_PKG_VERSION"));
        let rows: Vec<Vec<&str>> = e.tsv.lines().map(|l| l.split('\t').collect()).collect();
        let col = |name: &str| rows[0].iter().position(|c| *c == name).unwrap();
        let end = rows.last().unwrap();
        assert_eq!(rows.len(), 4, "the header, two readings and the end: {}", e.tsv);
        assert_eq!(
            (end[0], end[col("wtime")], end[col("utime")], end[col("stime")]),
            ("1002", "1.750", "2.86", "0.20")
        );
        assert_eq!((end[col("pss")], end[col("nthreads")]), ("5000", "2"), "the last reading held");
    }
}
