//! Rules for launched runs: a straggler rank the others wait for, ranks that failed or never
//! reported, and concurrent copies that do or do not slow each other down.

use super::evidence::top_wait;
use super::{Finding, Kind, Severity};
use crate::analysis::threads::PointThreads;
use crate::results::analysis::PointScaling;
use crate::results::{Class, RankPart, Results};

/// A rank this much slower than the median rank, and by at least [`STRAGGLER_MIN_S`], straggles.
const STRAGGLER_RATIO: f64 = 1.2;
/// The smallest lag worth a finding, seconds.
const STRAGGLER_MIN_S: f64 = 0.05;

/// Straggler and failed-rank findings over every point.
pub fn rules(doc: &Results, out: &mut Vec<Finding>) {
    for p in &doc.points {
        let launched: Vec<_> =
            p.runs.iter().filter(|r| !r.ranks.is_empty() || !r.missing_ranks.is_empty()).collect();
        if launched.is_empty() {
            continue;
        }
        let label = p.label();
        let mut failures: Vec<String> = Vec::new();
        for (i, r) in launched.iter().enumerate() {
            for part in r.ranks.iter().filter(|x| !x.succeeded()) {
                let how = match (part.exit_code, part.signal) {
                    (Some(c), _) => format!("exit code {c}"),
                    (_, Some(s)) => format!("killed by {}", crate::results::signal_name(s)),
                    _ => "no exit status".into(),
                };
                failures.push(format!(
                    "run {}: rank {} on {} failed ({how})",
                    i + 1,
                    part.rank,
                    part.node
                ));
            }
            for m in &r.missing_ranks {
                failures.push(format!(
                    "run {}: rank {m} never reported (it crashed before writing its part, or never started)",
                    i + 1
                ));
            }
        }
        if !failures.is_empty() {
            out.push(Finding {
                noise: None,
                kind: Kind::FailedRanks,
                severity: Severity::High,
                summary: format!(
                    "at {label} {} rank failure(s) in {} run(s); the other ranks' figures are kept",
                    failures.len(),
                    launched.len()
                ),
                evidence: failures.into_iter().take(8).collect(),
                advice: "read the failed rank's output (saved with the run), and its node's logs"
                    .into(),
                cost_pct: None,
                cost_per_run_pct: Vec::new(),
                at: None,
                what_if: None,
            });
        }
        let mut lags: Vec<(u32, String, f64, f64)> = Vec::new();
        for r in
            launched.iter().filter(|r| r.ranks.len() >= 2 && r.ranks.iter().all(|x| x.succeeded()))
        {
            let mut walls: Vec<f64> = r.ranks.iter().map(|x| x.wall_s).collect();
            walls.sort_by(f64::total_cmp);
            let median = crate::stats::quantile(&walls, 0.5);
            if let Some(slow) = r.ranks.iter().max_by(|a, b| a.wall_s.total_cmp(&b.wall_s))
                && slow.wall_s >= STRAGGLER_RATIO * median
                && slow.wall_s - median >= STRAGGLER_MIN_S
            {
                lags.push((slow.rank, slow.node.clone(), slow.wall_s, median));
            }
        }
        let judged = launched.iter().filter(|r| r.ranks.len() >= 2).count();
        if let Some((rank, node, _, _)) = lags.first().cloned() {
            let same: Vec<&(u32, String, f64, f64)> = lags.iter().filter(|l| l.0 == rank).collect();
            if same.len() * 2 > judged {
                let slow = same.iter().map(|l| l.2).sum::<f64>() / same.len() as f64;
                let median = same.iter().map(|l| l.3).sum::<f64>() / same.len() as f64;
                out.push(Finding { noise: None,
                    kind: Kind::RankImbalance,
                    severity: if slow >= 1.5 * median { Severity::High } else { Severity::Medium },
                    summary: format!(
                        "at {label} rank {rank} on {node} finishes {:.0}% after the median rank ({slow:.3} s against {median:.3} s): the others wait for it",
                        100.0 * (slow / median - 1.0)
                    ),
                    evidence: vec![format!("rank {rank} was the slowest in {} of {judged} runs", same.len())],
                    advice: format!("give ranks equal work (smaller pieces, handed out dynamically), or look at {node}: a slower CPU, busy neighbours, placement"),
                    cost_pct: None,
                    cost_per_run_pct: Vec::new(),
                    at: None,
                    what_if: None,
                });
            }
        }
    }
}

/// Mean of a figure of a point's copies (every rank of every successful run): their wall time,
/// their CPU time.
fn copy_mean(doc: &Results, point: usize, figure: fn(&RankPart) -> f64) -> Option<f64> {
    let values: Vec<f64> = doc.points[point]
        .runs
        .iter()
        .filter(|r| r.counted())
        .flat_map(|r| r.ranks.iter().map(figure))
        .collect();
    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
}

