//! The rules. Each looks at the largest count that was not oversubscribed (P) against the baseline
//! (B) of a series, and speaks only when its evidence clears the noise: shares of thread time that
//! grew by several points, phases longer than a tenth of the run, differences beyond the intervals.

use super::evidence::{PointEvidence, phases};
use super::{Finding, Kind, Severity};
use crate::analysis::count_label;
use crate::plan::Counts;
use crate::results::Results;
use crate::results::analysis::{Analysis, SeriesAnalysis};
use crate::sample::Class;

/// A one-thread phase must be at least this share of the run…
const PHASE_SHARE: f64 = 0.15;
/// …and this long, to be told apart from process and thread start-up.
const PHASE_MIN_S: f64 = 0.03;
/// Efficiency at or above which a count is said to scale well.
const GOOD_EFFICIENCY: f64 = 0.85;

/// Findings for a sweep, most costly first.
pub fn diagnose(doc: &Results, analysis: Option<&Analysis>) -> Vec<Finding> {
    let mut out = Vec::new();
    noisy(doc, &mut out);
    super::ranks::rules(doc, &mut out);
    let Some(a) = analysis else { return out };
    for s in &a.series {
        series(doc, a, s, &mut out);
    }
    // Causes first (what the threads wait on), then what the curve looks like; then by severity and cost.
    out.sort_by(|x, y| {
        describes_curve(x.kind)
            .cmp(&describes_curve(y.kind))
            .then(y.severity.cmp(&x.severity))
            .then(y.cost_pct.unwrap_or(0.0).total_cmp(&x.cost_pct.unwrap_or(0.0)))
    });
    out
}

/// Findings that describe the shape of the curve rather than a cause.
fn describes_curve(kind: Kind) -> bool {
    matches!(kind, Kind::Retrograde | Kind::SerialFraction | Kind::ScalesWell | Kind::NoisyMeasurement)
}

fn pct(x: f64) -> String {
    format!("{:.0}%", 100.0 * x)
}

