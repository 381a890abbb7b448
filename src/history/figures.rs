//! One figure per sweep along a series of comparable sweeps: the time (or throughput) at each
//! count, the efficiency at the largest count, the serial fraction, USL's σ and κ, the best count
//! and the first finding. Each value comes with the per-run values it stands for, so that a step
//! can be tested on the runs themselves: wall times, and the efficiency and Karp–Flatt serial
//! fraction of each run at the largest count against the mean at the baseline. A run that other
//! processes slowed down (see [`disturbed`]) is left out: its figure is the machine's, not the
//! program's.

use super::record::{PointRow, RunRow, Sweep};
use crate::analysis::count_label;
use crate::stats::median;

/// A figure to follow over the history.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Figure {
    /// Wall time (or throughput, for tables without times) at a count, the median of the runs;
    /// `None` = the largest.
    Time(Option<f64>),
    /// Efficiency at the largest count: the median of each run's against the baseline's median.
    Efficiency,
    /// Amdahl's serial fraction (Gustafson's under weak scaling).
    SerialFraction,
    /// USL's σ (contention).
    Sigma,
    /// USL's κ (coherency).
    Kappa,
    /// The count with the highest rate.
    Best,
    /// The kind of the first finding.
    Finding,
}

/// Which way is worse.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Worse {
    /// More is worse (time, serial fraction).
    Higher,
    /// Less is worse (efficiency, throughput).
    Lower,
    /// Neither: shown, never judged.
    Neither,
}

/// One sweep's value of a figure.
#[derive(Clone, Debug)]
pub struct Entry {
    /// Position of the sweep in the series.
    pub sweep: usize,
    /// The value, when the sweep has one.
    pub value: Option<f64>,
    /// Its interval (95%), when known.
    pub interval: Option<[f64; 2]>,
    /// The values of the runs behind it.
    pub samples: Vec<f64>,
    /// Text for a figure that is not a number (the first finding).
    pub text: Option<String>,
    /// Runs left out because other processes took CPUs from them.
    pub left_out: usize,
}

/// A figure's values over a series of sweeps.
#[derive(Clone, Debug)]
pub struct Track {
    /// `time at threads=8`, `efficiency at threads=8 [size=big]`.
    pub name: String,
    /// Which way is worse.
    pub worse: Worse,
    /// How values are shown: `s`, `%`, `ops/s`, or empty.
    pub unit: &'static str,
    /// One per sweep of the series.
    pub entries: Vec<Entry>,
    /// For the serial fraction: the count its change is felt at, as a relative change of time there.
    pub felt_at: Option<f64>,
}

impl Track {
    /// A value as shown: `1.23 s`, `94%`, `0.8%`.
    pub fn show(&self, v: f64) -> String {
        match self.unit {
            "s" => format!("{} s", crate::report::num(v)),
            "%" => format!("{:.1}%", v * 100.0),
            "" => crate::report::model::count(v),
            u => format!("{v:.4} {u}"),
        }
    }
}

/// The name of a figure as typed on the command line.
pub fn parse(name: &str, at: Option<f64>) -> Result<Figure, String> {
    Ok(match name {
        "time" | "throughput" => Figure::Time(at),
        "efficiency" => Figure::Efficiency,
        "serial-fraction" | "serial" => Figure::SerialFraction,
        "sigma" => Figure::Sigma,
        "kappa" => Figure::Kappa,
        "best" => Figure::Best,
        "finding" => Figure::Finding,
        other => {
            return Err(format!(
                "{other}: the figures are time, efficiency, serial-fraction, sigma, kappa, best and finding"
            ));
        }
    })
}

/// The sub-series (other parameters) of a series of sweeps, in the first sweep's order.
fn subseries(sweeps: &[Sweep]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for s in sweeps {
        for p in &s.points {
            if !out.contains(&p.series) {
                out.push(p.series.clone());
            }
        }
    }
    out
}

