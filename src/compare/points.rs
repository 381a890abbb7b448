//! Matching points across sets and judging each change: with repeated runs by Welch's test, a
//! bootstrap interval and the noise threshold; with single values (a published table) by a
//! threshold alone.

use super::{Options, Set};
use crate::analysis::SINGLE_VALUE_THRESHOLD;
use crate::results::PointResult;
use crate::results::analysis::JudgedBy;
use crate::stats::{Summary, median, ratio_interval, welch_p};
use serde::Serialize;

/// The verdict on one point against the reference.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// Faster, by more than the noise threshold (and significantly, with runs).
    Faster,
    /// Slower, by more than the noise threshold (and significantly, with runs).
    Slower,
    /// Within the noise threshold.
    NoChange,
    /// A change the runs cannot tell from chance.
    NotSignificant,
    /// A single run on one side and several on the other: run more.
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

/// The figure a verdict compares.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Figure {
    /// Throughput: higher is faster.
    Throughput,
    /// Wall time: lower is faster.
    Time,
}

impl Figure {
    /// `throughput` or `time`.
    pub fn name(self) -> &'static str {
        match self {
            Figure::Throughput => "throughput",
            Figure::Time => "time",
        }
    }
}

/// The values measured at one point of a set: one per successful run, or the single value of a
/// table's row.
#[derive(Clone, Debug, Default)]
pub struct Values {
    /// Wall times, seconds.
    pub time: Option<Vec<f64>>,
    /// Throughputs, when every run has one.
    pub throughput: Option<Vec<f64>>,
    /// %CPU.
    pub cpu: Option<Vec<f64>>,
    /// User CPU seconds.
    pub user: Option<Vec<f64>>,
    /// System CPU seconds.
    pub sys: Option<Vec<f64>>,
}

impl Values {
    /// The values of a sweep's point over its successful runs; `None` without any.
    pub fn of_point(p: &PointResult) -> Option<Values> {
        let ok: Vec<_> = p.runs.iter().filter(|r| r.counted()).collect();
        if ok.is_empty() {
            return None;
        }
        Some(Values {
            time: Some(ok.iter().map(|r| r.wall_s).collect()),
            throughput: ok.iter().map(|r| r.throughput).collect(),
            cpu: Some(ok.iter().map(|r| r.cpu_pct).collect()),
            user: Some(ok.iter().map(|r| r.user_s).collect()),
            sys: Some(ok.iter().map(|r| r.sys_s).collect()),
        })
    }

    /// The values of `figure`.
    pub fn of(&self, figure: Figure) -> Option<&[f64]> {
        match figure {
            Figure::Throughput => self.throughput.as_deref(),
            Figure::Time => self.time.as_deref(),
        }
    }

    fn runs(&self) -> usize {
        self.time.as_ref().or(self.throughput.as_ref()).map_or(0, Vec::len)
    }
}

/// One point of a set.
#[derive(Clone, Debug)]
pub struct Measured {
    /// Parameter values, sorted by name: what matches points across sets.
    pub key: Vec<(String, String)>,
    /// `threads=4`.
    pub label: String,
    /// What was measured there; `None` when no run succeeded.
    pub values: Option<Values>,
}

impl Measured {
    /// A point of a sweep.
    pub fn of_point(p: &PointResult) -> Measured {
        let mut key = p.param_strings();
        key.sort();
        Measured { key, label: p.label(), values: Values::of_point(p) }
    }
}

/// Mean and standard deviation of a figure at one point of one set.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Mean {
    /// Mean.
    pub mean: f64,
    /// Standard deviation (0 for a single value).
    pub sd: f64,
}

/// What one set measured at a point.
#[derive(Clone, Debug, Serialize)]
pub struct Cell {
    /// Successful runs (1 for a table's row).
    pub runs: usize,
    /// Wall time, seconds.
    pub time_s: Option<Mean>,
    /// Throughput, when every run has one.
    pub throughput: Option<Mean>,
    /// Mean %CPU.
    pub cpu_pct: Option<f64>,
    /// Mean user CPU seconds.
    pub user_s: Option<f64>,
    /// Mean system CPU seconds.
    pub sys_s: Option<f64>,
    /// Against the reference set (absent for the reference itself).
    pub change: Option<Change>,
}

