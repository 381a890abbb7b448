//! The ledger of a point: where the core-seconds it could have used went. Lost core-seconds =
//! capacity × wall − useful CPU (the baseline's CPU for the same work), and they split into idle
//! capacity by cause (from each run's accounting), extra CPU beyond the baseline's (in user code
//! or in the kernel), and what nothing explains. Computed per run, so every cause's share of the
//! loss has an interval over the runs.

use crate::results::{Capacity, Class, IdleKind, Phase, PointResult, RunRecord, ThreadReport};
use crate::stats::Summary;
use std::collections::BTreeMap;

/// What lost capacity is put down to.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Cause {
    /// Work threads waiting, on this object (`None`: waits of the class not tied to one object).
    Wait {
        /// The class of the wait.
        class: Class,
        /// The object or system call.
        object: String,
    },
    /// Work threads runnable while capacity was idle: other processes held the CPUs.
    OtherLoad,
    /// Work threads runnable while capacity was idle because scalescope's own threads (its sampler,
    /// the tracer's collector) held a CPU: the cost of watching, up to their CPU time.
    Observer,
    /// CPU time the hypervisor took from the job's threads (steal, on a virtual machine): what no
    /// sample explained, up to the machine's stolen time in the job's share of its busy time.
    Stolen,
    /// No work thread existed or had work, in this phase.
    NoWork(Phase),
    /// Off-CPU in waits no sample caught.
    Unlabelled,
    /// CPU beyond the baseline's for the same work, in user code.
    ExtraUser,
    /// CPU beyond the baseline's for the same work, in the kernel.
    ExtraKernel,
}

impl Cause {
    /// CPU the job used beyond the baseline's for the same work, not idle capacity.
    pub fn is_extra(&self) -> bool {
        matches!(self, Cause::ExtraUser | Cause::ExtraKernel)
    }

    /// Its short name in tables and speed-up stacks: a wait's class (`lock`, `io`), `other
    /// processes`, `sampling`, `stolen`, `no work`, `unsampled`, `extra CPU`.
    pub fn short_name(&self) -> &'static str {
        match self {
            // A well-known lock the sampler filed under another class (CPython's GIL, a condition
            // variable) is named as its finding names it.
            Cause::Wait { object, .. } if super::known::lookup(object).is_some_and(|k| k.lock) => {
                Class::Lock.short()
            }
            Cause::Wait { class, .. } => class.short(),
            Cause::OtherLoad => "other processes",
            Cause::Observer => "sampling",
            Cause::Stolen => "stolen",
            Cause::NoWork(_) => "no work",
            Cause::Unlabelled => "unsampled",
            Cause::ExtraUser | Cause::ExtraKernel => "extra CPU",
        }
    }
}

/// One cause over the point's runs.
#[derive(Clone, Debug, PartialEq)]
pub struct Item {
    /// The cause.
    pub cause: Cause,
    /// Mean core-seconds per run.
    pub core_s: f64,
    /// Mean core-seconds per run by phase (waits only).
    pub by_phase: BTreeMap<Phase, f64>,
    /// Its share of the lost core-seconds, per run.
    pub shares: Vec<f64>,
    /// Work threads behind it (most in a run).
    pub threads: usize,
    /// Core-seconds, per run.
    pub per_run: Vec<f64>,
    /// Mean core-seconds per run carried forward to it: the tail of threads it made late.
    pub carried_s: f64,
    /// For waits, per run: how much sooner the run would have ended without them, along its
    /// critical path (`None` when the run did not say).
    pub sooner: Vec<Option<f64>>,
}

impl Item {
    /// Mean share of the loss.
    pub fn share(&self) -> f64 {
        if self.shares.is_empty() {
            0.0
        } else {
            self.shares.iter().sum::<f64>() / self.shares.len() as f64
        }
    }

    /// 95% interval of the share over runs, when there are several.
    pub fn share_ci(&self) -> Option<[f64; 2]> {
        Summary::of(&self.shares)?.ci95
    }

