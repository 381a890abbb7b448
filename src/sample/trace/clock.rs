//! The clock the tracer's events stamp their records with (CLOCK_MONOTONIC, the events'
//! `clockid`), read by everything that compares its own instants with theirs.

/// Now on CLOCK_MONOTONIC, in nanoseconds.
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: ts is a valid out-pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}
