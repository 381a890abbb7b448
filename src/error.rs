//! The crate's one error: every layer's error as a variant, each keeping its own sources, and the
//! exit code it gives (2 for a user mistake, 1 for a workload, the system or the disk failing),
//! decided by a match the compiler holds complete. Errors held inside another's variant are
//! classified there: `SpawnError`, `HookFailed` and `pagecache::Error` by `ExecError`, a
//! `WriteError` by `ExecError` or `StoreError`; `TracerRefused` only ever becomes a limits line.

use crate::analysis::AnalysisError;
use crate::exec::ceiling::CeilingError;
use crate::exec::{ExecError, SpawnError};
use crate::files::WriteError;
use crate::history::HistoryError;
use crate::launch::agent::AgentError;
use crate::pagecache;
use crate::plan::PlanError;
use crate::probes::error::ProbeError;
use crate::results::{LoadError, StoreError, Untrusted};

/// A mistake in how scalescope was called: printed as one sentence, exit code 2.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Usage(pub String);

/// Any error a scalescope command ends with.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A bad flag or argument.
    #[error(transparent)]
    Usage(#[from] Usage),
    /// A plan that cannot run.
    #[error(transparent)]
    Plan(#[from] PlanError),
    /// A sweep that could not go on.
    #[error(transparent)]
    Exec(#[from] ExecError),
    /// A program that could not be started.
    #[error(transparent)]
    Spawn(#[from] SpawnError),
    /// Inputs that could not be evicted from the page cache.
    #[error(transparent)]
    Evict(#[from] pagecache::Error),
    /// The read ceiling (`--ceiling`) could not be measured.
    #[error(transparent)]
    Ceiling(#[from] CeilingError),
    /// A rank's agent failed.
    #[error("agent")]
    Agent(#[source] AgentError),
    /// A results file that cannot be read.
    #[error(transparent)]
    Load(#[from] LoadError),
    /// A results folder that `--resume` will not run without `--trust`.
    #[error(transparent)]
    Untrusted(#[from] Untrusted),
    /// The results folder asked for (`--out`) could not be made.
    #[error(transparent)]
    Out(StoreError),
    /// A results folder that could not be opened or written.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A file that could not be written.
    #[error(transparent)]
    Write(#[from] WriteError),
    /// A request the data cannot answer.
    #[error(transparent)]
    Analysis(#[from] AnalysisError),
    /// A probe that could not run.
    #[error(transparent)]
    Probe(#[from] ProbeError),
    /// The history could not be read or written.
    #[error(transparent)]
    History(#[from] HistoryError),
    /// The sampler's thread could not be started.
    #[error("cannot start the sampler thread")]
    Sampler,
    /// A document that could not be written as JSON.
    #[error(transparent)]
    Json(#[from] serde_json::Error),
    /// Reading or writing a stream failed.
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

impl Error {
    /// The exit code: 2 when the user can fix it by changing what they asked for, 1 when a
    /// workload, the system or the disk failed, 0 for output cut short by a closed pipe (`| head`).
    pub fn exit_code(&self) -> i32 {
        let mistake = match self {
            Error::Usage(_)
            | Error::Plan(_)
            | Error::Load(_)
            | Error::Untrusted(_)
            | Error::Out(_)
            | Error::Analysis(_) => true,
            Error::Exec(e) => e.is_user_mistake(),
            Error::Spawn(e) => e.is_user_mistake(),
            Error::Evict(e) => e.is_user_mistake(),
            Error::Ceiling(e) => e.is_user_mistake(),
            Error::Agent(e) => e.is_user_mistake(),
            Error::Store(e) => e.is_user_mistake(),
            Error::Probe(e) => e.is_user_mistake(),
            Error::History(e) => e.is_user_mistake(),
            Error::Io(e) if e.kind() == std::io::ErrorKind::BrokenPipe => return 0,
            Error::Write(_) | Error::Sampler | Error::Json(_) | Error::Io(_) => false,
        };
        if mistake { 2 } else { 1 }
    }

    /// The error and its sources as one sentence: each joined to the one before by `: `.
    pub fn sentence(&self) -> String {
        let mut text = self.to_string();
        let mut source = std::error::Error::source(self);
        while let Some(e) = source {
            text.push_str(": ");
            text.push_str(&e.to_string());
            source = e.source();
        }
        text
    }
}
