//! Where the job's CPU capacity went, bin by bin (docs/findings.md, "the accounting"). Capacity is
//! the CPUs the job could use at once. In each bin, the capacity no thread of the job used is idle;
//! it is put down to the waits of the *work* threads that were not running (split among them in
//! proportion to their waiting time), to other processes holding the CPUs (work threads runnable
//! but not running), or to no work at all (fewer work threads existed or had work than capacity: a
//! serial phase, a tail, too few pieces). Waits while all capacity is busy cost nothing.
//! Helper threads (a coordinator joining, an interpreter's timer) are not work threads: the
//! capacity beside an idle helper is "no work".

use super::thread_time::{History, Label, Track};
use crate::results::Phase;
use std::collections::{HashMap, HashSet};

/// A thread is a work thread when its CPU time is at least this share of the mean of the busiest
/// threads (as many as the capacity).
const WORK_SHARE: f64 = 0.1;
/// …and at least this many seconds.
const WORK_MIN_S: f64 = 0.002;
/// A thread that worked at least this share of its own life is a work thread too, however short
/// that life: SQLite's sorter starts a helper per chunk (58 in a run of 1.1 s, each a few tens of
/// milliseconds at full speed), and each alone is far below the main thread's time.
const BUSY_LIFE: f64 = 0.5;
/// A bin counts as using the capacity fully when this share of it runs.
const FULL: f64 = 0.75;
/// Full bins in a row that begin (or end) the steady phase: one full bin amid a contended
/// start-up, two loaders handing a lock back and forth, is not yet the steady state.
const SUSTAINED: usize = 3;
/// A thread took part in the parallel work when it ran at least this share of the steady phase.
const TOOK_PART: f64 = 0.2;
/// A thread runs in a bin when it ran at least this share of it.
const RAN: f64 = 0.25;

/// What idle capacity is put down to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Cause {
    /// Work threads off-CPU in this wait (an index into the sampler's table of waits).
    Wait(u32),
    /// Work threads off-CPU in waits no sample caught.
    Unlabelled,
    /// Work threads runnable but not running while the capacity was idle: other processes had
    /// the CPUs.
    Runqueue,
    /// No work thread existed or had anything to do.
    NoWork,
}

impl Cause {
    fn of(label: Label) -> Cause {
        label.map_or(Cause::Unlabelled, Cause::Wait)
    }
}

/// The accounting of one run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Accounting {
    /// CPUs the job could use at once.
    pub capacity: f64,
    /// Whether the capacity came from the swept worker count (else from the work threads seen).
    pub from_axis: bool,
    /// Per track: whether it is a work thread.
    pub work: Vec<bool>,
    /// Seconds covered.
    pub span_s: f64,
    /// Core-seconds the job's threads ran.
    pub cpu_s: f64,
    /// Core-seconds run beyond the capacity (helpers beside a full set of workers, oversubscription).
    pub over_s: f64,
    /// Idle core-seconds by cause and phase.
    pub idle: HashMap<(Cause, Phase), f64>,
    /// Distinct work threads behind each cause.
    pub threads: HashMap<Cause, usize>,
    /// Seconds of the start-up phase.
    pub startup_s: f64,
    /// Seconds of the tail.
    pub tail_s: f64,
    /// Most work threads alive at once.
    pub peak_work_threads: usize,
    /// Threads wanting a CPU (running or runnable), 90th percentile over the bins.
    pub demand: f64,
    /// Of `idle`, the core-seconds carried forward to a wait: capacity idle because the threads
    /// still at work started late, held up by that wait (see [`carried`]).
    pub carried: HashMap<(Cause, Phase), f64>,
    /// Per wait, how much sooner the run's work threads would have ended without it: the latest
    /// end less the latest end with each thread's time in that wait taken out (its critical path).
    pub sooner: HashMap<u32, f64>,
    /// How much sooner without every wait that held a work thread up, all at once.
    pub sooner_all: f64,
}

#[cfg(test)]
impl Accounting {
    /// Idle core-seconds in all.
    pub fn idle_s(&self) -> f64 {
        self.idle.values().sum()
    }
}

/// The job ran less than this share of a CPU in a bin: it was quiet, not working serially.
const QUIET: f64 = 0.1;

/// What a wait is to the job, by label.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Use {
    /// A wait that is not work: for work, for a timer, for other threads to end.
    #[default]
    Idle,
    /// A wait that is part of the work (reading or writing its data, a kernel lock its own system
    /// calls contend on): it uses the capacity.
    Work,
    /// A thread with work that may not do it yet (a contended lock): it makes a work thread, and
    /// the capacity it leaves is lost to the lock.
    Blocked,
    /// A sleep on a timer (nanosleep): not work; but where no thread of the job runs and no work
    /// thread waits, the idle capacity is the sleep's (a polling loop), not a want of work.
    Timer,
}