impl Cell {
    /// Mean and σ of `figure`.
    pub fn of(&self, figure: Figure) -> Option<Mean> {
        match figure {
            Figure::Throughput => self.throughput,
            Figure::Time => self.time_s,
        }
    }
}

/// A point's change against the reference.
#[derive(Clone, Debug, Serialize)]
pub struct Change {
    /// The figure compared: throughput when both sets have it at every point they share, else time.
    pub judged_by: Figure,
    /// What decided the verdict: the runs (Welch's test, the interval and the noise threshold), or
    /// with single values the threshold alone.
    pub decided_by: JudgedBy,
    /// Ratio of means of that figure (this set / reference).
    pub ratio: f64,
    /// Its 95% bootstrap interval over runs.
    pub ci95: Option<[f64; 2]>,
    /// Welch's test p-value.
    pub p: Option<f64>,
    /// Ratio of the sets' median runs (this set / reference): a mean moved by a few slow runs on
    /// one side (a slow spell of the host) leaves it where it was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub median_ratio: Option<f64>,
    /// The verdict.
    pub verdict: Verdict,
    /// Ratio of mean wall time (this set / reference).
    pub time_ratio: Option<f64>,
    /// %CPU ratio.
    pub cpu_ratio: Option<f64>,
    /// User CPU ratio.
    pub user_ratio: Option<f64>,
    /// System CPU ratio.
    pub sys_ratio: Option<f64>,
}

/// One point across the sets.
#[derive(Clone, Debug, Serialize)]
pub struct PointRow {
    /// `threads=4`.
    pub label: String,
    /// Per set, absent where the set has no such point (or no successful run).
    pub cells: Vec<Option<Cell>>,
    /// Per set, the position of the matched point in its set.
    #[serde(skip)]
    pub points: Vec<Option<usize>>,
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len().max(1) as f64
}

fn ratio(a: Option<&[f64]>, b: Option<&[f64]>) -> Option<f64> {
    let (a, b) = (mean(a?), mean(b?));
    (a != 0.0).then(|| b / a)
}

/// The ratio of `b`'s median to `a`'s, with at least three values on each side (fewer have no
/// typical run apart from their mean).
fn median_ratio(a: &[f64], b: &[f64]) -> Option<f64> {
    if a.len() < 3 || b.len() < 3 {
        return None;
    }
    let (ma, mb) = (median(a)?, median(b)?);
    (ma != 0.0).then(|| mb / ma)
}

/// Whether the runs tell a mean's change from chance: Welch's p below 5% and a bootstrap
/// interval that leaves 1 out.
fn significant(p: Option<f64>, ci95: Option<[f64; 2]>) -> bool {
    p.is_some_and(|p| p < 0.05) && ci95.is_none_or(|[lo, hi]| lo > 1.0 || hi < 1.0)
}

/// Whether a change's mean moved significantly while its typical run did not: the verdict was
/// withheld for that (see [`judge`]).
pub fn moved_by_a_few_runs(c: &Change, noise: f64) -> bool {
    c.verdict == Verdict::NotSignificant
        && significant(c.p, c.ci95)
        && (c.ratio - 1.0).abs() >= noise
        && c.median_ratio.is_some()
}

