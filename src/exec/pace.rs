//! The machine's own pace before each run: how long a fixed loop of integer steps takes on one
//! CPU, and a step of a walk through memory. A host that slows down (another guest, a frequency
//! governor, heat) slows the loop as it slows the workload, so that a slower machine can be told
//! from a slower program: within a sweep, as a cause of noisy runs; across sweeps, as a step in
//! the history that is the machine's. Other guests that share the host's last-level cache and
//! memory slow a program that reads memory and leave the loop as it was: zstd -5 at one thread
//! took 2.1–2.4 s and 3.0–3.6 s in a slow spell of this VM's host (the loop within 4% in such a
//! sweep), while the walk's loads, timed before and after each run, took 173–210 ns around the
//! fast runs and 214–234 ns around the slow ones.

use std::hint::black_box;
use std::sync::OnceLock;
use std::time::Instant;

use crate::stats::Rng;

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

/// Loads in one try of the walk (about 0.8 ms at 200 ns a load).
const WALK_STEPS: usize = 4_000;
/// Tries of the walk; the fastest counts.
const WALK_TRIES: usize = 3;
/// Bytes of a cache line: the walk visits one word a line.
const LINE: usize = 64;
/// The walk's buffer is this many times the last-level cache…
const CACHES: usize = 2;
/// …within these bounds.
const WALK_BYTES: (usize, usize) = (16 << 20, 128 << 20);

/// Nanoseconds one load of a walk through memory takes now: a buffer twice the last-level cache,
/// each load's address read by the load before it, so that each misses the caches; the fastest of
/// [`WALK_TRIES`]. The buffer is laid out once, at the first call (about 20 ms), and kept.
pub fn memory() -> f64 {
    let walk = WALK.get_or_init(|| Walk::new(walk_bytes()));
    let mut best = f64::INFINITY;
    let mut at = 0;
    for _ in 0..WALK_TRIES {
        let start = Instant::now();
        at = walk.steps(black_box(at));
        best = best.min(start.elapsed().as_secs_f64());
    }
    best * 1e9 / WALK_STEPS as f64
}

static WALK: OnceLock<Walk> = OnceLock::new();

/// One word per cache line, each holding the line that follows it on a single cycle through all
/// of them, in a random order.
struct Walk {
    words: Vec<usize>,
}

impl Walk {
    fn new(bytes: usize) -> Walk {
        let stride = LINE / std::mem::size_of::<usize>();
        let lines = bytes / LINE;
        // Sattolo's shuffle: a random permutation that is one cycle, so no walk is cut short.
        let mut order: Vec<u32> = (0..lines as u32).collect();
        let mut rng = Rng::new(1);
        for i in (1..lines).rev() {
            order.swap(i, rng.below(i));
        }
        let mut words = vec![0usize; lines * stride];
        for (i, next) in order.iter().enumerate() {
            words[i * stride] = *next as usize * stride;
        }
        Walk { words }
    }

    /// [`WALK_STEPS`] loads from word `at`; where the walk ended.
    fn steps(&self, mut at: usize) -> usize {
        for _ in 0..WALK_STEPS {
            at = self.words[at];
        }
        at
    }
}

/// The walk's buffer: [`CACHES`] times the largest cache the kernel lists for CPU 0, within
/// [`WALK_BYTES`] (its lower bound when none is listed).
fn walk_bytes() -> usize {
    let dir = std::path::Path::new("/sys/devices/system/cpu/cpu0/cache");
    let largest = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(|e| std::fs::read_to_string(e.ok()?.path().join("size")).ok())
        .filter_map(|s| cache_bytes(s.trim()))
        .max()
        .unwrap_or(0);
    (CACHES * largest).clamp(WALK_BYTES.0, WALK_BYTES.1)
}

/// A cache size as sysfs writes it: `32768K`, `2M`, `512`.
fn cache_bytes(s: &str) -> Option<usize> {
    let (digits, unit) = match s.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        Some((i, _)) => s.split_at(i),
        None => (s, ""),
    };
    let scale = match unit {
        "" => 1,
        "K" => 1 << 10,
        "M" => 1 << 20,
        "G" => 1 << 30,
        _ => return None,
    };
    digits.parse::<usize>().ok().map(|n| n * scale)
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_million_steps_take_a_plausible_time() {
        // Between a 10 GHz core doing three steps a cycle and a 100 MHz one doing one.
        let ns = super::measure();
        assert!((1e5..1e8).contains(&ns), "{ns} ns per million steps");
    }

    #[test]
    fn the_walk_goes_through_every_line_and_a_load_takes_a_plausible_time() {
        let w = super::Walk::new(1 << 16);
        let (mut at, mut seen) = (0, std::collections::HashSet::new());
        while seen.insert(at) {
            at = w.words[at];
        }
        assert_eq!(seen.len(), (1 << 16) / super::LINE, "one cycle through all the lines");
        // Between a load served by the first-level cache and one that waits 10 µs.
        let ns = super::memory();
        assert!((0.1..1e4).contains(&ns), "{ns} ns a load");
        assert_eq!(super::cache_bytes("32768K"), Some(32 << 20));
        assert_eq!(super::cache_bytes("2M"), Some(2 << 20));
        assert_eq!(super::cache_bytes("many"), None);
    }
}
