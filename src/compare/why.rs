//! The "why" of a comparison: fitted models side by side, and how the sampler's breakdown of
//! thread time changed at each point that got faster or slower.

use super::points::{PointRow, Verdict};
use super::{Options, Set};
use crate::analysis::threads;
use crate::diagnose::evidence::class_share;
use crate::results::PointResult;
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
            let point = |set: usize| Some(&sets[set].doc.as_ref()?.points[row.points[set]?]);
            let (Some(a), Some(b)) = (point(o.reference), point(i)) else { continue };
            let mut moves: Vec<(f64, String)> = match (threads::of_point(a), threads::of_point(b)) {
                (Some(a), Some(b)) => Class::ALL
                    .iter()
                    .filter(|c| !matches!(c, Class::Join | Class::Unsampled))
                    .filter_map(|&c| {
                        let (x, y) = (class_share(&a, c), class_share(&b, c));
                        ((y - x).abs() >= 0.05).then(|| {
                            let dir = if y < x { "fell" } else { "rose" };
                            ((y - x).abs(), format!("{} {dir} from {:.0}% to {:.0}%", words(c), 100.0 * x, 100.0 * y))
                        })
                    })
                    .collect(),
                _ => Vec::new(),
            };
            moves.sort_by(|p, q| q.0.total_cmp(&p.0));
            let mut said: Vec<String> = moves.into_iter().take(3).map(|(_, s)| s).collect();
            said.extend(machine_pace(a, b, change.verdict));
            if said.is_empty() {
                continue;
            }
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

/// The machine's pace moved by this share between the sets' runs before it is said.
const PACE_MOVED: f64 = 0.03;

/// When the machine itself ran at another pace during the compared runs (the loop timed before
/// each run, medians of the points' counted runs, apart beyond chance by Welch's test at 1%),
/// what that means for the change: part of it, or a program's change larger than measured.
fn machine_pace(a: &PointResult, b: &PointResult, verdict: Verdict) -> Option<String> {
    let paces = |p: &PointResult| -> Vec<f64> {
        let mut v: Vec<f64> = p.runs.iter().filter(|r| r.counted()).filter_map(|r| r.pace_ns).collect();
        v.sort_by(f64::total_cmp);
        v
    };
    let (pa, pb) = (paces(a), paces(b));
    let ratio = pb.get(pb.len() / 2)? / pa.get(pa.len() / 2)?;
    // The loop's own scatter (a few percent from one try to the next) is no move of the machine.
    if (ratio - 1.0).abs() < PACE_MOVED || crate::stats::welch_p(&pa, &pb).is_none_or(|p| p >= 0.01) {
        return None;
    }
    let slower = ratio > 1.0;
    let same_way = matches!((slower, verdict), (true, Verdict::Slower) | (false, Verdict::Faster));
    let meaning = if same_way {
        "part of the change may be the machine's"
    } else {
        "the program's own change is larger than measured"
    };
    let dir = if slower { "slower" } else { "faster" };
    Some(format!(
        "the machine itself ran {:.0}% {dir} during these runs than during the reference's (a fixed loop timed before each run): {meaning}",
        100.0 * (ratio - 1.0).abs()
    ))
}

/// `+23% throughput` or `−19% time`.
pub fn pct_change(ratio: f64, judged_by: &str) -> String {
    format!("{:+.0}% {judged_by}", 100.0 * (ratio - 1.0)).replace('-', "−")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::RunRecord;

    fn point(paces: &[f64]) -> PointResult {
        let plan = crate::plan::build(
            &crate::plan::Request {
                command: vec!["prog".into(), "{t}".into()],
                params: vec!["t=1".into()],
                ..Default::default()
            },
            2,
        )
        .unwrap();
        let mut doc = crate::results::Results::new(plan, vec![]).unwrap();
        for (i, &pace) in paces.iter().enumerate() {
            doc.points[0].runs.push(RunRecord {
                index: i as u32,
                wall_s: 1.0,
                exit_code: Some(0),
                pace_ns: Some(pace),
                ..Default::default()
            });
        }
        doc.points.remove(0)
    }

    #[test]
    fn a_machine_that_ran_slower_is_said_beside_the_change_and_its_scatter_is_not() {
        let a = point(&[1.50e6, 1.51e6, 1.49e6, 1.50e6, 1.52e6]);
        let slow = point(&[1.62e6, 1.63e6, 1.61e6, 1.62e6, 1.64e6]);
        let said = machine_pace(&a, &slow, Verdict::Slower).expect("8% slower is said");
        assert!(said.contains("ran 8% slower") && said.contains("part of the change may be the machine's"), "{said}");
        let other_way = machine_pace(&a, &slow, Verdict::Faster).unwrap();
        assert!(other_way.contains("the program's own change is larger than measured"), "{other_way}");
        // Scatter of a few percent, both ways, is the loop's.
        let scatter = point(&[1.45e6, 1.58e6, 1.49e6, 1.56e6, 1.47e6]);
        assert_eq!(machine_pace(&a, &scatter, Verdict::Slower), None);
    }
}
