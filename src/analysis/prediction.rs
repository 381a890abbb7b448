//! From a series to what results.json stores of its predictions: the cross-validated forecast at
//! each requested count, the back-test beside an extrapolation, a smallest count that did more
//! per core than the rest, and the count to measure next.

use super::crossval::{Chooser, Scored};
use super::forecast;
use super::observations::{Observations, Series};
use super::point::Point;
use super::{fast_baseline, next_count};
use crate::results::analysis::{
    Backtest, BacktestCheck, Basis, FastBaseline, Forecast, NextCount, NextOption, RunnerUp,
};
use crate::stats::Rng;

/// A runner-up is shown when its leave-one-out error is at most this multiple of the chosen one's.
const CLOSE: f64 = 1.5;

/// Everything the procedure says about one series.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Predicted {
    /// Per requested count, in order.
    pub forecasts: Vec<Option<Forecast>>,
    /// Present when a count beyond the measured ones is predicted.
    pub backtest: Option<Backtest>,
    /// The smallest count left out of the fit.
    pub fast_baseline: Option<FastBaseline>,
    /// Where to measure next.
    pub next_count: Option<NextCount>,
}

/// The count a target is predicted as on a machine of `cpus` CPUs: no more of its workers run at
/// once than there are CPUs.
pub fn on_cpus(count: f64, cpus: Option<f64>) -> f64 {
    cpus.map_or(count, |c| count.min(c))
}

/// Runs the procedure on the fitted points of a series (counts above zero, by increasing count);
/// a target above the `cpus` of the machine predicted for is predicted as that many.
pub fn predict(
    obs: &Observations,
    s: &Series,
    targets: &[f64],
    cpus: Option<f64>,
    rng: &mut Rng,
) -> Predicted {
    let all: Vec<Point> = s
        .points
        .iter()
        .map(|p| Point {
            count: p.count,
            time: 1.0 / obs.rate(p.count, &p.values),
            runs: p
                .values
                .iter()
                .map(|v| 1.0 / obs.rate(p.count, std::slice::from_ref(v)))
                .collect(),
        })
        .collect();
    let mut out = Predicted { forecasts: vec![None; targets.len()], ..Predicted::default() };
    if all.len() < 2 || targets.is_empty() {
        return out;
    }
    // Karp–Flatt is a strong-scaling figure: with the work growing with the count, the time per
    // unit of work falls as a fixed cost is spread, which it would read as a fast baseline.
    let sign = if obs.axis.weak() { None } else { fast_baseline::detect(&all) };
    let pts = if sign.is_some() { &all[1..] } else { &all[..] };
    out.fast_baseline = sign.map(|s| FastBaseline {
        count: s.count,
        second: [s.second.0, s.second.1],
        largest: [s.largest.0, s.largest.1],
    });
    let chooser = Chooser::default();
    let at: Vec<f64> = targets.iter().map(|&t| on_cpus(t, cpus)).collect();
    let Some(f) = forecast::forecast(&chooser, pts, &at, rng) else { return out };
    let best = &f.choice.best;
    out.forecasts = f
        .outlooks
        .iter()
        .zip(targets)
        .map(|(o, &target)| {
            let runner_up = f.choice.runner_up.as_ref().filter(|r| close(best, r)).and_then(|r| {
                Some(RunnerUp {
                    model: formula(r),
                    rate: 1.0 / r.time(o.count)?,
                    cv_error_pct: pct(r.cv_error?),
                })
            });
            Some(Forecast {
                rate: 1.0 / o.time,
                interval90: o.interval.map(|[lo, hi]| [1.0 / hi, 1.0 / lo]),
                plateau_from: o.ends.plateau,
                linear_from: o.ends.linear,
                cpus: (target > o.count).then_some(o.count),
                model: formula(best),
                cv_error_pct: best.cv_error.map(pct),
                runner_up,
            })
        })
        .collect();
    let (lo, hi) = (all[0].count, all[all.len() - 1].count);
    if !targets.iter().any(|&t| t > hi || t < lo) {
        return out;
    }
    let as_measured = |predicted: f64, measured: f64| match obs.basis {
        Basis::Time => predicted / measured,
        Basis::Throughput => measured / predicted,
    };
    out.backtest = f.backtest.map(|b| Backtest {
        trained: b.trained,
        model: b.model,
        checks: b
            .checks
            .iter()
            .map(|c| BacktestCheck {
                count: c.count,
                predicted: 1.0 / c.predicted,
                measured: 1.0 / c.measured,
                error_pct: 100.0 * (as_measured(c.predicted, c.measured) - 1.0),
            })
            .collect(),
    });
    // Two counts leave no residuals: a count added as predicted would seem to settle everything.
    let target = at.iter().copied().fold(f64::MIN, f64::max);
    if target > hi && f.choice.best.cv_error.is_some() {
        out.next_count = next(obs, &chooser, pts, target, rng);
    }
    out
}

fn next(
    obs: &Observations,
    chooser: &Chooser,
    pts: &[Point],
    target: f64,
    rng: &mut Rng,
) -> Option<NextCount> {
    let now = next_count::width(chooser, pts, target, rng)?;
    let options: Vec<NextOption> = next_count::options(chooser, pts, target, rng)
        .into_iter()
        .map(|c| NextOption {
            count: c.count,
            width_pct: 100.0 * c.width,
            core_seconds: (obs.basis == Basis::Time)
                .then(|| c.count * c.time * if obs.axis.weak() { c.count } else { 1.0 }),
        })
        .collect();
    (!options.is_empty()).then_some(NextCount { target, width_pct: 100.0 * now, options })
}

fn close(best: &Scored, other: &Scored) -> bool {
    match (best.cv_error, other.cv_error) {
        (Some(b), Some(o)) => o <= CLOSE * b.max(1e-9),
        _ => false,
    }
}

fn formula(s: &Scored) -> String {
    s.hypothesis.formula(&s.coefs)
}

/// A root-mean-square log error as a percentage.
fn pct(e: f64) -> f64 {
    100.0 * e.exp_m1()
}