/// Per counted run of a point, its round and the mean of a figure over its copies.
fn per_run(doc: &Results, point: usize, figure: fn(&RankPart) -> f64) -> Vec<(Option<u32>, f64)> {
    doc.points[point]
        .runs
        .iter()
        .filter(|r| r.counted() && !r.ranks.is_empty())
        .map(|r| (r.round, r.ranks.iter().map(figure).sum::<f64>() / r.ranks.len() as f64))
        .collect()
}

/// The 95% interval of one copy's speed at the top point against the base: the ratio of their
/// copies' figure, base over top for a time, top over base for the work done in a fixed time (CPU
/// time). From the per-round ratios where both ran in the same rounds, else by Welch's delta
/// method; `None` with fewer than two runs on a side.
fn speed_interval(doc: &Results, (base, top): (usize, usize), by_cpu: bool) -> Option<[f64; 2]> {
    use crate::stats::sequential::{Confidence, by_rounds_or_not};
    let figure = if by_cpu { rank_cpu } else { rank_wall };
    let (a, b) = (per_run(doc, base, figure), per_run(doc, top, figure));
    let [lo, hi] = by_rounds_or_not(&b, &a, Confidence::FIXED)?.interval();
    Some(if by_cpu { [1.0 / hi, 1.0 / lo] } else { [lo, hi] })
}

/// A copy's wall time.
fn rank_wall(x: &RankPart) -> f64 {
    x.wall_s
}

/// A copy's CPU time.
fn rank_cpu(x: &RankPart) -> f64 {
    x.user_s + x.sys_s
}

/// A point's CPUs, on average over its runs, each over the window the samplers watched (the
/// copies' lives: a launched run's wall time also holds its agents' start and end).
#[derive(Clone, Copy)]
struct Cpus {
    /// The CPUs the runs used.
    used: f64,
    /// The CPUs they wanted: on a CPU or waiting for one.
    wanted: f64,
    /// The job's CPUs other processes (scalescope's sampling included) left free.
    free: f64,
}

/// The CPUs of a point's runs; `None` when they were not sampled.
fn cpus_at(doc: &Results, point: usize) -> Option<Cpus> {
    let per_run: Vec<(f64, f64, f64)> = doc.points[point]
        .runs
        .iter()
        .filter(|r| r.counted())
        .filter_map(|r| {
            let t = r.threads.as_deref()?;
            let (m, window) = (t.machine_cpu?, t.wall_s);
            let cpu = r.user_s + r.sys_s;
            (window > 0.0).then(|| {
                // scalescope's own CPU is not the copies' either.
                let others = (m.busy_s - cpu).max(0.0) / window;
                (cpu / window, (cpu + t.seconds(Class::Runqueue)) / window, others)
            })
        })
        .collect();
    if per_run.is_empty() {
        return None;
    }
    let n = per_run.len() as f64;
    let (used, wanted, others) =
        per_run.iter().fold((0.0, 0.0, 0.0), |a, r| (a.0 + r.0 / n, a.1 + r.1 / n, a.2 + r.2 / n));
    Some(Cpus { used, wanted, free: (doc.machine.allowed_cpus as f64 - others).max(0.1) })
}

/// The CPUs of the copies at the base and at the top count, and what one copy wants alone.
struct CopyCpus {
    base: Cpus,
    top: Cpus,
    /// The CPUs one copy used or waited for at the base.
    one: f64,
}

impl CopyCpus {
    fn of(doc: &Results, top: &PointScaling, base: &PointScaling) -> Option<CopyCpus> {
        let (base_cpus, top_cpus) = (cpus_at(doc, base.index)?, cpus_at(doc, top.index)?);
        Some(CopyCpus {
            base: base_cpus,
            top: top_cpus,
            one: base_cpus.wanted / base.count.max(1.0),
        })
    }

    /// The share of one copy's speed alone that the free CPUs allowed each copy at the top count
    /// against at the base. The CPUs limit a point only where its copies waited for one
    /// ([`CPU_BOUND`] of the time they wanted one): copies that wait on each other (a lock file)
    /// leave CPUs idle.
    fn allowed(&self, top: &PointScaling, base: &PointScaling) -> f64 {
        let cap = |c: Cpus, k: f64| {
            if c.wanted - c.used < CPU_BOUND * c.wanted {
                1.0
            } else {
                (c.free / (k * self.one).max(1e-6)).min(1.0)
            }
        };
        cap(self.top, top.count) / cap(self.base, base.count)
    }
}

/// Growth of a wait on a shared resource (points of thread time, from one copy to the top count)
/// that says copies wait on each other whatever the machine's load.
const SHARED_WAIT: f64 = 0.15;

