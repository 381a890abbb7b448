//! What the runs cannot decide yet, and how many runs would decide it: the efficiency at the
//! count a series is judged at whose interval straddles 90% and reaches below 85% (from 85% up
//! either answer reads the same) or, measured above 105%, reaches below it (superlinear or not),
//! a raised cause whose severity the runs leave to chance (its share of the loss straddling 40%,
//! or the efficiency straddling 80% beside such a share), and a slower or faster count whose
//! difference from the best the runs cannot tell apart. A sweep that measures until its verdict
//! is clear adds runs to the points each question names.

use super::causes::{HIGH_GAP, HIGH_SHARE};
use super::curve::{GOOD_EFFICIENCY, INDIFFERENT};
use super::series::{Pair, SUPERLINEAR};
use crate::analysis::observations::{self, Obs};
use crate::analysis::{count_label, log_interval};
use crate::plan::Counts;
use crate::results::Results;
use crate::results::analysis::{Analysis, PointScaling, SeriesAnalysis};
use crate::results::findings::{Finding, Severity};
use crate::stats::sequential::{Confidence, LogRatio};

/// A difference of rates below this share is not worth runs to tell apart (the best's "within
/// 5%" and the retrograde drop's threshold).
const WORTH_TELLING: f64 = 0.05;

/// Around the 40% share that makes a cause high, the band where either severity reads the same
/// (35–45%), as [`INDIFFERENT`] is around 90% efficiency.
const SHARE_BAND: f64 = 0.05;

/// Raised causes at the judged count whose severity is asked about: the two that may come first.
const SEVERITIES_ASKED: usize = 2;

/// A verdict the runs cannot decide yet.
#[derive(Clone, Debug, PartialEq)]
pub struct Question {
    /// The points to run again: the two compared.
    pub points: Vec<usize>,
    /// What is undecided, in words: `whether it scales at 2 threads`.
    pub what: String,
    /// Where it stands: `efficiency 76–104% after 3 runs`.
    pub now: String,
    /// Runs each of the points would need in all to decide it at the next look, by the spread of
    /// the runs so far; `None` when more than `max` would not.
    pub runs_needed: Option<u32>,
}

/// The questions of a sweep at its latest look, each with the runs that would decide it at the
/// next (`next`), up to `max` runs a point.
pub fn questions(doc: &Results, next: Confidence, max: u32) -> Vec<Question> {
    let Some(a) = &doc.analysis else { return Vec::new() };
    let obs = observations::from_results(doc, &a.axis);
    let mut out = Vec::new();
    for s in &a.series {
        if a.axis.parallel()
            && a.axis.counts != Counts::Other
            && let Some(p) = Pair::of(doc, a, s)
        {
            let conf = (a.confidence, next);
            out.extend(
                efficiency(&p, &a.axis.param, conf, max)
                    .or_else(|| superlinear(&p, &a.axis.param, conf, max)),
            );
            out.extend(severity(&doc.findings, &p, &s.label, &a.axis.param, conf, max));
        }
        if let Some(o) = obs.series.iter().find(|o| o.label == s.label) {
            out.extend(slower(&obs, &o.points, s, &a.axis.param, (a.confidence, next), max));
        }
    }
    out
}

/// Whether the judged count scales: its efficiency's interval straddles 90% and reaches below
/// 85%, under the band where either answer reads the same. Not asked when the point's own runs already show
/// a real gap (a tenth of its capacity idle in every run).
fn efficiency(
    p: &Pair,
    name: &str,
    (now, next): (Confidence, Confidence),
    max: u32,
) -> Option<Question> {
    // Anywhere from 85% up reads the same: scales well, or within the runs' noise of it (bowtie2
    // at 87–105% had taken half its sweep in added runs to tell).
    if p.eff_hi < GOOD_EFFICIENCY || p.eff_lo >= GOOD_EFFICIENCY - INDIFFERENT || p.gated {
        return None;
    }
    let wanted = log_within(p, GOOD_EFFICIENCY);
    about_efficiency(
        p,
        format!("whether it scales at {}", count_label(p.top.count, name)),
        wanted,
        (now, next),
        max,
    )
}

