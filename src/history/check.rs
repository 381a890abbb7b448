//! Regressions found, not eyeballed. Over each figure's history, a step is a candidate where the
//! detector ([`super::steps`]) puts one, and it stands when it is beyond the threshold and a
//! two-sample test on the runs themselves (Welch's, on the wall times, or on each run's
//! efficiency or Karp–Flatt serial fraction) says it is not chance. For CI, the newest sweep is
//! judged against the level the sweeps before it settled on (since their last step, at most
//! [`WINDOW`] of them): beyond the threshold, significant on the runs, and outside the spread of
//! those sweeps' own values, so that a sweep against its own repeat is not a regression.

use super::figures::{Track, Worse};
use super::steps;
use crate::stats::{t_two_sided, welch_p, within_fences};
use serde::Serialize;

/// How many sweeps on each side of a step are compared.
pub const WINDOW: usize = 10;
/// Sweeps at a level needed to judge the newest one against their spread: with fewer, one sweep
/// slowed by the machine's load cannot be told from a step.
pub const MIN_LEVEL: usize = 3;

/// How to judge.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// Smallest change that matters, as a fraction (of the figure, or for the serial fraction of
    /// the time at the largest count).
    pub threshold: f64,
    /// Significance level of Welch's test on the runs.
    pub alpha: f64,
}

impl Default for Options {
    fn default() -> Options {
        Options { threshold: 0.05, alpha: 0.01 }
    }
}

/// A step in one figure's history.
#[derive(Clone, Debug, Serialize)]
pub struct Step {
    /// The figure (`time at 8 threads`).
    pub figure: String,
    /// Position of the first sweep at the new level, in the series.
    pub at: usize,
    /// The level before and after.
    pub before: f64,
    /// The level after.
    pub after: f64,
    /// The change as judged, signed, as a fraction (for the serial fraction: of the time at the
    /// largest count).
    pub change: f64,
    /// Whether `change` is that of the time at the largest count (the serial fraction's), not of
    /// the figure itself.
    pub in_time: bool,
    /// Welch's p-value on the runs, when there are runs on both sides.
    pub p: Option<f64>,
    /// Worse, not better.
    pub regression: bool,
    /// Better, for a figure that has a better way.
    pub improvement: bool,
    /// The level before, as shown.
    pub before_text: String,
    /// The level after, as shown.
    pub after_text: String,
}

impl Step {
    /// The change as a signed percentage: `+27%`, or for the serial fraction `+21% in time at the
    /// largest count` (its points moved by more, and are not what a user waits for).
    pub fn change_text(&self) -> String {
        let pct = format!("{:+.0}%", 100.0 * self.change);
        if self.in_time { format!("{pct} in time at the largest count") } else { pct }
    }
}

/// The values present, with their positions.
fn present(t: &Track) -> Vec<(usize, f64)> {
    t.entries
        .iter()
        .enumerate()
        .filter_map(|(i, e)| e.value.filter(|v| v.is_finite()).map(|v| (i, v)))
        .collect()
}

/// The change from `before` to `after` as judged against the threshold.
fn change(t: &Track, before: f64, after: f64) -> f64 {
    match t.felt_at {
        // A serial fraction s costs 1 + s(p − 1) in time at p times the baseline.
        Some(p) => (after - before) * (p - 1.0) / (1.0 + before * (p - 1.0)).max(1e-12),
        None => (after - before) / before.abs().max(1e-300),
    }
}

