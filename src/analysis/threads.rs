//! Where thread time went, per point: the sampler's reports of a point's runs averaged, for the
//! table, the waits section and the diagnosis.

use crate::results::{Class, Hot, PointResult, ThreadReport, Wait};
use std::collections::BTreeMap;

/// Thread time of a point by class, and its top waits, averaged over the runs that were sampled.
pub struct PointThreads {
    /// Seconds per run by class.
    pub classes: BTreeMap<Class, f64>,
    /// Top waits merged over runs, seconds per run.
    pub waits: Vec<Wait>,
    /// What the sampler could not see.
    pub limits: Vec<String>,
    /// Most threads alive at once, over the runs.
    pub peak_threads: usize,
    /// Where on-CPU time went by function, over the runs (when on-CPU sampling was allowed).
    pub hot: Vec<Hot>,
    /// Share of off-CPU time the samples attributed to a wait (mean over runs), when known.
    pub coverage: Option<f64>,
    /// Work threads and helper threads seen (mean over runs), when known.
    pub work_helpers: Option<(f64, f64)>,
}

impl PointThreads {
    /// Most threads alive at once, when known.
    pub fn peak(&self) -> Option<usize> {
        (self.peak_threads > 0).then_some(self.peak_threads)
    }
}

/// Merges the sampler reports of a point's successful runs; `None` when none was sampled.
pub fn of_point(p: &PointResult) -> Option<PointThreads> {
    let reports: Vec<&ThreadReport> =
        p.runs.iter().filter(|r| r.counted()).filter_map(|r| r.threads.as_deref()).collect();
    merge(&reports)
}

/// Averages sampler reports; `None` when there are none.
pub fn merge(reports: &[&ThreadReport]) -> Option<PointThreads> {
    if reports.is_empty() {
        return None;
    }
    let n = reports.len() as f64;
    let mut classes: BTreeMap<Class, f64> = BTreeMap::new();
    let mut waits: Vec<Wait> = Vec::new();
    let mut limits: Vec<String> = Vec::new();
    for r in reports {
        for (c, s) in &r.classes {
            *classes.entry(*c).or_default() += s / n;
        }
        for w in &r.top_waits {
            match waits.iter_mut().find(|x| x.name == w.name && x.class == w.class) {
                Some(x) => {
                    x.seconds += w.seconds / n;
                    x.waiters = x.waiters.max(w.waiters);
                }
                None => waits.push(Wait { seconds: w.seconds / n, ..w.clone() }),
            }
        }
        for l in &r.limits {
            if !limits.contains(l) {
                limits.push(l.clone());
            }
        }
    }
    waits.sort_by(|a, b| b.seconds.total_cmp(&a.seconds));
    let peak_threads = reports.iter().map(|r| r.peak_threads).max().unwrap_or(0);
    let mut hot: Vec<Hot> = Vec::new();
    for h in reports.iter().flat_map(|r| &r.hot) {
        match hot.iter_mut().find(|x| x.name == h.name) {
            Some(x) => x.samples += h.samples,
            None => hot.push(Hot { share: 0.0, ..h.clone() }),
        }
    }
    let samples: u64 = reports.iter().flat_map(|r| &r.hot).map(|h| h.samples).sum::<u64>().max(1);
    for h in &mut hot {
        h.share = h.samples as f64 / samples as f64;
    }
    hot.sort_by_key(|h| std::cmp::Reverse(h.samples));
    let caps: Vec<_> = reports.iter().filter_map(|r| r.capacity.as_ref()).collect();
    let k = caps.len() as f64;
    let coverage = (!caps.is_empty()).then(|| caps.iter().map(|c| c.coverage).sum::<f64>() / k);
    let work_helpers = (!caps.is_empty()).then(|| {
        (
            caps.iter().map(|c| c.work_threads as f64).sum::<f64>() / k,
            caps.iter().map(|c| c.helper_threads as f64).sum::<f64>() / k,
        )
    });
    Some(PointThreads { classes, waits, limits, peak_threads, hot, coverage, work_helpers })
}
