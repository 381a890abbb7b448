//! Mistakes in what the user asked for; each is one sentence and exits with code 2.

/// A problem with the sweep's definition, found before anything runs.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum PlanError {
    /// A malformed parameter, value list, placeholder, duration, regex, work amount or path.
    #[error("{0}")]
    Invalid(String),
}

/// Builds a [`PlanError::Invalid`] from a formatted sentence.
macro_rules! invalid {
    ($($arg:tt)*) => { $crate::plan::PlanError::Invalid(format!($($arg)*)) };
}
pub(crate) use invalid;
