//! Matching points across sets and judging each change.

use super::{Options, Set};
use crate::results::PointResult;
use crate::stats::{Summary, ratio_interval, welch_p};
use serde::Serialize;

/// The verdict on one point against the reference.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// Significantly faster, by more than the noise threshold.
    Faster,
    /// Significantly slower, by more than the noise threshold.
    Slower,
    /// Within the noise threshold.
    NoChange,
    /// A change the runs cannot tell from chance.
    NotSignificant,
    /// Fewer than two successful runs on a side.
    TooFewRuns,
}

impl Verdict {
    /// The verdict in words.
    pub fn text(self) -> &'static str {
        match self {
            Verdict::Faster => "faster",
            Verdict::Slower => "slower",
            Verdict::NoChange => "no change",
            Verdict::NotSignificant => "not significant",
            Verdict::TooFewRuns => "too few runs",
        }
    }
}

/// What one set measured at a point.
#[derive(Clone, Debug, Serialize)]
pub struct Cell {
    /// Successful runs.
    pub runs: usize,
    /// Mean wall time, seconds.
    pub time_s: f64,
    /// Its standard deviation.
    pub time_sd: f64,
    /// Mean throughput, when every run has one.
    pub throughput: Option<f64>,
    /// Mean %CPU.
    pub cpu_pct: f64,
    /// Mean user and system CPU seconds.
    pub user_s: f64,
    /// Mean system CPU seconds.
    pub sys_s: f64,
    /// Against the reference set (absent for the reference itself).
    pub change: Option<Change>,
}

/// A point's change against the reference.
#[derive(Clone, Debug, Serialize)]
pub struct Change {
    /// `throughput` when both sides have it for every run, else `time`.
    pub judged_by: &'static str,
    /// Ratio of means of that figure (this set / reference).
    pub ratio: f64,
    /// Its 95% bootstrap interval over runs.
    pub ci95: Option<[f64; 2]>,
    /// Welch's test p-value.
    pub p: Option<f64>,
    /// The verdict.
    pub verdict: Verdict,
    /// Ratios of mean time, %CPU, user and system CPU (this set / reference).
    pub time_ratio: f64,
    /// %CPU ratio.
    pub cpu_ratio: f64,
    /// User CPU ratio.
    pub user_ratio: f64,
    /// System CPU ratio.
    pub sys_ratio: f64,
}

/// One point across the sets.
#[derive(Clone, Debug, Serialize)]
pub struct PointRow {
    /// `threads=4`.
    pub label: String,
    /// Per set, absent where the set has no such point (or no successful run).
    pub cells: Vec<Option<Cell>>,
    /// Per set, the position of the matched point in its document.
    #[serde(skip)]
    pub points: Vec<Option<usize>>,
}

struct Runs {
    time: Vec<f64>,
    throughput: Option<Vec<f64>>,
    cpu: Vec<f64>,
    user: Vec<f64>,
    sys: Vec<f64>,
}

fn runs(p: &PointResult) -> Option<Runs> {
    let ok: Vec<_> = p.runs.iter().filter(|r| r.succeeded()).collect();
    if ok.is_empty() {
        return None;
    }
    Some(Runs {
        time: ok.iter().map(|r| r.wall_s).collect(),
        throughput: ok.iter().map(|r| r.throughput).collect(),
        cpu: ok.iter().map(|r| r.cpu_pct).collect(),
        user: ok.iter().map(|r| r.user_s).collect(),
        sys: ok.iter().map(|r| r.sys_s).collect(),
    })
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len().max(1) as f64
}

fn ratio(a: &[f64], b: &[f64]) -> f64 {
    let m = mean(a);
    if m != 0.0 { mean(b) / m } else { f64::NAN }
}

/// The key that matches points across sets: parameter values, sorted by name.
fn key(p: &PointResult) -> Vec<(String, String)> {
    let mut k = p.param_strings();
    k.sort();
    k
}

