//! Comparing result sets — sweeps or published tables: before and after a patch, several
//! kernels, two filesystems. Points are matched by their parameters (threads against copies: by
//! the count); each is judged against the reference set by a ratio of means with a bootstrap
//! interval, Welch's test and a noise threshold (single values by a threshold alone); the fitted models are set side by side, and the
//! sampler's breakdowns say what changed.

pub mod html;
mod memory;
mod points;
mod predicted;
pub mod text;
mod why;

use crate::analysis::observations::Observations;
use crate::analysis::{Options as AnalysisOptions, analyze};
use crate::results::analysis::Basis;
use crate::results::{Analysis, Results};
use points::Figure;
pub use points::{Measured, Values, Verdict};
use serde::Serialize;

/// A result set and what to call it: a sweep's results, or a table.
pub struct Set {
    /// Short name in tables (`--label`, else the folder's or the file's name).
    pub label: String,
    /// Where it was read from.
    pub path: String,
    /// Its points, with the values measured at each.
    pub points: Vec<Measured>,
    /// Unit of its throughput figures, when it has them.
    pub unit: Option<String>,
    /// Its scaling analysis, for the models side by side.
    pub analysis: Option<Analysis>,
    /// The results document of a sweep (absent for a table): its machine, the sampler's
    /// breakdowns for the why, and the charts.
    pub doc: Option<Results>,
}

impl Set {
    /// A sweep with its stored analysis, or, for a document without one, the analysis along its
    /// plan's axis, computed once for the models and the charts.
    pub fn new(label: String, path: String, mut doc: Results) -> Set {
        if doc.analysis.is_none() {
            let axis = doc.plan.axis.clone();
            // A baseline the set did not measure leaves it without an analysis, as one without a count.
            let _ = crate::diagnose::analyse(&mut doc, axis.as_ref(), &Default::default());
        }
        Set {
            label,
            path,
            points: doc.points.iter().map(Measured::of_point).collect(),
            unit: doc.throughput_unit.clone(),
            analysis: doc.analysis.clone(),
            doc: Some(doc),
        }
    }

    /// A table: one point per row, its single value the throughput or the time the table gives.
    pub fn table(label: String, path: String, obs: &Observations) -> Set {
        let name = obs.axis.param.as_str();
        let points = obs
            .series
            .iter()
            .flat_map(|s| &s.points)
            .map(|p| {
                let value = Some(p.values.clone());
                let values = match obs.basis {
                    Basis::Throughput => Values { throughput: value, ..Values::default() },
                    Basis::Time => Values { time: value, ..Values::default() },
                };
                let shown = crate::report::model::count(p.count);
                Measured {
                    key: vec![(name.to_string(), shown.clone())],
                    label: format!("{name}={shown}"),
                    values: Some(Values { cpu: p.cpu_pct.map(|c| vec![c]), ..values }),
                }
            })
            .collect();
        Set {
            label,
            path,
            points,
            unit: obs.unit.clone(),
            analysis: analyze(obs, &AnalysisOptions::default()).ok(),
            doc: None,
        }
    }
}

/// How to compare.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// Changes smaller than this fraction are "no change" even when significant.
    pub noise: f64,
    /// Index of the set the others are compared with.
    pub reference: usize,
}

/// The whole comparison.
#[derive(Debug, Serialize)]
pub struct Comparison {
    /// Labels of the sets, in the order given.
    pub labels: Vec<String>,
    /// Where each set came from.
    pub paths: Vec<String>,
    /// Index of the reference set.
    pub reference: usize,
    /// The noise threshold used (fraction).
    pub noise: f64,
    /// Per set, the figure its verdicts compare with the reference's (none for the reference).
    pub judged_by: Vec<Option<Figure>>,
    /// Unit of the throughput figures (the reference's).
    pub unit: Option<String>,
    /// Differences between the machines the sets ran on; empty when the same.
    pub machines: Vec<String>,
    /// Sweeps measured on a busy or noisy machine (their own noisy-measurement findings, medium or
    /// high): their differences from the others may be the machine's, not the program's.
    pub cautions: Vec<String>,
    /// Each sweep's command template when they differ (two builds, two programs); empty when the
    /// same.
    pub commands: Vec<String>,
    /// Matched points, in the reference set's order, then points missing from it.
    pub points: Vec<points::PointRow>,
    /// Fitted model parameters side by side.
    pub models: Vec<why::ModelRow>,
    /// What changed in where thread time went, in words.
    pub why: Vec<String>,
    /// Throughput per GB of the tree's peak PSS, set by set.
    pub memory: Vec<String>,
    /// What the reference's findings predicted a fix would buy, against what the other sweeps
    /// obtained at the same count.
    pub predicted: Vec<String>,
    /// How points were paired when the sets count different parameters (threads against
    /// copies): by the count's value, and which parameter it is in each set.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub paired_by: Option<String>,
}

