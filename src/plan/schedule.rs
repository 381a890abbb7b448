//! The order of runs: sequential (all runs of a point, then the next point), interleaved (run 1 of
//! every point, then run 2…, so machine drift hits all points alike) or random (interleaved
//! rounds, each shuffled). Warm-up runs come before a point's first measured run.

use super::{Order, Runs};
use crate::stats::Rng;
use std::collections::VecDeque;

/// How many held runs of a point are measured again; past that, a held run counts as done.
pub const HELD_AGAIN: u32 = 3;

/// One thing to execute.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Task {
    /// An unrecorded warm-up run of the point.
    Warmup(usize),
    /// A measured run of the point.
    Measure(usize),
}

impl Task {
    /// The point it runs.
    pub fn point(self) -> usize {
        let (Task::Warmup(p) | Task::Measure(p)) = self;
        p
    }
}

/// Progress of one point: runs done and, once known, how many it needs.
#[derive(Clone, Copy, Debug, Default)]
pub struct PointProgress {
    /// Measured runs finished.
    pub done: u32,
    /// Runs this point needs; unknown under automatic runs until its first run is timed.
    pub target: Option<u32>,
    warmed: bool,
    /// Measured runs held stopped and measured again.
    held: u32,
}

impl PointProgress {
    /// Progress of a point resumed with `done` runs and a known or unknown target.
    pub fn resumed(done: u32, target: Option<u32>) -> PointProgress {
        PointProgress { done, target, warmed: false, held: 0 }
    }

    /// Progress of a point that ran a moment ago and is given `target` runs in all: already warm.
    pub fn warm(done: u32, target: u32) -> PointProgress {
        PointProgress { done, target: Some(target), warmed: true, held: 0 }
    }

    fn needs_runs(&self) -> bool {
        self.target.is_none_or(|t| self.done < t)
    }
}

/// Hands out tasks in the requested order and sets run targets as runs are timed.
pub struct Scheduler {
    order: Order,
    warmup: u32,
    runs: Runs,
    points: Vec<PointProgress>,
    queue: VecDeque<Task>,
    rng: Rng,
    round: u32,
}

impl Scheduler {
    /// A scheduler over points with the given progress (all zero for a new sweep).
    pub fn new(
        order: Order,
        warmup: u32,
        runs: Runs,
        points: Vec<PointProgress>,
        seed: u64,
    ) -> Scheduler {
        let mut points = points;
        for p in &mut points {
            if runs.min == runs.max {
                p.target = Some(runs.min);
            }
        }
        Scheduler {
            order,
            warmup,
            runs,
            points,
            queue: VecDeque::new(),
            rng: Rng::new(seed),
            round: 0,
        }
    }

    /// Numbers the rounds from `first` (after those a resumed sweep already ran).
    pub fn from_round(mut self, first: u32) -> Scheduler {
        self.round = first;
        self
    }

    /// The round of the measured task handed out last, when runs go in interleaved rounds: the
    /// queue is refilled only when empty, so a task always belongs to the latest round.
    pub fn round(&self) -> Option<u32> {
        (self.order != Order::Sequential).then(|| self.round.saturating_sub(1))
    }

    /// Progress of every point.
    pub fn progress(&self) -> &[PointProgress] {
        &self.points
    }

    /// The next task, or `None` when every point has its runs.
    pub fn next_task(&mut self) -> Option<Task> {
        if self.queue.is_empty() {
            self.refill();
        }
        self.queue.pop_front()
    }

    /// The task after `current` (the one handed out last) if `current` succeeds, when that is
    /// already certain: `None` when it depends on how long `current` takes, or on other points.
    pub fn next_on_success(&self, current: Task) -> Option<Task> {
        if let Some(&t) = self.queue.front() {
            return Some(t);
        }
        let p = current.point();
        let progress = &self.points[p];
        let done = progress.done + u32::from(matches!(current, Task::Measure(_)));
        // Under automatic runs the first measured run sets the target; below the least count
        // the point needs more runs whatever it is.
        let needs = match progress.target {
            Some(t) => done < t,
            None if done < self.runs.min => true,
            None => return None,
        };
        // Sequential order takes the first point that needs runs, and those before this one have
        // theirs; a round of the other orders is this point alone once the others have theirs.
        let alone = self.order == Order::Sequential
            || self.points.iter().enumerate().all(|(q, pp)| q == p || !pp.needs_runs());
        (needs && alone).then_some(Task::Measure(p))
    }

