//! The scaling history: an embedded SQLite file that remembers every sweep (its command,
//! parameters, every run's wall time, the models' parameters, the findings, the machine, the git
//! commit and the user's tags), read by `scalescope history`, `history trend`, `compare --history`
//! and `check`. A consumer of results, never the reverse: results folders stay the record, and
//! `history import` rebuilds the file from them at will. Described in docs/history.md.
//!
//! The file: [`schema`] (tables and migrations), [`store`] (opening, locking, retries, the
//! errors), [`fsinfo`] (network file systems). What goes in: [`record`] (a sweep as rows),
//! [`import`] (folders and published tables). What comes out: [`query`] (sweeps by filter),
//! [`figures`] (one figure per sweep along a series), [`trend`] (text and chart), [`steps`] (the
//! change-point detector), [`check`] (the verdict for CI) and [`against`] (the last comparable
//! sweeps for `compare --history`).

pub mod against;
pub mod check;
pub mod figures;
mod fsinfo;
pub mod import;
pub mod query;
pub mod record;
mod schema;
mod steps;
mod store;
pub mod trend;

use std::path::{Path, PathBuf};
pub use store::History;

/// The environment variable that names the history file.
pub const ENV: &str = "SCALESCOPE_HISTORY";

/// Why the history could not be read or written. Each is one sentence that names the file.
#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    /// Nothing has been recorded at this path yet.
    #[error(
        "there is no history at {path} yet: finished sweeps are recorded there, or build it from results folders with `scalescope history import DIR…`"
    )]
    NotFound {
        /// The file.
        path: String,
    },
    /// The path names a folder.
    #[error(
        "the history {path} is a folder: give a file in it, e.g. --history {path}/history.sqlite"
    )]
    Folder {
        /// The folder.
        path: String,
    },
    /// The file is not a SQLite database, or not one scalescope wrote, or it is damaged.
    #[error(
        "{path} is not a readable scalescope history ({reason}): move it aside and rebuild it from the results folders with `scalescope history import DIR…`"
    )]
    Corrupt {
        /// The file.
        path: String,
        /// What SQLite said.
        reason: String,
    },
    /// Written by a newer scalescope, with tables this one does not know.
    #[error(
        "the history {path} has schema version {found}; this scalescope reads up to version {ours}: install a newer scalescope to use it"
    )]
    TooNew {
        /// The file.
        path: String,
        /// Its version.
        found: i64,
        /// The newest this build knows.
        ours: i64,
    },
    /// The file or its folder cannot be written.
    #[error("cannot write the history {path}: {reason}")]
    ReadOnly {
        /// The file.
        path: String,
        /// What the system said.
        reason: String,
    },
    /// The file or its folder cannot be opened or made.
    #[error("cannot open the history {path}: {reason}")]
    CannotOpen {
        /// The file.
        path: String,
        /// What the system said.
        reason: String,
    },
    /// Other writers kept it locked through every retry.
    #[error("the history {path} stayed locked by another scalescope for {seconds} s")]
    Busy {
        /// The file.
        path: String,
        /// How long retries went on.
        seconds: u64,
    },
    /// The disk (or the file's size limit) is full.
    #[error("the history {path} cannot grow: the disk is full")]
    Full {
        /// The file.
        path: String,
    },
    /// Any other failure of SQLite or of the disk.
    #[error("the history {path} failed: {reason}")]
    Failed {
        /// The file.
        path: String,
        /// What SQLite said.
        reason: String,
    },
    /// What was asked for is not in the history.
    #[error("{0}")]
    Missing(String),
    /// A results folder or table to import could not be used.
    #[error("{0}")]
    Import(String),
    /// A results file to import could not be read.
    #[error(transparent)]
    Results(#[from] crate::results::LoadError),
}

impl HistoryError {
    /// Whether the user can fix it by asking differently or pointing at another file (exit code 2)
    /// rather than the system or the disk failing (exit code 1).
    pub fn is_user_mistake(&self) -> bool {
        matches!(
            self,
            HistoryError::NotFound { .. }
                | HistoryError::Folder { .. }
                | HistoryError::Corrupt { .. }
                | HistoryError::TooNew { .. }
                | HistoryError::ReadOnly { .. }
                | HistoryError::CannotOpen { .. }
                | HistoryError::Missing(_)
                | HistoryError::Import(_)
                | HistoryError::Results(_)
        )
    }
}

/// Where the history is: `flag` (`--history PATH`), else `$SCALESCOPE_HISTORY`, else
/// `$XDG_DATA_HOME/scalescope/history.sqlite` (`~/.local/share/scalescope/history.sqlite`);
/// `None` when none of them can be found (no home folder).
pub fn location(flag: Option<&Path>) -> Option<PathBuf> {
    if let Some(p) = flag {
        return Some(p.to_path_buf());
    }
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    if let Some(p) = var(ENV) {
        return Some(p);
    }
    let data = var("XDG_DATA_HOME")
        .filter(|p| p.is_absolute())
        .or_else(|| var("HOME").map(|h| h.join(".local").join("share")))?;
    Some(data.join("scalescope").join("history.sqlite"))
}

/// A stable 64-bit FNV-1a hash of `text`, as 16 hex digits: sweep identities and series keys.
pub fn hash(text: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_flag_wins_and_hashes_are_stable() {
        let p = std::path::Path::new("/tmp/h.sqlite");
        assert_eq!(super::location(Some(p)).unwrap(), p);
        assert_eq!(super::hash("abc"), "e71fa2190541574b");
        assert_ne!(super::hash("abc"), super::hash("abd"));
    }
}
