//! The perf_event tracer's account of itself in results.json (`threads.tracer`): what it cost,
//! what it lost, how much of the run it covered, and the threads it followed.

use serde::{Deserialize, Serialize};

/// The tracer's account in results.json.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TracerReport {
    /// CPU seconds the tracer used.
    pub cpu_s: f64,
    /// Records the kernel dropped (a full buffer): never silent.
    pub lost_records: u64,
    /// On-CPU samples, and how many unwound.
    pub samples: u64,
    /// See `samples`.
    pub unwound: u64,
    /// Times threads left a CPU.
    pub switches: u64,
    /// Thread seconds on a CPU, from the switch records.
    pub on_cpu_s: f64,
    /// Thread seconds off a CPU after a wait began (wake-up latency included).
    pub off_cpu_waiting_s: f64,
    /// Thread seconds off a CPU after a preemption.
    pub off_cpu_preempted_s: f64,
    /// Every CPU covered and nothing lost: the intervals are exact.
    pub exact: bool,
    /// The kernel's typical switch from one traced thread to another (median, microseconds),
    /// counted on the CPU as schedstat counts it; absent (0) when too few were seen.
    #[serde(default, skip_serializing_if = "unmeasured")]
    pub switch_us: f64,
    /// CPUs with a buffer, of those the job may use.
    pub cpus_covered: usize,
    /// See `cpus_covered`.
    pub cpus_wanted: usize,
    /// Buffer per CPU, KiB.
    pub buffer_kib: usize,
    /// The threads with the most time on a CPU (up to 16), exact.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub threads: Vec<TracedThread>,
    /// Seconds after its start at which the tracer stopped itself (the job switched too often to
    /// be watched switch by switch): the figures above cover that stretch only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped_s: Option<f64>,
}

/// Whether a figure was never measured (0).
fn unmeasured(x: &f64) -> bool {
    *x == 0.0
}

/// One traced thread's exact times.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TracedThread {
    /// Thread id.
    pub tid: i32,
    /// Process id.
    pub pid: i32,
    /// Seconds on a CPU.
    pub on_cpu_s: f64,
    /// Seconds off a CPU after a wait began (wake-up latency included).
    pub off_cpu_waiting_s: f64,
    /// Seconds off a CPU after a preemption.
    pub off_cpu_preempted_s: f64,
    /// Times it left a CPU.
    pub switches: u64,
}

impl TracerReport {
    /// Adds another rank's tracer.
    pub fn absorb(&mut self, o: &TracerReport) {
        self.cpu_s += o.cpu_s;
        self.lost_records += o.lost_records;
        self.samples += o.samples;
        self.unwound += o.unwound;
        self.switches += o.switches;
        self.on_cpu_s += o.on_cpu_s;
        self.off_cpu_waiting_s += o.off_cpu_waiting_s;
        self.off_cpu_preempted_s += o.off_cpu_preempted_s;
        self.exact &= o.exact;
        self.stopped_s = match (self.stopped_s, o.stopped_s) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        self.switch_us = self.switch_us.max(o.switch_us);
        self.threads.extend(o.threads.iter().cloned());
    }
}
