//! The prediction procedure: choose a model by cross-validation, predict, and bound the
//! prediction by a bootstrap that chooses again in every draw (so that the interval carries the
//! uncertainty of the choice and of the parameters, not only the fit's residuals), over runs and
//! over points; then no narrower than the error the same procedure made predicting the largest
//! measured counts from the smaller ones, per doubling of the distance.

use super::backtest::{self, Backtest};
use super::crossval::{Choice, Chooser};
use super::models::widened;
use super::point::Point;
use super::speedup::resample;
use crate::stats::{Rng, quantile};

/// Bootstrap draws behind an interval.
pub const DRAWS: usize = 200;
/// The interval's level.
pub const LEVEL: f64 = 0.90;

/// What the procedure says at one count.
#[derive(Clone, Debug, PartialEq)]
pub struct Outlook {
    /// The count.
    pub count: f64,
    /// Predicted time per unit of work.
    pub time: f64,
    /// 90% interval of that time, lower first, when the points allow one.
    pub interval: Option<[f64; 2]>,
}

/// The procedure's answer at every target, the choice behind it and its back-test.
#[derive(Clone, Debug, PartialEq)]
pub struct Forecast {
    /// The model chosen on every point, and the runner-up.
    pub choice: Choice,
    /// Per target, in the order asked.
    pub outlooks: Vec<Outlook>,
    /// The largest measured counts predicted from the smaller ones.
    pub backtest: Option<Backtest>,
}

/// Runs the procedure on points of distinct, increasing counts.
pub fn forecast(chooser: &Chooser, pts: &[Point], targets: &[f64], rng: &mut Rng) -> Option<Forecast> {
    let (choice, mut outlooks) = bootstrap(chooser, pts, targets, rng)?;
    let bt = backtest::run(chooser, pts);
    if let Some(per_doubling) = bt.as_ref().map(Backtest::error_per_doubling) {
        let (lo, hi) = (pts[0].count, pts[pts.len() - 1].count);
        for o in &mut outlooks {
            let beyond = if o.count > hi { (o.count / hi).log2() } else { (lo / o.count).log2().max(0.0) };
            let h = per_doubling * beyond;
            if let Some([a, b]) = &mut o.interval {
                *a = a.min(o.time * (-h).exp());
                *b = b.max(o.time * h.exp());
            }
        }
    }
    Some(Forecast { choice, outlooks, backtest: bt })
}

fn base(pts: &[Point]) -> Vec<(f64, f64)> {
    pts.iter().map(|p| (p.count, p.time)).collect()
}

/// The chosen model and its predictions with their bootstrap intervals (no back-test).
pub fn bootstrap(chooser: &Chooser, pts: &[Point], targets: &[f64], rng: &mut Rng) -> Option<(Choice, Vec<Outlook>)> {
    let measured = base(pts);
    let choice = chooser.choose(&measured, targets)?;
    let best = &choice.best;
    let values: Vec<f64> = targets.iter().map(|&n| best.time(n)).collect::<Option<_>>()?;
    let repeated = pts.iter().all(|p| p.runs.len() > 1);
    let mut draws: Vec<Vec<f64>> = vec![Vec::with_capacity(DRAWS); targets.len()];
    if !best.loo.is_empty() || repeated {
        let fitted: Vec<f64> = pts.iter().map(|p| best.time(p.count)).collect::<Option<_>>()?;
        let mut ys = measured.clone();
        for _ in 0..DRAWS {
            for (i, p) in pts.iter().enumerate() {
                let over_points =
                    if best.loo.is_empty() { p.time } else { fitted[i] * (-best.loo[rng.below(best.loo.len())]).exp() };
                let over_runs = if repeated { run_factor(p, rng) } else { 1.0 };
                ys[i].1 = over_points * over_runs;
            }
            if let Some(c) = chooser.choose(&ys, targets) {
                for (d, &n) in draws.iter_mut().zip(targets) {
                    d.extend(c.best.time(n));
                }
            }
        }
    }
    let outlooks = targets
        .iter()
        .zip(values)
        .zip(draws)
        .map(|((&count, time), mut d)| {
            let interval = (d.len() >= DRAWS / 2).then(|| {
                d.sort_by(f64::total_cmp);
                let tail = (1.0 - LEVEL) / 2.0;
                [quantile(&d, tail).min(time), quantile(&d, 1.0 - tail).max(time)]
            });
            Outlook { count, time, interval }
        })
        .collect();
    Some((choice, outlooks))
}

/// A resampled mean of the point's runs over their mean, widened as the laws' bootstrap is.
fn run_factor(p: &Point, rng: &mut Rng) -> f64 {
    let n = p.runs.len();
    let mean = p.runs.iter().sum::<f64>() / n as f64;
    widened(1.0, resample(&p.runs, rng).iter().sum::<f64>() / n as f64 / mean, n)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(f: impl Fn(f64) -> f64, counts: &[f64]) -> Vec<Point> {
        counts.iter().map(|&count| Point { count, time: f(count), runs: vec![f(count)] }).collect()
    }

    #[test]
    fn noisy_amdahl_tables_hold_their_truth_in_the_interval() {
        let mut rng = Rng::new(7);
        let law = |p: f64| 0.03 + 0.97 / p;
        let (mut inside, trials) = (0, 20);
        for _ in 0..trials {
            let noisy: Vec<Point> = table(law, &[1.0, 2.0, 4.0, 8.0, 16.0])
                .into_iter()
                .map(|mut p| {
                    p.time *= 1.0 + 0.03 * (rng.below(1000) as f64 / 500.0 - 1.0);
                    p.runs = vec![p.time];
                    p
                })
                .collect();
            let f = forecast(&Chooser::default(), &noisy, &[64.0], &mut rng).unwrap();
            let o = &f.outlooks[0];
            let [lo, hi] = o.interval.unwrap();
            assert!(lo <= o.time && o.time <= hi, "{o:?}");
            inside += usize::from(lo <= law(64.0) && law(64.0) <= hi);
        }
        assert!(inside * 10 >= trials * 8, "truth inside {inside} of {trials} intervals");
    }

    #[test]
    fn an_exact_law_gives_a_tight_interval_around_its_truth() {
        let law = |p: f64| 0.05 + 0.95 / p;
        let f = forecast(&Chooser::default(), &table(law, &[1.0, 2.0, 4.0, 8.0]), &[32.0], &mut Rng::new(1)).unwrap();
        let [lo, hi] = f.outlooks[0].interval.unwrap();
        assert!(lo <= law(32.0) * 1.0001 && hi >= law(32.0) * 0.9999 && hi / lo < 1.01, "[{lo}, {hi}]");
        assert!(f.backtest.unwrap().checks[0].error().abs() < 1e-6);
    }

    #[test]
    fn two_counts_of_one_value_give_a_prediction_without_an_interval() {
        let law = |p: f64| 0.05 + 0.95 / p;
        let f = forecast(&Chooser::default(), &table(law, &[1.0, 2.0]), &[8.0], &mut Rng::new(1)).unwrap();
        assert!((f.outlooks[0].time - law(8.0)).abs() < 1e-9);
        assert_eq!((f.outlooks[0].interval, f.backtest), (None, None));
    }
}