/// A step between the entries at positions `a` (before) and `b` (after), when it is beyond the
/// threshold and significant on the runs.
fn judge(t: &Track, a: &[usize], b: &[usize], at: usize, o: &Options) -> Option<Step> {
    let values = |idx: &[usize]| idx.iter().filter_map(|&i| t.entries[i].value).collect::<Vec<_>>();
    let samples = |idx: &[usize]| {
        idx.iter().flat_map(|&i| t.entries[i].samples.iter().copied()).collect::<Vec<_>>()
    };
    let (va, vb) = (values(a), values(b));
    if va.is_empty() || vb.is_empty() {
        return None;
    }
    let (before, after) = (steps::median(&va), steps::median(&vb));
    let c = change(t, before, after);
    if !c.is_finite() || c.abs() < o.threshold {
        return None;
    }
    let (sa, sb) = (samples(a), samples(b));
    let p = welch_p(&within_fences(&sa), &within_fences(&sb));
    if p.is_some_and(|p| p >= o.alpha) {
        return None;
    }
    let regression = match t.worse {
        Worse::Higher => after > before,
        Worse::Lower => after < before,
        Worse::Neither => false,
    };
    let improvement = t.worse != Worse::Neither && !regression;
    Some(Step {
        figure: t.name.clone(),
        at,
        before,
        after,
        change: c,
        in_time: t.felt_at.is_some(),
        p,
        regression,
        improvement,
        before_text: t.show(before),
        after_text: t.show(after),
    })
}

/// The newest entry judged against the level the entries before it settled on: the step, when
/// there is one.
pub fn newest(t: &Track, o: &Options) -> Option<Step> {
    let n = t.entries.len().checked_sub(1)?;
    t.entries[n].value?;
    judge_last(t, &current_level(t, n, o), n, o)
}

/// The entries with a value before entry `n` since the level they settled on last began.
fn current_level(t: &Track, n: usize, o: &Options) -> Vec<usize> {
    let mut before: Vec<usize> =
        present(t).into_iter().map(|(i, _)| i).filter(|&i| i < n).collect();
    let regime = regime_start(t, &before, o);
    before.drain(..regime);
    before
}

/// An entry with runs left out and fewer than two left: one run beside other work says nothing.
pub fn thin(e: &super::figures::Entry) -> bool {
    e.left_out > 0 && e.samples.len() < 2
}

/// The level the newest entry is judged against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Level {
    /// How many sweeps of it (at most [`WINDOW`]): fewer than [`MIN_LEVEL`], and [`newest`] cannot
    /// tell a step from a repeat.
    pub sweeps: usize,
    /// Whether it began after a step (or an entry that stood out and stayed), rather than with the
    /// history.
    pub restarted: bool,
}

/// The [`Level`] of the newest entry of `t`.
pub fn level(t: &Track, o: &Options) -> Level {
    let Some(n) = t.entries.len().checked_sub(1) else {
        return Level { sweeps: 0, restarted: false };
    };
    let before: Vec<usize> = present(t).into_iter().map(|(i, _)| i).filter(|&i| i < n).collect();
    let start = regime_start(t, &before, o);
    Level { sweeps: (before.len() - start).min(WINDOW), restarted: start > 0 }
}

/// Where the current level of the entries `idx` starts (an index into `idx`): after the last step
/// that [`all`] would list, or the last entry that stood out from the level before it when no entry
/// after it came back to that level (one odd sweep is an outlier, not a new level).
fn regime_start(t: &Track, idx: &[usize], o: &Options) -> usize {
    let mut start = confirmed(t, idx, o).last().map_or(0, |s| s.0);
    for m in start + 1..idx.len() {
        let level = &idx[start..m];
        if judge_last(t, level, idx[m], o).is_some()
            && (m + 1..idx.len()).all(|k| judge_last(t, level, idx[k], o).is_some())
        {
            start = m;
        }
    }
    start
}