/// Whether the first raised causes at the judged count are high: a cause is high when it
/// explains [`HIGH_SHARE`] of the lost capacity and the gap is [`HIGH_GAP`] or more, so a share
/// whose interval straddles 40%, or beside a share that may reach it an efficiency whose interval
/// straddles 80%, leaves the severity, and often which finding comes first, to the runs' luck.
/// Each is asked outside the band where either answer reads the same. Causes whose severity
/// another rule set (a what-if within its error, waits on work done elsewhere) and a baseline
/// that kept more CPUs busy than its count (the gap is then judged against its CPU use) are left
/// alone: more runs would not move them.
fn severity(
    findings: &[Finding],
    p: &Pair,
    label: &str,
    name: &str,
    (now, next): (Confidence, Confidence),
    max: u32,
) -> Vec<Question> {
    if !severities_open(p) {
        return Vec::new();
    }
    let suffix = super::wording::series(label);
    let raised = findings.iter().filter(|f| {
        judged(f, p, &suffix)
            && f.severity >= Severity::Medium
            && f.cost_pct.is_some_and(|c| match (f.severity, high_by_figures(c, p)) {
                (Severity::High, high) => high,
                // Medium by its figures, or a high one that `settle` left medium.
                (_, high) => !high || open(f, p, now).is_some(),
            })
    });
    let mut out = Vec::new();
    for f in raised.take(SEVERITIES_ASKED) {
        let what =
            format!("whether the {} at {} is high", f.kind.name(), count_label(p.top.count, name));
        let Some(r) = share(f, now) else { continue };
        let (lo, hi) = (r.centre - r.half, r.centre + r.half);
        if straddles(lo, hi, HIGH_SHARE, SHARE_BAND) {
            let wanted = within(r.centre, HIGH_SHARE, SHARE_BAND);
            // The loss is reckoned against the baseline's CPU for the same work, run by run
            // against its run of the same round: the baseline runs in the added rounds too, so
            // that a host that slows down over them is not taken for the program's extra CPU
            // (LAMMPS's top count, run alone, drifted from 1.30 to 1.79 s and its extra CPU with it).
            out.push(Question {
                points: vec![p.base.index, p.top.index],
                what: format!("{what}, explaining 40% or more of the lost capacity"),
                now: format!(
                    "{:.0}–{:.0}% after {}",
                    100.0 * lo.max(0.0),
                    100.0 * hi.min(1.0),
                    runs_words(r.n)
                ),
                runs_needed: needed(&r, wanted, (now, next), max),
            });
        } else if hi >= HIGH_SHARE
            && straddles(1.0 - p.eff_hi, 1.0 - p.eff_lo, HIGH_GAP, INDIFFERENT)
        {
            out.extend(about_efficiency(
                p,
                format!("{what}, with the efficiency below 80%"),
                log_within(p, 1.0 - HIGH_GAP),
                (now, next),
                max,
            ));
        }
    }
    out
}

/// Whether the runs may leave causes' severities open at all: not beside a baseline that kept
/// more CPUs busy than its count (the gap is judged against its CPU use), nor with the
/// efficiency clearly above 80%, which keeps every cause medium whatever its share.
fn severities_open(p: &Pair) -> bool {
    p.busy_baseline.is_none() && 1.0 - p.eff_lo >= HIGH_GAP
}

/// Whether a finding is a cause judged at the pair's top count in this series (`suffix`), with
/// a share in each of two runs or more.
fn judged(f: &Finding, p: &Pair, suffix: &str) -> bool {
    f.at == Some(p.top.count) && f.cost_per_run_pct.len() >= 2 && f.summary.ends_with(suffix)
}

/// Whether a cause's share of the loss and the judged count's gap make it high.
fn high_by_figures(cost_pct: f64, p: &Pair) -> bool {
    cost_pct / 100.0 >= HIGH_SHARE && 1.0 - p.eff >= HIGH_GAP
}

/// A cause's share of the lost capacity over its point's runs, with its interval at `conf`.
fn share(f: &Finding, conf: Confidence) -> Option<LogRatio> {
    let shares: Vec<f64> = f.cost_per_run_pct.iter().map(|c| c / 100.0).collect();
    LogRatio::of_rounds(&shares, conf)
}

