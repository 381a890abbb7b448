//! Speed-up stacks: at each count of workers, the count split into the measured speed-up, the
//! cores each cause of lost capacity took, and what nothing explains (after Eyerman and
//! Eeckhout's speed-up stacks). Made by the diagnosis from each point's capacity ledger.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One count's stack: `count = speedup + Σ parts + unexplained`, exact to rounding.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct SpeedupStack {
    /// The series' label (empty when the sweep has one series).
    #[serde(skip_serializing_if = "String::is_empty", default)]
    pub series: String,
    /// Index of the point in `points`.
    pub point: usize,
    /// The count: the stack's height, in cores.
    pub count: f64,
    /// The measured speed-up in cores: efficiency × count (1 thread running alone = 1).
    pub speedup: f64,
    /// Cores lost by cause, largest first.
    pub parts: Vec<StackPart>,
    /// Cores nothing explains: the count less the speed-up and the parts. Negative when the
    /// speed-up exceeds what the count's capacity accounts for (a baseline that idled).
    pub unexplained: f64,
}

/// Cores one cause took from a count.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct StackPart {
    /// What took them: a class of wait (`lock`, `io`, `work`, `ipc`, …), `no work`, `other
    /// processes`, `sampling`, `stolen`, `unsampled`, `extra CPU` (beyond the baseline's for the
    /// same work), `no CPU` (workers beyond the CPUs the job may use) or `busy baseline` (the
    /// speed-up times the CPUs beyond one that the baseline kept busy: its own parallelism).
    pub cause: String,
    /// The wait's object or system call, or the phase of `no work`, when known.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub object: Option<String>,
    /// Core-seconds lost per second of the run.
    pub cores: f64,
}

impl SpeedupStack {
    /// The causes' cores in all.
    pub fn lost(&self) -> f64 {
        self.parts.iter().map(|p| p.cores).sum()
    }
}
