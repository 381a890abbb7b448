//! Where thread time went, per point: the compact table cell (`run 61% · runq 3% · lock 30%
//! queue_lock · idle 4%`) and the section of top waits, from the sampler's reports of its runs.

use crate::results::PointResult;
use crate::sample::{Class, ThreadReport, Wait};
use std::collections::BTreeMap;

/// Thread time of a point by class, and its top waits, averaged over the runs that were sampled.
pub struct PointThreads {
    /// Seconds per run by class.
    pub classes: BTreeMap<Class, f64>,
    /// Top waits merged over runs, seconds per run.
    pub waits: Vec<Wait>,
    /// Runs that carried a report.
    pub runs: usize,
    /// Sampler CPU seconds per run.
    pub sampler_cpu_s: f64,
    /// What the sampler could not see.
    pub limits: Vec<String>,
}

/// Merges the sampler reports of a point's successful runs; `None` when none was sampled.
pub fn of_point(p: &PointResult) -> Option<PointThreads> {
    let reports: Vec<&ThreadReport> =
        p.runs.iter().filter(|r| r.succeeded()).filter_map(|r| r.threads.as_ref()).collect();
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
    let sampler_cpu_s = reports.iter().map(|r| r.sampler_cpu_s).sum::<f64>() / n;
    Some(PointThreads { classes, waits, runs: reports.len(), sampler_cpu_s, limits })
}

/// A lock's short name: the symbol without module, hash or offset (`queue_lock`, `GLOBAL_LOCK`).
pub fn short_name(name: &str) -> String {
    let sym = name.rsplit_once('!').map_or(name, |(_, s)| s);
    let sym = sym.split("+0x").next().unwrap_or(sym);
    sym.rsplit("::").next().unwrap_or(sym).to_string()
}

/// `run 61% · runq 3% · lock 30% queue_lock · idle 4%`: shares of thread time of at least 1%.
pub fn cell(t: &PointThreads) -> String {
    let total: f64 = t.classes.values().sum();
    if total <= 0.0 {
        return "—".into();
    }
    let pct = |c: Class| 100.0 * t.classes.get(&c).copied().unwrap_or(0.0) / total;
    let mut parts = vec![format!("run {:.0}%", pct(Class::CpuUser) + pct(Class::CpuKernel))];
    if pct(Class::CpuKernel) >= 1.0 {
        parts.push(format!("kern {:.0}%", pct(Class::CpuKernel)));
    }
    for c in Class::ALL.iter().copied().filter(|c| !matches!(c, Class::CpuUser | Class::CpuKernel)) {
        let p = pct(c);
        if p < 1.0 {
            continue;
        }
        let mut part = format!("{} {p:.0}%", c.short());
        if c == Class::Lock
            && let Some(w) = t.waits.iter().find(|w| w.class == Some(Class::Lock))
        {
            part.push(' ');
            part.push_str(&short_name(&w.name));
        }
        parts.push(part);
    }
    parts.join(" · ")
}

/// Lines for the waits section: the largest waits of a point with their share of thread time.
pub fn wait_lines(label: &str, t: &PointThreads) -> Vec<String> {
    let total: f64 = t.classes.values().sum();
    t.waits
        .iter()
        .filter(|w| total > 0.0 && w.seconds / total >= 0.01 && w.class != Some(Class::Join))
        .take(3)
        .map(|w| {
            let class = w.class.map_or("wait", |c| c.short());
            let who =
                if w.thread_names.is_empty() { String::new() } else { format!(" ({})", w.thread_names.join(", ")) };
            format!(
                "{label}: {class} on {}: {:.0}% of thread time, {} waiting thread{}{who}",
                w.name,
                100.0 * w.seconds / total,
                w.waiters,
                if w.waiters == 1 { "" } else { "s" }
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn short_names_drop_module_path_and_offset() {
        assert_eq!(super::short_name("lock!queue_lock+0x0"), "queue_lock");
        assert_eq!(super::short_name("scalescope::probes::lock::GLOBAL_LOCK+0x0"), "GLOBAL_LOCK");
        assert_eq!(super::short_name("heap 0x7f00"), "heap 0x7f00");
    }
}