/// Seconds a track worked or wanted to: on a CPU, or in a wait that is part of its work or keeps
/// it from its work (`uses[label]`). A thread of an I/O-bound job works while it waits for the
/// disk, and a thread starved by a lock throughout wants to; a timer or status thread sleeping
/// beside them does not.
fn worked_s(t: &Track, uses: &[Use]) -> f64 {
    t.on_s()
        + t.off
            .iter()
            .filter(|o| matches!(use_of(o.1, uses), Use::Work | Use::Blocked))
            .map(|o| o.2 as f64)
            .sum::<f64>()
}

fn use_of(label: Label, uses: &[Use]) -> Use {
    label.and_then(|l| uses.get(l as usize).copied()).unwrap_or_default()
}

fn is_busy(label: Label, uses: &[Use]) -> bool {
    use_of(label, uses) == Use::Work
}

/// Which threads do the work: those whose working time (on a CPU, or in waits that are work or
/// keep them from it: `uses` by label) is a meaningful share of the busiest threads' (as many as
/// the capacity, or the CPUs without one), or most of their own life ([`BUSY_LIFE`]).
pub fn work_threads(h: &History, capacity: Option<f64>, cpus: f64, uses: &[Use]) -> Vec<bool> {
    let cpu: Vec<f64> = h.tracks.iter().map(|t| worked_s(t, uses)).collect();
    let k = capacity.unwrap_or(cpus).ceil().max(1.0) as usize;
    let mut sorted = cpu.clone();
    sorted.sort_by(|a, b| b.total_cmp(a));
    let top = &sorted[..k.min(sorted.len())];
    let reference = if top.is_empty() { 0.0 } else { top.iter().sum::<f64>() / top.len() as f64 };
    let life = |t: &Track| t.on_s() + t.runq_s() + t.off_s();
    cpu.iter()
        .zip(&h.tracks)
        .map(|(&c, t)| c >= WORK_MIN_S && (c >= WORK_SHARE * reference || c >= BUSY_LIFE * life(t)))
        .collect()
}

/// A wait this long without running, by the only thread that waits on that object, is a
/// coordinator waiting for the others (as a share of the run).
const COORDINATION: f64 = 0.25;

/// The waits of coordinators: `(track, label)` where a work thread is the only one to wait on the
/// object and did so in one stretch of a quarter of the run or more without running, while
/// another work thread was alive through most of it — a main thread waiting for its workers
/// through a semaphore or a condition variable rather than pthread_join. The capacity beside such
/// a wait has no work. A thread that waits with no other alive (a lone thread sleeping) waits for
/// no one: its wait is what idles the capacity, and so does a lock's (`uses`): a thread that may
/// not take it has work.
fn coordination(h: &History, work: &[bool], span_s: f64, uses: &[Use]) -> HashSet<(usize, u32)> {
    let w = h.width();
    let mut out = HashSet::new();
    for (l, waiters) in h.waiters(|i, _| work[i]) {
        if use_of(Some(l), uses) == Use::Blocked {
            continue;
        }
        let total: f64 = waiters.iter().map(|x| x.waited).sum();
        let members: Vec<usize> =
            waiters.iter().filter(|x| x.waited >= 0.02 * total).map(|x| x.track).collect();
        let [i] = members[..] else { continue };
        let others_alive =
            |b: usize| (0..h.tracks.len()).any(|j| j != i && work[j] && h.alive_in(j, b) > 0.5 * w);
        // The longest stretch, in how many of its bins another work thread was alive, and the
        // bin after it.
        let (mut run, mut with_others, mut longest) = (0usize, 0usize, (0usize, 0usize, 0usize));
        for b in 0..h.tracks[i].on.len() {
            let idle = (h.tracks[i].on[b] as f64) < 0.1 * w;
            let waiting: f64 = h.off_in(i, b).filter(|o| o.0 == Some(l)).map(|o| o.1).sum();
            if idle && waiting >= 0.5 * w {
                run += 1;
                with_others += usize::from(others_alive(b));
            } else {
                (run, with_others) = (0, 0);
            }
            longest = longest.max((run, with_others, b + 1));
        }
        let (longest, with_others, after) = longest;
        // A thread that works as long again after its wait waited for its turn (a lock that the
        // other kept, taking it again as it let go), not for the others to finish.
        let worked_after: f64 = (after..h.tracks[i].on.len()).map(|b| h.tracks[i].on_in(b)).sum();
        if longest as f64 * w >= COORDINATION * span_s
            && 2 * with_others >= longest
            && worked_after < COORDINATION * span_s
        {
            out.insert((i, l));
        }
    }
    out
}

/// The first and last bins of the steady phase: the edges of the first and last stretches of
/// [`SUSTAINED`] full bins, or the first and last full bins when no stretch is that long.
fn steady_edges(full: &[bool]) -> (Option<usize>, Option<usize>) {
    let stretch =
        |at: usize| at + SUSTAINED <= full.len() && full[at..at + SUSTAINED].iter().all(|&f| f);
    let first = (0..full.len()).find(|&b| stretch(b)).or_else(|| full.iter().position(|&f| f));
    let last = (0..full.len())
        .rev()
        .find(|&b| stretch(b))
        .map(|b| b + SUSTAINED - 1)
        .or_else(|| full.iter().rposition(|&f| f));
    (first, last)
}