/// Judges `b` against `a`.
fn judge(a: &Runs, b: &Runs, noise: f64) -> Change {
    let (judged_by, va, vb, higher_is_faster) = match (&a.throughput, &b.throughput) {
        (Some(ta), Some(tb)) => ("throughput", ta.as_slice(), tb.as_slice(), true),
        _ => ("time", a.time.as_slice(), b.time.as_slice(), false),
    };
    let r = ratio(va, vb);
    let p = welch_p(va, vb);
    let ci95 = ratio_interval(va, vb, 0x5EED);
    let verdict =
        match p {
            _ if va.len() < 2 || vb.len() < 2 => Verdict::TooFewRuns,
            _ if (r - 1.0).abs() < noise
                && ci95.is_none_or(|[lo, hi]| lo > 1.0 - 3.0 * noise && hi < 1.0 + 3.0 * noise) =>
            {
                Verdict::NoChange
            }
            Some(p) if p < 0.05 && ci95.is_none_or(|[lo, hi]| lo > 1.0 || hi < 1.0) => {
                if (r > 1.0) == higher_is_faster { Verdict::Faster } else { Verdict::Slower }
            }
            _ => Verdict::NotSignificant,
        };
    Change {
        judged_by,
        ratio: r,
        ci95,
        p,
        verdict,
        time_ratio: ratio(&a.time, &b.time),
        cpu_ratio: ratio(&a.cpu, &b.cpu),
        user_ratio: ratio(&a.user, &b.user),
        sys_ratio: ratio(&a.sys, &b.sys),
    }
}

/// Every point of every set, matched; the reference's order first.
pub fn rows(sets: &[Set], o: &Options) -> Vec<PointRow> {
    let mut keys: Vec<(Vec<(String, String)>, String)> = Vec::new();
    let order = std::iter::once(o.reference).chain((0..sets.len()).filter(|&i| i != o.reference));
    for i in order {
        for p in &sets[i].doc.points {
            let k = key(p);
            if !keys.iter().any(|(have, _)| *have == k) {
                keys.push((k, p.label()));
            }
        }
    }
    keys.into_iter()
        .map(|(k, label)| {
            let points: Vec<Option<usize>> =
                sets.iter().map(|s| s.doc.points.iter().position(|p| key(p) == k)).collect();
            let found: Vec<Option<Runs>> =
                sets.iter().zip(&points).map(|(s, i)| i.and_then(|i| runs(&s.doc.points[i]))).collect();
            let cells = found
                .iter()
                .enumerate()
                .map(|(i, r)| {
                    let r = r.as_ref()?;
                    let t = Summary::of(&r.time)?;
                    let change = match &found[o.reference] {
                        Some(a) if i != o.reference => Some(judge(a, r, o.noise)),
                        _ => None,
                    };
                    Some(Cell {
                        runs: r.time.len(),
                        time_s: t.mean,
                        time_sd: t.stddev,
                        throughput: r.throughput.as_deref().map(mean),
                        cpu_pct: mean(&r.cpu),
                        user_s: mean(&r.user),
                        sys_s: mean(&r.sys),
                        change,
                    })
                })
                .collect();
            PointRow { label, cells, points }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runs_of(time: &[f64]) -> Runs {
        Runs {
            time: time.to_vec(),
            throughput: None,
            cpu: vec![100.0; time.len()],
            user: time.to_vec(),
            sys: vec![0.0; time.len()],
        }
    }

    #[test]
    fn real_changes_noise_and_variance_get_their_verdicts() {
        let a = runs_of(&[10.0, 10.1, 9.9, 10.05, 9.95]);
        let faster = runs_of(&[8.0, 8.1, 7.9, 8.05, 7.95]);
        let within = runs_of(&[10.1, 10.2, 10.0, 10.15, 10.05]);
        let wild = runs_of(&[5.0, 15.0, 7.0, 13.0, 10.0]);
        assert_eq!(judge(&a, &faster, 0.02).verdict, Verdict::Faster);
        assert_eq!(judge(&faster, &a, 0.02).verdict, Verdict::Slower);
        assert_eq!(judge(&a, &within, 0.02).verdict, Verdict::NoChange);
        let w = judge(&a, &runs_of(&[4.0, 16.0, 6.0, 14.0, 8.0]), 0.02);
        assert_eq!((w.verdict, w.judged_by), (Verdict::NotSignificant, "time"), "{w:?}");
        assert_eq!(judge(&a, &wild, 0.02).verdict, Verdict::NotSignificant);
        assert_eq!(judge(&a, &runs_of(&[8.0]), 0.02).verdict, Verdict::TooFewRuns);
        let mut ta = runs_of(&[1.0; 4]);
        ta.throughput = Some(vec![100.0, 101.0, 99.0, 100.5]);
        let mut tb = runs_of(&[1.0; 4]);
        tb.throughput = Some(vec![120.0, 121.0, 119.0, 120.5]);
        let c = judge(&ta, &tb, 0.02);
        assert_eq!((c.verdict, c.judged_by), (Verdict::Faster, "throughput"));
    }
}
