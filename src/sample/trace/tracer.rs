//! The event tracer, where the kernel allows it (`perf_event_paranoid` ≤ 2, no seccomp filter):
//! one software task-clock event per CPU on the job, inherited by every thread and child it
//! creates, writes into one ring buffer per CPU the exact instant each thread leaves and regains
//! a CPU (SWITCH records, with the preempted flag), an on-CPU sample with the user registers and
//! a copy of the user stack every `period_ns` of CPU time, and the mappings, execs, forks and
//! exits that name the samples' code. Threads that existed before the events did are found in
//! /proc and given events of their own. [`Tracer::drain`] turns the records into intervals and
//! unwound samples; nothing is silent: lost records, shrunken buffers and uncovered threads are
//! limits lines.

use super::catch::{self, Catch, Catcher};
use super::clock::monotonic_ns;
use super::collector::Collector;
use super::perf::{self, Attr, Event, Ring};
use super::records::{self, Record};
use super::switch_cost::SwitchCost;
use crate::sample::proc::{Tree, procfs};
use crate::sample::unwind::{StackId, Stacks};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// A finished tracer's ring buffers. Unmapping and closing them took 0.04 ms on the project's
/// VM, so the sampler lets go of them after it has handed over its report.
pub struct Buffers {
    _rings: Collector,
}

/// How the tracer runs.
#[derive(Clone, Copy, Debug)]
pub struct TracerConfig {
    /// CPU time between on-CPU samples of a thread, in nanoseconds.
    pub period_ns: u64,
    /// Bytes of user stack copied with each sample (a multiple of 8).
    pub stack_bytes: u32,
    /// Data pages of each CPU's ring buffer (a power of two); fewer when the locked-memory limits
    /// refuse them.
    pub data_pages: usize,
}

impl Default for TracerConfig {
    fn default() -> TracerConfig {
        TracerConfig { period_ns: 10_000_000, stack_bytes: 8192, data_pages: 128 }
    }
}

/// A stretch of one thread's time, exact to the kernel's clock.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Interval {
    /// Process.
    pub pid: i32,
    /// Thread.
    pub tid: i32,
    /// Start, nanoseconds on CLOCK_MONOTONIC (the clock of `std::time::Instant`).
    pub start_ns: u64,
    /// End, same clock.
    pub end_ns: u64,
    /// On a CPU (true) or off it.
    pub on_cpu: bool,
    /// Off a CPU while still runnable (preempted), not waiting for something.
    pub preempted: bool,
}

/// An on-CPU sample.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StackSample {
    /// Process.
    pub pid: i32,
    /// Thread.
    pub tid: i32,
    /// When, nanoseconds on CLOCK_MONOTONIC.
    pub time_ns: u64,
    /// The user stack, `None` when it could not be unwound (no user registers).
    pub stack: Option<StackId>,
}

/// What one drain found, in time order per thread.
#[derive(Clone, Debug, Default)]
pub struct Drained {
    /// Intervals that ended since the last drain.
    pub intervals: Vec<Interval>,
    /// On-CPU samples since the last drain.
    pub samples: Vec<StackSample>,
    /// The records read stop here (nanoseconds on CLOCK_MONOTONIC; 0 when nothing was traced).
    pub through_ns: u64,
    /// Each thread's interval still in progress at `through_ns`, cut there (it goes on).
    pub open: Vec<Interval>,
    /// Threads caught in waits too short for a sweep, since the last drain.
    pub caught: Vec<Catch>,
    /// Whether the records so far are whole: every CPU covered and none lost, so a thread the
    /// intervals show running or runnable did not wait meanwhile.
    pub exact: bool,
    /// Threads (pid, tid) the fork records announced since the last drain.
    pub born: Vec<(i32, i32)>,
    /// Threads (pid, tid) the exit records announced since the last drain.
    pub ended: Vec<(i32, i32)>,
    /// Whether the tracer still records every fork and exit of the job (it runs, nothing was
    /// lost): the threads it announces are then all the threads there are.
    pub follows: bool,
}

