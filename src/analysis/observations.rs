//! What the models see: for each series (points sharing every parameter but the counted one),
//! the count and the per-run values at each point, from a results document or a CSV table.

use crate::plan::{Axis, Order};
use crate::results::analysis::Basis;
use crate::results::{Results, value_text};

/// One point: its count and measured values.
#[derive(Clone, Debug, PartialEq)]
pub struct Obs {
    /// Index of the point in the results (or the row in the table).
    pub index: usize,
    /// The value of the counted parameter.
    pub count: f64,
    /// One value per successful run (throughput or seconds, per `Basis`).
    pub values: Vec<f64>,
    /// The interleaved round of each value, when the runs were taken in rounds (else empty).
    pub rounds: Vec<u32>,
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
    /// The counted parameter, what it counts and whether the work grows with it.
    pub axis: Axis,
    /// What the values measure.
    pub basis: Basis,
    /// Unit of throughput values, when known.
    pub unit: Option<String>,
    /// The series.
    pub series: Vec<Series>,
}

impl Observations {
    /// The throughput-like figure of a point: mean throughput, or 1 / mean time (× count when weak).
    pub fn rate(&self, count: f64, values: &[f64]) -> f64 {
        let mean = values.iter().sum::<f64>() / values.len() as f64;
        match (self.basis, self.axis.weak()) {
            (Basis::Throughput, _) => mean,
            (Basis::Time, false) => 1.0 / mean,
            (Basis::Time, true) => count / mean,
        }
    }
}

/// Builds observations from a results document along `axis`.
pub fn from_results(doc: &Results, axis: &Axis) -> Observations {
    let scale = &axis.param;
    let basis = if doc.points.iter().all(|p| p.stats().throughput.is_some()) {
        Basis::Throughput
    } else {
        Basis::Time
    };
    let mut series: Vec<Series> = Vec::new();
    for (i, p) in doc.points.iter().enumerate() {
        let Some(count) = p.params.get(scale).and_then(|v| v.as_f64()) else { continue };
        let label = p
            .params
            .iter()
            .filter(|(n, _)| *n != scale)
            .map(|(n, v)| format!("{n}={}", value_text(v)))
            .collect::<Vec<_>>()
            .join(" ");
        // Runs written before rounds were recorded: in interleaved order, run k of each point was
        // taken in round k.
        let interleaved = doc.plan.order != Order::Sequential;
        let (values, rounds): (Vec<f64>, Vec<Option<u32>>) = p
            .runs
            .iter()
            .filter(|r| r.counted())
            .filter_map(|r| {
                let v = match basis {
                    Basis::Throughput => r.throughput,
                    Basis::Time => Some(r.wall_s),
                }?;
                (v.is_finite() && v > 0.0)
                    .then_some((v, r.round.or(interleaved.then_some(r.index))))
            })
            .unzip();
        let rounds = rounds.into_iter().collect::<Option<Vec<u32>>>().unwrap_or_default();
        let obs =
            Obs { index: i, count, values, rounds, cpu_pct: p.stats().cpu_pct.map(|c| c.mean) };
        match series.iter_mut().find(|s| s.label == label) {
            Some(s) => s.points.push(obs),
            None => series.push(Series { label, points: vec![obs] }),
        }
    }
    for s in &mut series {
        s.points.retain(|p| !p.values.is_empty());
        s.points.sort_by(|a, b| a.count.total_cmp(&b.count));
    }
    Observations {
        axis: axis.clone(),
        basis,
        unit: if basis == Basis::Throughput { doc.throughput_unit.clone() } else { None },
        series,
    }
}
