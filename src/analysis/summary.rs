//! The analysis of a sweep or a table: one entry per series, with per-point figures, fitted
//! models, the best point, predictions and warnings. Stored as `analysis` in results.json.

use super::AnalysisError;
use super::lm::Model;
use super::models::{self, Estimate, FittedModel, IntervalMethod, Law};
use super::observations::{Basis, Observations, Series};
use super::speedup::{self, PointScaling};
use super::verdict::{self, Best, Retrograde};
use crate::stats::Rng;
use serde::Serialize;

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
}

/// The whole analysis.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Analysis {
    /// The counted parameter.
    pub count: String,
    /// Whether the count is a number of parallel workers.
    pub workers: bool,
    /// Whether the work grows with the count (weak scaling: Gustafson instead of Amdahl/USL).
    pub weak: bool,
    /// What the rates come from.
    pub basis: Basis,
    /// Unit of the rates (throughput unit, or `1/s` from times).
    pub unit: String,
    /// One entry per series.
    pub series: Vec<SeriesAnalysis>,
    /// Remarks that hold for the whole analysis.
    pub notes: Vec<String>,
}

/// Counts of machine-local workers, which more CPUs than exist cannot serve (unlike ranks or nodes).
fn local_workers(name: &str) -> bool {
    !matches!(name.to_ascii_lowercase().as_str(), "ranks" | "tasks" | "ntasks" | "nodes" | "copies" | "np")
}

/// The analysis of one series.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct SeriesAnalysis {
    /// Other parameters of the series, or empty.
    pub label: String,
    /// The baseline count.
    pub baseline: f64,
    /// The largest count the models were fitted to (smaller than the largest measured when
    /// oversubscribed counts were left out).
    pub fitted_up_to: f64,
    /// Per point, by increasing count.
    pub points: Vec<PointScaling>,
    /// The best point.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub best: Option<Best>,
    /// More is slower beyond the best point, when the drop is real.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retrograde: Option<Retrograde>,
    /// Amdahl fit (strong scaling of workers).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub amdahl: Option<AmdahlSummary>,
    /// USL fit (strong scaling of workers).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usl: Option<UslSummary>,
    /// Gustafson fit (weak scaling of workers).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gustafson: Option<GustafsonSummary>,
    /// Model predictions at the requested counts.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub predictions: Vec<Prediction>,
    /// What weakens these figures.
    pub warnings: Vec<String>,
}

/// Amdahl's law fitted over all points.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct AmdahlSummary {
    /// The fit.
    pub model: FittedModel,
    /// Serial fraction s.
    pub serial_fraction: Estimate,
    /// 100 × (1 − s): "as if X% parallel".
    pub parallel_pct: Estimate,
    /// 1/s: the speed-up over one worker that no count can exceed; absent when s = 0.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ceiling_speedup: Option<Estimate>,
}

/// The Universal Scalability Law fitted over all points.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct UslSummary {
    /// The fit (γ, σ contention, κ coherency).
    pub model: FittedModel,
    /// N* = √((1 − σ)/κ), where throughput peaks; absent when κ = 0.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub peak_count: Option<Estimate>,
    /// X(N*).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub peak_rate: Option<Estimate>,
    /// `contention` (σ(N−1) is the larger cost at the largest count) or `coherency` (κN(N−1) is).
    pub limited_by: String,
}

/// Gustafson's law fitted to a weak-scaling series.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct GustafsonSummary {
    /// The fit.
    pub model: FittedModel,
    /// Serial fraction s of the scaled workload.
    pub serial_fraction: Estimate,
}

/// What the models say at one count.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Prediction {
    /// The count.
    pub count: f64,
    /// Outside the measured range.
    pub extrapolated: bool,
    /// Amdahl's rate there.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub amdahl: Option<Estimate>,
    /// USL's rate there.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usl: Option<Estimate>,
    /// Gustafson's rate there.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gustafson: Option<Estimate>,
}

