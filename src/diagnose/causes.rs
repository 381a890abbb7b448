//! Findings from a point's ledger: each cause of lost CPU capacity becomes a finding of its kind —
//! the lock it waits on (by behaviour, not only by futex operation), the feeder starving the
//! workers, I/O, kernel locks and kernel time, a serial start-up, a tail, extra CPU for the same
//! work, other processes holding the CPUs — with its share of the loss and a severity that the
//! size of the gap allows.

use super::evidence::Switches;
use super::known::{self, Known};
use super::ledger::{Cause, Item, Ledger};
use super::whatif::{self, Measured};
use super::wording::{self, At, Context, Idle, IoWait, Meanwhile, Span, Turns, Words};
use super::{Finding, Kind, NoiseSource, Severity};
use crate::results::findings::WhatIf;
use crate::results::{Around, Class, Feeder, Hot, OPENMP_RUNTIMES, Phase, Wait};

/// A cause must explain at least this share of the loss, and the loss be at least this share of
/// the capacity, for a finding above `info`.
pub const MEDIUM: f64 = 0.10;
/// …and these for `high`.
pub const HIGH_SHARE: f64 = 0.40;
/// The gap a `high` finding needs.
pub const HIGH_GAP: f64 = 0.20;
/// Causes explaining less than this share of the loss are not reported…
const REPORTED: f64 = 0.10;
/// …nor those that idled less than this share of the capacity (a share of a tiny loss is noise).
const REPORTED_CAPACITY: f64 = 0.05;
/// Other processes or the hypervisor held at least this share of the capacity: a what-if is said
/// to be measured under load.
const LOADED_WHAT_IF: f64 = 0.10;
/// Waiters that take turns: while one waits, at least this many others run on average…
const TURNS: f64 = 0.5;
/// …and no more than this many of them run at once (serialised).
const SERIALISED: f64 = 1.3;
/// A feeder runs at least this share of the time its workers wait.
const FEEDS: f64 = 0.5;
/// A thread that waits for work itself this share of its time or more is a peer of the waiting
/// threads (a worker whose turn came first), not what feeds them.
const PEER: f64 = 0.2;
/// Waiters on a CPU less than this share of their time did no work to be starved of: a caller
/// waiting for the job's result, or an idle pool thread.
const IDLE_WAITERS: f64 = 0.01;

/// A wait for work of which this share of the idle capacity falls in the run's tail…
const TAIL_WAITS: f64 = 2.0 / 3.0;
/// …and at least this share of the waiting comes after the waiters last ran is workers done with
/// their share waiting for the slowest (at a barrier, on an empty queue at the end), not workers
/// starved by a feeder (who wait between pieces of work).
const FINISHED: f64 = 0.5;

/// A thread that runs the waiting threads' code (at least this share of its on-CPU samples in
/// their chains of callers)…
const SAME_CODE: f64 = 0.5;
/// …at no more than this many times their rate of work is one of them.
const SAME_PACE: f64 = 1.5;

/// Whether the thread that ran while workers waited for work is one of them rather than what
/// feeds them: it waits for work itself, or it runs their code at about their pace (a compression
/// worker beside another, not the thread that reads and hands out the blocks; a producer running
/// an interpreter's loop like its consumers, but all the time while they wait, stays a feeder).
fn peer(f: &Feeder) -> bool {
    let same_work = f.same_code.is_some_and(|c| c >= SAME_CODE)
        && f.waiters_busy.is_some_and(|w| f.busy <= SAME_PACE * w.max(1e-9));
    f.waits_for_work.unwrap_or(0.0) >= PEER || same_work
}

/// Whether the threads waiting beside a feeder did no work at all, so that neither its code nor
/// its pace can be told from theirs: b3sum's main thread waiting for its pool's result (its
/// waiters on a CPU 0.1% of their time) named the pool worker running meanwhile its feeder.
fn idle_waiters(f: &Feeder) -> bool {
    f.waiters_busy.is_some_and(|w| w < IDLE_WAITERS)
}

/// Whether the thread that ran while workers waited takes turns with them: the job's threads ran
/// one at a time (the caller checks), and it runs their code. Waits during which a thread doing
/// the same work runs all the time, and never two at once, are turns on a lock whatever the
/// primitive; a runtime that keeps the holder on one thread (Go hands a `sync.Mutex` to the next
/// goroutine on the same M, and the other M parks in its scheduler) makes the turns uneven, so
/// their pace is no test here.
fn taking_turns(f: &Feeder) -> bool {
    f.running >= FEEDS && f.same_code.is_some_and(|c| c >= SAME_CODE)
}

/// Extra CPU is a lock's cost when this share of the on-CPU samples lands in lock code.
const LOCK_CODE: f64 = 0.10;
/// Other processes explaining this share of a real loss make the machine's load the finding
/// (`medium`): the efficiency measured is not the program's.
pub const LOADED: f64 = 0.5;

/// Where a ledger is judged.
pub struct Scope<'a> {
    /// Where it is judged, as its findings name it.
    pub at: At<'a>,
    /// The counted value, for [`Finding::at`].
    pub at_count: Option<f64>,
    /// The series' label (`size=big`), or empty.
    pub series: &'a str,
    /// The gap that gates severities: 1 − efficiency, or the lost share of the capacity.
    pub gap: f64,
    /// Whether the gap is real (judged against the runs' interval).
    pub gated: bool,
    /// The baseline's count, when there is one (named by `at`'s parameter).
    pub baseline: Option<f64>,
    /// The point's waits (merged over runs), for the behaviour around each object.
    pub waits: &'a [Wait],
    /// When more work threads are busy than there are CPUs at a count that fits them (threads beside
    /// the workers): the most busy at once and their share of time waiting for a CPU.
    pub oversubscribed: Option<(usize, f64)>,
    /// Where the point's threads were on a CPU, by function (when on-CPU sampling was allowed).
    pub hot: &'a [Hot],
    /// When the job's CPU time at this point is not above the baseline's beyond the runs' noise:
    /// the ratio's interval and its fastest runs' ratio. Extra CPU is then not raised.
    pub cpu_within_noise: Option<CpuNoise>,
    /// The lower end of the 95% interval of the job's CPU time per unit of work against the
    /// baseline's (1.1: at least 10% dearer), when the runs give one.
    pub cpu_ratio_lo: Option<f64>,
    /// Per class, the share of thread time (percent) by count of a series' points; with a
    /// `pick`, only the waits of that class it picks (given each point's waits, to name them as
    /// [`key_of`] does).
    pub shares: &'a Shares<'a>,
    /// The count against the baseline's (2 for 2 threads against 1) when the sweep is taken as
    /// strong scaling: CPU time grown as much says the work may grow with the count.
    pub strong_ratio: Option<f64>,
    /// Whether the point's threads ran one at a time (two or more on a CPU at once less than a
    /// tenth of the time any ran): waits while another thread runs are then turns.
    pub one_at_a_time: bool,
    /// The speed-up measured at this count, for what fixing each cause would buy (none without a
    /// baseline).
    pub measured: Option<Measured>,
    /// Voluntary context switches per run at this point and at the baseline for the same work,
    /// when there is a baseline.
    pub switches: Option<Switches>,
}

/// Extra kernel time is put down to threads blocking and waking one another when their voluntary
/// switches grew this many times for the same work…
const HANDOVERS_GREW: f64 = 10.0;
/// …and at least this many were added per second of it (50 µs of kernel time per added switch,
/// where a block and a wake-up through a futex take a few).
const HANDOVERS_PER_S: f64 = 20_000.0;

/// Whether `kernel_s` more kernel time per run comes with threads blocking and waking one
/// another: [`HANDOVERS_GREW`] times the baseline's voluntary switches for the same work, and
/// [`HANDOVERS_PER_S`] added per second of it.
fn handovers(kernel_s: f64, w: &Switches) -> bool {
    let added = w.top - w.base;
    added > 0.0 && w.top >= HANDOVERS_GREW * w.base && added >= HANDOVERS_PER_S * kernel_s
}

/// Chooses a point's waits (given all of that point's waits).
pub type Pick<'a> = dyn Fn(&Wait, &[Wait]) -> bool + 'a;

/// Shares of thread time (percent) by count: of a class, or of the waits of it that `pick`
/// chooses.
pub type Shares<'a> = dyn Fn(Class, Option<&Pick>) -> Vec<(f64, f64)> + 'a;

/// The key under which a point's wait joins a finding (see [`identity`]).
fn key_of(w: &Wait, waits: &[Wait]) -> Key {
    Key::Object(identity(&w.name, w.class.unwrap_or(Class::Other), waits).1)
}

/// CPU time grown by the count's growth, within this factor either way, reads as work per thread
/// (beyond it, as with false sharing, the CPU is spent on something else).
const PER_THREAD: f64 = 1.25;

/// `the CPU time grew 2.0× with 2× the threads: …`, when extra CPU may be work that grows with
/// the count in a sweep taken as strong scaling.
fn work_per_thread(scope: &Scope, l: &Ledger) -> Option<String> {
    let r = scope.strong_ratio.filter(|&r| r >= 1.5)?;
    // Work done per thread grows the CPU in the program's own code; CPU grown mostly in the
    // kernel is futex calls and switches (threads contending), not more work.
    let extra = |c: Cause| l.item(&c).map_or(0.0, |i| i.core_s);
    if extra(Cause::ExtraKernel) > extra(Cause::ExtraUser) {
        return None;
    }
    let grew = l.cpu_s / l.useful_s.max(1e-9);
    (grew >= r / PER_THREAD && grew <= r * PER_THREAD).then(|| wording::work_per_thread(grew, r))
}

/// The job's CPU time per unit of work at a point against the baseline's, when the extra is
/// within the runs' noise.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CpuNoise {
    /// The 95% interval of the ratio of the means (low end, high end).
    pub interval: [f64; 2],
    /// The ratio of the fastest runs' CPU time: a machine that only ever slows runs down (another
    /// tenant, a slower core) leaves the fastest runs alike when the program costs the same.
    pub fastest: f64,
}

/// How one ledger item reads.
struct Draft<'a> {
    kind: Kind,
    key: Key,
    items: Vec<&'a Item>,
    role: Role,
}

