//! The job's read rate against what its input files can deliver (`--ceiling`): evidence and advice
//! for an I/O finding, an I/O finding of its own near the ceiling, and an underestimated ceiling
//! when the job reads faster than it.

use super::evidence::read_rate;
use super::{Finding, Kind, Severity};
use crate::results::Results;

/// Advice when the job reads near what its files can deliver.
const NEAR_CEILING: &str = "the job reads near what its files can deliver, so more threads will not help: faster storage, smaller or compressed inputs, or warm caches";

/// Judges the job's read rate at `n` against the measured ceiling of its files: adds the
/// comparison to an I/O finding, or makes one when the job reads at 80% of the ceiling or more;
/// a job above the ceiling says the ceiling was underestimated.
pub fn judge(doc: &Results, point: usize, n: f64, name: &str, label: &str, out: &mut Vec<Finding>) {
    let Some(c) = &doc.ceiling else { return };
    let Some(rate) = read_rate(&doc.points[point], c.cold) else { return };
    let Some(reading) = c.judge(n, rate) else { return };
    let (cp, share) = (reading.point, reading.share);
    let line = format!(
        "at {n} {name} the job reads {:.1} MB/s, {:.0}% of what the files deliver to readspeed at {} thread{} ({:.1} MB/s, {})",
        rate / 1e6,
        100.0 * share,
        cp.threads,
        if cp.threads == 1 { "" } else { "s" },
        cp.bytes_per_s / 1e6,
        if c.cold { "cold" } else { "as cached" }
    );
    if reading.above() {
        out.push(Finding { noise: None,
            kind: Kind::IoBound,
            severity: Severity::Info,
            summary: format!(
                "at {n} {name} the job reads faster than the measured ceiling ({:.0}%): the ceiling underestimates what the files deliver, so it cannot say whether the job is I/O-bound{label}",
                100.0 * share
            ),
            evidence: vec![line],
            advice: "measure the ceiling the way the job reads (block size, number of files at once, mmap or read)".into(),
            cost_pct: None,
            cost_per_run_pct: Vec::new(),
            at: Some(n),
            what_if: None,
        });
        return;
    }
    if let Some(f) = out.iter_mut().find(|f| f.kind == Kind::IoBound && f.at == Some(n)) {
        f.evidence.push(line);
        f.advice = if share < 0.8 {
            format!(
                "the files could deliver {:.1}× what the job reads: read larger blocks, more at once, or ahead of the work (overlap I/O with computing)",
                1.0 / share
            )
        } else {
            NEAR_CEILING.into()
        };
        return;
    }
    if share >= 0.8 {
        out.push(Finding {
            noise: None,
            kind: Kind::IoBound,
            severity: if share >= 0.9 { Severity::High } else { Severity::Medium },
            summary: format!(
                "at {n} {name} the job reads at {:.0}% of what its files can deliver: it is I/O-bound{label}",
                100.0 * share
            ),
            evidence: vec![line],
            advice: NEAR_CEILING.into(),
            cost_pct: None,
            cost_per_run_pct: Vec::new(),
            at: Some(n),
            what_if: None,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::ceiling::{Ceiling, CeilingPoint};

    /// The report fixture with a ceiling at one thread such that its first point reads `share` of it.
    fn at_share(share: f64) -> Results {
        let mut doc: Results =
            serde_json::from_str(include_str!("../../tests/fixtures/report/results.json")).unwrap();
        let rate = read_rate(&doc.points[0], false).expect("the fixture's runs read");
        let point =
            CeilingPoint { threads: 1, bytes_per_s: rate / share, ..CeilingPoint::default() };
        doc.ceiling = Some(Ceiling { files: vec!["in".into()], cold: false, points: vec![point] });
        doc
    }

    fn judged(share: f64) -> Vec<Finding> {
        let mut out = Vec::new();
        judge(&at_share(share), 0, 1.0, "threads", "", &mut out);
        out
    }

    #[test]
    fn near_the_ceiling_is_io_bound_below_it_nothing_above_it_an_underestimate() {
        let f = judged(0.95);
        assert_eq!(
            (f.len(), f[0].kind, f[0].severity),
            (1, Kind::IoBound, Severity::High),
            "{f:?}"
        );
        assert!(f[0].summary.contains("at 95% of what its files can deliver"), "{f:?}");
        let f = judged(0.85);
        assert_eq!(f[0].severity, Severity::Medium, "{f:?}");
        assert!(judged(0.5).is_empty());
        let f = judged(1.2);
        assert_eq!((f.len(), f[0].severity), (1, Severity::Info), "{f:?}");
        assert!(
            f[0].summary.contains("underestimates") && !f[0].summary.contains("it is I/O-bound"),
            "{f:?}"
        );
    }

    #[test]
    fn an_io_finding_gains_the_comparison_and_advice_that_follows_it() {
        let io = |advice: &str| Finding {
            noise: None,
            kind: Kind::IoBound,
            severity: Severity::High,
            summary: "waits for reads".into(),
            evidence: vec![],
            advice: advice.into(),
            cost_pct: None,
            cost_per_run_pct: Vec::new(),
            at: Some(1.0),
            what_if: None,
        };
        let mut out = vec![io("")];
        judge(&at_share(0.25), 0, 1.0, "threads", "", &mut out);
        assert_eq!(out.len(), 1);
        assert!(out[0].evidence[0].contains("25% of what the files deliver"), "{out:?}");
        assert!(out[0].advice.contains("4.0× what the job reads"), "{out:?}");
    }
}