/// Entry `n` against the entries `level` (the current level, oldest first). An entry with runs
/// left out needs two left to be judged.
fn judge_last(t: &Track, level: &[usize], n: usize, o: &Options) -> Option<Step> {
    let window = &level[level.len().saturating_sub(WINDOW)..];
    if window.is_empty() || thin(&t.entries[n]) {
        return None;
    }
    let step = judge(t, window, &[n], n, o)?;
    // Outside the spread of the level's own sweeps: a repeat moves as much as they do. The runs
    // of one sweep share its machine's state (a load that slows them all), so Welch's test on
    // them is not enough: the new sweep must fall outside the level's prediction interval, with
    // Student's t for a spread estimated from few sweeps (5.8σ from 4 of them, 3.2σ from 10).
    let v: Vec<f64> = window.iter().filter_map(|&i| t.entries[i].value).collect();
    if v.len() < MIN_LEVEL {
        return None;
    }
    let dev: Vec<f64> = v.iter().map(|x| (x - step.before).abs()).collect();
    let sigma = (steps::median(&dev) * 1.4826).max(steps::noise(&v)).max(wander(t, n, step.before));
    let m = v.len() as f64;
    let t_crit = t_two_sided(o.alpha, m - 1.0);
    if (step.after - step.before).abs() <= t_crit * sigma * (1.0 + 1.0 / m).sqrt() {
        return None;
    }
    Some(step)
}

/// How far one sweep of the figure strays from the one before it, over the history before entry
/// `n`, at the level `at`: a floor under a level's own spread, which a few sweeps that happen to
/// agree underestimate (five sweeps of a lock-bound program within 0.3 points of each other, the
/// sixth 2.2 points off, on a host where sweeps stray by 2.5% of the figure). The strays are
/// relative, as a host's noise scales with the figure, except for a figure felt in time (the
/// serial fraction), whose points are its scale.
fn wander(t: &Track, n: usize, at: f64) -> f64 {
    let y: Vec<f64> = present(t).into_iter().filter(|&(i, _)| i < n).map(|(_, v)| v).collect();
    let y = &y[y.len().saturating_sub(3 * WINDOW)..];
    if t.felt_at.is_some() {
        return if y.len() > 2 { steps::noise(y) } else { 0.0 };
    }
    let d: Vec<f64> = y
        .windows(2)
        .filter(|w| w[0].abs() + w[1].abs() > 1e-300)
        .map(|w| 2.0 * (w[1] - w[0]).abs() / (w[0].abs() + w[1].abs()))
        .collect();
    if d.len() < 2 {
        return 0.0;
    }
    steps::median(&d) * 1.4826 / std::f64::consts::SQRT_2 * at.abs()
}

/// Every step in a figure's history that at least two sweeps confirm: the detector's levels, a
/// level of one sweep taken for an outlier rather than two steps, each step confirmed on the runs.
/// The newest sweep alone is judged by [`newest`].
pub fn all(t: &Track, o: &Options) -> Vec<Step> {
    let idx: Vec<usize> = present(t).into_iter().map(|(i, _)| i).collect();
    confirmed(t, &idx, o).into_iter().map(|(_, step)| step).collect()
}