/// The share of the CPUs a job may use that other processes may keep busy during a run, beyond
/// their usual load at its count ([`Usual`]), before the run is left out.
pub const DISTURBED: f64 = 0.05;

/// `/proc/stat` counts in clock ticks of 10 ms per CPU: the error of a difference over `cpus` CPUs
/// is about √cpus ticks.
const TICK_S: f64 = 0.01;

/// The CPUs other processes kept busy during the quieter sweeps of a series, per count (and other
/// parameters): the lower quartile of the sweeps' medians over their runs (0 without the reading).
/// On a machine that is never quiet, the sweeps are compared under the load they all had, and at a
/// count that leaves CPUs idle other work may fill them; a history whose first sweeps were quiet
/// and later ones loaded keeps the quiet ones as the measure. Worked out once per series.
pub struct Usual(Vec<(String, Option<f64>, f64)>);

impl Usual {
    /// The usual load at every count of `sweeps`.
    pub fn of(sweeps: &[Sweep]) -> Usual {
        let mut keys: Vec<(&str, Option<f64>)> = Vec::new();
        for p in sweeps.iter().flat_map(|s| &s.points) {
            if !keys.contains(&(p.series.as_str(), p.count)) {
                keys.push((p.series.as_str(), p.count));
            }
        }
        Usual(
            keys.into_iter()
                .map(|(series, count)| {
                    (series.to_string(), count, Self::load(sweeps, series, count))
                })
                .collect(),
        )
    }

    fn load(sweeps: &[Sweep], series: &str, count: Option<f64>) -> f64 {
        let mut per_sweep: Vec<f64> = sweeps
            .iter()
            .filter_map(|s| {
                let v: Vec<f64> = s
                    .points
                    .iter()
                    .filter(|q| q.series == series && q.count == count)
                    .flat_map(|q| &q.runs)
                    .filter(|r| r.ok)
                    .filter_map(|r| r.others_cpus)
                    .collect();
                median(&v)
            })
            .collect();
        if per_sweep.is_empty() {
            return 0.0;
        }
        per_sweep.sort_by(f64::total_cmp);
        crate::stats::quantile(&per_sweep, 0.25)
    }

    /// The usual load at point `p`'s count.
    pub fn at(&self, p: &PointRow) -> f64 {
        self.0
            .iter()
            .find(|(series, count, _)| *series == p.series && *count == p.count)
            .map_or(0.0, |k| k.2)
    }
}

/// The runs of a point that other processes disturbed: those during which they kept more than
/// [`DISTURBED`] of the CPUs the sweep could use busy beyond their usual load `background`, and beyond
/// what `/proc/stat`'s ticks can resolve. Even on CPUs a run left idle they take from it (a
/// hyperthread's sibling, shared caches, memory bandwidth, the hypervisor's other vCPUs), and how
/// much cannot be told. A run without the machine's reading (not sampled) is kept.
pub fn disturbed(p: &PointRow, m: &crate::machine::Machine, background: f64) -> Vec<bool> {
    let allowed = m.allowed_cpus.max(1) as f64;
    p.runs
        .iter()
        .map(|r| {
            let (Some(others), Some(wall)) = (r.others_cpus, r.wall_s.filter(|w| *w > 0.0)) else {
                return false;
            };
            r.ok && others - background > (DISTURBED * allowed).max(resolution(m, wall))
        })
        .collect()
}

/// The CPUs' worth of busy time `/proc/stat`'s ticks cannot resolve over a run of `wall` seconds:
/// two ticks' error on every CPU, added as independent errors.
fn resolution(m: &crate::machine::Machine, wall: f64) -> f64 {
    2.0 * (m.logical_cpus.max(1) as f64).sqrt() * TICK_S / wall
}

