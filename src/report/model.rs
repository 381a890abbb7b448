//! The "Model" block under the table: per-point Karp–Flatt, the Amdahl, USL or Gustafson fit
//! with intervals, the best point, retrograde scaling, predictions and warnings — as plain lines
//! that the terminal prints and Markdown lists. Also the per-point table of `analyze`.

use super::format::{decimals, num, throughput_scale};
pub use super::rates::{count, count_text, rate_interval, rate_text, sig};
use super::table::{Column, NONE, Table};
use crate::results::analysis::{
    AmdahlFit, Analysis, Basis, Estimate, IntervalMethod, JudgedBy, PointScaling, SeriesAnalysis,
};

/// `0.0052 [0.0047, 0.0058]`.
pub fn estimate(e: &Estimate, f: impl Fn(f64) -> String) -> String {
    match e.ci95 {
        Some([lo, hi]) => format!("{} [{}, {}]", f(e.value), f(lo), f(hi)),
        None => f(e.value),
    }
}

/// A fitted rate at `count` with its interval: `9.21 s per run [8.01–10.0 s per run]`.
fn rate_estimate(a: &Analysis, count: f64, e: &Estimate) -> String {
    match e.ci95 {
        Some(ci) => format!("{} [{}]", rate_text(a, count, e.value), rate_interval(a, count, ci)),
        None => rate_text(a, count, e.value),
    }
}

/// Amdahl pinned at its bound, s = 1: no count ran faster than the baseline, which the law cannot
/// give, so its intervals mean nothing.
fn pinned(am: &AmdahlFit) -> bool {
    am.serial_fraction.value >= 1.0 - 1e-9
}

/// The model block, one line per statement.
pub fn lines(a: &Analysis) -> Vec<String> {
    let mut out: Vec<String> = a.notes.clone();
    for s in &a.series {
        let head = if s.label.is_empty() { String::new() } else { format!("[{}] ", s.label) };
        out.extend(series_lines(a, s).into_iter().map(|l| format!("{head}{l}")));
    }
    out
}

