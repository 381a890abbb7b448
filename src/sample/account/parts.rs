//! One thread report for a run of several copies or ranks, each watched by a sampler of its own:
//! their reports added up, with the tree's memory and time series summed at common instants.

use crate::results::ThreadReport;
use crate::sample::proc::{Part, sum_parts};

/// The report of a run of several copies or ranks, one report each with when it started
/// (seconds after the earliest): all absorbed into the first, then the tree's memory and series
/// taken from the parts summed at common instants (`sum_parts`: the peak of the sum, not the
/// sum of the peaks) when every part has both. `None` without reports.
pub fn report_of_parts(reports: &[(&ThreadReport, f64)]) -> Option<ThreadReport> {
    let ((first, _), rest) = reports.split_first()?;
    let mut all = (*first).clone();
    for (r, _) in rest {
        all.absorb(r);
    }
    let parts: Option<Vec<Part>> = reports
        .iter()
        .map(|&(r, start_s)| {
            Some(Part { series: r.series.as_ref()?, start_s, memory: r.memory?, end_s: r.wall_s })
        })
        .collect();
    if let Some((series, memory)) = parts.as_deref().and_then(sum_parts) {
        all.series = Some(series);
        all.memory = Some(memory);
    }
    Some(all)
}
