//! The prediction procedure: choose a model by cross-validation, predict, and bound the
//! prediction by a bootstrap that chooses again in every draw (so that the interval carries the
//! uncertainty of the choice and of the parameters, not only the fit's residuals), over runs and
//! over points; then no narrower than the error the same procedure made predicting the largest
//! measured counts from the smaller ones, per doubling of the distance. Beyond the largest
//! measured count the slow end also allows that nothing scales past it (a bottleneck those counts
//! cannot show), and the fast end stops at perfect scaling from the most efficient count.

use super::backtest::{self, Backtest};
use super::crossval::{Choice, Chooser};
use super::models::widened;
use super::point::{Point, most_per_core};
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
    /// How the interval's ends beyond the measured counts were set.
    pub ends: Ends,
}

/// Which of an interval's ends were set by a bound rather than by the models' draws.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Ends {
    /// The slow end is this count's time (the largest measured): no gain past it.
    pub plateau: Option<f64>,
    /// The fast end is perfect scaling from this count, the one that did the most per core.
    pub linear: Option<f64>,
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
pub fn forecast(
    chooser: &Chooser,
    pts: &[Point],
    targets: &[f64],
    rng: &mut Rng,
) -> Option<Forecast> {
    let (choice, mut outlooks) = bootstrap(chooser, pts, targets, rng)?;
    let bt = backtest::run(chooser, pts);
    if let Some(per_doubling) = bt.as_ref().map(Backtest::error_per_doubling) {
        let (lo, hi) = (pts[0].count, pts[pts.len() - 1].count);
        for o in &mut outlooks {
            let beyond =
                if o.count > hi { (o.count / hi).log2() } else { (lo / o.count).log2().max(0.0) };
            let h = per_doubling * beyond;
            if let Some([a, b]) = &mut o.interval {
                *a = a.min(o.time * (-h).exp());
                *b = b.max(o.time * h.exp());
            }
        }
    }
    for o in outlooks.iter_mut().filter(|o| o.count > pts[pts.len() - 1].count) {
        bound(pts, o);
    }
    Some(Forecast { choice, outlooks, backtest: bt })
}

/// Past the largest measured count, a new bottleneck (memory bandwidth, a second socket,
/// hyper-threads, oversubscribed CPUs) may stop the scaling at any count, and no curve through
/// the measured ones shows it: the slow end is at least the largest count's time. Nor does a
/// program scale past perfectly from the count that did the most per core: the fast end, and the
/// prediction, are at most that.
fn bound(pts: &[Point], o: &mut Outlook) {
    let last = &pts[pts.len() - 1];
    let best = most_per_core(pts).unwrap_or(last);
    let fastest = best.time * best.count / o.count;
    if o.time < fastest {
        o.time = fastest;
    }
    if let Some([a, b]) = &mut o.interval {
        if *b < last.time {
            *b = last.time;
            o.ends.plateau = Some(last.count);
        }
        if *a < fastest {
            *a = fastest;
            o.ends.linear = Some(best.count);
        }
        *a = a.min(o.time);
        *b = b.max(o.time);
    }
}

fn base(pts: &[Point]) -> Vec<(f64, f64)> {
    pts.iter().map(|p| (p.count, p.time)).collect()
}

/// The chosen model and its predictions with their bootstrap intervals (no back-test).
pub fn bootstrap(
    chooser: &Chooser,
    pts: &[Point],
    targets: &[f64],
    rng: &mut Rng,
) -> Option<(Choice, Vec<Outlook>)> {
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
                let over_points = if best.loo.is_empty() {
                    p.time
                } else {
                    fitted[i] * (-best.loo[rng.below(best.loo.len())]).exp()
                };
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
            Outlook { count, time, interval, ends: Ends::default() }
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
    fn an_exact_law_predicts_its_truth_and_allows_no_gain_past_the_largest_count() {
        let law = |p: f64| 0.05 + 0.95 / p;
        let f = forecast(
            &Chooser::default(),
            &table(law, &[1.0, 2.0, 4.0, 8.0]),
            &[32.0],
            &mut Rng::new(1),
        )
        .unwrap();
        let o = &f.outlooks[0];
        let [lo, hi] = o.interval.unwrap();
        assert!(
            (o.time / law(32.0) - 1.0).abs() < 1e-6 && (lo / law(32.0) - 1.0).abs() < 0.01,
            "{o:?}"
        );
        assert_eq!((hi, o.ends), (law(8.0), Ends { plateau: Some(8.0), linear: None }));
        assert!(f.backtest.unwrap().checks[0].error().abs() < 1e-6);
    }

    #[test]
    fn no_prediction_passes_perfect_scaling_from_the_count_that_did_most_per_core() {
        let pts = table(|p| [1.0, 0.45, 0.3][p as usize / 2], &[1.0, 2.0, 4.0]);
        let mut o =
            Outlook { count: 16.0, time: 0.05, interval: Some([0.04, 0.2]), ends: Ends::default() };
        bound(&pts, &mut o);
        assert_eq!((o.time, o.interval), (0.9 / 16.0, Some([0.9 / 16.0, 0.3])));
        assert_eq!(o.ends, Ends { plateau: Some(4.0), linear: Some(2.0) });
    }

    #[test]
    fn two_counts_of_one_value_give_a_prediction_without_an_interval() {
        let law = |p: f64| 0.05 + 0.95 / p;
        let f = forecast(&Chooser::default(), &table(law, &[1.0, 2.0]), &[8.0], &mut Rng::new(1))
            .unwrap();
        assert!((f.outlooks[0].time - law(8.0)).abs() < 1e-9);
        assert_eq!((f.outlooks[0].interval, f.backtest), (None, None));
    }
}
