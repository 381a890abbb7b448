//! The scaling analysis as results.json stores it: per series, per-point speed-up, efficiency and
//! Karp–Flatt, the Amdahl, USL or Gustafson fit with its parameters as fields, the best point,
//! retrograde scaling, predictions with their back-test and the count to measure next. [`crate::analysis`] computes it; the diagnosis, the reports
//! and `compare` read it. Described in docs/analysis.md.

use crate::plan::Axis;
use crate::stats::sequential::Confidence;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The whole analysis of a sweep or a table.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct Analysis {
    /// The counted parameter, what it counts and whether the work grows with it.
    pub axis: Axis,
    /// What the rates come from.
    pub basis: Basis,
    /// Unit of the rates (throughput unit, or `1/s` from times).
    pub unit: String,
    /// How sure its speed-up intervals are: each a 95% interval over the whole sweep, which spends
    /// the 5% over its looks when it added runs until the verdict was clear.
    #[serde(default, skip_serializing_if = "Confidence::is_fixed")]
    pub confidence: Confidence,
    /// One entry per series.
    pub series: Vec<SeriesAnalysis>,
    /// Remarks that hold for the whole analysis.
    pub notes: Vec<String>,
}

impl Analysis {
    /// The figures of the point with this index in the results (or row of the table).
    pub fn point(&self, index: usize) -> Option<&PointScaling> {
        self.series.iter().flat_map(|s| &s.points).find(|p| p.index == index)
    }
}

/// What the per-run values measure.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Basis {
    /// Throughput: more is better.
    Throughput,
    /// Wall time: less is better.
    Time,
}

/// The analysis of one series (points that differ only in the counted parameter).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
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
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub best: Option<Best>,
    /// More is slower beyond the best point, when the drop is real.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub retrograde: Option<Retrograde>,
    /// Amdahl fit (strong scaling of workers).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub amdahl: Option<AmdahlFit>,
    /// USL fit (strong scaling of workers).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub usl: Option<UslFit>,
    /// Gustafson fit (weak scaling of workers).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub gustafson: Option<GustafsonFit>,
    /// Model predictions at the requested counts.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub predictions: Vec<Prediction>,
    /// The prediction procedure tried on the largest measured counts, when a count beyond them
    /// is predicted.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub backtest: Option<Backtest>,
    /// The smallest count did more per core than the rest, so the forecast was fitted without it.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub fast_baseline: Option<FastBaseline>,
    /// Where to measure next to narrow the farthest prediction.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub next_count: Option<NextCount>,
    /// The tree's peak PSS against the count, and where it meets the memory the job may use.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub memory: Option<MemoryFit>,
    /// What weakens these figures.
    pub warnings: Vec<String>,
}

/// Scaling figures of one point against the baseline of its series.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
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
    /// 95% interval of the speed-up (see `confidence`): from the per-round ratios when the runs
    /// were paired, else a bootstrap widened to Welch's; absent when this point or the baseline
    /// has one run.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub speedup_ci95: Option<[f64; 2]>,
    /// Rounds in which both this point and the baseline ran, when the interval is made from them.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub paired_rounds: Option<u32>,
    /// Speed-up × baseline count ÷ count; only when the count is a number of workers.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub efficiency: Option<f64>,
    /// Karp–Flatt serial fraction e = (1/S − 1/p) / (1 − 1/p), p = count ÷ baseline count.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub karp_flatt: Option<f64>,
    /// Amdahl's law at this point alone: 100 × (1 − e), "as if X% parallel".
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub amdahl_parallel_pct: Option<f64>,
    /// Mean %CPU, when known.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub cpu_pct: Option<f64>,
}

/// The point with the highest rate.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct Best {
    /// Its count.
    pub count: f64,
    /// Its rate.
    pub rate: f64,
    /// The smallest count within 5% of the best rate, when smaller than the best's.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub near_best_count: Option<f64>,
    /// A larger count whose rate was higher, but not beyond the runs' noise (their 95% intervals
    /// overlap): the best is the fewest workers that reach the top.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub no_better: Option<f64>,
}

/// More is slower beyond the best point.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct Retrograde {
    /// The best count, beyond which rates fall.
    pub beyond: f64,
    /// The largest count measured.
    pub at: f64,
    /// Rate at the largest count relative to the best, in percent (negative).
    pub change_pct: f64,
    /// How the drop was judged real.
    pub judged_by: JudgedBy,
}

/// How a retrograde drop was judged real.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum JudgedBy {
    /// The 95% intervals of the two points' means are apart.
    Runs,
    /// Single values: the drop exceeds the threshold (5%).
    Threshold,
}

impl std::fmt::Display for JudgedBy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            JudgedBy::Runs => "runs",
            JudgedBy::Threshold => "threshold",
        })
    }
}

