//! Judging one series of a sweep. On a worker axis the largest count that is not oversubscribed
//! (P) is judged against the baseline (B): the ledger of P against B's CPU for the same work gives
//! the causes, gated by P's efficiency; the curve gives the rest. Copies are weak scaling: each
//! does the whole work, and whether they slow each other is the question. On any other axis
//! (block size, files, input, build) every point gets the causes of its own idle capacity.

use super::causes::{self, CpuNoise, MEDIUM, Pick, Scope, Shares};
use super::ledger::{self, Baseline, Cause, Ledger};
use super::whatif::Measured;
use super::wording::At;
use super::{Finding, Kind, Severity, ceiling, curve, evidence, ranks};
use crate::analysis::count_label;
use crate::analysis::threads::{self, PointThreads};
use crate::fmt;
use crate::plan::{Counts, Scaling};
use crate::results::analysis::{Analysis, PointScaling, SeriesAnalysis};
use crate::results::{Class, Hot, PointResult, Results, Wait};
use crate::stats::Summary;
use crate::stats::sequential::{self, Confidence};

/// Findings for one series.
pub fn judge(doc: &Results, a: &Analysis, s: &SeriesAnalysis, out: &mut Vec<Finding>) {
    let name = a.axis.param.as_str();
    let label = if s.label.is_empty() { String::new() } else { format!(" [{}]", s.label) };
    let sampled: Vec<Option<PointThreads>> = doc.points.iter().map(threads::of_point).collect();
    let shares = |class: Class, pick: Option<&Pick>| shares_by_count(s, &sampled, class, pick);
    if matches!(a.axis.counts, Counts::Other) {
        return each_point(doc, s, name, &sampled, &shares, out);
    }
    let cpus = doc.machine.allowed_cpus as f64;
    let Some(Pair { base, top, ratio, lt, lb, eff, eff_lo, eff_hi, gated, busy_baseline }) =
        Pair::of(doc, a, s)
    else {
        // One count alone has no curve, but what idled its CPUs still has causes, judged against
        // its own runs as a point outside any series is: the GIL at 2 threads, 45% of the CPUs
        // idle on it, had read `efficiency 100%` and nothing else.
        if let [only] = s.points.as_slice() {
            point(doc, only.index, out);
        }
        return;
    };
    // A baseline that kept more CPUs busy than its count, and a count that did as well as its CPU
    // use allows: no gap to raise causes by.
    let gated = gated && busy_baseline.is_none_or(|b| b.eff < curve::GOOD_EFFICIENCY);
    let copies = a.axis.counts == Counts::Copies;
    if a.axis.counts == Counts::Workers && !doc.plan.mentions(name) {
        // Every point ran the same program: differences between points are the machine's drift.
        out.push(curve::parameter_unused(top, name, &label));
        return;
    }
    // Ranks that all ran on this machine share its CPUs as threads do: 4 MPI ranks on 2 CPUs
    // take turns on them.
    let local = a.axis.counts == Counts::Workers
        || (a.axis.counts == Counts::Ranks && ranks_all_here(doc, s));
    let oversubscribed =
        lt.as_ref().filter(|l| local && top.count <= cpus && l.demand > cpus + 0.5).and_then(|l| {
            let runq = sampled[top.index].as_ref().map_or(0.0, |t| curve::own_runq(t, l));
            (runq >= 0.1).then_some((l.demand.round() as usize, runq))
        });
    let mut feeder_binds = false;
    if let Some(l) = &lt {
        let scope = Scope {
            at: At::Count(top.count, name),
            at_count: Some(top.count),
            series: &s.label,
            // Against what the baseline's CPU use allowed, when it kept more CPUs busy than its
            // count: the ledger's loss starts there too.
            gap: 1.0 - busy_baseline.map_or(eff, |b| b.eff.min(1.0)),
            gated,
            baseline: Some(base.count),
            waits: waits_of(&sampled, top.index),
            hot: hot_of(&sampled, top.index),
            oversubscribed,
            cpu_within_noise: cpu_within_noise(
                &doc.points[base.index],
                &doc.points[top.index],
                ratio,
            ),
            cpu_ratio_lo: cpu_ratio(&doc.points[base.index], &doc.points[top.index], ratio)
                .map(|(r, _)| r.interval[0]),
            shares: &shares,
            strong_ratio: ((ratio - 1.0).abs() <= SAME_WORK).then(|| top.count / base.count),
            one_at_a_time: one_at_a_time(&doc.points[top.index]),
            measured: Some(Measured {
                at: top.count,
                speedup: top.speedup,
                ci95: top.speedup_ci95,
            }),
            switches: evidence::switches(&doc.points[base.index], &doc.points[top.index], ratio),
        };
        feeder_binds = causes::findings(&scope, l, out);
    }
    ceiling::judge(doc, top.index, top.count, name, &label, out);
    if copies {
        let moved = |c: Class| match (&sampled[base.index], &sampled[top.index]) {
            (Some(b), Some(t)) => share(t, c) - share(b, c),
            _ => 0.0,
        };
        ranks::copies(doc, top, base, &moved, sampled[top.index].as_ref(), &label, out);
        return;
    }
    let t = Top {
        doc,
        a,
        s,
        name,
        label: &label,
        cpus,
        local,
        gated,
        pair: Pair { base, top, ratio, lt, lb, eff, eff_lo, eff_hi, gated, busy_baseline },
    };
    let (loaded, load_said) = shape(&t, feeder_binds, out);
    verdict(&t, (loaded, load_said), out);
}