/// The change of `b` against `a` in `figure`; `None` when either lacks it.
fn judge(a: &Values, b: &Values, figure: Figure, noise: f64) -> Option<Change> {
    let (va, vb) = (a.of(figure)?, b.of(figure)?);
    let r = ratio(Some(va), Some(vb)).unwrap_or(f64::NAN);
    let faster = |r: f64| (r > 1.0) == (figure == Figure::Throughput);
    let single = va.len() == 1 && vb.len() == 1;
    let (verdict, decided_by, ci95, p, median_ratio) = if single {
        let threshold = noise.max(SINGLE_VALUE_THRESHOLD);
        let v = match r {
            _ if (r - 1.0).abs() <= threshold => Verdict::NoChange,
            _ if faster(r) => Verdict::Faster,
            _ => Verdict::Slower,
        };
        (v, JudgedBy::Threshold, None, None, None)
    } else {
        let p = welch_p(va, vb);
        let ci95 = ratio_interval(va, vb, 0x5EED);
        let typical = median_ratio(va, vb);
        // The typical run moved as the mean did, beyond the noise: otherwise a few slow runs on one
        // side moved the mean, and that is the host's doing, not a change of the program.
        let typical_moved =
            |r: f64| typical.is_none_or(|m| (m - 1.0).abs() >= noise && (m > 1.0) == (r > 1.0));
        let v = match p {
            _ if va.len() < 2 || vb.len() < 2 => Verdict::TooFewRuns,
            _ if (r - 1.0).abs() < noise
                && ci95.is_none_or(|[lo, hi]| lo > 1.0 - 3.0 * noise && hi < 1.0 + 3.0 * noise) =>
            {
                Verdict::NoChange
            }
            _ if significant(p, ci95) && typical_moved(r) => {
                if faster(r) {
                    Verdict::Faster
                } else {
                    Verdict::Slower
                }
            }
            _ => Verdict::NotSignificant,
        };
        (v, JudgedBy::Runs, ci95, p, typical)
    };
    Some(Change {
        judged_by: figure,
        decided_by,
        ratio: r,
        ci95,
        p,
        median_ratio,
        verdict,
        time_ratio: ratio(a.time.as_deref(), b.time.as_deref()),
        cpu_ratio: ratio(a.cpu.as_deref(), b.cpu.as_deref()),
        user_ratio: ratio(a.user.as_deref(), b.user.as_deref()),
        sys_ratio: ratio(a.sys.as_deref(), b.sys.as_deref()),
    })
}

/// The figure set `b` is judged by against `a`: throughput when both have it at every point they
/// share, else time when both have that, else neither.
pub fn figure(a: &Set, b: &Set) -> Option<Figure> {
    let shared: Vec<(&Values, &Values)> = a
        .points
        .iter()
        .filter_map(|p| {
            let q = b.points.iter().find(|q| q.key == p.key)?;
            Some((p.values.as_ref()?, q.values.as_ref()?))
        })
        .collect();
    [Figure::Throughput, Figure::Time]
        .into_iter()
        .find(|&f| shared.iter().all(|(x, y)| x.of(f).is_some() && y.of(f).is_some()))
}

fn cell(v: &Values, change: Option<Change>) -> Cell {
    let summary =
        |x: Option<&[f64]>| x.and_then(Summary::of).map(|s| Mean { mean: s.mean, sd: s.stddev });
    let avg = |x: Option<&[f64]>| x.map(mean);
    Cell {
        runs: v.runs(),
        time_s: summary(v.time.as_deref()),
        throughput: summary(v.throughput.as_deref()),
        cpu_pct: avg(v.cpu.as_deref()),
        user_s: avg(v.user.as_deref()),
        sys_s: avg(v.sys.as_deref()),
        change,
    }
}

/// A point's parameters, sorted by name, as points are matched by them.
pub type Key = Vec<(String, String)>;

/// The keys of every point of every set, and how the points were paired.
#[derive(Clone, Debug)]
pub struct Keys {
    /// Set by set, point by point.
    pub of: Vec<Vec<Key>>,
    /// The sentence saying the points were paired by their count, when they were.
    pub paired_by: Option<String>,
}

/// The keys points are matched by, set by set and point by point: their parameters, or, when
/// every set is a sweep counting workers, copies or ranks and they do not all count the same
/// parameter (threads in one, copies in the other), their parameters with the counted one's name
/// made `count`, so that 4 threads meet 4 copies.
pub fn keys(sets: &[Set]) -> Keys {
    let own = || sets.iter().map(|s| s.points.iter().map(|p| p.key.clone()).collect()).collect();
    let counted: Option<Vec<&str>> = sets
        .iter()
        .map(|s| Some(s.doc.as_ref()?.plan.axis.as_ref().filter(|a| a.parallel())?.param.as_str()))
        .collect();
    let Some(counted) = counted.filter(|c| c.iter().any(|p| *p != c[0])) else {
        return Keys { of: own(), paired_by: None };
    };
    let keys = sets
        .iter()
        .zip(&counted)
        .map(|(s, param)| {
            s.points
                .iter()
                .map(|p| {
                    let mut k: Vec<(String, String)> = p
                        .key
                        .iter()
                        .map(|(n, v)| {
                            (if n == param { "count".to_string() } else { n.clone() }, v.clone())
                        })
                        .collect();
                    k.sort();
                    k
                })
                .collect()
        })
        .collect();
    let each: Vec<String> =
        sets.iter().zip(&counted).map(|(s, p)| format!("{p} in {}", s.label)).collect();
    Keys {
        of: keys,
        paired_by: Some(format!("points are paired by the count: {}", each.join(", "))),
    }
}

