//! Findings about the shape of the curve rather than a cause: scales well, a serial fraction
//! (Amdahl), retrograde, more threads than CPUs, a parameter the program ignores, runs too short
//! to measure, and noisy runs.

use super::ledger::{self, Cause, Ledger};
use super::{Finding, Kind, NoiseSource, Severity};
use crate::analysis::count_label;
use crate::analysis::threads::PointThreads;
use crate::fmt::count_tenths;
use crate::results::analysis::{PointScaling, SeriesAnalysis};
use crate::results::{Class, Results};
use std::collections::BTreeMap;

/// Efficiency at or above which a count is said to scale well.
pub const GOOD_EFFICIENCY: f64 = 0.90;
/// An efficiency whose interval lies within this of 90% reads the same either way: "scales well
/// within the runs' noise" or a small gap whose causes are described, not raised.
pub const INDIFFERENT: f64 = 0.05;

/// The efficiency's 95% interval, from the speed-up's (the point value twice without one).
pub fn efficiency_interval(p: &PointScaling, base_count: f64) -> Option<[f64; 2]> {
    let e = p.efficiency?;
    let rel = p.count / base_count;
    Some(p.speedup_ci95.map_or([e, e], |[lo, hi]| [lo / rel, hi / rel]))
}

/// `scales well: 1.97× at 2 threads against 1 (99% efficiency)`, judged at `top`; `cpus` are those
/// of this machine when the count runs on it.
pub fn scales_well(
    s: &SeriesAnalysis,
    top: &PointScaling,
    (name, cpus): (&str, Option<f64>),
    [eff, eff_lo, eff_hi]: [f64; 3],
    label: &str,
    overlapped: Option<&Ledger>,
) -> Option<Finding> {
    top.efficiency?;
    let within = if eff < GOOD_EFFICIENCY {
        // One decimal where whole percents would read "of 90% (up to 90%)".
        let hi = if (100.0 * eff_hi).round() == (100.0 * GOOD_EFFICIENCY).round() {
            format!("{:.1}", 100.0 * eff_hi)
        } else {
            format!("{:.0}", 100.0 * eff_hi)
        };
        format!(", within the runs' noise of {:.0}% (up to {hi}%)", 100.0 * GOOD_EFFICIENCY)
    } else if eff_lo < GOOD_EFFICIENCY
        && !(eff_lo >= GOOD_EFFICIENCY - INDIFFERENT && eff_hi <= GOOD_EFFICIENCY + INDIFFERENT)
    {
        // The runs added to decide it ran out first (the question the notes say is still open):
        // the verdict is the measurement's, and says so.
        format!(
            ", though the runs place it anywhere from {:.0}% to {:.0}%",
            100.0 * eff_lo,
            100.0 * eff_hi
        )
    } else {
        String::new()
    };
    Some(Finding {
        noise: None,
        kind: Kind::ScalesWell,
        severity: Severity::Info,
        summary: format!(
            "{:.2}× at {} against {} ({:.0}% efficiency{within}){label}",
            top.speedup,
            count_label(top.count, name),
            s.baseline,
            100.0 * eff
        ),
        evidence: s
            .points
            .iter()
            .map(|p| format!("{}: {:.2}×", count_label(p.count, name), p.speedup))
            .collect(),
        advice: overlapped
            .and_then(|l| waits_overlapped(l, top, name))
            .unwrap_or_else(|| where_next(s, top, name, cpus)),
        cost_pct: None,
        cost_per_run_pct: Vec::new(),
        at: Some(top.count),
        what_if: None,
    })
}

/// A job that keeps at most this share of its CPUs busy at the top count scales, when it does,
/// by overlapping its threads' waits, not by filling the CPUs.
const OVERLAPPED_BUSY: f64 = 0.5;

/// …and one class of its waits idled at least this share of them.
const WAITS_IDLED: f64 = 0.2;

/// `it scales by overlapping its threads' waits (io, fdatasync), not by filling the CPUs: …`, when
/// the top count kept under [`OVERLAPPED_BUSY`] of its CPUs busy and one class of its waits idled
/// [`WAITS_IDLED`] of them: then more threads than CPUs are what to try, not another machine.
fn waits_overlapped(l: &Ledger, top: &PointScaling, name: &str) -> Option<String> {
    let capacity = (l.capacity * l.wall_s).max(1e-12);
    let busy = (l.cpu_s - l.over_s) / capacity;
    if busy > OVERLAPPED_BUSY {
        return None;
    }
    // The job's own waits by class (other processes' load and the hypervisor's are not the
    // job's), and the largest object of the class that idled the most.
    let waits = || {
        l.items.iter().filter_map(|i| match &i.cause {
            Cause::Wait { class, object } => Some((*class, object.as_str(), i.core_s)),
            _ => None,
        })
    };
    let mut by_class: BTreeMap<Class, f64> = BTreeMap::new();
    for (class, _, core_s) in waits() {
        *by_class.entry(class).or_default() += core_s;
    }
    let (class, _) = by_class
        .into_iter()
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .filter(|(_, s)| *s >= WAITS_IDLED * capacity)?;
    let (_, object, _) = waits().filter(|w| w.0 == class).max_by(|a, b| a.2.total_cmp(&b.2))?;
    let on = if object.is_empty() { String::new() } else { format!(", {object}") };
    // The capacity is a mean over runs (2.0000000000000004 CPUs): said to a tenth.
    let cpus = crate::fmt::tenths(l.capacity);
    Some(format!(
        "it scales by overlapping its threads' waits ({}{on}), not by filling the CPUs: at {} the job kept {:.0}% of its {cpus} CPU{} busy; more {name} help until what they wait on is saturated, also past the CPUs: measure higher counts",
        class.short(),
        count_label(top.count, name),
        100.0 * busy,
        if cpus == "1" { "" } else { "s" },
    ))
}

