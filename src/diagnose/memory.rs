//! The memory-limit finding: the tree's PSS grows with the count, and the line fitted through
//! it (fixed part + growth per worker) reaches the memory the job may use at a count the user
//! would run on this node, or predicts for; or the PSS measured at a count already exceeds that
//! memory, whether it grows or not. Otherwise silent when the PSS does not clearly grow.

use super::{Finding, Kind, Severity};
use crate::analysis::count_label;
use crate::results::Results;
use crate::results::analysis::{Analysis, MemoryFit, SeriesAnalysis};

/// Growth over the measured counts below this is too small to extrapolate, bytes.
const MIN_GROWTH_BYTES: f64 = 1024.0 * 1024.0;

/// A memory-limit finding per series whose fitted PSS exceeds the usable memory by its horizon.
pub fn rules(doc: &Results, a: &Analysis, out: &mut Vec<Finding>) {
    for s in &a.series {
        if let Some(m) = &s.memory
            && let Some(f) = judge(doc, &a.axis.param, s, m)
        {
            out.push(f);
        }
    }
}

fn judge(doc: &Results, param: &str, s: &SeriesAnalysis, m: &MemoryFit) -> Option<Finding> {
    let (lo, hi) =
        s.points.iter().fold((f64::MAX, 0.0f64), |(l, h), p| (l.min(p.count), h.max(p.count)));
    let usable = m.usable_bytes as f64;
    let measured: Vec<(f64, f64)> = s
        .points
        .iter()
        .filter_map(|p| Some((p.count, doc.points.get(p.index)?.stats().peak_pss_bytes?.mean)))
        .collect();
    let series = if s.label.is_empty() { String::new() } else { format!(" ({})", s.label) };
    let peaks = format!(
        "peak PSS of the tree{series}: {}",
        measured
            .iter()
            .map(|&(c, pss)| format!("{} {}", count_label(c, param), size(pss)))
            .collect::<Vec<_>>()
            .join(", ")
    );
    // A count measured over the memory is said as measured, and high, whatever the line predicts
    // beyond it (with --predict 64, it had read `[medium] … at 64 threads … would be`).
    let over = measured.iter().any(|&(_, pss)| pss > usable);
    if over
        || !m.grows()
        || m.per_count_bytes * (hi - lo) < MIN_GROWTH_BYTES
        || m.pss_at(m.horizon) <= usable
    {
        return already_over(param, &measured, m, peaks);
    }
    let fits = m.fits_up_to.unwrap_or(0.0);
    let unit = count_label(1.0, param).strip_prefix("1 ").map_or(param.to_string(), str::to_string);
    let predicted = s.predictions.iter().any(|p| p.count == m.horizon && p.count > hi);
    let within = if fits >= 1.0 {
        format!("it fits up to {}", count_label(fits, param))
    } else {
        format!("not even {} fits", count_label(1.0, param))
    };
    let mut evidence = vec![peaks];
    let ci = m
        .per_count_ci90
        .map_or(String::new(), |[l, h]| format!(" (± {}, 90%)", size((h - l) / 2.0)));
    evidence.push(format!(
        "fitted over {} runs: fixed {} + {} per {unit}{ci}",
        m.runs,
        fixed(m.fixed_bytes),
        size(m.per_count_bytes)
    ));
    let at_ci = m
        .at_horizon_ci90
        .map_or(String::new(), |[l, h]| format!(" (± {}, 90%)", size((h - l) / 2.0)));
    evidence.push(format!(
        "at {}, {}: {}{at_ci}",
        count_label(m.horizon, param),
        m.horizon_source,
        size(m.at_horizon_bytes)
    ));
    evidence.push(format!("memory: {} {}", size(usable), m.usable_source));
    Some(Finding {
        kind: Kind::MemoryLimit,
        severity: if predicted { Severity::Medium } else { Severity::High },
        summary: format!(
            "at {} the tree's PSS would be {} of the {} {} (fixed {} + {} per {unit}): memory, not the CPUs, limits the count; {within}",
            count_label(m.horizon, param),
            size(m.at_horizon_bytes),
            size(usable),
            m.usable_source,
            fixed(m.fixed_bytes),
            size(m.per_count_bytes),
        ),
        evidence,
        advice: format!(
            "share what the workers only read (map it read-only, or load it before forking), bound each {unit}'s buffers and caches, or run fewer {param} with more memory each; a batch job for {} needs at least {} ({})",
            count_label(m.horizon, param),
            size(m.at_horizon_ci90.map_or(m.at_horizon_bytes, |c| c[1])),
            request(m.at_horizon_ci90.map_or(m.at_horizon_bytes, |c| c[1]))
        ),
        cost_pct: None,
        cost_per_run_pct: Vec::new(),
        at: Some(m.horizon),
        noise: None,
        what_if: None,
    })
}