/// The runs of the last of `sweeps` left out as [`disturbed`], of those that succeeded, and the
/// most CPUs other processes kept busy during one of them.
pub fn left_out(sweeps: &[Sweep]) -> (usize, usize, f64) {
    let (mut out, mut ok, mut most) = (0, 0, 0.0_f64);
    let Some(s) = sweeps.last() else { return (0, 0, 0.0) };
    let usual = Usual::of(sweeps);
    for p in &s.points {
        for (r, d) in p.runs.iter().zip(disturbed(p, &s.machine, usual.at(p))) {
            ok += usize::from(r.ok);
            if d {
                out += 1;
                most = most.max(r.others_cpus.unwrap_or(0.0));
            }
        }
    }
    (out, ok, most)
}

/// The time at `count` over `sweeps`, where the last sweep's runs count at their best case: each
/// run's wall time less the share of the CPUs other processes held, as if they had taken every
/// CPU-second they used from the run, and as many more as `/proc/stat`'s ticks cannot resolve
/// (`t × (N − X) / N`). Their usual load is not subtracted: on CPUs the run and the others fill,
/// it is squeezed out rather than added. A step this track still shows in the last sweep is not
/// the machine's doing. `None` without wall times there.
fn best_case_time(sweeps: &[Sweep], count: f64, axis: &str, sub: &str) -> Option<Track> {
    let mut t = track(sweeps, Figure::Time(Some(count)), axis, sub, false)?;
    let s = sweeps.last()?;
    let p = point(s, sub, count)?;
    let allowed = s.machine.allowed_cpus.max(1) as f64;
    let v: Vec<f64> = p
        .runs
        .iter()
        .filter(|r| r.ok)
        .filter_map(|r| {
            let w = r.wall_s.filter(|w| *w > 0.0)?;
            let unresolved = resolution(&s.machine, w);
            let taken = (r.others_cpus.unwrap_or(0.0) + unresolved).clamp(0.0, allowed);
            Some(w * (allowed - taken) / allowed).filter(|w| *w > 0.0)
        })
        .collect();
    let last = t.entries.last_mut()?;
    let summary = crate::stats::Summary::of(&v)?;
    last.value = Some(summary.median);
    last.interval = summary.ci95;
    last.samples = v;
    last.left_out = 0;
    Some(t)
}

/// [`best_case_time`] at every count of every sub-series.
pub fn best_case_times(sweeps: &[Sweep], axis: &str) -> Vec<Track> {
    let subs = subseries(sweeps);
    subs.iter()
        .flat_map(|sub| {
            counts(sweeps, sub)
                .into_iter()
                .filter_map(move |c| best_case_time(sweeps, c, axis, sub))
        })
        .collect()
}

/// How the runs of a series follow the machine's pace: its usual value over the series (the median
/// of the runs', nanoseconds per million steps of the loop timed before each run) and how much of
/// a change of pace a run's time follows (the slope of ln wall time on ln pace, within points, so
/// that the program's own steps between sweeps do not count). A CPU-bound program follows it
/// nearly one for one; one that waits on a disk does not, and keeps its times as measured.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pace {
    /// The usual pace, ns per million steps.
    pub usual_ns: f64,
    /// The share of a change of pace the times follow, in [0, 1].
    pub slope: f64,
}

impl Pace {
    /// The series' pace, when enough runs have one and their times follow it beyond chance (5%).
    pub fn of(sweeps: &[Sweep]) -> Option<Pace> {
        let runs = |p: &PointRow| -> Vec<(f64, f64)> {
            p.runs
                .iter()
                .filter(|r| r.ok)
                .filter_map(|r| {
                    Some((
                        r.pace_ns.filter(|x| *x > 0.0)?.ln(),
                        r.wall_s.filter(|w| *w > 0.0)?.ln(),
                    ))
                })
                .collect()
        };
        let groups: Vec<Vec<(f64, f64)>> =
            sweeps.iter().flat_map(|s| &s.points).map(runs).filter(|v| v.len() >= 2).collect();
        let (_, slope) =
            crate::stats::within_groups(&groups, 4).filter(|(_, slope)| *slope > 0.0)?;
        let all: Vec<f64> = groups.iter().flatten().map(|(x, _)| x.exp()).collect();
        Some(Pace { usual_ns: median(&all)?, slope: slope.min(1.0) })
    }

