//! What fixing a cause would buy: each run shortened by what its waits cost along the critical
//! path, bounded by the idle capacity they left (a wait that other work filled buys nothing), and
//! the speed-up that follows, with an interval for what a sweep without the cause would measure:
//! the runs resampled, the measured speed-up's own interval, and the new sweep's noise, around
//! the range from a fix that leaves the machine's load and the watching as long as they were to
//! one that takes the watching and the capacity nothing explained with it.

use super::ledger::{Cause, Item, Ledger};
use crate::results::Phase;
use crate::results::findings::WhatIf;
use crate::stats::{Rng, quantile};

/// Resamples of the runs for the interval.
const DRAWS: usize = 2000;
/// Half-width of the 95% interval, in log space, for the model's own error: what the runs' spread
/// cannot show (the fixed program's own overheads, a cause priced a little high or low). From
/// bench/what-if.py's record: over 20 predictions of the 10 cases it gets right, the error had a
/// root mean square of 3.3% (at most 7%), and intervals without this term missed the measured
/// speed-up by 1–3% in 3 of 11 cases.
pub const MODEL_ERROR: f64 = 0.06;

/// Whether what fixing a cause buys is within the what-if's own error ([`MODEL_ERROR`]): the
/// prediction cannot tell it from nothing, so the cause is said, not raised.
pub fn within_its_error(w: &WhatIf) -> bool {
    w.speedup > 0.0 && (w.without / w.speedup).ln() < MODEL_ERROR
}

/// The measured speed-up at the count a ledger is judged at, with its 95% interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Measured {
    /// The count.
    pub at: f64,
    /// The speed-up.
    pub speedup: f64,
    /// Its 95% interval, when the runs give one.
    pub ci95: Option<[f64; 2]>,
}

/// Seconds run `k` would have been shorter without `items`: waits by how much sooner the work
/// threads would have ended without them (at most their idle capacity spread over the CPUs),
/// idle capacity of other kinds and extra CPU spread over the CPUs. Waits for a feeder are fixed
/// by a faster feeder, whose own time is the critical path: they buy their idle capacity
/// (`feeder`).
fn sooner(items: &[&Item], l: &Ledger, k: usize, cpus: f64, feeder: bool) -> f64 {
    let cpus = cpus.max(1.0);
    let waits: Vec<&&Item> =
        items.iter().filter(|i| matches!(i.cause, Cause::Wait { .. })).collect();
    let idle: f64 = waits.iter().map(|i| i.per_run.get(k).copied().unwrap_or(0.0)).sum();
    let each: Option<f64> =
        waits.iter().filter_map(|i| i.sooner.get(k).copied().flatten()).reduce(|a, b| a + b);
    let path = match (each, together(items, l, k)) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    };
    let by_waits = path.filter(|_| !feeder).map_or(idle / cpus, |p| p.min(idle / cpus));
    let rest: f64 = items
        .iter()
        .filter(|i| !matches!(i.cause, Cause::Wait { .. }))
        .map(|i| i.per_run.get(k).copied().unwrap_or(0.0) / cpus)
        .sum();
    by_waits + rest
}

/// A finding's waits are this share of run's waits' idle capacity or more: removing them is
/// removing (nearly) every wait.
const NEARLY_ALL: f64 = 0.9;

/// How much sooner run `k` would have ended without the waits of `items` all at once, when they
/// are nearly all its waits ([`NEARLY_ALL`] of their idle capacity): the critical path
/// without every wait, less what each of the other waits buys alone. Threads that wait on two
/// objects in turn (a lock built of a mutex and a condition variable) are held up by the one
/// left when the other goes: each alone buys less than both.
fn together(items: &[&Item], l: &Ledger, k: usize) -> Option<f64> {
    // A finding's items merge the ledger's (one object per run, a lock's parts): the others are
    // the ledger's waits less the finding's.
    let waits = |items: &mut dyn Iterator<Item = &Item>| {
        items.filter(|i| matches!(i.cause, Cause::Wait { .. })).fold((0.0, 0.0), |(c, s), i| {
            (
                c + i.per_run.get(k).copied().unwrap_or(0.0),
                s + i.sooner.get(k).copied().flatten().unwrap_or(0.0),
            )
        })
    };
    let (all_idle, all_each) = waits(&mut l.items.iter());
    let (idle, mine_each) = waits(&mut items.iter().copied());
    if idle <= 0.0 || idle < NEARLY_ALL * all_idle {
        return None;
    }
    let others_each = (all_each - mine_each).max(0.0);
    l.sooner_all.get(k).copied().flatten().map(|all| (all - others_each).max(0.0))
}

