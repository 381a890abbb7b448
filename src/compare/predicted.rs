//! What the reference sweep's findings said a fix would buy, against what each other sweep
//! obtained: after a fix, the speed-up measured at the finding's count beside its what-if.

use super::Set;
use crate::analysis::count_label;
use crate::fmt::interval;
use crate::results::Results;
use crate::results::findings::{WhatIf, fix_name, fixes};

/// `lock-contention at 2 threads: before 1.01×, predicted 1.69× [1.42, 2.00] without it; after
/// 1.82× [1.74, 1.90]: inside the interval, 8% above the prediction`: one line per fix the
/// reference's findings predict and per other sweep that measured its count. A sweep of the
/// same command at the same commit and tags made no fix to set them against: it gets one line
/// saying so.
pub fn lines(sets: &[Set], reference: usize) -> Vec<String> {
    let Some(before) = sets.get(reference).and_then(|s| s.doc.as_ref()) else { return Vec::new() };
    let Some(param) = before.analysis.as_ref().map(|a| a.axis.param.clone()) else {
        return Vec::new();
    };
    let fixes = fixes(&before.findings);
    let same = |i: usize| sets[i].doc.as_ref().is_some_and(|d| unchanged(before, d));
    let mut out: Vec<String> = (0..sets.len())
        .filter(|&i| i != reference && !fixes.is_empty() && same(i))
        .map(|i| {
            format!(
                "{}: the same command as {} at the same commit and tags: nothing says a fix was made, so no what-if is set against it (tag the sweeps, --tag, when the program changed without a commit)",
                sets[i].label, sets[reference].label
            )
        })
        .collect();
    for (f, w) in fixes {
        for (i, after) in sets.iter().enumerate() {
            if i == reference || same(i) {
                continue;
            }
            let Some((obtained, ci)) = after.doc.as_ref().and_then(|d| speedup_at(d, w.at)) else {
                continue;
            };
            let labels = (sets[reference].label.as_str(), after.label.as_str());
            let name = fix_name(&before.findings, f);
            out.push(line(&name, w, &count_label(w.at, &param), labels, (obtained, ci)));
        }
    }
    out
}

/// Whether two sweeps ran the same command, environment and parameters at the same commit and
/// tags: a second sweep of one program, not a program changed.
fn unchanged(a: &Results, b: &Results) -> bool {
    a.plan.command == b.plan.command
        && a.plan.env == b.plan.env
        && a.plan.params == b.plan.params
        && a.provenance == b.provenance
}

/// The speed-up a sweep measured at `count` (its first series), with its 95% interval.
fn speedup_at(doc: &Results, count: f64) -> Option<(f64, Option<[f64; 2]>)> {
    let series = doc.analysis.as_ref()?.series.first()?;
    let p = series.points.iter().find(|p| (p.count - count).abs() < 1e-9)?;
    Some((p.speedup, p.speedup_ci95))
}

fn line(
    name: &str,
    w: &WhatIf,
    at: &str,
    (before, after): (&str, &str),
    (obtained, ci): (f64, Option<[f64; 2]>),
) -> String {
    let off = obtained / w.without - 1.0;
    let direction = if off >= 0.0 { "above" } else { "below" };
    let judged = match w.without_ci95 {
        _ if obtained <= w.speedup => {
            "no gain: the change did not remove this cause, or another took its place".into()
        }
        Some([lo, hi]) if (lo..=hi).contains(&obtained) => {
            format!("inside the interval, {:.0}% {direction} the prediction", 100.0 * off.abs())
        }
        Some(_) => {
            format!("outside the interval, {:.0}% {direction} the prediction", 100.0 * off.abs())
        }
        None => format!("{:.0}% {direction} the prediction", 100.0 * off.abs()),
    };
    format!(
        "{name} at {at}: {before} measured {:.2}×, predicted {:.2}×{} without it; {after} obtained {obtained:.2}×{}: {judged}",
        w.speedup,
        w.without,
        interval(w.without_ci95),
        interval(ci),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_obtained_speed_up_is_judged_against_the_predicted_interval() {
        let w = WhatIf {
            at: 2.0,
            speedup: 1.01,
            without: 1.69,
            without_ci95: Some([1.42, 2.0]),
            sooner_s: 0.2,
            spin: false,
            turns: false,
        };
        let f = "lock-contention";
        let inside = line(f, &w, "2 threads", ("threads", "processes"), (1.82, Some([1.74, 1.9])));
        assert_eq!(
            inside,
            "lock-contention at 2 threads: threads measured 1.01×, predicted 1.69× [1.42, 2.00] without it; processes obtained 1.82× [1.74, 1.90]: inside the interval, 8% above the prediction"
        );
        let outside = line(f, &w, "2 threads", ("a", "b"), (1.3, None));
        assert!(outside.ends_with("outside the interval, 23% below the prediction"), "{outside}");
        let none = line(f, &w, "2 threads", ("a", "b"), (0.98, None));
        assert!(none.contains("no gain"), "{none}");
    }
}
