//! The record of one measured run, and of each rank or copy of a launched run, as stored in
//! results.json.

use super::ThreadReport;
use crate::pagecache::Eviction;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Everything measured about one run of one point.
#[derive(Clone, Debug, Default, Serialize, Deserialize, schemars::JsonSchema, PartialEq)]
pub struct RunRecord {
    /// Position of this run among the point's measured runs (0-based).
    pub index: u32,
    /// The interleaved round the run was taken in (one run of every point that needed one), when
    /// the sweep ran in rounds: runs of one round are paired by the analysis.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub round: Option<u32>,
    /// When the run started, seconds since the Unix epoch.
    pub started_unix_s: f64,
    /// Wall-clock time from spawn to exit (monotonic clock).
    pub wall_s: f64,
    /// User CPU time of the process and its waited-for descendants (`wait4`).
    pub user_s: f64,
    /// System CPU time of the process and its waited-for descendants (`wait4`).
    pub sys_s: f64,
    /// (user + sys) / wall × 100: 400 means four CPUs busy on average.
    pub cpu_pct: f64,
    /// Largest resident set of any process of the run.
    pub max_rss_bytes: u64,
    /// Context switches where a thread gave up the CPU (waits).
    pub voluntary_switches: u64,
    /// Context switches where a thread was preempted.
    pub involuntary_switches: u64,
    /// Page faults served without I/O.
    pub minor_faults: u64,
    /// Page faults that needed I/O.
    pub major_faults: u64,
    /// Bytes read from storage (block input × 512).
    pub storage_read_bytes: u64,
    /// Bytes written to storage (block output × 512).
    pub storage_write_bytes: u64,
    /// Bytes passed to read-like system calls by the process tree (`/proc/<pid>/io` rchar).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub syscall_read_bytes: Option<u64>,
    /// Bytes passed to write-like system calls by the process tree (`/proc/<pid>/io` wchar).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub syscall_write_bytes: Option<u64>,
    /// Exit code when the program exited; absent when a signal ended it.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub exit_code: Option<i32>,
    /// The signal that ended the program, if one did.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub signal: Option<i32>,
    /// Processes the run left running outside its process group (daemons), killed after it.
    #[serde(default, skip_serializing_if = "super::is_zero")]
    pub stray_processes: u32,
    /// Whether scalescope stopped the run at `--timeout`.
    #[serde(default)]
    pub timed_out: bool,
    /// Figures read from the output (`--metric`, `scalescope-metric` lines).
    #[serde(default)]
    pub metrics: Map<String, Value>,
    /// `--metric` extractors that found nothing in this run.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub missing_metrics: Vec<String>,
    /// Nanoseconds a fixed loop of a million integer steps took on one CPU just before the run
    /// (the fastest of four tries): the machine's own pace then, which tells a slower machine
    /// from a slower program.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub pace_ns: Option<f64>,
    /// Nanoseconds a load of a walk through memory took just before the run (a buffer twice the
    /// last-level cache, each load's address read by the one before; the fastest of three tries
    /// of 4,000 loads): the machine's memory then, which other guests of a host share.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub memory_pace_ns: Option<f64>,
    /// Work done per `--work`, divided by wall time; or the `throughput` metric.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub throughput: Option<f64>,
    /// Page-cache state of the `--evict` inputs before the run.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub evict: Option<Box<Eviction>>,
    /// Where the run's thread time went (the sampler's report), when sampled.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub threads: Option<Box<ThreadReport>>,
    /// Captured stdout, relative to the results folder.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub stdout: Option<Box<OutputFile>>,
    /// Captured stderr, relative to the results folder.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub stderr: Option<Box<OutputFile>>,
    /// What each rank or copy measured, when launched through `scalescope agent`.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub ranks: Vec<RankPart>,
    /// Ranks that never reported (crashed before writing, or never started).
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub missing_ranks: Vec<u32>,
}

impl RunRecord {
    /// Whether the run finished by itself with exit code 0.
    pub fn succeeded(&self) -> bool {
        self.exit_code == Some(0) && !self.timed_out
    }

    /// Seconds the run was held stopped (SIGSTOP, Ctrl-Z, a batch system suspending the job), as
    /// the sampler saw it; 0 when not sampled.
    pub fn stopped_s(&self) -> f64 {
        self.threads.as_deref().map_or(0.0, |t| t.stopped_s)
    }

    /// Whether the run was held stopped long enough to change its time ([`HELD_SHARE`] of its wall
    /// time, at least [`HELD_MIN_S`]): it is kept in the results, left out of the statistics.
    pub fn held(&self) -> bool {
        let s = self.stopped_s();
        s >= HELD_MIN_S && s >= HELD_SHARE * self.wall_s
    }

