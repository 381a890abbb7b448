//! The machine's own pace before each run: how long a fixed loop of integer steps takes on one
//! CPU. A host that slows down (another guest, a frequency governor, heat) slows this loop as it
//! slows the workload, so that a slower machine can be told from a slower program: within a
//! sweep, as a cause of noisy runs; across sweeps, as a step in the history that is the machine's.

use std::hint::black_box;
use std::time::Instant;

/// Integer steps in one try (about 0.4 ms on a current core).
const STEPS: u64 = 250_000;
/// Tries; the fastest counts, so that a try the scheduler interrupted does not.
const TRIES: usize = 4;

/// Nanoseconds a million steps of the loop take on this CPU now: the fastest of [`TRIES`].
pub fn measure() -> f64 {
    let mut best = f64::INFINITY;
    for t in 0..TRIES {
        let start = Instant::now();
        black_box(steps(black_box(t as u64 + 1)));
        best = best.min(start.elapsed().as_secs_f64());
    }
    best * 1e9 * (1e6 / STEPS as f64)
}

/// [`STEPS`] steps of xorshift: one dependent chain, so that the loop's time is the core's.
fn steps(seed: u64) -> u64 {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    for _ in 0..STEPS {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    x
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_million_steps_take_a_plausible_time() {
        // Between a 10 GHz core doing three steps a cycle and a 100 MHz one doing one.
        let ns = super::measure();
        assert!((1e5..1e8).contains(&ns), "{ns} ns per million steps");
    }
}
