//! A bounded single-producer single-consumer queue of `u64`s between two threads, for the
//! `pingpong` probe: one slot array, a head the consumer owns and a tail the producer owns, each
//! on its own cache line; the consumer takes everything published in one go.

use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicUsize, Ordering};

#[repr(align(128))]
struct Padded(AtomicUsize);

/// The queue. Exactly one thread may push and exactly one may pop.
pub struct Ring {
    slots: Box<[UnsafeCell<u64>]>,
    mask: usize,
    head: Padded,
    tail: Padded,
}

// SAFETY: a slot is written by the producer only before the tail covering it is published
// (Release) and read by the consumer only after it saw that tail (Acquire), and it is reused only
// after the consumer published a head past it.
unsafe impl Sync for Ring {}

impl Ring {
    /// A queue holding at least `capacity` values.
    pub fn new(capacity: usize) -> Ring {
        let cap = capacity.max(2).next_power_of_two();
        Ring {
            slots: (0..cap).map(|_| UnsafeCell::new(0)).collect(),
            mask: cap - 1,
            head: Padded(AtomicUsize::new(0)),
            tail: Padded(AtomicUsize::new(0)),
        }
    }

    /// Appends `v`; returns false when the queue is full. Producer only.
    pub fn push(&self, v: u64) -> bool {
        let tail = self.tail.0.load(Ordering::Relaxed);
        if tail - self.head.0.load(Ordering::Acquire) > self.mask {
            return false;
        }
        // SAFETY: the slot at `tail` is not visible to the consumer until the store below, and
        // the consumer is done with it (checked against the head above).
        unsafe { *self.slots[tail & self.mask].get() = v };
        self.tail.0.store(tail + 1, Ordering::Release);
        true
    }

    /// Passes every published value to `f` in order; returns how many. Consumer only.
    pub fn drain(&self, mut f: impl FnMut(u64)) -> usize {
        let head = self.head.0.load(Ordering::Relaxed);
        let tail = self.tail.0.load(Ordering::Acquire);
        for i in head..tail {
            // SAFETY: slots in head..tail were published by the producer and are not rewritten
            // before the head moves past them below.
            f(unsafe { *self.slots[i & self.mask].get() });
        }
        self.head.0.store(tail, Ordering::Release);
        tail - head
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn values_cross_threads_in_order_and_a_full_ring_refuses() {
        let r = super::Ring::new(3);
        assert!((0..4).all(|v| r.push(v)));
        assert!(!r.push(9));
        let mut got = Vec::new();
        assert_eq!(r.drain(|v| got.push(v)), 4);
        assert_eq!(got, [0, 1, 2, 3]);
        let n = 200_000u64;
        let mut seen = Vec::with_capacity(n as usize);
        std::thread::scope(|s| {
            s.spawn(|| {
                for v in 0..n {
                    while !r.push(v) {
                        std::hint::spin_loop();
                    }
                }
            });
            while seen.len() < n as usize {
                r.drain(|v| seen.push(v));
            }
        });
        assert!(seen.iter().enumerate().all(|(i, &v)| i as u64 == v));
    }
}
