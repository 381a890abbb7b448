//! Memory per unit of work, set beside set: each sweep's peak PSS of its tree and its throughput
//! per GB of that PSS at every count, and the sets against each other at the largest count both
//! measured (threads against copies of the same program: which buys more work with the node's
//! memory where the choice is made), else at their bests.

use super::Set;
use crate::analysis::count_label;
use crate::report::{bytes, num, throughput_scale};

/// One line per sweep with throughput and PSS, then, with two or more, how they compare at the
/// largest count both measured (at one worker, the same program against itself says nothing).
pub fn lines(sets: &[Set]) -> Vec<String> {
    let mut out = Vec::new();
    // Per set: its label, its best throughput per GB and where, its counted parameter, and
    // (count, peak PSS, throughput per GB) at every count.
    type PerGb = Vec<(f64, f64, f64)>;
    let mut bests: Vec<(String, f64, String, String, PerGb)> = Vec::new();
    let unit = sets.iter().find_map(|s| s.unit.clone()).unwrap_or_default();
    for s in sets {
        let Some(doc) = &s.doc else { continue };
        let param = doc.plan.axis.as_ref().map_or("count", |a| a.param.as_str());
        let per_gb: Vec<(f64, f64, f64)> = doc
            .points
            .iter()
            .filter_map(|p| {
                let st = p.stats();
                let count = p.params.get(param)?.as_f64()?;
                let pss = st.peak_pss_bytes.as_ref()?.mean;
                Some((count, pss, st.throughput.as_ref()?.mean / (pss / 1e9)))
            })
            .collect();
        let Some(&(at, _, best)) = per_gb.iter().max_by(|a, b| a.2.total_cmp(&b.2)) else {
            continue;
        };
        let (div, label) = throughput_scale(&unit, best);
        let each: Vec<String> = per_gb
            .iter()
            .map(|(n, pss, v)| {
                format!("{}: {} ({})", count_label(*n, param), num(v / div), bytes(*pss))
            })
            .collect();
        out.push(format!(
            "{}: {label} per GB of PSS (peak PSS of the tree) — {}",
            s.label,
            each.join(", ")
        ));
        bests.push((s.label.clone(), best, count_label(at, param), param.to_string(), per_gb));
    }
    let busy = if sets.iter().filter_map(|s| s.doc.as_ref()).any(|d| super::disturbed(d).is_some())
    {
        " (a throughput measured on a busy or noisy machine: see the caution above)"
    } else {
        ""
    };
    if let [(a, x, at_a, param_a, of_a), rest @ ..] = bests.as_slice() {
        for (b, y, at_b, param_b, of_b) in rest {
            let both = of_a
                .iter()
                .filter_map(|p| Some((p, of_b.iter().find(|q| q.0 == p.0)?)))
                .max_by(|x, y| x.0.0.total_cmp(&y.0.0));
            out.push(match both {
                // Throughput per GB is the memory's ratio and the throughput's: each said apart, as
                // the throughput may move with the machine where the memory does not.
                Some((p, q)) => format!(
                    "per GB of PSS at the largest count both measured, {b} ({}) does {}× what {a} ({}) does: {}× the peak PSS, {}× the throughput{busy}",
                    count_label(q.0, param_b),
                    num(q.2 / p.2),
                    count_label(p.0, param_a),
                    num(q.1 / p.1),
                    num((q.2 * q.1) / (p.2 * p.1)),
                ),
                None => {
                    format!("per GB of PSS at their best, {b} ({at_b}) does {}× what {a} ({at_a}) does", num(y / x))
                }
            });
        }
    }
    out
}
