//! Speed-up against a baseline point and efficiency along the counted parameter.
//!
//! Points are grouped into series that share every parameter but the counted one; each series is
//! compared with its own baseline point (the `--baseline` value, else its smallest count).
//! Speed-up comes from throughput when every point has one, else from wall time.

use super::AnalysisError;
use crate::results::{Results, value_text};
use serde::Serialize;

/// What speed-up was computed from.
#[derive(Clone, Copy, Debug, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Basis {
    /// Ratio of mean throughputs.
    Throughput,
    /// Ratio of mean wall times (baseline / point).
    Time,
}

/// Speed-up and efficiency of one point.
#[derive(Clone, Debug, Serialize, PartialEq, Default)]
pub struct PointSpeedup {
    /// Value of the counted parameter, when numeric.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub count: Option<f64>,
    /// Index of the baseline point this one is compared with.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub baseline: Option<usize>,
    /// Baseline time ÷ this time (or this throughput ÷ baseline throughput).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub speedup: Option<f64>,
    /// Speed-up × baseline count ÷ this count: 1 is perfect scaling.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub efficiency: Option<f64>,
}

/// Speed-ups of every point of a sweep.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Speedups {
    /// The counted parameter, when there is a numeric one.
    pub scale: Option<String>,
    /// What speed-up was computed from.
    pub basis: Basis,
    /// One entry per point, in grid order.
    pub points: Vec<PointSpeedup>,
}

/// Computes speed-ups. `scale` names the counted parameter (default: the plan's, else the first
/// all-numeric one); `baseline` is its baseline value, as `16` or `threads=16`.
pub fn speedups(doc: &Results, scale: Option<&str>, baseline: Option<&str>) -> Result<Speedups, AnalysisError> {
    let scale = choose_scale(doc, scale.or(doc.plan.scale.as_deref()))?;
    let baseline = baseline.or(doc.plan.baseline.as_deref());
    let basis = if doc.points.iter().all(|p| p.stats.throughput.is_some()) { Basis::Throughput } else { Basis::Time };
    let figure = |i: usize| -> Option<f64> {
        let s = &doc.points[i].stats;
        match basis {
            Basis::Throughput => s.throughput.as_ref().map(|t| t.mean),
            Basis::Time => s.wall_s.as_ref().map(|t| t.mean),
        }
    };
    let count = |i: usize| -> Option<f64> {
        let name = scale.as_ref()?;
        doc.points[i].params.get(name)?.as_f64()
    };
    let wanted = match (&scale, baseline) {
        (Some(name), Some(b)) => Some(baseline_value(doc, name, b)?),
        (None, Some(b)) => {
            return Err(AnalysisError(format!("--baseline {b} needs a numeric parameter to count along")));
        }
        _ => None,
    };
    let mut out: Vec<PointSpeedup> =
        (0..doc.points.len()).map(|i| PointSpeedup { count: count(i), ..Default::default() }).collect();
    for series in series(doc, scale.as_deref()) {
        let base = match wanted {
            Some(v) => series.iter().copied().find(|&i| count(i) == Some(v)),
            None => series
                .iter()
                .copied()
                .filter(|&i| figure(i).is_some())
                .min_by(|&a, &b| count(a).unwrap_or(0.0).total_cmp(&count(b).unwrap_or(0.0))),
        };
        let Some(base) = base else { continue };
        for &i in &series {
            let (Some(f), Some(fb)) = (figure(i), figure(base)) else { continue };
            let speedup = match basis {
                Basis::Throughput => f / fb,
                Basis::Time => fb / f,
            };
            if !speedup.is_finite() {
                continue;
            }
            out[i].baseline = Some(base);
            out[i].speedup = Some(speedup);
            if let (Some(n), Some(nb)) = (count(i), count(base))
                && n > 0.0
                && nb > 0.0
            {
                out[i].efficiency = Some(speedup * nb / n);
            }
        }
    }
    Ok(Speedups { scale, basis, points: out })
}

fn choose_scale(doc: &Results, asked: Option<&str>) -> Result<Option<String>, AnalysisError> {
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

fn baseline_value(doc: &Results, scale: &str, text: &str) -> Result<f64, AnalysisError> {
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
    if !doc.points.iter().any(|p| p.params.get(scale).and_then(|x| x.as_f64()) == Some(v)) {
        let values: Vec<String> = doc.points.iter().filter_map(|p| p.params.get(scale)).map(value_text).collect();
        let mut values = values;
        values.dedup();
        return Err(AnalysisError(format!(
            "--baseline {text}: {scale}={value} was not measured (values: {})",
            values.join(", ")
        )));
    }
    Ok(v)
}

/// Groups point indices by the values of every parameter except `scale`.
fn series(doc: &Results, scale: Option<&str>) -> Vec<Vec<usize>> {
    let mut groups: Vec<(Vec<String>, Vec<usize>)> = Vec::new();
    for (i, p) in doc.points.iter().enumerate() {
        let key: Vec<String> =
            p.params.iter().filter(|(n, _)| Some(n.as_str()) != scale).map(|(_, v)| value_text(v)).collect();
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, members)) => members.push(i),
            None => groups.push((key, vec![i])),
        }
    }
    groups.into_iter().map(|(_, m)| m).collect()
}