/// Analyses observations.
pub fn analyze(obs: &Observations, opts: &Options) -> Result<Analysis, AnalysisError> {
    let wanted = opts.baseline.as_deref().map(|b| speedup::baseline_value(obs, b)).transpose()?;
    let mut rng = Rng::new(SEED);
    let mut notes = Vec::new();
    if !obs.workers {
        notes.push(format!(
            "'{}' does not count parallel workers (threads, processes, ranks…): the speed-up is the gain from more {0}, \
             not parallel efficiency, so no efficiency, Karp–Flatt, Amdahl or USL figures (pass --workers if each of them gets a worker of its own)",
            obs.count_name
        ));
    }
    let mut series = Vec::new();
    for s in &obs.series {
        let Some(base) = speedup::baseline_of(s, wanted) else { continue };
        let points = speedup::per_point(obs, s, base, &mut rng);
        let (best, retrograde) = verdict::judge(obs, s);
        let mut warnings = Vec::new();
        let single = s.points.iter().filter(|p| p.values.len() == 1).count();
        if single > 0 && s.points.iter().any(|p| p.values.len() > 1) {
            warnings.push(format!("{single} points have a single run: no interval for their speed-up"));
        }
        if s.points.len() == 1 {
            warnings.push("one point: there is nothing to fit; measure at several counts".into());
        }
        // Thread counts beyond the CPUs measure time-sharing, not scaling: fit the models without them.
        let fitted = match opts.cpus.filter(|_| obs.workers && local_workers(&obs.count_name)) {
            Some(cpus)
                if s.points.iter().filter(|p| p.count <= cpus).count() >= 2
                    && s.points.iter().any(|p| p.count > cpus) =>
            {
                warnings.push(format!(
                    "{} above the {cpus} CPUs available are oversubscribed: left out of the model fits",
                    obs.count_name
                ));
                Series {
                    label: s.label.clone(),
                    points: s.points.iter().filter(|p| p.count <= cpus).cloned().collect(),
                }
            }
            _ => s.clone(),
        };
        let s_fit = &fitted;
        let mut fit = |law| if obs.workers { models::fit(law, obs, s_fit, &mut rng) } else { None };
        let (amdahl, usl, gustafson) = if obs.weak {
            (None, None, fit(Law::Gustafson).map(gustafson_summary))
        } else {
            let amdahl = fit(Law::Amdahl).map(amdahl_summary);
            let largest = s_fit.points.last().map_or(1.0, |p| p.count);
            let usl = if s_fit.points.len() >= 3 { fit(Law::Usl).map(|m| usl_summary(m, largest)) } else { None };
            (amdahl, usl, None)
        };
        if usl.is_some() && s_fit.points.len() < USL_MIN_POINTS {
            warnings.push(format!(
                "only {} points: the USL's three parameters are weakly determined; measure at least {USL_MIN_POINTS} counts",
                s_fit.points.len()
            ));
        }
        let max = s.points.iter().map(|p| p.count).fold(f64::MIN, f64::max);
        let min = s.points.iter().map(|p| p.count).fold(f64::MAX, f64::min);
        if let Some(u) = &usl {
            suggest(u, max, &mut warnings);
        }
        let predictions: Vec<Prediction> = opts
            .predict
            .iter()
            .map(|&n| Prediction {
                count: n,
                extrapolated: n > max || n < min,
                amdahl: amdahl.as_ref().map(|a| a.model.predict(n)),
                usl: usl.as_ref().map(|u| u.model.predict(n)),
                gustafson: gustafson.as_ref().map(|g| g.model.predict(n)),
            })
            .collect();
        if predictions.iter().any(|p| p.extrapolated) {
            warnings.push(format!(
                "predictions beyond the measured range ({} {min}–{max}) are extrapolations: a guess, not a measurement",
                obs.count_name
            ));
        }
        series.push(SeriesAnalysis {
            label: s.label.clone(),
            baseline: s.points[base].count,
            fitted_up_to: s_fit.points.last().map_or(0.0, |p| p.count),
            points,
            best,
            retrograde,
            amdahl,
            usl,
            gustafson,
            predictions,
            warnings,
        });
    }
    let unit = match obs.basis {
        Basis::Throughput => obs.unit.clone().unwrap_or_default(),
        Basis::Time => "1/s".into(),
    };
    Ok(Analysis {
        count: obs.count_name.clone(),
        workers: obs.workers,
        weak: obs.weak,
        basis: obs.basis,
        unit,
        series,
        notes,
    })
}

impl Analysis {
    /// The figures of the point with this index in the results (or row of the table).
    pub fn point(&self, index: usize) -> Option<&PointScaling> {
        self.series.iter().flat_map(|s| &s.points).find(|p| p.index == index)
    }
}

fn amdahl_summary(model: FittedModel) -> AmdahlSummary {
    let s = model.get("s").expect("Amdahl has s");
    let parallel_pct = model.derived(|t| Some(100.0 * (1.0 - t[1]))).expect("defined");
    let ceiling_speedup = model.derived(|t| (t[1] > 0.0).then(|| 1.0 / t[1]));
    AmdahlSummary { model, serial_fraction: s, parallel_pct, ceiling_speedup }
}

fn usl_summary(model: FittedModel, largest: f64) -> UslSummary {
    let t = model.theta();
    let peak_count = model.derived(models::usl_peak);
    let peak_rate = model.derived(|t| models::usl_peak(t).map(|n| Law::Usl.value(n, t)));
    let contention = t[1] * (largest - 1.0);
    let coherency = t[2] * largest * (largest - 1.0);
    let limited_by = if coherency > contention { "coherency" } else { "contention" }.to_string();
    UslSummary { model, peak_count, peak_rate, limited_by }
}

fn gustafson_summary(model: FittedModel) -> GustafsonSummary {
    let s = model.get("s").expect("Gustafson has s");
    GustafsonSummary { model, serial_fraction: s }
}

/// Where to measure next when the USL fit cannot pin κ or the peak down.
fn suggest(u: &UslSummary, max: f64, warnings: &mut Vec<String>) {
    if u.model.intervals == IntervalMethod::None {
        return;
    }
    let kappa = u.model.get("kappa").expect("USL has kappa");
    let weak_kappa = kappa.ci95.is_some_and(|[lo, hi]| kappa.value > 0.0 && (lo <= 0.0 || hi > 3.0 * kappa.value));
    let peak_beyond = u.peak_count.is_some_and(|p| p.value > max);
    if weak_kappa || peak_beyond {
        let next = (2.0 * max).round();
        warnings.push(format!(
            "the fit cannot place the peak well (κ uncertain or N* beyond the measured range): measuring at {next} would tell"
        ));
    }
}
