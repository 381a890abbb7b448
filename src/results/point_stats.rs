//! Per-point statistics over the measured runs, and the warnings a careful experimenter would
//! raise about them (noisy runs, a slow first run, runs too short to time, failures, outliers).

use super::RunRecord;
use crate::stats::Summary;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Summaries of each figure over a point's runs that succeeded (exited by themselves with code 0):
/// failed runs, kept under `--ignore-failure`, are left out.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct PointStats {
    /// Wall time.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub wall_s: Option<Summary>,
    /// User CPU time.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub user_s: Option<Summary>,
    /// System CPU time.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub sys_s: Option<Summary>,
    /// CPU utilisation in percent of one CPU.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub cpu_pct: Option<Summary>,
    /// Peak resident set.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub max_rss_bytes: Option<Summary>,
    /// Peak PSS of the run's whole process tree (the sampler's `threads.memory`), when read.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub peak_pss_bytes: Option<Summary>,
    /// Time-weighted mean PSS of the run's whole process tree over each run, when read: what
    /// the run held for most of its time, beside its peak.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub mean_pss_bytes: Option<Summary>,
    /// Peak RSS summed over the run's whole process tree (pages shared by K processes counted K
    /// times), when read: what a batch system that limits the summed RSS of a job sees. The
    /// largest of the readings', the sweeps' and `wait4`'s largest process.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub peak_rss_sum_bytes: Option<Summary>,
    /// Throughput in the sweep's throughput unit.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub throughput: Option<Summary>,
    /// Each metric read from the output.
    #[serde(skip_serializing_if = "BTreeMap::is_empty", default)]
    pub metrics: BTreeMap<String, Summary>,
}

/// Relative σ of wall time above which a point is called noisy.
pub const NOISY_REL_STDDEV: f64 = 0.10;
/// An outlier is worth a warning when it is this far from the median (relative).
pub const OUTLIER_WORTH: f64 = 0.05;
/// Runs shorter than this are dominated by process start-up.
pub const SHORT_RUN_S: f64 = 0.005;

/// The statistics of a point's runs.
pub fn stats(runs: &[RunRecord]) -> PointStats {
    let ok: Vec<&RunRecord> = runs.iter().filter(|r| r.counted()).collect();
    let of = |f: &dyn Fn(&RunRecord) -> Option<f64>| {
        let v: Vec<f64> = ok.iter().filter_map(|r| f(r)).collect();
        Summary::of(&v)
    };
    let mut metrics = BTreeMap::new();
    for name in ok.iter().flat_map(|r| r.metrics.keys()) {
        if !metrics.contains_key(name)
            && let Some(s) = of(&|r| r.metric(name))
        {
            metrics.insert(name.clone(), s);
        }
    }
    PointStats {
        wall_s: of(&|r| Some(r.wall_s)),
        user_s: of(&|r| Some(r.user_s)),
        sys_s: of(&|r| Some(r.sys_s)),
        cpu_pct: of(&|r| Some(r.cpu_pct)),
        max_rss_bytes: of(&|r| Some(r.max_rss_bytes as f64)),
        peak_pss_bytes: of(&|r| r.threads.as_ref()?.memory.map(|m| m.peak_pss_bytes as f64)),
        mean_pss_bytes: of(&|r| r.threads.as_ref()?.memory.map(|m| m.mean_pss_bytes as f64)),
        // The readings' sum, the sweeps' and the largest single process's (wait4): a spike between
        // readings is in the latter two, and a sum is never below one of its terms.
        peak_rss_sum_bytes: of(&|r| {
            let m = r.threads.as_ref()?.memory?;
            Some(m.peak_rss_bytes.max(m.peak_rss_swept_bytes).max(r.max_rss_bytes) as f64)
        }),
        throughput: of(&|r| r.throughput),
        metrics,
    }
}

