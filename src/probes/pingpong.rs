//! `pingpong`: the latency probe of message-passing runtimes. W worker threads each host A
//! actors; every actor sends M messages, one at a time, to the actors in turn (round-robin over
//! all workers), and waits for each reply before sending the next. Messages between workers go
//! through one lock-free queue per ordered pair of workers; within a worker, through a local
//! queue. An idle worker spins briefly, then yields its CPU.

use super::ring::Ring;
use std::collections::VecDeque;
use std::io::Write;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

/// The shape of the run.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// Worker threads.
    pub workers: usize,
    /// Actors per worker.
    pub actors: usize,
    /// Messages each actor sends.
    pub messages: u64,
}

/// What a worker's actors did.
#[derive(Clone, Copy, Debug, Default)]
pub struct WorkerOutcome {
    /// Messages its actors sent (each answered).
    pub sent: u64,
    /// Replies its actors received.
    pub replies: u64,
    /// Messages of other actors it answered.
    pub answered: u64,
    /// Seconds until its last actor got its last reply.
    pub seconds: f64,
    /// Mean and largest round trip of its actors, in nanoseconds (an actor's time / its messages).
    pub round_trip_ns: (f64, f64),
}

/// What a run did.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// Per worker.
    pub workers: Vec<WorkerOutcome>,
    /// Wall time of the whole exchange.
    pub seconds: f64,
}

impl Outcome {
    /// Messages sent by all actors.
    pub fn sent(&self) -> u64 {
        self.workers.iter().map(|w| w.sent).sum()
    }
}

/// Prints the result: totals, per worker and per actor, and metric lines for the harness.
pub fn print(o: &Options, r: &Outcome) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    let sent = r.sent();
    let rate = |n: u64, s: f64| if s > 0.0 { n as f64 / s } else { 0.0 };
    let total = rate(sent, r.seconds);
    writeln!(
        out,
        "pingpong: {} workers × {} actors × {} messages: {sent} messages (each answered) in {:.3} s = {:.2} M msg/s",
        o.workers,
        o.actors,
        o.messages,
        r.seconds,
        total / 1e6
    )?;
    let per_worker: Vec<f64> = r.workers.iter().map(|w| rate(w.sent, w.seconds)).collect();
    let mean_worker = per_worker.iter().sum::<f64>() / per_worker.len().max(1) as f64;
    let (lo, hi) = per_worker.iter().fold((f64::MAX, 0.0f64), |(a, b), &v| (a.min(v), b.max(v)));
    writeln!(
        out,
        "per worker: {:.2} M msg/s ({:.0} ns per message), slowest {:.2}, fastest {:.2} M msg/s",
        mean_worker / 1e6,
        if mean_worker > 0.0 { 1e9 / mean_worker } else { 0.0 },
        lo.min(hi) / 1e6,
        hi / 1e6
    )?;
    let rt_mean =
        r.workers.iter().map(|w| w.round_trip_ns.0).sum::<f64>() / r.workers.len().max(1) as f64;
    let rt_max = r.workers.iter().map(|w| w.round_trip_ns.1).fold(0.0, f64::max);
    let per_actor = if rt_mean > 0.0 { 1e9 / rt_mean } else { 0.0 };
    writeln!(
        out,
        "per actor: {:.1} k msg/s, round trip {rt_mean:.0} ns mean, {rt_max:.0} ns worst actor",
        per_actor / 1e3
    )?;
    super::print_metrics(
        &mut out,
        &[
            ("throughput", total, "msg/s"),
            ("per_worker", mean_worker, "msg/s"),
            ("per_actor", per_actor, "msg/s"),
            ("round_trip", rt_mean, "ns"),
        ],
    )?;
    out.flush()
}

const PONG: u64 = 1 << 63;

/// Runs the exchange.
pub fn run(o: &Options) -> Outcome {
    let (w, a) = (o.workers.max(1), o.actors.max(1));
    let total = w * a;
    let rings: Vec<Ring> = (0..w * w).map(|_| Ring::new(total + 1)).collect();
    let finished = AtomicUsize::new(0);
    let start = Instant::now();
    let workers = std::thread::scope(|s| {
        let handles: Vec<_> = (0..w)
            .map(|me| {
                let (rings, finished) = (&rings, &finished);
                s.spawn(move || Worker::new(me, w, a, o.messages, rings).run(finished, start))
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap_or_default()).collect()
    });
    Outcome { workers, seconds: start.elapsed().as_secs_f64() }
}

struct Worker<'a> {
    me: usize,
    workers: usize,
    actors: usize,
    messages: u64,
    rings: &'a [Ring],
    local: VecDeque<u64>,
    sent: Vec<u64>,
    replies: Vec<u64>,
    done_at: Vec<f64>,
    answered: u64,
    left: usize,
}