fn series(doc: &Results, a: &Analysis, s: &SeriesAnalysis, out: &mut Vec<Finding>) {
    let name = &a.axis.param;
    let label = if s.label.is_empty() { String::new() } else { format!(" [{}]", s.label) };
    let cpus = doc.machine.allowed_cpus as f64;
    let Some(base) = s.points.iter().find(|p| p.count == s.baseline) else { return };
    let Some(top) = s.points.iter().rev().find(|p| p.count <= s.fitted_up_to && p.count > s.baseline) else {
        return;
    };
    // Each point's sampler reports are merged once, then read by every rule.
    let evidence: Vec<Option<PointEvidence>> = doc.points.iter().map(PointEvidence::of).collect();
    let ev = |i: usize| evidence[i].as_ref();
    let (eb, et) = (ev(base.index), ev(top.index));
    let n = top.count;
    let gap = 1.0 - top.efficiency.unwrap_or(1.0);
    let cost = |extra: f64| (gap > 0.02).then(|| (100.0 * extra / gap).clamp(0.0, 100.0));
    let shares = |class: Class| -> String {
        s.points
            .iter()
            .filter_map(|p| ev(p.index).map(|e| format!("{}: {}", count_label(p.count, name), pct(e.share(class)))))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let before = out.len();

    if let Some(r) = &s.retrograde {
        out.push(Finding {
            kind: Kind::Retrograde,
            severity: Severity::High,
            summary: format!(
                "beyond {}, more is slower: {} give {:+.0}%{label}",
                count_label(r.beyond, name),
                count_label(r.at, name),
                r.change_pct
            ),
            evidence: vec![format!("best: {}", count_label(r.beyond, name)), format!("judged by: {}", r.judged_by)],
            advice: format!("run at {}; the waits below say what grows with the count", count_label(r.beyond, name)),
            cost_pct: None,
            at: Some(r.at),
        });
    }

    if let (Some(eb), Some(et)) = (eb, et) {
        let grew = |c: Class, min: f64, by: f64| et.share(c) >= min && et.share(c) >= eb.share(c) + by;
        if grew(Class::Lock, 0.10, 0.05) {
            let what = et.top(Class::Lock).unwrap_or_else(|| "a lock".into());
            out.push(Finding {
                kind: Kind::LockContention,
                severity: if et.share(Class::Lock) >= 0.3 { Severity::High } else { Severity::Medium },
                summary: format!(
                    "at {n} {name} {} of thread time waits on one lock: {what}{label}",
                    pct(et.share(Class::Lock))
                ),
                evidence: vec![format!("lock wait by {name}: {}", shares(Class::Lock)), format!("top lock: {what}")],
                advice: "shorten or split the critical section, keep per-thread state and merge it at the end, or use a lock-free structure".into(),
                cost_pct: cost(et.share(Class::Lock) - eb.share(Class::Lock)),
                at: Some(n),
            });
        }
        if grew(Class::WaitForWork, 0.20, 0.10) {
            let what = et.top(Class::WaitForWork).map(|w| format!(" (on {w})")).unwrap_or_default();
            out.push(Finding {
                kind: Kind::WaitForWork,
                severity: if et.share(Class::WaitForWork) >= 0.4 { Severity::High } else { Severity::Medium },
                summary: format!(
                    "at {n} {name} workers wait for work {} of the time{what}: the feeder is the bottleneck{label}",
                    pct(et.share(Class::WaitForWork))
                ),
                evidence: vec![format!("waiting for work by {name}: {}", shares(Class::WaitForWork))],
                advice: "feed faster: more producers or readers, bigger batches, read ahead; or use fewer workers"
                    .into(),
                cost_pct: cost(et.share(Class::WaitForWork) - eb.share(Class::WaitForWork)),
                at: Some(n),
            });
        }
        if et.share(Class::Io) >= 0.2 {
            let what = et.top(Class::Io).map(|w| format!(" ({w})")).unwrap_or_default();
            out.push(Finding {
                kind: Kind::IoBound,
                severity: if et.share(Class::Io) >= 0.4 { Severity::High } else { Severity::Medium },
                summary: format!("at {n} {name} threads wait for I/O {} of the time{what}{label}", pct(et.share(Class::Io))),
                evidence: vec![format!("I/O wait by {name}: {}", shares(Class::Io))],
                advice: "more threads will not help past the storage's speed: measure what the files can deliver (readspeed), read larger blocks, overlap I/O with work, or warm the cache".into(),
                cost_pct: cost(et.share(Class::Io)),
                at: Some(n),
            });
        }
        let kern = et.share(Class::CpuKernel) / et.on_cpu().max(1e-9);
        if grew(Class::KernelLock, 0.05, 0.03) || (kern >= 0.5 && et.share(Class::KernelLock) >= 0.02) {
            let mut syscalls: Vec<String> = et
                .threads
                .waits
                .iter()
                .filter(|w| w.class == Some(Class::KernelLock))
                .take(3)
                .map(|w| w.name.clone())
                .collect();
            syscalls.dedup();
            out.push(Finding {
                kind: Kind::KernelContention,
                severity: Severity::Medium,
                summary: format!(
                    "at {n} {name} threads wait on kernel locks {} of the time and spend {} of their CPU time in the kernel: {}{label}",
                    pct(et.share(Class::KernelLock)),
                    pct(kern),
                    syscalls.join("; ")
                ),
                evidence: vec![format!("kernel-lock wait by {name}: {}", shares(Class::KernelLock))],
                advice: "map memory once and reuse it (a pool or arena allocator), avoid mprotect/munmap in the hot loop, use huge pages; for file locks, fewer and larger critical sections".into(),
                cost_pct: cost(et.share(Class::KernelLock) - eb.share(Class::KernelLock)),
                at: Some(n),
            });
        }
        let cpu_b = base.cpu_pct.unwrap_or(0.0);
        let cpu_t = top.cpu_pct.unwrap_or(0.0);
        let work_per_cpu =
            |p: &crate::results::analysis::PointScaling| p.rate / (p.cpu_pct.unwrap_or(100.0) / 100.0).max(1e-9);
        let per_cpu = work_per_cpu(top) / work_per_cpu(base);
        if gap > 0.2 && et.on_cpu() >= 0.85 && cpu_t >= 0.85 * 100.0 * n.min(cpus) && per_cpu < 0.8 {
            out.push(Finding {
                kind: Kind::OnCpuInefficiency,
                severity: Severity::High,
                summary: format!(
                    "at {n} {name} threads are busy ({:.0}% CPU) but each CPU-second does {} of the work it did at {}{label}",
                    cpu_t,
                    pct(per_cpu),
                    count_label(base.count, name)
                ),
                evidence: [
                    format!("on a CPU: {} of thread time at {n} {name}", pct(et.on_cpu())),
                    format!("work per CPU-second: {} of the baseline's", pct(per_cpu)),
                ]
                .into_iter()
                .chain(et.threads.hot.first().map(|h| format!("hottest code: {} ({:.0}% of CPU samples)", h.name, 100.0 * h.share)))
                .collect(),
                advice: "look for false sharing (per-thread data in one cache line: pad to 64–128 bytes), shared counters, memory bandwidth, or spinning".into(),
                cost_pct: cost(1.0 - per_cpu),
                at: Some(n),
            });
        }
        if let (Some(eb_peak), true) = (eb.threads.peak(), top.count >= 2.0 * base.count) {
            let et_peak = et.threads.peak().unwrap_or(0);
            if et_peak <= eb_peak && (0.85..1.15).contains(&top.speedup) && cpu_t <= 1.3 * cpu_b.max(1.0) {
                out.push(Finding {
                    kind: Kind::ThreadsIgnored,
                    severity: Severity::High,
                    summary: format!(
                        "'{name}' does not change the concurrency: {et_peak} threads at most at {n} {name} as at {}, %CPU {cpu_t:.0} vs {cpu_b:.0}{label}",
                        count_label(base.count, name)
                    ),
                    evidence: vec![format!("speed-up {:.2}× at {n} {name}", top.speedup)],
                    advice: "check that the program reads the parameter (flag name, environment variable such as OMP_NUM_THREADS)".into(),
                    cost_pct: Some(100.0),
                    at: Some(n),
                });
            }
        }
    }
    ceiling(doc, top.index, n, name, &label, out);

    if let Some((lead, tail, run)) = phases(&doc.points[top.index], 1.6) {
        if lead >= PHASE_SHARE * run && lead >= PHASE_MIN_S {
            out.push(Finding {
                kind: Kind::SerialPhase,
                severity: Severity::Medium,
                summary: format!(
                    "the first {lead:.2} s ({}) of a run at {n} {name} had one thread running{label}",
                    pct(lead / run)
                ),
                evidence: vec![format!("start-up phase {lead:.3} s of {run:.3} s")],
                advice: "parallelise the start-up (reading, parsing, building indexes) or overlap it with the work"
                    .into(),
                cost_pct: cost(lead / run * (1.0 - 1.0 / n)),
                at: Some(n),
            });
        }
        if tail >= PHASE_SHARE * run && tail >= PHASE_MIN_S {
            out.push(Finding {
                kind: Kind::LoadImbalance,
                severity: Severity::Medium,
                summary: format!(
                    "the last {tail:.2} s ({}) of a run at {n} {name} had one thread running while the others had finished{label}",
                    pct(tail / run)
                ),
                evidence: vec![format!("tail {tail:.3} s of {run:.3} s")],
                advice: "split the work in smaller pieces handed out dynamically (work stealing, a shared queue) so no thread is left with a big share".into(),
                cost_pct: cost(tail / run * (1.0 - 1.0 / n)),
                at: Some(n),
            });
        }
    }

    for p in s.points.iter().filter(|p| p.count > cpus) {
        if let Some(e) = ev(p.index)
            && e.share(Class::Runqueue) >= 0.2
        {
            out.push(Finding {
                kind: Kind::CpuOversubscription,
                severity: Severity::Medium,
                summary: format!(
                    "{} on {cpus} CPUs: threads wait {} of the time for a CPU{label}",
                    count_label(p.count, name),
                    pct(e.share(Class::Runqueue))
                ),
                evidence: vec![format!("run-queue wait by {name}: {}", shares(Class::Runqueue))],
                advice: format!("use at most {cpus} {name} (the CPUs this job may use)"),
                cost_pct: None,
                at: Some(p.count),
            });
            break;
        }
    }

    let wall = doc.points[top.index].stats.wall_s.as_ref().map_or(f64::INFINITY, |w| w.median);
    // A program's own throughput figure leaves out its start-up; the wall clock does not.
    let base_wall = doc.points[base.index].stats.wall_s.as_ref().map_or(0.0, |w| w.median);
    let wall_gap = 1.0 - (base_wall / wall) / (n / base.count);
    if wall < 0.05 && (gap > 0.2 || wall_gap > 0.2) {
        out.push(Finding {
            kind: Kind::StartupDominated,
            severity: Severity::High,
            summary: format!(
                "runs at {n} {name} take {:.1} ms: process start-up and thread creation dominate{label}",
                wall * 1e3
            ),
            evidence: vec![format!("median wall time {:.4} s", wall)],
            advice: "grow the input so a run takes at least a second; scaling measured on tiny runs says little".into(),
            cost_pct: None,
            at: Some(n),
        });
    }

    if let Some(am) = &s.amdahl {
        let lo = am.serial_fraction.ci95.map_or(am.serial_fraction.value, |c| c[0]);
        if gap > 1.0 - GOOD_EFFICIENCY && lo > 0.01 && out.len() == before {
            out.push(Finding {
                kind: Kind::SerialFraction,
                severity: Severity::Medium,
                summary: format!(
                    "as if {:.1}% of the work were parallel (Amdahl): the speed-up cannot pass {:.0}×{label}",
                    am.parallel_pct.value,
                    1.0 / am.serial_fraction.value.max(1e-9)
                ),
                evidence: vec![format!("serial fraction s = {:.4}", am.serial_fraction.value)],
                advice: "find the part that does not run in parallel (the waits above, or a profile of one thread)"
                    .into(),
                cost_pct: None,
                at: Some(n),
            });
        }
    }

    if a.axis.counts == Counts::Copies {
        // Copies are not workers sharing one job: say whether they slow each other, not how the job scales.
        let mine: Vec<Finding> = out.drain(before..).collect();
        out.extend(mine.into_iter().filter(|f| !describes_curve(f.kind)));
        let moved = |c: Class| match (eb, et) {
            (Some(b), Some(t)) => t.share(c) - b.share(c),
            _ => 0.0,
        };
        super::ranks::copies(doc, top, base, &moved, et, label.as_str(), out);
        return;
    }
    let serious = out[before..].iter().any(|f| f.severity > Severity::Info);
    if let Some(eff) = top.efficiency
        && eff >= GOOD_EFFICIENCY
        && !serious
    {
        out.push(Finding {
            kind: Kind::ScalesWell,
            severity: Severity::Info,
            summary: format!(
                "scales well: {:.2}× at {n} {name} against {} ({}% efficiency){label}",
                top.speedup,
                base.count,
                (100.0 * eff).round()
            ),
            evidence: s.points.iter().map(|p| format!("{}: {:.2}×", count_label(p.count, name), p.speedup)).collect(),
            advice: "measure at higher counts to find where it stops".into(),
            cost_pct: None,
            at: Some(n),
        });
    }
}

/// Advice when the job reads near what its files can deliver.
const NEAR_CEILING: &str = "the job reads near what its files can deliver, so more threads will not help: faster storage, smaller or compressed inputs, or warm caches";

/// Judges the job's read rate at `n` against the measured ceiling of its files: adds the
/// comparison to an I/O finding, or makes one when the job reads at 80% of the ceiling or more.
fn ceiling(doc: &Results, point: usize, n: f64, name: &str, label: &str, out: &mut Vec<Finding>) {
    let Some(c) = &doc.ceiling else { return };
    let Some(cp) = c.at(n) else { return };
    let Some(rate) = super::evidence::read_rate(&doc.points[point], c.cold) else { return };
    if cp.mean_bytes_per_s <= 0.0 || rate <= 0.0 {
        return;
    }
    let share = rate / cp.mean_bytes_per_s;
    let line = format!(
        "at {n} {name} the job reads {:.1} MB/s, {} of what the files deliver to readspeed at {} thread{} ({:.1} MB/s, {})",
        rate / 1e6,
        pct(share),
        cp.threads,
        if cp.threads == 1 { "" } else { "s" },
        cp.mean_bytes_per_s / 1e6,
        if c.cold { "cold" } else { "as cached" }
    );
    if let Some(f) = out.iter_mut().find(|f| f.kind == Kind::IoBound && f.at == Some(n)) {
        f.evidence.push(line);
        f.advice = if share < 0.8 {
            format!(
                "the files could deliver {:.1}× what the job reads: read larger blocks, more at once, or ahead of the work (overlap I/O with computing)",
                1.0 / share
            )
        } else {
            NEAR_CEILING.into()
        };
        return;
    }
    if share >= 0.8 {
        out.push(Finding {
            kind: Kind::IoBound,
            severity: if share >= 0.9 { Severity::High } else { Severity::Medium },
            summary: format!(
                "at {n} {name} the job reads at {} of what its files can deliver: it is I/O-bound{label}",
                pct(share)
            ),
            evidence: vec![line],
            advice: NEAR_CEILING.into(),
            cost_pct: None,
            at: Some(n),
        });
    }
}

fn noisy(doc: &Results, out: &mut Vec<Finding>) {
    let noisy: Vec<String> = doc
        .points
        .iter()
        .filter_map(|p| {
            let w = p.stats.wall_s.as_ref()?;
            (w.n >= 2 && w.rel_stddev() > crate::results::point_stats::NOISY_REL_STDDEV)
                .then(|| format!("{}: ±{:.0}%", p.label(), 100.0 * w.rel_stddev()))
        })
        .collect();
    if !noisy.is_empty() {
        out.push(Finding {
            kind: Kind::NoisyMeasurement,
            severity: Severity::Low,
            summary: format!(
                "run-to-run variation above 10% at {} point(s): small differences are not real",
                noisy.len()
            ),
            evidence: noisy,
            advice: "more runs (--runs), --order interleaved, a quieter machine, pinned CPUs".into(),
            cost_pct: None,
            at: None,
        });
    }
}
