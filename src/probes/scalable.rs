//! `scalable`: N threads burn CPU on private data, sharing nothing. Speed-up is limited only by
//! the number of cores: the reference curve for "scales well" and, run with more threads than
//! cores, for oversubscription.

use std::hint::black_box;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Operations per timing check; an operation is one step of a 64-bit mixing function.
const CHUNK: u64 = 1 << 16;

/// How much work to do.
#[derive(Clone, Copy, Debug)]
pub enum Amount {
    /// A fixed number of operations split evenly over the threads (strong scaling).
    Ops(u64),
    /// Every thread works for this long (throughput scaling).
    Seconds(f64),
}

/// Default total work: about half a second for one thread on a current core.
pub const DEFAULT_OPS: u64 = 300_000_000;

/// What a run of the probe did.
#[derive(Clone, Copy, Debug)]
pub struct Outcome {
    /// Operations done by all threads.
    pub ops: u64,
    /// Wall time of the parallel part.
    pub seconds: f64,
}

/// Runs the probe with `threads` threads.
pub fn run(threads: usize, amount: Amount) -> Outcome {
    let threads = threads.max(1);
    let stop = AtomicBool::new(false);
    let start = Instant::now();
    let ops: u64 = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let stop = &stop;
                let quota = match amount {
                    Amount::Ops(total) => Some(
                        total / threads as u64 + u64::from((t as u64) < total % threads as u64),
                    ),
                    Amount::Seconds(_) => None,
                };
                s.spawn(move || work(t as u64, quota, stop))
            })
            .collect();
        if let Amount::Seconds(secs) = amount {
            std::thread::sleep(Duration::from_secs_f64(secs));
            stop.store(true, Ordering::Relaxed);
        }
        handles.into_iter().map(|h| h.join().unwrap_or(0)).sum()
    });
    Outcome { ops, seconds: start.elapsed().as_secs_f64() }
}

/// One thread's loop: mixes a private state until its quota is done or `stop` is set.
fn work(seed: u64, quota: Option<u64>, stop: &AtomicBool) -> u64 {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut done = 0u64;
    loop {
        let n = quota.map_or(CHUNK, |q| CHUNK.min(q - done));
        if n == 0 {
            break;
        }
        for _ in 0..n {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
        }
        x = black_box(x);
        done += n;
        if quota.is_none() && stop.load(Ordering::Relaxed) {
            break;
        }
    }
    done
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_work_is_done_exactly_whatever_the_thread_count() {
        for threads in [1, 3, 7] {
            assert_eq!(run(threads, Amount::Ops(1_000_003)).ops, 1_000_003);
        }
    }

    #[test]
    fn timed_runs_stop_on_time() {
        let o = run(2, Amount::Seconds(0.05));
        assert!(o.ops > 0 && o.seconds >= 0.05);
    }
}
