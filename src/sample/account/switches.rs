//! The tracer's exact switch intervals, kept per thread until the /proc sampler records the window
//! they fall in. A window's counters (exact totals of on-CPU, runnable and off-CPU time) are then
//! laid out on the stretches where the thread really was in each state, instead of spread evenly
//! over the window: the capacity accounting sees which threads ran together at any sweep rate,
//! also when a thousand threads slow the sweeps to one a second.

use super::thread_time::Interval;
use crate::sample::trace::{self, Drained};
use std::collections::HashMap;

/// A window is laid out on the tracer's stretches when they cover at least this share of it…
const COVERED: f64 = 0.8;
/// …and a state's counter is laid out on its stretches when the two agree within this factor
/// (else that state is spread evenly, as without the tracer).
const AGREE: f64 = 2.0;
/// Stretches older than this behind the latest drain belong to no window any more (a thread
/// that exited, or one the sampler does not follow).
const KEEP_S: f64 = 10.0;

/// What a thread was doing in a stretch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    On,
    Runnable,
    Off,
}

/// A stretch of one thread's time, seconds since sampling began.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Stretch {
    from: f64,
    to: f64,
    state: State,
}

impl Stretch {
    fn of(i: &trace::Interval, origin_ns: u64) -> Stretch {
        let s = |ns: u64| seconds(ns, origin_ns);
        let state = match (i.on_cpu, i.preempted) {
            (true, _) => State::On,
            (false, true) => State::Runnable,
            (false, false) => State::Off,
        };
        Stretch { from: s(i.start_ns), to: s(i.end_ns), state }
    }
}

/// The switch intervals of every traced thread not yet laid out.
#[derive(Debug, Default)]
pub struct Switches {
    /// CLOCK_MONOTONIC nanoseconds at the sampler's time 0.
    origin_ns: u64,
    /// Per thread, the stretches that ended, in time order.
    closed: HashMap<i32, Vec<Stretch>>,
    /// Per thread, the stretch in progress at the latest drain.
    open: HashMap<i32, Stretch>,
    /// Whether the latest drain's records were whole (see [`Drained::exact`]).
    exact: bool,
}

impl Switches {
    /// Switches for a sampler whose time 0 is `origin_ns` on CLOCK_MONOTONIC.
    pub fn new(origin_ns: u64) -> Switches {
        Switches { origin_ns, ..Switches::default() }
    }

    /// The sampler's time 0, nanoseconds on CLOCK_MONOTONIC.
    pub fn origin_ns(&self) -> u64 {
        self.origin_ns
    }

    /// Takes what a drain of the tracer found.
    pub fn add(&mut self, d: &Drained) {
        for i in &d.intervals {
            self.closed.entry(i.tid).or_default().push(Stretch::of(i, self.origin_ns));
        }
        self.open = d.open.iter().map(|i| (i.tid, Stretch::of(i, self.origin_ns))).collect();
        self.exact = d.exact;
        let through = seconds(d.through_ns, self.origin_ns);
        self.closed.retain(|_, v| {
            v.retain(|s| s.to >= through - KEEP_S);
            !v.is_empty()
        });
    }

    /// Lays out a window of thread `tid` from the /proc counters: its on-CPU, runnable and off-CPU
    /// seconds each go to the stretches where the tracer saw the thread in that state, in
    /// proportion to their length (the stretch in progress at the latest drain goes on to the
    /// window's end). The window comes back whole (spread evenly) where the tracer did not cover
    /// it. Stretches before the window's end are forgotten.
    pub fn lay_out(&mut self, tid: i32, iv: &Interval) -> Vec<Interval> {
        let mut parts: Vec<Stretch> =
            self.closed.get(&tid).map_or_else(Vec::new, |v| clip(v, iv.from, iv.to));
        if let Some(o) = self.open.get(&tid) {
            let end = parts.iter().map(|s| s.to).fold(o.from, f64::max);
            parts.extend(clip(
                &[Stretch { from: end, to: iv.to.max(o.to), state: o.state }],
                iv.from,
                iv.to,
            ));
        }
        if let Some(v) = self.closed.get_mut(&tid) {
            v.retain(|s| s.to > iv.to);
        }
        let iv = if self.exact { settled(iv, &parts) } else { *iv };
        lay_out(&iv, &parts)
    }