/// Whether every rank of every counted run of the series' points ran on this machine.
fn ranks_all_here(doc: &Results, s: &SeriesAnalysis) -> bool {
    let mut runs = s.points.iter().flat_map(|p| &doc.points[p.index].runs).filter(|r| r.counted());
    runs.all(|r| !r.ranks.is_empty() && r.ranks.iter().all(|x| x.node == doc.machine.host))
}

/// The share of thread time (percent) by count of a series' sampled points: of a class, or of
/// the waits of it that `pick` chooses.
fn shares_by_count(
    s: &SeriesAnalysis,
    sampled: &[Option<PointThreads>],
    class: Class,
    pick: Option<&Pick>,
) -> Vec<(f64, f64)> {
    s.points
        .iter()
        .filter_map(|p| {
            let t = sampled[p.index].as_ref()?;
            let total: f64 = t.classes.values().sum();
            let v = match pick {
                Some(pick) => t
                    .waits
                    .iter()
                    .filter(|w| w.class == Some(class) && pick(w, &t.waits))
                    .map(|w| w.seconds)
                    .sum(),
                None => t.classes.get(&class).copied().unwrap_or(0.0),
            };
            // An empty sum of floats is -0.0: "-0%" would read oddly.
            Some((p.count, (100.0 * v / total.max(1e-12)).max(0.0)))
        })
        .collect()
}

/// The waits of point `i`, when it was sampled.
fn waits_of(sampled: &[Option<PointThreads>], i: usize) -> &[Wait] {
    sampled[i].as_ref().map_or(&[][..], |t| t.waits.as_slice())
}

/// Where point `i`'s threads were on a CPU, when it was sampled.
fn hot_of(sampled: &[Option<PointThreads>], i: usize) -> &[Hot] {
    sampled[i].as_ref().map_or(&[][..], |t| t.hot.as_slice())
}

/// On an axis that counts no workers, the causes of every point's idle capacity, judged against
/// its own runs.
fn each_point(
    doc: &Results,
    s: &SeriesAnalysis,
    name: &str,
    sampled: &[Option<PointThreads>],
    shares: &Shares,
    out: &mut Vec<Finding>,
) {
    for p in &s.points {
        let Some(l) = ledger::of(&doc.points[p.index], None) else { continue };
        let scope = Scope {
            at: At::Value(p.count, name),
            at_count: Some(p.count),
            series: &s.label,
            gap: l.gap,
            gated: l.gap >= MEDIUM,
            baseline: None,
            waits: waits_of(sampled, p.index),
            hot: hot_of(sampled, p.index),
            oversubscribed: None,
            cpu_within_noise: None,
            cpu_ratio_lo: None,
            shares,
            strong_ratio: None,
            one_at_a_time: one_at_a_time(&doc.points[p.index]),
            measured: None,
            switches: None,
        };
        causes::findings(&scope, &l, out);
    }
}

/// A worker, copy or rank series at its top count, for what its curve says.
struct Top<'a> {
    doc: &'a Results,
    a: &'a Analysis,
    s: &'a SeriesAnalysis,
    name: &'a str,
    label: &'a str,
    cpus: f64,
    local: bool,
    /// Whether the gap is real and the baseline's CPU use leaves one to raise causes by.
    gated: bool,
    pair: Pair<'a>,
}

/// Whether other processes held the CPUs for most of the loss: the curve is then the machine's,
/// not the program's, so nothing is said of its shape (serial fraction, threads beyond the
/// CPUs). The loss is the efficiency's when it is larger than the idle capacity: a baseline that
/// keeps 1.6 CPUs busy loses 40% efficiency at 2 threads with its CPUs full, and a little load
/// then is most of what idled, not most of what was lost.
fn loaded(t: &Top) -> bool {
    t.gated
        && t.pair.lt.as_ref().is_some_and(|l| {
            let held: f64 = [Cause::OtherLoad, Cause::Stolen, Cause::Observer]
                .iter()
                .filter_map(|c| l.item(c))
                .map(|i| i.core_s)
                .sum();
            causes::of_the_gap(1.0 - t.pair.eff, l, held) >= causes::LOADED
        })
}

/// The highest severity, `medium` or above, of the causes raised at count `at`.
fn cause_at(out: &[Finding], at: Option<f64>) -> Option<Severity> {
    out.iter()
        .filter(|f| f.at == at && !f.kind.describes_curve() && f.kind != Kind::NoisyMeasurement)
        .map(|f| f.severity)
        .max()
        .filter(|sev| *sev >= Severity::Medium)
}

/// A retrograde count that a raised cause explains is said no higher than that cause, once the
/// causes' severities are final: a lock said as medium because the runs could not tell it high
/// (a host that stole a third of the CPU time) had left `[high] retrograde` above it, whose own
/// evidence reads "the cause above is what grows with the count".
pub fn defer_retrograde(out: &mut [Finding]) {
    for i in 0..out.len() {
        if out[i].kind == Kind::Retrograde
            && let Some(cause) = cause_at(out, out[i].at)
        {
            out[i].severity = out[i].severity.min(cause);
        }
    }
}

