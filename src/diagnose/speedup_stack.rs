//! Speed-up stacks: each count of workers above a series' baseline split into the measured
//! speed-up, the cores every cause in the point's capacity ledger took, the workers no CPU was
//! left for, the cores a baseline that kept more than one CPU busy spent on its own parallelism,
//! and what nothing explains — so that `count = speed-up + lost + unexplained`.

use super::curve;
use super::ledger::{self, Baseline, Cause, Item};
use crate::plan::{Counts, Scaling};
use crate::results::analysis::{Analysis, PointScaling, SeriesAnalysis};
use crate::results::{Results, SpeedupStack, StackPart};

/// Parts below this many cores are folded into their cause without an object.
const SMALL: f64 = 0.005;
/// Most parts named by their object; the rest are folded into their cause.
const MOST_PARTS: usize = 6;

/// The stacks of every series of a sweep over a number of workers on this machine.
pub fn stacks(doc: &Results, a: &Analysis) -> Vec<SpeedupStack> {
    if a.axis.counts != Counts::Workers {
        return Vec::new();
    }
    let weak = a.axis.scaling == Scaling::Weak;
    a.series.iter().flat_map(|s| series(doc, s, weak)).collect()
}

fn series(doc: &Results, s: &SeriesAnalysis, weak: bool) -> Vec<SpeedupStack> {
    let Some(base) = s.points.iter().find(|p| p.count == s.baseline) else { return Vec::new() };
    s.points
        .iter()
        .filter(|p| p.count > base.count)
        .filter_map(|p| stack(doc, s, (base, p), weak))
        .collect()
}

/// The stack of `top` against `base`, when the count's efficiency and ledger are known.
fn stack(
    doc: &Results,
    s: &SeriesAnalysis,
    (base, top): (&PointScaling, &PointScaling),
    weak: bool,
) -> Option<SpeedupStack> {
    let eff = top.efficiency?;
    let ratio = curve::work_ratio(doc, base, top, weak);
    let l =
        ledger::of(&doc.points[top.index], Baseline::of(&doc.points[base.index], ratio).as_ref())?;
    if l.wall_s <= 0.0 {
        return None;
    }
    let mut parts: Vec<StackPart> =
        per_object(&l.items).iter().map(|(c, s)| part(c, s / l.wall_s)).collect();
    let no_cpu = top.count - l.capacity;
    if no_cpu > SMALL {
        parts.push(StackPart { cause: "no CPU".into(), object: None, cores: no_cpu });
    }
    let speedup = eff * top.count;
    // The ledger counts as useful what the baseline ran: a baseline that kept `b` CPUs busy turns
    // a speed-up `s` into `s·b` cores of useful work, and the `s·(b − 1)` beyond the speed-up went
    // to the baseline's own parallelism (helper threads, a pipeline, a runtime's workers).
    // CPUs busy: the baseline's %CPU, as its table row and the busy-baseline finding read it.
    let busy = base.cpu_pct.map(|c| c / 100.0).filter(|b| speedup * (b - 1.0) > SMALL);
    let mut parts = fold(parts);
    parts.extend(busy.map(|b| StackPart {
        cause: "busy baseline".into(),
        object: Some(format!("{b:.2} CPUs")),
        cores: speedup * (b - 1.0),
    }));
    parts.sort_by(|a, b| b.cores.total_cmp(&a.cores));
    let mut st = SpeedupStack {
        series: s.label.clone(),
        point: top.index,
        count: top.count,
        speedup,
        parts,
        unexplained: 0.0,
    };
    st.unexplained = st.count - st.speedup - st.lost();
    Some(st)
}

/// The ledger's causes and their mean core-seconds, with the waits on a heap object that each
/// run has at an address of its own (a lock in memory the program allocated: `heap 0x7f…`,
/// `heap+0x2d46f0`) taken as one: two such objects of a class that no run waited on both of are
/// the same object, named as the larger.
fn per_object(items: &[Item]) -> Vec<(Cause, f64)> {
    let mut sorted: Vec<&Item> = items.iter().collect();
    sorted.sort_by(|a, b| b.core_s.total_cmp(&a.core_s));
    let mut out: Vec<(Cause, f64, Vec<bool>)> = Vec::new();
    for i in sorted {
        let runs: Vec<bool> = i.per_run.iter().map(|&s| s > 0.0).collect();
        let on_heap =
            |c: &Cause| matches!(c, Cause::Wait { object, .. } if object.starts_with("heap"));
        let same = |c: &Cause| match (c, &i.cause) {
            (Cause::Wait { class: a, .. }, Cause::Wait { class: b, .. }) => {
                a == b && on_heap(c) && on_heap(&i.cause)
            }
            _ => false,
        };
        let apart = |seen: &[bool]| seen.iter().zip(&runs).all(|(a, b)| !(*a && *b));
        match out.iter_mut().find(|o| same(&o.0) && apart(&o.2)) {
            Some(o) => {
                o.1 += i.core_s;
                o.2.iter_mut().zip(&runs).for_each(|(a, b)| *a |= *b);
            }
            None => out.push((i.cause.clone(), i.core_s, runs)),
        }
    }
    out.into_iter().map(|(c, s, _)| (c, s)).collect()
}

