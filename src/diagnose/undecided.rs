//! What the runs cannot decide yet, and how many runs would decide it: the efficiency at the
//! count a series is judged at whose interval straddles 90% (outside the band of 85–95% where
//! either answer reads the same) or, measured above 105%, reaches below it (superlinear or not),
//! and a slower or faster count whose difference from the best the runs cannot tell apart. A
//! sweep that measures until its verdict is clear adds runs to the points each question names.

use super::curve::{GOOD_EFFICIENCY, INDIFFERENT};
use super::series::{Pair, SUPERLINEAR};
use crate::analysis::observations::{self, Obs};
use crate::analysis::{count_label, log_interval};
use crate::plan::Counts;
use crate::results::Results;
use crate::results::analysis::{PointScaling, SeriesAnalysis};
use crate::stats::sequential::{Confidence, LogRatio};

/// A difference of rates below this share is not worth runs to tell apart (the best's "within
/// 5%" and the retrograde drop's threshold).
const WORTH_TELLING: f64 = 0.05;

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
        }
        if let Some(o) = obs.series.iter().find(|o| o.label == s.label) {
            out.extend(slower(&obs, &o.points, s, &a.axis.param, (a.confidence, next), max));
        }
    }
    out
}

/// Whether the judged count scales: its efficiency's interval straddles 90% and reaches beyond
/// the band where either answer reads the same. Not asked when the point's own runs already show
/// a real gap (a tenth of its capacity idle in every run).
fn efficiency(
    p: &Pair,
    name: &str,
    (now, next): (Confidence, Confidence),
    max: u32,
) -> Option<Question> {
    let (lo, hi) = (p.eff_lo, p.eff_hi);
    let decided = hi < GOOD_EFFICIENCY
        || lo >= GOOD_EFFICIENCY
        || (lo >= GOOD_EFFICIENCY - INDIFFERENT && hi <= GOOD_EFFICIENCY + INDIFFERENT);
    if decided || p.gated {
        return None;
    }
    // The half-width that would decide it, on the log scale: the distance to 90%, or a fit
    // inside the band around it, from the interval's own centre (the paired rounds' ratio: the
    // ratio of mean times, 95% where the rounds said 93%, projected 12 runs where 36 were needed).
    let c = log_centre(p);
    let band =
        ((GOOD_EFFICIENCY + INDIFFERENT).ln() - c).min(c - (GOOD_EFFICIENCY - INDIFFERENT).ln());
    let wanted = (c - GOOD_EFFICIENCY.ln()).abs().max(band);
    about_efficiency(
        p,
        format!("whether it scales at {}", count_label(p.top.count, name)),
        wanted,
        (now, next),
        max,
    )
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