/// The curve's shape beside the causes at the top count: retrograde, more threads than CPUs, a
/// baseline that filled them (`feeder_binds`: a feeder binds first). Returns whether other
/// processes held the CPUs for most of the loss, and whether the ledger said so.
fn shape(t: &Top, feeder_binds: bool, out: &mut Vec<Finding>) -> (bool, bool) {
    let loaded = loaded(t);
    // The ledger's own word: other processes explain most of the loss at this count.
    let load_said = out.iter().any(|f| {
        f.kind == Kind::NoisyMeasurement
            && f.at == Some(t.pair.top.count)
            && f.cost_pct.is_some_and(|c| c >= 100.0 * causes::LOADED)
    });
    // A slowdown measured while other processes held the CPUs may be theirs: said, not raised.
    // One that a cause at that count explains (a lock two threads fight over) comes after it.
    let retro = curve::retrograde(t.s, t.name, t.cpus, t.local, t.label).map(|mut f| {
        if loaded || load_said {
            f.severity = Severity::Low;
            f.evidence.push("other processes held the CPUs for most of the lost capacity: the machine's load may make it slower, not the count".into());
            // "Run at 1 thread" is no advice where the load may have made the larger counts slow.
            if let Some(r) = &t.s.retrograde {
                f.advice = format!(
                    "sweep again on a quiet machine before choosing the count: under this load {} ran fastest",
                    count_label(r.beyond, t.name)
                );
            }
        } else if cause_at(out, f.at).is_some() {
            // Its severity is capped at the cause's by `defer_retrograde`, once final.
            f.evidence.push("the cause above is what grows with the count".into());
        }
        f
    });
    out.extend(retro);
    if t.local {
        out.extend(curve::oversubscription(
            t.doc,
            t.s,
            (t.name, t.cpus, t.label),
            t.a.axis.scaling == Scaling::Weak,
        ));
        let said = out
            .iter()
            .any(|f| f.kind == Kind::CpuOversubscription && f.at == Some(t.pair.top.count));
        if let (Some(l), false, false) = (&t.pair.lt, said, loaded) {
            out.extend(curve::busy_threads_beyond_cpus(
                t.doc,
                t.pair.top,
                (l, t.pair.lb.as_ref()),
                (t.name, t.cpus, t.label),
                t.gated,
            ));
        }
    }
    busy_baseline(t, feeder_binds, out);
    (loaded, load_said)
}

/// A baseline that already kept more CPUs busy than its count, so that the top count wants
/// more CPUs than the machine has: the count oversubscribes the CPUs by design, and that is
/// what to read first (a Java stream whose caller works beside `parallelism` workers).
fn busy_baseline(t: &Top, feeder_binds: bool, out: &mut Vec<Finding>) {
    let Some(b) = t.pair.busy_baseline else { return };
    // Measured beyond what the limit allowed, the baseline's extra CPU did not grow with the
    // count (hmmsearch's reader thread beside its workers: 1.87× where "at most 1.75×" would have
    // been said): the limit held nothing.
    if b.eff > 1.0 {
        return;
    }
    let line = curve::busy_baseline_line(
        t.pair.base,
        t.pair.top,
        (b.busy, b.possible),
        b.eff,
        (t.name, t.cpus),
    );
    // A feeder that ran while the workers waited, or any high cause, binds before the CPUs
    // do (it would hold the speed-up down on any number of CPUs): the CPUs' share of the gap
    // is then not raised.
    let bound_first = !feeder_binds && !high_cause_at(out, Some(t.pair.top.count));
    let share = curve::busy_baseline_share(t.pair.base, t.pair.top, b.possible);
    // A limit the top count came nowhere near, its CPUs idle, is not what held it: lrzip's
    // helper kept 1.1 CPUs busy at one thread, so at most 1.77× on 2 CPUs, and two threads ran
    // at 0.99× with 40% of the capacity idle for want of work (the limit 23% of the gap).
    let top_busy = t.pair.top.cpu_pct.map_or(1.0, |c| c / 100.0 / t.cpus);
    if share < BUSY_BASELINE_SHARE && top_busy < BUSY_TOP {
        return;
    }
    let severity = if bound_first {
        curve::busy_baseline_severity(share, 1.0 - t.pair.eff)
    } else {
        Severity::Low
    };
    match out
        .iter_mut()
        .find(|f| f.kind == Kind::CpuOversubscription && f.at == Some(t.pair.top.count))
    {
        Some(f) => {
            f.severity = f.severity.max(severity);
            f.evidence.splice(
                0..0,
                [line, curve::busy_baseline_gap_line(t.pair.base, t.pair.top, share)],
            );
        }
        None => {
            let mut f = curve::busy_baseline(
                t.pair.base,
                t.pair.top,
                (b.busy, b.possible),
                b.eff,
                (t.name, t.cpus, t.label),
            );
            f.severity = severity;
            out.push(f);
        }
    }
}

