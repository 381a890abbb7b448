//! Mistakes in what the user asked for; each is one sentence and exits with code 2.

use crate::pagecache;
use std::path::PathBuf;

/// A problem with the sweep's definition, found before anything runs.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    /// A malformed parameter, value list, placeholder, duration, regex, work amount or path.
    #[error("{0}")]
    Invalid(String),
    /// An `--evict` path that does not exist or cannot be read.
    #[error(transparent)]
    Evict(#[from] pagecache::Error),
    /// A `--ceiling` file that does not exist or cannot be read.
    #[error("--ceiling {}", path.display())]
    Ceiling {
        /// The path given.
        path: PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
}

/// Builds a [`PlanError::Invalid`] from a formatted sentence.
macro_rules! invalid {
    ($($arg:tt)*) => { $crate::plan::PlanError::Invalid(format!($($arg)*)) };
}
pub(crate) use invalid;