/// The finding for a tree whose measured peak PSS already exceeds the usable memory at some count,
/// whatever the line: memory that does not grow with the count (a large input every copy maps)
/// is no less over the limit. `None` when every count measured fits.
fn already_over(
    param: &str,
    measured: &[(f64, f64)],
    m: &MemoryFit,
    peaks: String,
) -> Option<Finding> {
    let usable = m.usable_bytes as f64;
    let &(count, pss) =
        measured.iter().filter(|(_, pss)| *pss > usable).min_by(|a, b| a.0.total_cmp(&b.0))?;
    // Memory that grows with the count: the line says where it stops fitting, between the counts.
    let by_line = m.fits_up_to.filter(|f| m.grows() && *f >= 1.0 && *f < count);
    let measured_fit =
        measured.iter().filter(|&&(c, p)| c < count && p <= usable).map(|p| p.0).reduce(f64::max);
    let within = match (by_line, measured_fit) {
        (Some(f), _) => format!("it fits up to {}", count_label(f, param)),
        (None, Some(c)) => {
            format!("of the counts measured, it fits up to {}", count_label(c, param))
        }
        (None, None) => format!("not even {} fits", count_label(count, param)),
    };
    Some(Finding {
        kind: Kind::MemoryLimit,
        severity: Severity::High,
        summary: format!(
            "at {} the tree's PSS is already {}, measured, more than the {} {}: memory, not the CPUs, limits the count; {within}",
            count_label(count, param),
            size(pss),
            size(usable),
            m.usable_source,
        ),
        evidence: vec![peaks, format!("memory: {} {}", size(usable), m.usable_source)],
        advice: format!(
            "make each run's footprint smaller (share what the workers only read, bound buffers and caches) or run where more memory is given; a batch job for {} needs at least {} ({})",
            count_label(count, param),
            size(pss),
            request(pss)
        ),
        cost_pct: None,
        cost_per_run_pct: Vec::new(),
        at: Some(count),
        noise: None,
        what_if: None,
    })
}

/// `84.8 GiB`, `143 MiB`, `801 KiB`: binary units, as the table writes the peak PSS.
fn size(bytes: f64) -> String {
    let (v, unit) = match crate::fmt::binary(bytes) {
        (v, "B") => (v / 1024.0, "KiB"),
        other => other,
    };
    if v.abs() >= 100.0 { format!("{v:.0} {unit}") } else { format!("{v:.1} {unit}") }
}

/// `--mem=3400M`: a batch job's memory request in SLURM's form, whose M is a MiB, rounded up.
fn request(bytes: f64) -> String {
    format!("--mem={}M", (bytes / (1024.0 * 1024.0)).ceil().max(1.0))
}

/// The fitted fixed part: a line whose intercept falls below 0 (the runs' noise about a small
/// fixed part) says it is about nothing rather than `0.0 kB`.
fn fixed(bytes: f64) -> String {
    if bytes > 0.0 { size(bytes) } else { "≈ 0".into() }
}

#[cfg(test)]
mod tests {
    use super::{MemoryFit, already_over, fixed, size};

    fn flat(usable_bytes: u64) -> MemoryFit {
        MemoryFit {
            fixed_bytes: 210e6,
            per_count_bytes: 0.0,
            per_count_ci90: None,
            runs: 6,
            usable_bytes,
            usable_source: "given with --memory-limit".into(),
            horizon: 4.0,
            horizon_source: "the largest count measured".into(),
            at_horizon_bytes: 210e6,
            at_horizon_ci90: None,
            fits_up_to: None,
        }
    }

    #[test]
    fn memory_that_does_not_grow_but_is_already_over_the_limit_is_a_finding() {
        let measured = [(1.0, 210e6), (2.0, 210e6), (4.0, 210e6)];
        let f = already_over("copies", &measured, &flat(100_000_000), "peaks".into())
            .expect("a finding");
        assert_eq!(f.at, Some(1.0));
        assert!(
            f.summary.starts_with(
                "at 1 copy the tree's PSS is already 200 MiB, measured, more than the 95.4 MiB given with --memory-limit"
            ),
            "{}",
            f.summary
        );
        assert!(f.summary.ends_with("not even 1 copy fits"), "{}", f.summary);
        let rising = [(1.0, 60e6), (2.0, 90e6), (4.0, 150e6)];
        let f = already_over("threads", &rising, &flat(100_000_000), "peaks".into()).unwrap();
        assert!(
            f.summary.ends_with("of the counts measured, it fits up to 2 threads"),
            "{}",
            f.summary
        );
        assert!(
            already_over("copies", &measured, &flat(300_000_000), "peaks".into()).is_none(),
            "all fit"
        );
    }

    #[test]
    fn sizes_read_in_binary_units_and_requests_in_slurms() {
        assert_eq!(size(91e9), "84.8 GiB");
        assert_eq!(size(150e6), "143 MiB");
        assert_eq!(size(820e3), "801 KiB");
        assert_eq!(super::request(3.4e9), "--mem=3243M");
    }

    #[test]
    fn a_fixed_part_fitted_below_zero_reads_as_about_nothing() {
        assert_eq!(
            (fixed(-2.5e5), fixed(0.0), fixed(152e3)),
            ("≈ 0".into(), "≈ 0".into(), "148 KiB".into())
        );
    }
}