impl Draft<'_> {
    /// Whether every item is extra CPU (no idle capacity).
    fn extra_only(&self) -> bool {
        self.items.iter().all(|i| i.cause.is_extra())
    }
}

/// What makes ledger items of one kind one finding: a cause that a ledger says once, the feeder
/// its workers wait for, or the object its threads wait on.
#[derive(Clone, Debug, PartialEq)]
enum Key {
    /// More busy threads than CPUs.
    Oversubscribed,
    /// Other processes' load.
    Load,
    /// Steal time.
    Steal,
    /// The cost of watching.
    Observer,
    /// The serial start-up.
    Startup,
    /// Threads waiting for the slowest: the tail, a synchronisation point.
    Imbalance,
    /// No work in the steady part of the run.
    NoWork,
    /// Extra CPU in user code.
    Cpu,
    /// Kernel locks and kernel time.
    Kernel,
    /// I/O and blocked writes.
    Io,
    /// Waits for input.
    Input,
    /// Sleeps.
    Sleep,
    /// Waits for work while no thread of the job runs.
    Waiting,
    /// Busy CPUs in lock code.
    Spin,
    /// Busy CPUs in a parallel runtime's wait code.
    RuntimeSpin,
    /// Workers starved by the feeder of this name (its thread id differs in every run).
    Feeder(String),
    /// Waits on one object.
    Object(Object),
}

/// The object of a wait as one finding knows it, whichever run saw it where.
#[derive(Clone, Debug, PartialEq)]
enum Object {
    /// A well-known object, whichever of its words they wait on.
    Known(known::Id),
    /// Anonymous objects taken at this place in the code (a lock per job, per queue).
    TakenAt(String),
    /// Unnamed objects whose waits are entered from one interpreter's runtime (Ruby's GVL is a
    /// condition variable per thread, waited on at more than one place).
    InInterpreter(&'static str),
    /// An unnamed object of this class on a stack.
    OnStack(Class),
    /// An unnamed object of this class in an anonymous mapping.
    InMapping(Class),
    /// An object by its name.
    Named(String),
}

/// What a wait is, from its class, its name and the behaviour around it.
#[derive(Clone)]
enum Role {
    Lock(Option<Known>, Option<Around>),
    Starved(Feeder),
    /// Waiting for work with no feeder: what the others wait on, and what runs, meanwhile.
    Waiting(Vec<String>, Meanwhile),
    Sync(Option<Known>),
    Input,
    Output,
    Sleep,
    Io,
    Kernel,
    Tail,
    Startup,
    NoWork,
    OtherLoad,
    Stolen,
    Observer,
    ExtraUser,
    /// Busy CPUs in lock code without a lock wait to fold into: the lock functions and their share
    /// of the on-CPU samples.
    Spin(Vec<String>, f64),
    /// Busy CPUs in a parallel runtime's wait code with no wait seen: the functions and their share
    /// of the on-CPU samples.
    RuntimeSpin(Vec<String>, f64),
    Oversubscribed(usize, f64),
}

fn role(item: &Item, scope: &Scope) -> Option<(Kind, Key, Role)> {
    let waits = scope.waits;
    if let (Some((busy, runq)), Cause::ExtraUser | Cause::ExtraKernel) =
        (scope.oversubscribed, &item.cause)
    {
        return Some((
            Kind::CpuOversubscription,
            Key::Oversubscribed,
            Role::Oversubscribed(busy, runq),
        ));
    }
    let (class, object) = match &item.cause {
        Cause::Wait { class, object } => (*class, object.as_str()),
        Cause::OtherLoad => return Some((Kind::NoisyMeasurement, Key::Load, Role::OtherLoad)),
        Cause::Stolen => return Some((Kind::NoisyMeasurement, Key::Steal, Role::Stolen)),
        Cause::Observer => return Some((Kind::NoisyMeasurement, Key::Observer, Role::Observer)),
        Cause::NoWork(Phase::Startup) => {
            return Some((Kind::SerialPhase, Key::Startup, Role::Startup));
        }
        Cause::NoWork(Phase::Tail) => {
            return Some((Kind::LoadImbalance, Key::Imbalance, Role::Tail));
        }
        Cause::NoWork(Phase::Steady) => {
            return Some((Kind::SerialFraction, Key::NoWork, Role::NoWork));
        }
        Cause::Unlabelled => return None,
        Cause::ExtraUser => return Some((Kind::OnCpuInefficiency, Key::Cpu, Role::ExtraUser)),
        Cause::ExtraKernel => return Some((Kind::KernelContention, Key::Kernel, Role::Kernel)),
    };
    let around = waits.iter().find(|w| w.name == object).and_then(|w| w.around.clone());
    let (known, key) = identity(object, class, waits);
    let lock = || {
        Some((Kind::LockContention, Key::Object(key.clone()), Role::Lock(known, around.clone())))
    };
    let in_tail = item.by_phase.get(&Phase::Tail).copied().unwrap_or(0.0)
        >= TAIL_WAITS * item.core_s
        && around.as_ref().is_some_and(|a| a.finished >= FINISHED);
    // Waits for work or input that idle the capacity almost only before the job first fills it
    // are its serial start-up (a launcher script reading its helper's output, workers waiting
    // while the input is parsed), not workers starved while the work runs.
    let in_startup =
        item.by_phase.get(&Phase::Startup).copied().unwrap_or(0.0) >= TAIL_WAITS * item.core_s;
    // A scheduling runtime's threads sleeping in its scheduler (Go's idle Ms backing off while
    // they look for a goroutine to steal) wait for work like those it parks.
    let class = match class {
        Class::Sleep if known.is_some_and(known::parks_idle_threads) => Class::WaitForWork,
        c => c,
    };
    match class {
        Class::Lock => lock(),
        Class::WaitForWork if known.is_some_and(|k| k.lock) => lock(),
        // A runtime's idle threads beside one that runs all the time, never two at once, are its
        // tasks taking turns wherever in the run (one at a time, the job never fills its CPUs, so
        // its start-up and tail are no phases of their own).
        Class::WaitForWork
            if known.is_some_and(known::parks_idle_threads)
                && scope.one_at_a_time
                && around
                    .as_ref()
                    .and_then(|a| a.feeder.as_ref())
                    .is_some_and(|f| f.running >= FEEDS) =>
        {
            lock()
        }
        Class::WaitForWork if known.is_some_and(|k| !known::parks_idle_threads(k)) => {
            Some((Kind::LoadImbalance, Key::Imbalance, Role::Sync(known)))
        }
        Class::WaitForWork | Class::Ipc if in_tail && !is_output(object) => {
            Some((Kind::LoadImbalance, Key::Imbalance, Role::Tail))
        }
        Class::WaitForWork | Class::Ipc | Class::Sleep if in_startup && !is_output(object) => {
            Some((Kind::SerialPhase, Key::Startup, Role::Startup))
        }
        Class::WaitForWork => {
            let a = around.clone().unwrap_or_default();
            let turns = scope.one_at_a_time && a.feeder.as_ref().is_some_and(taking_turns);
            let feeds =
                |f: &Feeder| f.running >= FEEDS && !peer(f) && !idle_waiters(f) && !f.cannot_wake;
            match a.feeder.clone().filter(|f| feeds(f) && !turns) {
                // By name: its thread id differs in every run of the point.
                Some(f) => Some((Kind::WaitForWork, Key::Feeder(f.name.clone()), Role::Starved(f))),
                None if a.members_running >= TURNS && a.members_peak <= SERIALISED => lock(),
                // Another thread of the job ran nearly all the time it waited, a peer that waits
                // for its turn itself, and the job's threads ran one at a time: turns on a lock,
                // whatever the primitive (each thread's own condition variable, as CPython's
                // and Ruby's interpreter locks hand over) and whatever a timer does beside it.
                None if scope.one_at_a_time
                    && a.members_running + a.others_running >= TURNS
                    && a.feeder.as_ref().is_some_and(|f| !f.cannot_wake) =>
                {
                    lock()
                }
                None if a.members_running >= TURNS => {
                    Some((Kind::LoadImbalance, Key::Imbalance, Role::Sync(None)))
                }
                None => {
                    let ran = Meanwhile {
                        running: a.others_running + a.members_running,
                        most: a.feeder.as_ref().map(|f| (f.name.clone(), f.running)),
                    };
                    Some((Kind::WaitForWork, Key::Waiting, Role::Waiting(a.meanwhile.clone(), ran)))
                }
            }
        }
        Class::Join => Some((Kind::LoadImbalance, Key::Imbalance, Role::Tail)),
        Class::Io => Some((Kind::IoBound, Key::Io, Role::Io)),
        Class::KernelLock => Some((Kind::KernelContention, Key::Kernel, Role::Kernel)),
        Class::Ipc if is_output(object) => Some((Kind::IoBound, Key::Io, Role::Output)),
        Class::Ipc => Some((Kind::WaitForWork, Key::Input, Role::Input)),
        Class::Sleep => Some((Kind::WaitForWork, Key::Sleep, Role::Sleep)),
        _ => None,
    }
}

/// What a wait's object is: a well-known one (a runtime's lock, an interpreter's), and the key that
/// makes the waits on it one finding — its name, the interpreter whose runtime an anonymous one is
/// waited on from, where it is taken for another anonymous one (a lock per job, per queue), or its
/// class and region for an unnamed object on a stack or in a mapping.
fn identity(object: &str, class: Class, waits: &[Wait]) -> (Option<Known>, Object) {
    let taken_at = waits
        .iter()
        .find(|w| w.name == object)
        .and_then(|w| w.taken_at.as_deref())
        .or_else(|| anonymous(object).then(|| sibling_site(object, class, waits)).flatten());
    let known = known::lookup(object).or_else(|| taken_at.and_then(known::lookup));
    // A well-known object is one finding, whichever of its words (a mutex, a condition variable)
    // they wait on; anonymous objects taken at one place in the code (a lock per job, per queue)
    // are one finding too.
    let interpreter = taken_at.and_then(known::interpreter).filter(|_| anonymous(object));
    let key = match (known, taken_at) {
        (Some(k), _) => Object::Known(k.id),
        (None, _) if let Some(i) = interpreter => Object::InInterpreter(i.what),
        (None, Some(at)) if anonymous(object) => Object::TakenAt(at.to_string()),
        // Stacks and anonymous mappings move from run to run (the kernel randomises where they
        // start): one unnamed object of a class there is the same in every run of the point.
        (None, None) if object.starts_with("stack") => Object::OnStack(class),
        (None, None) if object.starts_with("heap 0x") => Object::InMapping(class),
        (None, _) => Object::Named(object.to_string()),
    };
    (known, key)
}

/// The ledger's items with the waits on one object merged: each run names it anew (its address on
/// a stack, the heap), so that what it is — starved workers, or workers done waiting in the tail —
/// is judged once, on all the point's runs together, not run by run.
fn merged(items: &[Item], waits: &[Wait]) -> Vec<Item> {
    let mut out: Vec<(Option<(Class, Object)>, Item)> = Vec::new();
    for item in items {
        let key = match &item.cause {
            Cause::Wait { class, object } => Some((*class, identity(object, *class, waits).1)),
            _ => None,
        };
        match out.iter_mut().find(|(k, _)| key.is_some() && *k == key) {
            Some((_, m)) => m.absorb(item, 1.0),
            None => out.push((key, item.clone())),
        }
    }
    out.into_iter().map(|(_, i)| i).collect()
}

/// How an object reads in a finding: an anonymous one (in the heap, on a stack, in shared memory)
/// by where it is taken, `pthread_mutex_lock ← update_histogram ← worker (heap+0x2a0)`; a named
/// one by its symbol, with where it is taken after it.
fn display(object: &str, waits: &[Wait]) -> String {
    wording::object(object, taken_at(object, waits), anonymous(object))
}

/// Where the waits on `object` are taken, when their stacks say.
fn taken_at<'a>(object: &str, waits: &'a [Wait]) -> Option<&'a str> {
    waits.iter().find(|w| w.name == object).and_then(|w| w.taken_at.as_deref())
}

