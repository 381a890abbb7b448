//! Memory in the report. Across the sweep: the tree's peak PSS against the count with the line
//! fitted through it and the memory the job may use, the PSS per worker, and the throughput per
//! GB of PSS (several sets overlaid: threads against copies). Over each run, per point: the
//! tree's PSS and its I/O rate (bytes through read and write calls per second) from each run's
//! time series, one line per run.

use super::figure::{self, Drawn, Figure};
use super::svg::{self, Chart, PALETTE, Series, Style};
use crate::results::{PointResult, RunSeries};

/// A line's points: (x, y).
type Points = Vec<(f64, f64)>;

/// MiB, as the memory charts draw it (and the table writes it).
const MIB: f64 = 1024.0 * 1024.0;

/// The charts of memory across the sweep, every series of every set overlaid; none without
/// memory readings.
pub fn sweep_figures(sets: &[Drawn]) -> Vec<Figure> {
    let (mut pss, mut per_worker, mut per_gb) = (Vec::new(), Vec::new(), Vec::new());
    // Threads against copies overlaid: the axis is the count of either.
    let mut params: Vec<&str> = Vec::new();
    // Bytes per second read per GB in MB/s, as the table writes them.
    let unit = sets.iter().find_map(|d| d.doc.throughput_unit.clone()).unwrap_or_default();
    let (per, unit) = if unit == "B/s" { (1e6, "MB/s".to_string()) } else { (1.0, unit) };
    let mut colour = 0;
    for d in sets {
        let Some(a) = &d.doc.analysis else { continue };
        if !params.contains(&a.axis.param.as_str()) {
            params.push(&a.axis.param);
        }
        for s in &a.series {
            let c = PALETTE[colour % PALETTE.len()].to_string();
            colour += 1;
            let name = [d.label.as_str(), s.label.as_str()]
                .iter()
                .filter(|p| !p.is_empty())
                .copied()
                .collect::<Vec<_>>();
            let name = name.join(" ");
            let line = |suffix: &str,
                        style: Style,
                        points: Vec<(f64, f64)>,
                        errors: Vec<Option<(f64, f64)>>| Series {
                name: [name.as_str(), suffix]
                    .iter()
                    .filter(|p| !p.is_empty())
                    .copied()
                    .collect::<Vec<_>>()
                    .join(" "),
                points,
                errors,
                style,
                colour: c.clone(),
            };
            let stats: Vec<(f64, crate::results::PointStats)> = s
                .points
                .iter()
                .filter_map(|p| Some((p.count, d.doc.points.get(p.index)?.stats())))
                .collect();
            let peak: Vec<(f64, &crate::stats::Summary)> = stats
                .iter()
                .filter_map(|(n, st)| Some((*n, st.peak_pss_bytes.as_ref()?)))
                .collect();
            if peak.is_empty() {
                continue;
            }
            let pts = peak.iter().map(|(n, m)| (*n, m.mean / MIB)).collect();
            let errs = peak.iter().map(|(_, m)| m.ci95.map(|[l, h]| (l / MIB, h / MIB))).collect();
            pss.push(line("measured", Style::Measured, pts, errs));
            if let Some(m) = &s.memory {
                let lo = peak.iter().map(|p| p.0).fold(f64::MAX, f64::min);
                let grid = (0..=20).map(|i| lo + (m.horizon - lo) * f64::from(i) / 20.0);
                pss.push(line(
                    "fitted line",
                    Style::Model,
                    grid.map(|n| (n, m.pss_at(n) / MIB)).collect(),
                    vec![],
                ));
                // The usable memory, drawn when the line comes near it, so that the points stay readable.
                if m.at_horizon_bytes >= 0.5 * m.usable_bytes as f64 {
                    let flat =
                        [lo, m.horizon].iter().map(|&n| (n, m.usable_bytes as f64 / MIB)).collect();
                    pss.push(Series {
                        name: format!("memory the job may use ({})", m.usable_source),
                        points: flat,
                        errors: vec![],
                        style: Style::Reference,
                        colour: "#888".into(),
                    });
                }
            }
            if a.axis.parallel() {
                let pts = peak
                    .iter()
                    .filter(|(n, _)| *n > 0.0)
                    .map(|(n, m)| (*n, m.mean / n / MIB))
                    .collect();
                per_worker.push(line("", Style::Measured, pts, vec![]));
            }
            let pts: Vec<(f64, f64)> = stats
                .iter()
                .filter_map(|(n, st)| {
                    Some((
                        *n,
                        st.throughput.as_ref()?.mean
                            / per
                            / (st.peak_pss_bytes.as_ref()?.mean / 1e9),
                    ))
                })
                .collect();
            per_gb.push(line("", Style::Measured, pts, vec![]));
        }
    }
    let x_label = params.join(" / ");
    let mut out = Vec::new();
    let mut push = |id: &str, title: &str, y: String, series: Vec<Series>, caption: &str| {
        if series.iter().any(|s| s.style == Style::Measured && !s.points.is_empty()) {
            let chart = Chart { title: title.into(), x_label: x_label.clone(), y_label: y, series };
            out.push(Figure {
                id: id.into(),
                caption: caption.into(),
                svg: svg::line_chart(&chart),
            });
        }
    };
    push(
        "peak-pss",
        "Peak PSS of the tree",
        "MiB".into(),
        pss,
        "mean over the runs of each run's peak PSS (bars: 95% interval), the line fitted through every run's peak (fixed part + growth per worker) out to the count judged, and the memory the job may use when the line comes near it",
    );
    push(
        "pss-per-worker",
        "Peak PSS per worker",
        "MiB per worker".into(),
        per_worker,
        "the tree's peak PSS divided by the count: falls when workers share their memory, flat when each needs its own",
    );
    let y = if unit.is_empty() {
        "throughput per GB".to_string()
    } else {
        format!("{unit} per GB of PSS")
    };
    push(
        "throughput-per-gb",
        "Throughput per GB of PSS",
        y,
        per_gb,
        "mean throughput divided by the mean peak PSS in GB: how much work a gigabyte of the node's memory buys at each count (threads against copies: overlay both sweeps with compare)",
    );
    out
}

