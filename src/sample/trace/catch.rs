//! Catching waits shorter than a sweep, at the instant they begin.
//!
//! Two threads that hand a lock back and forth wait thousands of times a second for some tens of
//! microseconds each. The /proc sweeps never see them waiting: a sweep needs a CPU, gets one
//! mostly when such a wait has just ended, and finds the thread running (0 of 110 reads caught a
//! two-thread Rust mutex probe on two CPUs waiting). Re-reading in a burst, or spinning on the
//! tracer's records, does no better: the reader takes a CPU from the threads, and with one of
//! them off its CPU the other no longer waits (0 of 24 bursts). The wait's time is exact
//! (schedstat, the tracer), but nothing says what it was.
//!
//! So the reader must run when such a thread leaves its CPU, on the CPU it frees. When the sampler
//! meets waits it could not name, it asks for a window for those threads: the tracer's collector
//! thread gives each an event of its own for [`WINDOW`] whose every switch record wakes it, and
//! reads the thread — its `/proc/<tid>/syscall`, state and user stack — as it leaves to wait
//! (about half of these reads find the wait). The events exist only during a window, at most one
//! every [`EVERY`]: an extra event on every thread, even turned off, cost the probe's 24,000
//! context switches a second 2% of its speed.

use super::perf::{self, Attr, Event, Ring};
use super::records::{self, Record};
use crate::sample::proc::procfs::{self, ProcFile, Syscall};
use crate::sample::unwind;
use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

/// A window lasts this long…
const WINDOW: Duration = Duration::from_millis(1);
/// …and opens once every this long at most.
const EVERY: Duration = Duration::from_millis(100);
/// Threads watched in one window.
const PER_WINDOW: usize = 4;
/// Reads in one window.
const READS: u32 = 8;
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

/// What the sampler and the collector share: the threads to watch, and what was caught.
#[derive(Debug, Default)]
pub struct Shared {
    wanted: Mutex<Vec<(i32, i32)>>,
    caught: Mutex<Vec<Catch>>,
}

impl Shared {
    /// Asks for a window on thread `tid` of process `pid` (it waited where no sweep saw it).
    pub fn want(&self, pid: i32, tid: i32) {
        let mut w = self.wanted.lock().unwrap_or_else(PoisonError::into_inner);
        if !w.iter().any(|&(_, t)| t == tid) {
            w.push((pid, tid));
        }
    }

    /// What was caught since the last call.
    pub fn take(&self) -> Vec<Catch> {
        std::mem::take(&mut *self.caught.lock().unwrap_or_else(PoisonError::into_inner))
    }

    fn wanted(&self) -> bool {
        !self.wanted.lock().unwrap_or_else(PoisonError::into_inner).is_empty()
    }
}

