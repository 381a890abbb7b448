//! The analysis of a sweep or a table: one entry per series, with per-point figures, fitted
//! models, the best point, predictions and warnings. Stored as `analysis` in results.json.

use super::AnalysisError;
use super::models::{self, Law};
use super::observations::{Observations, Series};
use super::prediction::{self, Predicted};
use super::{fits, speedup, verdict};
use crate::results::analysis::{
    Analysis, Basis, IntervalMethod, Prediction, SeriesAnalysis, UslFit,
};
use crate::stats::Rng;
use crate::stats::sequential::Confidence;

/// Seed of the bootstrap: the same data always gives the same intervals.
const SEED: u64 = 0x5CA1_E5C0_9E00;
/// Fewer points than this make the USL's three parameters weakly determined.
pub const USL_MIN_POINTS: usize = 6;

/// What the user asked of the analysis.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Baseline count, as `16` or `threads=16`.
    pub baseline: Option<String>,
    /// Counts to predict with each model.
    pub predict: Vec<f64>,
    /// CPUs the sweep could use: thread counts above it are oversubscribed and left out of fits.
    pub cpus: Option<f64>,
    /// CPUs of the machine predicted for: counts above it are predicted no faster than it.
    pub predict_cpus: Option<f64>,
    /// How sure the speed-up intervals must be (runs added until the verdict was clear spend
    /// the error over several looks).
    pub confidence: Confidence,
    /// The memory the job may use, bytes (`--memory-limit`), in place of the machine's.
    pub memory_limit: Option<u64>,
}

