//! Catching waits shorter than a sweep, at the instant they begin.
//!
//! Two threads that hand a lock back and forth wait thousands of times a second for some tens of
//! microseconds each. The /proc sweeps never see them waiting: a sweep needs a CPU, gets one
//! mostly when such a wait has just ended, and finds the thread running (0 of 110 reads caught a
//! two-thread Rust mutex probe on two CPUs waiting; bursts of re-reads, which take a CPU from the
//! threads and so end their contention, 0 of 24). The wait's time is exact (schedstat, the
//! tracer), but nothing says what it was.
//!
//! A second, small ring per CPU receives only the tracer's switch records, and every record wakes
//! the collector thread, which reads the threads the latest records leave off-CPU waiting — their
//! `/proc/<tid>/syscall`, state and user stack — while most of them still wait. A reader woken
//! that often stays on a CPU and reads within microseconds (half of its reads find the wait);
//! one woken after a pause finds a tenth, its CPU having gone idle. So catching runs in windows:
//! [`WINDOW`] of it every [`EVERY`], the kernel writing nothing into the rings in between
//! (0.6% of a CPU for about a hundred caught waits a second in the probe above).

use super::perf::{self, Attr, Ring};
use super::procfs::{self, ProcFile, Syscall};
use super::records::{self, Record};
use super::stacks;
use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// Data pages of each catch ring.
pub const PAGES: usize = 2;
/// Catching lasts this long…
const WINDOW: Duration = Duration::from_millis(1);
/// …once every this long.
const EVERY: Duration = Duration::from_millis(50);
/// Threads read per wake, latest switch first…
const PER_WAKE: usize = 2;
/// …and per window.
const PER_WINDOW: u32 = 16;
/// Threads whose files are kept open (the busiest job's recent waiters).
const OPEN_FILES: usize = 256;

/// A thread caught waiting.
#[derive(Clone, Debug, PartialEq)]
pub struct Catch {
    /// Process.
    pub pid: i32,
    /// Thread.
    pub tid: i32,
    /// When it was read, nanoseconds on CLOCK_MONOTONIC (inside the wait).
    pub time_ns: u64,
    /// Its `/proc/<tid>/syscall` then.
    pub syscall: String,
    /// Its state letter then (`S`, `D`).
    pub state: char,
    /// Its user stack from the stack pointer up, read while it waited; `None` when this thread
    /// was caught at the same stack and instruction pointers before (the stack it had then is
    /// the one), empty when unreadable.
    pub stack: Option<Vec<u8>>,
}

/// The catch event of one CPU: switch records only, each of which wakes the reader.
pub fn attr() -> Attr {
    Attr {
        kind: perf::TYPE_SOFTWARE,
        config: perf::SW_DUMMY,
        sample_type: perf::SAMPLE_TID | perf::SAMPLE_TIME,
        flags: perf::FLAG_INHERIT
            | perf::FLAG_EXCLUDE_KERNEL
            | perf::FLAG_EXCLUDE_HV
            | perf::FLAG_SAMPLE_ID_ALL
            | perf::FLAG_USE_CLOCKID
            | perf::FLAG_CONTEXT_SWITCH
            | perf::FLAG_WATERMARK,
        // Every record wakes the collector: the rings write only while catching.
        wakeup_events: 1,
        clockid: libc::CLOCK_MONOTONIC,
        ..Default::default()
    }
}

/// The files of one thread, opened at its first catch.
struct Files {
    syscall: ProcFile,
    stat: ProcFile,
}

/// The catch rings and what they caught; driven by the collector thread.
pub struct Catcher {
    rings: Vec<Ring>,
    files: HashMap<i32, Option<Files>>,
    records: Vec<Vec<u8>>,
    /// Threads, stack and instruction pointers whose stack was read already.
    seen: std::collections::HashSet<(i32, u64, u64)>,
    caught: Arc<Mutex<Vec<Catch>>>,
    /// When the current window ends, or when the next begins (paused).
    window: Window,
    /// Threads read in the current window.
    reads: u32,
}

/// Whether catching is on, and until when.
#[derive(Clone, Copy, Debug)]
enum Window {
    Open(Instant),
    Paused(Instant),
}

