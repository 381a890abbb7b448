//! Where thread time went, per point: the sampler's reports of a point's runs averaged, for the
//! table, the waits section and the diagnosis.

use crate::results::{Around, Class, Hot, PointResult, ThreadReport, Wait};
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
    /// Most work threads alive at once, in the middle run, when known: fewer than the work
    /// threads seen where the program starts new threads as it goes (a pool per block).
    pub peak_work: Option<usize>,
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

/// A wait's name as runs share it: a lock in anonymous memory (a malloc arena, the JVM's heap) is
/// at another address in every run, address randomisation moving its mapping, and is one lock
/// all the same. `heap 0x7f39500161f8` and `heap 0x7fdef00161f8` are `heap 0x…1f8`: the offset
/// in its page, which stays.
pub fn across_runs(name: &str) -> String {
    const HEAP: &str = "heap 0x";
    let Some(at) = name.find(HEAP) else { return name.to_string() };
    let hex_from = at + HEAP.len();
    let len = name[hex_from..].chars().take_while(char::is_ascii_hexdigit).count();
    if len <= 3 {
        return name.to_string();
    }
    let hex = &name[hex_from..hex_from + len];
    format!("{}heap 0x…{}{}", &name[..at], &hex[len - 3..], &name[hex_from + len..])
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
    // The run each wait was last seen in, and what ran around it in each run that saw it.
    let mut from_run: Vec<usize> = Vec::new();
    let mut arounds: Vec<Vec<(f64, Option<Around>)>> = Vec::new();
    for (run, r) in reports.iter().enumerate() {
        for (c, s) in &r.classes {
            *classes.entry(*c).or_default() += s / n;
        }
        for w in &r.top_waits {
            // The same name, or the same lock at another run's address (not two of this run's).
            let key = across_runs(&w.name);
            let same = |(x, from): &(&mut Wait, &mut usize)| {
                x.class == w.class
                    && (x.name == w.name || (**from != run && across_runs(&x.name) == key))
            };
            match waits.iter_mut().zip(from_run.iter_mut()).position(|p| same(&p)) {
                Some(i) => {
                    let (x, from) = (&mut waits[i], &mut from_run[i]);
                    arounds[i].push((w.seconds, w.around.clone()));
                    x.seconds += w.seconds / n;
                    x.work_s += w.work_s / n;
                    x.waiters = x.waiters.max(w.waiters);
                    if x.name != w.name {
                        x.name = key.clone();
                    }
                    *from = run;
                }
                None => {
                    waits.push(Wait { seconds: w.seconds / n, work_s: w.work_s / n, ..w.clone() });
                    from_run.push(run);
                    arounds.push(vec![(w.seconds, w.around.clone())]);
                }
            }
        }
        for l in &r.limits {
            if !limits.contains(l) {
                limits.push(l.clone());
            }
        }
    }
    // What ran around a wait is its median run's (by the wait's time), not the first run's: a
    // feeder is judged on one run, and the first of b3sum's showed a peer where most did not.
    for (w, mut seen) in waits.iter_mut().zip(arounds) {
        seen.sort_by(|a, b| a.0.total_cmp(&b.0));
        w.around = seen.swap_remove(seen.len() / 2).1;
    }
    crate::results::sort_waits(&mut waits);
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
    // A traced run sees every thread work; a lean run's few /proc samples may miss a short one's
    // (Perl's two workers read "1.2 work threads" over 29 lean runs and a traced one): the counts
    // come from the traced runs where there are some.
    let traced: Vec<_> =
        reports.iter().filter(|r| r.tracer.is_some()).filter_map(|r| r.capacity.as_ref()).collect();
    let counted = if traced.is_empty() { &caps } else { &traced };
    let m = counted.len() as f64;
    let work_helpers = (!counted.is_empty()).then(|| {
        (
            counted.iter().map(|c| c.work_threads as f64).sum::<f64>() / m,
            counted.iter().map(|c| c.helper_threads as f64).sum::<f64>() / m,
        )
    });
    // The runs' middle value: one run's bin at a block's end can hold the old threads and the new.
    let mut peaks: Vec<usize> = counted.iter().map(|c| c.peak_work_threads).collect();
    peaks.sort_unstable();
    let peak_work = peaks.get(peaks.len().saturating_sub(1) / 2).copied();
    Some(PointThreads {
        classes,
        waits,
        limits,
        peak_threads,
        hot,
        coverage,
        work_helpers,
        peak_work,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::Class;

    fn report(waits: &[(&str, f64)]) -> ThreadReport {
        ThreadReport {
            top_waits: waits
                .iter()
                .map(|&(name, seconds)| Wait {
                    class: Some(Class::Lock),
                    name: name.into(),
                    seconds,
                    waiters: 2,
                    ..Wait::default()
                })
                .collect(),
            ..ThreadReport::default()
        }
    }

    #[test]
    fn a_lock_at_another_address_in_every_run_is_one_lock_and_two_of_one_run_stay_two() {
        let a = report(&[("wait at f (heap 0x7f39500161f8)", 1.0)]);
        let b = report(&[("wait at f (heap 0x7fdef00161f8)", 3.0)]);
        let merged = merge(&[&a, &b]).unwrap();
        assert_eq!(merged.waits.len(), 1, "{:?}", merged.waits);
        assert_eq!(merged.waits[0].name, "wait at f (heap 0x…1f8)");
        assert!((merged.waits[0].seconds - 2.0).abs() < 1e-12);
        // Two locks of one run at the same offset in their pages are two locks.
        let two = report(&[
            ("wait at f (heap 0x7f00000011f8)", 1.0),
            ("wait at f (heap 0x7f00000021f8)", 1.0),
        ]);
        assert_eq!(merge(&[&two]).unwrap().waits.len(), 2);
        // A lock with a stable name keeps it.
        let brk = report(&[("wait at f (heap+0x2a0)", 1.0)]);
        assert_eq!(merge(&[&brk, &brk]).unwrap().waits[0].name, "wait at f (heap+0x2a0)");
    }

    #[test]
    fn the_threads_that_worked_are_counted_in_the_traced_runs_where_there_are_some() {
        let run = |work_threads, helper_threads, traced: bool| ThreadReport {
            capacity: Some(crate::results::Capacity {
                work_threads,
                helper_threads,
                ..Default::default()
            }),
            tracer: traced.then(crate::results::TracerReport::default),
            ..ThreadReport::default()
        };
        let (traced, lean) = (run(2, 1, true), run(1, 2, false));
        assert_eq!(merge(&[&traced, &lean, &lean]).unwrap().work_helpers, Some((2.0, 1.0)));
        assert_eq!(merge(&[&lean, &run(2, 1, false)]).unwrap().work_helpers, Some((1.5, 1.5)));
    }
}
