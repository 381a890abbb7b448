//! Executing a plan: spawning each run in its own process group without a shell, measuring it
//! (wall clock, `wait4` rusage of the whole tree, `/proc/<pid>/io`), capturing bounded output,
//! reading metrics, evicting inputs from the page cache, hooks, timeouts and interrupts.

mod capture;
pub mod ceiling;
mod child;
mod helper;
mod metrics;
mod pace;
pub mod ranks;
mod shed;
pub mod signals;
mod spawner;
mod strays;
pub mod sweep;
mod tail;

pub use child::{Executor, Processes, SpawnError, Spec};
pub use metrics::{Scanner, to_map as metrics_map};
pub use tail::Printed;

use crate::files::WriteError;
use crate::pagecache;
use crate::plan::PlanError;

/// Serves runs when this process was started as scalescope's spawn helper; returns its exit code
/// then (call first thing in `main`).
pub fn serve_if_spawner() -> Option<i32> {
    helper::serve_if_asked()
}

/// Why executing a sweep could not go on.
#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    /// A run or hook could not be started.
    #[error(transparent)]
    Spawn(#[from] SpawnError),
    /// The inputs of a run could not be evicted from the page cache.
    #[error(transparent)]
    Evict(#[from] pagecache::Error),
    /// The plan could not make a point.
    #[error(transparent)]
    Plan(#[from] PlanError),
    /// A hook failed; the sweep stops.
    #[error(transparent)]
    Hook(Box<HookFailed>),
    /// The results could not be saved.
    #[error(transparent)]
    Sink(WriteError),
}

/// A hook that exited non-zero or was killed.
#[derive(Debug, thiserror::Error)]
#[error("the {which} hook `{command}` {ended} at {point}{}{hint}", tail::said(printed))]
pub struct HookFailed {
    /// setup, prepare, conclude or cleanup.
    pub which: &'static str,
    /// The hook's shell text.
    pub command: String,
    /// How it ended: `exited with code 1`.
    pub ended: String,
    /// The point it ran for.
    pub point: String,
    /// The end of what it printed, made safe for a terminal.
    pub printed: Printed,
    /// What may have made it fail, as a sentence beginning with its separator, or empty.
    pub hint: String,
}

impl ExecError {
    /// Whether the user can fix it by changing what they asked for (exit code 2), rather than a
    /// hook, the system or the disk failing (exit code 1).
    pub fn is_user_mistake(&self) -> bool {
        match self {
            ExecError::Spawn(e) => e.is_user_mistake(),
            ExecError::Evict(e) => e.is_user_mistake(),
            ExecError::Plan(_) => true,
            ExecError::Hook { .. } | ExecError::Sink(_) => false,
        }
    }
}
