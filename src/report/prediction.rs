//! The prediction lines of the model block: the cross-validated forecast with its 90% interval
//! (lower bound first, in the unit measured), the back-test beside it, a smallest count that did
//! more per core than the rest, and where to measure next.

use super::format::num;
use super::rates::{self, count_text, rate_interval, rate_text, sig};
use crate::results::analysis::{Analysis, Backtest, Basis, FastBaseline, Forecast, NextCount};

/// `2517 MB/s, 90% interval 2201–2890 MB/s, by T = … (chosen by cross-validation: …)`.
pub fn forecast(a: &Analysis, count: f64, f: &Forecast) -> String {
    let interval = match f.interval90 {
        Some(ci) => format!("90% interval {}{}", rate_interval(a, count, ci), ends(a, f)),
        None => "no interval (two counts of one run each leave nothing to resample)".into(),
    };
    let cv = match f.cv_error_pct {
        Some(e) => format!(
            "chosen by leave-one-out cross-validation, {e:.1}% off on the counts it left out"
        ),
        None => "two counts: no choice of model".into(),
    };
    let runner = f
        .runner_up
        .as_ref()
        .map(|r| {
            format!(
                "; runner-up {}: {} ({:.1}% off)",
                r.model,
                rate_text(a, count, r.rate),
                r.cv_error_pct
            )
        })
        .unwrap_or_default();
    // Weak scaling on wall time fits the time per unit of work, a run's time over the count.
    let per_unit = if a.axis.weak() && a.basis == Basis::Time && f.model.contains("T =") {
        ", T the time per unit of work (a run's over the count)".to_string()
    } else {
        symbol_unit(a, &f.model)
    };
    let shared = f
        .cpus
        .map(|c| {
            format!(
                " (as at {}: above the machine's {} CPUs its workers share them, which often costs more)",
                count_text(a, c),
                rates::count(c)
            )
        })
        .unwrap_or_default();
    format!(
        "{}{shared}, {interval}, by {}{per_unit} ({cv}){runner}",
        rate_text(a, count, f.rate),
        f.model
    )
}

/// ` (T in s per B)`: the unit of the model's symbol, T the time per unit of what the rate
/// counts (per run for a table of times), X the rate itself.
fn symbol_unit(a: &Analysis, model: &str) -> String {
    match (model.contains("X ="), a.basis) {
        (true, Basis::Time) => " (X in runs/s)".into(),
        (true, Basis::Throughput) => format!(" (X in {})", a.unit),
        (false, Basis::Time) => " (T in s per run)".into(),
        (false, Basis::Throughput) => {
            // `MB/s` counts MB; a rate without a unit (`per s`) counts what the program did.
            let counted = a.unit.strip_suffix("/s").or_else(|| a.unit.strip_suffix("per s"));
            match counted.map_or(a.unit.as_str(), str::trim) {
                "" => " (T in s per unit of work)".into(),
                c => format!(" (T in s per {c})"),
            }
        }
    }
}

/// What set an interval's ends beyond the measured counts, when not the models: ` (slow end: …)`.
fn ends(a: &Analysis, f: &Forecast) -> String {
    let slow = f.plateau_from.map(|c| {
        format!(
            "slow end: no gain past {}, as a bottleneck the measured counts cannot show may appear at any larger count",
            count_text(a, c)
        )
    });
    let fast =
        f.linear_from.map(|c| format!("fast end: perfect scaling from {}", count_text(a, c)));
    let said: Vec<String> = slow.into_iter().chain(fast).collect();
    if said.is_empty() { String::new() } else { format!(" ({})", said.join("; ")) }
}

/// `back-test: from 1–8 threads this procedure predicted 16 threads 4% low (…)`.
pub fn backtest(a: &Analysis, b: &Backtest) -> String {
    let what = if a.basis == Basis::Time { "time " } else { "" };
    let checks: Vec<String> = b
        .checks
        .iter()
        .map(|c| {
            let way = if c.error_pct < 0.0 { "low" } else { "high" };
            format!(
                "{} {what}{:.0}% {way} ({}; measured {})",
                count_text(a, c.count),
                c.error_pct.abs(),
                rate_text(a, c.count, c.predicted),
                rate_text(a, c.count, c.measured)
            )
        })
        .collect();
    format!(
        "back-test: from {}–{} {} this procedure predicted {}",
        rates::count(b.trained[0]),
        rates::count(b.trained[1]),
        a.axis.param,
        checks.join(", ")
    )
}

/// The smallest count that did more (or less) per core, and what the forecast does about it.
pub fn fast_baseline(a: &Analysis, f: &FastBaseline) -> String {
    if f.second[1] < 0.0 {
        return format!(
            "baseline: {} did less per core than the rest ({} ran faster than perfect scaling from it, \
             Karp–Flatt {}: its data did not fit the memory or caches the larger counts share, or it waited); \
             the prediction is fitted without it",
            count_text(a, f.count),
            count_text(a, f.second[0]),
            sig(f.second[1]),
        );
    }
    format!(
        "baseline: {} did more per core than the rest (Karp–Flatt against it falls from {} at {} to {} at {}: \
         a higher clock with one core busy, or data that fit its caches); the prediction is fitted without it",
        count_text(a, f.count),
        sig(f.second[1]),
        count_text(a, f.second[0]),
        sig(f.largest[1]),
        count_text(a, f.largest[0])
    )
}

/// `next: to narrow the prediction at 64 threads (…): measure 32 threads (…)`.
pub fn next_count(a: &Analysis, n: &NextCount) -> String {
    let options: Vec<String> = n
        .options
        .iter()
        .map(|o| {
            let cost =
                o.core_seconds.map(|c| format!(", {} a run", core_time(c))).unwrap_or_default();
            format!("{} would leave {:.0}%{cost}", count_text(a, o.count), o.width_pct)
        })
        .collect();
    format!(
        "next: the 90% interval at {} is {:.0}% of the prediction wide; measuring {}",
        count_text(a, n.target),
        n.width_pct,
        options.join(", ")
    )
}

/// Core-seconds in the largest unit that keeps them above one.
fn core_time(s: f64) -> String {
    if s >= 3600.0 {
        format!("{} core-hours", num(s / 3600.0))
    } else {
        format!("{} core-seconds", num(s))
    }
}
