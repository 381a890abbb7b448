//! Waits that end as another thread ends: a thread waiting for another to finish, whatever the
//! primitive. A `pthread_join` is told by its futex (the joined thread's TID); Python's
//! `Thread.join` waits on a lock the finishing thread releases, which reads as a lock (and, with
//! the GIL making threads take turns, as serialisation) until its timing shows what it is.

use super::thread_time::History;

/// Share of its stretch a join's waiter spends in it: one unbroken wait, not a worker that waits
/// between pieces of work.
const UNBROKEN: f64 = 0.9;

/// Share of the waiter's life the join takes at least: a thread that started the others and
/// waited for them, not a worker whose last wait for a lock ended as the holder left.
const MOSTLY: f64 = 0.5;

/// The labels, among those `candidate` accepts, that exactly one thread waited on without a
/// break, for most of its life, until another work thread ended (in the bin the wait ended or a
/// neighbour: the thread may release it on its way out).
pub fn ended_by_an_end(h: &History, work: &[bool], candidate: impl Fn(u32) -> bool) -> Vec<u32> {
    let w = h.width();
    let alive = |i: usize| (0..h.tracks[i].on.len()).filter(move |&b| h.alive_in(i, b) > 0.0);
    let ends: Vec<Option<usize>> = (0..h.tracks.len()).map(|i| alive(i).next_back()).collect();
    let lives: Vec<f64> = (0..h.tracks.len())
        .map(|i| match (alive(i).next(), ends[i]) {
            (Some(a), Some(b)) => (b - a + 1) as f64 * w,
            _ => 0.0,
        })
        .collect();
    let by_label = h.waiters(|_, l| candidate(l));
    let mut out: Vec<u32> = by_label
        .into_iter()
        .filter_map(|(l, stretches)| {
            let [x] = &stretches[..] else { return None };
            let t = &h.tracks[x.track];
            // The edges' bins are partly the wait's: judge the bins between them.
            let inner = (x.first + 1..x.last).map(|b| t.wanting_in(b)).sum::<f64>();
            let span = (x.last - x.first + 1) as f64 * w;
            let unbroken = x.waited >= UNBROKEN * (span - 2.0 * w).max(0.0)
                && inner <= (1.0 - UNBROKEN) * span;
            let ended = (0..h.tracks.len()).any(|j| {
                j != x.track && work[j] && ends[j].is_some_and(|e| e.abs_diff(x.last) <= 1)
            });
            (unbroken && ended && x.waited >= MOSTLY * lives[x.track]).then_some(l)
        })
        .collect();
    out.sort_unstable();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sample::account::thread_time::from_rows;

    #[test]
    fn a_wait_until_another_thread_ends_is_a_join_and_a_lock_passed_around_is_not() {
        let h = from_rows(&[
            // The main thread waits on label 1 until the worker ends, then runs.
            "r111111111111111111rr",
            // The worker waits on label 2 (a lock no one else waits on) in the middle.
            "rrrrrr2222rrrrrrrrr--",
        ]);
        assert_eq!(ended_by_an_end(&h, &[true, true], |_| true), [1]);
        assert_eq!(ended_by_an_end(&h, &[true, true], |l| l != 1), Vec::<u32>::new());
    }

    #[test]
    fn a_worker_that_waits_between_pieces_until_its_feeder_ends_is_not_a_join() {
        let h = from_rows(&["r11r11r11r11r11r11r11rr", "rrrrrrrrrrrrrrrrrrrr---"]);
        assert_eq!(ended_by_an_end(&h, &[true, true], |_| true), Vec::<u32>::new());
    }

    #[test]
    fn a_workers_last_wait_for_a_lock_its_holder_let_go_of_by_ending_is_not_a_join() {
        let h = from_rows(&["rrrrrrrrrrrrrrrr22rr", "rrrrrrrrrrrrrrrrrr--"]);
        assert_eq!(ended_by_an_end(&h, &[true, true], |_| true), Vec::<u32>::new());
    }

    #[test]
    fn a_wait_two_threads_share_is_not_a_join() {
        let h = from_rows(&["r1111111111rr", "r1111111111rr", "rrrrrrrrrr---"]);
        assert_eq!(ended_by_an_end(&h, &[true, true, true], |_| true), Vec::<u32>::new());
    }
}