fn series_lines(a: &Analysis, s: &SeriesAnalysis) -> Vec<String> {
    let mut out = Vec::new();
    let from = match (a.basis, a.axis.weak()) {
        (Basis::Throughput, _) => "throughput",
        (Basis::Time, false) => "wall time",
        (Basis::Time, true) => "wall time, work growing with the count",
    };
    let headline = s.points.iter().rev().find(|p| p.count <= s.fitted_up_to).or(s.points.last());
    if let Some(last) = headline.filter(|p| p.count != s.baseline) {
        let eff =
            last.efficiency.map(|e| format!(", efficiency {:.0}%", 100.0 * e)).unwrap_or_default();
        let ci = last.speedup_ci95.map(|[l, h]| format!(" [{l:.2}, {h:.2}]")).unwrap_or_default();
        let kind = if a.axis.weak() { "scaled speed-up" } else { "speed-up" };
        let mut line = format!(
            "{kind} {:.2}×{ci} at {} against {} (from {from}){eff}",
            last.speedup,
            count_text(a, last.count),
            count_text(a, s.baseline)
        );
        if let Some(p) = last.amdahl_parallel_pct {
            line.push_str(&format!(
                ": as if {p:.1}% of the work were parallel (Amdahl at this point)"
            ));
        }
        out.push(line);
    }
    let kf: Vec<String> = s
        .points
        .iter()
        .filter_map(|p| p.karp_flatt.map(|e| format!("{}: {}", count(p.count), sig(e))))
        .collect();
    if kf.len() > 1 {
        let above = s.points.iter().any(|p| p.karp_flatt.is_some_and(|e| e > 1.0));
        out.push(format!(
            "Karp–Flatt serial fraction by {}: {}{}",
            a.axis.param,
            kf.join(", "),
            if above {
                " (above 1: slower than the baseline, which no serial fraction explains)"
            } else {
                ""
            }
        ));
    }
    let how = |m: IntervalMethod| match m {
        IntervalMethod::Bootstrap => {
            " (95% intervals: bootstrap over runs, widened to Student's t)"
        }
        IntervalMethod::Asymptotic => " (95% intervals from the fit's residuals)",
        IntervalMethod::None => " (too few points for intervals)",
    };
    if let Some(am) = &s.amdahl {
        // Through two points the fit is exact: its ceiling is an extrapolation from one speed-up.
        let ceiling = am
            .ceiling_speedup
            .as_ref()
            .filter(|_| am.fit.residual_stddev.is_some())
            .map(|c| format!(", ceiling {}×", estimate(c, speedup)))
            .unwrap_or_else(|| {
                if am.fit.residual_stddev.is_none() && am.ceiling_speedup.is_some() {
                    " (fitted through two counts: a ceiling would be an extrapolation)".into()
                } else {
                    String::new()
                }
            });
        // Pinned at its bound (no speed-up at all, or a slowdown, which the law cannot give): an
        // interval of [1.000, 1.000] read as a certainty it is not.
        if pinned(am) {
            out.push(
                "Amdahl fit: serial fraction s = 1 → as if 0% parallel: no count measured ran faster than the baseline (s at its bound, where an interval means nothing)".into(),
            );
        } else {
            out.push(format!(
                "Amdahl fit: serial fraction s = {} → as if {}% parallel{ceiling}{}",
                estimate(&am.serial_fraction, sig),
                estimate(&am.parallel_pct, |x| format!("{x:.2}")),
                how(am.fit.intervals)
            ));
        }
    }
    if let Some(u) = &s.usl {
        let peak = match (&u.peak_count, &u.peak_rate) {
            (Some(n), Some(x)) => {
                format!(
                    "; peak at N* = {} ({})",
                    estimate(n, |v| format!("{v:.0}")),
                    rate_text(a, n.value, x.value)
                )
            }
            _ => "; no peak (κ = 0: throughput levels off instead of falling)".into(),
        };
        let resid = match (a.basis, u.fit.residual_stddev, u.fit.residual_pct) {
            (Basis::Throughput, Some(r), Some(pct)) => {
                format!("; residual σ {} ({pct:.1}%)", rate_text(a, 1.0, r))
            }
            (_, _, Some(pct)) => format!("; residual σ {pct:.1}% of the fitted rate"),
            _ => String::new(),
        };
        out.push(format!(
            "USL fit: σ (contention) = {}, κ (coherency) = {}{peak}; {}-limited{resid}{}",
            estimate(&u.sigma, sig),
            estimate(&u.kappa, sig),
            u.limited_by,
            how(u.fit.intervals)
        ));
    }
    if let Some(g) = &s.gustafson {
        out.push(format!(
            "Gustafson fit (weak scaling): serial fraction s = {}{}",
            estimate(&g.serial_fraction, sig),
            how(g.fit.intervals)
        ));
    }
    if let Some(b) = &s.best {
        let near = b
            .near_best_count
            .map(|n| format!("; {} already gives within 5% of it", count_text(a, n)))
            .unwrap_or_default();
        let more = b
            .no_better
            .map(|n| {
                format!(
                    ", the fewest that the runs cannot tell from the fastest ({} measured faster, within the runs' noise)",
                    count_text(a, n)
                )
            })
            .unwrap_or_default();
        out.push(format!(
            "best: {} ({}){near}{more}",
            count_text(a, b.count),
            rate_text(a, b.count, b.rate)
        ));
    }
    if let Some(r) = &s.retrograde {
        let how = if r.judged_by == JudgedBy::Runs {
            "beyond the runs' 95% intervals"
        } else {
            "single values, so only a drop of more than 5% counts"
        };
        out.push(format!(
            "retrograde: beyond {}, more is slower: {} gives {:+.1}% ({how})",
            count_text(a, r.beyond),
            count_text(a, r.at),
            r.change_pct
        ));
    }
    if let Some(f) = &s.fast_baseline {
        out.push(super::prediction::fast_baseline(a, f));
    }
    for p in &s.predictions {
        let tag = if p.extrapolated { " (extrapolated)" } else { "" };
        if let Some(f) = &p.forecast {
            out.push(format!(
                "prediction at {}{tag}: {}",
                count_text(a, p.count),
                super::prediction::forecast(a, p.count, f)
            ));
        } else if a.axis.parallel() {
            // Said, not left out: a retrograde pair of counts gave no line and no reason.
            out.push(format!(
                "prediction at {}{tag}: none: no candidate model fitted to the measured counts gives a time there (with two counts only Amdahl is tried, and it needs one count faster than the baseline); measure more counts",
                count_text(a, p.count)
            ));
        }
        let mut parts = Vec::new();
        // Amdahl pinned at s = 1 predicts the baseline's rate with an interval that means nothing.
        let pinned = s.amdahl.as_ref().is_some_and(pinned);
        for (name, e) in [("Amdahl", &p.amdahl), ("USL", &p.usl), ("Gustafson", &p.gustafson)] {
            match e {
                Some(e) if name == "Amdahl" && pinned => parts.push(format!(
                    "Amdahl {} (s at its bound: no gain, no interval)",
                    rate_text(a, p.count, e.value)
                )),
                Some(e) => parts.push(format!("{name} {}", rate_estimate(a, p.count, e))),
                None => {}
            }
        }
        if !parts.is_empty() {
            // Each law's interval counts its own parameters' uncertainty alone: beside the
            // prediction's, which also counts the choice of model, it is no second answer.
            let what = if p.forecast.is_some() {
                "95%, each law's own fit alone; the prediction's interval above is the one to bet on"
            } else {
                "95%"
            };
            out.push(format!(
                "the laws at {} ({what}): {}",
                count_text(a, p.count),
                parts.join("; ")
            ));
        }
    }
    match &s.backtest {
        Some(b) => out.push(super::prediction::backtest(a, b)),
        None if s.predictions.iter().any(|p| p.extrapolated) => out.push(
            "back-test: none (it needs three counts, to predict the largest from the others): this extrapolation is untried"
                .into(),
        ),
        None => {}
    }
    if let Some(n) = &s.next_count {
        out.push(super::prediction::next_count(a, n));
    }
    out.extend(s.warnings.iter().map(|w| format!("warning: {w}")));
    out
}

