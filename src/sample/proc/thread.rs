//! One thread followed through /proc: its files, kept open and re-read, and the counters read at
//! the previous sweep.

use super::cpu::CpuSampler;
use super::procfs::{self, ProcFile};
use std::path::PathBuf;

/// Context switches and I/O bytes are read every this many sweeps of a thread that ran.
const DETAIL_EVERY: u64 = 10;

/// Files and counters of one thread.
pub(crate) struct Thread {
    pub pid: i32,
    pub dir: PathBuf,
    pub comm: String,
    pub stat: ProcFile,
    pub schedstat: ProcFile,
    /// Opened the first time the thread is seen off-CPU.
    pub syscall: Option<ProcFile>,
    pub wchan: Option<ProcFile>,
    pub opened_wait_files: bool,
    /// Its track in the history.
    pub track: usize,
    /// Start, seconds since boot.
    pub start_boot_s: f64,
    /// Seconds since sampling began at which its counters were last read.
    pub read_at: f64,
    pub on_ns: u64,
    pub runq_ns: u64,
    pub utime: u64,
    pub stime: u64,
    /// The wait (label) it was in at the latest sweep, if it was off-CPU.
    pub waiting: Option<u32>,
    /// The latest short wait the catcher read it in since that sweep: seconds since sampling
    /// began, and its label.
    pub caught: Option<(f64, u32)>,
    /// State letter at the latest sweep that read it.
    pub state: char,
    /// Sweeps that read it.
    pub samples: u64,
    /// Sweeps after which its counters had moved.
    pub moved: u64,
    /// On-CPU code sampling, where allowed.
    pub cpu: Option<CpuSampler>,
    status: Option<ProcFile>,
    io: Option<ProcFile>,
    /// Voluntary and involuntary context switches, as last read.
    pub switches: (u64, u64),
    /// Storage bytes read and written, as last read.
    pub io_bytes: (u64, u64),
    pub alive: bool,
    /// Its process's resident set when it was found, in pages.
    pub rss_pages: u64,
}

impl Thread {
    /// Opens a thread's stat and schedstat; `None` when it is gone.
    pub fn open(pid: i32, tid: i32, track: usize, tick: f64) -> Option<Thread> {
        let dir = PathBuf::from(format!("/proc/{pid}/task/{tid}"));
        let mut stat = ProcFile::open(&dir.join("stat"))?;
        let schedstat = ProcFile::open(&dir.join("schedstat"))?;
        let st = stat.read().and_then(procfs::stat)?;
        Some(Thread {
            pid,
            dir,
            comm: st.comm,
            stat,
            schedstat,
            syscall: None,
            wchan: None,
            opened_wait_files: false,
            track,
            start_boot_s: st.starttime as f64 / tick,
            read_at: 0.0,
            on_ns: 0,
            runq_ns: 0,
            utime: st.utime,
            stime: st.stime,
            waiting: None,
            caught: None,
            state: st.state,
            samples: 0,
            moved: 0,
            cpu: None,
            status: None,
            io: None,
            switches: (0, 0),
            io_bytes: (0, 0),
            alive: true,
            rss_pages: st.rss_pages,
        })
    }

    /// After a sweep that found its counters moved: now and then, the context switches and I/O
    /// bytes (costlier files).
    pub fn moved(&mut self) {
        self.moved += 1;
        if self.moved % DETAIL_EVERY != 1 {
            return;
        }
        if self.status.is_none() {
            self.status = ProcFile::open(&self.dir.join("status"));
        }
        if let Some(v) = self.status.as_mut().and_then(|f| f.read()).and_then(procfs::switches) {
            self.switches = v;
        }
        if self.io.is_none() {
            self.io = ProcFile::open(&self.dir.join("io"));
        }
        if let Some(v) = self.io.as_mut().and_then(|f| f.read()).and_then(procfs::io) {
            self.io_bytes = v;
        }
    }

    /// Share of its CPU time spent in user mode, from stat's ticks.
    pub fn user_share(&self) -> f64 {
        let ticks = (self.utime + self.stime) as f64;
        if ticks > 0.0 { self.utime as f64 / ticks } else { 1.0 }
    }
}