/// One traced thread's exact totals.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ThreadTotals {
    /// Process.
    pub pid: i32,
    /// Thread.
    pub tid: i32,
    /// Nanoseconds on a CPU.
    pub on_ns: u64,
    /// Nanoseconds off a CPU after leaving it to wait (wake-up latency included).
    pub off_waiting_ns: u64,
    /// Nanoseconds off a CPU after being preempted (runnable all along).
    pub off_preempted_ns: u64,
    /// Times it left a CPU.
    pub switches: u64,
    /// First and last instants it was traced.
    pub first_ns: u64,
    /// See `first_ns`.
    pub last_ns: u64,
}

/// The tracer's account of itself when it stops.
#[derive(Clone, Debug, Default)]
pub struct TraceSummary {
    /// CPU seconds the tracer used (opening, draining, unwinding).
    pub cpu_s: f64,
    /// Records the kernel dropped because a buffer was full.
    pub lost: u64,
    /// Records read.
    pub records: u64,
    /// On-CPU samples read, and how many of them unwound to a stack.
    pub samples: u64,
    /// See `samples`.
    pub unwound: u64,
    /// CPUs with a ring buffer, of the CPUs the job may use.
    pub cpus_covered: usize,
    /// See `cpus_covered`.
    pub cpus_wanted: usize,
    /// Ring buffer per CPU, bytes.
    pub buffer_bytes: usize,
    /// Whether every interval is exact: every CPU covered and no record lost.
    pub exact: bool,
    /// The kernel's typical switch between two traced threads, moved from their time off a CPU
    /// to their time on it (nanoseconds; 0 when too few were seen).
    pub switch_ns: u64,
    /// Every traced thread's totals.
    pub threads: Vec<ThreadTotals>,
    /// What could not be traced, one line each.
    pub limits: Vec<String>,
    /// Seconds after its start at which the tracer stopped itself, the job switching too often
    /// to be watched switch by switch; nothing was recorded after that.
    pub stopped_s: Option<f64>,
    /// The same instant, nanoseconds on CLOCK_MONOTONIC.
    pub stopped_ns: Option<u64>,
}

impl TraceSummary {
    /// Every CPU covered, no record lost and the whole run recorded: the intervals are exact.
    fn whole(&self) -> bool {
        self.cpus_covered == self.cpus_wanted && self.lost == 0 && self.stopped_s.is_none()
    }
}

/// Where a thread is, as far as its records tell.
#[derive(Clone, Copy, Debug)]
enum State {
    /// Not seen switching yet: since this instant.
    Unknown(u64),
    On(u64),
    Off {
        since: u64,
        preempted: bool,
    },
    Gone,
}

struct Thread {
    pid: i32,
    state: State,
    totals: ThreadTotals,
}

/// A running tracer.
pub struct Tracer {
    rings: Collector,
    /// The windows that catch short waits, and what they caught.
    catch: Arc<catch::Shared>,
    /// Events of threads that existed before the inherited ones, by thread.
    extra: HashMap<i32, Vec<Event>>,
    /// Records read and not yet turned into intervals, with the ring (CPU) each came from.
    pending: Vec<(Record, usize)>,
    threads: HashMap<i32, Thread>,
    cost: SwitchCost,
    start_ns: u64,
    summary: TraceSummary,
}

/// Records older than this (behind the drain's start) are surely in their buffers: newer ones
/// wait for the next drain, so that records of one thread from two CPUs are put in order.
pub const SETTLE_NS: u64 = 2_000_000;
/// Rounds of looking for threads created while events were being opened.
const COVER_ROUNDS: usize = 5;
/// The tracer (and the on-CPU sampling that stands in for it) judges its cost once it has
/// watched this long (seconds)…
pub(crate) const JUDGE_AFTER_S: f64 = 0.1;
/// …and seen this many switches: a start-up burst of thread creation is no rate.
const JUDGE_SWITCHES: u64 = 5_000;
/// It stops itself when the job's threads leave a CPU more often than this per second of CPU
/// they use. Every switch of a traced thread costs it the kernel's switching of its events and
/// the writing of two records, and the collector the reading of them: `sysbench threads`, whose
/// threads yield 250,000–570,000 times per CPU second, did 3.3× fewer events traced (1.25× fewer
/// with the tracer stopping itself), while threads handing a heap mutex to each other
/// (tests/workloads/histogram.c, 13,000–15,000) keep their tracer and their stacks.
pub(crate) const MAX_SWITCHES_PER_CPU_S: f64 = 50_000.0;

