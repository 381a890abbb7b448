//! Findings: the sentences an expert would write after looking at the sweep — what limits scaling,
//! with the evidence (figures per point, the lock's name, the system calls, the phase), how much of
//! the gap to ideal speed-up it explains, and what to try next. Ordered by that cost.

pub mod evidence;
mod ranks;
mod rules;

use crate::analysis::{AnalysisError, Options, analyze_results};
use crate::plan::Axis;
use crate::results::Results;
pub use crate::results::findings::{Finding, Kind, Severity};
pub use rules::diagnose;

/// Analyses `doc` along `axis` (no analysis without one) and diagnoses it, storing both in it.
pub fn analyse(doc: &mut Results, axis: Option<&Axis>, opts: &Options) -> Result<(), AnalysisError> {
    doc.analysis = axis.map(|a| analyze_results(doc, a, opts)).transpose()?;
    doc.findings = diagnose(doc, doc.analysis.as_ref());
    Ok(())
}
