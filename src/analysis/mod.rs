//! Turning measurements into scaling figures: per point speed-up, efficiency and Karp–Flatt
//! against a baseline; Amdahl, USL and Gustafson fits with intervals; the best point and whether
//! more is slower beyond it; predictions by a model chosen by cross-validation, with intervals,
//! a back-test and the count to measure next. Used after every run, by `scalescope analyze`, and on
//! published tables (CSV).

mod analyze;
mod backtest;
mod crossval;
mod fast_baseline;
mod fits;
mod forecast;
mod lm;
mod memory;
mod models;
mod next_count;
mod normal_form;
pub mod observations;
mod point;
mod prediction;
mod ratio;
mod speedup;
pub mod table_csv;
pub mod threads;
mod verdict;

use crate::plan::Axis;
use crate::results::{Analysis, Results};
pub use analyze::{Options, analyze};
pub use ratio::log_interval;
pub use verdict::SINGLE_VALUE_THRESHOLD;

/// `1 thread`, `4 threads`, `1 copy`, `2.5 GB`: a count and its parameter's name, singular for one.
pub fn count_label(n: f64, name: &str) -> String {
    let shown = crate::fmt::count(n);
    // A one- or two-letter name (`p`, `np`) is no unit: `p=2`, not `2 p`.
    if name.chars().count() <= 2 {
        return format!("{name}={shown}");
    }
    let singular = name
        .strip_suffix("ies")
        .map(|s| format!("{s}y"))
        .or_else(|| name.strip_suffix('s').map(String::from));
    match singular {
        Some(one) if n == 1.0 && !one.is_empty() => format!("{shown} {one}"),
        _ => format!("{shown} {name}"),
    }
}

/// A request the data cannot answer: a `--baseline` that names no measured point, or a table
/// that cannot be analysed as asked.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum AnalysisError {
    /// `--baseline` names a parameter other than the counted one.
    #[error(
        "--baseline {given}: the counted parameter is {scale}, not {name} (or choose it with --scale {name})"
    )]
    BaselineParameter {
        /// `--baseline` as given.
        given: String,
        /// The counted parameter.
        scale: String,
        /// The parameter it names.
        name: String,
    },
    /// `--baseline`'s value is not a number.
    #[error("--baseline {given}: '{value}' is not a number")]
    BaselineNotNumber {
        /// `--baseline` as given.
        given: String,
        /// Its value.
        value: String,
    },
    /// No series measured the count `--baseline` names.
    #[error("--baseline {given}: {scale}={value} was not measured (values: {measured})")]
    BaselineNotMeasured {
        /// `--baseline` as given.
        given: String,
        /// The counted parameter.
        scale: String,
        /// The count asked for.
        value: String,
        /// The counts measured, joined.
        measured: String,
    },
    /// A table that cannot be read, or analysed as asked.
    #[error("{table}: {problem}")]
    Table {
        /// The table's name.
        table: String,
        /// What is wrong with it, or what the CSV reader said.
        problem: String,
    },
}

/// Analyses a results document along `axis`, against the plan's `--baseline` unless `opts` give one.
pub fn analyze_results(
    doc: &Results,
    axis: &Axis,
    opts: &Options,
) -> Result<Analysis, AnalysisError> {
    let opts = Options {
        baseline: opts.baseline.clone().or_else(|| doc.plan.baseline.clone()),
        confidence: doc.sequential.as_ref().map_or(opts.confidence, |s| s.confidence()),
        cpus: opts.cpus.or(Some(doc.machine.allowed_cpus as f64).filter(|c| *c > 0.0)),
        ..opts.clone()
    };
    let mut a = analyze(&observations::from_results(doc, axis), &opts)?;
    for s in &mut a.series {
        s.memory = memory::fit(doc, axis, s, &opts);
    }
    Ok(a)
}

#[cfg(test)]
mod tests {
    use super::count_label;

    #[test]
    fn counts_read_as_words_and_short_names_as_settings() {
        assert_eq!(count_label(1.0, "threads"), "1 thread");
        assert_eq!(count_label(4.0, "copies"), "4 copies");
        assert_eq!(count_label(1.0, "copies"), "1 copy");
        assert_eq!(count_label(2.0, "p"), "p=2");
        assert_eq!(count_label(2.5, "np"), "np=2.5");
    }
}
