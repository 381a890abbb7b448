//! What the sampler found in one run, as stored in results.json (`threads`): thread time by class
//! (seconds summed over threads), the top wait sites, a compact timeline, the concurrency
//! histogram, its own cost and its limits; reports of several ranks add up.

use super::{Capacity, Class, RunMemory, RunSeries, StackProfile, TracerReport};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The thread-time breakdown of one run (stored as `threads` in each run of results.json).
#[derive(Clone, Debug, Default, Serialize, Deserialize, schemars::JsonSchema, PartialEq)]
pub struct ThreadReport {
    /// Seconds the sampler watched the tree.
    pub wall_s: f64,
    /// Seconds of thread time by class, summed over every thread seen.
    pub classes: BTreeMap<Class, f64>,
    /// Threads seen.
    pub threads_seen: usize,
    /// Processes seen.
    pub processes_seen: usize,
    /// Most threads alive at once.
    pub peak_threads: usize,
    /// Sweeps over the tree.
    pub samples: u64,
    /// Sweeps per second actually achieved (lowered automatically with many threads).
    pub sample_rate_hz: f64,
    /// CPU time the sampler itself used.
    pub sampler_cpu_s: f64,
    /// Of that, the work its rate budget leaves out: opening each new thread's files, reading a
    /// module's symbols and unwinding tables the first time, starting and draining the tracer,
    /// naming the short waits it caught (absent from results recorded before it was kept).
    #[serde(default, skip_serializing_if = "super::is_zero")]
    pub sampler_oneoff_cpu_s: f64,
    /// Seconds the run was held stopped (SIGSTOP, Ctrl-Z, a batch system suspending the job): not
    /// the program's time, so a run held long is left out of the statistics.
    #[serde(default, skip_serializing_if = "super::is_zero")]
    pub stopped_s: f64,
    /// The largest wait sites, the work threads' first: locks by symbol, kernel waits by system
    /// call.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub top_waits: Vec<Wait>,
    /// Threads on a CPU, runnable and in each class over time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeline: Option<Timeline>,
    /// Seconds spent with 0, 1, 2… threads on a CPU.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub concurrency_s: Vec<f64>,
    /// Voluntary context switches (waits) summed over threads, as last read.
    #[serde(default)]
    pub voluntary_switches: u64,
    /// Involuntary context switches (preemptions) summed over threads, as last read.
    #[serde(default)]
    pub involuntary_switches: u64,
    /// Bytes the threads read from storage, as last read.
    #[serde(default)]
    pub read_bytes: u64,
    /// Bytes the threads wrote to storage, as last read.
    #[serde(default)]
    pub write_bytes: u64,
    /// Where on-CPU time went, by function (sampled with perf_event_open where allowed).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hot: Vec<Hot>,
    /// The threads with the most time on a CPU (up to 16).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub threads: Vec<ThreadSummary>,
    /// What could not be seen, and how classification degraded.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub limits: Vec<String>,
    /// How the run used the CPUs it could use: the accounting findings rest on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity: Option<Capacity>,
    /// Call stacks on and off a CPU, by phase (where stacks could be taken).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stacks: Option<StackProfile>,
    /// The event tracer's account of itself (where the kernel allowed it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tracer: Option<TracerReport>,
    /// CPU time all of scalescope's threads used while the run was sampled: the sampler, the
    /// tracer's collector, the thread reading the run's output (absent from results recorded
    /// before it was kept). What watching the job cost the machine.
    #[serde(default, skip_serializing_if = "super::is_zero")]
    pub scalescope_cpu_s: f64,
    /// The whole machine's CPU time while the run was sampled, from `/proc/stat` (absent where it
    /// is unreadable, and in results recorded before it was kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine_cpu: Option<MachineCpu>,
    /// Watched lean, without the event tracer and with the sampler at most [`LEAN_RATE_HZ`]: the
    /// share of its CPU capacity an earlier, traced run of the point kept busy or wanted (its
    /// threads ready in the run queue), at least [`LEAN_BUSY`]. The tracer explains idle CPUs and
    /// that run left almost none, while on busy CPUs watching takes its time from the job
    /// (absent: watched in full).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lean: Option<f64>,
    /// The tree's memory: peak and time-weighted mean PSS and RSS over all its processes (absent
    /// when no reading was taken, and in results recorded before it was kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<RunMemory>,
    /// The run as a time series: CPU, memory, I/O, processes and threads at each memory reading.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub series: Option<RunSeries>,
}

/// The share of its CPU capacity a traced run must keep busy for the point's later runs to be
/// watched lean (see [`ThreadReport::lean`]).
pub const LEAN_BUSY: f64 = 0.95;

/// The sampler's highest rate in a run watched lean, Hz.
pub const LEAN_RATE_HZ: f64 = 20.0;