/// Where to measure to find where scaling stops: higher counts while they fit the CPUs; when the
/// sweep reached the CPUs (or measured beyond them, which only time-shares them), another machine.
fn where_next(s: &SeriesAnalysis, top: &PointScaling, name: &str, cpus: Option<f64>) -> String {
    let Some(cpus) = cpus else { return "measure at higher counts to find where it stops".into() };
    let beyond = s.points.iter().any(|p| p.count > top.count);
    if beyond || top.count >= cpus {
        format!(
            "it scales to the {cpus} CPUs this job may use{}: to find where it stops, sweep it on a machine with more CPUs",
            if beyond {
                format!(", and more {name} than CPUs only share them")
            } else {
                String::new()
            }
        )
    } else {
        format!(
            "measure at higher counts, up to the {cpus} CPUs this job may use, to find where it stops"
        )
    }
}

/// A window of a running job (`attach`) whose threads kept the CPUs they could use busy: nothing
/// idled them. Whether the work per CPU holds up as threads are added only a sweep can tell.
/// `own_gap` is the share of the capacity the job itself left idle (other processes' load left out).
pub fn busy_window(l: &Ledger, own_gap: f64) -> Finding {
    Finding { noise: None,
        kind: Kind::ScalesWell,
        severity: Severity::Info,
        summary: format!(
            "its threads kept the {} CPU{} they could use busy in the window but for {:.0}% of their capacity: no wait of theirs idled them",
            count_tenths(l.capacity),
            if l.capacity == 1.0 { "" } else { "s" },
            100.0 * own_gap.max(0.0)
        ),
        evidence: vec![format!("{:.2} of {:.2} core-seconds lost", l.lost_s, l.capacity * l.wall_s)],
        advice: "whether the work each CPU does holds up as threads are added (false sharing, memory bandwidth), only a sweep tells: scalescope run --param threads=…".into(),
        cost_pct: None,
        cost_per_run_pct: Vec::new(),
        at: None,
        what_if: None,
    }
}

/// A window of a running job whose threads want more CPUs than it may use and wait for them a
/// tenth of their time or more: more threads than CPUs, said first as a sweep past the CPUs says it.
pub fn crowded_window(t: &PointThreads, l: &Ledger, cpus: f64) -> Option<Finding> {
    let total: f64 = t.classes.values().sum();
    let runq = t.classes.get(&Class::Runqueue).copied().unwrap_or(0.0) / total.max(1e-12);
    (l.demand > cpus + 0.5 && runq >= 0.1).then(|| Finding {
        noise: None,
        kind: Kind::CpuOversubscription,
        severity: Severity::Low,
        summary: format!(
            "{:.0} threads want a CPU at once on {} CPUs: they wait for one {:.0}% of their time",
            l.demand,
            count_tenths(cpus),
            100.0 * runq
        ),
        evidence: vec![format!("{:.1} CPUs busy on average", l.cpu_s / l.wall_s.max(1e-9))],
        advice: format!(
            "run at most {} busy threads (the CPUs this job may use); threads beyond them only take turns",
            count_tenths(cpus)
        ),
        cost_pct: None,
        cost_per_run_pct: Vec::new(),
        at: None,
        what_if: None,
    })
}

/// A baseline that already kept more CPUs busy than its count, so that the top count wants more
/// CPUs than there are: `cpu-oversubscription`, with what its CPU use allowed.
pub fn busy_baseline(
    base: &PointScaling,
    top: &PointScaling,
    (busy, possible): (f64, f64),
    eff: f64,
    (name, cpus, label): (&str, f64, &str),
) -> Finding {
    let share = busy_baseline_share(base, top, possible);
    Finding {
        noise: None,
        kind: Kind::CpuOversubscription,
        severity: busy_baseline_severity(share, 1.0 - top.efficiency.unwrap_or(1.0)),
        summary: format!(
            "at {} the job already kept {busy:.1} of the {} CPUs busy: at {} it wants more CPUs than there are, so at most {possible:.2}× was possible{label}",
            count_label(base.count, name),
            count_tenths(cpus),
            count_label(top.count, name)
        ),
        evidence: vec![
            format!(
                "measured {:.2}× at {}: {:.0}% of what the CPUs allowed (the table's efficiency is against the counts)",
                top.speedup,
                count_label(top.count, name),
                100.0 * eff
            ),
            busy_baseline_gap_line(base, top, share),
        ],
        advice: format!(
            "'{name}' is not the number of busy threads here (a caller or threads of the program's own work beside them): on {} CPUs the smallest count already uses them; sweep on a machine with more CPUs to see it scale",
            count_tenths(cpus)
        ),
        cost_pct: None,
        cost_per_run_pct: Vec::new(),
        at: Some(top.count),
        what_if: None,
    }
}

/// The share of the gap between the counts' speed-up and the measured one that a busy baseline's
/// CPU use accounts for: `(counts − possible) / (counts − measured)`, within 0–1.
pub fn busy_baseline_share(base: &PointScaling, top: &PointScaling, possible: f64) -> f64 {
    let rel = top.count / base.count;
    let gap = rel - top.speedup;
    if gap <= 0.0 { 0.0 } else { ((rel - possible) / gap).clamp(0.0, 1.0) }
}

/// `the CPUs' limit accounts for 83% of the gap between 2.00× (the counts) and the 0.95× measured`.
pub fn busy_baseline_gap_line(base: &PointScaling, top: &PointScaling, share: f64) -> String {
    format!(
        "the CPUs' limit accounts for {:.0}% of the gap between {:.2}× (the counts) and the {:.2}× measured",
        100.0 * share,
        top.count / base.count,
        top.speedup
    )
}