/// Whether `switches` in `on_cpu_s` seconds of the job's CPU time are too many to be watched one
/// by one (see [`MAX_SWITCHES_PER_CPU_S`]); a rule the on-CPU sampling follows too.
pub(crate) fn too_many_switches(switches: u64, on_cpu_s: f64) -> bool {
    switches >= JUDGE_SWITCHES && switches as f64 > MAX_SWITCHES_PER_CPU_S * on_cpu_s
}

impl Tracer {
    /// Starts tracing the process `pid` (just spawned or long running) and its descendants.
    pub fn start(pid: i32, config: &TracerConfig) -> Result<Tracer, TracerRefused> {
        let cpu0 = procfs::thread_cpu_s();
        let mut tree = Tree::new(pid);
        let before = tree.walk();
        let cpus = perf::allowed_cpus(pid);
        let mut rings = Vec::new();
        let mut limits = Vec::new();
        let mut pages = config.data_pages.max(1).next_power_of_two();
        for &cpu in &cpus {
            // A buffer the locked-memory limits refuse is asked again at half the size, its event
            // opened anew for the watermark (a quarter of the buffer) to match.
            let ring = loop {
                let event = match Event::open(&attr(config, pages), pid, cpu) {
                    Ok(e) => e,
                    Err(e) if rings.is_empty() => return Err(refusal("perf_event_open", e)),
                    Err(e) => {
                        limits
                            .push(format!("tracer: CPU {cpu} not covered (perf_event_open: {e})"));
                        break None;
                    }
                };
                match Ring::map(event, pages) {
                    Ok(r) => break Some(r),
                    Err((_, e))
                        if pages > 1
                            && matches!(
                                e.raw_os_error(),
                                Some(libc::EPERM) | Some(libc::ENOMEM)
                            ) =>
                    {
                        pages /= 2;
                    }
                    Err((_, e)) if rings.is_empty() => {
                        return Err(refusal("mmap of the perf buffer", e));
                    }
                    Err((_, e)) => {
                        limits.push(format!(
                            "tracer: CPU {cpu} not covered (no buffer: {e}; see kernel.perf_event_mlock_kb)"
                        ));
                        break None;
                    }
                }
            };
            if let Some(r) = ring {
                rings.push((cpu, r));
            }
        }
        if pages < config.data_pages {
            limits.push(format!(
                "tracer: buffers shrunk to {} KiB per CPU by the locked-memory limits (kernel.perf_event_mlock_kb, ulimit -l): records may be lost",
                pages * 4
            ));
        }
        let ring_cpus: Vec<i32> = rings.iter().map(|(c, _)| *c).collect();
        let catch = Arc::new(catch::Shared::default());
        let mut t = Tracer {
            rings: Collector::new(
                rings.into_iter().map(|(_, r)| r).collect(),
                Some(Catcher::new(catch.clone())),
            ),
            catch,
            extra: HashMap::new(),
            pending: Vec::new(),
            threads: HashMap::new(),
            cost: SwitchCost::new(ring_cpus.len()),
            start_ns: monotonic_ns(),
            summary: TraceSummary {
                cpus_covered: ring_cpus.len(),
                cpus_wanted: cpus.len(),
                buffer_bytes: pages * 4096,
                limits,
                ..Default::default()
            },
        };
        t.rings.watch();
        t.cover(pid, &mut tree, before, &attr(config, pages), &ring_cpus);
        t.summary.cpu_s += procfs::thread_cpu_s() - cpu0;
        Ok(t)
    }