/// Every point of every set, matched by `keys` (from [`keys`]); the reference's order first.
/// `figures[i]` is what set i is judged by. A row's label is its point's, or, where the points
/// were paired by their count, every set's label for it (`threads=4 · copies=4`).
pub fn rows(
    sets: &[Set],
    Keys { of: keys, paired_by: paired }: &Keys,
    figures: &[Option<Figure>],
    o: &Options,
) -> Vec<PointRow> {
    let mut seen: Vec<&[(String, String)]> = Vec::new();
    let order = std::iter::once(o.reference).chain((0..sets.len()).filter(|&i| i != o.reference));
    for i in order {
        for k in &keys[i] {
            if !seen.contains(&k.as_slice()) {
                seen.push(k);
            }
        }
    }
    seen.into_iter()
        .map(|k| {
            let points: Vec<Option<usize>> =
                keys.iter().map(|ks| ks.iter().position(|p| p == k)).collect();
            let found: Vec<Option<&Values>> = sets
                .iter()
                .zip(&points)
                .map(|(s, i)| i.and_then(|i| s.points[i].values.as_ref()))
                .collect();
            let cells = found
                .iter()
                .enumerate()
                .map(|(i, v)| {
                    let v = (*v)?;
                    let change = match (found[o.reference], figures[i]) {
                        (Some(a), Some(f)) if i != o.reference => judge(a, v, f, o.noise),
                        _ => None,
                    };
                    Some(cell(v, change))
                })
                .collect();
            let mut labels: Vec<&str> = sets
                .iter()
                .zip(&points)
                .filter_map(|(s, i)| Some(s.points[(*i)?].label.as_str()))
                .collect();
            if paired.is_none() {
                labels.truncate(1);
            }
            labels.dedup();
            PointRow { label: labels.join(" · "), cells, points }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(time: &[f64]) -> Values {
        Values {
            time: Some(time.to_vec()),
            throughput: None,
            cpu: Some(vec![100.0; time.len()]),
            user: Some(time.to_vec()),
            sys: Some(vec![0.0; time.len()]),
        }
    }

    fn verdict(a: &Values, b: &Values, f: Figure) -> Verdict {
        judge(a, b, f, 0.02).unwrap().verdict
    }

    #[test]
    fn real_changes_noise_and_variance_get_their_verdicts() {
        let a = values(&[10.0, 10.1, 9.9, 10.05, 9.95]);
        let faster = values(&[8.0, 8.1, 7.9, 8.05, 7.95]);
        let within = values(&[10.1, 10.2, 10.0, 10.15, 10.05]);
        let wild = values(&[5.0, 15.0, 7.0, 13.0, 10.0]);
        assert_eq!(verdict(&a, &faster, Figure::Time), Verdict::Faster);
        assert_eq!(verdict(&faster, &a, Figure::Time), Verdict::Slower);
        assert_eq!(verdict(&a, &within, Figure::Time), Verdict::NoChange);
        let w = judge(&a, &values(&[4.0, 16.0, 6.0, 14.0, 8.0]), Figure::Time, 0.02).unwrap();
        assert_eq!(
            (w.verdict, w.judged_by, w.decided_by),
            (Verdict::NotSignificant, Figure::Time, JudgedBy::Runs)
        );
        assert_eq!(verdict(&a, &wild, Figure::Time), Verdict::NotSignificant);
        assert_eq!(verdict(&a, &values(&[8.0]), Figure::Time), Verdict::TooFewRuns);
        assert!(
            judge(&a, &faster, Figure::Throughput, 0.02).is_none(),
            "no throughput, no change in it"
        );
        let mut ta = values(&[1.0; 4]);
        ta.throughput = Some(vec![100.0, 101.0, 99.0, 100.5]);
        let mut tb = values(&[1.0; 4]);
        tb.throughput = Some(vec![120.0, 121.0, 119.0, 120.5]);
        assert_eq!(verdict(&ta, &tb, Figure::Throughput), Verdict::Faster);
    }

    #[test]
    fn a_mean_moved_by_a_few_slow_runs_on_one_side_is_not_a_change() {
        // Unchanged program: 6 runs at its pace, 4 in a slow spell of the host (+30%).
        let spell = values(&[1.30, 1.00, 1.31, 1.02, 1.29, 1.01, 1.03, 1.30, 1.02, 1.01]);
        let calm = values(&[1.01, 1.00, 1.02, 1.01, 0.99, 1.00, 1.02, 1.01, 1.00, 1.01]);
        let c = judge(&spell, &calm, Figure::Time, 0.02).unwrap();
        assert!(c.p.unwrap() < 0.05 && c.ratio < 0.95, "{c:?}: the mean moved, significantly");
        assert_eq!(c.verdict, Verdict::NotSignificant, "{c:?}");
        assert!(moved_by_a_few_runs(&c, 0.02));
        let line = super::super::why::a_few_runs_line(&c, "B");
        assert!(line.contains("a few of the reference's runs were slower"), "{line}");
        // The whole distribution moved: a change, whatever a slow run does.
        let moved = values(&[0.90, 0.91, 0.89, 0.90, 1.20, 0.90, 0.91, 0.89, 0.90, 0.90]);
        assert_eq!(verdict(&calm, &moved, Figure::Time), Verdict::Faster);
        let slowed = values(&[1.30, 1.31, 1.29, 1.30, 1.32, 1.30, 1.31, 1.29, 1.30, 1.02]);
        assert_eq!(verdict(&calm, &slowed, Figure::Time), Verdict::Slower);
        assert!(!moved_by_a_few_runs(&judge(&calm, &slowed, Figure::Time, 0.02).unwrap(), 0.02));
    }

    #[test]
    fn single_values_are_judged_by_the_threshold_alone() {
        let one = |x: f64| Values { throughput: Some(vec![x]), ..Values::default() };
        let c = judge(&one(100.0), &one(235.0), Figure::Throughput, 0.02).unwrap();
        assert_eq!(
            (c.verdict, c.decided_by, c.p, c.ci95),
            (Verdict::Faster, JudgedBy::Threshold, None, None)
        );
        assert_eq!(
            verdict(&one(100.0), &one(96.0), Figure::Throughput),
            Verdict::NoChange,
            "within 5%"
        );
        assert_eq!(verdict(&one(100.0), &one(94.0), Figure::Throughput), Verdict::Slower);
        let t = |x: f64| Values { time: Some(vec![x]), ..Values::default() };
        assert_eq!(verdict(&t(10.0), &t(8.0), Figure::Time), Verdict::Faster);
    }

    fn sweep(param: &str) -> Set {
        let request = crate::plan::Request {
            command: vec!["prog".into(), format!("{{{param}}}")],
            params: vec![format!("{param}=1,2,4")],
            ..Default::default()
        };
        let doc =
            crate::results::Results::new(crate::plan::build(&request, 2).unwrap(), vec![]).unwrap();
        Set::new(param.into(), param.into(), doc)
    }

    #[test]
    fn threads_against_copies_are_paired_by_the_count_and_like_sweeps_by_their_parameters() {
        let o = Options { noise: 0.05, reference: 0 };
        let (thr, cop) = (sweep("threads"), sweep("copies"));
        let sets = [thr, cop];
        let paired = keys(&sets);
        assert_eq!(
            paired.paired_by.as_deref(),
            Some("points are paired by the count: threads in threads, copies in copies")
        );
        let matched = rows(&sets, &paired, &[None, None], &o);
        assert_eq!(matched.len(), 3, "one row a count, none only in one set");
        assert_eq!(matched[2].label, "threads=4 · copies=4");
        assert!(matched.iter().all(|r| r.points.iter().all(Option::is_some)), "{matched:?}");
        let same = [sweep("threads"), sweep("threads")];
        let alike = keys(&same);
        assert_eq!(alike.paired_by, None);
        assert_eq!(rows(&same, &alike, &[None, None], &o)[2].label, "threads=4");
    }
}