    /// Adds `other`'s figures (the same cause under another name) to this item's.
    pub fn absorb(&mut self, other: &Item, f: f64) {
        self.core_s += other.core_s * f;
        self.carried_s += other.carried_s * f;
        for (phase, s) in &other.by_phase {
            *self.by_phase.entry(*phase).or_default() += s * f;
        }
        for (mine, theirs) in self.shares.iter_mut().zip(&other.shares) {
            *mine += theirs * f;
        }
        for (mine, theirs) in self.per_run.iter_mut().zip(&other.per_run) {
            *mine += theirs * f;
        }
        for (mine, theirs) in self.sooner.iter_mut().zip(&other.sooner) {
            if let Some(t) = theirs {
                *mine = Some(mine.unwrap_or(0.0) + t * f);
            }
        }
        self.threads = self.threads.max(other.threads);
    }

    /// The phase holding most of it.
    pub fn main_phase(&self) -> Phase {
        self.by_phase.iter().max_by(|a, b| a.1.total_cmp(b.1)).map_or(Phase::Steady, |(p, _)| *p)
    }
}

/// The ledger of one point.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Ledger {
    /// CPUs the job could use at once (mean over runs).
    pub capacity: f64,
    /// Mean wall seconds.
    pub wall_s: f64,
    /// Mean CPU seconds the runs used.
    pub cpu_s: f64,
    /// CPU seconds the same work took at the baseline.
    pub useful_s: f64,
    /// Mean lost core-seconds: capacity × wall − useful.
    pub lost_s: f64,
    /// Lost share of the capacity: lost ÷ (capacity × wall).
    pub gap: f64,
    /// The causes, largest share first.
    pub items: Vec<Item>,
    /// Mean share of the loss nothing explains.
    pub unexplained: f64,
    /// Mean core-seconds run beyond the capacity.
    pub over_s: f64,
    /// Mean work threads and helpers seen, most work threads alive at once.
    pub work_threads: f64,
    /// Most work threads alive at once (over runs).
    pub peak_work_threads: usize,
    /// Threads wanting a CPU at once (mean over runs of each run's 90th percentile).
    pub demand: f64,
    /// Mean coverage of off-CPU time by samples.
    pub coverage: f64,
    /// Mean seconds of the start-up phase and of the tail.
    pub startup_s: f64,
    /// Mean seconds of the tail.
    pub tail_s: f64,
    /// Runs behind it.
    pub runs: usize,
    /// Per run, the share of the capacity idle while the job's work threads waited or had no
    /// work (other processes' load left out).
    pub idle_shares: Vec<f64>,
    /// Mean CPU-seconds per run the hypervisor took from the job's threads (steal): the machine's
    /// stolen time in the job's share of its busy time, whether or not the loss needs it to be
    /// explained (runs too short for /proc/stat's 10 ms ticks count as none).
    pub stolen_s: f64,
    /// Mean CPU-seconds per run other processes used on the machine (its busy time less the
    /// job's and scalescope's), over the runs where /proc/stat was read.
    pub others_s: f64,
    /// Per run: wall seconds and CPUs the job could use.
    pub walls: Vec<(f64, f64)>,
    /// Per run: how much sooner it would have ended without every wait at once, along its
    /// critical path (wall-clock seconds).
    pub sooner_all: Vec<Option<f64>>,
}

/// A run's machine CPU time below this many seconds says nothing of steal: /proc/stat counts in
/// 10 ms ticks (a run of 4 ms on 2 CPUs read 0 or 1 tick, "33% stolen").
const STEAL_RESOLUTION_S: f64 = 0.2;

impl Ledger {
    /// The item of a cause.
    pub fn item(&self, cause: &Cause) -> Option<&Item> {
        self.items.iter().find(|i| &i.cause == cause)
    }

    /// The low end of the 95% interval over runs of the capacity idle while the job's work threads
    /// waited or had no work (the one run's value when there is one).
    pub fn idle_low(&self) -> f64 {
        Summary::of(&self.idle_shares).map_or(0.0, |s| s.ci95.map_or(s.mean, |c| c[0]))
    }
}

/// What the same work cost at the baseline: CPU seconds in user mode and in the kernel.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Useful {
    /// User CPU seconds.
    pub user_s: f64,
    /// Kernel CPU seconds.
    pub sys_s: f64,
}

impl Useful {
    /// The mean CPU of a point's successful runs, scaled by `ratio` (more work under weak scaling).
    pub fn of(p: &PointResult, ratio: f64) -> Option<Useful> {
        let runs: Vec<&RunRecord> = p.runs.iter().filter(|r| r.counted()).collect();
        if runs.is_empty() {
            return None;
        }
        let n = runs.len() as f64;
        Some(Useful {
            user_s: ratio * runs.iter().map(|r| r.user_s).sum::<f64>() / n,
            sys_s: ratio * runs.iter().map(|r| r.sys_s).sum::<f64>() / n,
        })
    }