    /// Gives events to the threads that existed before the inherited events (each on every
    /// covered CPU, writing into that CPU's buffer), until no uncovered thread is left.
    fn cover(
        &mut self,
        root: i32,
        tree: &mut Tree,
        before: Vec<(i32, i32)>,
        attr: &Attr,
        cpus: &[i32],
    ) {
        let mut covered: HashSet<i32> = HashSet::from([root]);
        let mut todo: Vec<(i32, i32)> =
            before.into_iter().filter(|(_, tid)| *tid != root).collect();
        let mut failed = 0usize;
        for round in 0..=COVER_ROUNDS {
            for &(pid, tid) in &todo {
                covered.insert(tid);
                let mut events = Vec::new();
                for (&ring, &cpu) in self.rings.fds().iter().zip(cpus) {
                    match Event::open(attr, tid, cpu).and_then(|e| e.redirect(ring).map(|_| e)) {
                        Ok(e) => events.push(e),
                        Err(e) if e.raw_os_error() == Some(libc::ESRCH) => break,
                        Err(_) => {
                            failed += 1;
                            events.clear();
                            break;
                        }
                    }
                }
                if !events.is_empty() {
                    self.extra.insert(tid, events);
                    self.thread(pid, tid, self.start_ns);
                }
            }
            // Threads created since by a thread that had an event announce themselves by a fork record.
            self.read_rings();
            let forked: HashSet<i32> = self
                .pending
                .iter()
                .filter_map(
                    |(r, _)| if let Record::Fork { tid, .. } = r { Some(*tid) } else { None },
                )
                .collect();
            todo = tree
                .walk()
                .into_iter()
                .filter(|(_, tid)| !covered.contains(tid) && !forked.contains(tid))
                .collect();
            if todo.is_empty() {
                break;
            }
            if round == COVER_ROUNDS {
                failed += todo.len();
            }
        }
        if failed > 0 {
            self.summary.limits.push(format!(
                "tracer: {failed} thread(s) that existed before tracing started not covered (open files or kernel limits): their intervals come from /proc only"
            ));
        }
    }

    fn thread(&mut self, pid: i32, tid: i32, since: u64) -> &mut Thread {
        self.threads.entry(tid).or_insert_with(|| Thread {
            pid,
            state: State::Unknown(since),
            totals: ThreadTotals {
                pid,
                tid,
                first_ns: since,
                last_ns: since,
                ..Default::default()
            },
        })
    }

    fn read_rings(&mut self) {
        for (k, raw) in self.rings.take().into_iter().enumerate() {
            self.summary.records += raw.len() as u64;
            self.pending.extend(raw.iter().filter_map(|b| Some((records::decode(b)?, k))));
        }
    }

    /// Reads every buffer and returns the intervals that ended and the samples taken since the
    /// last drain, unwound and named through `stacks`. Call it often (every sweep): a buffer
    /// that fills loses records.
    pub fn drain(&mut self, stacks: &mut Stacks) -> Drained {
        let cpu0 = procfs::thread_cpu_s();
        let settled = monotonic_ns().saturating_sub(SETTLE_NS);
        self.read_rings();
        let mut out = self.process(stacks, Some(settled));
        out.through_ns = settled;
        out.caught = self.catch.take();
        out.open = self
            .threads
            .iter()
            .filter_map(|(&tid, t)| close(t.pid, tid, t.state, settled))
            .collect();
        if self.too_dear() {
            self.halt(stacks, &mut out);
        }
        out.exact = self.summary.whole();
        out.follows = out.exact && self.summary.stopped_s.is_none();
        self.summary.cpu_s += procfs::thread_cpu_s() - cpu0;
        out
    }

    /// Whether the job switches so often, for the CPU it uses, that recording every switch
    /// slows it down (see [`MAX_SWITCHES_PER_CPU_S`]).
    fn too_dear(&self) -> bool {
        if self.summary.stopped_s.is_some()
            || (monotonic_ns().saturating_sub(self.start_ns) as f64) < JUDGE_AFTER_S * 1e9
        {
            return false;
        }
        // A record lost is most often one of the two a switch writes: a collector that cannot
        // keep up is the cost this guards against, and it must not hide the switches it missed.
        let switches: u64 =
            self.threads.values().map(|t| t.totals.switches).sum::<u64>() + self.summary.lost / 2;
        let on_s = self.threads.values().map(|t| t.totals.on_ns).sum::<u64>() as f64 * 1e-9;
        too_many_switches(switches, on_s)
    }

    /// Stops tracing for good, the run going on: closes every event (the kernel stops writing
    /// records and switching events with the threads), adds what the rings still held to `out`,
    /// and ends every thread's interval now. Later drains find nothing; the /proc sampler goes on.
    fn halt(&mut self, stacks: &mut Stacks, out: &mut Drained) {
        let rest = self.wind_up(stacks);
        self.rings = Collector::new(Vec::new(), None);
        let now = rest.through_ns;
        out.intervals.extend(rest.intervals);
        out.samples.extend(rest.samples);
        out.open.clear();
        out.through_ns = now;
        let after_s = now.saturating_sub(self.start_ns) as f64 * 1e-9;
        self.summary.stopped_s = Some(after_s);
        self.summary.stopped_ns = Some(now);
        // One wording for every run, said once in a sweep: each run's moment is in its results.
        self.summary.limits.push(format!(
            "tracer: stopped itself early in the run (tracer.stopped_s), the job's threads leaving a CPU more than {MAX_SWITCHES_PER_CPU_S:.0} times per second of CPU they used: recording every switch would have slowed them; switch intervals, on-CPU stacks and short waits after that come from /proc sampling"
        ));
    }