impl<'a> Worker<'a> {
    fn new(
        me: usize,
        workers: usize,
        actors: usize,
        messages: u64,
        rings: &'a [Ring],
    ) -> Worker<'a> {
        Worker {
            me,
            workers,
            actors,
            messages,
            rings,
            local: VecDeque::with_capacity(actors * 2),
            sent: vec![0; actors],
            replies: vec![0; actors],
            done_at: vec![0.0; actors],
            answered: 0,
            left: if messages == 0 { 0 } else { actors },
        }
    }

    fn run(mut self, finished: &AtomicUsize, start: Instant) -> WorkerOutcome {
        let first = if self.messages == 0 { 0 } else { self.actors };
        for i in 0..first {
            self.ping(self.me * self.actors + i);
        }
        let mut reported = false;
        let mut idle = 0u32;
        let mut seconds = 0.0;
        loop {
            let mut handled = 0;
            while let Some(m) = self.local.pop_front() {
                self.handle(m, start);
                handled += 1;
            }
            for src in (0..self.workers).filter(|&src| src != self.me) {
                let ring = &self.rings[src * self.workers + self.me];
                let mut batch = std::mem::take(&mut self.local);
                handled += ring.drain(|m| batch.push_back(m));
                self.local = batch;
            }
            if self.left == 0 && !reported {
                reported = true;
                seconds = start.elapsed().as_secs_f64();
                finished.fetch_add(1, Ordering::AcqRel);
            }
            if handled > 0 {
                idle = 0;
            } else if reported && finished.load(Ordering::Acquire) == self.workers {
                break;
            } else {
                idle += 1;
                if idle < 200 {
                    std::hint::spin_loop();
                } else {
                    std::thread::yield_now();
                }
            }
        }
        let rt: Vec<f64> =
            self.done_at.iter().map(|t| t * 1e9 / self.messages.max(1) as f64).collect();
        WorkerOutcome {
            sent: self.sent.iter().sum(),
            replies: self.replies.iter().sum(),
            answered: self.answered,
            seconds,
            round_trip_ns: (
                rt.iter().sum::<f64>() / rt.len() as f64,
                rt.iter().fold(0.0, |a: f64, &b| a.max(b)),
            ),
        }
    }

    fn handle(&mut self, m: u64, start: Instant) {
        let from = ((m >> 32) & 0x7FFF_FFFF) as usize;
        let to = (m & 0xFFFF_FFFF) as usize;
        if m & PONG == 0 {
            self.answered += 1;
            self.send(to, from, true);
            return;
        }
        let i = to - self.me * self.actors;
        self.replies[i] += 1;
        if self.sent[i] < self.messages {
            self.ping(to);
        } else {
            self.done_at[i] = start.elapsed().as_secs_f64();
            self.left -= 1;
        }
    }

    /// Actor `g` sends its next message, to the next actor in turn (itself only when alone).
    fn ping(&mut self, g: usize) {
        let total = self.workers * self.actors;
        let i = g - self.me * self.actors;
        let k = self.sent[i] as usize;
        let mut to = (g + 1 + k % total.max(2).saturating_sub(1)) % total;
        if to == g && total > 1 {
            to = (to + 1) % total;
        }
        self.sent[i] += 1;
        self.send(g, to, false);
    }

    fn send(&mut self, from: usize, to: usize, pong: bool) {
        let m = (from as u64) << 32 | to as u64 | if pong { PONG } else { 0 };
        let dst = to / self.actors;
        if dst == self.me {
            self.local.push_back(m);
        } else {
            let ring = &self.rings[self.me * self.workers + dst];
            while !ring.push(m) {
                std::hint::spin_loop();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_message_is_answered_once() {
        for (workers, actors, messages) in
            [(1, 1, 50), (1, 3, 100), (2, 2, 1000), (3, 5, 300), (4, 1, 10), (2, 3, 0)]
        {
            let o = super::run(&super::Options { workers, actors, messages });
            let sent = o.sent();
            assert_eq!(sent, (workers * actors) as u64 * messages);
            assert_eq!(o.workers.iter().map(|w| w.replies).sum::<u64>(), sent);
            assert_eq!(o.workers.iter().map(|w| w.answered).sum::<u64>(), sent);
            if workers * actors > 1 && messages > 0 {
                assert!(o.workers.iter().all(|w| w.round_trip_ns.0 > 0.0));
            }
        }
    }
}
