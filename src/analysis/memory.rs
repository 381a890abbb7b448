//! The tree's memory against the count: a straight line through every run's peak PSS (a fixed
//! part and a growth per thread, copy or rank, with a 90% interval), and the count at which it
//! would reach the memory the job may use (`--memory-limit`, the job's cgroup limit, or what the
//! machine had available), judged up to the count a user would run on this node or predicts for.

use super::Options;
use crate::plan::{Axis, Counts};
use crate::results::Results;
use crate::results::analysis::{MemoryFit, SeriesAnalysis};
use crate::stats::t_quantile;

/// The line through a series' peaks and where it meets the usable memory; `None` without two
/// counts with memory readings, without a known memory, or for ranks spread over several nodes
/// (their summed PSS is no one node's).
pub fn fit(doc: &Results, axis: &Axis, s: &SeriesAnalysis, opts: &Options) -> Option<MemoryFit> {
    if !axis.parallel() {
        return None;
    }
    let mut xy: Vec<(f64, f64)> = Vec::new();
    let mut nodes: Vec<&str> = Vec::new();
    for p in &s.points {
        for r in doc.points.get(p.index)?.runs.iter().filter(|r| r.counted()) {
            nodes.extend(r.ranks.iter().map(|x| x.node.as_str()));
            if let Some(m) = r.threads.as_ref().and_then(|t| t.memory).filter(|m| m.readings > 0) {
                xy.push((p.count, m.peak_pss_bytes as f64));
            }
        }
    }
    nodes.sort_unstable();
    nodes.dedup();
    if nodes.len() > 1 {
        return None;
    }
    let (fixed, slope, se) = line(&xy)?;
    let (usable_bytes, usable_source) = match opts.memory_limit {
        Some(l) => (l, "given with --memory-limit".to_string()),
        None => doc.machine.usable_memory().map(|(b, what)| (b, what.to_string()))?,
    };
    let (horizon, horizon_source) = horizon(doc, axis, s, opts);
    let t = se.map(|se| (t_quantile(0.95, (xy.len() - 2) as f64), se));
    let fits_up_to =
        (slope > 0.0).then(|| ((usable_bytes as f64 - fixed) / slope).floor().max(0.0));
    Some(MemoryFit {
        fixed_bytes: fixed,
        per_count_bytes: slope,
        per_count_ci90: t.as_ref().map(|(t, se)| [slope - t * se.slope, slope + t * se.slope]),
        runs: xy.len(),
        usable_bytes,
        usable_source,
        horizon,
        horizon_source,
        at_horizon_bytes: fixed + slope * horizon,
        at_horizon_ci90: t.map(|(t, se)| {
            let half = t * se.at(horizon);
            [fixed + slope * horizon - half, fixed + slope * horizon + half]
        }),
        fits_up_to,
    })
}

/// Standard errors of a fitted line.
struct LineErrors {
    slope: f64,
    /// s², the residual variance.
    s2: f64,
    n: f64,
    mean_x: f64,
    sxx: f64,
}

impl LineErrors {
    /// Standard error of the line's value at `x`.
    fn at(&self, x: f64) -> f64 {
        (self.s2 * (1.0 / self.n + (x - self.mean_x).powi(2) / self.sxx)).sqrt()
    }
}

/// Least squares: intercept, slope and, with at least three points, their errors; `None` with
/// fewer than two distinct x.
fn line(xy: &[(f64, f64)]) -> Option<(f64, f64, Option<LineErrors>)> {
    let n = xy.len() as f64;
    let mean_x = xy.iter().map(|p| p.0).sum::<f64>() / n;
    let mean_y = xy.iter().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = xy.iter().map(|p| (p.0 - mean_x).powi(2)).sum();
    if xy.len() < 2 || sxx <= 0.0 {
        return None;
    }
    let slope = xy.iter().map(|p| (p.0 - mean_x) * (p.1 - mean_y)).sum::<f64>() / sxx;
    let fixed = mean_y - slope * mean_x;
    let errors = (xy.len() >= 3).then(|| {
        let rss: f64 = xy.iter().map(|p| (p.1 - fixed - slope * p.0).powi(2)).sum();
        let s2 = rss / (n - 2.0);
        LineErrors { slope: (s2 / sxx).sqrt(), s2, n, mean_x, sxx }
    });
    Some((fixed, slope, errors))
}

/// The largest count worth judging and why: the largest measured, the most this node's CPUs
/// would run (threads one to a CPU; copies or ranks as many as their CPU use fits), or the
/// largest asked for with `--predict`.
fn horizon(doc: &Results, axis: &Axis, s: &SeriesAnalysis, opts: &Options) -> (f64, String) {
    let measured = s.points.iter().map(|p| p.count).fold(0.0, f64::max);
    let mut best = (measured, "the largest count measured".to_string());
    let cpus = doc.machine.allowed_cpus as f64;
    let per_worker = match axis.counts {
        Counts::Workers => Some(1.0),
        // A copy or rank that keeps several CPUs busy leaves room for fewer of them.
        Counts::Copies | Counts::Ranks => s
            .points
            .iter()
            .find_map(|p| Some(p.cpu_pct? / 100.0 / p.count).filter(|c| *c > 0.0 && p.count > 0.0))
            .map(|c| c.round().max(1.0)),
        Counts::Other => None,
    };
    if let Some(c) = per_worker.filter(|_| cpus > 0.0) {
        let fill = (cpus / c).floor();
        if fill > best.0 {
            best = (fill, format!("the most this node's {cpus:.0} CPUs would run"));
        }
    }
    if let Some(&p) = opts.predict.iter().max_by(|a, b| a.total_cmp(b))
        && p > best.0
    {
        best = (p, "the count asked for with --predict".to_string());
    }
    best
}

#[cfg(test)]
mod tests {
    use super::line;

    #[test]
    fn a_line_through_exact_points_has_no_error_and_two_points_no_interval() {
        let (a, b, e) = line(&[(1.0, 12.0), (2.0, 14.0), (4.0, 18.0)]).unwrap();
        assert!((a - 10.0).abs() < 1e-9 && (b - 2.0).abs() < 1e-9);
        assert!(e.unwrap().slope < 1e-9);
        let (_, b, e) = line(&[(1.0, 1.0), (3.0, 5.0)]).unwrap();
        assert!((b - 2.0).abs() < 1e-12 && e.is_none());
        assert!(line(&[(2.0, 1.0), (2.0, 3.0)]).is_none(), "one count: no line");
    }
}