/// What the count did: threads ignored, start-up dominated, a serial fraction, undecided,
/// superlinear or scales well; `loaded` and `load_said` as [`shape`] found them.
fn verdict(t: &Top, (loaded, load_said): (bool, bool), out: &mut Vec<Finding>) {
    // A command that ran for a fixed time did more work at more threads: nothing its wall time
    // says of the curve holds, nor CPU time "for the same work"; what its threads waited on does.
    if let Some(f) = super::fixed_time::fixed_time(t.doc, t.s, t.name, t.label) {
        out.retain(|x| {
            (!x.kind.describes_curve() || x.kind == Kind::NoisyMeasurement)
                && x.kind != Kind::OnCpuInefficiency
        });
        out.push(f);
        return;
    }
    threads_ignored(t, loaded || load_said, out);
    // Runs of a few milliseconds are mostly process start-up: what their threads waited on is
    // described, not raised, whatever the gap (a warm read of 11 ms lost 1.4 ms to its start-up
    // and read as a medium serial-fraction); with a gap above a fifth, that is the finding.
    let tiny = curve::tiny_runs(t.doc, t.pair.top);
    if tiny {
        for x in
            out.iter_mut().filter(|x| x.at == Some(t.pair.top.count) && x.severity > Severity::Low)
        {
            x.severity = Severity::Info;
        }
    }
    if let Some(f) =
        curve::startup_dominated(t.doc, t.pair.base, t.pair.top, 1.0 - t.pair.eff, t.name, t.label)
    {
        // Nor is a count slower by a fraction of a millisecond.
        demote_retrograde(
            out,
            "the runs are mostly process start-up: a few tenths of a millisecond either way is not scaling",
        );
        out.push(f);
    }
    let explained = tiny
        || loaded
        || out.iter().any(|f| {
            f.at == Some(t.pair.top.count)
                && f.severity >= Severity::Medium
                && f.kind != Kind::NoisyMeasurement
        });
    // Amdahl's fit on the counts means nothing when the baseline's CPU use is not its count; nor
    // is it the gap's cause when the ledger names causes for most of it, each too small to
    // raise: zstd -T2 at 83%, its CPUs busy 93%, the loss 42% extra CPU on busy CPUs and 53%
    // small waits, read "find the part that does not run in parallel".
    let accounted = t.pair.lt.as_ref().is_some_and(|l| l.unexplained < AMDAHL_UNEXPLAINED);
    if t.gated
        && !explained
        && !accounted
        && t.pair.busy_baseline.is_none()
        && !out.iter().any(|f| f.kind == Kind::SerialFraction && f.at == Some(t.pair.top.count))
    {
        out.extend(curve::serial_fraction(t.s, t.pair.top, t.name, t.label));
    }
    efficiency_verdict(t, explained, out);
}

/// Amdahl's serial fraction stands for a gap only when the ledger leaves at least this share of
/// the loss unexplained (or there is no ledger: runs not sampled).
const AMDAHL_UNEXPLAINED: f64 = 0.5;

/// The parameter did not change how many threads work, unless a cause at the top count explains
/// the flat curve or other processes held the CPUs (`loaded`).
fn threads_ignored(t: &Top, loaded: bool, out: &mut Vec<Finding>) {
    // A cause that explains the gap (a starved consumer, a lock) is why more threads did nothing.
    let caused = out.iter().any(|f| {
        f.at == Some(t.pair.top.count)
            && f.severity >= Severity::Medium
            && !f.kind.describes_curve()
            && f.kind != Kind::NoisyMeasurement
    });
    // Nor when other processes held the CPUs for most of the loss: they alone can flatten the
    // speed-up that the finding stands on.
    let work = |i: usize| threads::of_point(&t.doc.points[i]).and_then(|p| p.work_helpers);
    let work_threads = work(t.pair.base.index).zip(work(t.pair.top.index)).map(|(b, t)| (b.0, t.0));
    let ignored = curve::threads_ignored(
        t.pair.base,
        t.pair.top,
        (t.pair.lb.as_ref(), t.pair.lt.as_ref()),
        work_threads,
        t.cpus,
        t.name,
        t.label,
    )
    .filter(|_| !caused && !loaded);
    if let Some(f) = ignored {
        // The idle CPUs with no work are what an ignored parameter looks like: said once.
        out.retain(|x| !(x.kind == Kind::SerialFraction && x.at == Some(t.pair.top.count)));
        // The same program ran at every count: a slower count is the machine's, not the count's.
        demote_retrograde(
            out,
            "the count does not change how many threads work: a slower count is the machine's drift",
        );
        out.push(f);
    }
}

/// What the top count's efficiency says when nothing else does: undecided, superlinear or
/// scales well (`explained`: a cause, tiny runs or the machine's load account for the gap).
fn efficiency_verdict(t: &Top, explained: bool, out: &mut Vec<Finding>) {
    // An interval reaching both below a poor efficiency and up to a good one cannot tell either
    // way, whichever side the measured value fell on.
    let undecided =
        t.pair.eff_lo < curve::UNDECIDED_BELOW && t.pair.eff_hi >= curve::GOOD_EFFICIENCY;
    if !t.gated && !explained && undecided {
        let causes =
            out.iter().any(|f| f.at == Some(t.pair.top.count) && !f.kind.describes_curve());
        out.push(curve::undecided(
            t.doc,
            t.pair.top,
            t.name,
            [t.pair.eff_lo, t.pair.eff_hi],
            causes,
            t.label,
        ));
    } else if t.pair.busy_baseline.is_some() {
        // Said by the oversubscription finding, with the baseline's CPU use.
    } else if let Some(f) = (t.pair.eff_lo > SUPERLINEAR)
        .then(|| {
            superlinear(
                t.doc,
                (t.pair.base, t.pair.top),
                (t.pair.ratio, t.pair.lb.as_ref()),
                t.name,
                t.label,
            )
        })
        .flatten()
    {
        out.push(f);
    } else if t.pair.eff >= curve::GOOD_EFFICIENCY
        || (!t.gated && !explained && t.pair.eff_hi >= curve::GOOD_EFFICIENCY)
    {
        out.extend(curve::scales_well(
            t.s,
            t.pair.top,
            (t.name, t.local.then_some(t.cpus)),
            [t.pair.eff, t.pair.eff_lo, t.pair.eff_hi],
            t.label,
            t.pair.lt.as_ref(),
        ));
    }
}