/// The share of the time a point's copies wanted a CPU that they waited for one, past which the
/// CPUs limit them.
const CPU_BOUND: f64 = 0.2;

/// Copies slowed as much as the CPUs explain: when they want more CPUs than the job may use, a
/// finding says so (other processes' share is said by the causes).
fn too_many(
    doc: &Results,
    n: f64,
    one: f64,
    eff: f64,
    each: &str,
    label: &str,
    out: &mut Vec<Finding>,
) {
    let cpus = doc.machine.allowed_cpus as f64;
    let wanted = n * one;
    if wanted < 1.1 * cpus {
        return;
    }
    let fit = (cpus / one + 0.1).floor().max(1.0);
    let copies = if fit == 1.0 { "copy" } else { "copies" };
    out.push(Finding {
        noise: None,
        kind: Kind::CpuOversubscription,
        severity: if eff < 0.6 { Severity::Medium } else { Severity::Low },
        summary: format!(
            "{each}: {n} copies want {wanted:.1} CPUs and the job may use {cpus:.0}, so they take turns on them{label}"
        ),
        evidence: vec![format!("each copy kept {one:.2} CPUs busy or waiting for one alone")],
        advice: format!("run at most {fit:.0} {copies} at once here, or give each fewer threads"),
        cost_pct: None,
        cost_per_run_pct: Vec::new(),
        at: Some(n),
        what_if: None,
    });
}

