//! How a run used its CPUs and where thread time went, shown: the table cell (`busy 61% · idle:
//! lock 30%, io 4%`), the thread-time breakdown (`run 61% · runq 3% · lock 30% queue_lock`) and
//! the lines of the waits section.

pub use crate::analysis::threads::PointThreads;
use crate::diagnose::ledger::{self, Cause};
use crate::fmt::tenths;
use crate::results::{Class, PointResult, Wait};

/// `busy 61% · idle: lock 30%, io 4%`: the share of the CPU capacity the job kept busy (and the
/// CPUs it used when it ran beyond the capacity: `busy 100% (using 1.6 CPUs)`), the share
/// the hypervisor took from it on a virtual machine (`stolen 20%`, from 1%), and the largest causes
/// of idle capacity (at least 1% each); `None` when the runs were not sampled.
pub fn capacity_cell(p: &PointResult) -> Option<String> {
    let l = ledger::of(p, None)?;
    let cap = l.capacity * l.wall_s;
    if cap <= 0.0 {
        return None;
    }
    let mut idle: Vec<(String, f64)> = Vec::new();
    for i in &l.items {
        if i.cause == Cause::Stolen || i.cause.is_extra() {
            continue;
        }
        let name = i.cause.short_name().to_string();
        match idle.iter_mut().find(|x| x.0 == name) {
            Some(x) => x.1 += i.core_s,
            None => idle.push((name, i.core_s)),
        }
    }
    idle.sort_by(|a, b| b.1.total_cmp(&a.1));
    let parts: Vec<String> = idle
        .iter()
        .filter(|x| x.1 / cap >= 0.01)
        .take(3)
        .map(|(n, s)| format!("{n} {:.0}%", 100.0 * s / cap))
        .collect();
    let mut busy = format!("busy {:.0}%", (100.0 * (l.cpu_s - l.over_s) / cap).clamp(0.0, 100.0));
    // Threads beside a full set of workers (a caller that works too, a program's own helpers) ran
    // beyond the capacity: `busy 100%` beside `%CPU 154` read as a contradiction.
    let used = l.cpu_s / l.wall_s.max(1e-9);
    if used >= (1.0 + BEYOND) * l.capacity {
        busy += &format!(" (using {} CPUs)", tenths(used));
    }
    if l.stolen_s / cap >= 0.01 {
        busy += &format!(" · stolen {:.0}%", 100.0 * l.stolen_s / cap);
    }
    Some(if parts.is_empty() { busy } else { format!("{busy} · idle: {}", parts.join(", ")) })
}

/// The job used this share more CPU time than its capacity (by its usage, as `%CPU` counts it):
/// the cell says how many CPUs it used.
const BEYOND: f64 = 0.05;

/// A point's threads as the findings read them (see [`crate::diagnose::as_shown`]).
pub fn of_point(p: &PointResult) -> Option<PointThreads> {
    crate::analysis::threads::of_point(p).map(crate::diagnose::as_shown)
}

/// A lock's short name: the symbol without module, hash or offset (`queue_lock`, `GLOBAL_LOCK`).
pub fn short_name(name: &str) -> String {
    let sym = name.rsplit_once('!').map_or(name, |(_, s)| s);
    let sym = sym.split("+0x").next().unwrap_or(sym);
    sym.rsplit("::").next().unwrap_or(sym).to_string()
}