/// Why the runs leave a cause's severity open, in words: its share's interval straddles 40%, or
/// reaches it while the efficiency's straddles 80%; `None` when they decide it.
fn open(f: &Finding, p: &Pair, conf: Confidence) -> Option<String> {
    let r = share(f, conf)?;
    let (lo, hi) = (r.centre - r.half, r.centre + r.half);
    let shares = format!(
        "it explains {:.0}–{:.0}% of the lost capacity over {} ({}% or more makes a cause high)",
        100.0 * lo.max(0.0),
        100.0 * hi.min(1.0),
        runs_words(r.n),
        100.0 * HIGH_SHARE
    );
    if straddles(lo, hi, HIGH_SHARE, SHARE_BAND) {
        Some(shares)
    } else if hi >= HIGH_SHARE && straddles(1.0 - p.eff_hi, 1.0 - p.eff_lo, HIGH_GAP, INDIFFERENT) {
        Some(format!(
            "the efficiency is anywhere from {:.0}% to {:.0}% (below {:.0}% makes a cause high)",
            100.0 * p.eff_lo,
            100.0 * p.eff_hi,
            100.0 * (1.0 - HIGH_GAP)
        ))
    } else {
        None
    }
}

/// Causes raised as high whose severity the runs leave open (the runs added to decide it ran
/// out of budget, or a fixed number of runs could not) are said as `medium`, with why: a claim
/// made to an expert is made only as strongly as the runs bear it out.
pub fn settle(doc: &Results, a: &Analysis, out: &mut [Finding]) {
    if !a.axis.parallel() || a.axis.counts == Counts::Other {
        return;
    }
    for s in &a.series {
        let Some(p) = Pair::of(doc, a, s).filter(severities_open) else { continue };
        let suffix = super::wording::series(&s.label);
        for f in out.iter_mut().filter(|f| f.severity == Severity::High && judged(f, &p, &suffix)) {
            if let Some(why) = open(f, &p, a.confidence) {
                f.severity = Severity::Medium;
                f.evidence.push(format!("said as medium, though it may be high: {why}"));
            }
        }
    }
}

/// Whether an interval `[lo, hi]` leaves it open which side of `at` the value is on, beyond the
/// band of ± `band` where either answer reads the same.
fn straddles(lo: f64, hi: f64, at: f64, band: f64) -> bool {
    !(hi < at || lo >= at || (lo >= at - band && hi <= at + band))
}

/// The half-width that would decide whether a value centred at `c` is on one side of `at`: the
/// distance to it, or a fit inside the band of ± `band` around it.
fn within(c: f64, at: f64, band: f64) -> f64 {
    (c - at).abs().max((at + band - c).min(c - (at - band)))
}

/// The half-width on the log scale that would decide which side of `at` the efficiency is on:
/// the distance to it or a fit inside the band of ± [`INDIFFERENT`] around it, from the
/// interval's own centre (the paired rounds' ratio: the ratio of mean times, 95% where the rounds
/// said 93%, projected 12 runs where 36 were needed).
fn log_within(p: &Pair, at: f64) -> f64 {
    let c = log_centre(p);
    let band = ((at + INDIFFERENT).ln() - c).min(c - (at - INDIFFERENT).ln());
    (c - at.ln()).abs().max(band)
}

/// The centre of the efficiency's interval on the log scale.
fn log_centre(p: &Pair) -> f64 {
    0.5 * (p.eff_lo.max(1e-9).ln() + p.eff_hi.max(1e-9).ln())
}

/// A question on the judged count's efficiency, decided when its interval's half-width on the
/// log scale is `wanted`.
fn about_efficiency(
    p: &Pair,
    what: String,
    wanted: f64,
    conf: (Confidence, Confidence),
    max: u32,
) -> Option<Question> {
    let interval = speedup_interval(p.top, p.base)?;
    let runs = runs_words(p.top.runs.min(p.base.runs));
    Some(Question {
        points: vec![p.base.index, p.top.index],
        what,
        now: format!("efficiency {:.0}–{:.0}% after {runs}", 100.0 * p.eff_lo, 100.0 * p.eff_hi),
        runs_needed: needed(&interval, wanted, conf, max),
    })
}