    fn total(&self) -> f64 {
        self.user_s + self.sys_s
    }
}

/// The baseline's CPU for the same work, as a run of another point is judged against it: the
/// baseline's run of the same interleaved round where there is one (a host that slows down over
/// the sweep slows both, and its slow spell is not taken for extra CPU), else the mean of its runs.
#[derive(Clone, Debug, PartialEq)]
pub struct Baseline {
    /// The mean over the baseline's runs.
    pub mean: Useful,
    /// Its run of each round, scaled alike.
    pub rounds: BTreeMap<u32, Useful>,
}

impl Baseline {
    /// The baseline point `p`'s CPU, scaled by `ratio` (more work under weak scaling), by round.
    pub fn of(p: &PointResult, ratio: f64) -> Option<Baseline> {
        let rounds = p
            .runs
            .iter()
            .filter(|r| r.counted())
            .filter_map(|r| {
                let u = Useful { user_s: ratio * r.user_s, sys_s: ratio * r.sys_s };
                Some((r.round?, u))
            })
            .collect();
        Some(Baseline { mean: Useful::of(p, ratio)?, rounds })
    }

    /// Its mean alone, whatever the round: a point judged against its own runs' mean.
    pub fn mean_of(p: &PointResult, ratio: f64) -> Option<Baseline> {
        Some(Baseline { mean: Useful::of(p, ratio)?, rounds: BTreeMap::new() })
    }

    /// What run `r` is judged against.
    pub fn at(&self, r: &RunRecord) -> Useful {
        r.round.and_then(|k| self.rounds.get(&k)).copied().unwrap_or(self.mean)
    }
}

/// Waits no sample caught in a run (the sampler spreads them within a run over the waits it
/// caught there, so these are runs where it caught none) are put down to the waits caught in the
/// point's other runs, in proportion: the same program doing the same work waits on the same
/// things. Without any wait caught at the point they stay unlabelled.
fn pool_unlabelled(items: &mut Vec<Item>) {
    let Some(u) = items.iter().position(|i| i.cause == Cause::Unlabelled) else { return };
    let total: f64 =
        items.iter().filter(|i| matches!(i.cause, Cause::Wait { .. })).map(|i| i.core_s).sum();
    if total <= 0.0 {
        return;
    }
    let unlabelled = items.remove(u);
    for it in items.iter_mut().filter(|i| matches!(i.cause, Cause::Wait { .. })) {
        let f = it.core_s / total;
        it.absorb(&Item { sooner: Vec::new(), ..unlabelled.clone() }, f);
    }
}

/// Of the time work threads were runnable beside idle capacity (other processes' load), the part
/// scalescope's own threads can have held the CPUs: up to their CPU time, moved to its own cause.
fn observed(causes: &mut Vec<(Cause, Phase, f64, usize)>, scalescope_cpu_s: f64) {
    let mut left = scalescope_cpu_s;
    let mut moved = Vec::new();
    for c in causes.iter_mut().filter(|c| c.0 == Cause::OtherLoad) {
        let t = c.2.min(left);
        c.2 -= t;
        left -= t;
        if t > 0.0 {
            moved.push((Cause::Observer, c.1, t, c.3));
        }
    }
    causes.extend(moved);
}

/// CPU-seconds per CPU that /proc/stat's 10 ms ticks may not show of other processes' time.
const TICKS_UNSEEN: f64 = 0.02;

/// Of the time work threads were runnable beside idle capacity, the part beyond what the
/// machine's CPUs did besides the job and scalescope (`others_s`, from /proc/stat): no other
/// process held the CPUs then. They were idle while the threads woke — an idle CPU, or a virtual
/// one the hypervisor must run first, takes tens of µs to run a thread that an I/O completion or
/// a lock's release woke, and fio's 4 KiB direct reads, thousands a second, read as "other
/// processes held the CPUs (11%)" on an idle machine. That time belongs to the wait the threads
/// woke from: it is made unlabelled, which the waits share as the rest of the off-CPU time
/// nothing named.
fn woken(causes: &mut Vec<(Cause, Phase, f64, usize)>, others_s: f64) {
    let load: f64 = causes.iter().filter(|c| c.0 == Cause::OtherLoad).map(|c| c.2).sum();
    if load <= others_s {
        return;
    }
    let keep = others_s / load;
    let mut moved = Vec::new();
    for c in causes.iter_mut().filter(|c| c.0 == Cause::OtherLoad) {
        moved.push((Cause::Unlabelled, c.1, c.2 * (1.0 - keep), c.3));
        c.2 *= keep;
    }
    causes.extend(moved);
}