/// Accounts for a run of `span_s` seconds. `capacity` is `min(N, CPUs)` when the sweep counts
/// workers; without it the capacity is the most work threads alive at once, at most `cpus`.
/// `uses` says, by label, what each wait is to the job ([`Use`]): waits that are work (I/O) make
/// work threads, and a bin whose work threads run or wait in them uses the capacity fully (the
/// steady phase of a job that reads is not its start-up); a thread blocked on a lock throughout
/// is a work thread whose capacity the lock takes.
/// `joins` are the labels of joins: waiting for others to end holds no one up.
pub fn account(
    h: &History,
    span_s: f64,
    capacity: Option<f64>,
    cpus: f64,
    (uses, joins): (&[Use], &[u32]),
) -> Accounting {
    accounted(h, span_s, (capacity, cpus), (uses, joins), true)
}

/// [`account`] for a window cut out of a running job (`attach`): it has no start-up or tail of
/// its own, so every bin is steady.
pub fn account_window(
    h: &History,
    span_s: f64,
    capacity: Option<f64>,
    cpus: f64,
    (uses, joins): (&[Use], &[u32]),
) -> Accounting {
    accounted(h, span_s, (capacity, cpus), (uses, joins), false)
}

/// A work thread's life: the last bin it was at work in (running, runnable or in a wait that holds
/// it up) and the seconds each wait held it up.
struct Life {
    last: usize,
    delays: Vec<(u32, f64)>,
    /// Its waits for other threads to end, when it had any: its end follows theirs.
    joined: Option<Joined>,
}

/// A thread's waits for others to end: their seconds, and the seconds it went on after the last.
struct Joined {
    waited: f64,
    after: f64,
}

impl Life {
    /// When it would have ended with `shorter` seconds of its own waits taken out and the threads
    /// it joined ending at `others`: its work before the joins, shortened, or their end, whichever
    /// came later, then its work after them.
    fn end_without(&self, shorter: f64, others: Option<f64>, w: f64) -> f64 {
        let end = (self.last + 1) as f64 * w;
        match (&self.joined, others) {
            (Some(j), Some(o)) => (end - j.after - j.waited - shorter).max(o) + j.after,
            _ => end - shorter,
        }
    }
}

impl Life {
    fn delay(&self) -> f64 {
        self.delays.iter().map(|d| d.1).sum()
    }

    /// Whether bin `b` lies in the stretch at the end of its life that its waits pushed it into:
    /// without them it would have ended before.
    fn late_in(&self, b: usize, w: f64) -> bool {
        let d = self.delay();
        d > 0.0 && b <= self.last && (b as f64 + 0.5) * w >= (self.last + 1) as f64 * w - d
    }
}

/// Whether a wait holds a thread up: not a wait that is its work (`uses`), not a join, not a
/// coordinator's wait for the others.
fn holds_up(
    i: usize,
    label: Label,
    uses: &[Use],
    joins: &[u32],
    coordinating: &HashSet<(usize, u32)>,
) -> bool {
    label.is_some_and(|l| {
        !is_busy(label, uses) && !joins.contains(&l) && !coordinating.contains(&(i, l))
    })
}

/// The lives of the work threads (`None` for the others).
fn lives(
    h: &History,
    work: &[bool],
    (uses, joins): (&[Use], &[u32]),
    coordinating: &HashSet<(usize, u32)>,
) -> Vec<Option<Life>> {
    let w = h.width();
    (0..h.tracks.len())
        .map(|i| {
            if !work[i] {
                return None;
            }
            let t = &h.tracks[i];
            let at_work = |b: usize| {
                t.wanting_in(b)
                    + h.off_in(i, b)
                        .filter(|o| holds_up(i, o.0, uses, joins, coordinating))
                        .map(|o| o.1)
                        .sum::<f64>()
            };
            let last = (0..t.on.len()).rev().find(|&b| at_work(b) > 0.05 * w)?;
            let mut delays: Vec<(u32, f64)> = Vec::new();
            // A coordinator's wait for its workers is a join too: its end follows theirs.
            let is_join = |o: &&(u32, Label, f32)| {
                o.1.is_some_and(|l| joins.contains(&l) || coordinating.contains(&(i, l)))
            };
            let joined = t.off.iter().rfind(is_join).map(|o| Joined {
                waited: t.off.iter().filter(is_join).map(|o| o.2 as f64).sum(),
                // From where its last join ended (in its bin, if it waited from the bin's start).
                after: ((last + 1) as f64 * w - (o.0 as f64 * w + o.2 as f64)).max(0.0),
            });
            for &(_, label, s) in &t.off {
                if !holds_up(i, label, uses, joins, coordinating) {
                    continue;
                }
                let l = label.expect("held up by a labelled wait");
                match delays.iter_mut().find(|d| d.0 == l) {
                    Some(d) => d.1 += s as f64,
                    None => delays.push((l, s as f64)),
                }
            }
            Some(Life { last, delays, joined })
        })
        .collect()
}

