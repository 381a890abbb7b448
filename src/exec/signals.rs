//! Ctrl-C, SIGTERM and SIGHUP during a sweep: the first one stops the running workload's process
//! group (SIGTERM, then SIGKILL after a grace period) and lets the sweep save and stop; a second
//! one kills the group and exits at once (the results file on disk is always complete).

use std::sync::atomic::{AtomicI32, AtomicU32, Ordering};

static INTERRUPTS: AtomicU32 = AtomicU32::new(0);
static SIGNAL: AtomicI32 = AtomicI32::new(0);
static CURRENT_GROUP: AtomicI32 = AtomicI32::new(0);

/// Seconds between SIGTERM and SIGKILL when stopping a workload.
pub const GRACE_S: u32 = 2;

/// Installs the handlers; call once before the first run.
pub fn install() {
    #[cfg(unix)]
    unsafe {
        let mut act: libc::sigaction = std::mem::zeroed();
        act.sa_sigaction = on_interrupt as *const () as usize;
        act.sa_flags = libc::SA_RESTART;
        libc::sigemptyset(&mut act.sa_mask);
        for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
            libc::sigaction(sig, &act, std::ptr::null_mut());
        }
        act.sa_sigaction = on_alarm as *const () as usize;
        libc::sigaction(libc::SIGALRM, &act, std::ptr::null_mut());
    }
}

/// Whether the user asked scalescope to stop.
pub fn interrupted() -> bool {
    INTERRUPTS.load(Ordering::SeqCst) > 0
}

/// The signal that interrupted the sweep (SIGINT, SIGTERM or SIGHUP), if any.
pub fn interrupt_signal() -> Option<i32> {
    interrupted().then(|| SIGNAL.load(Ordering::SeqCst))
}

/// Marks `pgid` as the process group to stop on interrupt (0: none running).
pub fn set_current_group(pgid: i32) {
    CURRENT_GROUP.store(pgid, Ordering::SeqCst);
    if pgid > 0 && interrupted() {
        // The interrupt arrived while the group was being started.
        unsafe { libc::kill(-pgid, libc::SIGTERM) };
    }
}

extern "C" fn on_interrupt(sig: libc::c_int) {
    let n = INTERRUPTS.fetch_add(1, Ordering::SeqCst);
    SIGNAL.store(sig, Ordering::SeqCst);
    let group = CURRENT_GROUP.load(Ordering::SeqCst);
    // SAFETY: kill, alarm and _exit are async-signal-safe.
    unsafe {
        if n >= 1 {
            if group > 0 {
                libc::kill(-group, libc::SIGKILL);
            }
            libc::_exit(128 + sig);
        }
        if group > 0 {
            libc::kill(-group, libc::SIGTERM);
            libc::alarm(GRACE_S);
        }
    }
}

extern "C" fn on_alarm(_: libc::c_int) {
    let group = CURRENT_GROUP.load(Ordering::SeqCst);
    if group > 0 {
        // SAFETY: kill is async-signal-safe.
        unsafe { libc::kill(-group, libc::SIGKILL) };
    }
}