    /// Asks for a window that catches thread `tid`'s short waits as they begin (see
    /// [`super::catch`]).
    pub fn want_catch(&self, pid: i32, tid: i32) {
        self.catch.want(pid, tid);
    }

    /// Stops tracing: the last records, the open intervals closed now, the summary, and the ring
    /// buffers to let go of once there is time.
    pub fn finish(mut self, stacks: &mut Stacks) -> (Drained, TraceSummary, Buffers) {
        let cpu0 = procfs::thread_cpu_s();
        let out = self.wind_up(stacks);
        let mut s = std::mem::take(&mut self.summary);
        s.switch_ns = self.cost.ns();
        s.exact = s.whole();
        if s.lost > 0 {
            s.limits.push(format!(
                "tracer: {} records lost (a ring buffer of {} KiB filled between drains): switch intervals of some threads are incomplete",
                s.lost,
                s.buffer_bytes / 1024
            ));
        }
        s.threads = self.threads.into_values().map(|t| t.totals).collect();
        s.threads.sort_by_key(|t| t.tid);
        s.cpu_s += procfs::thread_cpu_s() - cpu0;
        let rings = std::mem::replace(&mut self.rings, Collector::new(Vec::new(), None));
        (out, s, Buffers { _rings: rings })
    }

    /// Ends the recording: stops the collector, closes the events of threads that predate the
    /// tracer, turns every record left into intervals and samples, and closes each thread's
    /// interval now (the thread is gone for the tracer). The rings stay until dropped.
    fn wind_up(&mut self, stacks: &mut Stacks) -> Drained {
        self.summary.cpu_s += self.rings.stop();
        self.extra.clear();
        self.read_rings();
        let mut out = self.process(stacks, None);
        let now = monotonic_ns();
        out.through_ns = now;
        for (&tid, t) in &mut self.threads {
            if let Some(i) = close(t.pid, tid, t.state, now) {
                add(&mut t.totals, &i);
                out.intervals.push(i);
            }
            t.state = State::Gone;
        }
        out
    }

    /// Turns the pending records up to `until` (all without a bound) into intervals and samples.
    fn process(&mut self, stacks: &mut Stacks, until: Option<u64>) -> Drained {
        let mut recs = std::mem::take(&mut self.pending);
        recs.sort_by_key(|(r, _)| r.time().unwrap_or(0));
        let cut =
            until.map_or(recs.len(), |u| recs.partition_point(|(r, _)| r.time().unwrap_or(0) <= u));
        self.pending = recs.split_off(cut);
        let mut out = Drained::default();
        for (r, ring) in recs {
            match r {
                Record::Switch { pid, tid, time, out: leaving, preempted } => {
                    self.cost.see(ring, tid, time, leaving);
                    // The switch-in record comes after the kernel's switch, which schedstat
                    // counts on the CPU: the typical switch moves there.
                    let at = if leaving { time } else { time.saturating_sub(self.cost.ns()) };
                    let t = self.thread(pid, tid, time);
                    t.totals.last_ns = time;
                    let (next, ended) = switch(pid, tid, t.state, at, leaving, preempted);
                    t.state = next;
                    if leaving && ended.is_some() {
                        t.totals.switches += 1;
                    }
                    if let Some(i) = ended {
                        add(&mut t.totals, &i);
                        out.intervals.push(i);
                    }
                }
                Record::Sample { pid, tid, time, regs, stack } => {
                    self.summary.samples += 1;
                    let id = regs.and_then(|r| stacks.unwind(pid, r, &stack));
                    self.summary.unwound += u64::from(id.is_some());
                    out.samples.push(StackSample { pid, tid, time_ns: time, stack: id });
                }
                Record::Fork { pid, ppid, tid, time } => {
                    if pid == tid && pid != ppid {
                        stacks.fork(ppid, pid);
                    }
                    // A thread announced by a fork record inherited an event: drop any of our own.
                    self.extra.remove(&tid);
                    out.born.push((pid, tid));
                    let t = self.thread(pid, tid, time);
                    t.state = State::Off { since: time, preempted: true };
                }
                Record::Exit { pid, tid, time } => {
                    let t = self.thread(pid, tid, time);
                    t.totals.last_ns = time;
                    if let Some(i) = close(pid, tid, t.state, time) {
                        add(&mut t.totals, &i);
                        out.intervals.push(i);
                    }
                    t.state = State::Gone;
                    self.extra.remove(&tid);
                    out.ended.push((pid, tid));
                }
                Record::Mmap { pid, addr, len, pgoff, path, .. } => {
                    stacks.add_mapping(pid, addr, len, pgoff, &path)
                }
                Record::Comm { pid, exec: true, .. } => stacks.exec(pid),
                Record::Lost(n) => self.summary.lost += n,
                Record::Comm { .. } | Record::Other => {}
            }
        }
        out
    }

