//! Descriptive statistics over repeated runs: mean, median, σ, quartiles, a 95% confidence
//! interval of the mean (Student's t) and outliers by Tukey's fences.

use serde::{Deserialize, Serialize};

/// Summary of one figure (wall time, %CPU, a metric…) over the runs of a point.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Summary {
    /// Number of values summarised.
    pub n: usize,
    /// Arithmetic mean.
    pub mean: f64,
    /// Median (mean of the two middle values for an even count).
    pub median: f64,
    /// Sample standard deviation (n − 1); 0 for a single value.
    pub stddev: f64,
    /// Smallest value.
    pub min: f64,
    /// Largest value.
    pub max: f64,
    /// 95% confidence interval of the mean `[low, high]`; absent with fewer than two values.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub ci95: Option<[f64; 2]>,
    /// Positions (in the input order) of values outside Tukey's fences (1.5 × IQR); flagged, never dropped.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub outliers: Vec<usize>,
}

impl Summary {
    /// Summarises finite values; `None` when there are none.
    pub fn of(values: &[f64]) -> Option<Summary> {
        let finite: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
        if finite.is_empty() {
            return None;
        }
        let n = finite.len();
        let mean = finite.iter().sum::<f64>() / n as f64;
        let stddev =
            if n > 1 { (finite.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt() } else { 0.0 };
        let mut sorted = finite.clone();
        sorted.sort_by(f64::total_cmp);
        let ci95 = (n > 1).then(|| {
            let half = t_975(n - 1) * stddev / (n as f64).sqrt();
            [mean - half, mean + half]
        });
        let outliers = tukey_outliers(values, &sorted);
        Some(Summary {
            n,
            mean,
            median: quantile(&sorted, 0.5),
            stddev,
            min: sorted[0],
            max: sorted[n - 1],
            ci95,
            outliers,
        })
    }

    /// Relative standard deviation (σ / mean), 0 when the mean is 0.
    pub fn rel_stddev(&self) -> f64 {
        if self.mean != 0.0 { self.stddev / self.mean.abs() } else { 0.0 }
    }
}

/// The q-quantile (0 ≤ q ≤ 1) of sorted values by linear interpolation.
pub fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let pos = q.clamp(0.0, 1.0) * (sorted.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64)
}

/// Positions of values outside [Q1 − 1.5·IQR, Q3 + 1.5·IQR]; none with fewer than four values.
fn tukey_outliers(values: &[f64], sorted: &[f64]) -> Vec<usize> {
    if sorted.len() < 4 {
        return Vec::new();
    }
    let (q1, q3) = (quantile(sorted, 0.25), quantile(sorted, 0.75));
    let iqr = q3 - q1;
    let (lo, hi) = (q1 - 1.5 * iqr, q3 + 1.5 * iqr);
    values.iter().enumerate().filter(|(_, v)| v.is_finite() && (**v < lo || **v > hi)).map(|(i, _)| i).collect()
}

/// The 97.5% quantile of Student's t distribution with `df` degrees of freedom.
pub fn t_975(df: usize) -> f64 {
    const TABLE: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
        2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
    ];
    match df {
        0 => f64::INFINITY,
        1..=30 => TABLE[df - 1],
        _ => {
            // Cornish–Fisher expansion around the normal quantile; exact to 3 decimals past 30.
            let z = 1.959_964f64;
            let d = df as f64;
            z + (z.powi(3) + z) / (4.0 * d) + (5.0 * z.powi(5) + 16.0 * z.powi(3) + 3.0 * z) / (96.0 * d * d)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summarises_known_values() {
        let s = Summary::of(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]).unwrap();
        assert_eq!(s.n, 8);
        assert_eq!(s.mean, 5.0);
        assert_eq!(s.median, 4.5);
        assert!((s.stddev - 2.138_089_935).abs() < 1e-6);
        let [lo, hi] = s.ci95.unwrap();
        assert!((hi - 5.0 - 2.365 * s.stddev / 8f64.sqrt()).abs() < 1e-9 && lo < 5.0);
        assert_eq!(s.outliers, vec![7], "9 lies above Q3 + 1.5 IQR = 7.75");
    }

    #[test]
    fn flags_outliers_without_dropping_them() {
        let s = Summary::of(&[1.0, 1.1, 0.9, 1.0, 1.05, 5.0]).unwrap();
        assert_eq!(s.outliers, vec![5]);
        assert_eq!(s.max, 5.0);
        assert_eq!(s.n, 6);
    }

    #[test]
    fn single_value_has_no_interval_and_nothing_is_made_up() {
        let s = Summary::of(&[3.0]).unwrap();
        assert_eq!((s.stddev, s.ci95), (0.0, None));
        assert!(Summary::of(&[]).is_none());
        assert!(Summary::of(&[f64::NAN]).is_none());
    }

    #[test]
    fn t_quantiles_join_the_table_smoothly() {
        assert!((t_975(31) - 2.040).abs() < 0.002);
        assert!((t_975(120) - 1.980).abs() < 0.001);
        assert!(t_975(1000) > 1.96 && t_975(1000) < 1.963);
    }
}

/// A small, seedable pseudo-random generator (SplitMix64) for run orders and resampling.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator whose sequence is fixed by `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A uniform index in `0..n` (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        ((self.next_u64() >> 11) as f64 / (1u64 << 53) as f64 * n as f64) as usize % n.max(1)
    }

    /// Shuffles a slice in place (Fisher–Yates).
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            items.swap(i, self.below(i + 1));
        }
    }
}
