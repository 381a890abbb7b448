//! Comparing result sets: before and after a patch, several kernels, two filesystems. Points
//! are matched by their parameters; each is judged against the reference set by a ratio of means
//! with a bootstrap interval, Welch's test and a noise threshold; the fitted models are set side
//! by side, and the sampler's breakdowns say what changed.

pub mod html;
pub mod points;
pub mod text;
pub mod why;

use crate::results::Results;
use serde::Serialize;

/// A result set and what to call it.
pub struct Set {
    /// Short name in tables (`--label`, else the folder's name).
    pub label: String,
    /// Where it was read from.
    pub path: String,
    /// The document, with its analysis when it has a counted parameter.
    pub doc: Results,
}

impl Set {
    /// A set with its stored analysis, or, for a document without one, the analysis along its
    /// plan's axis, computed once for the models and the charts.
    pub fn new(label: String, path: String, mut doc: Results) -> Set {
        if doc.analysis.is_none() {
            let axis = doc.plan.axis.clone();
            // A baseline the set did not measure leaves it without an analysis, as one without a count.
            let _ = crate::diagnose::analyse(&mut doc, axis.as_ref(), &Default::default());
        }
        Set { label, path, doc }
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
    /// Differences between the machines the sets ran on; empty when the same.
    pub machines: Vec<String>,
    /// Matched points, in the reference set's order, then points missing from it.
    pub points: Vec<points::PointRow>,
    /// Fitted model parameters side by side.
    pub models: Vec<why::ModelRow>,
    /// What changed in where thread time went, in words.
    pub why: Vec<String>,
}

/// Compares `sets` (at least two).
pub fn compare(sets: &[Set], o: &Options) -> Comparison {
    let rows = points::rows(sets, o);
    Comparison {
        labels: sets.iter().map(|s| s.label.clone()).collect(),
        paths: sets.iter().map(|s| s.path.clone()).collect(),
        reference: o.reference,
        noise: o.noise,
        machines: machines(sets),
        models: why::models(sets),
        why: why::breakdowns(sets, &rows, o),
        points: rows,
    }
}

/// One line per set when the machines differ in CPU, CPUs allowed, memory or kernel.
fn machines(sets: &[Set]) -> Vec<String> {
    let describe = |s: &Set| {
        let m = &s.doc.machine;
        format!(
            "{}: {} ({}), {} CPUs allowed, {:.0} GiB, {} {}",
            s.label,
            m.host,
            m.cpu_model,
            m.allowed_cpus,
            m.memory_bytes as f64 / (1u64 << 30) as f64,
            m.os,
            m.kernel
        )
    };
    let key = |s: &Set| {
        let m = &s.doc.machine;
        (m.cpu_model.clone(), m.allowed_cpus, m.memory_bytes >> 26, m.kernel.clone(), m.host.clone())
    };
    if sets.iter().all(|s| key(s) == key(&sets[0])) {
        return Vec::new();
    }
    sets.iter().map(describe).collect()
}