/// A busy baseline is raised (medium, and read first) when it accounts for most of a large gap
/// (`counts_gap`, 1 − the table's efficiency), as a cause would be; it is how the count is
/// defined, not a defect, so never high.
pub fn busy_baseline_severity(share: f64, counts_gap: f64) -> Severity {
    use super::causes::{HIGH_GAP, HIGH_SHARE};
    if share >= HIGH_SHARE && counts_gap >= HIGH_GAP { Severity::Medium } else { Severity::Low }
}

/// `the baseline (1 thread) already kept 1.8 CPUs busy: on 2 CPUs at most 1.11× was possible at
/// 2 threads, and 1.02× is 92% of it`.
pub fn busy_baseline_line(
    base: &PointScaling,
    top: &PointScaling,
    (busy, possible): (f64, f64),
    eff: f64,
    (name, cpus): (&str, f64),
) -> String {
    format!(
        "the baseline ({}) already kept {busy:.1} CPUs busy: on {} CPUs at most {possible:.2}× was possible at {}, and {:.2}× is {:.0}% of it (the efficiency judged here; the table's is against the counts)",
        count_label(base.count, name),
        count_tenths(cpus),
        count_label(top.count, name),
        top.speedup,
        100.0 * eff
    )
}

/// Below this low end of the efficiency's interval, a sweep whose interval also reaches
/// [`GOOD_EFFICIENCY`] cannot say whether the program scales.
pub const UNDECIDED_BELOW: f64 = 0.75;

/// `the efficiency at 2 threads is anywhere from 45% to 100%`: too few or too varied runs to say
/// whether it scales. `causes` says whether cause findings at that count follow it; `doc` says
/// how many runs were added to decide it and why they vary.
pub fn undecided(
    doc: &Results,
    top: &PointScaling,
    name: &str,
    [lo, hi]: [f64; 2],
    causes: bool,
    label: &str,
) -> Finding {
    let mut evidence = vec![format!(
        "measured {:.0}% from {} runs",
        100.0 * top.efficiency.unwrap_or(0.0),
        top.runs
    )];
    let seq = doc.sequential.as_ref();
    match seq {
        Some(s) if !s.undecided.is_empty() => evidence.push(format!(
            "runs were added for {:.0} s (budget {:.0} s, --budget) and still could not tell",
            s.spent_s, s.budget_s
        )),
        Some(_) => {}
        None => evidence
            .push("the number of runs was fixed (--runs): none were added to decide it".into()),
    }
    let noise = super::noise::of(doc);
    evidence.extend(noise.as_ref().map(|n| format!("why the runs vary: {}", n.evidence)));
    let more = match (seq, &noise) {
        (_, Some(n)) => n.advice().to_string(),
        (Some(_), None) => "a quieter machine, or a larger --budget".into(),
        (None, None) => {
            "more runs (leave --runs out: scalescope adds runs until the answer is clear), on a quieter machine".into()
        }
    };
    Finding {
        noise: Some(NoiseSource::Undecided),
        kind: Kind::NoisyMeasurement,
        severity: Severity::Low,
        summary: format!(
            "the efficiency at {} is anywhere from {:.0}% to {:.0}% (95% interval): the runs cannot tell whether it scales{label}",
            count_label(top.count, name),
            100.0 * lo,
            100.0 * hi
        ),
        evidence,
        advice: if causes {
            format!("{more}; the causes below say where the capacity went in these runs")
        } else {
            more
        },
        cost_pct: None,
        cost_per_run_pct: Vec::new(),
        at: Some(top.count),
        what_if: None,
    }
}

/// A slowdown smaller than this share is `low`: real by the runs, but no main limit.
const SLIGHTLY_SLOWER: f64 = 5.0;
/// A slowdown smaller than this share is `medium`.
const CLEARLY_SLOWER: f64 = 10.0;

/// More is slower beyond the best point — unless only oversubscribed points are slower, which the
/// oversubscription finding says. How much slower sets the severity: 1% slower at 2 threads is
/// true and worth knowing, and no main limit.
pub fn retrograde(
    s: &SeriesAnalysis,
    name: &str,
    cpus: f64,
    local: bool,
    label: &str,
) -> Option<Finding> {
    let r = s.retrograde.as_ref()?;
    if local && r.beyond >= cpus.min(s.fitted_up_to) && r.at > cpus {
        return None;
    }
    let slower = -r.change_pct;
    let severity = if slower < SLIGHTLY_SLOWER {
        Severity::Low
    } else if slower < CLEARLY_SLOWER {
        Severity::Medium
    } else {
        Severity::High
    };
    Some(Finding {
        noise: None,
        kind: Kind::Retrograde,
        severity,
        summary: format!(
            "beyond {}, more is slower: {} give {:+.0}%{label}",
            count_label(r.beyond, name),
            count_label(r.at, name),
            r.change_pct
        ),
        evidence: vec![
            format!("best: {}", count_label(r.beyond, name)),
            format!("judged by: {}", r.judged_by),
        ],
        advice: format!(
            "run at {}; the cause findings of this sweep, where there are any, say what grows with the count",
            count_label(r.beyond, name)
        ),
        cost_pct: None,
        cost_per_run_pct: Vec::new(),
        at: Some(r.at),
        what_if: None,
    })
}