/// Whether the judged count is faster than its count allows (a superlinear speed-up, which is
/// explained rather than praised): its efficiency is measured above [`SUPERLINEAR`] and its
/// interval still reaches below it.
fn superlinear(p: &Pair, name: &str, conf: (Confidence, Confidence), max: u32) -> Option<Question> {
    let c = log_centre(p);
    if p.eff_lo > SUPERLINEAR || c <= SUPERLINEAR.ln() {
        return None;
    }
    let what =
        format!("whether {} are faster than their count allows", count_label(p.top.count, name));
    about_efficiency(p, what, c - SUPERLINEAR.ln(), conf, max)
}

/// Whether the last count is slower than the best, or a larger count faster than the one that
/// stands in for it, when the rates differ by more than [`WORTH_TELLING`] and their ratio's
/// interval still reaches 1.
fn slower(
    obs: &observations::Observations,
    points: &[Obs],
    s: &SeriesAnalysis,
    name: &str,
    (now, next): (Confidence, Confidence),
    max: u32,
) -> Option<Question> {
    let rate = |o: &Obs| obs.rate(o.count, &o.values);
    let fastest = points.iter().max_by(|a, b| rate(a).total_cmp(&rate(b)))?;
    let (low, what) = match (&s.best, s.retrograde.is_some()) {
        (Some(b), _) if b.no_better.is_some() => (
            points.iter().find(|o| o.count == b.count)?,
            format!(
                "whether {} are faster than {}",
                count_label(fastest.count, name),
                count_label(b.count, name)
            ),
        ),
        (_, false) => {
            let last = points.last()?;
            (
                last,
                format!(
                    "whether {} are slower than {}",
                    count_label(last.count, name),
                    count_label(fastest.count, name)
                ),
            )
        }
        _ => return None,
    };
    if low.index == fastest.index || rate(low) >= (1.0 - WORTH_TELLING) * rate(fastest) {
        return None;
    }
    let r = log_interval(obs, low, fastest, now)?;
    if r.centre - r.half > 0.0 {
        return None;
    }
    let [lo, hi] = r.interval();
    Some(Question {
        points: vec![low.index, fastest.index],
        what,
        now: format!(
            "{} at {:.2}–{:.2}× the speed of {} after {}",
            count_label(fastest.count, name),
            lo,
            hi,
            count_label(low.count, name),
            runs_words(low.values.len().min(fastest.values.len()))
        ),
        runs_needed: needed(&r, r.centre, (now, next), max),
    })
}

/// The speed-up's interval of `top` against `base` as a log ratio, for projections.
fn speedup_interval(top: &PointScaling, base: &PointScaling) -> Option<LogRatio> {
    let [lo, hi] = top.speedup_ci95?;
    if lo <= 0.0 || hi <= 0.0 {
        return None;
    }
    let n = top.paired_rounds.map_or(top.runs.min(base.runs), |r| r as usize).max(2);
    let paired = top.paired_rounds.is_some();
    let df = if paired { (n - 1) as f64 } else { (2 * n - 2) as f64 };
    Some(LogRatio { centre: 0.5 * (lo.ln() + hi.ln()), half: 0.5 * (hi / lo).ln(), df, n, paired })
}

/// The fewest runs (or paired rounds) whose interval, by the spread so far, would be no wider
/// than `wanted` on the log scale at the next look; `None` beyond `max`.
fn needed(
    r: &LogRatio,
    wanted: f64,
    (now, next): (Confidence, Confidence),
    max: u32,
) -> Option<u32> {
    (r.n as u32 + 1..=max).find(|&n| r.projected(n as usize, next, now) <= wanted)
}