/// Analyses observations.
pub fn analyze(obs: &Observations, opts: &Options) -> Result<Analysis, AnalysisError> {
    let wanted = opts.baseline.as_deref().map(|b| speedup::baseline_value(obs, b)).transpose()?;
    let mut rng = Rng::new(SEED);
    let mut notes = Vec::new();
    let axis = &obs.axis;
    if !axis.parallel() {
        notes.push(format!(
            "'{}' does not count parallel workers (threads, processes, ranks…): the speed-up is the gain from more {0}, \
             not parallel efficiency, so no efficiency, Karp–Flatt, Amdahl or USL figures (pass --workers if each of them gets a worker of its own)",
            axis.param
        ));
    }
    let mut series = Vec::new();
    for s in &obs.series {
        let Some(base) = speedup::baseline_of(s, wanted, axis.parallel()) else { continue };
        let zero = s.points.iter().any(|p| p.count <= 0.0);
        if axis.parallel()
            && zero
            && !notes.iter().any(|n: &String| n.contains("0 is not a number of"))
        {
            notes.push(format!(
                "{0}=0 is not a number of workers (a program's word for none, or for automatic): it is shown with its speed-up against {0}={1}, with no efficiency, and left out of the model fits",
                axis.param, s.points[base].count
            ));
        }
        let points = speedup::per_point(obs, s, base, opts.confidence, &mut rng);
        // A count of 0 is no number of workers: neither the best count nor a retrograde one.
        let counted = Series {
            label: s.label.clone(),
            points: s.points.iter().filter(|p| p.count > 0.0).cloned().collect(),
        };
        let judged =
            if axis.parallel() && zero && !counted.points.is_empty() { &counted } else { s };
        let (best, retrograde) = verdict::judge(obs, judged, opts.confidence);
        let mut warnings = Vec::new();
        let single = s.points.iter().filter(|p| p.values.len() == 1).count();
        if single > 0 && s.points.iter().any(|p| p.values.len() > 1) {
            warnings.push(if single == 1 {
                "1 point has a single run: no interval for its speed-up".into()
            } else {
                format!("{single} points have a single run: no interval for their speed-up")
            });
        }
        if s.points.len() == 1 {
            warnings.push("one point: there is nothing to fit; measure at several counts".into());
        }
        // Thread counts beyond the CPUs measure time-sharing, not scaling: fit the models without them.
        let fitted = match opts.cpus.filter(|_| axis.local()) {
            Some(cpus)
                if s.points.iter().filter(|p| p.count <= cpus).count() >= 2
                    && s.points.iter().any(|p| p.count > cpus) =>
            {
                warnings.push(format!(
                    "{} above the {cpus} CPUs available are oversubscribed: left out of the model fits",
                    axis.param
                ));
                Series {
                    label: s.label.clone(),
                    points: s.points.iter().filter(|p| p.count <= cpus).cloned().collect(),
                }
            }
            _ => s.clone(),
        };
        let fitted = if axis.parallel() {
            Series {
                label: fitted.label,
                points: fitted.points.into_iter().filter(|p| p.count > 0.0).collect(),
            }
        } else {
            fitted
        };
        let s_fit = &fitted;
        let mut fit =
            |law| if axis.parallel() { models::fit(law, obs, s_fit, &mut rng) } else { None };
        let (amdahl, usl, gustafson) = if axis.weak() {
            (None, None, fit(Law::Gustafson))
        } else {
            let usl = if s_fit.points.len() >= 3 { fit(Law::Usl) } else { None };
            (fit(Law::Amdahl), usl, None)
        };
        let largest = s_fit.points.last().map_or(1.0, |p| p.count);
        let usl_fit = usl.as_ref().map(|m| fits::usl(m, largest));
        if usl.is_some() && s_fit.points.len() < USL_MIN_POINTS {
            warnings.push(format!(
                "only {} points: the USL's three parameters are weakly determined; measure at least {USL_MIN_POINTS} counts",
                s_fit.points.len()
            ));
        }
        let max = s.points.iter().map(|p| p.count).fold(f64::MIN, f64::max);
        let min = s.points.iter().map(|p| p.count).fold(f64::MAX, f64::min);
        let predicted = if axis.parallel() {
            prediction::predict(obs, s_fit, &opts.predict, opts.predict_cpus, &mut rng)
        } else {
            Predicted { forecasts: vec![None; opts.predict.len()], ..Predicted::default() }
        };
        // The next-count line, where there is one, says where to measure: one advice, not two.
        if let Some(u) = usl_fit.as_ref().filter(|_| predicted.next_count.is_none()) {
            suggest(u, max, &mut warnings);
        }
        let predictions: Vec<Prediction> = opts
            .predict
            .iter()
            .zip(predicted.forecasts)
            .map(|(&n, forecast)| {
                // Above the CPUs of the machine predicted for, the laws too say that many.
                let at = prediction::on_cpus(n, opts.predict_cpus);
                Prediction {
                    count: n,
                    extrapolated: n > max || n < min,
                    amdahl: amdahl.as_ref().map(|m| m.predict(at)),
                    usl: usl.as_ref().map(|m| m.predict(at)),
                    gustafson: gustafson.as_ref().map(|m| m.predict(at)),
                    forecast,
                }
            })
            .collect();
        if predictions.iter().any(|p| p.extrapolated) {
            warnings.push(format!(
                "predictions beyond the measured range ({} {min}–{max}) are extrapolations: a guess, not a measurement",
                axis.param
            ));
        }
        series.push(SeriesAnalysis {
            label: s.label.clone(),
            baseline: s.points[base].count,
            fitted_up_to: s_fit.points.last().map_or(0.0, |p| p.count),
            points,
            best,
            retrograde,
            amdahl: amdahl.as_ref().map(fits::amdahl),
            usl: usl_fit,
            gustafson: gustafson.as_ref().map(fits::gustafson),
            predictions,
            backtest: predicted.backtest,
            fast_baseline: predicted.fast_baseline,
            next_count: predicted.next_count,
            memory: None,
            warnings,
        });
    }
    let unit = match obs.basis {
        Basis::Throughput => obs.unit.clone().unwrap_or_default(),
        Basis::Time => "1/s".into(),
    };
    Ok(Analysis {
        axis: axis.clone(),
        basis: obs.basis,
        unit,
        confidence: opts.confidence,
        series,
        notes,
    })
}

/// Where to measure next when the USL fit cannot pin κ or the peak down.
fn suggest(u: &UslFit, max: f64, warnings: &mut Vec<String>) {
    if u.fit.intervals == IntervalMethod::None {
        return;
    }
    let kappa = u.kappa;
    let weak_kappa = kappa
        .ci95
        .is_some_and(|[lo, hi]| kappa.value > 0.0 && (lo <= 0.0 || hi > 3.0 * kappa.value));
    let peak_beyond = u.peak_count.is_some_and(|p| p.value > max);
    if weak_kappa || peak_beyond {
        let next = (2.0 * max).round();
        warnings.push(format!(
            "the fit cannot place the peak well (κ uncertain or N* beyond the measured range): measuring at {next} would tell"
        ));
    }
}