    /// What a run's time is multiplied by to be at the usual pace.
    fn scale(&self, r: &RunRow) -> f64 {
        r.pace_ns.filter(|p| *p > 0.0).map_or(1.0, |own| (self.usual_ns / own).powf(self.slope))
    }
}

/// The per-run time-like values of a point's undisturbed runs (wall times, or 1/throughput),
/// whether they are times, and how many runs were left out, against the `usual` load. With the
/// series' [`Pace`], each run that has its own is scaled to the usual one: as if the machine had
/// run at its usual speed (a run without one is kept as measured).
fn timelike(usual: &Usual, pace: Option<Pace>, s: &Sweep, p: &PointRow) -> (Vec<f64>, bool, usize) {
    let d = disturbed(p, &s.machine, usual.at(p));
    let kept: Vec<&RunRow> =
        p.runs.iter().zip(d).filter(|(r, d)| r.ok && !d).map(|(r, _)| r).collect();
    let left_out = p.runs.iter().filter(|r| r.ok).count() - kept.len();
    let scale = |r: &RunRow| pace.map_or(1.0, |p| p.scale(r));
    let walls: Vec<f64> = kept.iter().filter_map(|r| r.wall_s.map(|w| w * scale(r))).collect();
    if !walls.is_empty() || !p.walls().is_empty() {
        return (walls, true, left_out);
    }
    let tp: Vec<&RunRow> =
        kept.into_iter().filter(|r| r.throughput.is_some_and(|t| t > 0.0)).collect();
    (tp.iter().filter_map(|r| r.throughput.map(|t| scale(r) / t)).collect(), false, left_out)
}

fn mean(v: &[f64]) -> Option<f64> {
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// The counts of a sub-series, ascending.
fn counts(sweeps: &[Sweep], sub: &str) -> Vec<f64> {
    let mut c: Vec<f64> = sweeps
        .iter()
        .flat_map(|s| &s.points)
        .filter(|p| p.series == sub)
        .filter_map(|p| p.count)
        .collect();
    c.sort_by(f64::total_cmp);
    c.dedup();
    c
}

fn point<'a>(s: &'a Sweep, sub: &str, count: f64) -> Option<&'a PointRow> {
    s.points.iter().find(|p| p.series == sub && p.count == Some(count))
}

/// The tracks of `figure` over `sweeps` (oldest first, points filled): one per sub-series.
pub fn tracks(sweeps: &[Sweep], figure: Figure, axis: &str) -> Vec<Track> {
    let subs = subseries(sweeps);
    subs.iter().filter_map(|sub| track(sweeps, figure, axis, sub, false)).collect()
}

/// The same, from runs scaled to the machine's usual [`Pace`] (as measured where there is no
/// pace, or where the times do not follow it): what `check` judges, so that a host that got slower is not a regression of the program.
/// A time track so scaled says so in its name.
pub fn paced_tracks(sweeps: &[Sweep], figure: Figure, axis: &str) -> Vec<Track> {
    let subs = subseries(sweeps);
    subs.iter().filter_map(|sub| track(sweeps, figure, axis, sub, true)).collect()
}