/// Whether a high cause (not a description of the curve, nor the CPUs' own oversubscription)
/// stands at count `at`: it binds before a baseline that filled the CPUs does.
pub fn high_cause_at(out: &[Finding], at: Option<f64>) -> bool {
    out.iter().any(|g| g.at == at && is_high_cause(g))
}

/// Whether a finding is a high cause: not a statement about the curve (a serial fraction the
/// ledger measured is a cause), nor oversubscription.
pub fn is_high_cause(g: &Finding) -> bool {
    g.severity == Severity::High && !g.states_the_curve() && g.kind != Kind::CpuOversubscription
}

/// The two points a series on a worker, copy or rank axis is judged on: the baseline and the
/// largest count that is not oversubscribed, with the ledger of each and how sure the top's
/// efficiency is.
pub struct Pair<'a> {
    /// The baseline point.
    pub base: &'a PointScaling,
    /// The largest count fitted.
    pub top: &'a PointScaling,
    /// The work the top did against the baseline's.
    pub ratio: f64,
    /// The top's ledger against the baseline's CPU for the same work.
    pub lt: Option<Ledger>,
    /// The baseline's own ledger.
    pub lb: Option<Ledger>,
    /// The top's efficiency.
    pub eff: f64,
    /// The low end of its interval (at most `eff`).
    pub eff_lo: f64,
    /// The high end of its interval, where the work's CPU time allows.
    pub eff_hi: f64,
    /// Whether the gap below 90% is real ([`gap_is_real`]).
    pub gated: bool,
    /// When the baseline kept more CPUs busy than its count, the efficiency against its CPU use.
    pub busy_baseline: Option<BusyBaseline>,
}

/// A baseline that kept more CPUs busy than its count (a caller thread that works too, threads of
/// the program's own): the speed-up its CPU use allows at the top count, and the top's efficiency
/// against that, which decides whether the program scales and how severe its causes are (the
/// ledger's loss already starts from the baseline's CPU).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BusyBaseline {
    /// CPUs the baseline kept busy on average.
    pub busy: f64,
    /// The speed-up at the top count that its CPU use allows on this machine.
    pub possible: f64,
    /// The top's speed-up against it.
    pub eff: f64,
    /// The high end of that efficiency's interval.
    pub eff_hi: f64,
}

/// A baseline busier than its count is judged by its CPU use when that use lowers the speed-up
/// the machine allows at the top count to this share of the counts' ratio or less (stress-ng's
/// message queue: 1.42 CPUs at one instance, so at most 1.41× on 2 CPUs, not 2×); a baseline whose
/// helpers add a few percent (zstd's I/O threads) is judged by its count.
const BUSY_BASELINE: f64 = 0.9;
/// Such a baseline is raised as a finding when the CPUs' limit accounts for at least this share
/// of the gap between the counts' speed-up and the measured one…
const BUSY_BASELINE_SHARE: f64 = 0.5;
/// …or the top count kept at least this share of the CPUs busy.
const BUSY_TOP: f64 = 0.9;

