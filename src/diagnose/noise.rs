//! Why runs of one point took different times: which of the measured suspects explains most of
//! the run-to-run variation of the wall time, within points (so that the points' own differences
//! do not count). The suspects are what the sampler measured about each run — other processes'
//! CPU time on the machine, the hypervisor's steal time, the CPUs' clock where the kernel shows
//! it, the machine's own pace (a fixed loop and a walk through memory timed before each run,
//! wherever it runs) — and what
//! the runs themselves show: a
//! drift of the machine's speed over the sweep, and runs that fall in two groups. The one that
//! explains the most, when it explains at least half and beyond chance, is named with what to do.

use crate::results::{PointResult, Results};
use crate::stats::within_groups;

/// A suspect must explain at least this share of the variation within points to be named.
const EXPLAINS: f64 = 0.5;
/// Two groups of runs are named when splitting them leaves at most this share of the variation…
const SPLIT_LEAVES: f64 = 0.15;
/// …their typical times differ by at least this factor…
const GROUPS_APART: f64 = 1.08;
/// …and each holds at least this many runs.
const GROUP_RUNS: usize = 2;

/// What made the runs noisy.
#[derive(Clone, Debug, PartialEq)]
pub struct Noise {
    /// The suspect named.
    pub cause: Cause,
    /// Share of the variation of log wall time within points that it explains.
    pub explains: f64,
    /// The figures behind it, in words.
    pub evidence: String,
    /// Indices into `points[]` of the points it was seen at; empty when pooled over all of them.
    pub at: Vec<usize>,
}

/// The suspects.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cause {
    /// Other processes used the CPUs in the slow runs.
    OtherProcesses,
    /// The hypervisor took CPU time in the slow runs.
    Steal,
    /// The machine slowed down or sped up over the sweep.
    Drift,
    /// Runs fall into a fast and a slow group.
    TwoGroups,
    /// The CPUs ran at a lower clock in the slow runs.
    Frequency,
    /// A fixed loop timed before each run was slower before the slow runs: the machine itself.
    Pace,
    /// A walk through memory timed before each run was slower before the slow runs: the host's
    /// caches and memory, shared with other guests.
    MemoryPace,
}

impl Noise {
    /// What to do about it.
    pub fn advice(&self) -> &'static str {
        match self.cause {
            Cause::OtherProcesses => {
                "measure when the machine is idle or on a node of your own (other processes took CPUs in the slow runs)"
            }
            Cause::Steal => {
                "measure on a dedicated node or a quieter host: the hypervisor gave the CPUs to other guests in the slow runs"
            }
            Cause::Drift => {
                "the machine's speed changed during the sweep (another job starting or ending, heat, a frequency governor): keep the default interleaved order so that every count sees the same drift, and look for what else ran"
            }
            Cause::Frequency => {
                "the CPUs' clock changed from run to run (a power-saving governor, turbo, a thermal limit): set the performance governor (cpupower frequency-set -g performance) or fix the frequency, and warm up before measuring"
            }
            Cause::Pace => {
                "the machine itself ran slower before the slow runs (other guests on the host, a frequency governor, heat): measure on a dedicated node or a quieter host, keep the default interleaved order so that every count shares the slow spells, and compare sweeps with `scalescope check`, which judges times at the machine's usual pace"
            }
            Cause::MemoryPace => {
                "the machine's memory was slower before the slow runs (other guests of the host share its last-level cache and memory bandwidth; a program that reads memory feels them, a loop that stays in the caches does not): measure on a dedicated node or a quieter host, keep the default interleaved order so that every count shares the slow spells, and compare only sweeps taken side by side"
            }
            Cause::TwoGroups => {
                "runs fall into a fast and a slow group: a cache or page cache warm in some runs only (--prepare to set the same state, --warmup), threads placed on different cores or NUMA nodes (pin them: taskset, numactl), or a periodic background task"
            }
        }
    }
}

/// Per run of a point: ln wall time and the suspects measured about it.
struct Run {
    log_wall: f64,
    started: f64,
    others: Option<f64>,
    stolen: Option<f64>,
    mhz: Option<f64>,
    log_pace: Option<f64>,
    log_memory: Option<f64>,
}