/// The work point `p` did against point `of`: measured where every run of both has a throughput
/// (a fixed-time benchmark does more work at more threads); else, under weak scaling, in
/// proportion to the counts (each thread, copy or rank does a share of its own); else the same.
pub fn work_ratio(doc: &Results, of: &PointScaling, p: &PointScaling, weak: bool) -> f64 {
    let work = |p: &PointScaling| -> Option<f64> {
        let done: Option<Vec<f64>> = doc.points[p.index]
            .runs
            .iter()
            .filter(|r| r.counted())
            .map(|r| r.throughput.map(|t| t * r.wall_s))
            .collect();
        crate::stats::Summary::of(&done?).map(|s| s.mean).filter(|w| *w > 0.0 && w.is_finite())
    };
    match (work(p), work(of)) {
        (Some(a), Some(b)) => a / b,
        _ if weak => p.count / of.count,
        _ => 1.0,
    }
}

/// Other processes' share of the machine's CPUs from which more threads than CPUs may have
/// gained by taking more of them.
const LOADED_MACHINE: f64 = 0.1;

/// Counts above the CPUs: whether they gained anything over the best count that fits.
pub fn oversubscription(
    doc: &Results,
    s: &SeriesAnalysis,
    (name, cpus, label): (&str, f64, &str),
    weak: bool,
) -> Option<Finding> {
    let over: Vec<&PointScaling> = s.points.iter().filter(|p| p.count > cpus).collect();
    let last = *over.last()?;
    // No more work threads than CPUs alive at once at that count (a program that caps its threads
    // at the CPUs, like OpenBLAS, or a runtime that keeps its extra threads asleep, like Erlang's
    // schedulers): nothing was oversubscribed, and a gain there is not the CPUs' doing.
    let last_ledger = ledger::of(&doc.points[last.index], None);
    let capped = last_ledger.as_ref().map(|l| l.peak_work_threads).filter(|&n| n as f64 <= cpus);
    let fit =
        s.points.iter().filter(|p| p.count <= cpus).max_by(|a, b| a.rate.total_cmp(&b.rate))?;
    // Said only of a program that filled the CPUs with work threads at the largest count that
    // fits them: one that never ran more than one ignores the count, which `threads-ignored` says.
    if capped.is_some() {
        let largest = s
            .points
            .iter()
            .filter(|p| p.count <= cpus)
            .max_by(|a, b| a.count.total_cmp(&b.count))?;
        let filled = ledger::of(&doc.points[largest.index], None)
            .is_some_and(|l| l.peak_work_threads as f64 >= cpus.min(largest.count));
        if !filled {
            return None;
        }
    }
    // Shares of thread time at that count: waiting for a CPU, and off a CPU (waits of any kind).
    let (runq, off) = crate::analysis::threads::of_point(&doc.points[last.index])
        .map(|t| {
            let total: f64 = t.classes.values().sum::<f64>().max(1e-12);
            let of = |c: Class| t.classes.get(&c).copied().unwrap_or(0.0) / total;
            let runq = of(Class::Runqueue);
            (Some(runq), 1.0 - runq - of(Class::CpuUser) - of(Class::CpuKernel))
        })
        .unwrap_or((None, 0.0));
    let gain = last.rate / fit.rate;
    let faster = gain > 1.05;
    if capped.is_some() && faster {
        return None;
    }
    if capped.is_none()
        && let Some(f) = collapse(doc, (last, fit), gain, (name, cpus, label), weak)
    {
        return Some(f);
    }
    Some(Finding {
        noise: None,
        kind: Kind::CpuOversubscription,
        // The user's choice of counts, not a flaw of the program: worth a word, not an alarm.
        severity: if faster { Severity::Info } else { Severity::Low },
        summary: if faster {
            // Other processes' share of the machine's CPUs during the runs at either count:
            // beside them, more threads win a larger share of the CPUs (a trial's sweeps on a
            // loaded machine read "4 threads run 28% faster than 2: the threads wait for something
            // other than CPUs" beside threads waiting for a CPU 62% of their time).
            let others = [last_ledger, ledger::of(&doc.points[fit.index], None)]
                .iter()
                .flatten()
                .map(|l| l.others_s / (l.wall_s * doc.machine.allowed_cpus as f64).max(1e-12))
                .fold(0.0, f64::max);
            let why = if others >= LOADED_MACHINE {
                format!(
                    "other processes held {:.0}% of the machine's CPUs during these runs, and more threads win a larger share of them from those; or the threads wait for something other than CPUs",
                    100.0 * others
                )
            } else {
                "the threads wait for something other than CPUs".into()
            };
            format!(
                "{} on {} CPUs run {:.0}% faster than {}: {why}{label}",
                count_label(last.count, name),
                cpus,
                100.0 * (gain - 1.0),
                count_label(fit.count, name)
            )
        } else {
            // Said only when they do: 4 threads of a program that works on one wait for nothing,
            // and a producer-bound queue's consumers wait for work more than for a CPU.
            let why = match (capped, runq) {
                // Erlang's BEAM at +S 4 on 2 CPUs: two schedulers busy, two asleep.
                (Some(n), _) => format!(
                    ": no more than {n} work thread{} at once, so the {name} past the CPUs added none that worked",
                    if n == 1 { " ran" } else { "s ran" }
                ),
                (None, Some(r)) if r >= 0.1 && r >= off => {
                    ": the extra threads only wait for a CPU".into()
                }
                (None, Some(r)) if r >= 0.1 => format!(
                    ": the extra threads wait for a CPU {:.0}% of their time, and off a CPU {:.0}%: the causes at the CPUs' count say for what",
                    100.0 * r,
                    100.0 * off
                ),
                _ => String::new(),
            };
            format!(
                "{} on {} CPUs {} {} ({:.2}× against {:.2}×){why}{label}",
                count_label(last.count, name),
                cpus,
                if gain > 1.0 { "gain less than 5% over" } else { "are no faster than" },
                count_label(fit.count, name),
                last.speedup,
                fit.speedup
            )
        },
        evidence: runq
            .map(|r| {
                format!(
                    "at {}, threads wait for a CPU {:.0}% of their time",
                    count_label(last.count, name),
                    100.0 * r
                )
            })
            .into_iter()
            .collect(),
        advice: if faster {
            "more threads than CPUs hide waits (I/O, latency): the causes above say which".into()
        } else {
            format!("use at most {cpus} {name} (the CPUs this job may use)")
        },
        cost_pct: None,
        cost_per_run_pct: Vec::new(),
        at: Some(last.count),
        what_if: None,
    })
}