/// The part of a run's loss that `estimate` seconds of stolen CPU time explain: first the off-CPU
/// time no sample caught (schedstat counts a thread's stolen time off its CPU), then what nothing
/// else explains, so that the shares still add up to the loss.
fn stolen(causes: &mut [(Cause, Phase, f64, usize)], estimate: f64, lost: f64) -> f64 {
    let mut taken = 0.0;
    for c in causes.iter_mut().filter(|c| c.0 == Cause::Unlabelled) {
        let t = c.2.min(estimate - taken);
        c.2 -= t;
        taken += t;
    }
    let explained: f64 = causes.iter().map(|c| c.2).sum::<f64>() + taken;
    taken + (estimate - taken).min((lost - explained).max(0.0))
}

/// One run's account of its lost capacity: the causes (with their phase, core-seconds and
/// threads), the tail each left behind, the share of the capacity idle while work threads
/// waited or had no work, and the CPU time the hypervisor took, when it is known.
struct Account {
    causes: Vec<(Cause, Phase, f64, usize)>,
    carried: Vec<(Cause, f64)>,
    idle_share: f64,
    stolen_s: Option<f64>,
    /// CPU-seconds other processes used on the machine during the run (its busy time less the
    /// job's and scalescope's), when /proc/stat was read.
    others_s: Option<f64>,
}

/// The account of run `r` (its thread report `t`) against `u`, the CPU the same work took at the
/// baseline, of which it lost `lost` core-seconds.
fn account(r: &RunRecord, t: &ThreadReport, u: Useful, lost: f64) -> Account {
    let c = t.capacity.as_ref().expect("filtered");
    let cpu = r.user_s + r.sys_s;
    let scale = if c.span_s > 0.0 { r.wall_s / c.span_s } else { 1.0 };
    let mut stolen_s = None;
    let mut causes: Vec<(Cause, Phase, f64, usize)> = c
        .idle
        .iter()
        .map(|i| {
            let cause = match i.kind {
                // Joining means waiting for others to finish: the CPU beside it has no work.
                IdleKind::Wait if i.class == Some(Class::Join) => Cause::NoWork(i.phase),
                IdleKind::Wait => Cause::Wait {
                    class: i.class.unwrap_or(Class::Other),
                    object: i.object.clone().unwrap_or_default(),
                },
                IdleKind::Runqueue => Cause::OtherLoad,
                IdleKind::NoWork => Cause::NoWork(i.phase),
                IdleKind::Unlabelled => Cause::Unlabelled,
            };
            (cause, i.phase, i.core_s * scale, i.threads)
        })
        .collect();
    let carried: Vec<f64> = c.idle.iter().map(|i| i.carried_s * scale).collect();
    let extra = (cpu - c.over_s * scale - u.total()).max(0.0);
    let (xu, xk) = ((r.user_s - u.user_s).max(0.0), (r.sys_s - u.sys_s).max(0.0));
    if extra > 0.0 && xu + xk > 0.0 {
        causes.push((Cause::ExtraUser, Phase::Steady, extra * xu / (xu + xk), 0));
        causes.push((Cause::ExtraKernel, Phase::Steady, extra * xk / (xu + xk), 0));
    }
    // The bins can only see threads the sampler found: processes too short-lived for a sweep
    // ran on capacity the bins count as idle. The run's own CPU time (rusage, every process)
    // bounds the idle capacity: what the bins say is idle beyond it is cut, every cause alike.
    let free = (c.cpus * r.wall_s - (cpu - c.over_s * scale)).max(0.0);
    let binned: f64 = causes.iter().filter(|c| !c.0.is_extra()).map(|c| c.2).sum();
    let keep = if binned > free { free / binned } else { 1.0 };
    causes.iter_mut().filter(|c| !c.0.is_extra()).for_each(|c| c.2 *= keep);
    let carried: Vec<(Cause, f64)> = causes
        .iter()
        .zip(carried)
        .filter(|(_, s)| *s > 0.0)
        .map(|(c, s)| (c.0.clone(), s * keep))
        .collect();
    observed(&mut causes, t.scalescope_cpu_s);
    let others_s = t
        .machine_cpu
        .filter(|m| m.busy_s > 0.0)
        .map(|m| (m.busy_s - cpu - t.scalescope_cpu_s).max(0.0));
    if let Some(others) = others_s {
        woken(&mut causes, others + TICKS_UNSEEN * c.cpus);
    }
    if let Some(m) = t.machine_cpu.filter(|m| {
        m.stolen_s > 0.0 && m.busy_s > 0.0 && m.busy_s + m.stolen_s >= STEAL_RESOLUTION_S
    }) {
        let estimate = m.stolen_s * (cpu / m.busy_s).min(1.0);
        stolen_s = Some(estimate);
        let taken = stolen(&mut causes, estimate, lost);
        causes.push((Cause::Stolen, Phase::Steady, taken, 0));
    }
    let idle: f64 = causes
        .iter()
        .filter(|c| {
            !c.0.is_extra() && !matches!(c.0, Cause::OtherLoad | Cause::Stolen | Cause::Observer)
        })
        .map(|c| c.2)
        .sum();
    Account {
        causes,
        carried,
        idle_share: idle / (c.cpus * r.wall_s).max(1e-12),
        stolen_s,
        others_s,
    }
}