fn runs(p: &PointResult) -> Vec<Run> {
    p.runs
        .iter()
        .filter(|r| r.counted() && r.wall_s > 0.0)
        .map(|r| {
            let m = r.threads.as_deref().and_then(|t| t.machine_cpu);
            Run {
                log_wall: r.wall_s.ln(),
                started: r.started_unix_s,
                others: r.others_cpus(),
                stolen: m.map(|m| m.stolen_s / r.wall_s),
                mhz: m.and_then(|m| m.mhz),
                log_pace: r.pace_ns.filter(|p| *p > 0.0).map(f64::ln),
                log_memory: r.memory_pace_ns.filter(|p| *p > 0.0).map(f64::ln),
            }
        })
        .collect()
}

/// The suspect that explains most of the variation of the wall time within points, if one
/// explains at least half of it beyond chance.
pub fn of(doc: &Results) -> Option<Noise> {
    let points: Vec<Vec<Run>> = doc.points.iter().map(runs).filter(|r| r.len() >= 3).collect();
    if points.is_empty() {
        return None;
    }
    let mut best: Option<Noise> = None;
    let mut consider = |n: Option<Noise>| {
        if let Some(n) = n
            && best.as_ref().is_none_or(|b| n.explains > b.explains)
        {
            best = Some(n);
        }
    };
    // Other processes and steal slow runs down: a run that took longer while they took less
    // says nothing of them.
    consider(regression(&points, |r| r.others).filter(|(_, slope)| *slope > 0.0).map(|(r2, slope)| Noise {
        cause: Cause::OtherProcesses,
        explains: r2,
        at: Vec::new(),
        evidence: format!(
            "other processes' CPU time explains {:.0}% of the variation within points: a tenth of a CPU used by them made a run {:.1}% slower",
            100.0 * r2,
            100.0 * ((0.1 * slope).exp() - 1.0)
        ),
    }));
    consider(regression(&points, |r| r.stolen).filter(|(_, slope)| *slope > 0.0).map(|(r2, _)| {
        Noise {
            cause: Cause::Steal,
            explains: r2,
            at: Vec::new(),
            evidence: format!(
                "the hypervisor's steal time explains {:.0}% of the variation within points",
                100.0 * r2
            ),
        }
    }));
    // A lower clock makes a run slower: a slope of the other sign is not the clock's doing.
    consider(regression(&points, |r| r.mhz).filter(|(_, slope)| *slope < 0.0).map(|(r2, slope)| Noise {
        cause: Cause::Frequency,
        explains: r2,
        at: Vec::new(),
        evidence: format!(
            "the CPUs' clock explains {:.0}% of the variation within points: 100 MHz less made a run {:.1}% slower",
            100.0 * r2,
            100.0 * ((-100.0 * slope).exp() - 1.0)
        ),
    }));
    // A slower loop goes with a slower run: the other sign is not the machine's pace.
    consider(regression(&points, |r| r.log_pace).filter(|(_, slope)| *slope > 0.0).map(|(r2, slope)| Noise {
        cause: Cause::Pace,
        explains: r2,
        at: Vec::new(),
        evidence: format!(
            "the machine's own pace (a fixed loop timed before each run) explains {:.0}% of the variation within points: the loop 1% slower went with a run {:.1}% slower",
            100.0 * r2,
            100.0 * (1.01f64.powf(slope) - 1.0)
        ),
    }));
    consider(regression(&points, |r| r.log_memory).filter(|(_, slope)| *slope > 0.0).map(|(r2, slope)| Noise {
        cause: Cause::MemoryPace,
        explains: r2,
        at: Vec::new(),
        evidence: format!(
            "the machine's memory (a walk through twice its last-level cache, timed before each run) explains {:.0}% of the variation within points: the walk 10% slower went with a run {:.1}% slower",
            100.0 * r2,
            100.0 * (1.1f64.powf(slope) - 1.0)
        ),
    }));
    // Said over the time a point's runs spanned: a rate per minute extrapolated from runs a few
    // seconds apart read "slower by 18052.4% a minute".
    let spans: Vec<f64> = points.iter().map(|p| span(p.iter().map(|r| r.started))).collect();
    let span_s = spans.iter().sum::<f64>() / spans.len() as f64;
    consider(regression(&points, |r| Some(r.started)).map(|(r2, slope)| Noise {
        cause: Cause::Drift,
        explains: r2,
        at: Vec::new(),
        evidence: format!(
            "runs got {} by {:.0}% over the {} a point's runs spanned, explaining {:.0}% of the variation within points",
            if slope > 0.0 { "slower" } else { "faster" },
            100.0 * (slope * span_s).exp_m1().abs(),
            if span_s >= 120.0 { format!("{:.0} min", span_s / 60.0) } else { format!("{span_s:.0} s") },
            100.0 * r2
        ),
    }));
    consider(groups(doc, &points));
    best.filter(|b| b.explains >= EXPLAINS)
}

