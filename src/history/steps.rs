//! Change-point detection over one figure's history, after asv's: the series is fitted with
//! piecewise-constant levels by minimising Σ|yᵢ − level| + γ × (number of levels), exactly, by
//! dynamic programming over the segments' medians (O(n² log n)). The penalty γ grows with the
//! noise, estimated robustly from the differences of neighbouring values (a step changes one
//! difference, noise all of them), so that noise alone does not make steps. A step found this
//! way is only a candidate: [`super::check`] confirms it with a two-sample test on the runs.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// The penalty per level, in units of the noise's σ, times ln(n): tuned with
/// bench/regressions.py (at most 5% of step-free histories with a step, at least 90% of 5–10%
/// steps found).
pub const PENALTY: f64 = 2.0;

/// The noise's σ, from the median absolute difference of neighbours (×1.4826/√2, so that it is
/// σ for Gaussian noise); a series without variation gets a tiny σ relative to its level.
pub fn noise(y: &[f64]) -> f64 {
    let d: Vec<f64> = y.windows(2).map(|w| (w[1] - w[0]).abs()).collect();
    let level = median(y).abs();
    if d.is_empty() {
        return (level * 1e-9).max(1e-300);
    }
    let s = median(&d) * 1.4826 / std::f64::consts::SQRT_2;
    s.max(level * 1e-9).max(1e-300)
}

/// The median of `v`, NaN when it is empty.
pub fn median(v: &[f64]) -> f64 {
    crate::stats::median(v).unwrap_or(f64::NAN)
}

/// The default penalty for a series: [`PENALTY`] × σ × ln(n), at least σ.
pub fn penalty(y: &[f64]) -> f64 {
    PENALTY * noise(y) * (y.len() as f64).ln().max(1.0)
}

/// Where each level starts (the first is 0), for the series `y` and the penalty `gamma`.
pub fn levels(y: &[f64], gamma: f64) -> Vec<usize> {
    let n = y.len();
    if n == 0 {
        return Vec::new();
    }
    // best[j]: the least cost of y[..j]; from[j]: where its last level starts.
    let mut best = vec![f64::INFINITY; n + 1];
    let mut from = vec![0usize; n + 1];
    best[0] = 0.0;
    for i in 0..n {
        let base = best[i] + gamma;
        let mut cost = L1::default();
        for (j, &v) in y.iter().enumerate().skip(i) {
            cost.push(v);
            let c = base + cost.cost();
            if c < best[j + 1] {
                best[j + 1] = c;
                from[j + 1] = i;
            }
        }
    }
    let mut starts = Vec::new();
    let mut j = n;
    while j > 0 {
        starts.push(from[j]);
        j = from[j];
    }
    starts.reverse();
    starts
}

/// The levels of `y` under the default penalty.
pub fn detect(y: &[f64]) -> Vec<usize> {
    levels(y, penalty(y))
}

/// A value ordered by `f64::total_cmp`, for the heaps.
#[derive(Clone, Copy, PartialEq)]
struct Ord64(f64);

impl Eq for Ord64 {}

impl PartialOrd for Ord64 {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Ord64 {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0)
    }
}

/// Σ|v − median| of a growing set: the lower half in a max-heap, the upper half in a min-heap.
#[derive(Default)]
struct L1 {
    low: BinaryHeap<Ord64>,
    high: BinaryHeap<Reverse<Ord64>>,
    low_sum: f64,
    high_sum: f64,
}

impl L1 {
    fn push(&mut self, v: f64) {
        if self.low.peek().is_none_or(|m| v <= m.0) {
            self.low.push(Ord64(v));
            self.low_sum += v;
        } else {
            self.high.push(Reverse(Ord64(v)));
            self.high_sum += v;
        }
        if self.low.len() > self.high.len() + 1 {
            let Some(Ord64(m)) = self.low.pop() else { return };
            self.low_sum -= m;
            self.high.push(Reverse(Ord64(m)));
            self.high_sum += m;
        } else if self.high.len() > self.low.len() {
            let Some(Reverse(Ord64(m))) = self.high.pop() else { return };
            self.high_sum -= m;
            self.low.push(Ord64(m));
            self.low_sum += m;
        }
    }

    fn cost(&self) -> f64 {
        let Some(Ord64(m)) = self.low.peek().copied() else { return 0.0 };
        (m * self.low.len() as f64 - self.low_sum) + (self.high_sum - m * self.high.len() as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::Rng;

    fn noisy(n: usize, level: impl Fn(usize) -> f64, sd: f64, seed: u64) -> Vec<f64> {
        let mut rng = Rng::new(seed);
        (0..n)
            .map(|i| {
                // The sum of 12 uniforms less 6: near-Gaussian, σ = 1.
                let z: f64 = (0..12).map(|_| rng.below(1_000_000) as f64 / 1e6).sum::<f64>() - 6.0;
                level(i) * (1.0 + sd * z)
            })
            .collect()
    }

    #[test]
    fn the_l1_cost_is_the_distance_to_the_median() {
        let mut c = L1::default();
        for v in [5.0, 1.0, 3.0, 10.0] {
            c.push(v);
        }
        // Median of 1 3 5 10 taken as 3: 2 + 0 + 2 + 7.
        assert_eq!(c.cost(), 11.0);
    }

    #[test]
    fn a_clear_step_is_placed_where_it_is() {
        let y = noisy(30, |i| if i < 17 { 1.0 } else { 1.08 }, 0.01, 7);
        assert_eq!(detect(&y), vec![0, 17]);
    }

    #[test]
    fn noise_alone_makes_no_step() {
        let mut false_steps = 0;
        for seed in 0..200 {
            let y = noisy(30, |_| 1.0, 0.02, seed);
            false_steps += usize::from(detect(&y).len() > 1);
        }
        assert!(false_steps <= 10, "{false_steps} of 200 step-free series had a step");
    }

    #[test]
    fn short_and_constant_series_are_one_level() {
        assert_eq!(detect(&[]), Vec::<usize>::new());
        assert_eq!(detect(&[1.0]), vec![0]);
        assert_eq!(detect(&[2.0; 10]), vec![0]);
    }
}