    /// What could not be covered so far, one line each.
    pub fn limits(&self) -> &[String] {
        &self.summary.limits
    }
}

/// The state after a switch record, and the interval it ended (none for a repeated record).
fn switch(
    pid: i32,
    tid: i32,
    state: State,
    time: u64,
    leaving: bool,
    preempted: bool,
) -> (State, Option<Interval>) {
    let iv = |start_ns, end_ns, on_cpu, preempted| {
        Some(Interval { pid, tid, start_ns, end_ns, on_cpu, preempted })
    };
    match (state, leaving) {
        (State::On(s) | State::Unknown(s), true) => {
            (State::Off { since: time, preempted }, iv(s, time, true, false))
        }
        (State::Off { since, preempted: p }, false) => {
            // Moved back by the switch's cost, a switch-in never comes before its switch-out.
            let time = time.max(since);
            (State::On(time), iv(since, time, false, p))
        }
        (State::Unknown(s), false) => (State::On(time), iv(s, time, false, false)),
        (State::Gone, _) => (State::Gone, None),
        (s, _) => (s, None),
    }
}

/// The interval a thread is in, closed at `time`.
fn close(pid: i32, tid: i32, state: State, time: u64) -> Option<Interval> {
    let (start_ns, on_cpu, preempted) = match state {
        State::On(s) => (s, true, false),
        State::Off { since, preempted } => (since, false, preempted),
        State::Unknown(_) | State::Gone => return None,
    };
    (time > start_ns).then_some(Interval { pid, tid, start_ns, end_ns: time, on_cpu, preempted })
}

fn add(t: &mut ThreadTotals, i: &Interval) {
    let d = i.end_ns.saturating_sub(i.start_ns);
    match (i.on_cpu, i.preempted) {
        (true, _) => t.on_ns += d,
        (false, true) => t.off_preempted_ns += d,
        (false, false) => t.off_waiting_ns += d,
    }
    t.last_ns = t.last_ns.max(i.end_ns);
}

/// The event: `pages` of buffer, whose watermark wakes the collector at a quarter full.
fn attr(config: &TracerConfig, pages: usize) -> Attr {
    Attr {
        kind: perf::TYPE_SOFTWARE,
        config: perf::SW_TASK_CLOCK,
        sample_period: config.period_ns.max(100_000),
        sample_type: perf::SAMPLE_TID
            | perf::SAMPLE_TIME
            | perf::SAMPLE_REGS_USER
            | perf::SAMPLE_STACK_USER,
        flags: perf::FLAG_INHERIT
            | perf::FLAG_EXCLUDE_KERNEL
            | perf::FLAG_EXCLUDE_HV
            | perf::FLAG_MMAP
            | perf::FLAG_MMAP2
            | perf::FLAG_COMM
            | perf::FLAG_COMM_EXEC
            | perf::FLAG_TASK
            | perf::FLAG_SAMPLE_ID_ALL
            | perf::FLAG_USE_CLOCKID
            | perf::FLAG_CONTEXT_SWITCH
            | perf::FLAG_WATERMARK,
        wakeup_events: (pages * 4096 / 4).max(1) as u32,
        sample_regs_user: records::REGS_MASK,
        sample_stack_user: config.stack_bytes.next_multiple_of(8).min(60_000),
        clockid: libc::CLOCK_MONOTONIC,
        ..Default::default()
    }
}