/// A ledger cause as a part of the stack, with a wait's object or the phase of `no work`.
fn part(cause: &Cause, cores: f64) -> StackPart {
    let object = match cause {
        Cause::Wait { object, .. } => (!object.is_empty()).then(|| object.clone()),
        Cause::NoWork(phase) => Some(phase.name().to_string()),
        _ => None,
    };
    StackPart { cause: cause.short_name().into(), object, cores }
}

/// Parts of one cause and object added up, largest first; beyond the [`MOST_PARTS`] largest, and
/// below [`SMALL`] cores, parts are added to their cause without an object.
fn fold(parts: Vec<StackPart>) -> Vec<StackPart> {
    let mut merged: Vec<StackPart> = Vec::new();
    parts.into_iter().for_each(|p| add(&mut merged, p));
    merged.sort_by(|a, b| b.cores.total_cmp(&a.cores));
    let mut out: Vec<StackPart> = Vec::new();
    for (i, mut p) in merged.into_iter().enumerate() {
        if i >= MOST_PARTS || p.cores < SMALL {
            p.object = None;
        }
        add(&mut out, p);
    }
    out.retain(|p| p.cores.abs() >= 1e-9);
    out.sort_by(|a, b| b.cores.total_cmp(&a.cores));
    out
}

/// Adds `p` to the part of the same cause and object, or as a new one.
fn add(parts: &mut Vec<StackPart>, p: StackPart) {
    match parts.iter_mut().find(|m| m.cause == p.cause && m.object == p.object) {
        Some(m) => m.cores += p.cores,
        None => parts.push(p),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::Class;

    fn p(cause: &str, object: Option<&str>, cores: f64) -> StackPart {
        StackPart { cause: cause.into(), object: object.map(String::from), cores }
    }

    #[test]
    fn small_and_many_parts_fold_into_their_cause_and_nothing_is_lost() {
        let mut parts = vec![
            p("lock", Some("m"), 0.3),
            p("lock", Some("m"), 0.1),
            p("io", Some("read"), 0.002),
        ];
        parts.extend((0..8).map(|k| p("ipc", Some(&format!("fd{k}")), 0.01 * (k + 1) as f64)));
        let before: f64 = parts.iter().map(|p| p.cores).sum();
        let out = fold(parts);
        let after: f64 = out.iter().map(|p| p.cores).sum();
        assert!((before - after).abs() < 1e-12);
        assert_eq!(out[0], p("lock", Some("m"), 0.4));
        assert!(out.iter().any(|x| x.cause == "io" && x.object.is_none()), "{out:?}");
        assert!(out.iter().filter(|x| x.object.is_some()).count() <= MOST_PARTS, "{out:?}");
        assert!(out.windows(2).all(|w| w[0].cores >= w[1].cores));
    }

    #[test]
    fn a_heap_lock_at_a_new_address_in_each_run_is_one_part() {
        let item = |class: Class, object: &str, per_run: Vec<f64>| Item {
            cause: Cause::Wait { class, object: object.into() },
            core_s: per_run.iter().sum::<f64>() / per_run.len() as f64,
            by_phase: Default::default(),
            shares: vec![0.0; per_run.len()],
            threads: 2,
            sooner: vec![None; per_run.len()],
            carried_s: 0.0,
            per_run,
        };
        let items = [
            item(Class::WaitForWork, "heap 0x7f1000c30", vec![0.9, 0.0, 0.0]),
            item(Class::WaitForWork, "heap 0x7f2000c30", vec![0.0, 0.6, 0.0]),
            item(Class::WaitForWork, "heap 0x7f3000c30", vec![0.0, 0.0, 0.3]),
            // Two objects waited on in one run are two.
            item(Class::Lock, "heap 0x7f1000bd0", vec![0.3, 0.0, 0.0]),
            item(Class::Lock, "heap 0x7f1000bf0", vec![0.3, 0.0, 0.0]),
        ];
        let out = per_object(&items);
        assert_eq!(out.len(), 3, "{out:?}");
        assert!(matches!(&out[0].0, Cause::Wait { object, .. } if object == "heap 0x7f1000c30"));
        assert!((out[0].1 - 0.6).abs() < 1e-9, "{out:?}");
    }
}
