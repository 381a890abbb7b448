//! What the models see: for each series (points sharing every parameter but the counted one),
//! the count and the per-run values at each point, from a results document or a CSV table.

use super::AnalysisError;
use crate::results::{Results, value_text};
use serde::Serialize;

/// What the per-run values measure.
#[derive(Clone, Copy, Debug, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Basis {
    /// Throughput: more is better.
    Throughput,
    /// Wall time: less is better.
    Time,
}

/// One point: its count and measured values.
#[derive(Clone, Debug, PartialEq)]
pub struct Obs {
    /// Index of the point in the results (or the row in the table).
    pub index: usize,
    /// The value of the counted parameter.
    pub count: f64,
    /// One value per successful run (throughput or seconds, per `Basis`).
    pub values: Vec<f64>,
    /// Mean %CPU, when known.
    pub cpu_pct: Option<f64>,
}

/// Points that differ only in the counted parameter, by increasing count.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    /// The other parameters, `size=big`, or empty.
    pub label: String,
    /// Points with at least one value.
    pub points: Vec<Obs>,
}

/// Everything the analysis needs.
#[derive(Clone, Debug, PartialEq)]
pub struct Observations {
    /// Name of the counted parameter.
    pub count_name: String,
    /// What the values measure.
    pub basis: Basis,
    /// Unit of throughput values, when known.
    pub unit: Option<String>,
    /// Whether the work grows with the count (weak scaling).
    pub weak: bool,
    /// Whether the count is a number of parallel workers (threads, processes, ranks…).
    pub workers: bool,
    /// The series.
    pub series: Vec<Series>,
}

impl Observations {
    /// The throughput-like figure of a point: mean throughput, or 1 / mean time (× count when weak).
    pub fn rate(&self, count: f64, values: &[f64]) -> f64 {
        let mean = values.iter().sum::<f64>() / values.len() as f64;
        match (self.basis, self.weak) {
            (Basis::Throughput, _) => mean,
            (Basis::Time, false) => 1.0 / mean,
            (Basis::Time, true) => count / mean,
        }
    }
}

/// Names that count parallel workers; other counted parameters (files, size…) are not.
pub fn counts_workers(name: &str) -> bool {
    const WORKERS: [&str; 22] = [
        "threads",
        "thread",
        "nthreads",
        "num_threads",
        "t",
        "j",
        "jobs",
        "cores",
        "cpus",
        "cpu",
        "procs",
        "processes",
        "np",
        "n",
        "ranks",
        "tasks",
        "ntasks",
        "workers",
        "nodes",
        "copies",
        "p",
        "w",
    ];
    let lower = name.to_ascii_lowercase();
    WORKERS.contains(&lower.as_str()) || lower.ends_with("threads") || lower.ends_with("workers")
}

/// Options that shape the observations.
#[derive(Clone, Debug, Default)]
pub struct Choice<'a> {
    /// The counted parameter (default: the plan's, else the first all-numeric one).
    pub scale: Option<&'a str>,
    /// Treat the work as growing with the count.
    pub weak: bool,
    /// Treat the count as a number of workers whatever its name.
    pub workers: bool,
}

/// Builds observations from a results document; `None` when there is no numeric parameter.
pub fn from_results(doc: &Results, choice: &Choice) -> Result<Option<Observations>, AnalysisError> {
    let Some(scale) = super::speedup::choose_scale(doc, choice.scale.or(doc.plan.scale.as_deref()))? else {
        return Ok(None);
    };
    let basis = if doc.points.iter().all(|p| p.stats.throughput.is_some()) { Basis::Throughput } else { Basis::Time };
    let weak = choice.weak
        || doc.plan.work.as_deref().is_some_and(|w| crate::plan::template::placeholders(w).contains(&scale.as_str()));
    let mut series: Vec<Series> = Vec::new();
    for (i, p) in doc.points.iter().enumerate() {
        let Some(count) = p.params.get(&scale).and_then(|v| v.as_f64()) else { continue };
        let label = p
            .params
            .iter()
            .filter(|(n, _)| **n != scale)
            .map(|(n, v)| format!("{n}={}", value_text(v)))
            .collect::<Vec<_>>()
            .join(" ");
        let values: Vec<f64> = p
            .runs
            .iter()
            .filter(|r| r.succeeded())
            .filter_map(|r| match basis {
                Basis::Throughput => r.throughput,
                Basis::Time => Some(r.wall_s),
            })
            .filter(|v| v.is_finite() && *v > 0.0)
            .collect();
        let obs = Obs { index: i, count, values, cpu_pct: p.stats.cpu_pct.as_ref().map(|c| c.mean) };
        match series.iter_mut().find(|s| s.label == label) {
            Some(s) => s.points.push(obs),
            None => series.push(Series { label, points: vec![obs] }),
        }
    }
    for s in &mut series {
        s.points.retain(|p| !p.values.is_empty());
        s.points.sort_by(|a, b| a.count.total_cmp(&b.count));
    }
    Ok(Some(Observations {
        workers: choice.workers || counts_workers(&scale),
        count_name: scale,
        basis,
        unit: if basis == Basis::Throughput { doc.throughput_unit.clone() } else { None },
        weak,
        series,
    }))
}
