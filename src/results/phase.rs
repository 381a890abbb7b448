//! The phases of a run by how fully it used its capacity (start-up, steady, tail), and where they
//! lie: the accounting places them, the stack profile and the idle capacity are split by them.

use serde::{Deserialize, Serialize};

/// Part of a run, by how fully it used the capacity.
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum Phase {
    /// Before the first moment the job used three quarters of its capacity.
    #[serde(rename = "start-up")]
    Startup,
    /// From then to the last such moment.
    Steady,
    /// After the last such moment.
    Tail,
}

impl Phase {
    /// Every phase in order.
    pub const ALL: [Phase; 3] = [Phase::Startup, Phase::Steady, Phase::Tail];

    /// `start-up`, `steady`, `tail`.
    pub fn name(self) -> &'static str {
        match self {
            Phase::Startup => "start-up",
            Phase::Steady => "steady",
            Phase::Tail => "tail",
        }
    }
}

/// Where the phases begin and end, in seconds from the start of sampling.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Phases {
    /// End of start-up.
    pub startup_end_s: f64,
    /// Start of the tail.
    pub tail_start_s: f64,
}

impl Phases {
    /// The phase of an instant.
    pub fn of(&self, t_s: f64) -> Phase {
        if t_s < self.startup_end_s {
            Phase::Startup
        } else if t_s >= self.tail_start_s {
            Phase::Tail
        } else {
            Phase::Steady
        }
    }
}
