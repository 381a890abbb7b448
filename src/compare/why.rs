//! The "why" of a comparison: fitted models side by side, and how the sampler's breakdown of
//! thread time changed at each point that got faster or slower.

use super::points::{Change, Figure, PointRow, Verdict, moved_by_a_few_runs};
use super::{Options, Set};
use crate::analysis::threads;
use crate::diagnose::evidence::class_share;
use crate::results::analysis::{Estimate, SeriesAnalysis};
use crate::results::{Class, Results};
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
        sets.iter()
            .map(|s| s.analysis.as_ref().and_then(|a| a.series.first()).and_then(f))
            .collect()
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
            let who = if sets.len() > 2 { format!("{} ", sets[i].label) } else { String::new() };
            if moved_by_a_few_runs(change, o.noise) {
                out.push(format!(
                    "{who}{}: {}",
                    row.label,
                    a_few_runs_line(change, &sets[i].label)
                ));
                continue;
            }
            if !matches!(change.verdict, Verdict::Faster | Verdict::Slower) {
                continue;
            }
            let (Some(da), Some(db)) = (sets[o.reference].doc.as_ref(), sets[i].doc.as_ref())
            else {
                continue;
            };
            let (Some(a), Some(b)) = (
                row.points[o.reference].map(|p| &da.points[p]),
                row.points[i].map(|p| &db.points[p]),
            ) else {
                continue;
            };
            let mut moves: Vec<(f64, String)> = match (threads::of_point(a), threads::of_point(b)) {
                (Some(a), Some(b)) => Class::ALL
                    .iter()
                    .filter(|c| !matches!(c, Class::Join | Class::Unsampled))
                    .filter_map(|&c| {
                        let (x, y) = (class_share(&a, c), class_share(&b, c));
                        ((y - x).abs() >= 0.05).then(|| {
                            let dir = if y < x { "fell" } else { "rose" };
                            (
                                (y - x).abs(),
                                format!(
                                    "{} {dir} from {:.0}% to {:.0}%",
                                    words(c),
                                    100.0 * x,
                                    100.0 * y
                                ),
                            )
                        })
                    })
                    .collect(),
                _ => Vec::new(),
            };
            moves.sort_by(|p, q| q.0.total_cmp(&p.0));
            // Shares of the threads' time, not seconds: a share can fall while the seconds rise.
            let mut said: Vec<String> = moves.into_iter().take(3).map(|(_, s)| s).collect();
            if let Some(first) = said.first_mut() {
                *first = format!("of its threads' time, {first}");
            }
            said.extend(machine_pace(da, db, change));
            if said.is_empty() {
                continue;
            }
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

/// Why a significant change of the mean is not a verdict: `the mean moved +11% time (p = 0.019)
/// but the median run +3% time: a few of the reference's runs were slower than the rest …`.
pub(super) fn a_few_runs_line(c: &Change, label: &str) -> String {
    let m = c.median_ratio.unwrap_or(c.ratio);
    let what = c.judged_by.name();
    // Time grows with a slow run, throughput falls: the side whose mean moved past its median
    // holds the slow runs.
    let past = if c.judged_by == Figure::Time { c.ratio > m } else { c.ratio < m };
    let side = if past { format!("{label}'s runs") } else { "the reference's runs".to_string() };
    format!(
        "not significant: the mean moved {} (p = {:.3}) but the median run {}: a few of {side} were slower than the rest (a slow spell of the host, or another load), not a change of the program → measure both again",
        pct_change(c.ratio, what),
        c.p.unwrap_or(f64::NAN),
        pct_change(m, what),
    )
}

/// The machine's pace moved by this share between the sets' runs before it is said.
const PACE_MOVED: f64 = 0.03;

/// The loop times (ns per million steps) of every counted run of a sweep, inside Tukey's fences:
/// the machine's state is the sweep's, whichever point ran.
fn paces(doc: &Results) -> Vec<f64> {
    let v: Vec<f64> = doc
        .points
        .iter()
        .flat_map(|p| &p.runs)
        .filter(|r| r.counted())
        .filter_map(|r| r.pace_ns)
        .collect();
    crate::stats::within_fences(&v)
}