/// An oversubscribed count at most this share of the best fitting count's speed…
const COLLAPSED: f64 = 0.5;
/// …whose runs took at least this many times its CPU per unit of work has collapsed.
const CPU_BLOWN: f64 = 1.5;

/// Counts above the CPUs that collapse: much slower, burning much more CPU for the same work (in
/// `sched_yield`, spinning on a lock whose holder waits for a CPU). Not the user's choice of
/// counts alone but how the program behaves on a shared or oversubscribed machine: `medium`.
fn collapse(
    doc: &Results,
    (last, fit): (&PointScaling, &PointScaling),
    gain: f64,
    (name, cpus, label): (&str, f64, &str),
    weak: bool,
) -> Option<Finding> {
    let cpu = |p: &PointScaling| {
        let runs: Vec<_> = doc.points[p.index].runs.iter().filter(|r| r.counted()).collect();
        (!runs.is_empty())
            .then(|| runs.iter().map(|r| r.user_s + r.sys_s).sum::<f64>() / runs.len() as f64)
    };
    let blown = cpu(last)? / cpu(fit)?.max(1e-12) / work_ratio(doc, fit, last, weak);
    if gain > COLLAPSED || blown < CPU_BLOWN {
        return None;
    }
    let hot: Vec<String> = crate::analysis::threads::of_point(&doc.points[last.index])
        .map(|t| {
            t.hot
                .iter()
                .filter(|h| h.share >= 0.1)
                .take(2)
                .map(|h| format!("{} {:.0}%", h.name, 100.0 * h.share))
                .collect()
        })
        .unwrap_or_default();
    let mut evidence = vec![format!(
        "the same work took {blown:.1}× the CPU time at {} as at {}",
        count_label(last.count, name),
        count_label(fit.count, name)
    )];
    if !hot.is_empty() {
        evidence.push(format!(
            "on a CPU at {}: {} (of CPU samples)",
            count_label(last.count, name),
            hot.join(", ")
        ));
    }
    Some(Finding {
        noise: None,
        kind: Kind::CpuOversubscription,
        severity: Severity::Medium,
        summary: format!(
            "{} on {cpus} CPUs run {:.0}% slower than {}, burning {blown:.1}× the CPU for the same work: threads that spin or yield take the CPUs from those that would make progress{label}",
            count_label(last.count, name),
            100.0 * (1.0 - gain),
            count_label(fit.count, name)
        ),
        evidence,
        advice: format!(
            "use at most {cpus} {name}; where the machine may be shared or oversubscribed, do not yield or spin while holding a lock, and prefer locks that sleep to locks that spin"
        ),
        cost_pct: None,
        cost_per_run_pct: Vec::new(),
        at: Some(last.count),
        what_if: None,
    })
}

/// The parameter does not change how many threads work. Not said when the baseline already kept
/// every allowed CPU busy (`cpus`): then more threads cannot help, whatever the program does.
pub fn threads_ignored(
    base: &PointScaling,
    top: &PointScaling,
    (lb, lt): (Option<&Ledger>, Option<&Ledger>),
    work_threads: Option<(f64, f64)>,
    cpus: f64,
    name: &str,
    label: &str,
) -> Option<Finding> {
    let (lb, lt) = (lb?, lt?);
    let (cpu_b, cpu_t) = (base.cpu_pct.unwrap_or(0.0), top.cpu_pct.unwrap_or(0.0));
    if top.count < 2.0 * base.count
        || lt.peak_work_threads > lb.peak_work_threads
        || !(0.85..1.15).contains(&top.speedup)
        || cpu_b >= 90.0 * cpus
        || lb.demand >= cpus
    {
        return None;
    }
    if cpu_t > 1.3 * cpu_b.max(1.0) {
        return None;
    }
    // Runs so varied that the program may well scale: the most threads at work at once alone do
    // not say it. Unless no more threads worked at all at the top count, run for run, than at the
    // baseline: ImageMagick's blur at `-limit thread 2` ran one thread at 99% CPU as at 1, and
    // its 0.95× [0.57, 1.60] had read as a high serial fraction.
    let no_more = work_threads.is_some_and(|(b, t)| t <= b);
    if !no_more && efficiency_interval(top, base.count).is_some_and(|[_, hi]| hi >= UNDECIDED_BELOW)
    {
        return None;
    }
    Some(Finding {
        noise: None,
        kind: Kind::ThreadsIgnored,
        severity: Severity::High,
        summary: format!(
            "'{name}' does not change the concurrency: {} work thread{} at most at {} as at {}, %CPU {cpu_t:.0} vs {cpu_b:.0}{label}",
            lt.peak_work_threads,
            if lt.peak_work_threads == 1 { "" } else { "s" },
            count_label(top.count, name),
            count_label(base.count, name)
        ),
        evidence: vec![format!("speed-up {:.2}× at {}", top.speedup, count_label(top.count, name))],
        advice: "check that the program reads the parameter (flag name, environment variable such as OMP_NUM_THREADS), and that the input is big enough to split among the threads (a compressor's single block, one file, one chunk)"
            .into(),
        cost_pct: None,
        cost_per_run_pct: Vec::new(),
        at: Some(top.count),
        what_if: None,
    })
}