/// A fitted figure with its 95% interval.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct Estimate {
    /// Best fit.
    pub value: f64,
    /// 95% interval, when one can be given.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub ci95: Option<[f64; 2]>,
}

/// How intervals were obtained.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum IntervalMethod {
    /// Refits over resampled runs of every point.
    Bootstrap,
    /// From the residuals of the fit (points with one value each).
    Asymptotic,
    /// Too few points for any interval.
    None,
}

/// How well a law fits the points.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct Fit {
    /// Data − model at each fitted point, in series order.
    pub residuals: Vec<f64>,
    /// √(RSS / (n − p)), in rate units; absent without degrees of freedom.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub residual_stddev: Option<f64>,
    /// The same from the residuals relative to the fitted rates, in percent: the figure that reads
    /// alike for a time and a throughput.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub residual_pct: Option<f64>,
    /// How the intervals were obtained.
    pub intervals: IntervalMethod,
}

/// Amdahl's law X(N) = γN / (1 + s(N−1)) fitted to a series.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct AmdahlFit {
    /// γ: the rate of one worker.
    pub gamma: Estimate,
    /// s: the serial fraction.
    pub serial_fraction: Estimate,
    /// 100 × (1 − s): "as if X% parallel".
    pub parallel_pct: Estimate,
    /// 1/s: the speed-up over one worker that no count can exceed; absent when s = 0.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub ceiling_speedup: Option<Estimate>,
    /// Residuals and intervals.
    pub fit: Fit,
}

impl AmdahlFit {
    /// The fitted rate at `n`.
    pub fn rate_at(&self, n: f64) -> f64 {
        amdahl(n, self.gamma.value, self.serial_fraction.value)
    }
}

/// The Universal Scalability Law X(N) = γN / (1 + σ(N−1) + κN(N−1)) fitted to a series.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct UslFit {
    /// γ: the rate of one worker.
    pub gamma: Estimate,
    /// σ: contention.
    pub sigma: Estimate,
    /// κ: coherency.
    pub kappa: Estimate,
    /// N* = √((1 − σ)/κ), where throughput peaks; absent when κ = 0.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub peak_count: Option<Estimate>,
    /// X(N*).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub peak_rate: Option<Estimate>,
    /// Which term costs more at the largest count fitted.
    pub limited_by: UslLimit,
    /// Residuals and intervals.
    pub fit: Fit,
}

impl UslFit {
    /// The fitted rate at `n`.
    pub fn rate_at(&self, n: f64) -> f64 {
        usl(n, self.gamma.value, self.sigma.value, self.kappa.value)
    }
}

/// The USL term that costs more at the largest count fitted.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum UslLimit {
    /// σ(N−1): queueing on a shared resource.
    Contention,
    /// κN(N−1): crosstalk between workers.
    Coherency,
}

impl std::fmt::Display for UslLimit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            UslLimit::Contention => "contention",
            UslLimit::Coherency => "coherency",
        })
    }
}

/// Gustafson's law X(N) = γ(s + (1−s)N) fitted to a weak-scaling series.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct GustafsonFit {
    /// γ: the rate of one worker.
    pub gamma: Estimate,
    /// s: the serial fraction of the scaled workload.
    pub serial_fraction: Estimate,
    /// Residuals and intervals.
    pub fit: Fit,
}

impl GustafsonFit {
    /// The fitted rate at `n`.
    pub fn rate_at(&self, n: f64) -> f64 {
        gustafson(n, self.gamma.value, self.serial_fraction.value)
    }
}

/// What the models say at one count.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct Prediction {
    /// The count.
    pub count: f64,
    /// Outside the measured range.
    pub extrapolated: bool,
    /// Amdahl's rate there.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub amdahl: Option<Estimate>,
    /// USL's rate there.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub usl: Option<Estimate>,
    /// Gustafson's rate there.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub gustafson: Option<Estimate>,
    /// The model chosen by cross-validation, with a 90% prediction interval.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub forecast: Option<Forecast>,
}

/// Amdahl's rate at `n`: γn / (1 + s(n−1)).
pub fn amdahl(n: f64, gamma: f64, s: f64) -> f64 {
    gamma * n / (1.0 + s * (n - 1.0))
}

/// The USL's rate at `n`: γn / (1 + σ(n−1) + κn(n−1)).
pub fn usl(n: f64, gamma: f64, sigma: f64, kappa: f64) -> f64 {
    gamma * n / (1.0 + sigma * (n - 1.0) + kappa * n * (n - 1.0))
}

/// Gustafson's rate at `n`: γ(s + (1−s)n).
pub fn gustafson(n: f64, gamma: f64, s: f64) -> f64 {
    gamma * (s + (1.0 - s) * n)
}