/// `run 61% · runq 3% · lock 30% queue_lock`: shares of thread time of at least 1%.
pub fn thread_time(t: &PointThreads) -> String {
    let total: f64 = t.classes.values().sum();
    if total <= 0.0 {
        return "—".into();
    }
    let pct = |c: Class| 100.0 * t.classes.get(&c).copied().unwrap_or(0.0) / total;
    // On a CPU, with the kernel's part of it in brackets: the parts add up to 100%.
    let run = pct(Class::CpuUser) + pct(Class::CpuKernel);
    let mut parts = vec![if pct(Class::CpuKernel) >= 1.0 {
        format!("run {run:.0}% (kern {:.0}%)", pct(Class::CpuKernel))
    } else {
        format!("run {run:.0}%")
    }];
    for c in Class::ALL.iter().copied().filter(|c| !matches!(c, Class::CpuUser | Class::CpuKernel))
    {
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

/// Lines for the waits section: the largest waits of a point with their share of thread time,
/// and the code its threads ran most.
pub fn wait_lines(label: &str, t: &PointThreads, with_hot: bool) -> Vec<String> {
    let total: f64 = t.classes.values().sum();
    let hot = t
        .hot
        .iter()
        .take(if with_hot { 2 } else { 0 })
        .filter(|h| h.share >= 0.1)
        .map(|h| format!("{} {:.0}%", h.name, 100.0 * h.share));
    let hot: Vec<String> = hot.collect();
    let on_cpu = (!hot.is_empty())
        .then(|| format!("{label}: on a CPU in {} (of CPU samples)", hot.join(", ")));
    let mut time = format!("{label}: thread time: {}", thread_time(t));
    if let Some((work, helpers)) = t.work_helpers {
        // A program that starts new threads as it goes (a pool per block) saw more work threads
        // than ever ran at once.
        let at_once = t
            .peak_work
            .filter(|&p| p > 0 && (p as f64) < work.round())
            .map_or(String::new(), |p| format!(", at most {p} alive at once"));
        time.push_str(&format!(
            " ({} work thread{}{at_once}, {} other{}",
            tenths(work),
            if work == 1.0 { "" } else { "s" },
            tenths(helpers),
            // Runs that differ give a mean count.
            if work.fract() != 0.0 || helpers.fract() != 0.0 {
                " on average over the runs"
            } else {
                ""
            }
        ));
        let on = |c: Class| t.classes.get(&c).copied().unwrap_or(0.0);
        let off_cpu = total - on(Class::CpuUser) - on(Class::CpuKernel) - on(Class::Runqueue);
        // Coverage of next to no off-CPU time says nothing.
        if let Some(c) = t.coverage.filter(|_| off_cpu >= 0.02 * total) {
            time.push_str(&format!("; samples saw {:.0}% of the off-CPU time", 100.0 * c));
        }
        time.push(')');
    }
    std::iter::once(time)
        .chain(
            by_site(&t.waits)
                .iter()
                .filter(|w| {
                    total > 0.0 && w.seconds / total >= 0.01 && w.class != Some(Class::Join)
                })
                .take(3)
                .map(|w| {
                    let class = w.class.map_or("wait", |c| c.short());
                    let who = if w.thread_names.is_empty() {
                        String::new()
                    } else {
                        format!(" ({})", w.thread_names.join(", "))
                    };
                    // Where a wait is taken says more than an address: `lock at
                    // pthread_mutex_lock ← update_histogram ← worker (heap+0x2a0)`.
                    let place = match &w.taken_at {
                        Some(site) => format!("at {site} ({})", w.name),
                        None => format!("on {}", w.name),
                    };
                    format!(
                        "{label}: {class} {place}: {:.0}% of thread time, {} waiting thread{}{who}",
                        100.0 * w.seconds / total,
                        w.waiters,
                        if w.waiters == 1 { "" } else { "s" }
                    )
                }),
        )
        .chain(on_cpu)
        .collect()
}

/// The waits as listed: those taken at one place in the code summed into one (a lock that each
/// run allocated at another address, a thread's own park event in a JVM), the work threads'
/// first.
fn by_site(waits: &[Wait]) -> Vec<Wait> {
    let mut out: Vec<Wait> = Vec::new();
    for w in waits {
        let same =
            |x: &&mut Wait| x.class == w.class && x.taken_at.is_some() && x.taken_at == w.taken_at;
        match out.iter_mut().find(same) {
            Some(x) => {
                x.seconds += w.seconds;
                x.work_s += w.work_s;
                x.waiters = x.waiters.max(w.waiters);
            }
            None => out.push(w.clone()),
        }
    }
    crate::results::sort_waits(&mut out);
    out
}

/// One line per rank (or copy) of each launched point: its node, mean wall and CPU time over
/// the successful runs, and where its threads' time went.
pub fn rank_lines(doc: &crate::results::Results) -> Vec<String> {
    let mut out = Vec::new();
    for p in &doc.points {
        let runs: Vec<_> = p.runs.iter().filter(|r| r.counted() && !r.ranks.is_empty()).collect();
        let Some(last) =
            runs.iter().map(|r| r.ranks.iter().map(|x| x.rank).max().unwrap_or(0)).max()
        else {
            continue;
        };
        for rank in 0..=last {
            let parts: Vec<_> =
                runs.iter().filter_map(|r| r.ranks.iter().find(|x| x.rank == rank)).collect();
            let Some(first) = parts.first() else { continue };
            let n = parts.len() as f64;
            let wall = parts.iter().map(|x| x.wall_s).sum::<f64>() / n;
            let cpu = parts.iter().map(|x| x.user_s + x.sys_s).sum::<f64>() / n;
            let reports: Vec<_> = parts.iter().filter_map(|x| x.threads.as_ref()).collect();
            let went = crate::analysis::threads::merge(&reports)
                .map(crate::diagnose::as_shown)
                .map(|t| format!(": {}", thread_time(&t)))
                .unwrap_or_default();
            out.push(format!(
                "{} rank {rank} on {}: {:.3} s, {:.3} s CPU{went}",
                p.label(),
                first.node,
                wall,
                cpu
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::analysis::threads::PointThreads;
    use crate::results::{Class, Wait};

    /// A point's threads with these classes of thread time and these waits.
    fn point(classes: &[(Class, f64)], waits: Vec<Wait>) -> PointThreads {
        PointThreads {
            classes: classes.iter().copied().collect(),
            waits,
            limits: vec![],
            peak_threads: 5,
            hot: vec![],
            coverage: None,
            work_helpers: None,
            peak_work: None,
        }
    }

    #[test]
    fn short_names_drop_module_path_and_offset() {
        assert_eq!(super::short_name("lock!queue_lock+0x0"), "queue_lock");
        assert_eq!(super::short_name("scalescope::probes::lock::GLOBAL_LOCK+0x0"), "GLOBAL_LOCK");
        assert_eq!(super::short_name("heap 0x7f00"), "heap 0x7f00");
    }

    #[test]
    fn a_wait_with_a_site_is_named_where_it_is_taken() {
        let wait = |taken_at: Option<&str>| Wait {
            class: Some(Class::Lock),
            name: "heap+0x2a0".into(),
            seconds: 1.0,
            waiters: 4,
            taken_at: taken_at.map(String::from),
            ..Default::default()
        };
        let t = point(
            &[(Class::Lock, 1.0), (Class::CpuUser, 1.0)],
            vec![wait(Some("pthread_mutex_lock ← update_histogram ← worker")), wait(None)],
        );
        let lines: Vec<String> = super::wait_lines("n=4", &t, false)
            .into_iter()
            .filter(|l| l.contains("waiting thread"))
            .collect();
        assert_eq!(
            lines[0],
            "n=4: lock at pthread_mutex_lock ← update_histogram ← worker (heap+0x2a0): 50% of thread time, 4 waiting threads"
        );
        assert_eq!(lines[1], "n=4: lock on heap+0x2a0: 50% of thread time, 4 waiting threads");
    }

    #[test]
    fn threads_started_as_the_work_goes_are_counted_with_the_most_alive_at_once() {
        // bzip3 -j 2 starts two threads per pair of blocks: eight worked, never more than two.
        let mut t = point(&[(Class::CpuUser, 2.0)], vec![]);
        t.work_helpers = Some((8.0, 1.0));
        t.peak_work = Some(2);
        let line = super::wait_lines("j=2", &t, false).remove(0);
        assert!(line.ends_with("(8 work threads, at most 2 alive at once, 1 other)"), "{line}");
        t.peak_work = Some(8);
        let line = super::wait_lines("j=2", &t, false).remove(0);
        assert!(line.ends_with("(8 work threads, 1 other)"), "{line}");
    }

    #[test]
    fn a_work_threads_wait_seen_at_another_address_each_run_is_one_line_before_helpers_waits() {
        // A JVM: the waiting worker's park event is at another address in each of three runs
        // (0.8% of thread time each), its compiler threads wait at one address all the run long.
        let wait = |name: &str, seconds: f64, work_s: f64, site: &str| Wait {
            class: Some(Class::WaitForWork),
            name: name.into(),
            seconds,
            work_s,
            waiters: 1,
            taken_at: Some(site.into()),
            ..Default::default()
        };
        let park = "pthread_cond_wait ← os::PlatformEvent::park ← ObjectMonitor::EnterI";
        let t = point(
            &[(Class::WaitForWork, 0.2), (Class::CpuUser, 9.8)],
            vec![
                wait("heap 0x…208", 1.0, 0.0, "pthread_cond_timedwait ← Monitor::wait"),
                wait("heap 0x…d78", 0.08, 0.08, park),
                wait("heap 0x…a78", 0.08, 0.08, park),
                wait("heap 0x…978", 0.08, 0.08, park),
            ],
        );
        let lines: Vec<String> = super::wait_lines("threads=2", &t, false)
            .into_iter()
            .filter(|l| l.contains("waiting thread"))
            .collect();
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert!(
            lines[0].contains("ObjectMonitor::EnterI (heap 0x…d78): 2% of thread time"),
            "{lines:?}"
        );
        assert!(lines[1].contains("Monitor::wait"), "{lines:?}");
    }
}
