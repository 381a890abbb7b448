//! Turning measurements into scaling figures: the counted parameter, the baseline point, speed-up
//! and efficiency per point.

pub mod speedup;

pub use speedup::{Basis, Speedups, speedups};

/// A request the data cannot answer (unknown parameter, baseline value not measured).
#[derive(Debug, thiserror::Error, PartialEq)]
#[error("{0}")]
pub struct AnalysisError(pub String);
