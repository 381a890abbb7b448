//! Intervals that hold when the number of runs depends on what the runs showed, and intervals on
//! the ratio of two points' rates that use the design the runs were taken in.
//!
//! A sweep that adds runs until its verdict is clear looks at its intervals several times: a 95%
//! interval at every look would miss more than 5% of the time over the whole procedure (optional
//! stopping). So the 5% is spent over the looks: half on the first, the other half shared equally
//! by at most [`MAX_LOOKS`] − 1 more. By Bonferroni's inequality the chance that the interval of
//! any look misses, and so the one the sweep stops at, is at most the sum, 5%. A sweep with a
//! fixed number of runs looks once and spends all of it.
//!
//! Runs of several points taken in interleaved rounds are paired: a slow spell of the host hits
//! every point of a round. The ratio of two points' rates is then judged on the per-round ratios
//! (Student's t on their logarithms), which such a spell does not move.

use super::{Summary, t_two_sided};
use serde::{Deserialize, Serialize};

/// The error the whole procedure may have.
pub const ALPHA: f64 = 0.05;
/// Looks at most in a sweep that adds runs: the first, and up to three rounds of additions.
pub const MAX_LOOKS: u32 = 4;
/// Paired rounds needed before the per-round ratios are used (two give one degree of freedom).
pub const PAIRED_MIN: usize = 3;

/// How sure each interval of an analysis is, given how many times the sweep looked at its
/// intervals with the option of adding runs.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Confidence {
    /// Looks at the verdict that could add runs: 0 when the number of runs was fixed in advance.
    pub looks: u32,
    /// The two-sided error of one interval at this look (0.05 for a 95% interval).
    pub alpha: f64,
}

impl Default for Confidence {
    fn default() -> Confidence {
        Confidence::FIXED
    }
}

impl Confidence {
    /// A fixed number of runs, or a published table: 95% intervals.
    pub const FIXED: Confidence = Confidence { looks: 0, alpha: ALPHA };

    /// The error an interval may have at look `look` (1 for the first) of a sweep that adds runs;
    /// 0 means no look could add runs.
    pub fn at_look(look: u32) -> Confidence {
        let alpha = match look {
            0 => ALPHA,
            1 => ALPHA / 2.0,
            _ => ALPHA / 2.0 / f64::from(MAX_LOOKS - 1),
        };
        Confidence { looks: look, alpha }
    }

    /// Student's quantile for this interval at `df` degrees of freedom.
    pub fn t(&self, df: f64) -> f64 {
        t_two_sided(self.alpha, df)
    }

    /// Whether the number of runs was fixed in advance (the default, left out of results.json).
    pub fn is_fixed(&self) -> bool {
        *self == Confidence::FIXED
    }

    /// Whether another look may still add runs.
    pub fn may_look_again(&self) -> bool {
        self.looks >= 1 && self.looks < MAX_LOOKS
    }
}

/// A ratio's interval on the log scale: the logarithm of its centre, the half-width, and what it
/// rests on (for projecting how many runs would narrow it).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LogRatio {
    /// ln of the interval's centre.
    pub centre: f64,
    /// Half-width on the log scale.
    pub half: f64,
    /// Degrees of freedom of Student's quantile used.
    pub df: f64,
    /// Runs per side (the fewer), or paired rounds.
    pub n: usize,
    /// Whether it was made from per-round ratios.
    pub paired: bool,
}

impl LogRatio {
    /// The interval of the mean of per-round values (log ratios, or a cause's share in each run)
    /// at `conf`: Student's t at n − 1 degrees of freedom times the standard error. `None` with
    /// no values.
    pub fn of_rounds(values: &[f64], conf: Confidence) -> Option<LogRatio> {
        let s = Summary::of(values)?;
        let df = (s.n - 1) as f64;
        Some(LogRatio {
            centre: s.mean,
            half: conf.t(df) * s.stddev / (s.n as f64).sqrt(),
            df,
            n: s.n,
            paired: true,
        })
    }

    /// `[low, high]` on the ratio's own scale.
    pub fn interval(&self) -> [f64; 2] {
        [(self.centre - self.half).exp(), (self.centre + self.half).exp()]
    }

    /// The half-width that the same spread would give with `n` runs per side (or paired rounds)
    /// at `conf`.
    pub fn projected(&self, n: usize, conf: Confidence, now: Confidence) -> f64 {
        let n = n.max(2);
        let se = self.half / now.t(self.df).max(1e-12);
        let df = if self.paired {
            (n - 1) as f64
        } else {
            self.df * (n - 1) as f64 / (self.n.max(2) - 1) as f64
        };
        conf.t(df) * se * (self.n as f64 / n as f64).sqrt()
    }
}

/// The interval of the ratio of `b`'s rate to `a`'s from the rounds both ran in, each side given
/// as (round, rate) per successful run: Student's t on the per-round log ratios. `None` with
/// fewer than [`PAIRED_MIN`] shared rounds or a rate that is not positive.
pub fn paired(a: &[(u32, f64)], b: &[(u32, f64)], conf: Confidence) -> Option<LogRatio> {
    let logs: Vec<f64> = b
        .iter()
        .filter_map(|&(round, rb)| {
            let (_, ra) = a.iter().find(|(r, _)| *r == round)?;
            (rb > 0.0 && *ra > 0.0).then(|| (rb / ra).ln())
        })
        .collect();
    if logs.len() < PAIRED_MIN || logs.iter().any(|l| !l.is_finite()) {
        return None;
    }
    LogRatio::of_rounds(&logs, conf)
}