    /// The share after which the run was watched lean, when it was (see
    /// [`super::ThreadReport::lean`]).
    pub fn lean(&self) -> Option<f64> {
        self.threads.as_deref()?.lean
    }

    /// Whether the run counts in the statistics: it succeeded and was not held stopped.
    pub fn counted(&self) -> bool {
        self.succeeded() && !self.held()
    }

    /// How the run ended, in words: `exit code 1`, `killed by SIGSEGV`, `timed out`.
    pub fn outcome(&self) -> String {
        if self.timed_out {
            return "timed out".into();
        }
        match (self.exit_code, self.signal) {
            (Some(0), _) => "ok".into(),
            (Some(127), _) => "exit code 127 (command not found?)".into(),
            (Some(c), _) => format!("exit code {c}"),
            (None, Some(s)) => format!("killed by {}", signal_name(s)),
            (None, None) => "unknown".into(),
        }
    }

    /// A metric's numeric value, if this run has it.
    pub fn metric(&self, name: &str) -> Option<f64> {
        self.metrics.get(name).and_then(|v| v.as_f64())
    }

    /// The CPUs other processes kept busy during the run, on average (0.9 = most of one CPU): the
    /// machine's busy time less the job's and scalescope's own, per second of the run. Absent when
    /// the run was not sampled or `/proc/stat` was unreadable.
    pub fn others_cpus(&self) -> Option<f64> {
        let t = self.threads.as_deref()?;
        let m = t.machine_cpu?;
        let own = self.user_s + self.sys_s + t.scalescope_cpu_s;
        (self.wall_s > 0.0).then(|| (m.busy_s - own).max(0.0) / self.wall_s)
    }
}

/// A run held stopped this long, and for [`HELD_SHARE`] of its wall time, is left out.
pub const HELD_MIN_S: f64 = 0.1;
/// The share of a run's wall time held stopped past which it is left out.
pub const HELD_SHARE: f64 = 0.02;

/// What one rank measured.
#[derive(Clone, Debug, Default, Serialize, Deserialize, schemars::JsonSchema, PartialEq)]
pub struct RankPart {
    /// Rank (MPI, SLURM task id) or copy number, from 0.
    pub rank: u32,
    /// Host it ran on.
    pub node: String,
    /// Wall time from its spawn to its exit.
    pub wall_s: f64,
    /// When it was spawned, seconds since the Unix epoch on its node's clock (absent from parts
    /// recorded before it was kept): lays the copies' series on one clock.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub started_unix_s: Option<f64>,
    /// User CPU seconds (its process tree).
    pub user_s: f64,
    /// System CPU seconds.
    pub sys_s: f64,
    /// Peak resident set.
    pub max_rss_bytes: u64,
    /// Bytes read through read calls, when readable.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub syscall_read_bytes: Option<u64>,
    /// Bytes read from storage.
    #[serde(default)]
    pub storage_read_bytes: u64,
    /// Exit code, when it exited.
    pub exit_code: Option<i32>,
    /// Terminating signal, when killed.
    pub signal: Option<i32>,
    /// Metrics read from its output.
    #[serde(default)]
    pub metrics: Map<String, Value>,
    /// Where its threads' time went, when sampled.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub threads: Option<ThreadReport>,
    /// When it failed, the last lines it printed (stderr, or stdout when stderr is empty; control
    /// characters removed; absent for binary output): the failed copy's own, which the run's
    /// output mixes with every other copy's.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub printed: Option<String>,
}

impl RankPart {
    /// Whether the rank exited with code 0.
    pub fn succeeded(&self) -> bool {
        self.exit_code == Some(0)
    }

    /// The exit code its agent left with: the command's, or 128 + the signal that killed it.
    pub fn agent_exit_code(&self) -> i32 {
        match (self.exit_code, self.signal) {
            (Some(c), _) => c,
            (_, Some(s)) => 128 + s,
            _ => 1,
        }
    }
}

/// A captured output stream saved in the results folder.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema, PartialEq)]
pub struct OutputFile {
    /// Path relative to the results folder.
    pub path: String,
    /// Bytes the program printed in all.
    pub bytes: u64,
    /// Whether the middle was dropped to bound the file's size.
    #[serde(default)]
    pub truncated: bool,
}

/// The conventional name of a signal (`SIGSEGV`), or its number.
pub fn signal_name(sig: i32) -> String {
    let name = match sig {
        libc::SIGHUP => "SIGHUP",
        libc::SIGINT => "SIGINT",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGILL => "SIGILL",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGALRM => "SIGALRM",
        libc::SIGTERM => "SIGTERM",
        libc::SIGXCPU => "SIGXCPU",
        _ => return format!("signal {sig}"),
    };
    name.into()
}