/// The cross-validated prediction at one count: the model the points chose, its rate there and
/// a 90% interval that carries the choice, the parameters and the back-test's error.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct Forecast {
    /// Predicted rate (throughput, or 1/time).
    pub rate: f64,
    /// 90% prediction interval of the rate, lower first; absent with two counts of one run each.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub interval90: Option<[f64; 2]>,
    /// The interval's lower end is this count's rate (the largest fitted): no gain past it, as a
    /// bottleneck the measured counts cannot show may appear at any larger count.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub plateau_from: Option<f64>,
    /// The interval's upper end is perfect scaling from this count, the one that did the most
    /// per core.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub linear_from: Option<f64>,
    /// The count is above the CPUs of the machine predicted for (`--cpus`): predicted as this
    /// many, since no more of its workers run at once.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub cpus: Option<f64>,
    /// The chosen model as a formula in T (time per unit of work, 1/rate) or X (rate).
    pub model: String,
    /// Its leave-one-out error: root mean square of the log error, as a percentage; absent when
    /// two counts left nothing to leave out.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub cv_error_pct: Option<f64>,
    /// The next best model, when its leave-one-out error is within 1.5× of the chosen one's.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub runner_up: Option<RunnerUp>,
}

/// The model that came second in the cross-validation.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct RunnerUp {
    /// Its formula.
    pub model: String,
    /// Its rate at the count.
    pub rate: f64,
    /// Its leave-one-out error, as a percentage.
    pub cv_error_pct: f64,
}

/// The largest measured counts predicted from the smaller ones by the same procedure.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct Backtest {
    /// Smallest and largest count it was fitted to.
    pub trained: [f64; 2],
    /// The model chosen on them.
    pub model: String,
    /// Each held-out count.
    pub checks: Vec<BacktestCheck>,
}

/// One held-out count of a back-test.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct BacktestCheck {
    /// The count.
    pub count: f64,
    /// The rate predicted.
    pub predicted: f64,
    /// The rate measured.
    pub measured: f64,
    /// (predicted − measured) / measured in percent, of the figure as measured (time or
    /// throughput): negative is low.
    pub error_pct: f64,
}

/// The smallest count did more per core than the others (Karp–Flatt falls as the count grows), or
/// less (a negative Karp–Flatt at the second count: a superlinear first step).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct FastBaseline {
    /// The smallest count, left out of the forecast's fit.
    pub count: f64,
    /// The second count and its Karp–Flatt serial fraction against the smallest.
    pub second: [f64; 2],
    /// The largest count fitted and its fraction.
    pub largest: [f64; 2],
}

/// Where to measure next to narrow the prediction at the largest count predicted.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct NextCount {
    /// The count predicted.
    pub target: f64,
    /// Width of its 90% interval now, in percent of the prediction.
    pub width_pct: f64,
    /// Counts that could be measured, smallest first.
    pub options: Vec<NextOption>,
}

/// A count that could be measured next.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct NextOption {
    /// The count.
    pub count: f64,
    /// Width of the target's 90% interval if it measured as predicted, in percent.
    pub width_pct: f64,
    /// Core-seconds of one run there (count × predicted wall time), when runs are timed.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub core_seconds: Option<f64>,
}

/// The tree's peak PSS against the count: a line through every run's peak (a fixed part and a
/// growth per unit of the count), set against the memory the job may use.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct MemoryFit {
    /// PSS the line gives at a count of 0, bytes: what does not grow with the count.
    pub fixed_bytes: f64,
    /// Growth of the PSS per unit of the count (per thread, copy, rank), bytes.
    pub per_count_bytes: f64,
    /// 90% interval of the growth; absent with fewer than three runs.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub per_count_ci90: Option<[f64; 2]>,
    /// Runs behind the line (successful, with memory readings).
    pub runs: usize,
    /// The memory the job may use, bytes.
    pub usable_bytes: u64,
    /// What that figure is: given with `--memory-limit`, the job's cgroup limit, or what the
    /// machine had available as the sweep started.
    pub usable_source: String,
    /// The largest count judged: the largest measured, the most this node's CPUs would run, or
    /// the largest predicted.
    pub horizon: f64,
    /// Why the horizon is that count.
    pub horizon_source: String,
    /// The PSS the line gives at the horizon, bytes.
    pub at_horizon_bytes: f64,
    /// 90% interval of the PSS at the horizon (of the line there); absent with fewer than three runs.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub at_horizon_ci90: Option<[f64; 2]>,
    /// The largest whole count whose PSS the line keeps within the usable memory; absent when the
    /// PSS does not grow with the count.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub fits_up_to: Option<f64>,
}

impl MemoryFit {
    /// The PSS the line gives at `count`, bytes.
    pub fn pss_at(&self, count: f64) -> f64 {
        self.fixed_bytes + self.per_count_bytes * count
    }

    /// Whether the growth is real: its 90% interval lies above 0.
    pub fn grows(&self) -> bool {
        self.per_count_ci90.is_some_and(|[lo, _]| lo > 0.0)
    }
}
