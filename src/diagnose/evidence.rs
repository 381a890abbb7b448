//! Figures rules read off a point's runs: the job's read rate, the largest wait of a class, the
//! context switches against the baseline's.

use crate::analysis::threads::PointThreads;
use crate::results::{Class, PointResult};

/// Share of a point's working thread time in a class: thread time less the time a coordinating
/// thread spends joining its workers (no cost in itself).
pub fn class_share(t: &PointThreads, class: Class) -> f64 {
    let total: f64 = t.classes.values().sum();
    let work = total - t.classes.get(&Class::Join).copied().unwrap_or(0.0);
    if work > 0.0 { t.classes.get(&class).copied().unwrap_or(0.0) / work } else { 0.0 }
}

/// The largest wait of a class, as `name (N waiting threads)`.
pub fn top_wait(t: &PointThreads, class: Class) -> Option<String> {
    let w = t.waits.iter().find(|w| w.class == Some(class))?;
    Some(format!(
        "{} ({} waiting thread{})",
        w.name,
        w.waiters,
        if w.waiters == 1 { "" } else { "s" }
    ))
}

/// The job's mean read rate at a point in bytes per second: bytes from storage when the runs
/// started cold (`storage`), else bytes through read calls; `None` without successful runs.
pub fn read_rate(p: &PointResult, storage: bool) -> Option<f64> {
    let rates: Vec<f64> = p
        .runs
        .iter()
        .filter(|r| r.counted() && r.wall_s > 0.0)
        .filter_map(|r| {
            let bytes = if storage { Some(r.storage_read_bytes) } else { r.syscall_read_bytes };
            bytes.map(|b| b as f64 / r.wall_s)
        })
        .collect();
    (!rates.is_empty()).then(|| rates.iter().sum::<f64>() / rates.len() as f64)
}

/// Voluntary context switches per run: threads that block and wake one another pay for each
/// handover in the kernel.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Switches {
    /// At the point, mean per run.
    pub top: f64,
    /// At the baseline, mean per run scaled to the point's work.
    pub base: f64,
}

/// Voluntary context switches per run at `top` and, scaled to its work (`work_ratio` of the
/// baseline's), at `base`: the means of their counted runs.
pub fn switches(base: &PointResult, top: &PointResult, work_ratio: f64) -> Option<Switches> {
    let mean = |p: &PointResult| {
        let v: Vec<f64> =
            p.runs.iter().filter(|r| r.counted()).map(|r| r.voluntary_switches as f64).collect();
        crate::stats::Summary::of(&v).map(|s| s.mean)
    };
    Some(Switches { top: mean(top)?, base: mean(base)? * work_ratio })
}