    /// Records a finished measured run of `point` that took `wall_s`; sets its target if unknown.
    pub fn finished(&mut self, point: usize, wall_s: f64) {
        let runs = self.runs;
        let p = &mut self.points[point];
        p.done += 1;
        if p.target.is_none() {
            let wanted = (runs.min_time_s / wall_s.max(1e-6)).ceil();
            p.target = Some((wanted.min(runs.first_pass_most() as f64) as u32).max(runs.min));
        }
    }

    /// Records a measured run of `point` that was held stopped (SIGSTOP, a batch system's suspend):
    /// it does not count, and the point is measured again, up to [`HELD_AGAIN`] times; `true` when
    /// it will be (else the run is to be recorded as finished).
    pub fn held(&mut self, point: usize) -> bool {
        let p = &mut self.points[point];
        p.held += 1;
        p.held <= HELD_AGAIN
    }

    /// Records a measured run of `point` that failed (kept by --ignore-failure): a failing
    /// program's short runs say nothing of how many runs it needs, so an unknown target becomes
    /// the fewest runs allowed.
    pub fn failed(&mut self, point: usize) {
        let min = self.runs.min;
        let p = &mut self.points[point];
        p.done += 1;
        p.target.get_or_insert(min);
    }

    /// Whether `point` has all its measured runs.
    pub fn point_complete(&self, point: usize) -> bool {
        !self.points[point].needs_runs()
    }

    fn refill(&mut self) {
        let need: Vec<usize> =
            (0..self.points.len()).filter(|&p| self.points[p].needs_runs()).collect();
        match self.order {
            Order::Sequential => {
                if let Some(&p) = need.first() {
                    self.warm(&[p]);
                    self.queue.push_back(Task::Measure(p));
                }
            }
            Order::Interleaved | Order::Random => {
                let mut round = need;
                if self.order == Order::Random {
                    self.rng.shuffle(&mut round);
                }
                self.warm(&round);
                if !round.is_empty() {
                    self.round += 1;
                }
                self.queue.extend(round.into_iter().map(Task::Measure));
            }
        }
    }