/// The counted parameter appears nowhere in what runs: every point ran the same program.
pub fn parameter_unused(top: &PointScaling, name: &str, label: &str) -> Finding {
    Finding {
        noise: None,
        kind: Kind::ThreadsIgnored,
        severity: Severity::High,
        summary: format!(
            "'{name}' appears nowhere in the command, its environment or its hooks: every point ran the same program{label}"
        ),
        evidence: vec![format!(
            "speed-up {:.2}× at {}: what differs between points is the machine, not the program",
            top.speedup,
            count_label(top.count, name)
        )],
        advice: format!(
            "put {{{name}}} where the program reads its thread count (a flag, or --env OMP_NUM_THREADS={{{name}}})"
        ),
        cost_pct: None,
        cost_per_run_pct: Vec::new(),
        at: Some(top.count),
        what_if: None,
    }
}

/// Runs so short that process start-up dominates.
pub fn startup_dominated(
    doc: &Results,
    base: &PointScaling,
    top: &PointScaling,
    gap: f64,
    name: &str,
    label: &str,
) -> Option<Finding> {
    let wall = median_wall(doc, top);
    // A program's own throughput figure leaves out its start-up; the wall clock does not.
    let base_wall = doc.points[base.index].stats().wall_s.map_or(0.0, |w| w.median);
    let wall_gap = 1.0 - (base_wall / wall) / (top.count / base.count);
    (wall < TINY_RUN_S && (gap > 0.2 || wall_gap > 0.2)).then(|| Finding { noise: None,
        kind: Kind::StartupDominated,
        severity: Severity::High,
        summary: format!(
            "runs at {} take {:.1} ms: too short for their scaling to say much (process start-up, thread creation and the first and last pieces of work weigh on every run){label}",
            count_label(top.count, name),
            wall * 1e3
        ),
        evidence: vec![format!("median wall time {:.4} s", wall)],
        advice: "grow the input so a run takes at least a second; scaling measured on tiny runs says little".into(),
        cost_pct: None,
        cost_per_run_pct: Vec::new(),
        at: Some(top.count),
        what_if: None,
    })
}

/// Runs whose median is shorter than this are mostly process start-up and thread creation.
const TINY_RUN_S: f64 = 0.05;

fn median_wall(doc: &Results, p: &PointScaling) -> f64 {
    doc.points[p.index].stats().wall_s.map_or(f64::INFINITY, |w| w.median)
}

/// Whether a point's runs are too short for what their threads waited on to be raised: start-up
/// and thread creation take milliseconds of their own.
pub fn tiny_runs(doc: &Results, p: &PointScaling) -> bool {
    median_wall(doc, p) < TINY_RUN_S
}

/// Amdahl's serial fraction, when the gap is real and no cause found explains it. Not for a count
/// slower than the baseline: no serial fraction makes more threads slower (Amdahl's fit then reads
/// "0% parallel"), which the retrograde finding says.
pub fn serial_fraction(
    s: &SeriesAnalysis,
    top: &PointScaling,
    name: &str,
    label: &str,
) -> Option<Finding> {
    let am = s.amdahl.as_ref()?;
    let lo = am.serial_fraction.ci95.map_or(am.serial_fraction.value, |c| c[0]);
    // Through two counts the fit is exact: its ceiling extrapolates one speed-up, and says so.
    let ceiling = times(1.0 / am.serial_fraction.value.max(1e-9));
    let ceiling = if am.fit.residual_stddev.is_some() {
        format!("the speed-up cannot pass {ceiling}×")
    } else {
        format!(
            "if the rest stays serial at higher counts, the speed-up cannot pass {ceiling}× (an extrapolation from two counts)"
        )
    };
    (lo > 0.01 && top.speedup > 1.0).then(|| Finding {
        noise: None,
        kind: Kind::SerialFraction,
        severity: Severity::Medium,
        summary: format!(
            "as if {:.1}% of the work were parallel (Amdahl): {ceiling}{label}",
            am.parallel_pct.value,
        ),
        evidence: vec![
            format!("serial fraction s = {:.4}", am.serial_fraction.value),
            format!("efficiency {:.0}% at {}", 100.0 * top.efficiency.unwrap_or(0.0), count_label(top.count, name)),
        ],
        advice: "find the part that does not run in parallel (the waits above, or a profile of one thread)".into(),
        cost_pct: None,
        cost_per_run_pct: Vec::new(),
        at: Some(top.count),
        what_if: None,
    })
}

/// A ceiling on the speed-up, to two significant digits below 10 (`1.1`, `4.5`, `20`).
fn times(x: f64) -> String {
    if x < 10.0 { format!("{x:.1}") } else { format!("{x:.0}") }
}

/// The hypervisor took at least this share of a point's capacity (the job's threads were on their
/// CPUs, the host ran another guest): said, as it slows runs and blurs the causes…
const STOLEN: f64 = 0.05;
/// …and at this share it is a `medium` finding: such runs measure the host's other guests.
const STOLEN_MEDIUM: f64 = 0.2;