/// Compares `sets` (at least two).
pub fn compare(sets: &[Set], o: &Options) -> Comparison {
    let reference = &sets[o.reference];
    let judged_by: Vec<Option<Figure>> = sets
        .iter()
        .enumerate()
        .map(|(i, s)| if i == o.reference { None } else { points::figure(reference, s) })
        .collect();
    let keys = points::keys(sets);
    let rows = points::rows(sets, &keys, &judged_by, o);
    Comparison {
        labels: sets.iter().map(|s| s.label.clone()).collect(),
        paths: sets.iter().map(|s| s.path.clone()).collect(),
        reference: o.reference,
        noise: o.noise,
        unit: reference.unit.clone(),
        judged_by,
        machines: machines(sets),
        cautions: cautions(sets),
        commands: commands(sets),
        models: why::models(sets),
        why: why::breakdowns(sets, &rows, o),
        memory: memory::lines(sets),
        predicted: predicted::lines(sets, o.reference),
        points: rows,
        paired_by: keys.paired_by,
    }
}

/// The sets that are sweeps (not published tables), with their labels.
fn sweeps(sets: &[Set]) -> Vec<(&str, &Results)> {
    sets.iter().filter_map(|s| Some((s.label.as_str(), s.doc.as_ref()?))).collect()
}

/// One line per sweep when their command templates differ: the same command is the usual
/// comparison (a kernel, a filesystem), a different one says what changed (a build, a program).
fn commands(sets: &[Set]) -> Vec<String> {
    let sweeps = sweeps(sets);
    if sweeps.iter().all(|(_, d)| d.plan.command == sweeps[0].1.plan.command) {
        return Vec::new();
    }
    sweeps
        .iter()
        .map(|(label, d)| format!("{label}: {}", crate::report::command_line(&d.plan.command)))
        .collect()
}

/// `caution: rb was measured on a busy machine ([medium] other processes held 44% of the CPUs
/// …): its differences from the others may be the machine's, not the program's`, for each sweep
/// whose own findings say its runs were disturbed.
fn cautions(sets: &[Set]) -> Vec<String> {
    sweeps(sets)
        .iter()
        .filter_map(|(label, d)| {
            let f = disturbed(d)?;
            Some(format!(
                "caution: {label} was measured on a busy or noisy machine ([{}] {}): its differences from the others may be the machine's, not the program's; measure both again back to back",
                f.severity.name(),
                f.summary
            ))
        })
        .collect()
}

/// The sweep's own finding that its runs were disturbed (noisy-measurement, medium or high).
fn disturbed(doc: &Results) -> Option<&crate::results::findings::Finding> {
    use crate::results::findings::{Kind, Severity};
    doc.findings.iter().find(|f| f.kind == Kind::NoisyMeasurement && f.severity >= Severity::Medium)
}

/// One line per set when the machines differ in CPU, CPUs allowed, memory or kernel (sweeps only:
/// a table does not say where it was measured).
fn machines(sets: &[Set]) -> Vec<String> {
    let sweeps = sweeps(sets);
    let describe = |(label, doc): &(&str, &Results)| {
        let m = &doc.machine;
        format!(
            "{label}: {} ({}), {} CPUs allowed, {:.0} GiB, {} {}",
            m.host,
            m.cpu_model,
            m.allowed_cpus,
            m.memory_bytes as f64 / (1u64 << 30) as f64,
            m.os,
            m.kernel
        )
    };
    let key = |doc: &Results| {
        let m = &doc.machine;
        (
            m.cpu_model.clone(),
            m.allowed_cpus,
            m.memory_bytes >> 26,
            m.kernel.clone(),
            m.host.clone(),
        )
    };
    if sweeps.iter().all(|(_, d)| key(d) == key(sweeps[0].1)) {
        return Vec::new();
    }
    sweeps.iter().map(describe).collect()
}