impl<'a> Pair<'a> {
    /// The pair of series `s`, when it has a count above its baseline.
    pub fn of(doc: &Results, a: &Analysis, s: &'a SeriesAnalysis) -> Option<Pair<'a>> {
        let base = s.points.iter().find(|p| p.count == s.baseline)?;
        let top =
            s.points.iter().rev().find(|p| p.count <= s.fitted_up_to && p.count > s.baseline)?;
        // The work the top count did against the baseline's: measured where every run has a
        // throughput (a fixed-time benchmark does more work at more threads); else, under weak
        // scaling (copies always) each count does proportionally more work.
        let ratio = curve::work_ratio(doc, base, top, a.axis.scaling == Scaling::Weak);
        let useful = Baseline::of(&doc.points[base.index], ratio);
        let lt = ledger::of(&doc.points[top.index], useful.as_ref());
        let lb = ledger::of(
            &doc.points[base.index],
            Baseline::mean_of(&doc.points[base.index], 1.0).as_ref(),
        );
        // A baseline that already kept more CPUs busy than its count (a caller thread that works
        // too, threads of the program's own) leaves less to gain than the counts say: the
        // efficiency is then judged against what its CPU use allows on this machine.
        let rel = top.count / base.count;
        let cpus = doc.machine.allowed_cpus as f64;
        let local_strong = a.axis.counts == Counts::Workers && a.axis.scaling == Scaling::Strong;
        let busy_baseline = base
            .cpu_pct
            .map(|c| c / 100.0)
            .filter(|b| local_strong && *b > base.count && cpus > 0.0)
            .map(|b| (b, (rel * b).min(cpus) / b))
            .filter(|(_, possible)| *possible <= BUSY_BASELINE * rel);
        let eff = top.efficiency.unwrap_or(1.0);
        // No run can be more efficient than the work's CPU time allows: the interval stops there.
        let bound = lt.as_ref().and_then(|l| {
            cpu_bound(&doc.points[base.index], &doc.points[top.index], ratio, l.capacity)
        });
        let interval = curve::efficiency_interval(top, base.count);
        let eff_hi = interval.map_or(eff, |c| c[1]).min(bound.unwrap_or(f64::INFINITY));
        let eff_lo = interval.map_or(eff, |c| c[0]).min(eff);
        let gated = gap_is_real(eff, eff_hi, lt.as_ref());
        let busy_baseline = busy_baseline.map(|(busy, possible)| BusyBaseline {
            busy,
            possible,
            eff: eff * rel / possible,
            eff_hi: (interval.map_or(eff, |c| c[1]) * rel / possible)
                .min(bound.unwrap_or(f64::INFINITY)),
        });
        Some(Pair { base, top, ratio, lt, lb, eff, eff_lo, eff_hi, gated, busy_baseline })
    }
}

/// An efficiency whose whole interval lies above this is superlinear beyond the runs' noise.
pub const SUPERLINEAR: f64 = 1.05;
/// The top's CPU per unit of work at most this share of the baseline's (the interval's high end)…
const CHEAPER: f64 = 0.95;
/// …or the baseline idle this share of its capacity, explain a superlinear speed-up.
const BASELINE_IDLE: f64 = 0.2;

/// A speed-up beyond what the count allows, explained rather than praised: the baseline paid more
/// CPU for the same work (its working set fits the caches only when split among threads), or it
/// left its CPU idle waiting (waits that more threads overlap). `None` when neither shows.
fn superlinear(
    doc: &Results,
    (base, top): (&PointScaling, &PointScaling),
    (ratio, lb): (f64, Option<&Ledger>),
    name: &str,
    label: &str,
) -> Option<Finding> {
    let (b, t) = (count_label(base.count, name), count_label(top.count, name));
    let lead = format!(
        "{:.2}× at {t} against {b} ({:.0}% efficiency) is more than the count gives",
        top.speedup,
        100.0 * top.efficiency.unwrap_or(1.0)
    );
    if let Some((n, _)) = cpu_ratio(&doc.points[base.index], &doc.points[top.index], ratio)
        .filter(|(n, _)| n.interval[1] < CHEAPER)
    {
        return Some(Finding {
            noise: None,
            kind: Kind::OnCpuInefficiency,
            severity: Severity::Low,
            summary: format!(
                "{lead}: at {b} the same work took {:.2}× the CPU time it took at {t}, so the baseline is the inefficient run (a working set that fits the caches only when split among threads, or the memory bandwidth of one core){label}",
                1.0 / (n.interval[0] * n.interval[1]).sqrt()
            ),
            evidence: vec![format!(
                "CPU time per unit of work at {t} against {b}: {:.2}–{:.2}× (95% interval)",
                n.interval[0], n.interval[1]
            )],
            advice: format!(
                "read the speed-up against a baseline that does not pay this (--baseline {}), and look at the single-thread case: a smaller working set per pass (blocking, tiling) makes it faster too",
                fmt::count(top.count)
            ),
            cost_pct: None,
            cost_per_run_pct: Vec::new(),
            at: Some(top.count),
            what_if: None,
        });
    }
    let idle = lb.map(|l| l.gap).filter(|g| *g >= BASELINE_IDLE)?;
    let mut first = Vec::new();
    causes_of(&doc.points[base.index], At::Count(base.count, name), &mut first);
    let mut f = first.into_iter().find(|f| f.kind != Kind::NoisyMeasurement)?;
    f.severity = Severity::Low;
    f.evidence.insert(
        0,
        format!(
            "{lead}: at {b} the job left {:.0}% of its CPU idle, waits that more threads overlap",
            100.0 * idle
        ),
    );
    f.at = Some(top.count);
    Some(f)
}

/// A retrograde finding that the runs cannot stand behind becomes `low`, saying why.
fn demote_retrograde(out: &mut [Finding], why: &str) {
    for f in out.iter_mut().filter(|f| f.kind == Kind::Retrograde && f.severity > Severity::Low) {
        f.severity = Severity::Low;
        f.evidence.push(why.into());
    }
}

/// Whether a gap below 90% efficiency is real: even the optimistic end of the efficiency's interval
/// falls short, or the point's own runs put at least a tenth of its capacity idle (the low end of
/// their interval) while its work threads waited or had no work — the efficiency cannot then reach
/// 90%, whatever the spread of the wall times it divides.
pub fn gap_is_real(eff: f64, eff_hi: f64, top: Option<&ledger::Ledger>) -> bool {
    let good = 1.0 - MEDIUM;
    eff_hi < good || (eff < good && top.is_some_and(|l| l.idle_low() >= MEDIUM))
}

/// Work ratios within this of 1 are the same work (the runs' own noise in throughput × time).
const SAME_WORK: f64 = 0.1;

/// The most efficient any run of `top` can have been: a run that kept its CPUs busy with more CPU
/// time than the work needed at the baseline (its dearest run, × `work_ratio` under weak scaling)
/// is at most that much efficient, however its wall time varied (efficiency = the baseline's CPU
/// ÷ (capacity × wall), and capacity × wall ≥ the CPU the run used). `None` when a run used more
/// CPU than its capacity (threads beside the counted ones), or without runs on a side.
fn cpu_bound(base: &PointResult, top: &PointResult, work_ratio: f64, capacity: f64) -> Option<f64> {
    let cpu = |r: &crate::results::RunRecord| r.user_s + r.sys_s;
    let dearest = base.runs.iter().filter(|r| r.counted()).map(cpu).reduce(f64::max)? * work_ratio;
    let runs: Vec<_> = top.runs.iter().filter(|r| r.counted()).collect();
    if runs.is_empty() || runs.iter().any(|r| cpu(r) > capacity * r.wall_s * 1.02) {
        return None;
    }
    runs.iter().map(|r| dearest / cpu(r).max(1e-12)).reduce(f64::max)
}

/// Two or more of a point's threads on a CPU at once for less than this share of the time any ran…
const TOGETHER: f64 = 0.1;

/// …means they ran one at a time — where two could (a job on one CPU always runs one at a time).
fn one_at_a_time(p: &PointResult) -> bool {
    let (mut any, mut two) = (0.0, 0.0);
    let runs = p.runs.iter().filter(|r| r.counted()).filter_map(|r| r.threads.as_deref());
    for t in runs.filter(|t| t.capacity.as_ref().is_some_and(|c| c.cpus >= 2.0)) {
        any += t.concurrency_s.iter().skip(1).sum::<f64>();
        two += t.concurrency_s.iter().skip(2).sum::<f64>();
    }
    any > 0.0 && two < TOGETHER * any
}

fn share(t: &PointThreads, c: Class) -> f64 {
    let total: f64 = t.classes.values().sum();
    t.classes.get(&c).copied().unwrap_or(0.0) / total.max(1e-12)
}

/// Extra CPU in the fastest runs below this share is taken as the machine's noise.
const FASTEST_WITHIN: f64 = 0.05;

/// The job's CPU time per unit of work at `top` against `base` when the extra is within the runs'
/// noise: the interval of the ratio reaches 1, or the fastest runs differ by less than
/// [`FASTEST_WITHIN`] (a machine whose speed drifts in steps can slow every run of one point, a
/// program that costs more does so in every run). `None` when the CPU grew beyond both, when
/// every run of `top` cost more than every run of `base` by more than [`FASTEST_WITHIN`] (an
/// interval of few runs can reach 1 for one outlier; all three of three runs above all three of
/// the other point's happens by chance once in twenty), or with fewer than two successful runs a
/// side (nothing to judge the noise by).
fn cpu_within_noise(base: &PointResult, top: &PointResult, work_ratio: f64) -> Option<CpuNoise> {
    let (n, separated) = cpu_ratio(base, top, work_ratio)?;
    ((n.interval[0] <= 1.0 && !separated) || n.fastest <= 1.0 + FASTEST_WITHIN).then_some(n)
}

/// The job's CPU time per unit of work at `top` against `base` (its interval and its fastest
/// runs' ratio), and whether every run of `top` cost more than every run of `base` by more than
/// [`FASTEST_WITHIN`]. The interval's width comes from the per-round ratios where the two points
/// ran in the same interleaved rounds (a host's slow spell costs both runs of a round alike),
/// else from the runs unpaired.
fn cpu_ratio(base: &PointResult, top: &PointResult, work_ratio: f64) -> Option<(CpuNoise, bool)> {
    let cpu = |p: &PointResult, per: f64| -> Vec<(Option<u32>, f64)> {
        p.runs
            .iter()
            .filter(|r| r.counted())
            .map(|r| (r.round, (r.user_s + r.sys_s) / per))
            .collect()
    };
    let (bb, tt) = (cpu(base, 1.0), cpu(top, work_ratio));
    let h = sequential::by_rounds_or_not(&bb, &tt, Confidence::FIXED)?.half;
    let values = |v: &[(Option<u32>, f64)]| -> Vec<f64> { v.iter().map(|x| x.1).collect() };
    let (top, base) = (Summary::of(&values(&tt))?, Summary::of(&values(&bb))?);
    let ratio = top.mean / base.mean;
    let interval = [ratio * (-h).exp(), ratio * h.exp()];
    let fastest = top.min / base.min.max(1e-12);
    let separated = top.min / base.max.max(1e-12) > 1.0 + FASTEST_WITHIN;
    Some((CpuNoise { interval, fastest }, separated))
}

/// Findings for a point outside any series (a single point, or a sweep over text values).
pub fn point(doc: &Results, index: usize, out: &mut Vec<Finding>) {
    let p = &doc.points[index];
    let at = if doc.points.len() > 1 { At::Point(p) } else { At::Run };
    causes_of(p, at, out);
}

/// Findings for a window of a running job (`attach`), as one point run once: what idled the
/// CPUs its threads could use; or, when they kept them busy, that nothing did.
pub fn window(p: &PointResult, cpus: f64, out: &mut Vec<Finding>) {
    let Some(l) = ledger::of(p, None) else { return };
    let crowded = threads::of_point(p).and_then(|t| curve::crowded_window(&t, &l, cpus));
    let own_gap = own_gap(&l);
    match crowded {
        Some(f) => out.push(f),
        None if own_gap < MEDIUM => out.push(curve::busy_window(&l, own_gap)),
        None => {}
    }
    causes_of(p, At::Window, out);
}

/// The share of a point's capacity it lost, less what the machine's other load, the hypervisor
/// and watching took: the job's own loss.
fn own_gap(l: &ledger::Ledger) -> f64 {
    let held: f64 = [Cause::OtherLoad, Cause::Stolen, Cause::Observer]
        .iter()
        .filter_map(|c| l.item(c))
        .map(|i| i.core_s)
        .sum();
    l.gap - held / (l.capacity * l.wall_s).max(1e-12)
}

/// The causes of one point's idle capacity, judged against its own runs, `at` saying where.
/// With no baseline to say what it should have done, only the job's own loss raises them: the
/// lock probe without its lock, alone at 2 threads, lost 12% of its CPUs, 5 points of them to the
/// sampler, whose start made one thread late and left a tail read as `[medium] load-imbalance`.
fn causes_of(p: &PointResult, at: At, out: &mut Vec<Finding>) {
    let Some(l) = ledger::of(p, None) else { return };
    let t = threads::of_point(p);
    let none = |_: Class, _: Option<&Pick>| Vec::new();
    let scope = Scope {
        at,
        at_count: None,
        series: "",
        gap: l.gap,
        gated: own_gap(&l) >= MEDIUM,
        baseline: None,
        waits: t.as_ref().map_or(&[][..], |t| t.waits.as_slice()),
        hot: t.as_ref().map_or(&[][..], |t| t.hot.as_slice()),
        oversubscribed: None,
        cpu_within_noise: None,
        cpu_ratio_lo: None,
        shares: &none,
        strong_ratio: None,
        one_at_a_time: one_at_a_time(p),
        measured: None,
        switches: None,
    };
    causes::findings(&scope, &l, out);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// CI's lock probe under 21–37% steal: the lock said as medium (its severity left open),
    /// the retrograde it explains still high and listed first.
    #[test]
    fn a_retrograde_count_is_said_no_higher_than_the_cause_that_explains_it() {
        let mut out = vec![
            Finding::bare(Kind::Retrograde, Severity::High, Some(2.0)),
            Finding::bare(Kind::LockContention, Severity::Medium, Some(2.0)),
            Finding::bare(Kind::Retrograde, Severity::High, Some(4.0)),
        ];
        defer_retrograde(&mut out);
        assert_eq!(out[0].severity, Severity::Medium);
        // No cause raised at 4: the retrograde there stands as it was.
        assert_eq!(out[2].severity, Severity::High);
    }

    #[test]
    fn a_gap_is_real_by_its_interval_or_by_the_idle_capacity_the_point_measured() {
        let idle =
            |shares: &[f64]| ledger::Ledger { idle_shares: shares.to_vec(), ..Default::default() };
        assert!(gap_is_real(0.80, 0.88, None));
        assert!(!gap_is_real(0.85, 0.93, None));
        // A serial decode idles 11% of the capacity in every run: 85% is real.
        assert!(gap_is_real(0.85, 0.93, Some(&idle(&[0.11, 0.12, 0.115]))));
        // Idle in one run only: the runs cannot tell.
        assert!(!gap_is_real(0.85, 0.93, Some(&idle(&[0.02, 0.20, 0.05]))));
        // 92% is no gap, whatever sat idle.
        assert!(!gap_is_real(0.92, 0.97, Some(&idle(&[0.11, 0.12, 0.115]))));
    }

    fn point(cpu: &[f64]) -> PointResult {
        let runs = cpu
            .iter()
            .map(|&c| crate::results::RunRecord {
                wall_s: c,
                user_s: c,
                exit_code: Some(0),
                ..Default::default()
            })
            .collect();
        PointResult { params: Default::default(), command: vec![], target_runs: None, runs }
    }

    #[test]
    fn a_run_busy_with_twice_the_work_s_cpu_is_at_most_half_efficient_whatever_its_wall_time() {
        let runs = |v: &[(f64, f64)]| PointResult {
            params: Default::default(),
            command: vec![],
            target_runs: None,
            runs: v
                .iter()
                .map(|&(wall_s, user_s)| crate::results::RunRecord {
                    wall_s,
                    user_s,
                    exit_code: Some(0),
                    ..Default::default()
                })
                .collect(),
        };
        // A spinning critical section: 0.12 s of work at 1 thread, 0.46-0.96 s of CPU at 2.
        let base = runs(&[(0.125, 0.124), (0.122, 0.118), (0.126, 0.126)]);
        let top = runs(&[(0.498, 0.961), (0.242, 0.462), (0.403, 0.705)]);
        let b = cpu_bound(&base, &top, 1.0, 2.0).unwrap();
        assert!((b - 0.126 / 0.462).abs() < 1e-9, "{b}");
        // A run that used more CPU than its capacity allows has no such bound.
        let over = runs(&[(0.2, 0.5), (0.25, 0.45)]);
        assert_eq!(cpu_bound(&base, &over, 1.0, 2.0), None);
    }

    #[test]
    fn extra_cpu_is_noise_when_its_interval_reaches_one_or_the_fastest_runs_agree() {
        // Every run 20% dearer: the program's.
        assert_eq!(
            cpu_within_noise(&point(&[1.0, 1.01, 0.99]), &point(&[1.2, 1.21, 1.19]), 1.0),
            None
        );
        // A machine that ran the top's runs slow but one: its interval is above 1, its fastest run
        // costs what the baseline's do.
        let slow = [0.79, 0.78, 0.79, 0.78, 0.79, 0.78, 0.79, 0.78, 0.79, 0.48];
        let n = cpu_within_noise(&point(&[0.48, 0.47, 0.48, 0.47, 0.48]), &point(&slow), 1.0)
            .expect("noise");
        assert!(n.interval[0] > 1.0 && (n.fastest - 1.02).abs() < 0.01, "{n:?}");
        // Spread wide enough for the interval to reach 1.
        assert!(
            cpu_within_noise(&point(&[0.5, 0.8, 0.6]), &point(&[0.7, 0.9, 0.6]), 1.0).is_some()
        );
        // One run far dearer than the others widens the interval down to 1, but every run costs
        // twice the baseline's dearest: not noise.
        assert_eq!(
            cpu_within_noise(&point(&[0.168, 0.173, 0.173]), &point(&[0.351, 0.464, 1.136]), 1.0),
            None
        );
        // Under weak scaling the top does twice the work.
        assert!(cpu_within_noise(&point(&[1.0, 1.0]), &point(&[2.0, 2.02]), 2.0).is_some());
    }
}