/// The event of one watched thread: switch records only, each of which wakes the reader.
fn attr() -> Attr {
    Attr {
        kind: perf::TYPE_SOFTWARE,
        config: perf::SW_DUMMY,
        sample_type: perf::SAMPLE_TID | perf::SAMPLE_TIME,
        flags: perf::FLAG_EXCLUDE_KERNEL
            | perf::FLAG_EXCLUDE_HV
            | perf::FLAG_SAMPLE_ID_ALL
            | perf::FLAG_USE_CLOCKID
            | perf::FLAG_CONTEXT_SWITCH
            | perf::FLAG_WATERMARK,
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

/// The collector's side: windows, and the files of the threads it reads.
pub struct Catcher {
    shared: std::sync::Arc<Shared>,
    files: HashMap<i32, Option<Files>>,
    /// Threads, stack and instruction pointers whose stack was read already.
    seen: HashSet<(i32, u64, u64)>,
    /// When the next window may open.
    next: Instant,
    records: Vec<Vec<u8>>,
}

impl Catcher {
    /// Catches into `shared`.
    pub fn new(shared: std::sync::Arc<Shared>) -> Catcher {
        Catcher {
            shared,
            files: HashMap::new(),
            seen: HashSet::new(),
            next: Instant::now(),
            records: Vec::new(),
        }
    }

    /// How long until a window opens: `None` while none is wanted.
    pub fn due_in(&self) -> Option<Duration> {
        self.shared.wanted().then(|| self.next.saturating_duration_since(Instant::now()))
    }

    /// Runs a window on the threads asked for (up to [`PER_WINDOW`] of them): each gets an event
    /// whose switch records wake this thread, which reads the thread as it leaves to wait.
    pub fn window(&mut self) {
        let start = Instant::now();
        self.next = start + EVERY;
        let wanted: Vec<(i32, i32)> = {
            let mut w = self.shared.wanted.lock().unwrap_or_else(PoisonError::into_inner);
            let n = w.len().min(PER_WINDOW);
            w.drain(..n).collect()
        };
        let mut watched: Vec<(i32, i32, Ring)> = wanted
            .into_iter()
            .filter_map(|(pid, tid)| {
                Some((pid, tid, Ring::map(Event::open(&attr(), tid, -1).ok()?, 1).ok()?))
            })
            .collect();
        let mut reads = 0;
        while reads < READS && !watched.is_empty() {
            let Some(left) = WINDOW.checked_sub(start.elapsed()).filter(|d| !d.is_zero()) else {
                break;
            };
            let mut polled: Vec<libc::pollfd> = watched
                .iter()
                .map(|w| libc::pollfd { fd: w.2.fd(), events: libc::POLLIN, revents: 0 })
                .collect();
            let ms = left.as_micros().div_ceil(1000) as i32;
            // SAFETY: `polled` is a valid array of pollfd for the call.
            if unsafe { libc::poll(polled.as_mut_ptr(), polled.len() as libc::nfds_t, ms) } <= 0 {
                continue;
            }
            let mut leaving = Vec::new();
            for (k, (pid, tid, ring)) in watched.iter_mut().enumerate() {
                if polled[k].revents & (libc::POLLHUP | libc::POLLERR) != 0 {
                    leaving.push((*pid, *tid, true));
                    continue;
                }
                self.records.clear();
                ring.drain(&mut self.records);
                // Its latest record: it left its CPU to wait, and has not come back.
                let last = self.records.iter().rev().find_map(|r| match records::decode(r) {
                    Some(Record::Switch { out, preempted, .. }) => Some(out && !preempted),
                    _ => None,
                });
                if last == Some(true) {
                    leaving.push((*pid, *tid, false));
                }
            }
            for (pid, tid, gone) in leaving {
                if gone {
                    watched.retain(|w| w.1 != tid);
                    continue;
                }
                reads += 1;
                if let Some(c) = self.read(pid, tid) {
                    self.shared.caught.lock().unwrap_or_else(PoisonError::into_inner).push(c);
                }
            }
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
        let time_ns = super::clock::monotonic_ns();
        let state = f.stat.read().and_then(procfs::stat).map_or('S', |s| s.state);
        // The stack, kept only when the thread is still in the same wait after it was read.
        let stack = match procfs::user_sp_pc(&syscall) {
            Some((sp, pc)) if self.seen.contains(&(tid, sp, pc)) => None,
            Some((sp, pc)) => {
                let bytes =
                    unwind::read_stack(pid, sp, unwind::BLOCKED_STACK_BYTES).unwrap_or_default();
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
        Some(Catch {
            pid,
            tid,
            time_ns,
            syscall,
            state: if state == 'R' { 'S' } else { state },
            stack,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::Class;
    use crate::sample::proc;
    use std::sync::Arc;

    #[test]
    fn threads_handing_a_lock_back_and_forth_are_caught_waiting_on_it() {
        if Event::open(&attr(), 0, -1).is_err() {
            eprintln!("perf_event_open refused here: nothing to test");
            return;
        }
        // Two threads hand a mutex back and forth until told to stop: each holds it for tens of
        // microseconds and waits for it as long.
        let lock = Arc::new(Mutex::new(0u64));
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (tx, rx) = std::sync::mpsc::channel();
        let workers: Vec<_> = (0..2)
            .map(|_| {
                let (lock, tx, stop) = (lock.clone(), tx.clone(), stop.clone());
                std::thread::spawn(move || {
                    // SAFETY: gettid has no preconditions.
                    tx.send(unsafe { libc::gettid() }).unwrap();
                    let mut x = 0u64;
                    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
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
        let pid = std::process::id() as i32;
        let tids: Vec<i32> = (0..2).map(|_| rx.recv().unwrap()).collect();
        let shared = Arc::new(Shared::default());
        let mut c = Catcher::new(shared.clone());
        assert_eq!(c.due_in(), None, "no window until one is asked for");
        // Windows until three waits on the lock are caught (about one window in three catches
        // one when the machine is busy with other tests) and one of them with its stack (kept only
        // when the wait outlasts the read: under load a wait of tens of microseconds often does
        // not), for 10 s at most.
        let class =
            |c: &Catch| proc::blocked(c.state, procfs::syscall(&c.syscall), "", c.pid, |_| false).0;
        let mut caught = Vec::new();
        let on_lock = |caught: &[Catch]| {
            caught.iter().filter(|c| class(c) == Class::Lock && tids.contains(&c.tid)).count()
        };
        let stacked = |caught: &[Catch]| {
            caught.iter().any(|c| c.stack.as_ref().is_some_and(|s| !s.is_empty()))
        };
        let t0 = Instant::now();
        while t0.elapsed() < Duration::from_secs(10) && (on_lock(&caught) < 3 || !stacked(&caught))
        {
            tids.iter().for_each(|&t| shared.want(pid, t));
            match c.due_in() {
                Some(d) if d.is_zero() => c.window(),
                Some(d) => std::thread::sleep(d),
                None => unreachable!("asked for"),
            }
            caught.extend(shared.take());
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        workers.into_iter().for_each(|w| w.join().unwrap());
        assert!(
            on_lock(&caught) >= 3,
            "{} caught, {} on the lock: {caught:?}",
            caught.len(),
            on_lock(&caught)
        );
        assert!(stacked(&caught), "stacks read while waiting");
        assert!(shared.take().is_empty(), "taken once");
    }
}
