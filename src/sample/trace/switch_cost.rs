//! The kernel's own time per context switch, measured from the tracer's records. A thread's
//! switch-out record is written before the kernel switches, the next thread's switch-in record
//! after it (once the new task's events are scheduled in), while schedstat counts the switch as
//! the incoming thread's time on the CPU. Where one traced thread leaves a CPU and another takes
//! it, the gap between the two records is that switch: its typical value is moved from the time
//! off the CPU that each switch-in ends to the time on it that it starts, so the tracer's times
//! agree with the kernel's accounting.

/// A gap longer than this between a switch-out and the next switch-in on one CPU is not one
/// switch (another task ran, or the CPU idled).
const MAX_GAP_NS: u64 = 20_000;
/// Gaps kept for the estimate (the latest ones).
const KEPT: usize = 4096;
/// Gaps needed before the estimate is used.
const ENOUGH: usize = 16;
/// The estimate is refreshed after this many new gaps.
const REFRESH: usize = 256;

/// The switch cost of one tracer, learnt as its records are read.
#[derive(Debug, Default)]
pub struct SwitchCost {
    /// Per ring (one per CPU), the thread that last left that CPU and when, while no thread of the
    /// job has taken it since.
    left: Vec<Option<(i32, u64)>>,
    gaps: Vec<u64>,
    /// Where the next gap goes once `KEPT` are kept.
    next: usize,
    /// Gaps seen since the estimate was last computed.
    fresh: usize,
    estimate_ns: u64,
}

impl SwitchCost {
    /// A cost for a tracer with `rings` ring buffers.
    pub fn new(rings: usize) -> SwitchCost {
        SwitchCost { left: vec![None; rings], ..SwitchCost::default() }
    }

    /// Sees a switch record of `tid` on ring `ring`: a switch-out (`out`) or a switch-in.
    pub fn see(&mut self, ring: usize, tid: i32, time_ns: u64, out: bool) {
        let Some(slot) = self.left.get_mut(ring) else { return };
        if out {
            *slot = Some((tid, time_ns));
            return;
        }
        let Some((left, at)) = slot.take() else { return };
        let Some(gap) = time_ns.checked_sub(at) else { return };
        if left == tid || gap > MAX_GAP_NS {
            return;
        }
        if self.gaps.len() < KEPT {
            self.gaps.push(gap);
        } else {
            self.gaps[self.next] = gap;
            self.next = (self.next + 1) % KEPT;
        }
        self.fresh += 1;
        if self.gaps.len() >= ENOUGH && (self.estimate_ns == 0 || self.fresh >= REFRESH) {
            let mut v = self.gaps.clone();
            let mid = v.len() / 2;
            self.estimate_ns = *v.select_nth_unstable(mid).1;
            self.fresh = 0;
        }
    }

    /// The typical switch, nanoseconds (0 until enough direct switches were seen).
    pub fn ns(&self) -> u64 {
        self.estimate_ns
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cost_is_the_typical_gap_between_one_thread_leaving_a_cpu_and_another_taking_it() {
        let mut c = SwitchCost::new(2);
        let mut t = 1_000_000;
        for k in 0..40 {
            // On CPU 0, thread 1 hands over to thread 2 in 2 µs (3 µs every fourth time).
            c.see(0, 1, t, true);
            c.see(0, 2, t + if k % 4 == 0 { 3_000 } else { 2_000 }, false);
            // On CPU 1, a thread comes back after idling: not a switch between two threads.
            c.see(1, 3, t, true);
            c.see(1, 3, t + 1_000, false);
            // Another task ran between: too long to be one switch.
            c.see(1, 4, t + 2_000, true);
            c.see(1, 5, t + 500_000, false);
            t += 1_000_000;
        }
        assert_eq!(c.gaps.len(), 40);
        assert_eq!(c.ns(), 2_000);
        assert_eq!(SwitchCost::new(1).ns(), 0, "nothing seen, nothing moved");
    }
}