fn runs_words(n: usize) -> String {
    format!("{n} run{}", if n == 1 { "" } else { "s" })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::findings::Kind;

    fn point(index: usize, count: f64, speedup: f64, ci: [f64; 2]) -> PointScaling {
        PointScaling {
            index,
            count,
            runs: 3,
            rate: speedup,
            speedup,
            speedup_ci95: Some(ci),
            paired_rounds: Some(3),
            efficiency: Some(speedup / count),
            karp_flatt: None,
            amdahl_parallel_pct: None,
            cpu_pct: None,
        }
    }

    fn cause(severity: Severity, per_run: &[f64]) -> Finding {
        Finding {
            kind: Kind::SerialPhase,
            severity,
            summary: "At 2 threads, the first 0.52 s of a run ran one thread".into(),
            evidence: Vec::new(),
            advice: String::new(),
            cost_pct: Some(per_run.iter().sum::<f64>() / per_run.len() as f64),
            cost_per_run_pct: per_run.to_vec(),
            at: Some(2.0),
            noise: None,
            what_if: None,
        }
    }

    /// The questions on the causes at 2 threads, with the efficiency's interval `eff`.
    fn asked(f: &Finding, eff: [f64; 3]) -> Vec<Question> {
        let base = point(0, 1.0, 1.0, [1.0, 1.0]);
        let top = point(1, 2.0, 2.0 * eff[0], [2.0 * eff[1], 2.0 * eff[2]]);
        let p = Pair {
            base: &base,
            top: &top,
            ratio: 1.0,
            lt: None,
            lb: None,
            eff: eff[0],
            eff_lo: eff[1],
            eff_hi: eff[2],
            gated: true,
            busy_baseline: None,
        };
        let conf = (Confidence::at_look(1), Confidence::at_look(2));
        severity(std::slice::from_ref(f), &p, "", "threads", conf, 100)
    }

    #[test]
    fn a_causes_severity_is_asked_when_its_share_or_the_gap_straddles_the_line() {
        let clear = [0.69, 0.67, 0.71];
        // 30–60% over three runs: high or medium is the runs' luck; the count reruns, and the
        // baseline its loss is reckoned against beside it.
        let q = asked(&cause(Severity::High, &[30.0, 45.0, 60.0]), clear);
        assert_eq!(q.len(), 1, "{q:?}");
        assert_eq!(q[0].points, vec![0, 1]);
        assert!(q[0].what.starts_with("whether the serial-phase at 2 threads is high"), "{q:?}");
        assert!(q[0].runs_needed.is_some_and(|n| n > 3), "{q:?}");
        // Clearly above the line, or within the band around it where either reads the same.
        assert!(asked(&cause(Severity::High, &[50.0, 52.0, 51.0]), clear).is_empty());
        assert!(asked(&cause(Severity::High, &[39.0, 40.0, 41.0]), clear).is_empty());
        // A share clearly high beside an efficiency anywhere from 72% to 88%: the gap decides,
        // and both counts rerun to tell it.
        let q = asked(&cause(Severity::High, &[55.0, 60.0, 58.0]), [0.79, 0.72, 0.87]);
        assert_eq!(q.len(), 1, "{q:?}");
        assert_eq!(q[0].points, vec![0, 1]);
        assert!(q[0].what.ends_with("with the efficiency below 80%"), "{q:?}");
        // An efficiency clearly above 80% keeps it medium whatever its share.
        assert!(
            asked(&cause(Severity::Medium, &[30.0, 45.0, 60.0]), [0.88, 0.86, 0.90]).is_empty()
        );
        // A severity another rule set (medium where the share and the gap say high) is left alone…
        assert!(asked(&cause(Severity::Medium, &[50.0, 52.0, 51.0]), clear).is_empty());
        // …but a high one said as medium while the runs cannot tell is asked about.
        let q = asked(&cause(Severity::Medium, &[30.0, 45.0, 60.0]), clear);
        assert_eq!(q.len(), 1, "{q:?}");
    }

    #[test]
    fn runs_are_projected_from_the_spread_so_far() {
        let now = Confidence::at_look(1);
        let next = Confidence::at_look(2);
        // A ratio known to ±20% from 3 paired rounds: ±5% takes many more.
        let r = LogRatio { centre: 0.0, half: 0.2, df: 2.0, n: 3, paired: true };
        let n = needed(&r, 0.05, (now, next), 100).expect("within 100 runs");
        assert!(
            r.projected(n as usize, next, now) <= 0.05
                && r.projected(n as usize - 1, next, now) > 0.05
        );
        assert!(n > 6, "{n}");
        assert_eq!(
            needed(&r, 0.001, (now, next), 100),
            None,
            "no number of runs within 100 tells 0.1%"
        );
    }
}
