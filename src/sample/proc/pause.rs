//! The sampler's pause between sweeps: it ends at the interval, at a stop asked by the thread that
//! started the sampler, or as soon as the root process exits. Ending at the exit lets the sampler
//! take its last sweep and build its report while scalescope is still being told the run is over,
//! instead of after (a run's report took 0.2-0.3 ms on the project's VM, on every run).
//!
//! The exit is watched from [`ROOT_WATCHED_AFTER`] into the run only: the exit wakes the sampler
//! in the same instant as the spawn helper that stops the run's clock, and with two CPUs the two
//! wakes cost `true` about 3% of its time (1.093× hyperfine's with it, 1.066× without, 8 rounds of
//! 300 runs each). A run that short has little to report, built once it is over.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::{Duration, Instant};

/// How far into a run the root's exit starts to end a pause.
const ROOT_WATCHED_AFTER: Duration = Duration::from_millis(1);

/// An eventfd to wake the sampler and, where the kernel has pidfds (Linux 5.3), the root's.
pub(crate) struct Pause {
    wake: OwnedFd,
    root: Option<OwnedFd>,
    /// When the root's exit starts to count.
    watched_from: Instant,
}

/// Why a pause ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Woken {
    /// The interval passed.
    Interval,
    /// A stop was asked, or the root process exited.
    End,
}

impl Pause {
    /// A pause watching `root`; None when no eventfd can be made (the sampler then parks).
    pub fn new(root: i32) -> Option<Pause> {
        // SAFETY: eventfd returns a new descriptor or -1.
        let fd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) };
        if fd < 0 {
            return None;
        }
        // SAFETY: pidfd_open returns a new descriptor or -1; a refusal (old kernel, the process
        // gone already) leaves the root unwatched, as before.
        let pidfd = unsafe { libc::syscall(libc::SYS_pidfd_open, root, 0) } as i32;
        // SAFETY: both descriptors are new and owned here.
        Some(Pause {
            wake: unsafe { OwnedFd::from_raw_fd(fd) },
            root: (pidfd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(pidfd) }),
            watched_from: Instant::now() + ROOT_WATCHED_AFTER,
        })
    }

    /// Waits up to `d`.
    pub fn sleep(&self, d: Duration) -> Woken {
        let end = Instant::now() + d;
        let early = self.watched_from.saturating_duration_since(Instant::now()).min(d);
        if !early.is_zero() && self.poll(false, early) {
            return Woken::End;
        }
        let rest = end.saturating_duration_since(Instant::now());
        if !rest.is_zero() && self.poll(true, rest) { Woken::End } else { Woken::Interval }
    }

    /// Polls the wake descriptor (and the root's, with `root`) for up to `d`; whether one is ready.
    fn poll(&self, root: bool, d: Duration) -> bool {
        let mut fds =
            [libc::pollfd { fd: self.wake.as_raw_fd(), events: libc::POLLIN, revents: 0 }; 2];
        let n = match (&self.root, root) {
            (Some(r), true) => {
                fds[1].fd = r.as_raw_fd();
                2
            }
            _ => 1,
        };
        let t = libc::timespec {
            tv_sec: d.as_secs() as libc::time_t,
            tv_nsec: d.subsec_nanos() as libc::c_long,
        };
        // SAFETY: `fds` holds `n` initialised entries; the timeout is plain data.
        let ready =
            unsafe { libc::ppoll(fds.as_mut_ptr(), n as libc::nfds_t, &t, std::ptr::null()) };
        ready > 0 && fds[..n].iter().any(|f| f.revents != 0)
    }

    /// Ends the current or next pause at once.
    pub fn wake(&self) {
        let one: u64 = 1;
        // SAFETY: writes eight bytes from a local to the eventfd owned here.
        unsafe { libc::write(self.wake.as_raw_fd(), (&one as *const u64).cast(), 8) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pause_ends_at_the_interval_at_a_wake_and_when_the_root_exits() {
        let mut child = std::process::Command::new("sleep").arg("0.2").spawn().unwrap();
        let p = Pause::new(child.id() as i32).expect("an eventfd");
        assert!(p.root.is_some(), "pidfd_open is in every kernel since 5.3");
        assert_eq!(p.sleep(Duration::from_millis(5)), Woken::Interval);
        let t = Instant::now();
        assert_eq!(p.sleep(Duration::from_secs(10)), Woken::End);
        assert!(t.elapsed() < Duration::from_secs(5), "woken by the exit, not the interval");
        child.wait().unwrap();
        let q = Pause::new(std::process::id() as i32).unwrap();
        q.wake();
        assert_eq!(q.sleep(Duration::from_secs(10)), Woken::End);
    }

    #[test]
    fn an_exit_counts_only_once_the_root_is_watched() {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let mut p = Pause::new(child.id() as i32).expect("an eventfd");
        // Exited, not reaped: its pidfd is readable from now on.
        while std::fs::read_to_string(format!("/proc/{}/stat", child.id()))
            .is_ok_and(|s| !s.contains(") Z "))
        {
            std::thread::sleep(Duration::from_millis(1));
        }
        p.watched_from = Instant::now() + Duration::from_millis(50);
        assert_eq!(p.sleep(Duration::from_millis(20)), Woken::Interval, "not watched yet");
        assert_eq!(p.sleep(Duration::from_secs(10)), Woken::End, "watched from 50 ms on");
        child.wait().unwrap();
    }
}