/// Blame carried forward: the idle capacity of bin `b` that no wait took, when every work thread
/// still at work then is there only because its waits made it late (without them it would have
/// ended before `b`). A thread that waited for a lock to set up, started late and so finished
/// late leaves the others' CPUs idle in its tail: that tail is the lock's. Returns the waits
/// and their part of the idle capacity (in proportion to how long each held its thread up).
fn carried(lives: &[Option<Life>], at_work: &[usize], b: usize, w: f64) -> Vec<(u32, f64)> {
    let late: Vec<&Life> = at_work.iter().filter_map(|&i| lives[i].as_ref()).collect();
    if late.is_empty() || late.len() < at_work.len() || !late.iter().all(|l| l.late_in(b, w)) {
        return Vec::new();
    }
    let n = late.len() as f64;
    late.iter()
        .flat_map(|l| l.delays.iter().map(move |&(label, s)| (label, s / l.delay() / n)))
        .collect()
}

/// How much sooner the work threads would have ended without each wait: the latest end less the
/// latest end with each thread's time in that wait taken out. A wait off the critical path (its
/// thread ends early anyway) buys nothing.
fn sooner(lives: &[Option<Life>], w: f64) -> HashMap<u32, f64> {
    let labels: HashSet<u32> =
        lives.iter().flatten().flat_map(|life| life.delays.iter().map(|d| d.0)).collect();
    labels.into_iter().map(|l| (l, sooner_without(lives, w, |x| x == l))).collect()
}

/// How much sooner the work threads would have ended without the waits whose labels `gone`
/// picks, all at once: with two objects that threads wait on in turn, each alone buys less than
/// both together.
fn sooner_without(lives: &[Option<Life>], w: f64, gone: impl Fn(u32) -> bool) -> f64 {
    let all: Vec<&Life> = lives.iter().flatten().collect();
    let delay = |life: &Life| life.delays.iter().filter(|d| gone(d.0)).map(|d| d.1).sum::<f64>();
    let end = all.iter().map(|life| life.end_without(0.0, None, w)).fold(0.0, f64::max);
    // The threads that joined no one end by themselves; those that did follow them.
    let others = all
        .iter()
        .filter(|life| life.joined.is_none())
        .map(|life| life.end_without(delay(life), None, w))
        .reduce(f64::max);
    let without =
        all.iter().map(|life| life.end_without(delay(life), others, w)).fold(0.0, f64::max);
    (end - without).max(0.0)
}

