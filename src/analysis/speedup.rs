//! Per point, against a baseline point of its series: speed-up (with a bootstrap interval over
//! the runs), efficiency, and the Karp–Flatt experimentally determined serial fraction — which is
//! also Amdahl's law solved at that one point ("as if 99.4% parallel").

use super::AnalysisError;
use super::observations::{Observations, Series};
use super::ratio;
use crate::results::analysis::PointScaling;
use crate::stats::sequential::Confidence;
use crate::stats::{Rng, quantile, widen};

/// Resamples for a speed-up's interval.
const RESAMPLES: usize = 1000;

/// Reads `--baseline` (`16` or `threads=16`) and checks that some series measured that count.
pub fn baseline_value(obs: &Observations, text: &str) -> Result<f64, AnalysisError> {
    let scale = &obs.axis.param;
    let value = match text.split_once('=') {
        Some((name, v)) if name == scale => v,
        Some((name, _)) => {
            return Err(AnalysisError::BaselineParameter {
                given: text.into(),
                scale: scale.clone(),
                name: name.into(),
            });
        }
        None => text,
    };
    let v: f64 = value.trim().parse().map_err(|_| AnalysisError::BaselineNotNumber {
        given: text.into(),
        value: value.into(),
    })?;
    let counts: Vec<f64> =
        obs.series.iter().flat_map(|s| s.points.iter().map(|p| p.count)).collect();
    if !counts.contains(&v) {
        let mut shown: Vec<String> = counts.iter().map(|c| c.to_string()).collect();
        shown.dedup();
        return Err(AnalysisError::BaselineNotMeasured {
            given: text.into(),
            scale: scale.clone(),
            value: value.into(),
            measured: shown.join(", "),
        });
    }
    Ok(v)
}

/// The baseline point of a series: the one at `wanted`, else the smallest count — above 0 when
/// the count is a number of workers (0 workers is a program's word for "none" or "automatic").
pub fn baseline_of(series: &Series, wanted: Option<f64>, parallel: bool) -> Option<usize> {
    match wanted {
        Some(v) => series.points.iter().position(|p| p.count == v),
        None if parallel => series.points.iter().position(|p| p.count > 0.0),
        None => (!series.points.is_empty()).then_some(0),
    }
}

/// Scaling figures of every point of a series against its baseline point `base`, with intervals
/// as sure as `conf` asks: from the per-round ratios where the runs were paired in interleaved
/// rounds, else a bootstrap over the runs widened to Welch's delta method.
pub fn per_point(
    obs: &Observations,
    series: &Series,
    base: usize,
    conf: Confidence,
    rng: &mut Rng,
) -> Vec<PointScaling> {
    let b = &series.points[base];
    let base_rate = obs.rate(b.count, &b.values);
    series
        .points
        .iter()
        .map(|p| {
            let rate = obs.rate(p.count, &p.values);
            let speedup = rate / base_rate;
            let judged = (p.values.len() > 1 && b.values.len() > 1 && p.index != b.index)
                .then(|| ratio::log_interval(obs, b, p, conf))
                .flatten();
            let paired_rounds = judged.filter(|l| l.paired).map(|l| l.n as u32);
            let speedup_ci95 = (p.values.len() > 1 && b.values.len() > 1 && p.index != b.index)
                .then(|| match judged {
                    Some(l) if l.paired => l.interval(),
                    _ => {
                        let mut draws: Vec<f64> = (0..RESAMPLES)
                            .map(|_| {
                                obs.rate(p.count, &resample(&p.values, rng))
                                    / obs.rate(b.count, &resample(&b.values, rng))
                            })
                            .collect();
                        draws.sort_by(f64::total_cmp);
                        let boot = [
                            quantile(&draws, conf.alpha / 2.0),
                            quantile(&draws, 1.0 - conf.alpha / 2.0),
                        ];
                        widen(boot, speedup, judged.map(|l| l.half))
                    }
                });
            let rel = p.count / b.count;
            let parallel = obs.axis.parallel();
            // A count measured alone is its own baseline: no efficiency (100% would say it scales).
            let alone = series.points.len() < 2;
            let efficiency = (parallel && rel > 0.0 && !alone).then(|| speedup / rel);
            let karp_flatt = (parallel && !obs.axis.weak() && rel > 1.0)
                .then(|| (1.0 / speedup - 1.0 / rel) / (1.0 - 1.0 / rel));
            PointScaling {
                index: p.index,
                count: p.count,
                runs: p.values.len(),
                rate,
                speedup,
                speedup_ci95,
                paired_rounds,
                efficiency,
                karp_flatt,
                // Outside [0, 1] (a slowdown, or superlinear speed-up) no parallel fraction explains it.
                amdahl_parallel_pct: karp_flatt
                    .filter(|e| (0.0..=1.0).contains(e))
                    .map(|e| 100.0 * (1.0 - e)),
                cpu_pct: p.cpu_pct,
            }
        })
        .collect()
}

/// Draws `values.len()` values with replacement.
pub fn resample(values: &[f64], rng: &mut Rng) -> Vec<f64> {
    (0..values.len()).map(|_| values[rng.below(values.len())]).collect()
}