/// The steps [`all`] lists among the entries `idx`, with where each starts (an index into `idx`).
fn confirmed(t: &Track, idx: &[usize], o: &Options) -> Vec<(usize, Step)> {
    let y: Vec<f64> = idx.iter().filter_map(|&i| t.entries[i].value).collect();
    let found = steps::detect(&y);
    let ends: Vec<usize> = found.iter().skip(1).copied().chain([y.len()]).collect();
    // A level of one sweep is an outlier, joined to the level before it; unless it is nearer the
    // level after it, whose first sweep it then is (a step's first sweep a little apart).
    let mut starts: Vec<usize> = Vec::new();
    let mut k = 0;
    while k < found.len() {
        let s = found[k];
        if s > 0 && ends[k] - s == 1 {
            let near = |a: usize, b: usize| (y[s] - steps::median(&y[a..b])).abs();
            let prev = *starts.last().unwrap_or(&0);
            if k + 1 < found.len() && near(ends[k], ends[k + 1]) < near(prev, s) {
                starts.push(s);
                k += 2;
                continue;
            }
            k += 1;
            continue;
        }
        starts.push(s);
        k += 1;
    }
    let mut out = Vec::new();
    for (k, &s) in starts.iter().enumerate().skip(1) {
        let prev = starts[k - 1];
        let next = starts.get(k + 1).copied().unwrap_or(idx.len());
        let a = &idx[prev.max(s.saturating_sub(WINDOW))..s];
        let b = &idx[s..next.min(s + WINDOW)];
        if let Some(step) = judge(t, a, b, idx[s], o) {
            out.push((s, step));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::figures::Entry;

    fn track(levels: &[f64]) -> Track {
        let entries = levels
            .iter()
            .enumerate()
            .map(|(i, &l)| {
                // Three runs around the level, a little different each sweep.
                let wobble = [0.0, 0.004, -0.003, 0.002, -0.001][i % 5];
                let samples: Vec<f64> =
                    [0.99, 1.0, 1.01].iter().map(|f| l * (f + wobble)).collect();
                let value = samples.iter().sum::<f64>() / 3.0;
                Entry {
                    sweep: i,
                    value: Some(value),
                    interval: None,
                    samples,
                    text: None,
                    left_out: 0,
                }
            })
            .collect();
        Track {
            name: "time at 2 threads".into(),
            worse: Worse::Higher,
            unit: "s",
            entries,
            felt_at: None,
        }
    }

    #[test]
    fn a_step_is_found_at_its_entry_and_the_newest_only_when_it_is_the_step() {
        let levels: Vec<f64> = (0..20).map(|i| if i < 12 { 1.0 } else { 1.3 }).collect();
        let t = track(&levels);
        let found = all(&t, &Options::default());
        assert_eq!(found.iter().map(|s| s.at).collect::<Vec<_>>(), vec![12], "{found:?}");
        let mut blip = levels.clone();
        blip[5] = 1.5;
        assert!(
            all(&track(&blip), &Options::default()).iter().all(|s| s.at == 12),
            "one odd sweep is no step"
        );
        assert!(found[0].regression);
        for n in 2..20 {
            let prefix = track(&levels[..=n]);
            assert_eq!(newest(&prefix, &Options::default()).is_some(), n == 12, "entry {n}");
        }
    }

    #[test]
    fn one_odd_sweep_does_not_restart_the_level_and_a_step_does() {
        let mut levels: Vec<f64> = (0..20).map(|i| if i < 12 { 1.0 } else { 1.3 }).collect();
        levels[5] = 1.5;
        let o = Options::default();
        for n in 7..12 {
            let prefix = track(&levels[..=n]);
            let l = level(&prefix, &o);
            assert!(!l.restarted, "entry {n}: the odd sweep 5 is an outlier");
            assert_eq!(l.sweeps, n.min(WINDOW), "entry {n}");
        }
        for n in 13..20 {
            assert!(
                level(&track(&levels[..=n]), &o).restarted,
                "entry {n}: judged since the step at 12"
            );
        }
    }

    #[test]
    fn a_steps_first_sweep_a_little_apart_begins_it() {
        let mut levels: Vec<f64> = (0..20).map(|i| if i < 12 { 1.0 } else { 1.3 }).collect();
        levels[12] = 1.22;
        let found = all(&track(&levels), &Options::default());
        assert!(found.iter().all(|s| s.at == 12) && !found.is_empty(), "{found:?}");
    }

    #[test]
    fn a_sweep_a_few_percent_off_a_level_that_happens_to_agree_is_no_regression() {
        // Sweeps that stray by ~2.5% one from the next, a step, then five that agree within 0.3%.
        let mut levels: Vec<f64> =
            [1.0, 1.03, 0.99, 1.025, 0.98, 1.02, 0.975, 1.015, 0.985, 1.03, 1.0, 0.97]
                .iter()
                .map(|v| v * 0.96)
                .collect();
        levels.extend([0.414, 0.415, 0.414, 0.413, 0.414]);
        let mut off = levels.clone();
        off.push(0.392);
        assert!(
            newest(&track(&off), &Options::default()).is_none(),
            "-5% within the host's wander"
        );
        let mut step = levels.clone();
        step.push(0.30);
        assert!(newest(&track(&step), &Options::default()).is_some(), "-27% is a step");
    }

    #[test]
    fn a_repeat_is_not_a_regression() {
        let t = track(&[1.0, 1.0]);
        assert!(newest(&t, &Options::default()).is_none());
    }
}