/// The whole machine's CPU time during a run, summed over its CPUs (every process, not only the
/// job's): how busy it was, and how much a hypervisor took from it.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, schemars::JsonSchema, PartialEq)]
pub struct MachineCpu {
    /// CPU-seconds the machine's CPUs were busy (user, nice, system, interrupts).
    pub busy_s: f64,
    /// CPU-seconds stolen: a virtual CPU wanted to run and the hypervisor ran another guest
    /// (`steal` in /proc/stat; 0 on real hardware). Time stolen from a thread counts as its time
    /// on a CPU for the tracer and off it for schedstat.
    pub stolen_s: f64,
    /// The mean clock frequency of (up to 8 of) the CPUs the job could use, at the run's start
    /// and end, MHz; absent where the kernel does not show it (most virtual machines).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mhz: Option<f64>,
}

impl MachineCpu {
    /// The share of the time the CPUs wanted to run that the hypervisor took.
    pub fn stolen_share(&self) -> f64 {
        let wanted = self.busy_s + self.stolen_s;
        if wanted > 0.0 { self.stolen_s / wanted } else { 0.0 }
    }
}

impl ThreadReport {
    /// Adds another process's report (another rank of the same run): class times, counts and
    /// waits add up, the wall time is the longer one; the timeline and hot functions stay this one's.
    pub fn absorb(&mut self, o: &ThreadReport) {
        self.wall_s = self.wall_s.max(o.wall_s);
        for (c, s) in &o.classes {
            *self.classes.entry(*c).or_default() += s;
        }
        self.threads_seen += o.threads_seen;
        self.processes_seen += o.processes_seen;
        self.peak_threads += o.peak_threads;
        self.samples += o.samples;
        self.sampler_cpu_s += o.sampler_cpu_s;
        self.sampler_oneoff_cpu_s += o.sampler_oneoff_cpu_s;
        self.voluntary_switches += o.voluntary_switches;
        self.involuntary_switches += o.involuntary_switches;
        self.read_bytes += o.read_bytes;
        self.write_bytes += o.write_bytes;
        self.scalescope_cpu_s += o.scalescope_cpu_s;
        // Another rank's machine (or the same one, seen again): the larger account stands.
        if o.machine_cpu.is_some_and(|m| {
            self.machine_cpu.is_none_or(|s| m.busy_s + m.stolen_s > s.busy_s + s.stolen_s)
        }) {
            self.machine_cpu = o.machine_cpu;
        }
        match (&mut self.capacity, &o.capacity) {
            (Some(a), Some(b)) => a.absorb(b),
            (None, Some(b)) => self.capacity = Some(b.clone()),
            _ => {}
        }
        match (&mut self.memory, &o.memory) {
            (Some(a), Some(b)) => a.absorb(b),
            (None, Some(b)) => self.memory = Some(*b),
            _ => {}
        }
        if self.series.is_none() {
            self.series.clone_from(&o.series);
        }
        for w in &o.top_waits {
            match self.top_waits.iter_mut().find(|m| m.name == w.name && m.class == w.class) {
                Some(m) => {
                    m.seconds += w.seconds;
                    m.work_s += w.work_s;
                    m.waiters += w.waiters;
                }
                None => self.top_waits.push(w.clone()),
            }
        }
        sort_waits(&mut self.top_waits);
        for (i, s) in o.concurrency_s.iter().enumerate() {
            if i >= self.concurrency_s.len() {
                self.concurrency_s.push(0.0);
            }
            self.concurrency_s[i] += s;
        }
        self.threads.extend(o.threads.iter().cloned());
        match (&mut self.stacks, &o.stacks) {
            (Some(a), Some(b)) => a.absorb(b),
            (None, Some(b)) => self.stacks = Some(b.clone()),
            _ => {}
        }
        match (&mut self.tracer, &o.tracer) {
            (Some(a), Some(b)) => a.absorb(b),
            (None, Some(b)) => self.tracer = Some(b.clone()),
            _ => {}
        }
        for l in &o.limits {
            if !self.limits.contains(l) {
                self.limits.push(l.clone());
            }
        }
    }

    /// Total thread time.
    pub fn total_s(&self) -> f64 {
        self.classes.values().sum()
    }

    /// Seconds in one class.
    pub fn seconds(&self, class: Class) -> f64 {
        self.classes.get(&class).copied().unwrap_or(0.0)
    }
}

/// One thread's figures.
#[derive(Clone, Debug, Default, Serialize, Deserialize, schemars::JsonSchema, PartialEq)]
pub struct ThreadSummary {
    /// Thread id.
    pub tid: i32,
    /// Process id.
    pub pid: i32,
    /// Thread name.
    pub name: String,
    /// Seconds on a CPU.
    pub on_cpu_s: f64,
    /// Seconds waiting for a CPU.
    pub runqueue_s: f64,
    /// Seconds off-CPU.
    pub off_cpu_s: f64,
    /// The class that took most of its off-CPU time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub main_wait: Option<Class>,
    /// Voluntary context switches.
    pub voluntary_switches: u64,
    /// Involuntary context switches.
    pub involuntary_switches: u64,
    /// Bytes read from storage.
    pub read_bytes: u64,
    /// Bytes written to storage.
    pub write_bytes: u64,
    /// Whether it did the work (ran a meaningful share of the run), as opposed to a helper.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub work: bool,
}

