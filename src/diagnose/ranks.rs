//! Rules for launched runs: a straggler rank the others wait for, ranks that failed or never
//! reported, and concurrent copies that do or do not slow each other down.

use super::evidence::top_wait;
use super::{Finding, Kind, Severity};
use crate::analysis::threads::PointThreads;
use crate::results::Results;
use crate::results::analysis::PointScaling;
use crate::sample::Class;

/// A rank this much slower than the median rank, and by at least [`STRAGGLER_MIN_S`], straggles.
const STRAGGLER_RATIO: f64 = 1.2;
/// The smallest lag worth a finding, seconds.
const STRAGGLER_MIN_S: f64 = 0.05;

/// Straggler and failed-rank findings over every point.
pub fn rules(doc: &Results, out: &mut Vec<Finding>) {
    for p in &doc.points {
        let launched: Vec<_> = p.runs.iter().filter(|r| !r.ranks.is_empty() || !r.missing_ranks.is_empty()).collect();
        if launched.is_empty() {
            continue;
        }
        let label = p.label();
        let mut failures: Vec<String> = Vec::new();
        for (i, r) in launched.iter().enumerate() {
            for part in r.ranks.iter().filter(|x| !x.succeeded()) {
                let how = match (part.exit_code, part.signal) {
                    (Some(c), _) => format!("exit code {c}"),
                    (_, Some(s)) => format!("killed by {}", crate::exec::record::signal_name(s)),
                    _ => "no exit status".into(),
                };
                failures.push(format!("run {}: rank {} on {} failed ({how})", i + 1, part.rank, part.node));
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
                advice: "read the failed rank's output (saved with the run), and its node's logs".into(),
                cost_pct: None,
                at: None,
                what_if: None,
            });
        }
        let mut lags: Vec<(u32, String, f64, f64)> = Vec::new();
        for r in launched.iter().filter(|r| r.ranks.len() >= 2 && r.ranks.iter().all(|x| x.succeeded())) {
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
                    at: None,
                    what_if: None,
                });
            }
        }
    }
}

/// Mean wall time of a point's copies (every rank of every successful run).
fn copy_wall(doc: &Results, point: usize) -> Option<f64> {
    let walls: Vec<f64> =
        doc.points[point].runs.iter().filter(|r| r.counted()).flat_map(|r| r.ranks.iter().map(|x| x.wall_s)).collect();
    (!walls.is_empty()).then(|| walls.iter().sum::<f64>() / walls.len() as f64)
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
    let (Some(alone), Some(together)) = (copy_wall(doc, base.index), copy_wall(doc, top.index)) else { return };
    let eff = alone / together;
    let n = top.count;
    let each = format!("each of {n} copies runs at {:.0}% of one copy's speed", 100.0 * eff);
    if eff >= 0.9 {
        out.push(Finding {
            noise: None,
            kind: Kind::CopiesIndependent,
            severity: Severity::Info,
            summary: format!("{each}: they do not slow each other{label}"),
            evidence: vec![format!("a copy takes {together:.3} s with {n} running, {alone:.3} s with {}", base.count)],
            advice: "the machine has room for this many concurrent users of this job".into(),
            cost_pct: None,
            at: Some(n),
            what_if: None,
        });
        return;
    }
    if eff >= 0.8 {
        return;
    }
    let mut grew: Vec<(f64, String)> =
        [Class::Io, Class::KernelLock, Class::Lock, Class::Runqueue, Class::Other, Class::Ipc, Class::Sleep]
            .into_iter()
            .filter_map(|c| {
                let d = moved(c);
                let top_wait = et.and_then(|e| top_wait(e, c)).map(|w| format!(": {w}")).unwrap_or_default();
                (d >= 0.05)
                    .then(|| (d, format!("{} wait grew by {:.0} points of thread time{top_wait}", c.name(), 100.0 * d)))
            })
            .collect();
    grew.sort_by(|a, b| b.0.total_cmp(&a.0));
    let mut evidence = vec![format!("a copy takes {together:.3} s with {n} running, {alone:.3} s with {}", base.count)];
    evidence.extend(grew.into_iter().take(3).map(|g| g.1));
    if evidence.len() == 1 {
        evidence.push(
            "no wait grew: the copies compete on the CPUs themselves (memory bandwidth, caches, frequency)".into(),
        );
    }
    out.push(Finding { noise: None,
        kind: Kind::CopiesInterfere,
        severity: if eff < 0.6 { Severity::High } else { Severity::Medium },
        summary: format!("{each}: they compete for a shared resource{label}"),
        evidence,
        advice: "find the shared resource (the waits above: a disk, a lock file, memory bandwidth) and give each copy its own, or run fewer at once".into(),
        cost_pct: None,
        at: Some(n),
        what_if: None,
    });
}