/// What a careful experimenter would say about a point's runs, given their statistics.
pub fn warnings(runs: &[RunRecord], stats: &PointStats) -> Vec<String> {
    let ok: Vec<&RunRecord> = runs.iter().filter(|r| r.counted()).collect();
    let mut w = Vec::new();
    let failed: Vec<&RunRecord> = runs.iter().filter(|r| !r.succeeded()).collect();
    if let Some(first) = failed.first() {
        w.push(format!("{} of {} runs failed ({})", failed.len(), runs.len(), first.outcome()));
    }
    let held: Vec<&RunRecord> = runs.iter().filter(|r| r.succeeded() && r.held()).collect();
    if !held.is_empty() {
        let s: f64 = held.iter().map(|r| r.stopped_s()).sum();
        w.push(format!(
            "{} run{} held stopped for {s:.1} s in all (SIGSTOP, Ctrl-Z or a batch system's suspend): left out of the statistics",
            held.len(),
            if held.len() == 1 { "" } else { "s" }
        ));
    }
    let Some(wall) = &stats.wall_s else { return w };
    if wall.n >= 2 && wall.rel_stddev() > NOISY_REL_STDDEV {
        w.push(format!(
            "wall times vary by {:.0}% (σ/mean): the machine may be busy; more runs help, on a quieter machine",
            100.0 * wall.rel_stddev()
        ));
    }
    // A point watched lean after its first run: that run alone carried the tracer's events.
    let traced_alone =
        ok.len() >= 2 && ok[0].lean().is_none() && ok[1..].iter().all(|r| r.lean().is_some());
    if ok.len() >= 3 {
        let mut rest: Vec<f64> = ok[1..].iter().map(|r| r.wall_s).collect();
        rest.sort_by(f64::total_cmp);
        let median = crate::stats::quantile(&rest, 0.5);
        if ok[0].wall_s > 1.25 * median && ok[0].wall_s - median > 3.0 * stddev_of(&rest) {
            w.push(if traced_alone {
                format!(
                    "the first measured run, the one traced in full (the others were watched lean), took {:.1}× the median of the others: the tracer's events cost this job that much (--trace-every-run times every run alike)",
                    ok[0].wall_s / median
                )
            } else {
                format!(
                    "the first measured run took {:.1}× the median of the others: caches still warming up? raise --warmup",
                    ok[0].wall_s / median
                )
            });
        }
    }
    if wall.median < SHORT_RUN_S {
        w.push(format!(
            "runs take {:.1} ms: process start-up dominates at this size; give the program more work",
            wall.median * 1e3
        ));
    }
    // Tukey's fences flag tiny deviations when runs are very steady; only far ones are worth a word.
    let far: Vec<String> = wall
        .outliers
        .iter()
        .filter(|&&i| (ok[i].wall_s - wall.median).abs() > OUTLIER_WORTH * wall.median)
        .map(|&i| {
            let traced = if i == 0 && traced_alone { ", the one traced in full" } else { "" };
            format!(
                "#{} ({:+.0}%{traced})",
                ok[i].index + 1,
                100.0 * (ok[i].wall_s / wall.median - 1.0)
            )
        })
        .collect();
    if !far.is_empty() {
        w.push(format!("outlier runs by Tukey's fences, kept: {}", far.join(", ")));
    }
    let missing = runs.iter().filter(|r| !r.missing_metrics.is_empty()).count();
    if missing > 0 {
        w.push(format!(
            "{missing} {} a --metric value (the regex matched nothing in their output, or captured no number)",
            if missing == 1 { "run lacks" } else { "runs lack" }
        ));
    }
    w
}

fn stddev_of(v: &[f64]) -> f64 {
    Summary::of(v).map_or(0.0, |s| s.stddev)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::ThreadReport;

    fn run(wall_s: f64, lean: Option<f64>) -> RunRecord {
        let threads = ThreadReport { lean, ..ThreadReport::default() };
        RunRecord {
            wall_s,
            exit_code: Some(0),
            threads: Some(Box::new(threads)),
            ..RunRecord::default()
        }
    }

    #[test]
    fn a_slow_first_run_is_the_tracers_when_the_others_were_watched_lean() {
        let walls = [2.0, 1.50, 1.52, 1.51, 1.53];
        let lean: Vec<RunRecord> =
            walls.iter().enumerate().map(|(i, &w)| run(w, (i > 0).then_some(0.99))).collect();
        let said = warnings(&lean, &stats(&lean)).join(" | ");
        assert!(said.contains("the one traced in full") && !said.contains("caches"), "{said}");
        let full: Vec<RunRecord> = walls.iter().map(|&w| run(w, None)).collect();
        let said = warnings(&full, &stats(&full)).join(" | ");
        assert!(said.contains("caches still warming up") && !said.contains("traced"), "{said}");
        // Slower by less than the warm-up line asks: an outlier, said to be the traced one.
        let mut lean = lean;
        lean[0].wall_s = 1.8;
        let said = warnings(&lean, &stats(&lean)).join(" | ");
        assert!(said.contains("#1 (+18%, the one traced in full)"), "{said}");
    }
}