/// Points whose wall times vary by more than 10%, and points whose runs had CPU time taken by the
/// hypervisor (steal): one finding on how far the measurements can be trusted.
pub fn noisy(doc: &Results, out: &mut Vec<Finding>) {
    let (flagged, noisy): (Vec<usize>, Vec<String>) = doc
        .points
        .iter()
        .enumerate()
        .filter_map(|(i, p)| {
            let w = p.stats().wall_s?;
            (w.n >= 2 && w.rel_stddev() > crate::results::point_stats::NOISY_REL_STDDEV)
                .then(|| (i, format!("{}: ±{:.0}%", p.label(), 100.0 * w.rel_stddev())))
        })
        .unzip();
    // The share of each point's capacity stolen, as the table shows it.
    let stolen: Vec<(String, f64)> = doc
        .points
        .iter()
        .filter_map(|p| {
            let l = ledger::of(p, None)?;
            let share = l.stolen_s / (l.capacity * l.wall_s).max(1e-12);
            (share >= STOLEN).then(|| (p.label(), share))
        })
        .collect();
    let worst = stolen.iter().map(|x| x.1).fold(0.0, f64::max);
    out.extend(watching(doc));
    if noisy.is_empty() && stolen.is_empty() {
        return;
    }
    let interleaved = doc.plan.order != crate::plan::Order::Sequential;
    let advice = match (stolen.is_empty(), interleaved) {
        (false, _) => {
            "measure on a dedicated node or a quieter host (steal varies from minute to minute; `cat /proc/stat` shows it in the 8th column); compare only sweeps taken side by side, with interleaved rounds"
        }
        (true, true) => "more runs (--runs), a quieter machine, pinned CPUs",
        (true, false) => "more runs (--runs), --order interleaved, a quieter machine, pinned CPUs",
    };
    let steal_line = |(label, share): &(String, f64)| {
        format!("{label}: {:.0}% of the capacity stolen", 100.0 * share)
    };
    // Two groups found only at other points than those flagged do not say why these vary
    // (hashdeep's 1-thread runs ±13%, the groups at 2 threads).
    let why = super::noise::of(doc)
        .filter(|n| n.at.is_empty() || n.at.iter().any(|i| flagged.contains(i)));
    let (summary, evidence) = if stolen.is_empty() {
        let mut evidence = noisy.clone();
        evidence.extend(why.as_ref().map(|n| format!("why: {}", n.evidence)));
        (
            format!(
                "run-to-run variation above 10% at {} point(s): small differences may not be real",
                noisy.len()
            ),
            evidence,
        )
    } else {
        let mut evidence: Vec<String> = stolen.iter().map(steal_line).collect();
        evidence.extend(noisy.iter().map(|n| format!("run-to-run variation {n}")));
        (
            format!(
                "the hypervisor took up to {:.0}% of the job's CPU capacity for other guests of its host (steal time): runs were slowed by them, so times, speed-ups and the causes below carry that noise",
                100.0 * worst
            ),
            evidence,
        )
    };
    out.push(Finding {
        noise: Some(if stolen.is_empty() { NoiseSource::Spread } else { NoiseSource::Steal }),
        kind: Kind::NoisyMeasurement,
        severity: if worst >= STOLEN_MEDIUM { Severity::Medium } else { Severity::Low },
        summary,
        evidence,
        advice: match (&why, stolen.is_empty()) {
            (Some(n), true) => n.advice().into(),
            _ => advice.into(),
        },
        cost_pct: None,
        cost_per_run_pct: Vec::new(),
        at: None,
        what_if: None,
    });
}

/// Watching the job took at least this share of a point's capacity: said.
const WATCHING: f64 = 0.05;

/// `watching the job took up to 19% of its CPU capacity`: the job's threads were runnable while
/// the CPUs they could use ran scalescope's own threads (the sampler, the tracer's collector, the
/// thread reading output) — the ledger's share put down to watching, at most their CPU time. CPU
/// scalescope used beside a job that left CPUs free (a Node.js process switching 35 times a
/// second with a CPU idle) took nothing from it and is not said.
fn watching(doc: &Results) -> Option<Finding> {
    let points: Vec<(String, f64, f64)> = doc
        .points
        .iter()
        .filter_map(|p| {
            let runs: Vec<_> = p
                .runs
                .iter()
                .filter(|r| r.counted())
                .filter_map(|r| r.threads.as_deref())
                .collect();
            let l = ledger::of(p, None)?;
            let n = runs.len().max(1) as f64;
            let switches = runs
                .iter()
                .map(|t| {
                    (t.voluntary_switches + t.involuntary_switches) as f64 / t.wall_s.max(1e-9)
                })
                .sum::<f64>()
                / n;
            let held = l.item(&Cause::Observer).map_or(0.0, |i| i.core_s);
            let share = held / (l.capacity * l.wall_s).max(1e-12);
            (share >= WATCHING).then(|| (p.label(), share, switches))
        })
        .collect();
    let worst = points.iter().map(|x| x.1).fold(0.0, f64::max);
    (!points.is_empty()).then(|| Finding { noise: Some(NoiseSource::Watching),
        kind: Kind::NoisyMeasurement,
        severity: Severity::Low,
        summary: format!(
            "watching the job took up to {:.0}% of its CPU capacity (scalescope's sampler, its tracer and its reading of the run's output): its runs may have been slower for it",
            100.0 * worst
        ),
        evidence: points
            .iter()
            .map(|(label, share, switches)| {
                format!("{label}: {:.0}% of the capacity, the job's threads switching {switches:.0} times a second", 100.0 * share)
            })
            .collect(),
        advice: "compare the timings with a sweep taken with --no-sample (which says nothing of waits); the more often threads switch, the more watching them costs".into(),
        cost_pct: None,
        cost_per_run_pct: Vec::new(),
        at: None,
        what_if: None,
    })
}

/// A job crowds its CPUs by itself when it keeps at least this share of them busy on average.
const CROWDED: f64 = 0.8;