/// Where the waits on other anonymous objects of the same class and region (heap, stack) are
/// taken, when they all are taken at one place: the same object, found at another address in
/// another run, whose stack this run could not read.
fn sibling_site<'a>(object: &str, class: Class, waits: &'a [Wait]) -> Option<&'a str> {
    let region = |o: &str| {
        if o.starts_with("stack") {
            "stack"
        } else if o.starts_with("heap") {
            "heap"
        } else {
            ""
        }
    };
    let mut sites = waits.iter().filter(|w| {
        w.class == Some(class)
            && w.name != object
            && anonymous(&w.name)
            && region(&w.name) == region(object)
    });
    let first = sites.find_map(|w| w.taken_at.as_deref())?;
    sites.all(|w| w.taken_at.as_deref().is_none_or(|s| s == first)).then_some(first)
}

/// An object without a symbol: in the heap, on a stack, in shared memory.
fn anonymous(object: &str) -> bool {
    object.starts_with("heap")
        || object.starts_with("stack")
        || object.starts_with("0x")
        || !object.contains(['!', ':'])
}

/// A wait in a write-like system call: output blocked on its reader.
fn is_output(object: &str) -> bool {
    ["write", "pwrite", "send", "sendto", "sendmsg", "writev"]
        .iter()
        .any(|w| object.split(' ').next() == Some(w))
}

/// Adds the findings of a ledger to `out`, largest share first. Returns whether one of them, raised
/// (`medium` or more), is a feeder that ran while the workers waited: a bound on the speed-up that
/// more CPUs would not lift.
pub fn findings(scope: &Scope, ledger: &Ledger, out: &mut Vec<Finding>) -> bool {
    let items = merged(&ledger.items, scope.waits);
    let mut drafts: Vec<Draft> = Vec::new();
    for item in &items {
        let Some((kind, key, role)) = role(item, scope) else { continue };
        match drafts.iter_mut().find(|d| d.kind == kind && d.key == key) {
            Some(d) => d.items.push(item),
            None => drafts.push(Draft { kind, key, items: vec![item], role }),
        }
    }
    let share = |d: &Draft| d.items.iter().map(|i| i.share()).sum::<f64>();
    fold_waits_behind_locks(&mut drafts, scope.waits);
    fold_extra_cpu(&mut drafts, &share, scope, ledger.cpu_s);
    if scope.cpu_within_noise.is_none() {
        fold_uneven_tail(&mut drafts, &share, ledger);
    }
    let capacity = (ledger.capacity * ledger.wall_s).max(1e-12);
    // Extra CPU in some runs of a point that, on average, took no more CPU than the baseline for
    // the same work is the runs' spread, not a cost (it read "takes -4% more CPU time").
    let dearer = ledger.cpu_s > ledger.useful_s;
    drafts.retain(|d| (dearer || !d.extra_only()) && reportable(d, &share, capacity));
    drafts.sort_by(|a, b| share(b).total_cmp(&share(a)));
    let first = out.len();
    // When other processes explain most of the loss, the other causes were measured under that
    // load: they are described, not raised.
    let load = |d: &Draft| match d.role {
        Role::OtherLoad | Role::Stolen | Role::Observer => {
            share(d).min(of_the_gap(scope.gap, ledger, d.items.iter().map(|i| i.core_s).sum()))
        }
        _ => 0.0,
    };
    let loaded = drafts.iter().any(|d| load(d) >= LOADED);
    let mut feeder_binds = false;
    for d in &drafts {
        let s = share(d);
        let severity = if d.extra_only() && scope.cpu_within_noise.is_some() {
            Severity::Info
        } else if d.kind == Kind::NoisyMeasurement && scope.gated && load(d) >= LOADED {
            Severity::Medium
        } else if !scope.gated
            || s < MEDIUM
            || typical(d) < MEDIUM
            || d.kind == Kind::NoisyMeasurement
            || loaded
        {
            if d.kind == Kind::NoisyMeasurement && s >= MEDIUM {
                Severity::Low
            } else {
                Severity::Info
            }
        } else if s >= HIGH_SHARE && scope.gap >= HIGH_GAP {
            Severity::High
        } else {
            Severity::Medium
        };
        let mut f = render(scope, ledger, d, s, severity);
        if let Some(w) = f
            .what_if
            .as_ref()
            .filter(|w| f.severity >= Severity::Medium && whatif::within_its_error(w))
        {
            f.severity = Severity::Info;
            f.evidence.push(wording::buys_too_little(w.without - w.speedup, whatif::MODEL_ERROR));
        }
        feeder_binds |= matches!(d.role, Role::Starved(_)) && f.severity >= Severity::Medium;
        out.push(f);
    }
    if let Some(f) = out.get_mut(first) {
        f.evidence.insert(0, ledger_line(scope, ledger, &drafts, share));
    }
    feeder_binds
}

/// Whether a draft is big enough to be reported: [`REPORTED`] of the loss, and idle or extra
/// core-seconds of [`REPORTED_CAPACITY`] of the `capacity` (core-seconds).
fn reportable(d: &Draft, share: &dyn Fn(&Draft) -> f64, capacity: f64) -> bool {
    share(d) >= REPORTED
        && d.items.iter().map(|i| i.core_s).sum::<f64>() >= REPORTED_CAPACITY * capacity
}

/// A draft's share of the loss in its median run. A cause raised must take its share in most
/// runs: one run that a host's hiccup left with a long tail (a thread held back, the other done
/// early) moves the mean, not the median.
fn typical(d: &Draft) -> f64 {
    crate::stats::median(&per_run(d)).unwrap_or(0.0)
}

/// A draft's share of the loss in each run.
fn per_run(d: &Draft) -> Vec<f64> {
    let runs = d.items.iter().map(|i| i.shares.len()).max().unwrap_or(0);
    (0..runs).map(|r| d.items.iter().filter_map(|i| i.shares.get(r)).sum::<f64>()).collect()
}

/// The share of a point's lost efficiency (`gap`, 1 − efficiency) that `core_s` of idle capacity
/// makes. It is the ledger's loss, or more when the efficiency lost more than its capacity idled:
/// a baseline that kept 1.6 CPUs busy makes 2 threads 40% less efficient with their 2 CPUs full.
pub fn of_the_gap(gap: f64, l: &Ledger, core_s: f64) -> f64 {
    core_s / l.lost_s.max(gap * l.capacity * l.wall_s).max(1e-12)
}

/// A thread waiting for work while the threads that would give it some wait on a lock (a pool's
/// caller waiting for results while its workers wait for CPython's GIL) waits because of the
/// lock: its idle capacity is counted with the lock's finding, not as a starved consumer. Taken
/// so when, while it waits, the other threads spend at least [`BEHIND_LOCK`] of the time on
/// locks of this ledger, and most of their waiting on them.
fn fold_waits_behind_locks(drafts: &mut Vec<Draft>, waits: &[Wait]) {
    let Some(w) = drafts.iter().position(|d| matches!(d.role, Role::Waiting(..))) else { return };
    let Role::Waiting(meanwhile, _) = &drafts[w].role else { return };
    let (mut on_locks, mut total) = (Vec::<(usize, f64)>::new(), 0.0);
    for (object, share) in meanwhile.iter().filter_map(|m| meanwhile_entry(m)) {
        total += share;
        let key = Key::Object(identity(object, Class::Lock, waits).1);
        let Some(l) = drafts.iter().position(|d| matches!(d.role, Role::Lock(..)) && d.key == key)
        else {
            continue;
        };
        match on_locks.iter_mut().find(|(i, _)| *i == l) {
            Some((_, s)) => *s += share,
            None => on_locks.push((l, share)),
        }
    }
    let locked: f64 = on_locks.iter().map(|(_, s)| s).sum();
    let Some(&(lock, _)) = on_locks.iter().max_by(|a, b| a.1.total_cmp(&b.1)) else { return };
    if locked < BEHIND_LOCK || locked < 0.5 * total {
        return;
    }
    let moved = drafts.remove(w);
    let lock = if lock > w { lock - 1 } else { lock };
    drafts[lock].items.extend(moved.items);
}

/// Other threads on a lock for this share of a waiting thread's time (summed over them) make
/// its wait the lock's doing.
const BEHIND_LOCK: f64 = 0.5;