/// Whether a cause's idle capacity goes with the wall time, whatever else the run does: the
/// sampler's share, other processes' and the hypervisor's, and the steady phase's idle moments.
/// A shorter run has less of them; a start-up or a tail keeps its length.
fn goes_with_the_wall(cause: &Cause) -> bool {
    matches!(
        cause,
        Cause::Observer | Cause::OtherLoad | Cause::Stolen | Cause::NoWork(Phase::Steady)
    )
}

/// Run `k`'s wall time without `items`: `sooner` shortens it, and the other causes whose idle
/// capacity goes with the wall time ([`goes_with_the_wall`]) shrink with it. Never below the
/// baseline's CPU for the same work spread over the share of the CPUs those causes leave: the
/// machine's load and the watching stay after the fix.
fn shortened(items: &[&Item], l: &Ledger, k: usize, (wall, cpus): (f64, f64), feeder: bool) -> f64 {
    shortened_as(items, l, k, (wall, cpus), feeder, true)
}

/// [`shortened`], with the causes that go with the wall time shrinking with it (`shrink`) or
/// keeping their core-seconds: the machine's load and the watching may stay as long as they were.
fn shortened_as(
    items: &[&Item],
    l: &Ledger,
    k: usize,
    (wall, cpus): (f64, f64),
    feeder: bool,
    shrink: bool,
) -> f64 {
    let c = cpus.max(1.0);
    let w1 = wall - sooner(items, l, k, cpus, feeder);
    let p: f64 = l
        .items
        .iter()
        .filter(|i| !among(items, i) && goes_with_the_wall(&i.cause))
        .map(|i| i.per_run.get(k).copied().unwrap_or(0.0))
        .sum::<f64>()
        .min(0.9 * c * wall);
    // p × W'/wall of them is left at the wall W': W' = w1 − p (1 − W'/wall) / c.
    let left = if wall > 0.0 { 1.0 - p / (c * wall) } else { 1.0 };
    let w = if wall > 0.0 && shrink { (w1 - p / c) / left } else { w1 };
    // The baseline's CPU spread over the CPUs bounds the run below, and a fix never lengthens
    // it: where this run took less CPU than the baseline's runs (a baseline slowed by the
    // machine), that bound lies above the wall time and had read "runs -50 ms shorter".
    w.min(w1).max(l.useful_s / (c * left)).min(wall)
}

/// Per run, the wall time without `items` at the most their removal could buy: the watching's
/// share goes with them too (a lock's hand-offs are switches the tracer records), and so does the
/// capacity nothing explained. The interval's upper end allows for it.
fn at_most(items: &[&Item], l: &Ledger, feeder: bool) -> Vec<f64> {
    let mut wide: Vec<&Item> = items.to_vec();
    wide.extend(l.items.iter().filter(|i| i.cause == Cause::Observer && !among(items, i)));
    let unexplained = l.unexplained.max(0.0) * l.lost_s;
    l.walls
        .iter()
        .enumerate()
        .map(|(k, &(wall, cpus))| {
            let c = cpus.max(1.0);
            (shortened(&wide, l, k, (wall, cpus), feeder) - unexplained / c).max(l.useful_s / c)
        })
        .collect()
}

/// Mean wall time over mean shortened wall time, of `(wall, shortened)` pairs.
fn ratio(runs: impl Iterator<Item = (f64, f64)>) -> f64 {
    let (w, wo) = runs.fold((0.0, 0.0), |(w, wo), (a, b)| (w + a, wo + b));
    if wo > 0.0 { w / wo } else { 1.0 }
}

/// Whether ledger item `i` is one of a finding's `items`: the finding's are the ledger's merged
/// (one object per run taken as one), so the same cause says it; causes that go with the wall
/// are one item per ledger.
fn among(items: &[&Item], i: &Item) -> bool {
    items.iter().any(|m| std::ptr::eq(*m, i) || m.cause == i.cause)
}