    /// Queues warm-up runs for the points not yet warmed, `warmup` rounds of them.
    fn warm(&mut self, points: &[usize]) {
        let cold: Vec<usize> = points.iter().copied().filter(|&p| !self.points[p].warmed).collect();
        for _ in 0..self.warmup {
            self.queue.extend(cold.iter().map(|&p| Task::Warmup(p)));
        }
        for p in cold {
            self.points[p].warmed = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drain(s: &mut Scheduler, wall: f64) -> Vec<Task> {
        let mut out = Vec::new();
        while let Some(t) = s.next_task() {
            if let Task::Measure(p) = t {
                s.finished(p, wall);
            }
            out.push(t);
        }
        out
    }

    const FIXED2: Runs = Runs { min: 2, max: 2, min_time_s: 0.0, budget: None };

    #[test]
    fn a_point_whose_first_run_fails_gets_the_fewest_runs() {
        let mut s =
            Scheduler::new(Order::Interleaved, 0, Runs::AUTO, vec![PointProgress::default(); 2], 1);
        let mut runs = [0, 0];
        while let Some(t) = s.next_task() {
            if let Task::Measure(p) = t {
                runs[p] += 1;
                // Point 0 crashes in a millisecond; point 1 runs a millisecond too, and succeeds.
                if p == 0 { s.failed(p) } else { s.finished(p, 0.001) }
            }
        }
        assert_eq!(runs, [Runs::AUTO.min as usize, Runs::FIRST_PASS_MOST as usize]);
    }

    #[test]
    fn sequential_runs_each_point_in_turn_after_its_warmup() {
        let mut s =
            Scheduler::new(Order::Sequential, 1, FIXED2, vec![PointProgress::default(); 2], 1);
        use Task::*;
        assert_eq!(
            drain(&mut s, 1.0),
            [Warmup(0), Measure(0), Measure(0), Warmup(1), Measure(1), Measure(1)]
        );
    }

    #[test]
    fn interleaved_runs_rounds_over_all_points() {
        let mut s =
            Scheduler::new(Order::Interleaved, 1, FIXED2, vec![PointProgress::default(); 3], 1);
        use Task::*;
        let expect = [
            Warmup(0),
            Warmup(1),
            Warmup(2),
            Measure(0),
            Measure(1),
            Measure(2),
            Measure(0),
            Measure(1),
            Measure(2),
        ];
        assert_eq!(drain(&mut s, 1.0), expect);
    }

    #[test]
    fn random_order_still_gives_every_point_its_runs() {
        let mut s = Scheduler::new(Order::Random, 0, FIXED2, vec![PointProgress::default(); 5], 7);
        let tasks = drain(&mut s, 1.0);
        assert_eq!(tasks.len(), 10);
        for p in 0..5 {
            assert_eq!(tasks.iter().filter(|t| **t == Task::Measure(p)).count(), 2);
        }
        assert!(tasks[..5].iter().all(|t| tasks[..5].iter().filter(|u| *u == t).count() == 1));
    }

    #[test]
    fn automatic_runs_grow_for_short_runs_within_bounds() {
        let auto = Runs { min: 3, max: 30, min_time_s: 3.0, budget: None };
        let mut s = Scheduler::new(Order::Sequential, 0, auto, vec![PointProgress::default()], 1);
        assert_eq!(drain(&mut s, 0.5).len(), 6);
        let mut s = Scheduler::new(Order::Sequential, 0, auto, vec![PointProgress::default()], 1);
        assert_eq!(drain(&mut s, 10.0).len(), 3);
        let mut s = Scheduler::new(Order::Sequential, 0, auto, vec![PointProgress::default()], 1);
        assert_eq!(drain(&mut s, 0.001).len(), 30);
    }

    /// Drives `s` with runs of `wall` seconds; returns how many times the task after each one was
    /// known in advance, failing if one known in advance was not the next.
    fn foreseen(mut s: Scheduler, wall: f64) -> usize {
        let mut known = 0;
        let mut task = s.next_task();
        while let Some(t) = task {
            let ahead = s.next_on_success(t);
            if let Task::Measure(p) = t {
                s.finished(p, wall);
            }
            task = s.next_task();
            if ahead.is_some() {
                assert_eq!(ahead, task, "after {t:?}");
                known += 1;
            }
        }
        known
    }

    #[test]
    fn the_task_after_a_success_is_foreseen_only_when_certain() {
        let new = |order, warmup, runs, n| {
            Scheduler::new(order, warmup, runs, vec![PointProgress::default(); n], 3)
        };
        // One point, 1 warm-up and 2 runs: known after the warm-up and after the first run.
        assert_eq!(foreseen(new(Order::Sequential, 1, FIXED2, 1), 1.0), 2);
        assert_eq!(foreseen(new(Order::Interleaved, 1, FIXED2, 1), 1.0), 2);
        // Sequential over two points: within each point only (the point after is another command).
        assert_eq!(foreseen(new(Order::Sequential, 0, FIXED2, 2), 1.0), 2);
        // Interleaved over three points: the next task is always known, but it is another point.
        let mut s = new(Order::Interleaved, 0, FIXED2, 3);
        let t = s.next_task().unwrap();
        assert_eq!(s.next_on_success(t), Some(Task::Measure(1)));
        assert_eq!(foreseen(new(Order::Random, 1, FIXED2, 4), 1.0), 10);
        // Automatic runs: the first runs (below the least count) are known, not the rest.
        let auto = Runs { min: 3, max: 30, min_time_s: 3.0, budget: None };
        assert_eq!(foreseen(new(Order::Sequential, 0, auto, 1), 0.5), 5);
        assert_eq!(foreseen(new(Order::Sequential, 0, auto, 1), 10.0), 2);
    }

    #[test]
    fn interleaved_runs_carry_their_round_and_continue_from_the_first_given() {
        let mut s =
            Scheduler::new(Order::Interleaved, 1, FIXED2, vec![PointProgress::default(); 2], 1)
                .from_round(4);
        let mut rounds = Vec::new();
        while let Some(t) = s.next_task() {
            if let Task::Measure(p) = t {
                rounds.push((p, s.round()));
                s.finished(p, 1.0);
            }
        }
        assert_eq!(rounds, [(0, Some(4)), (1, Some(4)), (0, Some(5)), (1, Some(5))]);
        let s = Scheduler::new(Order::Sequential, 0, FIXED2, vec![PointProgress::default(); 2], 1);
        assert_eq!(s.round(), None);
        // Points continued warm get no warm-up.
        let mut s = Scheduler::new(
            Order::Interleaved,
            1,
            Runs::AUTO,
            vec![PointProgress::warm(3, 4); 2],
            1,
        );
        assert_eq!(drain(&mut s, 1.0), [Task::Measure(0), Task::Measure(1)]);
    }

    #[test]
    fn resumed_points_only_get_missing_runs() {
        let points = vec![PointProgress::resumed(2, Some(2)), PointProgress::resumed(1, Some(2))];
        let mut s = Scheduler::new(Order::Sequential, 1, FIXED2, points, 1);
        assert_eq!(drain(&mut s, 1.0), [Task::Warmup(1), Task::Measure(1)]);
    }
}