/// The object and the share of the time of one of [`Around::meanwhile`]'s entries:
/// `'python3' wait on python3.11!_PyRuntime+0x1b0 (45% of the time)`.
fn meanwhile_entry(m: &str) -> Option<(&str, f64)> {
    let after_name = m.strip_prefix('\'')?.split_once('\'')?.1;
    let (_, rest) = after_name.split_once(" on ")?;
    let (object, share) = rest.rsplit_once(" (")?;
    let pct: f64 = share.strip_suffix("% of the time)")?.parse().ok()?;
    Some((object, pct / 100.0))
}

/// Threads contending on a lock or a queue also burn CPU on it: futex calls in the kernel, spinning
/// before they sleep, the lock's cache line moving between CPUs. When such a wait is the largest
/// cause, the extra CPU for the same work is its cost too, not a cause of its own. Threads of a
/// parallel runtime spin before they sleep at a barrier: when its code holds most of the extra
/// CPU, that CPU belongs to what they wait for (the tail, the synchronisation point).
fn fold_extra_cpu(
    drafts: &mut Vec<Draft>,
    share: &dyn Fn(&Draft) -> f64,
    scope: &Scope,
    cpu_s: f64,
) {
    let hot = scope.hot;
    let largest = |drafts: &[Draft], pick: &dyn Fn(&Draft) -> bool| {
        (0..drafts.len())
            .filter(|&i| pick(&drafts[i]))
            .max_by(|&a, &b| share(&drafts[a]).total_cmp(&share(&drafts[b])))
    };
    let waits = |d: &Draft| matches!(d.role, Role::Lock(..) | Role::Starved(_) | Role::Waiting(..));
    let Some(top) = largest(drafts, &|_| true) else { return };
    let extra_s: f64 =
        drafts.iter().flat_map(|d| &d.items).filter(|i| i.cause.is_extra()).map(|i| i.core_s).sum();
    let (spin, spin_names) = runtime_wait_code(hot);
    // The spin is judged against the extra CPU the runs are sure of: on a VM whose runs vary by
    // a quarter, the rest of a point's extra CPU is its noise.
    let sure_s =
        scope.cpu_ratio_lo.map_or(extra_s, |lo| (cpu_s * (1.0 - 1.0 / lo.max(1.0))).min(extra_s));
    let spinning = extra_s > 0.0 && spin >= MIN_SPIN && spin * cpu_s >= SPIN_EXPLAINS * sure_s;
    // The largest cause is a wait on a lock or a queue; or threads on a CPU in lock code
    // (spinning, handing the lock over) burn the extra CPU there.
    let target = if waits(&drafts[top]) {
        top
    } else if lock_code(hot) >= LOCK_CODE {
        match largest(drafts, &|d| matches!(d.role, Role::Lock(..))) {
            Some(l) => l,
            // Threads spin in the lock's code rather than sleep on it (OpenMP's critical, spin
            // locks): the extra CPU is the lock's.
            None => match largest(drafts, &|d| d.extra_only()) {
                Some(x) => {
                    let names: Vec<String> = hot
                        .iter()
                        .filter(|h| is_lock_code(&h.name))
                        .take(3)
                        .map(|h| h.name.clone())
                        .collect();
                    drafts[x].kind = Kind::LockContention;
                    drafts[x].key = Key::Spin;
                    drafts[x].role = Role::Spin(names, lock_code(hot));
                    x
                }
                None => return,
            },
        }
    } else if spinning {
        let waited =
            |d: &Draft| matches!(d.role, Role::Tail | Role::Sync(_)) && share(d) >= REPORTED;
        match largest(drafts, &waited) {
            Some(t) => t,
            // Spinning the whole time, they never sleep: what they wait for is hidden.
            None => match largest(drafts, &|d| d.extra_only()) {
                Some(x) => {
                    drafts[x].key = Key::RuntimeSpin;
                    drafts[x].role = Role::RuntimeSpin(spin_names, spin);
                    x
                }
                None => return,
            },
        }
    } else {
        return;
    };
    let moved: Vec<&Item> = drafts
        .iter()
        .enumerate()
        .filter(|(i, d)| *i != target && d.extra_only())
        .flat_map(|(_, d)| d.items.iter().copied())
        .collect();
    drafts[target].items.extend(moved);
    let mut i = 0;
    drafts.retain(|d| {
        let keep = i == target || !d.extra_only();
        i += 1;
        keep
    });
}

/// Threads that each take this many times the baseline's CPU for their work contend on a CPU
/// (a shared cache line, memory bandwidth, kernel locks)…
const UNEVEN_CPU: f64 = 1.5;

/// …and contention is unfair: the thread that wins the cache line or the lock more often finishes
/// first, and the other runs the last of its equal share alone. When the extra CPU is the largest
/// cause, explains [`HIGH_SHARE`] of the loss and the CPU per unit of work is [`UNEVEN_CPU`]
/// times the baseline's, a smaller tail is the uneven progress of that contention, not uneven
/// work: it is counted in the extra CPU's finding (the test suite's false sharing left a tail of
/// 31 ms in a run of 190 ms in one sweep of six, and 0–3% of the loss in the rest). Not when
/// the extra CPU is within the runs' noise.
fn fold_uneven_tail(drafts: &mut Vec<Draft>, share: &dyn Fn(&Draft) -> f64, l: &Ledger) {
    let on_cpu = |d: &Draft| d.extra_only() && matches!(d.role, Role::ExtraUser | Role::Kernel);
    let Some(x) =
        (0..drafts.len()).max_by(|&a, &b| share(&drafts[a]).total_cmp(&share(&drafts[b])))
    else {
        return;
    };
    let Some(t) = drafts.iter().position(|d| matches!(d.role, Role::Tail)) else { return };
    if !on_cpu(&drafts[x]) || share(&drafts[x]) < HIGH_SHARE || l.cpu_s < UNEVEN_CPU * l.useful_s {
        return;
    }
    // A tail too small to be reported is left to be dropped, not said inside another finding.
    if !reportable(&drafts[t], share, (l.capacity * l.wall_s).max(1e-12)) {
        return;
    }
    let tail = drafts.remove(t);
    let x = if x > t { x - 1 } else { x };
    drafts[x].items.extend(tail.items);
}

/// Extra CPU is the cost of spinning in a parallel runtime when the runtime's code holds at least
/// this share of it: the rest is the same waiting's kernel side (futex calls, sleeping and waking,
/// which user-code samples do not see) and caches refilled after it. Measured on the uneven
/// OpenMP loop spinning before it sleeps: 50–78% of the extra CPU in libgomp's code.
const SPIN_EXPLAINS: f64 = 1.0 / 3.0;

/// Below this share of the on-CPU samples, the runtime's code is not taken for spinning.
const MIN_SPIN: f64 = 0.02;

/// Besides the OpenMP runtimes' modules, code whose threads spin before they sleep when they
/// wait for each other: oneTBB, and the OpenMP runtimes' wait functions where they are linked in.
const SPINNING_RUNTIMES: [&str; 4] = ["libtbb.so", "gomp_barrier", "gomp_team_barrier", "__kmp_"];

/// Share of on-CPU samples in a parallel runtime's own code outside its lock functions (threads
/// waiting for each other on a CPU), and the first three such functions.
fn runtime_wait_code(hot: &[Hot]) -> (f64, Vec<String>) {
    let spins = |h: &&Hot| {
        !is_lock_code(&h.name)
            && OPENMP_RUNTIMES.iter().chain(&SPINNING_RUNTIMES).any(|r| h.name.contains(r))
    };
    (
        hot.iter().filter(spins).map(|h| h.share).sum(),
        hot.iter().filter(spins).take(3).map(|h| h.name.clone()).collect(),
    )
}

/// Share of on-CPU samples in lock code: mutex and futex functions, spin locks, OpenMP's critical
/// sections and locks, the JVM's monitors (`synchronized`: HotSpot spins in
/// `ObjectMonitor::TrySpin` before it parks a thread), Go's mutexes (`sync.Mutex` spins in
/// `runtime.procyield` before it parks a goroutine; `runtime.lock2` is the runtime's own lock).
fn lock_code(hot: &[Hot]) -> f64 {
    hot.iter().filter(|h| is_lock_code(&h.name)).map(|h| h.share).sum()
}

fn is_lock_code(name: &str) -> bool {
    const LOCK: [&str; 18] = [
        "mutex_lock",
        "lll_lock",
        "spin_lock",
        "rwlock",
        "futex",
        "lock_contended",
        "sem_wait",
        "parking_lot",
        "GOMP_critical",
        "gomp_mutex",
        "omp_set_lock",
        "omp_set_nest_lock",
        "ObjectMonitor::",
        "ObjectSynchronizer::",
        "runtime.procyield",
        "sync.(*Mutex).lockSlow",
        "sync.(*RWMutex)",
        "runtime.lock2",
    ];
    LOCK.iter().any(|l| name.contains(l))
}

/// The ledger's line: its loss and the first four causes' shares, the rest as smaller causes.
fn ledger_line(
    scope: &Scope,
    l: &Ledger,
    drafts: &[Draft],
    share: impl Fn(&Draft) -> f64,
) -> String {
    let causes: Vec<(Kind, Option<&str>, f64)> = drafts
        .iter()
        .take(4)
        .map(|d| (d.kind, noise_source(&d.role).map(NoiseSource::words), share(d)))
        .collect();
    // Causes too small to be reported (or beyond the first four) explain the rest.
    let shown: f64 = drafts.iter().take(4).map(&share).sum();
    let smaller = Some(1.0 - l.unexplained - shown).filter(|s| *s >= 0.01);
    wording::ledger_line(scope.at, scope.series, l, &causes, smaller)
}

/// What a cause that is the machine's, not the program's, says of the measurement.
fn noise_source(role: &Role) -> Option<NoiseSource> {
    match role {
        Role::OtherLoad => Some(NoiseSource::OtherProcesses),
        Role::Stolen => Some(NoiseSource::Steal),
        Role::Observer => Some(NoiseSource::Watching),
        _ => None,
    }
}