/// The what-if of a finding made of `items` of ledger `l`, at the count `m` was measured at;
/// `feeder` when its waits are for a feeder (see [`sooner`]).
pub fn of(items: &[&Item], l: &Ledger, m: Measured, feeder: bool) -> Option<WhatIf> {
    if l.walls.is_empty() || m.speedup <= 0.0 {
        return None;
    }
    // Per run: its wall time, and the wall time without the cause.
    let runs: Vec<(f64, f64)> = l
        .walls
        .iter()
        .enumerate()
        .map(|(k, &(wall, cpus))| (wall, shortened(items, l, k, (wall, cpus), feeder)))
        .collect();
    let most = m.at.max(m.speedup);
    let upper =
        m.speedup * ratio(runs.iter().zip(at_most(items, l, feeder)).map(|(r, s)| (r.0, s)));
    // The least it could buy: the machine's load and the watching keep their core-seconds.
    let lower = m.speedup
        * ratio(l.walls.iter().enumerate().map(|(k, &(wall, cpus))| {
            (wall, shortened_as(items, l, k, (wall, cpus), feeder, false))
        }));
    let f = ratio(runs.iter().copied());
    // Removing a cause cannot take the speed-up past the count itself: a program that mostly
    // waits on purpose (sleeps, paced input) has little CPU work to bound the run below.
    let without = (m.speedup * f).min(most);
    let n = runs.len() as f64;
    let sooner_s = runs.iter().map(|r| r.0 - r.1).sum::<f64>() / n;
    let ci = (runs.len() >= 2).then(|| {
        let mut rng = Rng::new(0x005c_a1e5_c09e);
        let mut draws: Vec<f64> = (0..DRAWS)
            .map(|_| ratio((0..runs.len()).map(|_| runs[rng.below(runs.len())])))
            .collect();
        draws.sort_by(f64::total_cmp);
        let (lo, hi) = (quantile(&draws, 0.025), quantile(&draws, 0.975));
        // The interval is for what a sweep without the cause will measure: the factor's spread,
        // the measured speed-up's, that sweep's own (taken as this one's) and the model's error,
        // in log space.
        let half = |a: f64, b: f64| if a > 0.0 && b > 0.0 { 0.5 * (b / a).ln() } else { 0.0 };
        let h_f = half(lo, hi);
        let h_s = m.ci95.map_or(0.0, |c| half(c[0], c[1]));
        let h = (h_f * h_f + 2.0 * h_s * h_s + MODEL_ERROR * MODEL_ERROR).sqrt();
        [(lower.min(without) * (-h).exp()).min(most), (upper.max(without) * h.exp()).min(most)]
    });
    Some(WhatIf {
        at: m.at,
        speedup: m.speedup,
        without,
        without_ci95: ci,
        sooner_s,
        spin: false,
        turns: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::{Class, Phase};
    use std::collections::BTreeMap;

    fn item(cause: Cause, per_run: Vec<f64>, sooner: Vec<Option<f64>>) -> Item {
        let n = per_run.len();
        Item {
            cause,
            core_s: per_run.iter().sum::<f64>() / n as f64,
            by_phase: BTreeMap::from([(Phase::Steady, 0.0)]),
            shares: vec![0.0; n],
            threads: 2,
            per_run,
            carried_s: 0.0,
            sooner,
        }
    }

    fn ledger(walls: Vec<(f64, f64)>) -> Ledger {
        Ledger { walls, useful_s: 0.8, ..Default::default() }
    }

    const AT_2: Measured = Measured { at: 2.0, speedup: 1.6, ci95: None };

    #[test]
    fn no_what_if_passes_the_count() {
        let waits = item(Cause::Unlabelled, vec![0.99, 0.99], vec![Some(0.99), Some(0.99)]);
        let w = of(&[&waits], &ledger(vec![(1.0, 2.0), (1.0, 2.0)]), AT_2, false).unwrap();
        let ci = w.without_ci95.unwrap();
        assert!(w.without <= 2.0 && ci[1] <= 2.0 && ci[0] <= ci[1], "{w:?}");
    }

    #[test]
    fn a_wait_on_the_critical_path_buys_what_it_delayed_and_one_off_it_buys_nothing() {
        let lock = Cause::Wait { class: Class::Lock, object: "m".into() };
        // Two runs of 0.5 s on 2 CPUs: the lock idled 0.2 core-s and delayed the last thread 0.1 s.
        let on = item(lock.clone(), vec![0.2, 0.2], vec![Some(0.1), Some(0.1)]);
        let w = of(&[&on], &ledger(vec![(0.5, 2.0), (0.5, 2.0)]), AT_2, false).unwrap();
        assert!(
            (w.without - 1.6 * 0.5 / 0.4).abs() < 1e-9 && (w.sooner_s - 0.1).abs() < 1e-9,
            "{w:?}"
        );
        let ci = w.without_ci95.unwrap();
        assert!(ci[0] <= w.without && w.without <= ci[1]);
        // The same idle capacity off the critical path: nothing.
        let off = item(lock.clone(), vec![0.2, 0.2], vec![Some(0.0), Some(0.0)]);
        assert_eq!(
            of(&[&off], &ledger(vec![(0.5, 2.0), (0.5, 2.0)]), AT_2, false).unwrap().without,
            1.6
        );
        // A long delay that left little idle capacity (others ran meanwhile): the capacity bounds it.
        let filled = item(lock, vec![0.02, 0.02], vec![Some(0.3), Some(0.3)]);
        let filled = of(&[&filled], &ledger(vec![(0.5, 2.0), (0.5, 2.0)]), AT_2, false).unwrap();
        assert!((filled.sooner_s - 0.01).abs() < 1e-9);
        // Waits for a feeder that is itself the critical path: a faster feeder fills their capacity.
        let starved = item(
            Cause::Wait { class: Class::WaitForWork, object: "q".into() },
            vec![0.2],
            vec![Some(0.0)],
        );
        assert!(
            (of(&[&starved], &ledger(vec![(0.5, 2.0)]), AT_2, true).unwrap().sooner_s - 0.1).abs()
                < 1e-9
        );
    }

    #[test]
    fn what_goes_with_the_wall_shrinks_with_the_run_and_a_tail_does_not() {
        let lock = Cause::Wait { class: Class::Lock, object: "m".into() };
        let on = item(lock, vec![0.2, 0.2], vec![Some(0.1), Some(0.1)]);
        let with = |other: Item| {
            let l = Ledger {
                items: vec![on.clone(), other],
                useful_s: 0.5,
                ..ledger(vec![(0.5, 2.0), (0.5, 2.0)])
            };
            of(&[&l.items[0]], &l, Measured { at: 2.0, speedup: 1.2, ci95: None }, false).unwrap()
        };
        // The sampler's 0.1 core-s of a 0.5 s run: at 0.4 s, 0.08 of it is left, 10 ms sooner.
        let watched = with(item(Cause::Observer, vec![0.1, 0.1], vec![None, None]));
        let w = (0.4 - 0.05) / (1.0 - 0.1);
        assert!((watched.without - 1.2 * 0.5 / w).abs() < 1e-9, "{watched:?}");
        // A tail of the same size keeps its length.
        let tail = with(item(Cause::NoWork(Phase::Tail), vec![0.1, 0.1], vec![None, None]));
        assert!((tail.without - 1.2 * 0.5 / 0.4).abs() < 1e-9, "{tail:?}");
    }

    #[test]
    fn a_tail_buys_its_idle_capacity_spread_over_the_cpus_and_never_more_than_the_work() {
        let tail = item(Cause::NoWork(Phase::Tail), vec![0.4], vec![None]);
        let w = of(&[&tail], &ledger(vec![(0.6, 2.0)]), AT_2, false).unwrap();
        assert!((w.sooner_s - 0.2).abs() < 1e-9 && w.without_ci95.is_none(), "{w:?}");
        let huge = item(Cause::NoWork(Phase::Tail), vec![5.0], vec![None]);
        let w = of(&[&huge], &ledger(vec![(0.6, 2.0)]), AT_2, false).unwrap();
        // The baseline's CPU over 2 CPUs would give 1.6 × 0.6 / 0.4 = 2.4×: no more than the count.
        assert!((w.without - 2.0).abs() < 1e-9, "{w:?}");
        // A baseline whose CPU, spread over the CPUs, exceeds this run's wall time: no fix
        // lengthens the run.
        let l = Ledger { useful_s: 2.0, ..ledger(vec![(0.6, 2.0)]) };
        let w = of(&[&tail], &l, AT_2, false).unwrap();
        assert!(w.without >= 1.6 && w.sooner_s >= 0.0, "{w:?}");
    }

    #[test]
    fn a_finding_of_nearly_every_wait_buys_the_critical_path_without_them_all() {
        // A lock built of a mutex and a condition variable: threads wait on each in turn, so each
        // alone is off the critical path (0.02 s), and both together end the run 0.15 s sooner.
        let mutex = item(
            Cause::Wait { class: Class::Lock, object: "m".into() },
            vec![0.1],
            vec![Some(0.02)],
        );
        let cv = item(
            Cause::Wait { class: Class::WaitForWork, object: "c".into() },
            vec![0.2],
            vec![Some(0.02)],
        );
        let small = item(
            Cause::Wait { class: Class::Io, object: "read".into() },
            vec![0.02],
            vec![Some(0.01)],
        );
        let l = Ledger {
            items: vec![mutex, cv, small],
            sooner_all: vec![Some(0.16)],
            useful_s: 0.5,
            ..ledger(vec![(0.5, 2.0)])
        };
        let both = of(&[&l.items[0], &l.items[1]], &l, AT_2, false).unwrap();
        assert!((both.sooner_s - 0.15).abs() < 1e-9, "{both:?}");
        // One object of the two is not nearly all the waits: what it buys alone.
        let one = of(&[&l.items[1]], &l, AT_2, false).unwrap();
        assert!((one.sooner_s - 0.02).abs() < 1e-9, "{one:?}");
    }
}
