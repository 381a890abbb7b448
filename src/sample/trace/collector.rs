//! The tracer's ring buffers, emptied by a thread of their own.
//!
//! The sampler drains the rings on every sweep, but a job that keeps every CPU busy starves it:
//! with 64 busy threads on two CPUs the sampler's fair share is 1/33 of a CPU, its first sweep
//! over the new threads took 2.9 s of wall time, and the rings (512 KiB, about 60 samples with
//! their stacks) overflowed meanwhile. The collector sleeps until a ring would be a quarter full
//! at the pace it filled so far, copies the records out, and sleeps again: a few microseconds of
//! CPU a few times a second, which the scheduler grants at once. It starts
//! with the tracer: the sampler's first sweep over a new process (reading its modules' symbol and
//! unwind tables) is the longest, and records pile up fastest while the job starts its threads.

use super::catch::Catcher;
use super::perf::Ring;
use crate::sample::proc::procfs;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;

/// The rings and the records copied out of them, one list per ring.
struct Rings {
    rings: Vec<Ring>,
    taken: Vec<Vec<Vec<u8>>>,
}

impl Rings {
    fn copy_out(&mut self) {
        for (r, out) in self.rings.iter_mut().zip(&mut self.taken) {
            r.drain(out);
        }
    }
}

/// The rings of one tracer: drained on demand, and by a thread once [`Collector::watch`] started it.
pub struct Collector {
    shared: Arc<Mutex<Rings>>,
    fds: Vec<RawFd>,
    catcher: Option<Catcher>,
    thread: Option<(OwnedFd, JoinHandle<f64>)>,
}

impl Collector {
    /// Holds `rings`, and the catcher of short waits whose windows its thread runs; nothing
    /// runs yet.
    pub fn new(rings: Vec<Ring>, catcher: Option<Catcher>) -> Collector {
        let fds = rings.iter().map(Ring::fd).collect();
        let taken = vec![Vec::new(); rings.len()];
        Collector {
            shared: Arc::new(Mutex::new(Rings { rings, taken })),
            fds,
            catcher,
            thread: None,
        }
    }

    fn lock(&self) -> MutexGuard<'_, Rings> {
        self.shared.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The descriptors of the rings' events, for redirecting other events into them.
    pub fn fds(&self) -> &[RawFd] {
        &self.fds
    }

    /// Starts the collector thread (a no-op once it runs, and when no thread or eventfd can be
    /// made: the sampler's drains remain).
    pub fn watch(&mut self) {
        if self.thread.is_some() {
            return;
        }
        // SAFETY: eventfd returns a new descriptor or -1.
        let fd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) };
        if fd < 0 {
            return;
        }
        // SAFETY: the descriptor is new and owned here.
        let stop = unsafe { OwnedFd::from_raw_fd(fd) };
        let (shared, fds, stop_fd) = (self.shared.clone(), self.fds.clone(), stop.as_raw_fd());
        let catcher = self.catcher.take();
        let spawned = std::thread::Builder::new()
            .name("scalescope-rings".into())
            .stack_size(256 * 1024)
            .spawn(move || {
                collect(&shared, fds, stop_fd, catcher);
                procfs::thread_cpu_s()
            });
        if let Ok(h) = spawned {
            self.thread = Some((stop, h));
        }
    }

    /// Every record copied out so far and every one in the rings now, per ring, in order.
    pub fn take(&mut self) -> Vec<Vec<Vec<u8>>> {
        let mut r = self.lock();
        r.copy_out();
        let n = r.taken.len();
        std::mem::replace(&mut r.taken, vec![Vec::new(); n])
    }

    /// Stops the thread and returns the CPU seconds it used; the rings stay until the
    /// collector is dropped.
    pub fn stop(&mut self) -> f64 {
        let Some((stop, h)) = self.thread.take() else { return 0.0 };
        let one: u64 = 1;
        // SAFETY: writes eight bytes from a local to the eventfd owned here.
        unsafe { libc::write(stop.as_raw_fd(), (&one as *const u64).cast(), 8) };
        h.join().unwrap_or(0.0)
    }
}