fn render(scope: &Scope, l: &Ledger, d: &Draft, share: f64, severity: Severity) -> Finding {
    // Extra CPU folded into this cause is CPU the job used, not idle capacity: said apart.
    let idle_s: f64 = d.items.iter().filter(|i| !i.cause.is_extra()).map(|i| i.core_s).sum();
    let extra: f64 = d.items.iter().filter(|i| i.cause.is_extra()).map(|i| i.core_s).sum();
    let c = Context {
        at: scope.at,
        baseline: scope.baseline,
        objects: d
            .items
            .iter()
            .filter_map(|i| match &i.cause {
                Cause::Wait { object, .. } => Some(display(object, scope.waits)),
                _ => None,
            })
            .take(3)
            .collect(),
        idle: Idle {
            core_s: idle_s,
            threads: d.items.iter().map(|i| i.threads).max().unwrap_or(0),
            span: span(d, l),
            carried_s: d.items.iter().map(|i| i.carried_s).sum(),
        },
    };
    let mut evidence = Vec::new();
    // Waits that cost kernel time at every handover: the waits are what to batch.
    let mut handed = None;
    if extra > 0.0 && matches!(d.role, Role::Lock(..) | Role::Starved(_) | Role::Waiting(..)) {
        evidence.push(c.extra_cpu_line(extra));
        let kernel_s = d.items.iter().filter(|i| i.cause == Cause::ExtraKernel).map(|i| i.core_s);
        let kernel_s: f64 = kernel_s.sum();
        handed = scope.switches.filter(|w| kernel_s > 0.0 && handovers(kernel_s, w));
        evidence.extend(handed.map(|w| wording::handovers_line(w, kernel_s)));
    }
    if extra >= 0.01 * l.cpu_s && matches!(d.role, Role::Tail | Role::Sync(_)) {
        let (spin, names) = runtime_wait_code(scope.hot);
        evidence.push(c.runtime_spin_line(extra, spin, &names));
    }
    if idle_s > 0.0 && matches!(d.role, Role::ExtraUser | Role::Kernel) {
        evidence.push(wording::uneven_progress(l.tail_s, l.wall_s));
    }
    let per_thread =
        d.items.iter().any(|i| i.cause.is_extra()).then(|| work_per_thread(scope, l)).flatten();
    let mistaken = per_thread.is_some() && matches!(d.role, Role::ExtraUser | Role::Kernel);
    evidence.extend(per_thread);
    let words = words(scope, l, d, &c, (share, idle_s, extra));
    evidence.extend(words.evidence);
    // Waits for input while other processes do the work: fixing them buys nothing to price, and
    // what the work waits on cannot be seen from here.
    let outside = matches!(d.role, Role::Input | Role::NoWork).then(|| elsewhere(l)).flatten();
    let severity = if outside.is_some() { severity.min(Severity::Medium) } else { severity };
    // Extra CPU within the runs' noise is nothing to fix: priced from the runs that happened to
    // cost more (vips: 1% more CPU on average, 0.83–1.23× the baseline's), it had promised
    // "1.88× → 2.00×, runs 138 ms shorter", more than the whole loss allowed.
    let noise_only = d.extra_only() && scope.cpu_within_noise.is_some();
    let what_if = scope
        .measured
        .filter(|_| buys(d) && outside.is_none() && !noise_only)
        .and_then(|m| whatif::of(&d.items, l, m, fed(d)))
        .map(|w| WhatIf {
            spin: matches!(d.role, Role::Spin(..)),
            turns: takes_turns(&d.role, scope.one_at_a_time),
            ..w
        });
    // The machine's load shares the idle capacity with the cause and moves from sweep to sweep.
    let held = |c: Cause| l.item(&c).map_or(0.0, |i| i.core_s);
    let load = (held(Cause::OtherLoad) + held(Cause::Stolen)) / (l.capacity * l.wall_s).max(1e-12);
    if what_if.is_some() && load >= LOADED_WHAT_IF {
        evidence.insert(0, wording::loaded_what_if(load));
    }
    Finding {
        noise: noise_source(&d.role),
        kind: d.kind,
        severity,
        summary: format!("{}{}", capitalise(&words.summary), wording::series(scope.series)),
        evidence,
        advice: match (mistaken, handed) {
            (true, _) => wording::or_weak(&words.advice),
            (false, Some(_)) => {
                format!("{}; beyond the handovers: {}", wording::HANDOVERS, words.advice)
            }
            (false, None) => words.advice,
        },
        cost_pct: outside.is_none().then_some(100.0 * share),
        cost_per_run_pct: if outside.is_none() {
            per_run(d).iter().map(|s| 100.0 * s).collect()
        } else {
            Vec::new()
        },
        at: scope.at_count,
        what_if,
    }
}

/// A job that used at most this share of its capacity while waiting for input ...
const ELSEWHERE_JOB: f64 = 0.1;
/// ... while other processes kept at least this share of it busy, and this many times the job's
/// CPU, has its work done outside the processes watched (a server it talks to).
const ELSEWHERE_OTHERS: (f64, f64) = (0.5, 5.0);

/// The CPUs the job's processes and other processes kept busy during a point's runs, when the
/// job barely ran and the others did: its input comes from work outside the tree (a client of a
/// database server whose parallel workers do the query read "[high] wait-for-work … while CPUs
/// are idle … without these waits 0.90× → 2.00×", with 1.9 of the 2 CPUs busy in the server).
fn elsewhere(l: &Ledger) -> Option<(f64, f64)> {
    let span = (l.capacity * l.wall_s).max(1e-12);
    let (job, others) = (l.cpu_s / span, l.others_s / span);
    (job <= ELSEWHERE_JOB && others >= ELSEWHERE_OTHERS.0 && others >= ELSEWHERE_OTHERS.1 * job)
        .then(|| (l.cpu_s / l.wall_s.max(1e-12), l.others_s / l.wall_s.max(1e-12)))
}

/// The part of the run where a draft's capacity idled: the start-up when all of it did, else the
/// tail when any did.
fn span(d: &Draft, l: &Ledger) -> Option<Span> {
    match d.items.iter().map(|i| i.main_phase()).min() {
        Some(Phase::Startup)
            if d.items.iter().all(|i| i.main_phase() == Phase::Startup) && l.startup_s > 0.0 =>
        {
            Some(Span::Startup(l.startup_s))
        }
        Some(Phase::Tail) if l.tail_s > 0.0 => Some(Span::Tail(l.tail_s)),
        _ => None,
    }
}

/// A draft's words, by its role: `share` of the loss, `idle_s` of idle capacity and `extra` CPU.
fn words(
    scope: &Scope,
    l: &Ledger,
    d: &Draft,
    c: &Context,
    (share, idle_s, extra): (f64, f64, f64),
) -> Words {
    let class = d.items.iter().find_map(|i| match &i.cause {
        Cause::Wait { class, .. } => Some(*class),
        _ => None,
    });
    match &d.role {
        Role::Lock(known, around) => {
            // A well-known object says what it is; its words (a mutex, a condition variable) split
            // the turn-taking between them, so the figures would mislead.
            let turns =
                around.as_ref().filter(|_| known.is_none()).map(|a| turns(a, scope.one_at_a_time));
            // The lock's own waits, not its class's: a main thread joining its workers through a
            // lock (Python's join) is not the interpreter's lock.
            let pick = |w: &Wait, waits: &[Wait]| key_of(w, waits) == d.key;
            let shares = class.map(|c| (scope.shares)(c, Some(&pick))).unwrap_or_default();
            // Waiters that do not take turns (none of them runs while one waits) wait for a holder
            // that is not one of them, and waiters of which several run at once are contended, not
            // serialised: the summary says what the evidence line and the what-if say.
            let serialised =
                known.is_some() || around.is_none() || takes_turns(&d.role, scope.one_at_a_time);
            wording::lock(c, *known, turns, &shares, serialised, extra > idle_s)
        }
        Role::Starved(f) => wording::starved(c, f, &(scope.shares)(Class::WaitForWork, None)),
        Role::Waiting(meanwhile, ran) => wording::waiting(c, meanwhile, ran),
        Role::Sync(known) => wording::sync(c, *known),
        Role::Input => match elsewhere(l) {
            Some(busy) => wording::input_elsewhere(c, &waiting_programs(d, scope), busy),
            None => wording::input(c, &waiting_programs(d, scope)),
        },
        Role::Sleep => wording::sleep(c, &waiting_programs(d, scope)),
        // Output blocks on the reader of a pipe or socket; a file's writes wait for the storage.
        Role::Io | Role::Output => {
            let wait = match d.role {
                Role::Output if writes_block(d, scope.waits) => IoWait::Output,
                Role::Io if writes(d, scope.waits) => IoWait::Writes,
                _ => IoWait::Reads,
            };
            // Output blocked on a pipe's or socket's reader waits in the ipc class, not on storage.
            let class = if wait == IoWait::Output { Class::Ipc } else { Class::Io };
            wording::io(c, wait, &(scope.shares)(class, None))
        }
        Role::Kernel => {
            let kernel: Vec<f64> = d
                .items
                .iter()
                .filter(|i| i.cause == Cause::ExtraKernel)
                .map(|i| i.core_s)
                .collect();
            let extra = (!kernel.is_empty()).then(|| kernel.iter().sum::<f64>());
            let handed = extra.zip(scope.switches).filter(|(k, w)| handovers(*k, w));
            wording::kernel(c, extra, handed.map(|(_, w)| w))
        }
        Role::Spin(names, code) => wording::spin(c, l, names, *code),
        Role::RuntimeSpin(names, code) => wording::runtime_spin(c, l, names, *code),
        Role::ExtraUser => {
            wording::extra_user(c, l, scope.cpu_within_noise.map(|n| (n.interval, n.fastest)))
        }
        Role::Startup => wording::startup(c, l),
        Role::Tail => wording::tail(c, l),
        Role::NoWork => match elsewhere(l) {
            Some(busy) => wording::no_work_elsewhere(c, busy),
            None => wording::no_work(c, idle_s / (l.capacity * l.wall_s).max(1e-9)),
        },
        Role::Oversubscribed(busy, runq) => wording::oversubscribed(c, l, *busy, *runq),
        Role::OtherLoad | Role::Stolen | Role::Observer => {
            let mostly = share.min(of_the_gap(scope.gap, l, idle_s)) >= LOADED;
            let source = noise_source(&d.role).unwrap_or(NoiseSource::OtherProcesses);
            wording::load(c, source, idle_s / (l.capacity * l.wall_s).max(1e-9), mostly)
        }
    }
}

