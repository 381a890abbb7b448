//! One figure per sweep along a series of comparable sweeps: the time (or throughput) at each
//! count, the efficiency at the largest count, the serial fraction, USL's σ and κ, the best count
//! and the first finding. Each value comes with the per-run values it stands for, so that a step
//! can be tested on the runs themselves: wall times, and the efficiency and Karp–Flatt serial
//! fraction of each run at the largest count against the mean at the baseline.

use super::record::{PointRow, Sweep};
use crate::analysis::count_label;

/// A figure to follow over the history.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Figure {
    /// Wall time (or throughput, for tables without times) at a count, the median of the runs;
    /// `None` = the largest.
    Time(Option<f64>),
    /// Efficiency at the largest count: the median of each run's against the baseline's median.
    Efficiency,
    /// Amdahl's serial fraction (Gustafson's under weak scaling).
    SerialFraction,
    /// USL's σ (contention).
    Sigma,
    /// USL's κ (coherency).
    Kappa,
    /// The count with the highest rate.
    Best,
    /// The kind of the first finding.
    Finding,
}

/// Which way is worse.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Worse {
    /// More is worse (time, serial fraction).
    Higher,
    /// Less is worse (efficiency, throughput).
    Lower,
    /// Neither: shown, never judged.
    Neither,
}

/// One sweep's value of a figure.
#[derive(Clone, Debug)]
pub struct Entry {
    /// Position of the sweep in the series.
    pub sweep: usize,
    /// The value, when the sweep has one.
    pub value: Option<f64>,
    /// Its interval (95%), when known.
    pub interval: Option<[f64; 2]>,
    /// The values of the runs behind it.
    pub samples: Vec<f64>,
    /// Text for a figure that is not a number (the first finding).
    pub text: Option<String>,
}

/// A figure's values over a series of sweeps.
#[derive(Clone, Debug)]
pub struct Track {
    /// `time at threads=8`, `efficiency at threads=8 [size=big]`.
    pub name: String,
    /// Which way is worse.
    pub worse: Worse,
    /// How values are shown: `s`, `%`, `ops/s`, or empty.
    pub unit: &'static str,
    /// One per sweep of the series.
    pub entries: Vec<Entry>,
    /// For the serial fraction: the count its change is felt at, as a relative change of time there.
    pub felt_at: Option<f64>,
}

impl Track {
    /// A value as shown: `1.23 s`, `94%`, `0.8%`.
    pub fn show(&self, v: f64) -> String {
        match self.unit {
            "s" => format!("{} s", crate::report::format::num(v)),
            "%" => format!("{:.1}%", v * 100.0),
            "" => crate::report::model::count(v),
            u => format!("{v:.4} {u}"),
        }
    }
}

/// The name of a figure as typed on the command line.
pub fn parse(name: &str, at: Option<f64>) -> Result<Figure, String> {
    Ok(match name {
        "time" | "throughput" => Figure::Time(at),
        "efficiency" => Figure::Efficiency,
        "serial-fraction" | "serial" => Figure::SerialFraction,
        "sigma" => Figure::Sigma,
        "kappa" => Figure::Kappa,
        "best" => Figure::Best,
        "finding" => Figure::Finding,
        other => {
            return Err(format!(
                "{other}: the figures are time, efficiency, serial-fraction, sigma, kappa, best and finding"
            ));
        }
    })
}

/// The sub-series (other parameters) of a series of sweeps, in the first sweep's order.
fn subseries(sweeps: &[Sweep]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for s in sweeps {
        for p in &s.points {
            if !out.contains(&p.series) {
                out.push(p.series.clone());
            }
        }
    }
    out
}

/// The per-run time-like values of a point (wall times, or 1/throughput) and whether they are
/// times.
fn timelike(p: &PointRow) -> (Vec<f64>, bool) {
    let walls = p.walls();
    if !walls.is_empty() {
        return (walls, true);
    }
    let tp: Vec<f64> = p.runs.iter().filter(|r| r.ok).filter_map(|r| r.throughput).filter(|t| *t > 0.0).collect();
    (tp.iter().map(|t| 1.0 / t).collect(), false)
}

fn mean(v: &[f64]) -> Option<f64> {
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// The median: a sweep's level, which one disturbed run of three does not move.
fn median(v: &[f64]) -> Option<f64> {
    (!v.is_empty()).then(|| super::steps::median(&mut v.to_vec()))
}

/// The counts of a sub-series, ascending.
fn counts(sweeps: &[Sweep], sub: &str) -> Vec<f64> {
    let mut c: Vec<f64> =
        sweeps.iter().flat_map(|s| &s.points).filter(|p| p.series == sub).filter_map(|p| p.count).collect();
    c.sort_by(f64::total_cmp);
    c.dedup();
    c
}

fn point<'a>(s: &'a Sweep, sub: &str, count: f64) -> Option<&'a PointRow> {
    s.points.iter().find(|p| p.series == sub && p.count == Some(count))
}

