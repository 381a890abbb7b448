//! The runs over time, per point: the tree's memory (PSS) and its I/O rate (bytes through read
//! and write calls per second) from each run's time series, one line per run.

use super::charts::{Drawn, Figure};
use super::svg::{self, Chart, PALETTE, Series, Style};
use crate::results::PointResult;
use crate::sample::series::RunSeries;

/// Most points given charts of their runs over time (evenly chosen, first and last included).
const MAX_POINTS: usize = 8;

/// The memory and I/O charts of every chosen point with time series.
pub fn figures(d: &Drawn) -> Vec<Figure> {
    let with: Vec<&PointResult> = d.doc.points.iter().filter(|p| p.runs.iter().any(|r| series(r).is_some())).collect();
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
        let lines = |f: &dyn Fn(&RunSeries) -> Vec<(f64, f64)>| -> Vec<Series> {
            p.runs
                .iter()
                .enumerate()
                .filter_map(|(i, r)| Some((i, series(r)?)))
                .map(|(i, s)| Series {
                    name: format!("run {}", i + 1),
                    points: f(s),
                    errors: vec![],
                    style: Style::Trace,
                    colour: PALETTE[i % PALETTE.len()].to_string(),
                })
                .collect()
        };
        let mib = |kb: u64| kb as f64 / 1024.0;
        let pss = lines(&|s| s.t_s.iter().zip(&s.pss_kb).map(|(&t, &kb)| (f64::from(t), mib(kb))).collect());
        let io = lines(&|s| io_rate(s));
        let safe = super::charts::file_safe(&label);
        out.push(Figure {
            id: format!("memory-{safe}"),
            caption: format!(
                "{label}: the PSS of the run's whole process tree over each run (pages shared by K processes count 1/K in each)"
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
                caption: format!("{label}: bytes through read and write calls per second, between readings"),
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

fn series(r: &crate::exec::RunRecord) -> Option<&RunSeries> {
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
