//! Counts and rates as the model's and the predictions' lines write them: a count with or without
//! its parameter, a rate or its interval in the unit shown, four significant digits.

use super::format::{num, throughput_scale};
use crate::analysis::count_label;
use crate::results::analysis::{Analysis, Basis};

/// A number with four significant digits, in scientific notation when tiny.
pub fn sig(x: f64) -> String {
    if x != 0.0 && x.abs() < 1e-3 { format!("{x:.3e}") } else { num(x) }
}

/// A rate's interval at `count` in the unit shown, lower bound first: `8.01–9.2 s per run`.
pub fn rate_interval(a: &Analysis, count: f64, [lo, hi]: [f64; 2]) -> String {
    let (lo, hi) = if a.basis == Basis::Time { (hi, lo) } else { (lo, hi) };
    match a.basis {
        Basis::Throughput => {
            let (div, label) = throughput_scale(&a.unit, hi);
            format!("{}–{} {label}", num(lo / div), num(hi / div))
        }
        Basis::Time => {
            format!("{}–{} s per run", num(seconds(a, count, lo)), num(seconds(a, count, hi)))
        }
    }
}

/// A rate at `count` as shown: throughput in its scaled unit, or the seconds a run takes.
pub fn rate_text(a: &Analysis, count: f64, x: f64) -> String {
    match a.basis {
        Basis::Throughput => {
            let (div, label) = throughput_scale(&a.unit, x);
            format!("{} {label}", num(x / div))
        }
        Basis::Time => format!("{} s per run", num(seconds(a, count, x))),
    }
}

/// The wall time of a run at `count` from a time-based rate: 1 / time, or count / time when the
/// work grows with the count (weak scaling).
fn seconds(a: &Analysis, count: f64, rate: f64) -> f64 {
    if a.axis.weak() { count / rate } else { 1.0 / rate }
}

/// A count as written: whole numbers without decimals.
pub fn count(n: f64) -> String {
    if n.fract() == 0.0 && n.abs() < 1e15 { format!("{n:.0}") } else { num(n) }
}

/// A count with its parameter's name.
pub fn count_text(a: &Analysis, n: f64) -> String {
    count_label(n, &a.axis.param)
}