fn accounted(
    h: &History,
    span_s: f64,
    (capacity, cpus): (Option<f64>, f64),
    (uses, joins): (&[Use], &[u32]),
    phased: bool,
) -> Accounting {
    let w = h.width();
    // The last bin recorded may lie at the very end of the span, with no width left.
    let bins = h.bins().min((span_s / w - 1e-9).ceil().max(0.0) as usize);
    let width = |b: usize| if b + 1 == bins { (span_s - b as f64 * w).clamp(0.0, w) } else { w };
    let work = work_threads(h, capacity, cpus, uses);
    let coordinating = coordination(h, &work, span_s, uses);
    let lives = lives(h, &work, (uses, joins), &coordinating);
    // Threads alive in a bin, weighed by the share of it they lived: a pool started anew for
    // each block (bzip3 -j 2) ends two threads and starts two in one bin, each alive for more
    // than half of it, and counting them whole read 3 or 4 alive at once.
    let peak_work_threads = (0..bins)
        .filter(|&b| width(b) > 0.0)
        .map(|b| {
            let alive: f64 =
                (0..h.tracks.len()).filter(|&i| work[i]).map(|i| h.alive_in(i, b)).sum();
            (alive / width(b)).round() as usize
        })
        .max()
        .unwrap_or(0);
    let (cap, from_axis) = match capacity {
        Some(c) => (c.min(cpus).max(1.0), true),
        None => ((peak_work_threads.max(1) as f64).min(cpus).max(1.0), false),
    };
    let running = |b: usize| h.tracks.iter().map(|t| t.on_in(b)).sum::<f64>();
    let working = |b: usize| {
        running(b)
            + (0..h.tracks.len())
                .filter(|&i| work[i])
                .map(|i| h.off_in(i, b).filter(|o| is_busy(o.0, uses)).map(|o| o.1).sum::<f64>())
                .sum::<f64>()
    };
    let full: Vec<bool> =
        (0..bins).map(|b| width(b) > 0.0 && working(b) >= FULL * cap * width(b)).collect();
    let (first, last) = steady_edges(&full);
    let last = last.filter(|&l| !still_starting(h, &work, l, bins, w));
    let phase = |b: usize| match (first, last) {
        (Some(f), _) if phased && b < f => Phase::Startup,
        (_, Some(l)) if phased && b > l => Phase::Tail,
        _ => Phase::Steady,
    };
    let stage = serial_stage(h, (0..bins).map(|b| (phase(b), width(b))).collect());
    let mut a =
        Accounting { capacity: cap, from_axis, span_s, peak_work_threads, ..Default::default() };
    let mut demand: Vec<f64> = (0..bins)
        .filter(|&b| width(b) > 0.0)
        .map(|b| {
            let want: f64 = h.tracks.iter().map(|t| t.wanting_in(b)).sum();
            want / width(b)
        })
        .collect();
    demand.sort_by(f64::total_cmp);
    a.demand = demand.get(demand.len() * 9 / 10).copied().unwrap_or(0.0);
    let mut who: HashMap<Cause, HashSet<usize>> = HashMap::new();
    for b in 0..bins {
        let wb = width(b);
        if wb <= 0.0 {
            continue;
        }
        let run = running(b);
        let ph = phase(b);
        match ph {
            Phase::Startup => a.startup_s += wb,
            Phase::Tail => a.tail_s += wb,
            Phase::Steady => {}
        }
        a.cpu_s += run;
        a.over_s += (run - cap * wb).max(0.0);
        let idle = (cap * wb - run).max(0.0);
        if idle <= 0.0 {
            continue;
        }
        let mut avail: Vec<(usize, Cause, f64)> = Vec::new();
        for i in (0..h.tracks.len()).filter(|&i| work[i]) {
            let rq = h.tracks[i].runq.get(b).copied().unwrap_or(0.0) as f64;
            if rq > 0.0 {
                avail.push((i, Cause::Runqueue, rq));
            }
            avail.extend(
                h.off_in(i, b)
                    .filter(|o| o.1 > 0.0 && !o.0.is_some_and(|l| coordinating.contains(&(i, l))))
                    .map(|(l, s)| (i, Cause::of(l), s)),
            );
        }
        let total: f64 = avail.iter().map(|x| x.2).sum();
        let taken = idle.min(total);
        for (i, cause, s) in avail {
            *a.idle.entry((cause, ph)).or_default() += s * taken / total;
            who.entry(cause).or_default().insert(i);
        }
        if idle > taken {
            let at_work: Vec<usize> = (0..h.tracks.len())
                .filter(|&i| {
                    lives[i].as_ref().is_some_and(|l| b <= l.last) && h.alive_in(i, b) > 0.05 * wb
                })
                .collect();
            let blame = if phased { carried(&lives, &at_work, b, w) } else { Vec::new() };
            let left = idle - taken;
            for &(l, f) in &blame {
                *a.idle.entry((Cause::Wait(l), ph)).or_default() += left * f;
                *a.carried.entry((Cause::Wait(l), ph)).or_default() += left * f;
            }
            // No thread of the job ran, and its other threads slept on timers: the capacity is
            // the sleeps' (POV-Ray's front end polls while its render threads wait for it).
            let sleeps: Vec<(usize, u32, f64)> = if blame.is_empty() && run < QUIET * wb {
                (0..h.tracks.len())
                    .filter(|&i| !work[i])
                    .flat_map(|i| h.off_in(i, b).map(move |(l, s)| (i, l, s)))
                    .filter_map(|(i, l, s)| {
                        l.filter(|&l| use_of(Some(l), uses) == Use::Timer).map(|l| (i, l, s))
                    })
                    .filter(|x| x.2 > 0.0)
                    .collect()
            } else {
                Vec::new()
            };
            let slept: f64 = sleeps.iter().map(|x| x.2).sum();
            for &(i, l, s) in &sleeps {
                *a.idle.entry((Cause::Wait(l), ph)).or_default() += left * s / slept;
                who.entry(Cause::Wait(l)).or_default().insert(i);
            }
            if blame.is_empty() && sleeps.is_empty() {
                // A thread working alone after the parallel work, having taken no part in it (a
                // serial step that follows, another program of a script), leaves no one behind:
                // the capacity beside it is serial work, not a tail of unevenly spread shares.
                let ph = if stage.get(b) == Some(&true) { Phase::Steady } else { ph };
                *a.idle.entry((Cause::NoWork, ph)).or_default() += left;
            }
        }
    }
    a.sooner = sooner(&lives, w);
    a.sooner_all = sooner_without(&lives, w, |_| true);
    a.threads = who.into_iter().map(|(c, s)| (c, s.len())).collect();
    a.work = work;
    a
}

/// Work threads born after the last full bin ran at least this share of what follows it.
const BORN_LATE: f64 = 0.1;

/// Whether work threads still start after the last full bin `last` and run there (together at
/// least [`BORN_LATE`] of what follows): the parallel work has not ended, and what follows is no
/// tail but the steady phase of a job that seldom fills its CPUs (sqlite's sorter threads,
/// spawned all through a CREATE INDEX whose main thread works throughout, had read as a tail of
/// 0.50 s in a 0.58 s run, "the others had finished").
fn still_starting(h: &History, work: &[bool], last: usize, bins: usize, w: f64) -> bool {
    let after = (last + 1..bins).count() as f64 * w;
    let late: f64 = (0..h.tracks.len())
        .filter(|&i| work[i] && (0..=last).all(|b| h.alive_in(i, b) == 0.0))
        .map(|i| (last + 1..bins).map(|b| h.tracks[i].on_in(b)).sum::<f64>())
        .sum();
    after > 0.0 && late >= BORN_LATE * after
}

