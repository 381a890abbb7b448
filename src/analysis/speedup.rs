//! Per point, against a baseline point of its series: speed-up (with a bootstrap interval over
//! the runs), efficiency, and the Karp–Flatt experimentally determined serial fraction — which is
//! also Amdahl's law solved at that one point ("as if 99.4% parallel").

use super::AnalysisError;
use super::observations::{Observations, Series};
use crate::results::Results;
use crate::stats::{Rng, quantile};
use serde::Serialize;

/// Resamples for a speed-up's interval.
const RESAMPLES: usize = 1000;

/// Scaling figures of one point.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct PointScaling {
    /// Index of the point in the results (row of a table).
    pub index: usize,
    /// Value of the counted parameter.
    pub count: f64,
    /// Runs behind the figures.
    pub runs: usize,
    /// Throughput-like rate: throughput, or 1/time (count/time under weak scaling).
    pub rate: f64,
    /// Rate ÷ baseline rate (for time: baseline time ÷ time).
    pub speedup: f64,
    /// 95% bootstrap interval of the speed-up; absent when this point or the baseline has one run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub speedup_ci95: Option<[f64; 2]>,
    /// Speed-up × baseline count ÷ count; only when the count is a number of workers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub efficiency: Option<f64>,
    /// Karp–Flatt serial fraction e = (1/S − 1/p) / (1 − 1/p), p = count ÷ baseline count.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub karp_flatt: Option<f64>,
    /// Amdahl's law at this point alone: 100 × (1 − e), "as if X% parallel".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub amdahl_parallel_pct: Option<f64>,
    /// Mean %CPU, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_pct: Option<f64>,
}

/// Picks the counted parameter: the asked one, else the first whose values are all numbers.
pub fn choose_scale(doc: &Results, asked: Option<&str>) -> Result<Option<String>, AnalysisError> {
    let numeric = |name: &str| doc.points.iter().all(|p| p.params.get(name).is_some_and(|v| v.is_number()));
    if let Some(name) = asked {
        if !doc.plan.params.iter().any(|p| p.name == name) {
            let names: Vec<&str> = doc.plan.params.iter().map(|p| p.name.as_str()).collect();
            return Err(AnalysisError(format!("--scale {name}: no such parameter (parameters: {})", names.join(", "))));
        }
        if !numeric(name) {
            return Err(AnalysisError(format!(
                "--scale {name}: its values are not all numbers, so there is nothing to count"
            )));
        }
        return Ok(Some(name.to_string()));
    }
    Ok(doc.plan.params.iter().map(|p| p.name.as_str()).find(|n| numeric(n)).map(String::from))
}

/// Reads `--baseline` (`16` or `threads=16`) and checks that some series measured that count.
pub fn baseline_value(obs: &Observations, text: &str) -> Result<f64, AnalysisError> {
    let scale = &obs.count_name;
    let value = match text.split_once('=') {
        Some((name, v)) if name == scale => v,
        Some((name, _)) => {
            return Err(AnalysisError(format!(
                "--baseline {text}: the counted parameter is {scale}, not {name} (or choose it with --scale {name})"
            )));
        }
        None => text,
    };
    let v: f64 =
        value.trim().parse().map_err(|_| AnalysisError(format!("--baseline {text}: '{value}' is not a number")))?;
    let counts: Vec<f64> = obs.series.iter().flat_map(|s| s.points.iter().map(|p| p.count)).collect();
    if !counts.contains(&v) {
        let mut shown: Vec<String> = counts.iter().map(|c| c.to_string()).collect();
        shown.dedup();
        return Err(AnalysisError(format!(
            "--baseline {text}: {scale}={value} was not measured (values: {})",
            shown.join(", ")
        )));
    }
    Ok(v)
}

/// The baseline point of a series: the one at `wanted`, else the smallest count.
pub fn baseline_of(series: &Series, wanted: Option<f64>) -> Option<usize> {
    match wanted {
        Some(v) => series.points.iter().position(|p| p.count == v),
        None => (!series.points.is_empty()).then_some(0),
    }
}

/// Scaling figures of every point of a series against its baseline point `base`.
pub fn per_point(obs: &Observations, series: &Series, base: usize, rng: &mut Rng) -> Vec<PointScaling> {
    let b = &series.points[base];
    let base_rate = obs.rate(b.count, &b.values);
    series
        .points
        .iter()
        .map(|p| {
            let rate = obs.rate(p.count, &p.values);
            let speedup = rate / base_rate;
            let speedup_ci95 = (p.values.len() > 1 && b.values.len() > 1 && p.index != b.index).then(|| {
                let mut draws: Vec<f64> = (0..RESAMPLES)
                    .map(|_| {
                        obs.rate(p.count, &resample(&p.values, rng)) / obs.rate(b.count, &resample(&b.values, rng))
                    })
                    .collect();
                draws.sort_by(f64::total_cmp);
                [quantile(&draws, 0.025), quantile(&draws, 0.975)]
            });
            let rel = p.count / b.count;
            let efficiency = obs.workers.then(|| speedup / rel);
            let karp_flatt =
                (obs.workers && !obs.weak && rel > 1.0).then(|| (1.0 / speedup - 1.0 / rel) / (1.0 - 1.0 / rel));
            PointScaling {
                index: p.index,
                count: p.count,
                runs: p.values.len(),
                rate,
                speedup,
                speedup_ci95,
                efficiency,
                karp_flatt,
                // Outside [0, 1] (a slowdown, or superlinear speed-up) no parallel fraction explains it.
                amdahl_parallel_pct: karp_flatt.filter(|e| (0.0..=1.0).contains(e)).map(|e| 100.0 * (1.0 - e)),
                cpu_pct: p.cpu_pct,
            }
        })
        .collect()
}

/// Draws `values.len()` values with replacement.
pub fn resample(values: &[f64], rng: &mut Rng) -> Vec<f64> {
    (0..values.len()).map(|_| values[rng.below(values.len())]).collect()
}