impl Drop for Collector {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The longest pause between two looks at the rings (and whether the sampler wants a window): a
/// ring of 512 KiB overflows after it only beyond 10 MB/s, which a job reaches in a burst after
/// a quiet spell.
const LONGEST_MS: u64 = 50;
/// The shortest pause between two looks at the rings.
const SHORTEST_MS: u64 = 5;
/// A ring that fills a quarter of its buffer faster than this is waited on as well, to be woken
/// at the watermark: two threads relaying a byte through pipes (450,000 switches a second) filled
/// 512 KiB in 28 ms, and overflowed between looks on the timer alone.
const WATCH_BELOW_MS: u64 = 20;

/// The thread: wakes on a timer, copies every ring out, and runs the catcher's windows when they
/// are due; the pause is the time the fastest ring took to fill a quarter of its buffer, between
/// [`SHORTEST_MS`] and [`LONGEST_MS`]. It sleeps in `poll` on the rings' events only while they
/// fill fast ([`WATCH_BELOW_MS`]): the kernel wakes every poller of an event each time a task
/// that inherited it exits, and a job of short processes (`xargs -P 2 sha256sum`, 150 a second)
/// had the thread preempt it 40 times in a 0.25 s run. A ring whose event hung up (its task and
/// every task it was inherited by gone) is no longer looked at, but still copied out; the thread
/// ends when every ring has.
fn collect(shared: &Mutex<Rings>, mut fds: Vec<RawFd>, stop: RawFd, mut catcher: Option<Catcher>) {
    let lock = || shared.lock().unwrap_or_else(PoisonError::into_inner);
    let quarter = lock().rings.iter().map(|r| r.bytes() as f64 / 4.0).fold(f64::INFINITY, f64::min);
    let (mut pause_ms, mut last) = (SHORTEST_MS, std::time::Instant::now());
    loop {
        let timeout = match catcher.as_ref().and_then(Catcher::due_in) {
            None => pause_ms,
            Some(d) => (d.as_micros().div_ceil(1000) as u64).min(pause_ms),
        };
        let watched = if pause_ms < WATCH_BELOW_MS { fds.len() } else { 0 };
        let mut waiting: Vec<libc::pollfd> = std::iter::once(stop)
            .chain(fds.iter().copied().take(watched))
            .map(|fd| libc::pollfd { fd, events: libc::POLLIN, revents: 0 })
            .collect();
        // SAFETY: `waiting` is a valid array of pollfd for the call.
        let n = unsafe {
            libc::poll(waiting.as_mut_ptr(), waiting.len() as libc::nfds_t, timeout as i32)
        };
        if n < 0 && std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            return;
        }
        if waiting[0].revents != 0 {
            return;
        }
        let fullest = {
            let mut r = lock();
            let fullest = r.rings.iter().map(Ring::pending).max().unwrap_or(0);
            r.copy_out();
            fullest
        };
        let rate = fullest as f64 / last.elapsed().as_secs_f64().max(1e-4);
        last = std::time::Instant::now();
        pause_ms =
            ((quarter / rate.max(1.0)) * 1e3).clamp(SHORTEST_MS as f64, LONGEST_MS as f64) as u64;
        if let Some(c) = catcher.as_mut().filter(|c| c.due_in().is_some_and(|d| d.is_zero())) {
            c.window();
        }
        // A look without waiting: which events hung up.
        let mut polled: Vec<libc::pollfd> =
            fds.iter().map(|&fd| libc::pollfd { fd, events: libc::POLLIN, revents: 0 }).collect();
        // SAFETY: `polled` is a valid array of pollfd for the call.
        unsafe { libc::poll(polled.as_mut_ptr(), polled.len() as libc::nfds_t, 0) };
        let hung: Vec<RawFd> = polled
            .iter()
            .filter(|p| p.revents & (libc::POLLHUP | libc::POLLERR | libc::POLLNVAL) != 0)
            .map(|p| p.fd)
            .collect();
        fds.retain(|fd| !hung.contains(fd));
        // Every traced task has exited: nothing more will come, and the tracer's end then finds
        // the thread gone instead of waking it (two wake-ups, 0.1 ms each on a VM).
        if fds.is_empty() {
            lock().copy_out();
            return;
        }
    }
}