/// Seconds from the first to the last of some instants.
fn span(instants: impl Iterator<Item = f64>) -> f64 {
    let (lo, hi) =
        instants.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), t| (lo.min(t), hi.max(t)));
    (hi - lo).max(0.0)
}

/// Pooled within-point regression of ln wall time on `x` ([`within_groups`]): the share of the
/// variation it explains and the slope, when the slope is significant at 5%; `None` when a run
/// lacks `x`.
fn regression(points: &[Vec<Run>], x: impl Fn(&Run) -> Option<f64>) -> Option<(f64, f64)> {
    let groups: Option<Vec<Vec<(f64, f64)>>> = points
        .iter()
        .map(|runs| runs.iter().map(|r| Some((x(r)?, r.log_wall))).collect())
        .collect();
    within_groups(&groups?, 2)
}

/// Points whose runs split into a fast and a slow group: the split that leaves the least
/// variation within the groups, when it leaves at most [`SPLIT_LEAVES`] of it, the groups are
/// [`GROUPS_APART`] and each has [`GROUP_RUNS`] runs. The share explained is pooled over the
/// points that split so.
fn groups(doc: &Results, points: &[Vec<Run>]) -> Option<Noise> {
    let (mut between, mut total) = (0.0, 0.0);
    let (mut lines, mut at) = (Vec::new(), Vec::new());
    let measured = doc.points.iter().enumerate().filter(|(_, p)| runs(p).len() >= 3);
    for (runs, (i, point)) in points.iter().zip(measured) {
        let mut v: Vec<f64> = runs.iter().map(|r| r.log_wall).collect();
        v.sort_by(f64::total_cmp);
        let ss = |s: &[f64]| {
            let m = s.iter().sum::<f64>() / s.len() as f64;
            s.iter().map(|x| (x - m).powi(2)).sum::<f64>()
        };
        let all = ss(&v);
        total += all;
        let split = (GROUP_RUNS..=v.len().saturating_sub(GROUP_RUNS))
            .map(|k| (k, ss(&v[..k]) + ss(&v[k..])))
            .min_by(|a, b| a.1.total_cmp(&b.1));
        let Some((k, within)) = split else { continue };
        let mean = |s: &[f64]| s.iter().sum::<f64>() / s.len() as f64;
        let (fast, slow) = (mean(&v[..k]).exp(), mean(&v[k..]).exp());
        if all > 0.0 && within <= SPLIT_LEAVES * all && slow >= GROUPS_APART * fast {
            between += all - within;
            at.push(i);
            lines.push(format!(
                "{}: {k} runs near {fast:.3} s, {} near {slow:.3} s",
                point.label(),
                v.len() - k
            ));
        }
    }
    (total > 0.0 && !lines.is_empty()).then(|| Noise {
        cause: Cause::TwoGroups,
        explains: between / total,
        evidence: format!("two groups of runs ({})", lines.join("; ")),
        at,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::{MachineCpu, RunRecord, ThreadReport};

    fn doc(points: &[&[(f64, f64, f64)]]) -> Results {
        let plan = crate::plan::build(
            &crate::plan::Request {
                command: vec!["prog".into(), "{t}".into()],
                params: vec![format!(
                    "t={}",
                    (1..=points.len()).map(|i| i.to_string()).collect::<Vec<_>>().join(",")
                )],
                ..Default::default()
            },
            4,
        )
        .unwrap();
        let mut doc = Results::new(plan, vec![]).unwrap();
        for (p, runs) in points.iter().enumerate() {
            for (i, &(wall_s, others_cpu, started)) in runs.iter().enumerate() {
                let threads = ThreadReport {
                    machine_cpu: Some(MachineCpu {
                        busy_s: wall_s + others_cpu,
                        ..Default::default()
                    }),
                    ..Default::default()
                };
                doc.points[p].runs.push(RunRecord {
                    index: i as u32,
                    wall_s,
                    user_s: wall_s,
                    started_unix_s: started,
                    exit_code: Some(0),
                    threads: Some(Box::new(threads)),
                    ..Default::default()
                });
            }
        }
        doc
    }

    #[test]
    fn the_slow_runs_that_other_processes_shared_are_put_down_to_them() {
        // Each run slower by as much as others used the CPUs: 1 s alone, +0.3 s beside 0.5 CPU.
        let d = doc(&[
            &[
                (1.0, 0.0, 0.0),
                (1.3, 0.65, 10.0),
                (1.02, 0.02, 20.0),
                (1.28, 0.6, 30.0),
                (0.99, 0.0, 40.0),
            ],
            &[
                (0.5, 0.0, 5.0),
                (0.66, 0.33, 15.0),
                (0.51, 0.0, 25.0),
                (0.5, 0.01, 35.0),
                (0.64, 0.3, 45.0),
            ],
        ]);
        let n = of(&d).expect("a cause");
        assert_eq!(n.cause, Cause::OtherProcesses, "{n:?}");
        assert!(n.explains > 0.8, "{n:?}");
    }

    #[test]
    fn a_machine_that_slows_over_the_sweep_is_drift_and_two_kinds_of_runs_are_groups() {
        let drift: Vec<(f64, f64, f64)> =
            (0..8).map(|i| (1.0 + 0.05 * i as f64, 0.0, 30.0 * i as f64)).collect();
        let n = of(&doc(&[&drift])).expect("drift");
        assert_eq!(n.cause, Cause::Drift, "{n:?}");
        // 35% slower over the 3.5 minutes the runs spanned, said over that span.
        assert!(n.evidence.contains("by 35% over the 4 min a point's runs spanned"), "{n:?}");
        assert!(n.evidence.contains("slower"), "{}", n.evidence);
        let two = [1.0, 1.5, 1.01, 1.49, 0.99, 1.51, 1.0, 1.5];
        let runs: Vec<(f64, f64, f64)> =
            two.iter().enumerate().map(|(i, &w)| (w, 0.0, 10.0 * i as f64)).collect();
        let n = of(&doc(&[&runs])).expect("two groups");
        assert_eq!(n.cause, Cause::TwoGroups, "{n:?}");
        assert!(n.evidence.contains("4 runs near 1.000 s, 4 near 1.500 s"), "{}", n.evidence);
    }

    #[test]
    fn runs_at_a_lower_clock_are_put_down_to_the_clock() {
        // A governor that moved between 2.0 and 2.6 GHz: each run's time follows its clock.
        let mut d = doc(&[&[(0.0, 0.0, 0.0); 6]]);
        for (i, (r, mhz)) in d.points[0]
            .runs
            .iter_mut()
            .zip([2600.0, 2000.0, 2600.0, 2100.0, 2550.0, 2000.0])
            .enumerate()
        {
            r.wall_s = 2600.0 / mhz * (1.0 + 0.005 * (i % 2) as f64);
            r.user_s = r.wall_s;
            if let Some(t) = r.threads.as_mut() {
                t.machine_cpu =
                    Some(MachineCpu { busy_s: r.wall_s, stolen_s: 0.0, mhz: Some(mhz) });
            }
        }
        let n = of(&d).expect("the clock");
        assert_eq!(n.cause, Cause::Frequency, "{n:?}");
        assert!(n.advice().contains("governor"), "{}", n.advice());
    }

    #[test]
    fn runs_after_a_slower_loop_are_put_down_to_the_machines_pace() {
        // A host whose speed came and went: each run as slow as the loop timed before it, with
        // runs spread so that no trend over time explains them.
        let mut d = doc(&[&[(0.0, 0.0, 0.0); 6], &[(0.0, 0.0, 0.0); 6]]);
        let paces = [1.5e6, 1.65e6, 1.52e6, 1.7e6, 1.5e6, 1.62e6];
        for (p, point) in d.points.iter_mut().enumerate() {
            for (i, (r, pace)) in point.runs.iter_mut().zip(paces).enumerate() {
                r.wall_s = (1.0 - 0.4 * p as f64) * pace / 1.5e6 * (1.0 + 0.004 * (i % 2) as f64);
                r.user_s = r.wall_s;
                r.started_unix_s = 10.0 * i as f64;
                r.pace_ns = Some(pace);
                if let Some(t) = r.threads.as_mut() {
                    t.machine_cpu = Some(MachineCpu { busy_s: r.wall_s, ..Default::default() });
                }
            }
        }
        let n = of(&d).expect("the pace");
        assert_eq!(n.cause, Cause::Pace, "{n:?}");
        assert!(
            n.explains > 0.9
                && n.evidence.contains("the loop 1% slower went with a run 1.0% slower"),
            "{n:?}"
        );
        // Without the loop's times, the same runs are put down to nothing measured.
        d.points.iter_mut().flat_map(|p| &mut p.runs).for_each(|r| r.pace_ns = None);
        assert!(of(&d).is_none_or(|n| n.cause != Cause::Pace));
    }

    #[test]
    fn runs_after_a_slower_walk_through_memory_are_put_down_to_the_hosts_memory() {
        // zstd -5 in a slow spell of this VM's host: one thread took 2.1–2.2 s or 2.8–3.1 s (a
        // sweep's runs), the loop of integer steps still; the walks are set as a shell loop beside
        // zstd measured them in another spell (173–210 ns around fast runs, 214–234 ns slow).
        let mut d = doc(&[&[(0.0, 0.0, 0.0); 6], &[(0.0, 0.0, 0.0); 6]]);
        let walls = [[2.23, 3.07, 2.11, 3.0, 2.99, 2.8], [1.55, 1.75, 1.58, 1.74, 1.64, 1.66]];
        let walks = [
            [185.0, 231.0, 180.0, 226.0, 219.0, 212.0],
            [182.0, 214.0, 188.0, 216.0, 200.0, 203.0],
        ];
        for (p, point) in d.points.iter_mut().enumerate() {
            for (i, r) in point.runs.iter_mut().enumerate() {
                r.wall_s = walls[p][i];
                r.user_s = r.wall_s;
                r.started_unix_s = 10.0 * (i * 2 + p) as f64;
                r.pace_ns = Some(1.63e6 * (1.0 + 0.01 * ((i * 7 + p) % 3) as f64));
                r.memory_pace_ns = Some(walks[p][i]);
                if let Some(t) = r.threads.as_mut() {
                    t.machine_cpu = Some(MachineCpu { busy_s: r.wall_s, ..Default::default() });
                }
            }
        }
        let n = of(&d).expect("the memory");
        assert_eq!(n.cause, Cause::MemoryPace, "{n:?}");
        assert!(n.evidence.contains("the walk 10% slower went with a run"), "{}", n.evidence);
        assert!(n.advice().contains("last-level cache"), "{}", n.advice());
    }

    #[test]
    fn noise_no_suspect_explains_is_not_put_down_to_one() {
        let runs: Vec<(f64, f64, f64)> = [1.0, 1.12, 0.95, 1.07, 1.01, 0.9, 1.1]
            .iter()
            .enumerate()
            .map(|(i, &w)| (w, 0.1, 10.0 * i as f64))
            .collect();
        assert_eq!(of(&doc(&[&runs])), None);
    }
}
