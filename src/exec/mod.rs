//! Executing a plan: spawning each run in its own process group without a shell, measuring it
//! (wall clock, `wait4` rusage of the whole tree, `/proc/<pid>/io`), capturing bounded output,
//! reading metrics, evicting inputs from the page cache, hooks, timeouts and interrupts.

pub mod capture;
pub mod ceiling;
pub mod child;
pub mod metrics;
pub mod ranks;
pub mod record;
pub mod signals;
pub mod sweep;

pub use record::{OutputFile, RankPart, RunRecord};

/// Why executing a sweep could not go on.
#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    /// A mistake in what the user asked for (program not found, input file missing); exit code 2.
    #[error("{0}")]
    Usage(String),
    /// A hook failed; the sweep stops.
    #[error("{0}")]
    Hook(String),
    /// The results could not be saved.
    #[error(transparent)]
    Sink(anyhow::Error),
}