    /// The last window of thread `tid`, gone since its counters were last read at `from`: from
    /// there to its exit, as the tracer saw it (exact records covering at least [`COVERED`] of
    /// it). Without it, what a thread did after its last sweep is lost with it: at the quiet pace
    /// of up to 0.1 s between sweeps, a quarter of a 0.33 s worker's CPU time, and the run's tail
    /// read as unexplained idle capacity. Its stretches are forgotten either way.
    pub fn last_window(&mut self, tid: i32, from: f64) -> Option<Interval> {
        let mut stretches = self.closed.remove(&tid).unwrap_or_default();
        // Its exit not drained yet: what it did up to the latest drain.
        stretches.extend(self.open.remove(&tid));
        let parts = clip(&stretches, from, f64::INFINITY);
        let to = parts.iter().map(|s| s.to).fold(from, f64::max);
        if !self.exact || to <= from || covered(&parts) < COVERED * (to - from) {
            return None;
        }
        let (on, runq) = (length(&parts, State::On), length(&parts, State::Runnable));
        Some(Interval { from, to, on, runq, off: (to - from - on - runq).max(0.0), label: None })
    }
}

/// The window with the off-CPU time its counters imply beyond what the tracer saw the thread wait
/// (plus what it did not cover) given back to running and runnable time, as the stretches share
/// them. The kernel adds a thread's run-queue delay when it gets a CPU and its CPU time at ticks,
/// so a window that ends while it waits for a CPU looks partly off-CPU: a busy thread preempted
/// 900 times in a loaded run, which never waited, showed 11% of its life off-CPU.
fn settled(iv: &Interval, parts: &[Stretch]) -> Interval {
    let (on, runnable) = (length(parts, State::On), length(parts, State::Runnable));
    let could_wait = length(parts, State::Off) + (iv.to - iv.from - covered(parts)).max(0.0);
    let lag = iv.off - could_wait;
    if lag <= 0.0 || on + runnable <= 0.0 {
        return *iv;
    }
    let share = lag / (on + runnable);
    Interval { on: iv.on + share * on, runq: iv.runq + share * runnable, off: could_wait, ..*iv }
}

/// Nanoseconds on CLOCK_MONOTONIC as seconds since `origin_ns`.
fn seconds(ns: u64, origin_ns: u64) -> f64 {
    ns.saturating_sub(origin_ns) as f64 * 1e-9
}

/// Seconds the stretches cover.
fn covered(parts: &[Stretch]) -> f64 {
    parts.iter().map(|s| s.to - s.from).sum()
}

/// Seconds the stretches in `state` cover.
fn length(parts: &[Stretch], state: State) -> f64 {
    parts.iter().filter(|s| s.state == state).map(|s| s.to - s.from).sum()
}

/// The parts of `stretches` inside `[from, to]`.
fn clip(stretches: &[Stretch], from: f64, to: f64) -> Vec<Stretch> {
    stretches
        .iter()
        .filter(|s| s.to > from && s.from < to)
        .map(|s| Stretch { from: s.from.max(from), to: s.to.min(to), state: s.state })
        .collect()
}

