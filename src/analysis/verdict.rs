//! The best point, whether more is slower beyond it (only when the drop clears the runs'
//! uncertainty), and the smallest count that already comes close to the best.

use super::observations::{Obs, Observations, Series};
use crate::results::analysis::{Basis, Best, JudgedBy, Retrograde};
use crate::stats::{Summary, log_ratio_halfwidth};

/// Without repeated runs, a drop counts only beyond this fraction of the best rate.
pub const SINGLE_VALUE_THRESHOLD: f64 = 0.05;
/// "Close to the best": within this fraction.
pub const NEAR_BEST: f64 = 0.05;

/// 95% interval of a point's rate from its runs, when it has several.
fn rate_interval(obs: &Observations, p: &Obs) -> Option<[f64; 2]> {
    let [lo, hi] = Summary::of(&p.values)?.ci95?;
    let f = |v: f64| obs.rate(p.count, &[v]);
    Some(match obs.basis {
        Basis::Throughput => [f(lo), f(hi)],
        Basis::Time => [f(hi.max(1e-300)), f(lo.max(1e-300))],
    })
}

/// Finds the best point and, if real, the retrograde region after it.
pub fn judge(obs: &Observations, series: &Series) -> (Option<Best>, Option<Retrograde>) {
    let rates: Vec<f64> = series.points.iter().map(|p| obs.rate(p.count, &p.values)).collect();
    let Some(bi) = (0..rates.len()).max_by(|&a, &b| rates[a].total_cmp(&rates[b])) else { return (None, None) };
    // The fewest workers whose rate cannot be told from the top rate: the ratio's 95% interval
    // (as the speed-up's, see [`log_ratio_halfwidth`]) reaches 1. Single values carry no measure
    // of noise: there the best is simply the highest.
    let top = &series.points[bi];
    let same = |i: usize| {
        log_ratio_halfwidth(&series.points[i].values, &top.values).is_some_and(|h| (rates[bi] / rates[i]).ln() <= h)
    };
    let chosen = (0..bi).find(|&i| same(i)).unwrap_or(bi);
    let best_rate = rates[chosen];
    let near_best_count =
        (0..chosen).find(|&i| rates[i] >= (1.0 - NEAR_BEST) * best_rate).map(|i| series.points[i].count);
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
    let judged = match (rate_interval(obs, b), rate_interval(obs, l)) {
        (Some(bci), Some(lci)) => (lci[1] < bci[0]).then_some(JudgedBy::Runs),
        _ => (rates[last] < (1.0 - SINGLE_VALUE_THRESHOLD) * best_rate).then_some(JudgedBy::Threshold),
    };
    let retro = judged.map(|how| Retrograde {
        beyond: b.count,
        at: l.count,
        change_pct: 100.0 * (rates[last] / best_rate - 1.0),
        judged_by: how,
    });
    (Some(best), retro)
}