/// When the machine itself ran at another pace during the two sweeps (the loop timed before each
/// run, medians over each sweep's runs, apart by [`PACE_MOVED`] and beyond chance by Welch's test
/// at 1%), what that means for a point's change: the change at equal pace (as if its times
/// followed the loop's one for one, as a CPU-bound program's do), and whether the machine
/// accounts for all of it, part of it, or hides some of it.
fn machine_pace(a: &Results, b: &Results, change: &Change) -> Option<String> {
    let (pa, pb) = (paces(a), paces(b));
    let median = |v: &[f64]| crate::stats::Summary::of(v).map(|s| s.median);
    let ratio = median(&pb)? / median(&pa)?;
    if (ratio - 1.0).abs() < PACE_MOVED || crate::stats::welch_p(&pa, &pb).is_none_or(|p| p >= 0.01)
    {
        return None;
    }
    // A time scales with the pace; a throughput against it.
    let at_equal_pace =
        |x: f64| if change.judged_by == Figure::Time { x / ratio } else { x * ratio };
    let equal = at_equal_pace(change.ratio);
    let slower = ratio > 1.0;
    let same_way =
        matches!((slower, change.verdict), (true, Verdict::Slower) | (false, Verdict::Faster));
    let inside =
        change.ci95.is_some_and(|c| at_equal_pace(c[0]) <= 1.0 && 1.0 <= at_equal_pace(c[1]));
    let meaning = match (same_way, inside) {
        (true, true) => "that alone accounts for the change",
        (true, false) => "part of the change is the machine's",
        (false, _) => "the program's own change is larger than measured",
    };
    Some(format!(
        "the machine itself ran {:.0}% {} during these runs than during the reference's (a fixed loop timed before each run): {meaning} (at equal pace: {})",
        100.0 * (ratio - 1.0).abs(),
        if slower { "slower" } else { "faster" },
        pct_change(equal, change.judged_by.name())
    ))
}

/// `+23% throughput` or `−19% time`.
pub fn pct_change(ratio: f64, judged_by: &str) -> String {
    format!("{:+.0}% {judged_by}", 100.0 * (ratio - 1.0)).replace('-', "−")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::RunRecord;
    use crate::results::analysis::JudgedBy;

    fn sweep(paces: &[f64]) -> Results {
        let plan = crate::plan::build(
            &crate::plan::Request {
                command: vec!["prog".into(), "{t}".into()],
                params: vec!["t=1".into()],
                ..Default::default()
            },
            2,
        )
        .unwrap();
        let mut doc = Results::new(plan, vec![]).unwrap();
        for (i, &pace) in paces.iter().enumerate() {
            doc.points[0].runs.push(RunRecord {
                index: i as u32,
                wall_s: 1.0,
                exit_code: Some(0),
                pace_ns: Some(pace),
                ..Default::default()
            });
        }
        doc
    }

    fn change(ratio: f64, ci95: [f64; 2], verdict: Verdict) -> Change {
        Change {
            judged_by: Figure::Time,
            decided_by: JudgedBy::Runs,
            ratio,
            ci95: Some(ci95),
            p: Some(0.001),
            median_ratio: Some(ratio),
            verdict,
            time_ratio: Some(ratio),
            cpu_ratio: None,
            user_ratio: None,
            sys_ratio: None,
        }
    }

    #[test]
    fn a_machine_that_ran_slower_is_said_with_the_change_at_equal_pace_and_its_scatter_is_not() {
        let a = sweep(&[1.50e6, 1.51e6, 1.49e6, 1.50e6, 1.52e6, 1.38e6]);
        let slow = sweep(&[1.62e6, 1.63e6, 1.61e6, 1.62e6, 1.64e6]);
        // 8% slower runs on an 8% slower machine: all of it.
        let all =
            machine_pace(&a, &slow, &change(1.08, [1.06, 1.10], Verdict::Slower)).expect("said");
        assert!(
            all.contains("ran 8% slower") && all.contains("that alone accounts for the change"),
            "{all}"
        );
        assert!(all.contains("(at equal pace: +0% time)"), "{all}");
        let part = machine_pace(&a, &slow, &change(1.20, [1.17, 1.23], Verdict::Slower)).unwrap();
        assert!(
            part.contains("part of the change is the machine's") && part.contains("+11% time"),
            "{part}"
        );
        let hidden = machine_pace(&a, &slow, &change(0.9, [0.88, 0.92], Verdict::Faster)).unwrap();
        assert!(hidden.contains("the program's own change is larger than measured"), "{hidden}");
        // Scatter of a few percent, both ways, is the loop's.
        let scatter = sweep(&[1.45e6, 1.58e6, 1.49e6, 1.56e6, 1.47e6]);
        assert_eq!(machine_pace(&a, &scatter, &change(1.08, [1.06, 1.10], Verdict::Slower)), None);
    }
}