impl Catcher {
    /// Catches through `rings`, into `caught`.
    pub fn new(rings: Vec<Ring>, caught: Arc<Mutex<Vec<Catch>>>) -> Catcher {
        let window = Window::Open(Instant::now() + WINDOW);
        Catcher {
            rings,
            files: HashMap::new(),
            records: Vec::new(),
            seen: Default::default(),
            caught,
            window,
            reads: 0,
        }
    }

    /// The descriptors to poll, for redirecting the events of threads that existed before.
    pub fn fds(&self) -> Vec<i32> {
        self.rings.iter().map(Ring::fd).collect()
    }

    /// How long catching stays paused; `None` when it is on. The first call after a pause empties
    /// the rings and lets the kernel write into them again.
    pub fn paused_for(&mut self) -> Option<Duration> {
        let Window::Paused(until) = self.window else { return None };
        if let Some(d) = until.checked_duration_since(Instant::now()).filter(|d| !d.is_zero()) {
            return Some(d);
        }
        self.records.clear();
        for ring in &mut self.rings {
            ring.drain(&mut self.records);
            let _ = ring.pause_output(false);
        }
        self.records.clear();
        self.window = Window::Open(Instant::now() + WINDOW);
        self.reads = 0;
        None
    }

    /// A ring woke the collector: reads the threads its latest records leave waiting; pauses
    /// once the window is over. A collector woken often stays on a CPU and reads within
    /// microseconds of the switch (half of the reads find the wait, against a tenth after a
    /// pause, when the CPU it wakes on was idle): hence short windows rather than spread reads.
    pub fn wake(&mut self) {
        self.records.clear();
        for r in &mut self.rings {
            r.drain(&mut self.records);
        }
        // The latest voluntary switch out of each thread not back on a CPU since.
        let mut off: HashMap<i32, (i32, u64)> = HashMap::new();
        for rec in &self.records {
            if let Some(Record::Switch { pid, tid, time, out, preempted }) = records::decode(rec) {
                if out && !preempted {
                    off.insert(tid, (pid, time));
                } else {
                    off.remove(&tid);
                }
            }
        }
        let mut latest: Vec<(i32, i32, u64)> = off.into_iter().map(|(tid, (pid, t))| (pid, tid, t)).collect();
        latest.sort_by_key(|&(_, _, t)| std::cmp::Reverse(t));
        for (pid, tid, _) in latest.into_iter().take(PER_WAKE) {
            self.reads += 1;
            if let Some(c) = self.read(pid, tid) {
                self.caught.lock().unwrap_or_else(PoisonError::into_inner).push(c);
            }
        }
        let Window::Open(end) = self.window else { return };
        if Instant::now() >= end || self.reads >= PER_WINDOW {
            // Nothing is written (no record, no wake-up) until the next window.
            for ring in &self.rings {
                let _ = ring.pause_output(true);
            }
            self.window = Window::Paused(end - WINDOW + EVERY);
        }
    }

    /// Reads a thread that left its CPU to wait: `None` when it is back on one (or gone).
    fn read(&mut self, pid: i32, tid: i32) -> Option<Catch> {
        if self.files.len() >= OPEN_FILES && !self.files.contains_key(&tid) {
            self.files.clear();
        }
        let files = self.files.entry(tid).or_insert_with(|| {
            let dir = format!("/proc/{pid}/task/{tid}");
            Some(Files {
                syscall: ProcFile::open(Path::new(&format!("{dir}/syscall")))?,
                stat: ProcFile::open(Path::new(&format!("{dir}/stat")))?,
            })
        });
        let f = files.as_mut()?;
        let syscall = f.syscall.read()?.to_string();
        if matches!(procfs::syscall(&syscall), Some(Syscall::Running) | None) {
            return None;
        }
        let time_ns = super::tracer::monotonic_ns();
        let state = f.stat.read().and_then(procfs::stat).map_or('S', |s| s.state);
        // The stack, kept only when the thread is still in the same wait after it was read.
        let stack = match procfs::user_sp_pc(&syscall) {
            Some((sp, pc)) if self.seen.contains(&(tid, sp, pc)) => None,
            Some((sp, pc)) => {
                let bytes = stacks::read_stack(pid, sp, stacks::BLOCKED_STACK_BYTES).unwrap_or_default();
                let same = f.syscall.read().is_some_and(|now| now == syscall);
                if same && !bytes.is_empty() {
                    self.seen.insert((tid, sp, pc));
                    Some(bytes)
                } else {
                    Some(Vec::new())
                }
            }
            None => Some(Vec::new()),
        };
        Some(Catch { pid, tid, time_ns, syscall, state: if state == 'R' { 'S' } else { state }, stack })
    }
}

