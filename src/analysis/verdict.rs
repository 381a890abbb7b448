//! The best point, whether more is slower beyond it (only when the drop clears the runs'
//! uncertainty), and the smallest count that already comes close to the best.

use super::observations::{Observations, Series};
use super::ratio;
use crate::results::analysis::{Best, JudgedBy, Retrograde};
use crate::stats::sequential::Confidence;

/// Without repeated runs, a drop counts only beyond this fraction of the best rate.
pub const SINGLE_VALUE_THRESHOLD: f64 = 0.05;
/// "Close to the best": within this fraction.
pub const NEAR_BEST: f64 = 0.05;
/// A smaller count stands in for the fastest only when it measured within this fraction of it:
/// with two runs a point the ratio's interval cannot tell from the fastest may be half as fast
/// (pigz at 1 thread against 2, measured 1.94× slower, was called best).
pub const STANDS_IN: f64 = 0.10;

/// Finds the best point and, if real, the retrograde region after it, judging rates apart by
/// their ratio's interval at `conf`.
pub fn judge(
    obs: &Observations,
    series: &Series,
    conf: Confidence,
) -> (Option<Best>, Option<Retrograde>) {
    let rates: Vec<f64> = series.points.iter().map(|p| obs.rate(p.count, &p.values)).collect();
    let Some(bi) = (0..rates.len()).max_by(|&a, &b| rates[a].total_cmp(&rates[b])) else {
        return (None, None);
    };
    // The fewest workers whose rate cannot be told from the top rate: the ratio's 95% interval
    // (as the speed-up's, see [`ratio::log_interval`]) reaches 1, and it measured within
    // [`STANDS_IN`] of it. Single values carry no measure of noise: there the best is simply the
    // highest.
    let top = &series.points[bi];
    let same = |i: usize| {
        rates[i] >= (1.0 - STANDS_IN) * rates[bi]
            && ratio::log_interval(obs, &series.points[i], top, conf)
                .is_some_and(|l| l.centre - l.half <= 0.0)
    };
    let chosen = (0..bi).find(|&i| same(i)).unwrap_or(bi);
    let best_rate = rates[chosen];
    let near_best_count = (0..chosen)
        .find(|&i| rates[i] >= (1.0 - NEAR_BEST) * best_rate)
        .map(|i| series.points[i].count);
    let best = Best {
        count: series.points[chosen].count,
        rate: best_rate,
        near_best_count,
        no_better: (chosen != bi).then(|| series.points[bi].count),
    };
    let last = rates.len() - 1;
    if bi == last {
        return (Some(best), None);
    }
    let best_rate = rates[bi];
    let (b, l) = (&series.points[bi], &series.points[last]);
    // Slower only when the ratio's 95% interval, as the speed-up's, excludes 1.
    let judged = match ratio::log_interval(obs, l, b, conf) {
        Some(r) => (r.centre - r.half > 0.0).then_some(JudgedBy::Runs),
        None => (rates[last] < (1.0 - SINGLE_VALUE_THRESHOLD) * best_rate)
            .then_some(JudgedBy::Threshold),
    };
    let retro = judged.map(|how| Retrograde {
        beyond: b.count,
        at: l.count,
        change_pct: 100.0 * (rates[last] / best_rate - 1.0),
        judged_by: how,
    });
    (Some(best), retro)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::observations::Obs;
    use crate::plan::{Ask, Axis};
    use crate::results::analysis::Basis;

    fn judged(points: &[(f64, &[f64])]) -> Option<Retrograde> {
        both(points).1
    }

    fn best(points: &[(f64, &[f64])]) -> Best {
        both(points).0.expect("a best point")
    }

    fn both(points: &[(f64, &[f64])]) -> (Option<Best>, Option<Retrograde>) {
        let series = Series {
            label: String::new(),
            points: points
                .iter()
                .enumerate()
                .map(|(index, (count, v))| Obs {
                    index,
                    count: *count,
                    values: v.to_vec(),
                    rounds: Vec::new(),
                    cpu_pct: None,
                })
                .collect(),
        };
        let obs = Observations {
            axis: Axis::along("threads", &Ask::default()),
            basis: Basis::Time,
            unit: None,
            series: vec![series.clone()],
        };
        judge(&obs, &series, Confidence::FIXED)
    }

    #[test]
    fn slower_only_when_the_ratio_interval_excludes_one() {
        // fio over evicted files: 0.87× [0.70, 1.08] is not slower.
        assert!(judged(&[(1.0, &[0.88, 0.99, 1.05]), (2.0, &[1.10, 1.12, 1.13])]).is_none());
        let r = judged(&[(1.0, &[1.00, 1.01, 0.99]), (2.0, &[1.20, 1.22, 1.21])])
            .expect("20% slower, tight runs");
        assert_eq!((r.beyond, r.at, r.judged_by), (1.0, 2.0, JudgedBy::Runs));
        assert!(
            judged(&[(1.0, &[1.0]), (2.0, &[1.2])])
                .is_some_and(|r| r.judged_by == JudgedBy::Threshold)
        );
    }

    #[test]
    fn the_best_is_the_fewest_the_runs_cannot_tell_from_the_fastest_if_it_measured_close() {
        // Within 3% and noisy: the fewer threads stand in for the faster.
        let b = best(&[(1.0, &[1.00, 1.10, 0.95]), (2.0, &[0.97, 1.08, 0.93])]);
        assert_eq!((b.count, b.no_better), (1.0, Some(2.0)));
        // pigz with two runs a point: 2.00 ± 0.12 s against 1.04 ± 0.13 s. The ratio's interval
        // (one degree of freedom) reaches 1, but 1.94× slower is no stand-in for the fastest.
        let b = best(&[(1.0, &[1.92, 2.08]), (2.0, &[0.95, 1.13])]);
        assert_eq!((b.count, b.no_better), (2.0, None));
    }
}