/// A function where threads spent CPU time.
#[derive(Clone, Debug, Default, Serialize, Deserialize, schemars::JsonSchema, PartialEq)]
pub struct Hot {
    /// The function (module and symbol), or the module and offset without symbols.
    pub name: String,
    /// Samples that landed in it.
    pub samples: u64,
    /// Its share of all on-CPU samples.
    pub share: f64,
}

/// One wait site.
#[derive(Clone, Debug, Default, Serialize, Deserialize, schemars::JsonSchema, PartialEq)]
pub struct Wait {
    /// The class of the wait.
    pub class: Option<Class>,
    /// `scalescope::probes::lock::GLOBAL_LOCK+0x0`, `heap 0x5555…`, `mprotect in rwsem_down_write_slowpath`.
    pub name: String,
    /// Thread seconds spent waiting there.
    pub seconds: f64,
    /// Of them, the work threads' (a runtime's helper threads wait the whole run and idle no
    /// CPU): what orders the waits (absent in documents from before it was recorded).
    #[serde(default, skip_serializing_if = "super::is_zero")]
    pub work_s: f64,
    /// Distinct threads seen waiting there.
    pub waiters: usize,
    /// Names of those threads (first few).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub thread_names: Vec<String>,
    /// How the threads behaved around it: turn-taking, or a feeder running while they waited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub around: Option<Around>,
    /// Where the wait is taken, from the waiting threads' stacks:
    /// `pthread_mutex_lock ← update_histogram ← worker`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub taken_at: Option<String>,
}

/// What ran while threads waited on one object (see the behaviour of waits in docs/findings.md).
#[derive(Clone, Debug, Default, Serialize, Deserialize, schemars::JsonSchema, PartialEq)]
pub struct Around {
    /// While one waited, the mean number of the other threads that wait on it running
    /// (turn-taking: near 1 for threads serialised on a lock).
    pub members_running: f64,
    /// While they waited, the mean number of threads that never wait on it running.
    pub others_running: f64,
    /// How many of its waiters ran at once (90th percentile over time).
    pub members_peak: f64,
    /// The thread that ran most while they waited, among those that never wait on it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feeder: Option<Feeder>,
    /// What the threads that never wait on it were waiting on meanwhile, largest first
    /// (`'pigz' on read in pipe_read (80% of the time)`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub meanwhile: Vec<String>,
    /// Share of the waiting done after the waiter last ran: threads done with their work waiting
    /// for the others, rather than waiting between pieces of work (absent in documents from
    /// before it was recorded).
    #[serde(default, skip_serializing_if = "is_none_finished")]
    pub finished: f64,
}

fn is_none_finished(share: &f64) -> bool {
    *share == 0.0
}

/// A thread that runs while others wait for it.
#[derive(Clone, Debug, Default, Serialize, Deserialize, schemars::JsonSchema, PartialEq)]
pub struct Feeder {
    /// Its name.
    pub name: String,
    /// Its thread id (threads of one program often share a name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tid: Option<i32>,
    /// It is its process's main thread (its tid is the pid), which tells it from workers of the
    /// same name when the tid changes from run to run.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub main: bool,
    /// It belongs to another process than the one whose private memory (its `[heap]`, its main
    /// thread's stack) holds the futex they wait on, so it cannot wake them: it ran beside them
    /// (a child the job started), it did not feed them.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cannot_wake: bool,
    /// Share of the waiting time during which it ran.
    pub running: f64,
    /// Share of its own time it spent on a CPU.
    pub busy: f64,
    /// Share of its own time it spent waiting for work itself: a peer of the waiting threads
    /// rather than what feeds them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waits_for_work: Option<f64>,
    /// Share of its on-CPU samples in code the waiting threads run as much (the same chains of
    /// callers): near 1 for a peer doing their work, near 0 for a thread that does other work
    /// (absent without on-CPU stacks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub same_code: Option<f64>,
    /// The waiting threads' own share of time on a CPU (mean over them), to set its `busy` against.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waiters_busy: Option<f64>,
    /// Its largest wait when not running (`io on read in folio_wait_bit_common`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waits: Option<String>,
}

/// Average number of threads in each state per time bin.
#[derive(Clone, Debug, Default, Serialize, Deserialize, schemars::JsonSchema, PartialEq)]
pub struct Timeline {
    /// Width of a bin in seconds.
    pub bin_s: f64,
    /// Threads on a CPU, per bin.
    pub running: Vec<f32>,
    /// Threads waiting for a CPU, per bin.
    pub runnable: Vec<f32>,
    /// Threads off-CPU by class, per bin.
    pub waiting: BTreeMap<Class, Vec<f32>>,
}

/// Orders waits as a run lists them: the work threads' first, by their seconds, then by all
/// seconds.
pub fn sort_waits(waits: &mut [Wait]) {
    waits.sort_by(|a, b| b.work_s.total_cmp(&a.work_s).then(b.seconds.total_cmp(&a.seconds)));
}