/// Adds run `k` of `runs`'s account to the items: its core-seconds, its share of the loss
/// (`lost`, out of `denominator`), the tail its waits left behind and how much sooner each wait
/// would have let it end (`scale` from the accounting's span to the wall clock).
fn add(
    items: &mut Vec<Item>,
    (k, runs): (usize, usize),
    run: &Account,
    c: &Capacity,
    (lost, denominator, scale): (f64, f64, f64),
) {
    let n = runs as f64;
    // Where each of this run's causes went: its own item, or one of another run's at another
    // address (see [`same_across_runs`]).
    let mut went: Vec<(Cause, usize)> = Vec::new();
    for &(ref cause, phase, core_s, threads) in &run.causes {
        let found = items.iter().position(|i| i.cause == *cause).or_else(|| {
            items.iter().position(|i| i.per_run[k] == 0.0 && same_across_runs(&i.cause, cause))
        });
        let i = match found {
            Some(i) => {
                if items[i].cause != *cause
                    && let Cause::Wait { class, object } = cause
                {
                    let object = crate::analysis::threads::across_runs(object);
                    items[i].cause = Cause::Wait { class: *class, object };
                }
                i
            }
            None => {
                items.push(Item {
                    cause: cause.clone(),
                    core_s: 0.0,
                    by_phase: BTreeMap::new(),
                    shares: vec![0.0; runs],
                    threads: 0,
                    per_run: vec![0.0; runs],
                    carried_s: 0.0,
                    sooner: vec![None; runs],
                });
                items.len() - 1
            }
        };
        went.push((cause.clone(), i));
        let it = &mut items[i];
        it.core_s += core_s / n;
        *it.by_phase.entry(phase).or_default() += core_s / n;
        it.shares[k] += if lost > 0.0 { core_s / denominator } else { 0.0 };
        it.per_run[k] += core_s;
        it.threads = it.threads.max(threads);
    }
    let item = |items: &[Item], cause: &Cause| {
        went.iter()
            .find(|(c, _)| c == cause)
            .map(|&(_, i)| i)
            .or_else(|| items.iter().position(|i| i.cause == *cause))
    };
    for (cause, s) in &run.carried {
        if let Some(i) = item(items, cause) {
            items[i].carried_s += s / n;
        }
    }
    for x in &c.sooner {
        let cause = Cause::Wait { class: x.class, object: x.object.clone() };
        if let Some(i) = item(items, &cause) {
            let it = &mut items[i];
            it.sooner[k] = Some(it.sooner[k].unwrap_or(0.0).max(x.s * scale));
        }
    }
}

