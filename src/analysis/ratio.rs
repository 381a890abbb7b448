//! The interval of the ratio of two points' rates (a speed-up, the fastest count against a smaller
//! one): from the per-round ratios where both points ran in the same interleaved rounds, so that a
//! slow spell of the host that hits a whole round does not widen it; else by Welch's delta method.

use super::observations::{Obs, Observations};
use crate::stats::sequential::{self, Confidence, LogRatio};

/// The interval of rate(`b`) / rate(`a`) on the log scale, centred on the ratio of their rates
/// (the speed-up the table shows). Paired, its width is the per-round ratios' spread: their
/// geometric mean may differ a little from the ratio of the mean rates, and an interval about it
/// could leave the figure shown on its edge or outside. `None` with fewer than two values on a
/// side.
pub fn log_interval(obs: &Observations, a: &Obs, b: &Obs, conf: Confidence) -> Option<LogRatio> {
    let by_round = |o: &Obs| -> Vec<(u32, f64)> {
        o.rounds.iter().zip(&o.values).map(|(&r, &v)| (r, obs.rate(o.count, &[v]))).collect()
    };
    let centre = (obs.rate(b.count, &b.values) / obs.rate(a.count, &a.values)).ln();
    if !a.rounds.is_empty()
        && !b.rounds.is_empty()
        && let Some(p) = sequential::paired(&by_round(a), &by_round(b), conf)
    {
        return Some(LogRatio { centre, ..p });
    }
    let u = sequential::unpaired(&a.values, &b.values, conf)?;
    Some(LogRatio { centre, ..u })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{Ask, Axis};
    use crate::results::analysis::Basis;

    /// Wall times along a thread count.
    fn times() -> Observations {
        Observations {
            axis: Axis::along("threads", &Ask::default()),
            basis: Basis::Time,
            unit: None,
            series: Vec::new(),
        }
    }

    fn obs(values: &[f64], rounds: &[u32], count: f64) -> Obs {
        Obs { index: 0, count, values: values.to_vec(), rounds: rounds.to_vec(), cpu_pct: None }
    }

    #[test]
    fn interleaved_rounds_are_paired_and_others_are_not() {
        let o = times();
        // Times: the host slowed round 1 by 30% at both counts; every round gave 1.8×.
        let one = obs(&[2.0, 2.6, 2.0, 1.96], &[0, 1, 2, 3], 1.0);
        let two = obs(&[2.0 / 1.8, 2.6 / 1.8, 2.0 / 1.8, 1.96 / 1.8], &[0, 1, 2, 3], 2.0);
        let p = log_interval(&o, &one, &two, Confidence::FIXED).unwrap();
        assert!(p.paired && p.half < 1e-9 && (p.centre.exp() - 1.8).abs() < 1e-9, "{p:?}");
        let unrounded = Obs { rounds: Vec::new(), ..two.clone() };
        let u = log_interval(&o, &one, &unrounded, Confidence::FIXED).unwrap();
        assert!(!u.paired && u.half > 0.1, "{u:?}");
        assert!((u.centre.exp() - 1.8).abs() < 1e-9, "the ratio of the rates, {}", u.centre.exp());
    }

    #[test]
    fn a_paired_interval_lies_about_the_speed_up_the_times_show() {
        let o = times();
        // Per-round speed-ups 2.0, 2.5, 1.9 (geometric mean 2.12); the means give 8/3 ÷ 3.65/3.
        let one = obs(&[2.0, 4.0, 2.0], &[0, 1, 2], 1.0);
        let two = obs(&[1.0, 1.6, 1.05], &[0, 1, 2], 2.0);
        let p = log_interval(&o, &one, &two, Confidence::FIXED).unwrap();
        let shown = (8.0 / 3.0) / (3.65 / 3.0);
        let [lo, hi] = p.interval();
        assert!(p.paired && (p.centre.exp() - shown).abs() < 1e-9, "{p:?}");
        assert!(((shown / lo).ln() - (hi / shown).ln()).abs() < 1e-9, "{lo}–{hi} about {shown}");
    }
}