#[cfg(test)]
mod tests {
    use super::super::classify::{self, Class};
    use super::*;

    #[test]
    fn threads_handing_a_lock_back_and_forth_are_caught_waiting_on_it() {
        if perf::Event::open(&attr(), 0, 0).is_err() {
            eprintln!("perf_event_open refused here: nothing to test");
            return;
        }
        // Two threads hand a mutex back and forth for 0.8 s: each holds it for tens of microseconds
        // and waits for it as long.
        let lock = Arc::new(Mutex::new(0u64));
        let (tx, rx) = std::sync::mpsc::channel();
        let workers: Vec<_> = (0..2)
            .map(|_| {
                let (lock, tx) = (lock.clone(), tx.clone());
                std::thread::spawn(move || {
                    // SAFETY: gettid has no preconditions.
                    tx.send(unsafe { libc::gettid() }).unwrap();
                    let t0 = Instant::now();
                    let mut x = 0u64;
                    while t0.elapsed() < Duration::from_millis(800) {
                        let mut g = lock.lock().unwrap();
                        for i in 0..30_000u64 {
                            *g = std::hint::black_box(g.wrapping_mul(31).wrapping_add(i));
                        }
                        drop(g);
                        for i in 0..10_000u64 {
                            x = std::hint::black_box(x.wrapping_mul(17).wrapping_add(i));
                        }
                    }
                })
            })
            .collect();
        let tids: Vec<i32> = (0..2).map(|_| rx.recv().unwrap()).collect();
        // The two workers' catch events, on every CPU, into one ring per CPU.
        let mut rings = Vec::new();
        let mut events = Vec::new();
        for cpu in perf::allowed_cpus(std::process::id() as i32) {
            let first = perf::Event::open(&attr(), tids[0], cpu).unwrap();
            let ring = Ring::map(first, PAGES).map_err(|(_, e)| e).unwrap();
            let second = perf::Event::open(&attr(), tids[1], cpu).unwrap();
            second.redirect(ring.fd()).unwrap();
            events.push(second);
            rings.push(ring);
        }
        let caught = Arc::new(Mutex::new(Vec::new()));
        let mut c = Catcher::new(rings, caught.clone());
        let fds = c.fds();
        let t0 = Instant::now();
        while t0.elapsed() < Duration::from_millis(750) {
            if let Some(d) = c.paused_for() {
                std::thread::sleep(d);
                continue;
            }
            let mut polled: Vec<libc::pollfd> =
                fds.iter().map(|&fd| libc::pollfd { fd, events: libc::POLLIN, revents: 0 }).collect();
            // SAFETY: a valid array of pollfd for the call.
            unsafe { libc::poll(polled.as_mut_ptr(), polled.len() as libc::nfds_t, 10) };
            if polled.iter().any(|p| p.revents & libc::POLLIN != 0) {
                c.wake();
            }
        }
        workers.into_iter().for_each(|w| w.join().unwrap());
        let caught = caught.lock().unwrap();
        let class = |c: &Catch| classify::blocked(c.state, procfs::syscall(&c.syscall), "", c.pid, |_| false).0;
        let on_lock = caught.iter().filter(|c| class(c) == Class::Lock && tids.contains(&c.tid)).count();
        // About fifteen windows, most catching a read or two on the lock.
        assert!(on_lock >= 3, "{} caught, {on_lock} on the lock: {caught:?}", caught.len());
        assert!(caught.iter().any(|c| c.stack.as_ref().is_some_and(|s| !s.is_empty())), "stacks read while waiting");
    }
}