/// Whether copies slow each other: each copy's wall time at the top count against one copy's
/// alone (what a user of the shared machine feels, whatever the program reports). `moved` gives
/// how much a class's share of thread time grew from one copy to the top count.
pub fn copies(
    doc: &Results,
    top: &PointScaling,
    base: &PointScaling,
    moved: &dyn Fn(Class) -> f64,
    et: Option<&PointThreads>,
    label: &str,
    out: &mut Vec<Finding>,
) {
    let (Some(alone), Some(together)) =
        (copy_mean(doc, base.index, rank_wall), copy_mean(doc, top.index, rank_wall))
    else {
        return;
    };
    let n = top.count;
    let mut eff = alone / together;
    let mut by_cpu = false;
    let mut each = format!("each of {n} copies runs at {:.0}% of one copy's speed", 100.0 * eff);
    // Copies that run for a fixed time take as long together as alone: their CPU time tells.
    let commands: Vec<&[String]> =
        [base, top].iter().map(|p| doc.points[p.index].command.as_slice()).collect();
    if let (Some(cpu_b), Some(cpu_t)) =
        (copy_mean(doc, base.index, rank_cpu), copy_mean(doc, top.index, rank_cpu))
        && let Some((f, kept)) = super::fixed_time::copies(
            &commands,
            (base.count, n),
            (alone, together),
            (cpu_b, cpu_t),
            label,
        )
    {
        out.push(f);
        eff = kept;
        by_cpu = true;
        each = format!(
            "each of {n} copies did {:.0}% of one copy's work alone, by CPU time",
            100.0 * eff
        );
    }
    if eff >= 0.9 {
        out.push(Finding {
            noise: None,
            kind: Kind::CopiesIndependent,
            severity: Severity::Info,
            summary: format!("{each}: they do not slow each other{label}"),
            evidence: vec![format!(
                "a copy takes {together:.3} s with {n} running, {alone:.3} s with {}",
                base.count
            )],
            advice: "the machine has room for this many concurrent users of this job".into(),
            cost_pct: None,
            cost_per_run_pct: Vec::new(),
            at: Some(n),
            what_if: None,
        });
        return;
    }
    // The CPUs free of other processes may not hold every copy: the slowdown they explain is the
    // machine's load (or more copies than CPUs), not a resource the copies share.
    let cpus = CopyCpus::of(doc, top, base);
    let allowed = cpus.as_ref().map_or(1.0, |c| c.allowed(top, base));
    if eff >= 0.8 {
        return;
    }
    let mut grew: Vec<(f64, Class, String)> = [
        Class::Io,
        Class::KernelLock,
        Class::Lock,
        Class::Runqueue,
        Class::Other,
        Class::Ipc,
        Class::Sleep,
    ]
    .into_iter()
    .filter_map(|c| {
        let d = moved(c);
        let top_wait =
            et.and_then(|e| top_wait(e, c)).map(|w| format!(": {w}")).unwrap_or_default();
        (d >= 0.05).then(|| {
            (
                d,
                c,
                format!(
                    "{} wait grew by {:.0} points of thread time{top_wait}",
                    c.name(),
                    100.0 * d
                ),
            )
        })
    })
    .collect();
    // Copies that wait on each other (a lock file, one disk) do so whatever the machine's load:
    // beside a busy program the free CPUs also explain their slowdown, and a lock file's waits of
    // a third of the copies' time read as the load's alone.
    let waits_on_each_other = grew.iter().any(|(d, c, _)| {
        *d >= SHARED_WAIT && matches!(c, Class::Io | Class::KernelLock | Class::Lock | Class::Ipc)
    });
    if eff >= 0.8 * allowed && !waits_on_each_other {
        if let Some(c) = &cpus {
            too_many(doc, n, c.one, eff, &each, label, out);
        }
        return;
    }
    // Runs too varied to tell the copies' speed from one that does not interfere: CI's copies
    // beside a busy program varied by ±103% alone and ±54% together, and their mean read 71%.
    if speed_interval(doc, (base.index, top.index), by_cpu).is_some_and(|[_, hi]| hi >= 0.8) {
        return;
    }
    grew.sort_by(|a, b| b.0.total_cmp(&a.0));
    // Beside other processes, copies that only wait longer for a CPU (or for nothing) cannot be
    // told from copies the machine's load slowed more than its CPU share says: CI's copies beside
    // a busy program ran at 67% where the free CPUs allowed 84%, their run-queue wait 11 points
    // longer. Unless the slowdown is far past what the load explains, the load's finding speaks.
    let shared = grew.iter().any(|(_, c, _)| *c != Class::Runqueue);
    if allowed < 0.95 && !shared && eff >= 0.6 * allowed {
        return;
    }
    let mut evidence = vec![format!(
        "a copy takes {together:.3} s with {n} running, {alone:.3} s with {}",
        base.count
    )];
    evidence.extend(grew.into_iter().take(3).map(|g| g.2));
    if evidence.len() == 1 {
        evidence.push(
            "no wait grew: the copies compete on the CPUs themselves (memory bandwidth, caches, frequency)".into(),
        );
    }
    if allowed < 0.95 {
        evidence.push(format!(
            "the CPUs free of other processes allowed each copy {:.0}% of one copy's speed: the rest is the copies' own",
            100.0 * allowed
        ));
    }
    out.push(Finding { noise: None,
        kind: Kind::CopiesInterfere,
        severity: if eff < 0.6 * allowed { Severity::High } else { Severity::Medium },
        summary: format!("{each}: they compete for a shared resource{label}"),
        evidence,
        advice: "find the shared resource (the waits above: a disk, a lock file, memory bandwidth) and give each copy its own, or run fewer at once".into(),
        cost_pct: None,
        cost_per_run_pct: Vec::new(),
        at: Some(n),
        what_if: None,
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::RunRecord;

    /// Two points of copies (1 and 2), each run given as its copies' wall times, in rounds.
    fn doc(points: [&[&[f64]]; 2]) -> Results {
        let request = crate::plan::Request {
            command: vec!["prog".into()],
            params: vec!["copies=1,2".into()],
            ..Default::default()
        };
        let mut doc = Results::new(crate::plan::build(&request, 2).unwrap(), vec![]).unwrap();
        for (p, runs) in points.iter().enumerate() {
            for (i, walls) in runs.iter().enumerate() {
                let ranks = walls
                    .iter()
                    .enumerate()
                    .map(|(k, &wall_s)| RankPart {
                        rank: k as u32,
                        wall_s,
                        user_s: wall_s,
                        ..Default::default()
                    })
                    .collect();
                doc.points[p].runs.push(RunRecord {
                    index: i as u32,
                    round: Some(i as u32),
                    wall_s: walls.iter().copied().fold(0.0, f64::max),
                    exit_code: Some(0),
                    ranks,
                    ..Default::default()
                });
            }
        }
        doc
    }

    #[test]
    fn a_copys_speed_is_bounded_by_its_rounds_and_wild_runs_leave_it_open() {
        // Every round, two copies take 1.4× one alone: the slowdown is clear.
        let steady =
            doc([&[&[1.0], &[1.02], &[0.98]], &[&[1.4, 1.4], &[1.43, 1.42], &[1.37, 1.38]]]);
        let [lo, hi] = speed_interval(&steady, (0, 1), false).unwrap();
        assert!(lo < 1.0 / 1.4 && 1.0 / 1.4 < hi && hi < 0.8, "{lo} {hi}");
        // Runs of one copy alone from 0.2 to 1.0 s: a mean of 71% tells nothing.
        let wild = doc([&[&[0.2], &[1.0], &[0.26]], &[&[0.6, 0.7], &[0.5, 0.9], &[0.7, 0.7]]]);
        assert!(speed_interval(&wild, (0, 1), false).unwrap()[1] >= 0.8);
        // By CPU time, work done in a fixed time: more CPU with two is a faster copy.
        let [a, b] = speed_interval(&steady, (0, 1), true).unwrap();
        assert!((a * hi - 1.0).abs() < 1e-9 && (b * lo - 1.0).abs() < 1e-9, "{a} {b}");
    }
}
