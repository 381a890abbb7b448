//! The figures rules look at, per point: thread-time shares by class (the coordinating thread's
//! join time left out), the top waits, start-up and tail phases from the timeline.

use crate::analysis::threads::{self, PointThreads};
use crate::results::PointResult;
use crate::sample::Class;

/// What the sampler says about one point.
pub struct PointEvidence {
    /// Merged sampler reports of the point's runs.
    pub threads: PointThreads,
    /// Thread time without join (the main thread waiting for its workers is no cost in itself).
    pub work_s: f64,
}

impl PointEvidence {
    /// From a point's runs; `None` when they were not sampled.
    pub fn of(p: &PointResult) -> Option<PointEvidence> {
        let threads = threads::of_point(p)?;
        let total: f64 = threads.classes.values().sum();
        let join = threads.classes.get(&Class::Join).copied().unwrap_or(0.0);
        let work_s = total - join;
        (work_s > 0.0).then_some(PointEvidence { threads, work_s })
    }

    /// Share of working thread time in a class.
    pub fn share(&self, class: Class) -> f64 {
        self.threads.classes.get(&class).copied().unwrap_or(0.0) / self.work_s
    }

    /// Share on a CPU (user and kernel).
    pub fn on_cpu(&self) -> f64 {
        self.share(Class::CpuUser) + self.share(Class::CpuKernel)
    }

    /// The largest wait of a class, as `name (N waiting threads)`.
    pub fn top(&self, class: Class) -> Option<String> {
        let w = self.threads.waits.iter().find(|w| w.class == Some(class))?;
        Some(format!("{} ({} waiting thread{})", w.name, w.waiters, if w.waiters == 1 { "" } else { "s" }))
    }
}

/// The job's mean read rate at a point in bytes per second: bytes from storage when the runs
/// started cold (`storage`), else bytes through read calls; `None` without successful runs.
pub fn read_rate(p: &PointResult, storage: bool) -> Option<f64> {
    let rates: Vec<f64> = p
        .runs
        .iter()
        .filter(|r| r.succeeded() && r.wall_s > 0.0)
        .filter_map(|r| {
            let bytes = if storage { Some(r.storage_read_bytes) } else { r.syscall_read_bytes };
            bytes.map(|b| b as f64 / r.wall_s)
        })
        .collect();
    (!rates.is_empty()).then(|| rates.iter().sum::<f64>() / rates.len() as f64)
}

/// Seconds at the start and at the end of a run with about one thread on a CPU, while at least
/// `busy` threads ran in between; from the timeline of the point's first sampled run. Bins the
/// sampler did not cover are skipped.
pub fn phases(p: &PointResult, busy: f64) -> Option<(f64, f64, f64)> {
    let run = p.runs.iter().find(|r| r.succeeded() && r.threads.is_some())?;
    let t = run.threads.as_ref()?.timeline.as_ref()?;
    let covered = |i: usize| {
        t.running[i]
            + t.runnable.get(i).copied().unwrap_or(0.0)
            + t.waiting.values().map(|v| v.get(i).copied().unwrap_or(0.0)).sum::<f32>()
            > 0.05
    };
    let mut bins: Vec<f64> = (0..t.running.len()).filter(|&i| covered(i)).map(|i| t.running[i] as f64).collect();
    // Before the program runs at all (exec, loading) nothing is on a CPU: not a serial phase.
    let started = bins.iter().position(|&v| v >= 0.5).unwrap_or(0);
    bins.drain(..started);
    let n = bins.len();
    if n < 5 || bins.iter().cloned().fold(0.0, f64::max) < busy {
        return None;
    }
    let single = |v: &&f64| **v <= 1.25;
    let lead = bins.iter().take_while(single).count();
    let tail = bins.iter().rev().take_while(single).count();
    Some((lead as f64 * t.bin_s, tail as f64 * t.bin_s, n as f64 * t.bin_s))
}