/// Two runs' waits on one object at two addresses: a lock in anonymous memory, which address
/// randomisation moves from run to run (see [`crate::analysis::threads::across_runs`]).
fn same_across_runs(a: &Cause, b: &Cause) -> bool {
    use crate::analysis::threads::across_runs;
    match (a, b) {
        (Cause::Wait { class: x, object: o }, Cause::Wait { class: y, object: p }) => {
            x == y && across_runs(o) == across_runs(p)
        }
        _ => false,
    }
}

/// The ledger of a point against `useful` (its own CPU when no baseline applies: then only idle
/// capacity is lost); `None` when no run has an accounting.
pub fn of(p: &PointResult, useful: Option<&Baseline>) -> Option<Ledger> {
    let runs: Vec<(&RunRecord, &ThreadReport)> = p
        .runs
        .iter()
        .filter(|r| r.counted())
        .filter_map(|r| Some((r, r.threads.as_deref()?)))
        .collect();
    let runs: Vec<_> = runs.into_iter().filter(|(_, t)| t.capacity.is_some()).collect();
    if runs.is_empty() {
        return None;
    }
    let n = runs.len() as f64;
    let mut items: Vec<Item> = Vec::new();
    let mut totals = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
    let mut demand = 0.0;
    let mut peak = 0;
    let mut lost_sum = 0.0;
    let mut useful_sum = 0.0;
    let mut idle_shares = Vec::with_capacity(runs.len());
    let mut stolen_s = 0.0;
    let mut walls = Vec::with_capacity(runs.len());
    let mut others = Vec::with_capacity(runs.len());
    let mut sooner_all = Vec::with_capacity(runs.len());
    for (k, (r, t)) in runs.iter().enumerate() {
        let c = t.capacity.as_ref().expect("filtered");
        let cpu = r.user_s + r.sys_s;
        let u = useful.map_or(Useful { user_s: r.user_s, sys_s: r.sys_s }, |b| b.at(r));
        let scale = if c.span_s > 0.0 { r.wall_s / c.span_s } else { 1.0 };
        let lost = c.cpus * r.wall_s - u.total();
        let run = account(r, t, u, lost);
        if let Some(estimate) = run.stolen_s {
            stolen_s += estimate / n;
        }
        idle_shares.push(run.idle_share);
        let explained: f64 = run.causes.iter().map(|c| c.2).sum();
        let denominator = lost.max(explained).max(1e-12);
        add(&mut items, (k, runs.len()), &run, c, (lost, denominator, scale));
        walls.push((r.wall_s, c.cpus));
        others.extend(run.others_s);
        sooner_all.push(c.sooner_all_s.map(|s| s * scale));
        totals.0 += c.cpus / n;
        totals.1 += r.wall_s / n;
        totals.2 += cpu / n;
        totals.3 += c.over_s * scale / n;
        totals.4 += c.work_threads as f64 / n;
        totals.5 += c.coverage / n;
        totals.6 += c.startup_s / n;
        totals.7 += c.tail_s / n;
        totals.8 += if lost > 0.0 { (1.0 - explained / denominator).max(0.0) / n } else { 0.0 };
        peak = peak.max(c.peak_work_threads);
        demand += c.demand / n;
        lost_sum += lost / n;
        useful_sum += u.total() / n;
    }
    items.retain(|i| i.core_s > 0.0);
    pool_unlabelled(&mut items);
    items.sort_by(|a, b| b.share().total_cmp(&a.share()).then(b.core_s.total_cmp(&a.core_s)));
    let (capacity, wall_s, cpu_s) = (totals.0, totals.1, totals.2);
    Some(Ledger {
        capacity,
        wall_s,
        cpu_s,
        useful_s: useful_sum,
        lost_s: lost_sum,
        gap: if capacity * wall_s > 0.0 { (lost_sum / (capacity * wall_s)).max(0.0) } else { 0.0 },
        items,
        unexplained: totals.8,
        over_s: totals.3,
        work_threads: totals.4,
        peak_work_threads: peak,
        demand,
        coverage: totals.5,
        startup_s: totals.6,
        tail_s: totals.7,
        runs: runs.len(),
        idle_shares,
        stolen_s,
        others_s: if others.is_empty() {
            0.0
        } else {
            others.iter().sum::<f64>() / others.len() as f64
        },
        walls,
        sooner_all,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(cause: Cause, core_s: f64, shares: Vec<f64>) -> Item {
        let per_run = shares.iter().map(|s| s * core_s).collect();
        let sooner = vec![None; shares.len()];
        Item {
            cause,
            core_s,
            by_phase: BTreeMap::from([(Phase::Steady, core_s)]),
            shares,
            threads: 2,
            per_run,
            carried_s: 0.0,
            sooner,
        }
    }

    /// A host that slowed down over the sweep: the baseline's runs of rounds 0 and 1 took 1.9 and
    /// 2.5 s of CPU. A run of another point is judged against the baseline's run of its round, and
    /// a run of a round the baseline did not run in against the baseline's mean, scaled alike.
    #[test]
    fn a_run_is_judged_against_the_baselines_run_of_its_round() {
        let run = |round: Option<u32>, user_s: f64| RunRecord {
            round,
            user_s,
            sys_s: 0.1,
            wall_s: 2.0,
            exit_code: Some(0),
            ..RunRecord::default()
        };
        let base = PointResult {
            params: Default::default(),
            command: Vec::new(),
            target_runs: None,
            runs: vec![run(Some(0), 1.9), run(Some(1), 2.5)],
        };
        let b = Baseline::of(&base, 2.0).unwrap();
        let cpu = |r: &RunRecord| b.at(r).total();
        assert!((cpu(&run(Some(1), 9.0)) - 5.2).abs() < 1e-9, "{b:?}");
        assert!((cpu(&run(Some(0), 9.0)) - 4.0).abs() < 1e-9, "{b:?}");
        assert!((cpu(&run(Some(7), 9.0)) - 4.6).abs() < 1e-9, "{b:?}");
        assert!((cpu(&run(None, 9.0)) - 4.6).abs() < 1e-9, "{b:?}");
        let own = Baseline::mean_of(&base, 1.0).unwrap();
        assert!((own.at(&base.runs[1]).total() - 2.3).abs() < 1e-9, "{own:?}");
    }

    #[test]
    fn runnable_threads_beside_idle_capacity_are_first_put_down_to_scalescope_up_to_its_cpu() {
        let mut causes = vec![
            (Cause::OtherLoad, Phase::Steady, 0.3, 4),
            (Cause::Wait { class: Class::Lock, object: "m".into() }, Phase::Steady, 0.1, 4),
        ];
        observed(&mut causes, 0.2);
        let of = |c: &Cause| causes.iter().filter(|x| &x.0 == c).map(|x| x.2).sum::<f64>();
        assert!(
            (of(&Cause::Observer) - 0.2).abs() < 1e-9 && (of(&Cause::OtherLoad) - 0.1).abs() < 1e-9
        );
        // More CPU than the load: the load is all scalescope's, nothing more is made up.
        let mut causes = vec![(Cause::OtherLoad, Phase::Steady, 0.05, 4)];
        observed(&mut causes, 0.2);
        assert_eq!(causes.iter().map(|x| x.2).sum::<f64>(), 0.05);
    }

    #[test]
    fn runnable_time_beyond_what_other_processes_ran_is_waking_not_their_load() {
        let mut causes = vec![
            (Cause::OtherLoad, Phase::Steady, 0.3, 4),
            (Cause::OtherLoad, Phase::Tail, 0.1, 1),
            (Cause::Wait { class: Class::Io, object: "pread64".into() }, Phase::Steady, 0.5, 4),
        ];
        // Other processes ran 0.1 CPU-seconds: a quarter of the runnable time; the rest, woken
        // threads on idle CPUs, is the waits' (unlabelled), in its phase.
        woken(&mut causes, 0.1);
        let of = |c: &Cause| causes.iter().filter(|x| &x.0 == c).map(|x| x.2).sum::<f64>();
        assert!((of(&Cause::OtherLoad) - 0.1).abs() < 1e-9, "{causes:?}");
        assert!((of(&Cause::Unlabelled) - 0.3).abs() < 1e-9, "{causes:?}");
        let tail = causes.iter().find(|c| c.0 == Cause::Unlabelled && c.1 == Phase::Tail);
        assert!(tail.is_some_and(|c| (c.2 - 0.075).abs() < 1e-9 && c.3 == 1), "{causes:?}");
        // A busy machine: the load stands as it is.
        let mut busy = vec![(Cause::OtherLoad, Phase::Steady, 0.3, 4)];
        woken(&mut busy, 0.5);
        assert_eq!(busy, vec![(Cause::OtherLoad, Phase::Steady, 0.3, 4)]);
    }

    #[test]
    fn stolen_time_explains_first_what_no_sample_caught_then_what_nothing_explains() {
        let lock = Cause::Wait { class: Class::Lock, object: "m".into() };
        let mut causes =
            vec![(lock.clone(), Phase::Steady, 0.2, 2), (Cause::Unlabelled, Phase::Steady, 0.1, 2)];
        // 0.5 s stolen, a loss of 0.6 s: 0.1 unlabelled, then 0.3 of the 0.3 nothing explained.
        assert!((stolen(&mut causes, 0.5, 0.6) - 0.4).abs() < 1e-9);
        assert_eq!(causes[1].2, 0.0);
        assert_eq!(causes[0].2, 0.2, "the lock keeps its share");
        // Little stolen: it takes only part of the unlabelled time.
        let mut causes = vec![(Cause::Unlabelled, Phase::Steady, 0.1, 1)];
        assert!(
            (stolen(&mut causes, 0.04, 0.3) - 0.04).abs() < 1e-9
                && (causes[0].2 - 0.06).abs() < 1e-9
        );
    }

    #[test]
    fn waits_no_run_caught_go_to_the_waits_other_runs_caught() {
        let lock = Cause::Wait { class: Class::Lock, object: "m".into() };
        let pipe = Cause::Wait { class: Class::Ipc, object: "read".into() };
        // Run 1 caught the lock (0.3) and a pipe (0.1); run 2 caught nothing (0.4 unlabelled).
        let mut items = vec![
            item(lock.clone(), 0.15, vec![0.6, 0.0]),
            item(pipe.clone(), 0.05, vec![0.2, 0.0]),
            item(Cause::Unlabelled, 0.2, vec![0.0, 0.8]),
            item(Cause::OtherLoad, 0.05, vec![0.1, 0.1]),
        ];
        pool_unlabelled(&mut items);
        assert!(items.iter().all(|i| i.cause != Cause::Unlabelled));
        let l = items.iter().find(|i| i.cause == lock).unwrap();
        assert!((l.core_s - 0.30).abs() < 1e-9 && (l.shares[1] - 0.6).abs() < 1e-9, "{l:?}");
        let p = items.iter().find(|i| i.cause == pipe).unwrap();
        assert!((p.core_s - 0.10).abs() < 1e-9 && (p.shares[1] - 0.2).abs() < 1e-9, "{p:?}");
        let load = items.iter().find(|i| i.cause == Cause::OtherLoad).unwrap();
        assert_eq!(load.core_s, 0.05, "not a wait: nothing added");
        // No wait caught anywhere: it stays unlabelled.
        let mut alone =
            vec![item(Cause::Unlabelled, 0.2, vec![0.8]), item(Cause::OtherLoad, 0.05, vec![0.1])];
        pool_unlabelled(&mut alone);
        assert!(alone.iter().any(|i| i.cause == Cause::Unlabelled));
    }

    #[test]
    fn a_heap_lock_at_another_address_in_each_run_is_one_cause_and_two_of_one_run_stay_two() {
        let wait = |object: &str| Cause::Wait { class: Class::Lock, object: object.into() };
        let run = |objects: &[&str]| Account {
            causes: objects.iter().map(|o| (wait(o), Phase::Steady, 0.2, 2)).collect(),
            carried: Vec::new(),
            idle_share: 0.0,
            stolen_s: None,
            others_s: None,
        };
        let c = Capacity::default();
        let mut items = Vec::new();
        add(&mut items, (0, 2), &run(&["heap 0x7f39500161f8"]), &c, (0.4, 0.4, 1.0));
        add(&mut items, (1, 2), &run(&["heap 0x7fdef00161f8"]), &c, (0.4, 0.4, 1.0));
        assert_eq!(items.len(), 1, "{items:?}");
        assert_eq!(items[0].cause, wait("heap 0x…1f8"));
        assert!((items[0].core_s - 0.2).abs() < 1e-12 && items[0].per_run == vec![0.2, 0.2]);
        let mut two = Vec::new();
        add(
            &mut two,
            (0, 1),
            &run(&["heap 0x7f00000011f8", "heap 0x7f00000021f8"]),
            &c,
            (0.4, 0.4, 1.0),
        );
        assert_eq!(two.len(), 2, "{two:?}");
    }
}