/// The limits line for a refusal.
/// Why the kernel refused the tracer; its text is the run's limits line, and the /proc sampler
/// carries on without it.
#[derive(Debug, thiserror::Error)]
#[error(
    "tracer unavailable ({what}: {cause}; kernel.perf_event_paranoid = {paranoid}; a seccomp filter or container may forbid it): no exact switch intervals or on-CPU stacks, /proc sampling only"
)]
pub struct TracerRefused {
    what: &'static str,
    cause: std::io::Error,
    paranoid: String,
}

fn refusal(what: &'static str, cause: std::io::Error) -> TracerRefused {
    let paranoid =
        std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid").unwrap_or_default();
    TracerRefused { what, cause, paranoid: paranoid.trim().to_string() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spawned_shell_is_traced_exactly_where_the_kernel_allows() {
        let mut child = std::process::Command::new("sh")
            .args(["-c", "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done; sleep 0.3; i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done"])
            .spawn()
            .unwrap();
        let pid = child.id() as i32;
        let mut stacks = Stacks::new();
        let mut tracer = match Tracer::start(pid, &TracerConfig::default()) {
            Ok(t) => t,
            Err(line) => {
                eprintln!("{line}");
                child.wait().unwrap();
                return;
            }
        };
        // The shell runs before the tracer starts: compare with schedstat's on-CPU time since.
        let read_on = || -> Option<u64> {
            let s = std::fs::read_to_string(format!("/proc/{pid}/schedstat")).ok()?;
            s.split_whitespace().next()?.parse().ok()
        };
        let on_at_start = read_on().unwrap_or(0);
        let mut all = Drained::default();
        let mut on_at_end = on_at_start;
        while child.try_wait().unwrap().is_none() {
            std::thread::sleep(std::time::Duration::from_millis(10));
            on_at_end = read_on().unwrap_or(on_at_end);
            let d = tracer.drain(&mut stacks);
            all.intervals.extend(d.intervals);
            all.samples.extend(d.samples);
        }
        let (d, summary, _) = tracer.finish(&mut stacks);
        all.intervals.extend(d.intervals);
        all.samples.extend(d.samples);
        let t = summary.threads.iter().find(|t| t.tid == pid).expect("the shell was traced");
        let on_schedstat = on_at_end - on_at_start;
        eprintln!("{summary:?} schedstat on {on_schedstat}");
        assert!(t.on_ns > 0 && t.off_waiting_ns >= 250_000_000, "{t:?}");
        assert!(t.on_ns as f64 >= on_schedstat as f64 * 0.9, "{t:?} against {on_schedstat}");
        assert_eq!(summary.lost, 0);
        assert!(summary.samples > 5 && summary.unwound > 0, "{summary:?}");
        let named = all.samples.iter().filter_map(|s| s.stack).any(|id| {
            stacks.frames(id).any(|f| f.module.starts_with("dash") || f.module.starts_with("bash"))
        });
        assert!(named, "samples unwound into the shell's own code");
    }

    #[test]
    fn records_are_kept_while_no_drain_comes_for_seconds() {
        // Two busy shells for 1.5 s: about 300 samples of 8 KiB, three times what the rings hold,
        // and no drain until the end, as when the sampler is starved of CPU.
        let spin = "i=0; while [ $i -lt 1500000 ]; do i=$((i+1)); done";
        let mut child = std::process::Command::new("sh")
            .args(["-c", &format!("sleep 0.05; ({spin}) & {spin}; wait")])
            .spawn()
            .unwrap();
        let mut stacks = Stacks::new();
        let tracer = match Tracer::start(child.id() as i32, &TracerConfig::default()) {
            Ok(t) => t,
            Err(line) => {
                eprintln!("{line}");
                child.wait().unwrap();
                return;
            }
        };
        let t0 = std::time::Instant::now();
        child.wait().unwrap();
        let (_, summary, _) = tracer.finish(&mut stacks);
        let on_s: f64 = summary.threads.iter().map(|t| t.on_ns as f64 * 1e-9).sum();
        eprintln!("{:.2} s, {on_s:.2} s on a CPU: {summary:?}", t0.elapsed().as_secs_f64());
        assert_eq!(summary.lost, 0, "{summary:?}");
        assert!(
            summary.samples as f64 >= 0.8 * on_s / 0.01,
            "a sample per 10 ms on a CPU: {summary:?}"
        );
    }
}