/// The per-point table of an analysis (for tables that are not a scalescope sweep).
pub fn points_table(a: &Analysis, s: &SeriesAnalysis) -> Table {
    let mut cols: Vec<Column<PointScaling>> =
        vec![Column::number(a.axis.param.as_str(), |p: &PointScaling| count(p.count))];
    cols.push(match a.basis {
        Basis::Throughput => {
            let (div, unit) =
                throughput_scale(&a.unit, s.points.iter().map(|p| p.rate).fold(0.0, f64::max));
            Column::number(
                format!("throughput ({unit})"),
                move |p: &PointScaling| num(p.rate / div),
            )
        }
        // Under weak scaling the rate is count / time.
        Basis::Time => {
            let work = move |p: &PointScaling| if a.axis.weak() { p.count } else { 1.0 };
            Column::number("time (s)", move |p: &PointScaling| num(work(p) / p.rate))
        }
    });
    cols.push(Column::number("speed-up", |p: &PointScaling| {
        let ci = p.speedup_ci95.map(|[l, h]| format!(" [{l:.2}, {h:.2}]")).unwrap_or_default();
        format!("{:.2}×{ci}", p.speedup)
    }));
    if a.axis.parallel() {
        cols.push(Column::number("efficiency", |p: &PointScaling| {
            p.efficiency.map_or(NONE.into(), |e| format!("{:.0}%", 100.0 * e))
        }));
        cols.push(Column::number("Karp–Flatt", |p: &PointScaling| {
            p.karp_flatt.map_or(NONE.into(), sig)
        }));
        cols.push(Column::number("as if parallel", |p: &PointScaling| {
            p.amdahl_parallel_pct.map_or(NONE.into(), |x| format!("{x:.1}%"))
        }));
    }
    if s.points.iter().any(|p| p.cpu_pct.is_some()) {
        cols.push(Column::number("%CPU", |p: &PointScaling| {
            p.cpu_pct.map_or(NONE.into(), |c| format!("{c:.0}"))
        }));
    }
    Table::of(&cols, &s.points)
}

/// A speed-up of 1 or more with three significant digits: `1.41`, `15.2`, `312`.
fn speedup(x: f64) -> String {
    format!("{x:.*}", decimals(x).saturating_sub(1))
}