/// The interval of `b`'s figure over `a`'s, each side given as (round, value) per successful run:
/// [`paired`] when every run has its round, else (or with too few shared rounds) [`unpaired`] on
/// the values.
pub fn by_rounds_or_not(
    a: &[(Option<u32>, f64)],
    b: &[(Option<u32>, f64)],
    conf: Confidence,
) -> Option<LogRatio> {
    let rounds = |v: &[(Option<u32>, f64)]| -> Option<Vec<(u32, f64)>> {
        v.iter().map(|(r, x)| r.map(|r| (r, *x))).collect()
    };
    let values = |v: &[(Option<u32>, f64)]| v.iter().map(|x| x.1).collect::<Vec<f64>>();
    match (rounds(a), rounds(b)) {
        (Some(ra), Some(rb)) => paired(&ra, &rb, conf),
        _ => None,
    }
    .or_else(|| unpaired(&values(a), &values(b), conf))
}

/// The interval of mean(`b`) / mean(`a`) from unpaired values by the delta method: Student's t
/// at Welch's degrees of freedom times the ratio's relative standard error. `None` with fewer
/// than two values on a side or a mean that is not positive.
pub fn unpaired(a: &[f64], b: &[f64], conf: Confidence) -> Option<LogRatio> {
    let (sa, sb) = (Summary::of(a)?, Summary::of(b)?);
    if sa.n < 2 || sb.n < 2 || sa.mean <= 0.0 || sb.mean <= 0.0 {
        return None;
    }
    let va = (sa.stddev / sa.mean).powi(2) / sa.n as f64;
    let vb = (sb.stddev / sb.mean).powi(2) / sb.n as f64;
    let df = if va + vb == 0.0 {
        (sa.n + sb.n - 2) as f64
    } else {
        (va + vb).powi(2) / (va * va / (sa.n - 1) as f64 + vb * vb / (sb.n - 1) as f64)
    };
    Some(LogRatio {
        centre: (sb.mean / sa.mean).ln(),
        half: conf.t(df) * (va + vb).sqrt(),
        df,
        n: sa.n.min(sb.n),
        paired: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::Rng;

    #[test]
    fn the_error_is_spent_over_the_looks_and_adds_up_to_five_percent() {
        assert_eq!(Confidence::at_look(0), Confidence::FIXED);
        let total: f64 = (1..=MAX_LOOKS).map(|k| Confidence::at_look(k).alpha).sum();
        assert!((total - ALPHA).abs() < 1e-12, "{total}");
        assert!(
            Confidence::at_look(1).may_look_again()
                && !Confidence::at_look(MAX_LOOKS).may_look_again()
        );
        assert!(!Confidence::FIXED.may_look_again());
    }

    #[test]
    fn per_round_ratios_ignore_a_slow_spell_that_hits_every_point_of_a_round() {
        // The second round ran 30% slower at both counts: the ratio stayed 1.8.
        let one = [(0, 1.0), (1, 0.7), (2, 1.0), (3, 0.98)];
        let two = [(0, 1.80), (1, 1.27), (2, 1.79), (3, 1.77)];
        let conf = Confidence::FIXED;
        let p = paired(&one, &two, conf).unwrap();
        let [lo, hi] = p.interval();
        assert!(lo > 1.75 && hi < 1.85, "{lo} {hi}");
        let u = unpaired(&one.map(|x| x.1), &two.map(|x| x.1), conf).unwrap();
        let [ulo, uhi] = u.interval();
        assert!(ulo < 1.5 && uhi > 2.1, "unpaired {ulo} {uhi}");
        // Rounds only one point ran in are left out; two shared rounds are too few.
        assert!(paired(&one[..2], &two, conf).is_none());
    }

    #[test]
    fn optional_stopping_on_the_spent_error_misses_at_most_five_percent() {
        // A sweep whose true ratio is 1.8 looks after 3 rounds, then keeps adding 3 while its
        // interval straddles 1.8 (the worst case: it stops as soon as the truth falls outside).
        let mut rng = Rng::new(11);
        let mut normal = || {
            let (u, v) = (
                (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64,
                (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64,
            );
            (-2.0 * (u.max(1e-300)).ln()).sqrt() * (std::f64::consts::TAU * v).cos()
        };
        let (trials, mut missed, mut missed_naive) = (4000, 0, 0);
        for _ in 0..trials {
            let (mut a, mut b) = (Vec::new(), Vec::new());
            let (mut miss, mut naive) = (false, false);
            for look in 1..=MAX_LOOKS {
                while a.len() < 3 * look as usize {
                    let round = a.len() as u32;
                    let spell = 0.2 * normal();
                    a.push((round, (spell + 0.05 * normal()).exp()));
                    b.push((round, (1.8f64.ln() + spell + 0.05 * normal()).exp()));
                }
                let covers = |c: Confidence| {
                    let [lo, hi] = paired(&a, &b, c).unwrap().interval();
                    (lo..=hi).contains(&1.8)
                };
                naive |= !covers(Confidence::FIXED);
                if !covers(Confidence::at_look(look)) {
                    miss = true;
                    break;
                }
            }
            missed += usize::from(miss);
            missed_naive += usize::from(naive);
        }
        let rate = missed as f64 / trials as f64;
        assert!(rate <= 0.05, "missed {rate}");
        // Looking four times at 95% each misses far more often than 5%.
        assert!(missed_naive as f64 / trials as f64 > 0.08, "naive {missed_naive}");
    }

    #[test]
    fn a_projection_shrinks_with_the_square_root_of_the_runs() {
        let conf = Confidence::at_look(1);
        let p = LogRatio { centre: 0.0, half: 0.2, df: 2.0, n: 3, paired: true };
        let later = Confidence::at_look(2);
        let h = p.projected(12, later, conf);
        let se = 0.2 / conf.t(2.0);
        assert!((h - later.t(11.0) * se * (3.0f64 / 12.0).sqrt()).abs() < 1e-12);
        assert!(h < 0.2 / 2.0);
    }
}