/// The tracks of `figure` over `sweeps` (oldest first, points filled): one per sub-series.
pub fn tracks(sweeps: &[Sweep], figure: Figure, axis: &str) -> Vec<Track> {
    let subs = subseries(sweeps);
    subs.iter().filter_map(|sub| track(sweeps, figure, axis, sub)).collect()
}

fn track(sweeps: &[Sweep], figure: Figure, axis: &str, sub: &str) -> Option<Track> {
    let counts = counts(sweeps, sub);
    let suffix = if sub.is_empty() { String::new() } else { format!(" [{sub}]") };
    let largest = *counts.last()?;
    let baseline = counts[0];
    let at = |c: f64| count_label(c, axis);
    let entries = |f: &dyn Fn(&Sweep) -> Entry| sweeps.iter().map(f).collect::<Vec<_>>();
    let empty = |i: usize| Entry { sweep: i, value: None, interval: None, samples: Vec::new(), text: None };
    let model = |s: &Sweep| s.models.iter().find(|m| m.series == sub).cloned();
    let index = |s: &Sweep| sweeps.iter().position(|x| std::ptr::eq(x, s)).unwrap_or(0);
    // Per-run values at the largest count against the mean at the baseline.
    let per_run = |s: &Sweep, f: &dyn Fn(f64, f64) -> f64| -> Vec<f64> {
        let (Some(b), Some(l)) = (point(s, sub, baseline), point(s, sub, largest)) else { return Vec::new() };
        let Some(tb) = median(&timelike(b).0) else { return Vec::new() };
        timelike(l).0.iter().map(|t| f(tb / t, largest / baseline)).collect()
    };
    let t = match figure {
        Figure::Time(c) => {
            let c = c.unwrap_or(largest);
            let times = sweeps.iter().filter_map(|s| point(s, sub, c)).any(|p| !p.walls().is_empty());
            Track {
                name: format!("{} at {}{suffix}", if times { "time" } else { "throughput" }, at(c)),
                worse: if times { Worse::Higher } else { Worse::Lower },
                unit: if times { "s" } else { "per s" },
                felt_at: None,
                entries: entries(&|s| {
                    let Some(p) = point(s, sub, c) else { return empty(index(s)) };
                    let (v, is_time) = timelike(p);
                    let v: Vec<f64> = if is_time { v } else { v.iter().map(|t| 1.0 / t).collect() };
                    let summary = crate::stats::Summary::of(&v);
                    Entry {
                        sweep: index(s),
                        value: summary.as_ref().map(|s| s.median),
                        interval: summary.and_then(|s| s.ci95),
                        samples: v,
                        text: None,
                    }
                }),
            }
        }
        Figure::Efficiency => Track {
            name: format!("efficiency at {}{suffix}", at(largest)),
            worse: Worse::Lower,
            unit: "%",
            felt_at: None,
            entries: entries(&|s| {
                let samples = per_run(s, &|speedup, p| speedup / p);
                Entry { sweep: index(s), value: median(&samples), interval: None, samples, text: None }
            }),
        },
        Figure::SerialFraction => Track {
            name: format!("serial fraction{suffix}"),
            worse: Worse::Higher,
            unit: "%",
            felt_at: Some(largest / baseline),
            entries: entries(&|s| {
                let samples = per_run(s, &|speedup, p| (1.0 / speedup - 1.0 / p) / (1.0 - 1.0 / p));
                let m = model(s).and_then(|m| m.serial_fraction);
                Entry {
                    sweep: index(s),
                    value: m.map(|m| m.0).or(mean(&samples)),
                    interval: m.and_then(|m| m.1),
                    samples,
                    text: None,
                }
            }),
        },
        Figure::Sigma | Figure::Kappa | Figure::Best => {
            let (name, pick): (&str, fn(&super::record::ModelRow) -> Option<f64>) = match figure {
                Figure::Sigma => ("USL σ (contention)", |m| m.usl_sigma),
                Figure::Kappa => ("USL κ (coherency)", |m| m.usl_kappa),
                _ => ("best count", |m| m.best_count),
            };
            Track {
                name: format!("{name}{suffix}"),
                worse: Worse::Neither,
                unit: if figure == Figure::Best { "" } else { "%" },
                felt_at: None,
                entries: entries(&|s| Entry {
                    sweep: index(s),
                    value: model(s).as_ref().and_then(pick),
                    interval: None,
                    samples: Vec::new(),
                    text: None,
                }),
            }
        }
        Figure::Finding => Track {
            name: "first finding".into(),
            worse: Worse::Neither,
            unit: "",
            felt_at: None,
            entries: entries(&|s| Entry {
                sweep: index(s),
                value: None,
                interval: None,
                samples: Vec::new(),
                text: s.findings.first().map(|f| format!("{} ({})", f.kind, f.severity)),
            }),
        },
    };
    Some(t)
}
