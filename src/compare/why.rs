//! The "why" of a comparison: fitted models side by side, and how the sampler's breakdown of
//! thread time changed at each point that got faster or slower.

use super::points::{PointRow, Verdict};
use super::{Options, Set};
use crate::analysis::threads;
use crate::diagnose::evidence::class_share;
use crate::results::analysis::{Estimate, SeriesAnalysis};
use crate::sample::Class;
use serde::Serialize;

/// One model parameter across the sets.
#[derive(Clone, Debug, Serialize)]
pub struct ModelRow {
    /// What it is.
    pub name: String,
    /// Per set, absent when that set has no such fit.
    pub values: Vec<Option<Estimate>>,
}

/// Amdahl's serial fraction, USL σ, κ and peak count of each set's first series.
pub fn models(sets: &[Set]) -> Vec<ModelRow> {
    let pick = |f: &dyn Fn(&SeriesAnalysis) -> Option<Estimate>| -> Vec<Option<Estimate>> {
        sets.iter().map(|s| s.analysis.as_ref().and_then(|a| a.series.first()).and_then(f)).collect()
    };
    let rows = [
        ("Amdahl serial fraction s", pick(&|s| s.amdahl.as_ref().map(|a| a.serial_fraction))),
        ("USL contention σ", pick(&|s| s.usl.as_ref().map(|u| u.sigma))),
        ("USL coherency κ", pick(&|s| s.usl.as_ref().map(|u| u.kappa))),
        ("USL peak N*", pick(&|s| s.usl.as_ref().and_then(|u| u.peak_count))),
    ];
    rows.into_iter()
        .filter(|(_, v)| v.iter().any(Option::is_some))
        .map(|(name, values)| ModelRow { name: name.into(), values })
        .collect()
}

/// What a class of thread time is called in a sentence.
fn words(c: Class) -> &'static str {
    match c {
        Class::CpuUser => "user CPU time",
        Class::CpuKernel => "kernel time",
        Class::Runqueue => "waiting for a CPU",
        Class::Lock => "lock wait",
        Class::WaitForWork => "waiting for work",
        Class::Join => "join wait",
        Class::Io => "I/O wait",
        Class::KernelLock => "kernel lock wait",
        Class::Ipc => "pipe and socket wait",
        Class::Sleep => "sleep",
        Class::Other => "other waits",
        Class::Unsampled => "unsampled off-CPU time",
    }
}

/// For each point that got faster or slower, the classes of thread time whose share moved by 5
/// points or more (at most three, largest first), against the reference.
pub fn breakdowns(sets: &[Set], rows: &[PointRow], o: &Options) -> Vec<String> {
    let mut out = Vec::new();
    for row in rows {
        for (i, cell) in row.cells.iter().enumerate() {
            let Some(change) = cell.as_ref().and_then(|c| c.change.as_ref()) else { continue };
            if !matches!(change.verdict, Verdict::Faster | Verdict::Slower) {
                continue;
            }
            let evidence = |set: usize| {
                let doc = sets[set].doc.as_ref()?;
                row.points[set].and_then(|p| threads::of_point(&doc.points[p]))
            };
            let (Some(a), Some(b)) = (evidence(o.reference), evidence(i)) else { continue };
            let mut moves: Vec<(f64, String)> = Class::ALL
                .iter()
                .filter(|c| !matches!(c, Class::Join | Class::Unsampled))
                .filter_map(|&c| {
                    let (x, y) = (class_share(&a, c), class_share(&b, c));
                    ((y - x).abs() >= 0.05).then(|| {
                        let dir = if y < x { "fell" } else { "rose" };
                        ((y - x).abs(), format!("{} {dir} from {:.0}% to {:.0}%", words(c), 100.0 * x, 100.0 * y))
                    })
                })
                .collect();
            moves.sort_by(|p, q| q.0.total_cmp(&p.0));
            if moves.is_empty() {
                continue;
            }
            let said: Vec<String> = moves.into_iter().take(3).map(|(_, s)| s).collect();
            let who = if sets.len() > 2 { format!("{} ", sets[i].label) } else { String::new() };
            out.push(format!(
                "{who}{} is {} ({}): {}",
                row.label,
                change.verdict.text(),
                pct_change(change.ratio, change.judged_by.name()),
                said.join("; ")
            ));
        }
    }
    out
}

/// `+23% throughput` or `−19% time`.
pub fn pct_change(ratio: f64, judged_by: &str) -> String {
    format!("{:+.0}% {judged_by}", 100.0 * (ratio - 1.0)).replace('-', "−")
}