fn lay_out(iv: &Interval, parts: &[Stretch]) -> Vec<Interval> {
    let span = iv.to - iv.from;
    if span <= 0.0 || covered(parts) < COVERED * span {
        return vec![*iv];
    }
    let mut out = Vec::new();
    let blank = Interval { label: iv.label, ..Interval::default() };
    for (state, seconds) in [(State::On, iv.on), (State::Runnable, iv.runq), (State::Off, iv.off)] {
        if seconds <= 0.0 {
            continue;
        }
        let with = |from: f64, to: f64, x: f64| {
            let mut i = Interval { from, to, ..blank };
            match state {
                State::On => i.on = x,
                State::Runnable => i.runq = x,
                State::Off => i.off = x,
            }
            i
        };
        let length = length(parts, state);
        if length > 0.0 && seconds <= AGREE * length && length <= AGREE * seconds {
            out.extend(
                parts
                    .iter()
                    .filter(|s| s.state == state)
                    .map(|s| with(s.from, s.to, seconds * (s.to - s.from) / length)),
            );
        } else {
            out.push(with(iv.from, iv.to, seconds));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn traced(tid: i32, from_ms: u64, to_ms: u64, on_cpu: bool) -> trace::Interval {
        let ns = |ms: u64| 1_000_000_000 + ms * 1_000_000;
        trace::Interval {
            pid: tid,
            tid,
            start_ns: ns(from_ms),
            end_ns: ns(to_ms),
            on_cpu,
            preempted: false,
        }
    }

    #[test]
    fn a_window_goes_where_the_thread_ran_and_waited() {
        let mut s = Switches::new(1_000_000_000);
        // On for 0-200 ms, off 200-400 ms, on again from 400 ms (still on at the drain, 450 ms).
        s.add(&Drained {
            intervals: vec![traced(7, 0, 200, true), traced(7, 200, 400, false)],
            open: vec![traced(7, 400, 450, true)],
            through_ns: 1_000_000_000 + 450_000_000,
            exact: true,
            ..Drained::default()
        });
        // The /proc window to 500 ms: 0.3 s on, 0.2 s off.
        let iv = Interval { from: 0.0, to: 0.5, on: 0.3, runq: 0.0, off: 0.2, label: Some(3) };
        let parts = s.lay_out(7, &iv);
        let on: Vec<(f64, f64, f64)> =
            parts.iter().filter(|p| p.on > 0.0).map(|p| (p.from, p.to, p.on)).collect();
        assert_eq!(on.len(), 2, "{parts:?}");
        assert!(
            (on[0].2 - 0.2).abs() < 1e-9
                && (on[1].0 - 0.4).abs() < 1e-9
                && (on[1].1 - 0.5).abs() < 1e-9
        );
        let off: Vec<&Interval> = parts.iter().filter(|p| p.off > 0.0).collect();
        assert!(
            off.len() == 1 && (off[0].from - 0.2).abs() < 1e-9 && (off[0].to - 0.4).abs() < 1e-9,
            "{off:?}"
        );
        assert!(off[0].label == Some(3) && (off[0].off - 0.2).abs() < 1e-9);
        // What was laid out is forgotten.
        assert!(s.closed.get(&7).is_none_or(|v| v.is_empty()));
    }

    #[test]
    fn an_untraced_or_disagreeing_window_is_spread_evenly() {
        let mut s = Switches::new(1_000_000_000);
        let iv = Interval { from: 0.0, to: 0.5, on: 0.3, runq: 0.0, off: 0.2, label: None };
        assert_eq!(s.lay_out(9, &iv), vec![iv]);
        // The tracer saw 10 ms off where the counters say 200 ms: the off time is spread evenly,
        // the on time still laid out.
        s.add(&Drained {
            intervals: vec![traced(9, 0, 490, true), traced(9, 490, 500, false)],
            through_ns: 1_000_000_000 + 500_000_000,
            ..Drained::default()
        });
        let parts = s.lay_out(9, &iv);
        let off: Vec<&Interval> = parts.iter().filter(|p| p.off > 0.0).collect();
        assert!(off.len() == 1 && off[0].from == 0.0 && off[0].to == 0.5, "{parts:?}");
        assert!(parts.iter().any(|p| p.on > 0.0 && p.to < 0.5));
    }

    #[test]
    fn off_cpu_time_a_whole_trace_never_saw_is_the_counters_lag() {
        let mut s = Switches::new(1_000_000_000);
        let mut preempted = traced(5, 300, 400, false);
        preempted.preempted = true;
        s.add(&Drained {
            intervals: vec![traced(5, 0, 300, true), preempted],
            open: vec![traced(5, 400, 450, true)],
            through_ns: 1_000_000_000 + 450_000_000,
            exact: true,
            ..Drained::default()
        });
        // The counters lag: 0.3 s on and 0.05 s runnable, so 0.15 s looks off-CPU.
        let iv = Interval { from: 0.0, to: 0.5, on: 0.3, runq: 0.05, off: 0.15, label: None };
        let parts = s.lay_out(5, &iv);
        let sum = |f: fn(&Interval) -> f64| parts.iter().map(f).sum::<f64>();
        assert!(sum(|p| p.off) < 1e-9, "{parts:?}");
        // Given back as the stretches share it: 0.4 s on, 0.1 s runnable.
        assert!(
            (sum(|p| p.on) - 0.42).abs() < 1e-9 && (sum(|p| p.runq) - 0.08).abs() < 1e-9,
            "{parts:?}"
        );
    }

    #[test]
    fn a_gone_threads_last_window_runs_to_its_exit_as_the_tracer_saw_it() {
        let mut s = Switches::new(1_000_000_000);
        // Read last at 100 ms; on to 250 ms, preempted to 260 ms, on to its exit at 330 ms.
        let mut preempted = traced(7, 250, 260, false);
        preempted.preempted = true;
        s.add(&Drained {
            intervals: vec![traced(7, 0, 250, true), preempted, traced(7, 260, 330, true)],
            through_ns: 1_000_000_000 + 340_000_000,
            exact: true,
            ..Drained::default()
        });
        let iv = s.last_window(7, 0.1).expect("a last window");
        assert!((iv.from - 0.1).abs() < 1e-9 && (iv.to - 0.33).abs() < 1e-9, "{iv:?}");
        assert!(
            (iv.on - 0.22).abs() < 1e-9 && (iv.runq - 0.01).abs() < 1e-9 && iv.off.abs() < 1e-9,
            "{iv:?}"
        );
        assert_eq!(s.last_window(7, 0.1), None, "its stretches are forgotten");
        // Records with gaps (a ring that lost some) give no window: the sweeps' figures stand.
        s.add(&Drained {
            intervals: vec![traced(8, 0, 330, true)],
            through_ns: 1_340_000_000,
            ..Drained::default()
        });
        assert_eq!(s.last_window(8, 0.1), None);
    }
}