/// Most points given charts of their runs over time (evenly chosen, first and last included).
const MAX_POINTS: usize = 8;

/// The memory and I/O charts of every chosen point with time series.
pub fn figures(d: &Drawn) -> Vec<Figure> {
    let with: Vec<&PointResult> =
        d.doc.points.iter().filter(|p| p.runs.iter().any(|r| series(r).is_some())).collect();
    let chosen: Vec<&PointResult> = if with.len() <= MAX_POINTS {
        with
    } else {
        let last = with.len() - 1;
        let mut idx: Vec<usize> = (0..MAX_POINTS).map(|i| i * last / (MAX_POINTS - 1)).collect();
        idx.dedup();
        idx.into_iter().map(|i| with[i]).collect()
    };
    let mut out = Vec::new();
    for p in chosen {
        let label = p.label();
        let lines = |f: &dyn Fn(&RunSeries, f64) -> Points| -> Vec<Series> {
            p.runs
                .iter()
                .enumerate()
                .filter_map(|(i, r)| Some((i, series(r)?, r.wall_s)))
                .map(|(i, s, wall)| Series {
                    name: format!("run {}", i + 1),
                    points: f(s, wall),
                    errors: vec![],
                    style: Style::Trace,
                    colour: PALETTE[i % PALETTE.len()].to_string(),
                })
                .collect()
        };
        let mib = |kb: u64| kb as f64 / 1024.0;
        // The last reading held to the run's end, as prmon's files hold it: a line that stopped
        // at 0.1 s of a 1.2 s run looked like a run of 0.2 s.
        let pss = lines(&|s, wall| {
            let mut pts: Vec<(f64, f64)> =
                s.t_s.iter().zip(&s.pss_kb).map(|(&t, &kb)| (f64::from(t), mib(kb))).collect();
            if let Some(&(t, v)) = pts.last().filter(|l| l.0 < wall) {
                pts.push((wall.max(t), v));
            }
            pts
        });
        let io = lines(&|s, _| io_rate(s));
        let safe = figure::file_safe(&label);
        out.push(Figure {
            id: format!("memory-{safe}"),
            caption: format!(
                "{label}: the PSS of the run's whole process tree over each run (pages shared by K processes count 1/K in each){}",
                ends(p)
            ),
            svg: svg::line_chart(&Chart {
                title: format!("Memory over the run: {label}"),
                x_label: "seconds into the run".into(),
                y_label: "PSS (MiB)".into(),
                series: pss,
            }),
        });
        if io.iter().any(|s| s.points.iter().any(|p| p.1 > 0.0)) {
            out.push(Figure {
                id: format!("io-{safe}"),
                caption: format!(
                    "{label}: bytes through read and write calls per second, between readings"
                ),
                svg: svg::line_chart(&Chart {
                    title: format!("I/O rate over the run: {label}"),
                    x_label: "seconds into the run".into(),
                    y_label: "MB/s (read + written)".into(),
                    series: io,
                }),
            });
        }
    }
    out
}

/// `; the last readings came 0.10–0.25 s into runs of 1.18–1.21 s, each held from there to its
/// run's end`, when a run's last reading came before 90% of it.
fn ends(p: &PointResult) -> String {
    let (mut last, mut wall) = (Vec::new(), Vec::new());
    for r in p.runs.iter() {
        if let Some(t) = series(r).and_then(|s| s.t_s.last()) {
            last.push(f64::from(*t));
            wall.push(r.wall_s);
        }
    }
    if last.iter().zip(&wall).all(|(t, w)| *t >= 0.9 * w) {
        return String::new();
    }
    let span = |v: &[f64]| {
        let (lo, hi) =
            v.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), &w| (lo.min(w), hi.max(w)));
        if v.len() == 1 || hi - lo < 0.005 {
            format!("{hi:.2} s")
        } else {
            format!("{lo:.2}–{hi:.2} s")
        }
    };
    let (one, runs) =
        if last.len() == 1 { ("reading came", "a run") } else { ("readings came", "runs") };
    format!(
        "; the last {one} {} into {runs} of {}, each held from there to its run's end",
        span(&last),
        span(&wall)
    )
}

fn series(r: &crate::results::RunRecord) -> Option<&RunSeries> {
    r.threads.as_ref()?.series.as_ref().filter(|s| s.len() >= 2)
}

/// MB/s read and written between consecutive samples, at the later one.
fn io_rate(s: &RunSeries) -> Vec<(f64, f64)> {
    (1..s.len())
        .filter_map(|i| {
            let dt = f64::from(s.t_s[i] - s.t_s[i - 1]);
            let bytes = (s.rchar[i] + s.wchar[i]).saturating_sub(s.rchar[i - 1] + s.wchar[i - 1]);
            (dt > 0.0).then(|| (f64::from(s.t_s[i]), bytes as f64 / dt / 1e6))
        })
        .collect()
}
