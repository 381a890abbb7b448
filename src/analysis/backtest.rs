//! The back-test beside every extrapolation: the counts above half the largest measured are
//! predicted from the counts up to half of it (from all but the largest when that leaves fewer
//! than two) by the same choice of model, no faster than perfect scaling (as the forecast), and
//! compared with what was measured.

use super::crossval::Chooser;
use super::point::{Point, most_per_core};

/// One held-out count: what the procedure predicted and what was measured (times per unit).
#[derive(Clone, Debug, PartialEq)]
pub struct Check {
    /// The count.
    pub count: f64,
    /// Predicted time per unit of work.
    pub predicted: f64,
    /// Measured time per unit of work.
    pub measured: f64,
}

impl Check {
    /// ln(predicted / measured).
    pub fn error(&self) -> f64 {
        (self.predicted / self.measured).ln()
    }
}

/// The back-test of one series.
#[derive(Clone, Debug, PartialEq)]
pub struct Backtest {
    /// Smallest and largest count it was fitted to.
    pub trained: [f64; 2],
    /// The model chosen on them, as a formula.
    pub model: String,
    /// The held-out counts.
    pub checks: Vec<Check>,
}

impl Backtest {
    /// The largest |ln error| over the held-out counts per doubling of the distance from the
    /// largest count fitted: how fast this procedure's error grew with the extrapolation.
    pub fn error_per_doubling(&self) -> f64 {
        self.checks
            .iter()
            .map(|c| c.error().abs() / (c.count / self.trained[1]).log2().max(f64::MIN_POSITIVE))
            .fold(0.0, f64::max)
    }
}

/// Predicts the largest counts from the smaller ones; `None` with fewer than three counts.
pub fn run(chooser: &Chooser, pts: &[Point]) -> Option<Backtest> {
    let largest = pts.last()?.count;
    let mut k = pts.iter().filter(|p| p.count <= largest / 2.0).count();
    if k < 2 {
        k = pts.len().checked_sub(1)?;
    }
    if k < 2 || k == pts.len() {
        return None;
    }
    let (train, held) = pts.split_at(k);
    let at: Vec<f64> = held.iter().map(|p| p.count).collect();
    let choice =
        chooser.choose(&train.iter().map(|p| (p.count, p.time)).collect::<Vec<_>>(), &at)?;
    let best = most_per_core(train)?;
    let checks = held
        .iter()
        .map(|p| {
            let predicted = choice.best.time(p.count)?.max(best.time * best.count / p.count);
            Some(Check { count: p.count, predicted, measured: p.time })
        })
        .collect::<Option<_>>()?;
    Some(Backtest {
        trained: [train[0].count, train[k - 1].count],
        model: choice.best.hypothesis.formula(&choice.best.coefs),
        checks,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pts(times: &[(f64, f64)]) -> Vec<Point> {
        times.iter().map(|&(count, time)| Point { count, time, runs: vec![time] }).collect()
    }

    #[test]
    fn predicts_the_counts_above_half_the_largest_from_the_rest() {
        // Amdahl up to 8, then 16 threads 10% slower than the law.
        let law = |p: f64| 0.02 + 0.98 / p;
        let mut t: Vec<(f64, f64)> =
            [1.0, 2.0, 4.0, 8.0, 16.0].iter().map(|&p| (p, law(p))).collect();
        t[4].1 *= 1.1;
        let b = run(&Chooser::default(), &pts(&t)).unwrap();
        assert_eq!(b.trained, [1.0, 8.0]);
        assert_eq!(b.checks.len(), 1);
        assert!((b.checks[0].error() - (1.0f64 / 1.1).ln()).abs() < 1e-6, "{b:?}");
        assert!((b.error_per_doubling() - 1.1f64.ln()).abs() < 1e-6);
    }

    #[test]
    fn needs_three_counts() {
        assert_eq!(run(&Chooser::default(), &pts(&[(1.0, 1.0), (2.0, 0.5)])), None);
        let b = run(&Chooser::default(), &pts(&[(1.0, 1.0), (2.0, 0.5), (3.0, 0.34)])).unwrap();
        assert_eq!((b.trained, b.checks.len()), ([1.0, 2.0], 1));
    }
}
