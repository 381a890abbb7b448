//! Calibrated CPU work for the probes that model "so many nanoseconds of work per event or per
//! KiB": the rate is measured once, single-threaded, before the timed part starts.

use super::zoo::mix;
use std::time::Instant;

/// Rounds of [`mix`] per nanosecond on this machine.
#[derive(Clone, Copy, Debug)]
pub struct Spin {
    rounds_per_ns: f64,
}

impl Spin {
    /// Measures the rate over about 20 ms.
    pub fn calibrate() -> Spin {
        let mut rounds = 1u32 << 14;
        let mut x = 1;
        loop {
            let start = Instant::now();
            x = mix(x, rounds);
            let ns = start.elapsed().as_nanos() as f64;
            if ns > 20e6 || rounds >= 1 << 30 {
                return Spin { rounds_per_ns: (rounds as f64 / ns.max(1.0)).max(1e-3) };
            }
            rounds *= 2;
        }
    }

    /// Burns about `ns` nanoseconds of CPU, mixing `seed` (returned so the work is not dropped).
    #[inline]
    pub fn burn(&self, ns: f64, seed: u64) -> u64 {
        let rounds = (ns * self.rounds_per_ns).round();
        if rounds < 1.0 { seed } else { mix(seed, rounds.min(u32::MAX as f64) as u32) }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn burning_longer_does_more_rounds() {
        let s = super::Spin::calibrate();
        assert!(s.rounds_per_ns > 0.0);
        assert_eq!(s.burn(0.0, 5), 5);
        assert_ne!(s.burn(1000.0, 5), 5);
    }
}