/// Per bin: whether it is a tail bin in which no thread that took part in the steady phase ran
/// (a serial stage after the parallel work, or the moment between two programs of a script),
/// rather than the uneven end of the parallel work itself.
fn serial_stage(h: &History, bins: Vec<(Phase, f64)>) -> Vec<bool> {
    let steady: Vec<usize> = (0..bins.len()).filter(|&b| bins[b].0 == Phase::Steady).collect();
    let span: f64 = steady.iter().map(|&b| bins[b].1).sum();
    let took_part: Vec<&Track> = h
        .tracks
        .iter()
        .filter(|t| {
            span > 0.0 && steady.iter().map(|&b| t.on_in(b)).sum::<f64>() >= TOOK_PART * span
        })
        .collect();
    bins.iter()
        .enumerate()
        .map(|(b, &(ph, wb))| {
            ph == Phase::Tail && !took_part.iter().any(|t| t.on_in(b) >= RAN * wb)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sample::account::thread_time::from_rows as history;

    fn idle(a: &Accounting, c: Cause) -> f64 {
        a.idle.iter().filter(|((k, _), _)| *k == c).map(|(_, v)| v).sum()
    }

    #[test]
    fn one_full_bin_amid_a_contended_start_up_does_not_begin_the_steady_phase() {
        let f = |s: &str| s.chars().map(|c| c == '#').collect::<Vec<bool>>();
        assert_eq!(steady_edges(&f("..#..####..#.###.#.")), (Some(5), Some(15)));
        // No stretch that long (a short run): the first and last full bins.
        assert_eq!(steady_edges(&f("..#.##.")), (Some(2), Some(5)));
        assert_eq!(steady_edges(&f("....")), (None, None));
    }

    #[test]
    fn waits_cost_only_while_capacity_is_idle() {
        // Two workers keep both CPUs busy while a coordinator waits (label 7): nothing is lost.
        let h = history(&["rrrrrrrrrr", "rrrrrrrrrr", "7777777777"]);
        let a = account(&h, 0.1, Some(2.0), 2.0, (&[], &[]));
        assert_eq!(a.work, vec![true, true, false]);
        assert!(a.idle_s() < 1e-6, "{:?}", a.idle);
    }

    #[test]
    fn idle_capacity_goes_to_the_waits_of_work_threads_and_the_rest_to_no_work() {
        // Worker 0 runs; worker 1 waits on lock 1 half the time; capacity 3: one CPU has no thread.
        let h = history(&["rrrrrrrrrr", "r1r1r1r1r1"]);
        let a = account(&h, 0.1, Some(3.0), 4.0, (&[], &[]));
        assert!((idle(&a, Cause::Wait(1)) - 0.05).abs() < 1e-6, "{:?}", a.idle);
        assert!((idle(&a, Cause::NoWork) - 0.1).abs() < 1e-6, "{:?}", a.idle);
        assert_eq!(a.threads[&Cause::Wait(1)], 1);
    }

    #[test]
    fn a_thread_alone_after_the_parallel_work_it_took_no_part_in_is_a_serial_stage() {
        // Two workers share the work; after a moment with nothing running (one program of a
        // script ends, the next starts) a step runs alone, then a writer that ran a little beside
        // the workers finishes alone: serial work, no tail.
        let (worker, step, writer) =
            ("rrrrrrrrrr-------", "-----------rrrr--", "r--------------rr");
        let a =
            account(&history(&[worker, worker, step, writer]), 0.17, Some(2.0), 2.0, (&[], &[]));
        assert!((a.idle[&(Cause::NoWork, Phase::Steady)] - 0.08).abs() < 1e-6, "{:?}", a.idle);
        assert!(!a.idle.contains_key(&(Cause::NoWork, Phase::Tail)), "{:?}", a.idle);
        // The step started after the last full moment: there is no tail at all.
        assert_eq!(a.tail_s, 0.0, "{a:?}");
        // Without it, the writer alive beside the workers from the start is a serial stage in
        // the tail.
        let a = account(&history(&[worker, worker, writer]), 0.17, Some(2.0), 2.0, (&[], &[]));
        assert!((a.tail_s - 0.07).abs() < 1e-9, "{a:?}");
        assert!(!a.idle.contains_key(&(Cause::NoWork, Phase::Tail)), "{:?}", a.idle);
        // A worker left with a bigger share is the tail it was.
        let h = history(&["rrrrrrrrrrrrrr", "rrrrrrrrrr----"]);
        let a = account(&h, 0.14, Some(2.0), 2.0, (&[], &[]));
        assert!((a.idle[&(Cause::NoWork, Phase::Tail)] - 0.04).abs() < 1e-6, "{:?}", a.idle);
    }

    #[test]
    fn threads_still_starting_after_the_last_full_moment_leave_no_tail() {
        // The main thread works throughout; helpers run beside it, one at the start and two
        // later, each briefly: the job seldom fills its CPUs, and nothing was left unevenly.
        let h = history(&[
            "rrrrrrrrrrrrrrrrrrrr",
            "rrrr----------------",
            "-------rr-----------",
            "-------------rr-----",
        ]);
        let a = account(&h, 0.2, Some(2.0), 2.0, (&[], &[]));
        assert_eq!(a.tail_s, 0.0, "{a:?}");
        assert!(!a.idle.contains_key(&(Cause::NoWork, Phase::Tail)), "{:?}", a.idle);
        assert!((a.idle[&(Cause::NoWork, Phase::Steady)] - 0.12).abs() < 1e-6, "{:?}", a.idle);
        // The same helpers started before the last full moment: the end is the tail it was.
        let h = history(&["rrrrrrrrrrrrrrrrrrrr", "rrrr----------------", "--rrrrrr------------"]);
        let a = account(&h, 0.2, Some(2.0), 2.0, (&[], &[]));
        assert!(a.idle.contains_key(&(Cause::NoWork, Phase::Tail)), "{:?}", a.idle);
    }

    #[test]
    fn capacity_no_thread_used_while_a_front_end_slept_is_the_sleeps() {
        // Two render threads work in the middle; the front end (label 3, a timer) sleeps around
        // them. The 40 ms before and after, nothing of the job runs.
        let uses = [Use::Idle, Use::Idle, Use::Idle, Use::Timer];
        let h = history(&["----rrrrrr----", "----rrrrrr----", "33333333333333"]);
        let a = account(&h, 0.14, Some(2.0), 2.0, (&uses, &[]));
        assert_eq!(a.work, vec![true, true, false]);
        assert!((idle(&a, Cause::Wait(3)) - 0.16).abs() < 1e-6, "{:?}", a.idle);
        assert!(idle(&a, Cause::NoWork) < 1e-6, "{:?}", a.idle);
        // A thread that works alone beside the idle CPU is serial work, sleeping front end or not.
        let h = history(&["rrrrrrrrrrrrrr", "----rrrrrr----", "33333333333333"]);
        let a = account(&h, 0.14, Some(2.0), 2.0, (&uses, &[]));
        assert!(idle(&a, Cause::Wait(3)) < 1e-6 && idle(&a, Cause::NoWork) > 0.07, "{:?}", a.idle);
    }

    #[test]
    fn a_serial_start_and_a_tail_are_no_work_in_their_phases() {
        let h = history(&["rrrrrrrrrrrr", "---rrrrr----"]);
        let a = account(&h, 0.12, None, 2.0, (&[], &[]));
        assert_eq!(a.capacity, 2.0);
        assert!((a.startup_s - 0.03).abs() < 1e-9 && (a.tail_s - 0.04).abs() < 1e-9);
        assert!((a.idle[&(Cause::NoWork, Phase::Startup)] - 0.03).abs() < 1e-6);
        assert!((a.idle[&(Cause::NoWork, Phase::Tail)] - 0.04).abs() < 1e-6);
        let a = account(&history(&["rrrrrrrr", "rrrrrr--"]), 0.08, None, 2.0, (&[], &[]));
        assert!((a.tail_s - 0.02).abs() < 1e-9, "the last bin has a width: {}", a.tail_s);
    }

    #[test]
    fn a_thread_waiting_alone_for_most_of_the_run_is_a_coordinator_and_its_waits_cost_nothing() {
        // Thread 1 starts the work, then waits on its own semaphore (7) until the end.
        let h = history(&["rrrrrrrrrr", "rr77777777"]);
        let a = account(&h, 0.1, Some(2.0), 2.0, (&[], &[]));
        assert_eq!(idle(&a, Cause::Wait(7)), 0.0, "{:?}", a.idle);
        assert!((idle(&a, Cause::NoWork) - 0.08).abs() < 1e-6, "{:?}", a.idle);
        // One that works as long again after its wait waited for its turn: Python processes on
        // one multiprocessing.Lock, the first taking it again as it lets go until its share is
        // done, then exiting.
        let h = history(&["rrrrrrrrrr----------", "7777777777rrrrrrrrrr"]);
        let a = account(&h, 0.2, Some(2.0), 2.0, (&[], &[]));
        // Its wait idled a CPU, and so did the half it did alone after it (carried to the lock).
        assert!((idle(&a, Cause::Wait(7)) - 0.2).abs() < 1e-6, "{:?}", a.idle);
        assert!(idle(&a, Cause::NoWork) < 1e-6, "{:?}", a.idle);
        // Two threads waiting on one object are contention, however long.
        let h = history(&["rrrrrrrrrrrr", "rr7777777777", "rrrr77777777"]);
        let a = account(&h, 0.12, Some(3.0), 4.0, (&[], &[]));
        assert!(idle(&a, Cause::Wait(7)) > 0.1, "{:?}", a.idle);
        // A lone thread that works, then sleeps (7) to the end, waits for no one: the sleep idles
        // the capacity.
        let h = history(&["rr77777777"]);
        let a = account(&h, 0.1, Some(1.0), 2.0, (&[], &[]));
        assert!((idle(&a, Cause::Wait(7)) - 0.08).abs() < 1e-6, "{:?}", a.idle);
    }

    #[test]
    fn the_tail_of_a_thread_that_waited_to_set_up_is_the_wait_s_and_a_static_split_s_is_no_work() {
        // Thread 1 waits 20 ms for lock 1 while thread 0 sets up, starts late and runs alone at
        // the end for as long as it waited: the tail is carried forward to the lock.
        let h = history(&["rrrrrrrr--", "11rrrrrrrr"]);
        let a = account(&h, 0.1, Some(2.0), 2.0, (&[], &[]));
        assert!((idle(&a, Cause::Wait(1)) - 0.04).abs() < 1e-6, "{:?}", a.idle);
        assert!((a.carried.values().sum::<f64>() - 0.02).abs() < 1e-6, "{:?}", a.carried);
        assert!(idle(&a, Cause::NoWork) < 1e-6, "{:?}", a.idle);
        assert!((a.sooner[&1] - 0.02).abs() < 1e-6, "{:?}", a.sooner);
        // A bigger share with no wait: the tail has no work.
        let h = history(&["rrrrrrrrrr", "r1rr------"]);
        let a = account(&h, 0.1, Some(2.0), 2.0, (&[], &[]));
        assert!(
            (idle(&a, Cause::NoWork) - 0.06).abs() < 1e-6 && a.carried.is_empty(),
            "{:?}",
            a.idle
        );
        assert_eq!(a.sooner[&1], 0.0, "a wait off the critical path buys nothing");
    }

    #[test]
    fn a_joiner_ends_when_the_threads_it_joined_do_plus_its_own_work_after() {
        // Two workers take turns on lock 1 (label 2 is the main thread's join): without the lock
        // both end at 60 ms, and the main thread, which ran 10 ms after its join, at 70 ms.
        let h = history(&["r2222222222r", "rr11rr11rr--", "11rr11rr11rr"]);
        let a = account(&h, 0.12, Some(2.0), 2.0, (&[], &[2]));
        assert!((a.sooner[&1] - 0.05).abs() < 1e-6, "{:?}", a.sooner);
        // A main thread that goes on working after the join for 60 ms keeps those 60 ms.
        let h = history(&["r22222rrrrrr", "rr11rr------", "11rr11------"]);
        let a = account(&h, 0.12, Some(2.0), 2.0, (&[], &[2]));
        assert!((a.sooner[&1] - 0.02).abs() < 1e-6, "{:?}", a.sooner);
    }

    #[test]
    fn waits_on_two_objects_in_turn_buy_together_what_neither_buys_alone() {
        // Each thread waits on an object of its own half the time (a mutex, and the condition
        // variable a lock is built on): without one, the other thread still ends as late.
        let h = history(&["r1r1r1r1", "2r2r2r2r"]);
        let a = account(&h, 0.08, Some(2.0), 2.0, (&[], &[]));
        assert_eq!((a.sooner[&1], a.sooner[&2]), (0.0, 0.0), "{:?}", a.sooner);
        assert!((a.sooner_all - 0.04).abs() < 1e-6, "{}", a.sooner_all);
    }

    #[test]
    fn runnable_work_threads_beside_idle_capacity_mean_other_processes_had_the_cpus() {
        let h = history(&["rqrqrqrqrq"]);
        let a = account(&h, 0.1, Some(1.0), 2.0, (&[], &[]));
        assert!((idle(&a, Cause::Runqueue) - 0.05).abs() < 1e-6);
    }

    #[test]
    fn threads_reading_their_data_work_and_a_status_thread_sleeping_beside_them_does_not() {
        // Two readers run a little and wait for the disk (label 1, work); a status thread runs a
        // little and sleeps (label 2). The readers keep the capacity in use from the first bin.
        let busy = [Use::Idle, Use::Work, Use::Idle];
        let h = history(&["r1111r1111r1111r1111", "1r1111r1111r1111r111", "r2222222222222222222"]);
        let a = account(&h, 0.2, Some(2.0), 2.0, (&busy, &[]));
        assert_eq!(a.work, vec![true, true, false]);
        assert_eq!(a.startup_s, 0.0, "reading is the work, not a start-up");
        assert!(idle(&a, Cause::Wait(2)) == 0.0 && idle(&a, Cause::Wait(1)) > 0.3, "{:?}", a.idle);
        // Without the disk counted as work, all three threads look alike.
        assert_eq!(account(&h, 0.2, Some(2.0), 2.0, (&[], &[])).work, vec![true, true, true]);
    }

    #[test]
    fn a_thread_starved_by_a_lock_throughout_is_a_work_thread_and_the_lock_takes_its_cpu() {
        // One locker holds the lock (label 1) for the whole window; the other never gets it.
        let h = history(&["rrrrrrrrrr", "1111111111"]);
        let uses = [Use::Idle, Use::Blocked];
        let a = account_window(&h, 0.1, None, 2.0, (&uses, &[]));
        assert_eq!(a.work, vec![true, true]);
        assert_eq!(a.capacity, 2.0);
        assert!((idle(&a, Cause::Wait(1)) - 0.1).abs() < 1e-6, "{:?}", a.idle);
        // Read as a wait that is not work, the starved thread is no worker and nothing is lost.
        assert_eq!(account_window(&h, 0.1, None, 2.0, (&[], &[])).work, vec![true, false]);
    }
}