fn track(sweeps: &[Sweep], figure: Figure, axis: &str, sub: &str, paced: bool) -> Option<Track> {
    let usual = Usual::of(sweeps);
    let pace = if paced { Pace::of(sweeps) } else { None };
    let counts = counts(sweeps, sub);
    let suffix = if sub.is_empty() { String::new() } else { format!(" [{sub}]") };
    let largest = *counts.last()?;
    let baseline = counts[0];
    let at = |c: f64| count_label(c, axis);
    let entries = |f: &dyn Fn(&Sweep) -> Entry| sweeps.iter().map(f).collect::<Vec<_>>();
    let empty = |i: usize| Entry {
        sweep: i,
        value: None,
        interval: None,
        samples: Vec::new(),
        text: None,
        left_out: 0,
    };
    let model = |s: &Sweep| s.models.iter().find(|m| m.series == sub).cloned();
    let index = |s: &Sweep| sweeps.iter().position(|x| std::ptr::eq(x, s)).unwrap_or(0);
    // Per-run values at the largest count against the median at the baseline, and the runs left
    // out at either.
    let per_run = |s: &Sweep, f: &dyn Fn(f64, f64) -> f64| -> (Vec<f64>, usize) {
        let (Some(b), Some(l)) = (point(s, sub, baseline), point(s, sub, largest)) else {
            return (Vec::new(), 0);
        };
        let ((tb, _, out_b), (tl, _, out_l)) =
            (timelike(&usual, pace, s, b), timelike(&usual, pace, s, l));
        let Some(tb) = median(&tb) else { return (Vec::new(), out_b + out_l) };
        (tl.iter().map(|t| f(tb / t, largest / baseline)).collect(), out_b + out_l)
    };
    let t = match figure {
        Figure::Time(c) => {
            let c = c.unwrap_or(largest);
            let times =
                sweeps.iter().filter_map(|s| point(s, sub, c)).any(|p| !p.walls().is_empty());
            Track {
                name: format!(
                    "{} at {}{suffix}{}",
                    if times { "time" } else { "throughput" },
                    at(c),
                    if pace.is_some() { " (at the machine's usual pace)" } else { "" }
                ),
                worse: if times { Worse::Higher } else { Worse::Lower },
                unit: if times { "s" } else { "per s" },
                felt_at: None,
                entries: entries(&|s| {
                    let Some(p) = point(s, sub, c) else { return empty(index(s)) };
                    let (v, is_time, left_out) = timelike(&usual, pace, s, p);
                    let v: Vec<f64> = if is_time { v } else { v.iter().map(|t| 1.0 / t).collect() };
                    let summary = crate::stats::Summary::of(&v);
                    Entry {
                        sweep: index(s),
                        value: summary.as_ref().map(|s| s.median),
                        interval: summary.and_then(|s| s.ci95),
                        samples: v,
                        text: None,
                        left_out,
                    }
                }),
            }
        }
        Figure::Efficiency => Track {
            name: format!("efficiency at {}{suffix}", at(largest)),
            worse: Worse::Lower,
            unit: "%",
            felt_at: None,
            entries: entries(&|s| {
                let (samples, left_out) = per_run(s, &|speedup, p| speedup / p);
                // With every run kept, the efficiency the sweep printed (its mean rates' ratio),
                // where its own baseline is this one; the per-run values judge a step.
                let printed = point(s, sub, largest)
                    .and_then(|p| p.efficiency)
                    .filter(|_| left_out == 0)
                    .filter(|_| {
                        point(s, sub, baseline)
                            .and_then(|b| b.efficiency)
                            .is_some_and(|e| (e - 1.0).abs() < 1e-9)
                    });
                Entry {
                    sweep: index(s),
                    value: printed.or_else(|| median(&samples)),
                    interval: None,
                    samples,
                    text: None,
                    left_out,
                }
            }),
        },
        Figure::SerialFraction => Track {
            name: format!("serial fraction{suffix}"),
            worse: Worse::Higher,
            unit: "%",
            felt_at: Some(largest / baseline),
            entries: entries(&|s| {
                let (samples, left_out) =
                    per_run(s, &|speedup, p| (1.0 / speedup - 1.0 / p) / (1.0 - 1.0 / p));
                // The model was fitted on every run: with some left out, its value is the machine's too.
                let m = model(s).and_then(|m| m.serial_fraction).filter(|_| left_out == 0);
                Entry {
                    sweep: index(s),
                    value: if left_out > 0 { None } else { m.map(|m| m.0).or(mean(&samples)) },
                    interval: m.and_then(|m| m.1),
                    samples,
                    text: None,
                    left_out,
                }
            }),
        },
        Figure::Sigma | Figure::Kappa | Figure::Best => {
            let (name, pick): (&str, fn(&super::record::ModelRow) -> Option<f64>) = match figure {
                Figure::Sigma => ("USL σ (contention)", |m| m.usl_sigma),
                Figure::Kappa => ("USL κ (coherency)", |m| m.usl_kappa),
                _ => ("best count", |m| m.best_count),
            };
            Track {
                name: format!("{name}{suffix}"),
                worse: Worse::Neither,
                unit: if figure == Figure::Best { "" } else { "%" },
                felt_at: None,
                entries: entries(&|s| Entry {
                    sweep: index(s),
                    value: model(s).as_ref().and_then(pick),
                    interval: None,
                    samples: Vec::new(),
                    text: None,
                    left_out: 0,
                }),
            }
        }
        Figure::Finding => Track {
            name: "first finding".into(),
            worse: Worse::Neither,
            unit: "",
            felt_at: None,
            entries: entries(&|s| Entry {
                sweep: index(s),
                value: None,
                interval: None,
                samples: Vec::new(),
                text: s.findings.first().map(|f| format!("{} ({})", f.kind, f.severity)),
                left_out: 0,
            }),
        },
    };
    Some(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(runs: &[(f64, f64)]) -> PointRow {
        let runs = runs
            .iter()
            .map(|&(wall, others)| RunRow {
                ok: true,
                wall_s: Some(wall),
                user_s: Some(wall),
                sys_s: Some(0.0),
                others_cpus: Some(others),
                ..RunRow::default()
            })
            .collect();
        PointRow { runs, ..PointRow::default() }
    }

    #[test]
    fn a_run_is_disturbed_beyond_a_twentieth_of_the_cpus_and_the_ticks() {
        let m = crate::machine::Machine { allowed_cpus: 2, logical_cpus: 2, ..Default::default() };
        // 0.1 CPU of 2 is the limit; a run of 0.05 s cannot tell 0.3 CPU (1.5 ticks) from none.
        let p = point(&[(1.0, 0.02), (1.0, 0.5), (1.0, 0.09), (0.05, 0.3), (0.05, 0.9)]);
        assert_eq!(disturbed(&p, &m, 0.0), vec![false, true, false, false, true]);
        // On a machine always that busy, only what is beyond its usual load.
        assert_eq!(disturbed(&p, &m, 0.45), vec![false, false, false, false, false]);
        assert_eq!(disturbed(&point(&[(1.0, 0.6)]), &m, 0.45), vec![true]);
        let mut unsampled = point(&[(1.0, 0.0)]);
        unsampled.runs[0].others_cpus = None;
        assert_eq!(disturbed(&unsampled, &m, 0.0), vec![false]);
    }

    #[test]
    fn the_usual_load_is_that_of_the_quieter_sweeps_at_the_count() {
        let sweep = |others: f64| Sweep {
            points: vec![point(&[(1.0, others), (1.0, others)])],
            ..Sweep::default()
        };
        // Three quiet sweeps, then five beside other work: the quiet ones stay the measure.
        let mut g: Vec<Sweep> = [0.0, 0.02, 0.01].iter().map(|&o| sweep(o)).collect();
        g.extend((0..5).map(|_| sweep(1.0)));
        let bg = Usual::of(&g).at(&g[7].points[0]);
        assert!(bg < 0.05, "{bg}");
        // Always busy: compared under that load.
        let busy: Vec<Sweep> = (0..6).map(|i| sweep(0.9 + 0.02 * i as f64)).collect();
        assert!((Usual::of(&busy).at(&busy[0].points[0]) - 0.92).abs() < 0.02);
    }

    #[test]
    fn a_host_that_slowed_is_no_step_at_its_usual_pace_and_a_program_that_slowed_is() {
        // Twenty sweeps of three runs at one count; from the twelfth, the host runs 8% slower and
        // so do the runs (its pace with them), or the program does (the pace unchanged). An I/O
        // wait that does not follow the pace keeps its times as measured.
        let history = |host: f64, program: f64| -> Vec<Sweep> {
            (0..20)
                .map(|i| {
                    let (h, p) = if i < 12 { (1.0, 1.0) } else { (host, program) };
                    let wobble = [0.0, 0.004, -0.003, 0.002, -0.001][i % 5];
                    let mut point = point(&[(1.0, 0.0), (1.01, 0.0), (0.99, 0.0)]);
                    point.count = Some(1.0);
                    // Each run as slow as the loop before it, and a little noise of its own.
                    for (k, r) in point.runs.iter_mut().enumerate() {
                        let own = h * [1.0, 1.03, 0.98][k] * (1.0 + wobble);
                        r.wall_s = Some(own * p * (1.0 + 0.003 * ((i + k) % 3) as f64));
                        r.pace_ns = Some(1.5e6 * own);
                    }
                    Sweep { points: vec![point], ..Sweep::default() }
                })
                .collect()
        };
        let steps = |g: &[Sweep], paced: bool| {
            let t = if paced {
                paced_tracks(g, Figure::Time(None), "threads")
            } else {
                tracks(g, Figure::Time(None), "threads")
            };
            super::super::check::all(&t[0], &super::super::check::Options::default())
        };
        let host = history(1.08, 1.0);
        assert_eq!(steps(&host, false).len(), 1, "as measured, the host's step is a step");
        assert!(
            steps(&host, true).is_empty(),
            "at its usual pace, it is none: {:?}",
            steps(&host, true)
        );
        let program = history(1.0, 1.08);
        let found = steps(&program, true);
        assert!(found.len() == 1 && found[0].at == 12 && found[0].regression, "{found:?}");
        assert!(found[0].figure.contains("at the machine's usual pace"), "{}", found[0].figure);
        let mut waits = history(1.08, 1.0);
        for (i, r) in waits.iter_mut().flat_map(|s| &mut s.points[0].runs).enumerate() {
            r.wall_s = Some(1.0 + 0.01 * (i % 3) as f64);
        }
        assert_eq!(Pace::of(&waits), None);
    }

    #[test]
    fn the_best_case_takes_all_the_others_cpu_and_still_finds_a_slowdown_beyond_it() {
        // Six sweeps at 2 threads on 2 CPUs, 0.10 s a run beside a usual load of 0.2 CPUs; then
        // one beside a busy loop per CPU, which took one CPU of the two and left it `slow`.
        let machine =
            crate::machine::Machine { allowed_cpus: 2, logical_cpus: 2, ..Default::default() };
        let sweep = |wall: f64, others: f64| {
            let mut p = point(&[(wall, others), (wall * 1.01, others), (wall * 0.99, others)]);
            p.count = Some(2.0);
            Sweep { points: vec![p], machine: machine.clone(), ..Sweep::default() }
        };
        let history = |slow: f64| {
            let mut g: Vec<Sweep> =
                (0..6).map(|i| sweep(0.10 * (1.0 + 0.002 * (i % 3) as f64), 0.2)).collect();
            g.push(sweep(0.10 * slow, 1.0));
            g
        };
        let regressions = |g: &[Sweep]| -> usize {
            best_case_times(g, "threads")
                .iter()
                .filter_map(|t| super::super::check::newest(t, &Default::default()))
                .filter(|s| s.regression)
                .count()
        };
        // Twice as slow with half the CPUs, and a little more for the switches: the machine's.
        assert_eq!(regressions(&history(2.15)), 0);
        // Three times as slow: beyond anything the others' CPU time explains.
        assert_eq!(regressions(&history(3.0)), 1);
    }
}