/// The share of the job's thread time spent waiting for a CPU while its own threads held them,
/// 0 unless the job kept most of its CPUs busy ([`CROWDED`]). The waits while CPUs sat idle of
/// the job are other processes' doing (a loaded machine), not its threads crowding each other:
/// a starved consumer's producer beside a CPU hog waited for a CPU a tenth of its time while its
/// job used 1.3 of 2 CPUs.
pub fn own_runq(t: &PointThreads, l: &Ledger) -> f64 {
    if l.cpu_s < CROWDED * l.capacity * l.wall_s {
        return 0.0;
    }
    let total: f64 = t.classes.values().sum();
    let others = l.item(&Cause::OtherLoad).map_or(0.0, |i| i.core_s);
    (t.classes.get(&Class::Runqueue).copied().unwrap_or(0.0) - others).max(0.0) / total.max(1e-12)
}

/// More busy threads than CPUs at a count that fits the CPUs: threads beside the workers
/// (producers, helpers) need CPUs too, so the job is oversubscribed by its own design.
pub fn busy_threads_beyond_cpus(
    doc: &Results,
    top: &PointScaling,
    (lt, lb): (&Ledger, Option<&Ledger>),
    (name, cpus, label): (&str, f64, &str),
    gated: bool,
) -> Option<Finding> {
    if lt.demand <= cpus + 0.5 || top.count > cpus {
        return None;
    }
    let t = crate::analysis::threads::of_point(&doc.points[top.index])?;
    let runq = own_runq(&t, lt);
    if runq < 0.1 {
        return None;
    }
    let base = lb
        .map(|b| {
            let wanted = b.demand.round();
            format!(
                "; at the baseline {wanted:.0} thread{} wanted a CPU at once, using {:.1} CPUs",
                if wanted == 1.0 { "" } else { "s" },
                b.cpu_s / b.wall_s.max(1e-9)
            )
        })
        .unwrap_or_default();
    Some(Finding {
        noise: None,
        kind: Kind::CpuOversubscription,
        severity: if gated { Severity::Medium } else { Severity::Info },
        summary: format!(
            "at {} the job runs {:.0} busy threads on {cpus} CPUs: threads wait for a CPU {:.0}% of their time, so more {name} cannot help{label}",
            count_label(top.count, name),
            lt.demand,
            100.0 * runq
        ),
        evidence: vec![format!(
            "{:.1} CPUs busy on average at {}{base}",
            lt.cpu_s / lt.wall_s.max(1e-9),
            count_label(top.count, name)
        )],
        advice: format!(
            "the threads beside the workers (producers, readers, helpers) need CPUs too: choose {name} so that all busy threads fit the {cpus} CPUs, or give the helpers less work"
        ),
        cost_pct: None,
        cost_per_run_pct: Vec::new(),
        at: Some(top.count),
        what_if: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::analysis::{JudgedBy, Retrograde};

    fn point(count: f64, speedup: f64, ci: [f64; 2]) -> PointScaling {
        PointScaling {
            index: 0,
            count,
            runs: 3,
            rate: speedup,
            speedup,
            speedup_ci95: Some(ci),
            paired_rounds: None,
            efficiency: Some(speedup / count),
            karp_flatt: None,
            amdahl_parallel_pct: None,
            cpu_pct: Some(50.0),
        }
    }

    fn ledger(peak_work_threads: usize) -> Ledger {
        Ledger { peak_work_threads, demand: 0.5, ..Default::default() }
    }

    #[test]
    fn threads_ignored_needs_runs_that_rule_out_scaling() {
        let base = point(1.0, 1.0, [1.0, 1.0]);
        let (lb, lt) = (ledger(2), ledger(2));
        let tight = threads_ignored(
            &base,
            &point(2.0, 0.98, [0.92, 1.05]),
            (Some(&lb), Some(&lt)),
            None,
            2.0,
            "threads",
            "",
        );
        assert!(
            tight.is_some_and(|f| f.kind == Kind::ThreadsIgnored && f.severity == Severity::High)
        );
        // Sleeps of 0.05 to 0.65 s before 0.1 s of work: 0.91× [0.26, 3.23] may well be 2×.
        let varied = |work_threads| {
            threads_ignored(
                &base,
                &point(2.0, 0.91, [0.26, 3.23]),
                (Some(&lb), Some(&lt)),
                work_threads,
                2.0,
                "threads",
                "",
            )
        };
        assert!(varied(Some((2.0, 3.0))).is_none());
        assert!(varied(None).is_none());
        // Varied runs, but not one more thread at work in any of them: the count is ignored.
        assert!(varied(Some((1.0, 1.0))).is_some_and(|f| f.kind == Kind::ThreadsIgnored));
    }

    #[test]
    fn how_much_slower_sets_a_retrograde_findings_severity() {
        let series = |change_pct| SeriesAnalysis {
            label: String::new(),
            baseline: 1.0,
            fitted_up_to: 2.0,
            points: Vec::new(),
            best: None,
            retrograde: Some(Retrograde {
                beyond: 1.0,
                at: 2.0,
                change_pct,
                judged_by: JudgedBy::Runs,
            }),
            amdahl: None,
            usl: None,
            gustafson: None,
            predictions: Vec::new(),
            backtest: None,
            fast_baseline: None,
            next_count: None,
            memory: None,
            warnings: Vec::new(),
        };
        let severity = |c| retrograde(&series(c), "threads", 2.0, true, "").unwrap().severity;
        assert_eq!(severity(-1.5), Severity::Low);
        assert_eq!(severity(-7.0), Severity::Medium);
        assert_eq!(severity(-21.0), Severity::High);
    }
}
