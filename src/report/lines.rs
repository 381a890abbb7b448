//! The lines under the table: the largest waits of every sampled point, the points' warnings,
//! and the job's read rate against the measured I/O ceiling.

use crate::results::Results;

/// The largest waits of every sampled point, and what the sampler could not see.
pub fn waits(doc: &Results) -> Vec<String> {
    let mut out = Vec::new();
    let mut limits: Vec<String> = Vec::new();
    let last = doc.points.iter().rposition(|p| p.runs.iter().any(|r| r.threads.is_some()));
    for (i, p) in doc.points.iter().enumerate() {
        if let Some(t) = super::threads::of_point(p) {
            // Where on-CPU time went rarely differs between points: said once, for the last.
            out.extend(super::threads::wait_lines(&p.label(), &t, Some(i) == last));
            limits.extend(t.limits.into_iter().filter(|l| !limits.contains(l)).collect::<Vec<_>>());
        }
    }
    out.extend(limits.into_iter().map(|l| format!("not seen: {l}")));
    out
}

/// Warnings of every point, as `label: warning` lines.
pub fn notes(doc: &Results) -> Vec<String> {
    doc.points.iter().flat_map(|p| p.warnings().into_iter().map(move |w| format!("{}: {w}", p.label()))).collect()
}

/// Lines comparing each point's read rate with the measured ceiling of its input files.
pub fn ceiling(doc: &Results) -> Vec<String> {
    let Some(c) = &doc.ceiling else { return vec![] };
    let mut lines = vec![format!(
        "readspeed over {} ({}): {}",
        c.files.join(" "),
        if c.cold { "evicted before each read" } else { "as cached" },
        c.points
            .iter()
            .map(|p| format!("{} {:.1} MB/s", threads(p.threads), p.bytes_per_s / 1e6))
            .collect::<Vec<_>>()
            .join(", ")
    )];
    let Some(name) = doc.plan.axis.as_ref().map(|a| a.param.clone()) else { return lines };
    for p in &doc.points {
        let count = p.params.get(&name).and_then(|v| v.as_f64().or_else(|| v.as_str()?.parse().ok()));
        let (Some(count), Some(rate)) = (count, crate::diagnose::evidence::read_rate(p, c.cold)) else { continue };
        if let Some(r) = c.judge(count, rate) {
            let share = if r.above() {
                "above the ceiling (an underestimate here)".to_string()
            } else {
                format!("= {:.0}% of the ceiling", 100.0 * r.share)
            };
            lines.push(format!(
                "{}: the job read {:.1} MB/s {share} at {}",
                p.label(),
                rate / 1e6,
                threads(r.point.threads)
            ));
        }
    }
    lines
}

fn threads(n: u32) -> String {
    format!("{n} thread{}", if n == 1 { "" } else { "s" })
}