/// Whether a lock's waiters take turns on it: a lock that serialises by design, waiters of which
/// one runs while the others wait, or a job whose threads run one at a time beside a runner.
fn takes_turns(role: &Role, one_at_a_time: bool) -> bool {
    let Role::Lock(known, around) = role else { return false };
    known.is_some_and(|k| k.lock)
        || around.as_ref().is_some_and(|a| match turns(a, one_at_a_time) {
            Turns::Among { serialised, .. } => serialised,
            Turns::OneAtATime(_) => true,
            Turns::Beside { .. } => false,
        })
}

/// How the waiters on an unnamed lock take it.
fn turns(a: &Around, one_at_a_time: bool) -> Turns<'_> {
    if a.members_running >= TURNS {
        Turns::Among {
            running: a.members_running,
            peak: a.members_peak,
            serialised: a.members_peak <= SERIALISED,
        }
    } else if let (true, Some(f)) =
        (one_at_a_time, a.feeder.as_ref().filter(|f| f.running >= FEEDS))
    {
        Turns::OneAtATime(f)
    } else {
        Turns::Beside { members: a.members_running, others: a.others_running }
    }
}

/// Whether the first three waits of an I/O draft all block in a write-like system call: output
/// blocked on its reader.
fn writes_block(d: &Draft, waits: &[Wait]) -> bool {
    first_writes(d, waits).all(|w| w)
}

/// Whether any of the first three waits of an I/O draft is a write-like system call.
fn writes(d: &Draft, waits: &[Wait]) -> bool {
    first_writes(d, waits).any(|w| w)
}

/// For each of the first three waits of an I/O draft, whether it is a write-like system call. An
/// anonymous object shown by where it is taken reads as that place.
fn first_writes<'a>(d: &'a Draft, waits: &'a [Wait]) -> impl Iterator<Item = bool> + 'a {
    d.items
        .iter()
        .filter_map(|i| match &i.cause {
            Cause::Wait { object, .. } => Some(object.as_str()),
            _ => None,
        })
        .take(3)
        .map(|o| match taken_at(o, waits) {
            Some(at) if anonymous(o) => is_output(at),
            _ => is_output(o),
        })
}

/// Whether fixing a draft's cause is a change to the program that the what-if can price: not the
/// machine's load, not more threads than CPUs.
fn buys(d: &Draft) -> bool {
    !matches!(d.kind, Kind::NoisyMeasurement | Kind::CpuOversubscription)
}

/// Whether a draft's waits buy their idle capacity spread over the CPUs rather than how much
/// sooner the waiting threads would end: waits for a feeder (a producer, the input), which a
/// faster feeder fixes, and the waits of threads done with their share in a tail (joins, a pool's
/// idle workers), which work spread evenly fixes — the waiting thread was never the last.
fn fed(d: &Draft) -> bool {
    matches!(d.role, Role::Starved(_) | Role::Waiting(..) | Role::Input | Role::Tail)
}

/// ` of 'bash', 'python3'`: the programs whose threads wait in a draft's waits (a launcher script
/// reading its helper's output is not the work), or nothing when the sampler kept no names.
fn waiting_programs(d: &Draft, scope: &Scope) -> String {
    let waits = d.items.iter().filter_map(|i| match &i.cause {
        Cause::Wait { object, .. } => scope.waits.iter().find(|w| &w.name == object),
        _ => None,
    });
    wording::programs(waits.flat_map(|w| w.thread_names.iter()))
}

fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn the_jvms_and_gos_lock_code_is_lock_code_and_their_other_code_is_not() {
        for name in [
            "ObjectMonitor::TrySpin",
            "ObjectSynchronizer::quick_enter",
            "__lll_lock_wait",
            "runtime.procyield.abi0",
            "sync.(*Mutex).lockSlow",
        ] {
            assert!(is_lock_code(name), "{name}");
        }
        for name in [
            "code in no file (JIT-compiled?)",
            "libjvm.so (no symbols)",
            "Monitor::wait",
            "runtime.mallocgc",
            "main.main.func1",
        ] {
            assert!(!is_lock_code(name), "{name}");
        }
    }

    #[test]
    fn a_tails_waits_buy_their_idle_capacity_as_a_feeders_do() {
        // A pool's worker done with its share waits on the queue while another does the last
        // item: spreading the work evenly fills that idle CPU, though the waiter was never last.
        let draft =
            |role| Draft { kind: Kind::LoadImbalance, key: Key::Imbalance, items: vec![], role };
        assert!(fed(&draft(Role::Tail)) && fed(&draft(Role::Input)));
        assert!(!fed(&draft(Role::Lock(None, None))) && !fed(&draft(Role::Sync(None))));
    }

    fn starved_scope<'a>(waits: &'a [Wait], shares: &'a Shares<'a>) -> Scope<'a> {
        Scope {
            at: At::Count(2.0, "threads"),
            at_count: Some(2.0),
            series: "",
            gap: 0.3,
            gated: true,
            baseline: Some(1.0),
            waits,
            oversubscribed: None,
            hot: &[],
            cpu_within_noise: None,
            cpu_ratio_lo: None,
            shares,
            strong_ratio: Some(2.0),
            one_at_a_time: false,
            measured: None,
            switches: None,
        }
    }

    fn waiting(steady: f64, tail: f64) -> Item {
        Item {
            cause: Cause::Wait { class: Class::WaitForWork, object: "heap+0x444".into() },
            core_s: steady + tail,
            by_phase: BTreeMap::from([(Phase::Steady, steady), (Phase::Tail, tail)]),
            shares: vec![0.7],
            threads: 1,
            per_run: vec![steady + tail],
            carried_s: 0.0,
            sooner: vec![None],
        }
    }

    fn ledger(cpu_s: f64, useful_s: f64) -> Ledger {
        Ledger { capacity: 2.0, wall_s: 1.0, cpu_s, useful_s, ..Default::default() }
    }

    fn item(cause: Cause, core_s: f64, share: f64) -> Item {
        let (per_run, carried_s, sooner) = (vec![core_s], 0.0, vec![None]);
        Item {
            cause,
            core_s,
            by_phase: BTreeMap::new(),
            shares: vec![share],
            threads: 1,
            per_run,
            carried_s,
            sooner,
        }
    }

    fn libgomp(share: f64) -> Vec<Hot> {
        vec![
            Hot { name: "omp!work".into(), samples: 90, share: 1.0 - share },
            Hot { name: "libgomp.so.1.0.0+0x1f7da".into(), samples: 10, share },
        ]
    }

    #[test]
    fn a_tail_beside_threads_slowed_by_contention_is_their_uneven_progress() {
        let shares = |_: Class, _: Option<&Pick>| Vec::new();
        let scope = starved_scope(&[], &shares);
        // False sharing: 2.5 times the baseline's CPU, and one thread done 31 ms before the other.
        let with_tail = |cpu_s: f64, tail_s: f64| {
            let l = Ledger {
                lost_s: 0.24,
                gap: 0.64,
                tail_s,
                wall_s: 0.19,
                items: vec![
                    item(Cause::ExtraUser, 0.24 - tail_s, 1.0 - tail_s / 0.24),
                    item(Cause::NoWork(Phase::Tail), tail_s, tail_s / 0.24),
                ],
                ..ledger(cpu_s, 0.136)
            };
            let mut out = Vec::new();
            findings(&scope, &l, &mut out);
            out
        };
        let kinds = |cpu_s: f64| with_tail(cpu_s, 0.031);
        let slowed = kinds(0.34);
        assert_eq!(
            slowed.iter().map(|f| f.kind).collect::<Vec<_>>(),
            [Kind::OnCpuInefficiency],
            "{slowed:?}"
        );
        assert!(slowed[0].evidence.iter().any(|e| e.contains("finished apart")), "{slowed:?}");
        // Threads that cost about what the baseline did: a tail is uneven work.
        let even = kinds(0.18);
        assert!(even.iter().any(|f| f.kind == Kind::LoadImbalance), "{even:?}");
        // A tail of 1% of the run is too small to report, and not said inside the extra CPU.
        let tiny = with_tail(0.34, 0.002);
        assert!(
            !tiny.iter().flat_map(|f| &f.evidence).any(|e| e.contains("finished apart")),
            "{tiny:?}"
        );
    }

    #[test]
    fn a_tail_that_one_run_of_three_had_is_said_not_raised() {
        let shares = |_: Class, _: Option<&Pick>| Vec::new();
        let scope = starved_scope(&[], &shares);
        let runs = |core: [f64; 3], share: [f64; 3], cause: Cause| Item {
            shares: share.to_vec(),
            per_run: core.to_vec(),
            sooner: vec![None; 3],
            ..item(cause, core.iter().sum::<f64>() / 3.0, 0.0)
        };
        let lock = Cause::Wait { class: Class::Lock, object: "m".into() };
        // Two threads on one lock: every run loses to its waits, and one of them, whose thread
        // the host held back, also idled a CPU for the last tenth of it.
        let ledger = |tail: [f64; 3]| Ledger {
            lost_s: 0.7,
            gap: 0.66,
            items: vec![
                runs(
                    [0.7 - tail[0], 0.7 - tail[1], 0.7 - tail[2]],
                    tail.map(|t| 1.0 - t / 0.7),
                    lock.clone(),
                ),
                runs(tail, tail.map(|t| t / 0.7), Cause::NoWork(Phase::Tail)),
            ],
            ..ledger(1.4, 0.7)
        };
        let severity = |tail: [f64; 3]| {
            let mut out = Vec::new();
            findings(&scope, &ledger(tail), &mut out);
            out.iter().find(|f| f.kind == Kind::LoadImbalance).map(|f| f.severity)
        };
        assert_eq!(severity([0.02, 0.35, 0.02]), Some(Severity::Info));
        assert_eq!(
            severity([0.12, 0.25, 0.10]),
            Some(Severity::Medium),
            "a tail in every run is raised"
        );
    }

    #[test]
    fn spinning_in_an_openmp_runtime_is_the_cost_of_what_the_threads_wait_for() {
        let shares = |_: Class, _: Option<&Pick>| Vec::new();
        // A static loop with uneven halves: the thread done first spins at the barrier, then sleeps.
        let hot = libgomp(0.07);
        let scope = Scope { hot: &hot, ..starved_scope(&[], &shares) };
        let tail = Ledger {
            lost_s: 0.3,
            gap: 0.33,
            items: vec![
                item(Cause::NoWork(Phase::Tail), 0.25, 0.83),
                item(Cause::ExtraUser, 0.05, 0.17),
            ],
            ..ledger(0.66, 0.61)
        };
        let mut out = Vec::new();
        findings(&scope, &tail, &mut out);
        assert_eq!(
            out.iter().map(|f| f.kind).collect::<Vec<_>>(),
            [Kind::LoadImbalance],
            "{out:?}"
        );
        assert!(
            out[0].evidence.iter().any(|e| e.contains("spin in the parallel runtime")),
            "{out:?}"
        );
        // A noisy VM: 0.25 s of extra CPU of which the runs are sure of 10% (0.07 s), the spin
        // holds 0.05 s of it, a fifth of the whole: still the tail's cost.
        let noisy = Ledger {
            lost_s: 0.5,
            gap: 0.5,
            items: vec![
                item(Cause::NoWork(Phase::Tail), 0.25, 0.5),
                item(Cause::ExtraUser, 0.25, 0.5),
            ],
            ..ledger(0.75, 0.5)
        };
        let mut out = Vec::new();
        findings(&scope, &noisy, &mut out);
        assert!(
            out.iter().any(|f| f.kind == Kind::OnCpuInefficiency),
            "judged against all of it: {out:?}"
        );
        let sure =
            Scope { cpu_ratio_lo: Some(1.1), ..Scope { hot: &hot, ..starved_scope(&[], &shares) } };
        let mut out = Vec::new();
        findings(&sure, &noisy, &mut out);
        assert_eq!(
            out.iter().map(|f| f.kind).collect::<Vec<_>>(),
            [Kind::LoadImbalance],
            "{out:?}"
        );
        // Spinning the whole time (OMP_WAIT_POLICY=active): no wait is seen, the runtime's code is hot.
        let hot = libgomp(0.3);
        let scope = Scope { hot: &hot, ..starved_scope(&[], &shares) };
        let spun = Ledger {
            lost_s: 0.3,
            gap: 0.33,
            items: vec![item(Cause::ExtraUser, 0.3, 1.0)],
            ..ledger(0.92, 0.62)
        };
        let mut out = Vec::new();
        findings(&scope, &spun, &mut out);
        assert_eq!(out.len(), 1, "{out:?}");
        assert!(
            out[0].summary.contains("spin in the parallel runtime")
                && out[0].advice.contains("OMP_WAIT_POLICY=passive"),
            "{out:?}"
        );
        // Extra CPU in the program's own code stays extra CPU.
        let hot = libgomp(0.01);
        let scope = Scope { hot: &hot, ..starved_scope(&[], &shares) };
        let mut out = Vec::new();
        findings(&scope, &spun, &mut out);
        assert!(out[0].advice.contains("false sharing"), "{out:?}");
    }

    #[test]
    fn a_thread_that_runs_the_waiters_code_at_their_pace_is_a_peer_not_a_feeder() {
        let f = |same_code, busy, waiters_busy| Feeder {
            name: "zstd".into(),
            running: 0.9,
            busy,
            same_code: Some(same_code),
            waiters_busy: Some(waiters_busy),
            waits_for_work: Some(0.05),
            ..Default::default()
        };
        // A compression worker beside the waiting one: the same chains of callers, a like share of time.
        assert!(peer(&f(0.8, 0.6, 0.5)));
        // A producer in an interpreter's loop like its consumers', busy all the time they wait.
        assert!(!peer(&f(0.8, 0.99, 0.3)));
        // A thread that runs other code.
        assert!(!peer(&f(0.05, 0.6, 0.5)));
        // One that waits for work itself.
        assert!(peer(&Feeder { waits_for_work: Some(0.3), ..f(0.0, 0.6, 0.5) }));
        // Waiters that did no work: no code or pace to tell a feeder by.
        assert!(idle_waiters(&Feeder { same_code: None, ..f(0.0, 0.99, 0.001) }));
        assert!(!idle_waiters(&f(0.05, 0.6, 0.2)));
    }

    #[test]
    fn threads_taking_turns_each_on_its_own_condition_variable_are_serialised_on_a_lock() {
        // An interpreter lock handed over through a condition variable per thread (Ruby's): while
        // one waits, the other runs nearly all the time, itself waiting for its turn half its
        // time; a timer thread polls beside them.
        let peer = Feeder {
            name: "rb.rb:2".into(),
            tid: Some(2),
            running: 0.96,
            busy: 0.5,
            waits_for_work: Some(0.48),
            ..Default::default()
        };
        let around = Around { others_running: 0.97, feeder: Some(peer), ..Default::default() };
        let waits = vec![Wait {
            class: Some(Class::WaitForWork),
            name: "heap+0x444".into(),
            around: Some(around),
            ..Default::default()
        }];
        let shares = |_: Class, _: Option<&Pick>| Vec::new();
        let l =
            Ledger { lost_s: 0.6, gap: 0.5, items: vec![waiting(0.55, 0.0)], ..ledger(1.0, 1.0) };
        let kinds = |one_at_a_time: bool| {
            let scope = Scope { one_at_a_time, ..starved_scope(&waits, &shares) };
            let mut out = Vec::new();
            findings(&scope, &l, &mut out);
            (out.iter().map(|f| f.kind).collect::<Vec<_>>(), out)
        };
        let (serialised, out) = kinds(true);
        assert_eq!(serialised, [Kind::LockContention], "{out:?}");
        assert!(out[0].evidence.iter().any(|e| e.contains("run one at a time")), "{out:?}");
        // Two of the job's threads on the CPUs at once: not turns on a lock.
        assert_eq!(kinds(false).0, [Kind::WaitForWork]);
    }

    /// The findings of one wait for work on `object`, entered at `site`, that took 55% of a
    /// count's capacity while `feeder` ran beside its waiters.
    fn one_wait((feeder, object, site): (Feeder, &str, &str), one_at_a_time: bool) -> Vec<Finding> {
        let around = Around { others_running: 1.0, feeder: Some(feeder), ..Default::default() };
        let waits = vec![Wait {
            class: Some(Class::WaitForWork),
            name: object.into(),
            around: Some(around),
            taken_at: Some(site.into()),
            ..Default::default()
        }];
        let shares = |_: Class, _: Option<&Pick>| Vec::new();
        let mut l =
            Ledger { lost_s: 0.6, gap: 0.5, items: vec![waiting(0.55, 0.0)], ..ledger(1.0, 1.0) };
        l.items[0].cause = Cause::Wait { class: Class::WaitForWork, object: object.into() };
        let scope = Scope { one_at_a_time, ..starved_scope(&waits, &shares) };
        let mut out = Vec::new();
        findings(&scope, &l, &mut out);
        out
    }

    #[test]
    fn a_runtime_that_keeps_the_lock_holder_on_one_thread_takes_uneven_turns_on_a_lock() {
        // Go goroutines under one sync.Mutex (GOMAXPROCS=2, as measured): the M that runs the
        // holder runs the work 80-94% of its time and rarely waits for work (17%); the other M,
        // its peer by code, parks in the scheduler meanwhile and runs less (44%).
        let m = |busy, same_code| Feeder {
            name: "golock".into(),
            tid: Some(9460),
            running: 0.99,
            busy,
            waits_for_work: Some(0.17),
            same_code: Some(same_code),
            waiters_busy: Some(0.44),
            ..Default::default()
        };
        let kinds = |busy: f64, same_code: f64, site: &str, one_at_a_time: bool| {
            let one = (m(busy, same_code), "golock!runtime.m0+0x148", site);
            one_wait(one, one_at_a_time).iter().map(|f| f.kind).collect::<Vec<_>>()
        };
        let (stopm, cond) =
            ("runtime.futex ← runtime.notesleep ← runtime.stopm", "pthread_cond_wait ← pop");
        assert_eq!(kinds(0.80, 0.92, cond, true), [Kind::LockContention]);
        // In another run that M was busy 94% of its time: the same turns.
        assert_eq!(kinds(0.94, 0.92, cond, true), [Kind::LockContention]);
        // Two threads on the CPUs at once: a busier thread running their loop feeds them.
        assert_eq!(kinds(0.94, 0.92, cond, false), [Kind::WaitForWork]);
        // A parked M that never ran the work shares no code with the runner, and is Go's idle
        // thread all the same: turns while the job runs one thread at a time.
        assert_eq!(kinds(1.0, 0.0, stopm, true), [Kind::LockContention]);
        assert_eq!(kinds(1.0, 0.0, cond, true), [Kind::WaitForWork], "a producer of other code");
        assert_eq!(kinds(1.0, 0.0, stopm, false), [Kind::WaitForWork]);
    }

    /// fd's pool threads parked on a futex in fd's heap while the `ls -l` it had started listed
    /// the matches, alone on a CPU: a thread of another process cannot wake them, so it is
    /// neither their feeder nor a lock's holder, though it ran all the time they waited.
    #[test]
    fn a_thread_that_cannot_wake_the_waiters_is_no_feeder_and_no_lock_holder() {
        let ls = |cannot_wake| Feeder {
            name: "ls".into(),
            tid: Some(28160),
            main: true,
            running: 0.97,
            busy: 0.9,
            cannot_wake,
            ..Default::default()
        };
        let summaries = |cannot_wake: bool, one_at_a_time: bool| {
            let one = (ls(cannot_wake), "heap+0x258a8", "syscall ← fd+0x1e742f ← fd+0x43a48");
            one_wait(one, one_at_a_time)
                .into_iter()
                .map(|f| (f.kind, f.summary))
                .collect::<Vec<_>>()
        };
        for one_at_a_time in [true, false] {
            let got = summaries(true, one_at_a_time);
            assert_eq!(got.len(), 1, "{got:?}");
            assert_eq!(got[0].0, Kind::WaitForWork, "{got:?}");
            assert!(
                got[0].1.contains("('ls' the most, 97% of the time) without feeding them"),
                "{got:?}"
            );
        }
        // The same thread in the waiters' own process feeds them.
        let got = summaries(false, false);
        assert!(got[0].1.contains("that feeds them"), "{got:?}");
    }

    #[test]
    fn one_wait_seen_under_another_address_and_feeder_tid_in_each_run_is_one_finding() {
        // Three runs of a starved queue: the condition variable sits on the main thread's stack,
        // which the kernel places anew each run, and the producer has a new thread id.
        let feeder = |tid| Feeder {
            name: "producer-0".into(),
            tid: Some(tid),
            running: 0.97,
            ..Default::default()
        };
        let site = "Condvar::wait ← consume ← worker".to_string();
        let waits: Vec<Wait> =
            [("stack top-0x2518", 7749, Some(site.clone())), ("stack top-0x16d8", 7760, None)]
                .into_iter()
                .map(|(name, tid, taken_at)| Wait {
                    class: Some(Class::WaitForWork),
                    name: name.into(),
                    around: Some(Around { feeder: Some(feeder(tid)), ..Default::default() }),
                    taken_at,
                    ..Default::default()
                })
                .collect();
        let shares = |_: Class, _: Option<&Pick>| Vec::new();
        let scope = starved_scope(&waits, &shares);
        let wait = |object: &str, run: usize| Item {
            cause: Cause::Wait { class: Class::WaitForWork, object: object.into() },
            core_s: 0.05,
            by_phase: BTreeMap::from([(Phase::Steady, 0.05)]),
            shares: (0..2).map(|k| if k == run { 0.7 } else { 0.0 }).collect(),
            threads: 2,
            per_run: (0..2).map(|k| if k == run { 0.05 } else { 0.0 }).collect(),
            carried_s: 0.0,
            sooner: vec![None; 2],
        };
        let l = Ledger {
            lost_s: 0.2,
            gap: 0.2,
            items: vec![wait("stack top-0x2518", 0), wait("stack top-0x16d8", 1)],
            ..ledger(0.9, 0.9)
        };
        let mut out = Vec::new();
        findings(&scope, &l, &mut out);
        let starved: Vec<&Finding> = out.iter().filter(|f| f.kind == Kind::WaitForWork).collect();
        assert_eq!(starved.len(), 1, "{out:?}");
        assert!(
            (starved[0].cost_pct.unwrap() - 70.0).abs() < 1.0
                && starved[0].severity == Severity::High,
            "{out:?}"
        );
    }

    #[test]
    fn a_wait_for_results_while_the_workers_wait_on_a_lock_is_the_locks() {
        // A Python pool: the caller waits for the futures while its workers wait for the GIL.
        let caller = |meanwhile: &[&str]| Wait {
            class: Some(Class::WaitForWork),
            name: "heap+0x84c00".into(),
            around: Some(Around {
                meanwhile: meanwhile.iter().map(|m| m.to_string()).collect(),
                ..Default::default()
            }),
            ..Default::default()
        };
        let l = Ledger {
            lost_s: 0.8,
            gap: 0.5,
            items: vec![
                item(
                    Cause::Wait {
                        class: Class::Lock,
                        object: "python3.11!_PyRuntime+0x1b0".into(),
                    },
                    0.55,
                    0.7,
                ),
                item(
                    Cause::Wait { class: Class::WaitForWork, object: "heap+0x84c00".into() },
                    0.2,
                    0.25,
                ),
            ],
            ..ledger(0.8, 0.8)
        };
        let shares = |_: Class, _: Option<&Pick>| Vec::new();
        let gil = [caller(&[
            "'python3' wait on python3.11!_PyRuntime+0x1b0 (45% of the time)",
            "'python3' wait on python3.11!_PyRuntime+0x1b4 (34% of the time)",
        ])];
        let mut out = Vec::new();
        findings(&starved_scope(&gil, &shares), &l, &mut out);
        assert_eq!(
            out.iter().map(|f| f.kind).collect::<Vec<_>>(),
            [Kind::LockContention],
            "{out:?}"
        );
        assert!(
            (out[0].cost_pct.unwrap() - 95.0).abs() < 1.0,
            "the caller's wait counts with the lock: {out:?}"
        );
        // The same caller while the workers wait for input: a wait of its own.
        let pipe = [caller(&["'python3' I/O on read fd 3 (pipe) (80% of the time)"])];
        let mut out = Vec::new();
        findings(&starved_scope(&pipe, &shares), &l, &mut out);
        assert!(out.iter().any(|f| f.kind == Kind::WaitForWork), "{out:?}");
        assert_eq!(meanwhile_entry("'a b' wait on x (y) (12% of the time)"), Some(("x (y)", 0.12)));
    }

    #[test]
    fn cpu_grown_with_the_count_hints_at_work_per_thread() {
        let shares = |_: Class, _: Option<&Pick>| Vec::new();
        let scope = starved_scope(&[], &shares);
        // Each thread does a fixed amount of work: 2 threads did twice the work.
        let hint = work_per_thread(&scope, &ledger(1.9, 0.95)).expect("a hint");
        assert!(hint.contains("--weak") && hint.contains("2.0×"), "{hint}");
        assert_eq!(work_per_thread(&scope, &ledger(1.2, 0.95)), None, "25% more CPU is extra CPU");
        assert_eq!(
            work_per_thread(&scope, &ledger(4.75, 0.95)),
            None,
            "5× the CPU is not the count's doing"
        );
        let in_kernel = Ledger {
            items: vec![item(Cause::ExtraKernel, 0.6, 0.7), item(Cause::ExtraUser, 0.35, 0.3)],
            ..ledger(1.9, 0.95)
        };
        assert_eq!(
            work_per_thread(&scope, &in_kernel),
            None,
            "CPU grown in the kernel is contention, not work"
        );
    }

    #[test]
    fn kernel_time_grown_with_handovers_says_so_and_advises_larger_batches() {
        // samtools sort -@2 on 2 CPUs (a trial): 0.067 s more kernel CPU per run for the same
        // work, with 4,000 voluntary switches a run against 20 at one thread (strace counted
        // 12,587 futex calls against 1).
        let shares = |_: Class, _: Option<&Pick>| Vec::new();
        let kernel = |switches: Switches| {
            let scope = Scope { switches: Some(switches), ..starved_scope(&[], &shares) };
            let l = Ledger {
                lost_s: 0.23,
                gap: 0.3,
                wall_s: 0.44,
                items: vec![item(Cause::ExtraKernel, 0.067, 0.3)],
                ..ledger(0.9, 0.83)
            };
            let mut out = Vec::new();
            findings(&scope, &l, &mut out);
            out.into_iter().find(|f| f.kind == Kind::KernelContention).expect("kernel-contention")
        };
        let f = kernel(Switches { top: 4000.0, base: 20.0 });
        assert!(f.summary.contains("block and wake one another 200× as often"), "{f:?}");
        assert!(
            f.evidence.iter().any(|e| e.starts_with("4000 voluntary context switches")),
            "{f:?}"
        );
        assert!(f.advice.contains("larger batches"), "{f:?}");
        // Switches that grew, but too few to be where the kernel time went: the system calls are
        // to be found.
        let f = kernel(Switches { top: 300.0, base: 20.0 });
        assert!(
            !f.summary.contains("wake one another") && f.advice.starts_with("find which"),
            "{f:?}"
        );
    }

    #[test]
    fn waiting_for_a_running_thread_is_starvation_in_the_run_and_imbalance_in_its_tail() {
        let feeder = Feeder {
            name: "omp".into(),
            tid: Some(7),
            running: 0.96,
            busy: 0.97,
            ..Default::default()
        };
        let around = Around { feeder: Some(feeder), finished: 0.9, ..Default::default() };
        let waits =
            [Wait { name: "heap+0x444".into(), around: Some(around), ..Default::default() }];
        let shares = |_: Class, _: Option<&Pick>| Vec::new();
        let scope = starved_scope(&waits, &shares);
        let kind = |item: &Item| role(item, &scope).map(|r| r.0);
        assert_eq!(
            kind(&waiting(0.09, 0.01)),
            Some(Kind::WaitForWork),
            "waits through the run: a feeder"
        );
        // An OpenMP static loop under load: the thread with the cheap half waits at the loop's end
        // while the other still runs; that thread is a peer, not a feeder.
        assert_eq!(kind(&waiting(0.005, 0.09)), Some(Kind::LoadImbalance));
    }

    #[test]
    fn a_what_if_measured_under_other_processes_load_says_so() {
        let run = |load: f64| {
            let lock = item(
                Cause::Wait { class: Class::Lock, object: "app!queue_lock+0x0".into() },
                0.5,
                0.6,
            );
            let other = item(Cause::OtherLoad, load, load / 0.8);
            let l = Ledger {
                lost_s: 0.8,
                gap: 0.4,
                walls: vec![(1.0, 2.0)],
                items: vec![lock, other],
                ..ledger(1.2, 1.2)
            };
            let shares = |_: Class, _: Option<&Pick>| Vec::new();
            let measured = Some(Measured { at: 2.0, speedup: 1.2, ci95: None });
            let scope = Scope { measured, ..starved_scope(&[], &shares) };
            let mut out = Vec::new();
            findings(&scope, &l, &mut out);
            let lock = out
                .into_iter()
                .find(|f| f.kind == Kind::LockContention)
                .expect("the lock's finding");
            assert!(lock.what_if.is_some(), "{lock:?}");
            lock.evidence
        };
        let loaded = run(0.3);
        assert!(
            loaded.iter().any(|e| e
                .starts_with("other processes (or the hypervisor) held 15% of the CPU capacity")),
            "{loaded:?}"
        );
        assert!(!run(0.1).iter().any(|e| e.contains("of the CPU capacity during these runs")));
    }
}
