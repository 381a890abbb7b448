//! The words of the causes' findings: one function per role of a cause (a lock, a feeder, the
//! tail…), fed the typed figures that causes.rs measured and judged, and the lines every cause
//! shares (where it is judged, the ledger, what a cause left idle). Nothing here decides what a
//! finding is; everything a finding says of a cause is written here.

use super::evidence::Switches;
use super::known::Known;
use super::ledger::Ledger;
use super::{Kind, NoiseSource};
use crate::analysis::count_label;
use crate::fmt::{count, count_tenths, pct, secs};
use crate::results::{Feeder, OPENMP_RUNTIMES, PointResult};

/// Where a ledger is judged, as its findings name it.
#[derive(Clone, Copy)]
pub enum At<'a> {
    /// A single point: named nowhere.
    Run,
    /// A window of a running job (`attach`): named nowhere, and no run to count per.
    Window,
    /// A count of the counted parameter (its name second): `at 2 threads`.
    Count(f64, &'a str),
    /// A value of a parameter that counts no workers (its name second): `at bs=4`.
    Value(f64, &'a str),
    /// A point of a sweep over values that are not counts: `at mode=fast`.
    Point(&'a PointResult),
}

impl At<'_> {
    /// `at 2 threads`, or nothing for a single point.
    pub fn words(&self) -> String {
        match self {
            At::Run | At::Window => String::new(),
            At::Count(n, name) => format!("at {}", count_label(*n, name)),
            At::Value(n, name) => format!("at {name}={}", count(*n)),
            At::Point(p) => format!("at {}", p.label()),
        }
    }

    /// The counted parameter, which names the baseline and the counts of a series.
    fn param(&self) -> &str {
        match self {
            At::Count(_, name) | At::Value(_, name) => name,
            At::Run | At::Window | At::Point(_) => "",
        }
    }

    /// ` per run`, or nothing for a window, which is one stretch of a job.
    fn per_run(&self) -> &'static str {
        if matches!(self, At::Window) { "" } else { " per run" }
    }
}

/// ` [size=big]` for a series' label, or nothing.
pub fn series(label: &str) -> String {
    if label.is_empty() { String::new() } else { format!(" [{label}]") }
}

/// The part of the run where a cause's capacity idled, when it is one.
#[derive(Clone, Copy)]
pub enum Span {
    /// The start-up phase, of this many seconds.
    Startup(f64),
    /// The tail of the run, of this many seconds.
    Tail(f64),
}

/// What a cause left idle, as its evidence says it.
pub struct Idle {
    /// Core-seconds per run.
    pub core_s: f64,
    /// The most work threads waiting at once (0: not known).
    pub threads: usize,
    /// The part of the run it idled, when it is one.
    pub span: Option<Span>,
    /// Seconds of it in the tail that threads these waits made late left behind.
    pub carried_s: f64,
}

/// What every cause's words draw on: where it is judged, against what, the objects its threads
/// waited on (as [`object`] names them) and what it left idle.
pub struct Context<'a> {
    /// Where it is judged.
    pub at: At<'a>,
    /// The baseline's count, named by `at`'s parameter, when there is one.
    pub baseline: Option<f64>,
    /// The first three objects waited on.
    pub objects: Vec<String>,
    /// What it left idle.
    pub idle: Idle,
}

impl Context<'_> {
    /// `at 2 threads, `, or nothing for a single point.
    fn at_(&self) -> String {
        let at = self.at.words();
        if at.is_empty() { at } else { format!("{at}, ") }
    }

    /// `1 thread`, or `the baseline`.
    fn baseline(&self) -> String {
        self.baseline.map_or_else(|| "the baseline".into(), |b| count_label(b, self.at.param()))
    }

    /// ` in the tail of the run (the last 0.36 s)`, or nothing.
    fn span(&self) -> String {
        match self.idle.span {
            Some(Span::Startup(s)) => format!(" in the start-up phase (the first {})", secs(s)),
            Some(Span::Tail(s)) => format!(" in the tail of the run (the last {})", secs(s)),
            None => String::new(),
        }
    }

    /// `0.412 core-seconds per run idle while 2 work threads waited in the tail of the run (…)`.
    fn idle_line(&self) -> String {
        self.idle_line_of("work thread")
    }

    /// [`Context::idle_line`] with the waiting threads called `noun` (a sleeping front end is no
    /// work thread).
    fn idle_line_of(&self, noun: &str) -> String {
        let i = &self.idle;
        let carried = if i.carried_s >= 0.001 {
            format!(
                ", {:.3} of them in the tail left behind by threads these waits made late (they started late and finished late)",
                i.carried_s
            )
        } else {
            String::new()
        };
        let who = match i.threads {
            0 => "threads".to_string(),
            1 => format!("1 {noun}"),
            n => format!("{n} {noun}s"),
        };
        format!(
            "{:.3} core-seconds{} idle while {who} waited{}{carried}",
            i.core_s,
            self.at.per_run(),
            self.span()
        )
    }

    /// The objects, joined by `sep`.
    fn list(&self, sep: &str) -> String {
        self.objects.join(sep)
    }

    /// `1 thread: 0%, 2 threads: 33%`: a share of thread time (percent) by count, when a series
    /// has several points.
    fn shares(&self, by_count: &[(f64, f64)]) -> Option<String> {
        // Every count at 0% beside a cause that explains a share of the loss reads as a
        // contradiction: the waits it was read from are too small to be listed per count.
        if by_count.iter().all(|(_, p)| *p < 0.5) {
            return None;
        }
        let parts: Vec<String> = by_count
            .iter()
            .map(|(n, p)| format!("{}: {p:.0}%", count_label(*n, self.at.param())))
            .collect();
        (parts.len() > 1).then(|| parts.join(", "))
    }

    /// `the same work took 0.681 s of CPU at 2 threads against 0.137 s at the baseline`.
    fn cpu_line(&self, l: &Ledger) -> String {
        let at = self.at.words();
        let at = if at.is_empty() { String::new() } else { format!(" {at}") };
        format!(
            "the same work took {:.3} s of CPU{at} against {:.3} s at the baseline",
            l.cpu_s, l.useful_s
        )
    }

    /// Extra CPU (`extra` seconds) that a wait on a lock or a queue cost beside it.
    pub fn extra_cpu_line(&self, extra: f64) -> String {
        format!(
            "the same work also took {extra:.3} s more CPU than at {} (futex calls, spinning, the shared cache line), counted in this cause",
            self.baseline()
        )
    }

    /// Extra CPU (`extra` seconds) spent spinning in a parallel runtime (`spin` of the CPU
    /// samples, in `names`) before threads sleep.
    pub fn runtime_spin_line(&self, extra: f64, spin: f64, names: &[String]) -> String {
        format!(
            "they spin in the parallel runtime before they sleep: the same work took {extra:.3} s more CPU than at {}, {} of the CPU samples in {}, counted in this cause",
            self.baseline(),
            pct(spin),
            names.join(", ")
        )
    }
}

/// A finding's words: its verdict, the figures behind it, what to try.
pub struct Words {
    /// The verdict, not yet capitalised.
    pub summary: String,
    /// The figures behind it.
    pub evidence: Vec<String>,
    /// What to try.
    pub advice: String,
}

/// `pthread_mutex_lock ← update_histogram ← worker (heap+0x2a0)` for an anonymous object taken
/// at a known place, `sym!lock, taken at …` for a named one, else its name.
pub fn object(name: &str, taken_at: Option<&str>, anonymous: bool) -> String {
    match taken_at {
        Some(at) if anonymous => format!("{at} ({name})"),
        Some(at) => format!("{name}, taken at {at}"),
        None => name.to_string(),
    }
}

/// `'zstd' (tid 4242)`, or `'x264' (tid 4242, the main thread)`: threads of one program often
/// share a name, and the tid changes from run to run.
fn who(f: &Feeder) -> String {
    let main = if f.main { ", the main thread" } else { "" };
    match f.tid {
        Some(tid) => format!("'{}' (tid {tid}{main})", f.name),
        None if f.main => format!("'{}' (the main thread)", f.name),
        None => format!("'{}'", f.name),
    }
}

/// ` of 'bash', 'python3'`: the first three programs whose threads wait, or nothing.
pub fn programs<'a>(names: impl Iterator<Item = &'a String>) -> String {
    let mut names: Vec<String> = names.map(|n| format!("'{n}'")).collect();
    names.sort();
    names.dedup();
    names.truncate(3);
    if names.is_empty() { String::new() } else { format!(" of {}", names.join(", ")) }
}

/// `the CPU time grew 2.0× for a count 2× the baseline's: …`.
pub fn work_per_thread(grew: f64, ratio: f64) -> String {
    format!(
        "the CPU time grew {grew:.1}× for a count {ratio:.0}× the baseline's: if each thread or process does a fixed amount of work, the work grows with the count (declare it with --weak) and this is not extra CPU"
    )
}

/// The caveat under a what-if measured while the machine's other load held `share` of the
/// capacity.
pub fn loaded_what_if(share: f64) -> String {
    format!(
        "other processes (or the hypervisor) held {} of the CPU capacity during these runs: they share the idle time with this cause, so what fixing it buys can be far off; sweep again on a quiet machine before betting on it",
        pct(share)
    )
}

/// Why a cause whose fix would buy `gain` (in speed-up) is said, not raised: within the
/// what-if's own `error` (a share).
pub fn buys_too_little(gain: f64, error: f64) -> String {
    format!(
        "what fixing it would buy (+{gain:.2}×) is within the what-if's own error ({}): said, not raised",
        pct(error)
    )
}

/// Advice for extra CPU that may be work growing with the count.
pub fn or_weak(advice: &str) -> String {
    format!(
        "if each thread or process does a fixed amount of work, sweep again with --weak; otherwise {advice}"
    )
}

/// `at 2 threads: 0.61 of 2.000 core-seconds per run lost (31% of the capacity of 2 CPUs) — lock
/// 55%, …, unexplained 25%`: `causes` the first causes' kinds and shares, `smaller` the share of
/// those too small to be reported. Two causes of one kind are told apart by what each is, where
/// it says (`noisy-measurement (other processes) 54%, noisy-measurement (watching) 17%`), else by
/// their order (`lock-contention (1st) 83%, lock-contention (2nd) 13%`).
pub fn ledger_line(
    at: At,
    series_label: &str,
    l: &Ledger,
    causes: &[(Kind, Option<&str>, f64)],
    smaller: Option<f64>,
) -> String {
    let mut parts: Vec<String> = causes
        .iter()
        .enumerate()
        .map(|(i, (k, what, s))| {
            let before = causes[..i].iter().filter(|(o, _, _)| o == k).count();
            match (causes.iter().filter(|(o, _, _)| o == k).count(), what) {
                (1, _) => format!("{} {}", k.name(), pct(*s)),
                (_, Some(w)) => format!("{} ({w}) {}", k.name(), pct(*s)),
                _ => format!("{} ({}) {}", k.name(), crate::fmt::ordinal(before + 1), pct(*s)),
            }
        })
        .collect();
    parts.extend(smaller.map(|s| format!("smaller causes {}", pct(s))));
    let (words, per) = (at.words(), at.per_run());
    let whole = if matches!(at, At::Window) { "the window" } else { "the run" };
    format!(
        "{}{}: {:.2} of {:.3} core-seconds{per} lost ({} of the capacity of {} CPU{}) — {}, unexplained {}",
        if words.is_empty() { whole.to_string() } else { words },
        series(series_label),
        l.lost_s.max(0.0),
        l.capacity * l.wall_s,
        pct(l.gap),
        count_tenths(l.capacity),
        if l.capacity == 1.0 { "" } else { "s" },
        parts.join(", "),
        pct(l.unexplained)
    )
}

/// How the waiters on an unnamed lock take it, as its finding says.
pub enum Turns<'a> {
    /// Others that wait on it run while one waits: `running` of them on average, `peak` at once
    /// at most; `serialised` when that is taking turns.
    Among {
        /// Waiters running while one waits, on average.
        running: f64,
        /// Waiters running at once (90th percentile over time).
        peak: f64,
        /// Whether they take turns.
        serialised: bool,
    },
    /// Another thread of the job, itself waiting for its turn, runs while one waits, and the job's
    /// threads run one at a time.
    OneAtATime(&'a Feeder),
    /// Threads that also wait on it (`members`) and other threads (`others`) run meanwhile.
    Beside {
        /// Waiters on it running, on average.
        members: f64,
        /// Other threads running, on average.
        others: f64,
    },
}

impl Turns<'_> {
    fn line(&self) -> String {
        match self {
            Turns::Among { running, peak, serialised } => format!(
                "while one waits, {}, and at most {peak:.1} of its waiters run at once (90th percentile over time): {}",
                if *running <= 1.0 {
                    format!("another thread that waits on it runs {} of the time", pct(*running))
                } else {
                    format!("{running:.1} other threads that wait on it run on average")
                },
                if *serialised {
                    "they take turns (serialised)"
                } else {
                    "more than one runs at times (contended, not serialised)"
                }
            ),
            Turns::OneAtATime(f) => {
                // What makes it one of them: its own waits for a turn, else the waiters' code.
                let peer = match (f.waits_for_work.filter(|&w| w >= 0.05), f.same_code) {
                    (Some(w), _) => format!(", itself waiting for its turn {} of its time", pct(w)),
                    (None, Some(c)) if c >= 0.5 => {
                        format!(", running the waiters' code ({} of its samples)", pct(c))
                    }
                    _ => String::new(),
                };
                format!(
                    "while one waits, another thread of the job runs {} of the time ('{}'{peer}), and the job's threads run one at a time: they take turns",
                    pct(f.running),
                    f.name,
                )
            }
            Turns::Beside { members, others } => format!(
                "while they wait, {members:.2} threads that also wait on it and {others:.2} other threads run on average"
            ),
        }
    }
}

/// A lock: `known` when it is a well-known one; `turns` how its waiters take it; `shares` its
/// waits' share of thread time by count; `serialised` whether the waiters take turns; `dearer`
/// whether handing it over cost more CPU than the idle time it left.
pub fn lock(
    c: &Context,
    known: Option<Known>,
    turns: Option<Turns>,
    shares: &[(f64, f64)],
    serialised: bool,
    dearer: bool,
) -> Words {
    let mut evidence = vec![c.idle_line()];
    evidence.extend(turns.map(|t| t.line()));
    evidence.extend(c.shares(shares).map(|s| format!("waits on it, share of thread time: {s}")));
    let first = c.objects.first().map_or("", String::as_str);
    let interpreter = known.is_none().then(|| super::known::interpreter(first)).flatten();
    let what = match (known, interpreter) {
        (Some(k), _) => format!("{} ({first})", k.what),
        (None, Some(i)) => format!("{} ({first})", i.what),
        (None, None) => first.to_string(),
    };
    let (at_, phase) = (c.at_(), c.span());
    // A wait in pthread_cond_wait is for a signal, not for a holder to let go: x264's frame
    // threads waiting on a frame dependency read "a lock held by other threads".
    let condition = known.is_none()
        && interpreter.is_none()
        && (first.starts_with("pthread_cond_wait") || first.starts_with("pthread_cond_timedwait"));
    // Waiters of which several run at once contend for the lock rather than take turns: the
    // summary says what the turn-taking line below it says.
    let how = if serialised { "are serialised on" } else { "contend for" };
    let summary = if dearer {
        format!(
            "{at_}threads {how} one lock, and handing it over costs more CPU than the idle time it leaves{phase}: {what}"
        )
    } else if serialised {
        format!("{at_}threads are serialised on one lock while CPUs are idle{phase}: {what}")
    } else if condition {
        format!(
            "{at_}threads wait on a condition variable that other threads signal while CPUs are idle{phase}: {what}"
        )
    } else {
        format!(
            "{at_}threads wait on a lock held by other threads while CPUs are idle{phase}: {what}"
        )
    };
    let advice = match (known, interpreter) {
        (Some(k), _) => k.advice,
        (None, Some(i)) => i.advice,
        // x264's frame threads wait for rows of the frame before theirs: no critical section.
        (None, None) if condition => {
            "see what the threads that signal it do meanwhile: signal as soon as the part a waiter needs is ready (finer-grained dependencies), or give each thread more work that does not depend on the others"
        }
        (None, None) => {
            "shorten or split the critical section, keep per-thread state and merge it at the end, or use a lock-free structure"
        }
    };
    Words { summary, evidence, advice: advice.into() }
}

/// Workers starved by feeder `f`; `shares` the waits for work's share of thread time by count.
pub fn starved(c: &Context, f: &Feeder, shares: &[(f64, f64)]) -> Words {
    let mut evidence = vec![
        c.idle_line(),
        format!(
            "thread {} ran {} of the time they waited, and is on a CPU {} of its own time{}",
            who(f),
            pct(f.running),
            pct(f.busy),
            f.waits.as_ref().map(|w| format!("; otherwise it waits ({w})")).unwrap_or_default()
        ),
    ];
    evidence
        .extend(c.shares(shares).map(|s| format!("waiting for work, share of thread time: {s}")));
    // An OpenMP team's threads wait in its runtime for the next region while the thread that
    // starts them runs the code between (FastTree: the main thread alone, 1.18× at 2 threads).
    if openmp(c) {
        return Words {
            summary: format!(
                "{}threads of an OpenMP team wait in its runtime on {} while CPUs are idle, and thread {} runs alone meanwhile: the code it runs between (or beside) the parallel regions is the bottleneck",
                c.at_(),
                c.list(", "),
                who(f)
            ),
            evidence,
            advice: format!(
                "parallelise what thread {} runs outside the regions (its hot code), or give each region more work (parallelise an outer loop); with short regions, fewer threads",
                who(f)
            ),
        };
    }
    Words {
        summary: format!(
            "{}work threads wait for work on {} while CPUs are idle, and thread {} that feeds them runs meanwhile: the feeder is the bottleneck",
            c.at_(),
            c.list(", "),
            who(f)
        ),
        evidence,
        advice: format!(
            "speed up or split the feeder ({}): more producers or readers, bigger batches, read ahead; or use fewer workers",
            who(f)
        ),
    }
}

/// Whether the waits were entered from an OpenMP runtime (named by its file where the library
/// has no symbols, as Debian's libgomp).
fn openmp(c: &Context) -> bool {
    c.objects.iter().any(|o| OPENMP_RUNTIMES.iter().any(|lib| o.contains(lib)))
}

/// Workers waiting for work with no thread that feeds them; `meanwhile` what the others wait on,
/// `ran` how many of the job's other threads ran meanwhile.
pub fn waiting(c: &Context, meanwhile: &[String], ran: &Meanwhile) -> Words {
    let busy = ran.running >= RAN;
    let others = match (busy, meanwhile.is_empty()) {
        // A JVM's idle GC workers beside its two application threads, each running 36–49% of
        // their wait and 0.9 of them at once: no feeder of their own, but the job ran.
        (true, _) => format!(
            "while {:.1} other threads of the job run on average{} without feeding them",
            ran.running,
            ran.most
                .as_ref()
                .map(|(n, r)| format!(" ('{n}' the most, {} of the time)", pct(*r)))
                .unwrap_or_default()
        ),
        (false, true) if ran.running < 0.05 => {
            "and no thread of the job runs meanwhile".to_string()
        }
        (false, true) => {
            format!("while the job's other threads run little ({:.2} on average)", ran.running)
        }
        (false, false) => format!("while the other threads wait too: {}", meanwhile.join("; ")),
    };
    // Entered from an OpenMP runtime without its symbols (Debian's libgomp): its workers sleep
    // between and at the end of parallel regions. Tesseract under OMP_WAIT_POLICY=passive: 2
    // threads 6× slower than 1, 12 s more CPU in futex calls, regions too short for the wake-ups.
    let advice = if openmp(c) {
        "the threads wait in the OpenMP runtime, between or at the end of parallel regions: when regions are short, waking the threads costs more than the work they get (the extra CPU per unit of work says how much); parallelise an outer loop so each region does more, or use fewer threads; if one thread runs serial code between the regions meanwhile, that code is the part to parallelise"
    } else if busy {
        "see what the threads that run meanwhile do: the work the waiting threads get comes from them, or never reaches them (a part of the job that the count does not parallelise)"
    } else {
        "find what should feed them: the input the other threads wait for (a pipe, a file, a socket), a producer blocked elsewhere, or a timer"
    };
    Words {
        summary: format!(
            "{}work threads wait for work on {} while CPUs are idle, {others}",
            c.at_(),
            c.list(", ")
        ),
        evidence: vec![c.idle_line()],
        advice: advice.into(),
    }
}

/// What ran while workers waited for work that no one thread fed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Meanwhile {
    /// The mean number of the job's other threads running.
    pub running: f64,
    /// The one that ran most, and the share of the time it ran.
    pub most: Option<(String, f64)>,
}

/// Other threads running this many on average while workers wait make the job busy meanwhile.
const RAN: f64 = 0.5;

/// Threads waiting at a synchronisation point for the slowest, at a well-known one when `known`.
pub fn sync(c: &Context, known: Option<Known>) -> Words {
    let what = known.map_or(String::new(), |k| format!(" ({})", k.what));
    Words {
        summary: format!("{}threads wait at a synchronisation point for the slowest{what}: {}", c.at_(), c.list(", ")),
        evidence: vec![c.idle_line()],
        advice: known
            .map_or("even out the work between synchronisation points: smaller pieces handed out dynamically", |k| {
                k.advice
            })
            .into(),
    }
}

/// Threads (of `programs`, as [`programs`] names them) waiting for input.
pub fn input(c: &Context, programs: &str) -> Words {
    Words {
        summary: format!(
            "{}threads{programs} wait for input ({}) while CPUs are idle: whatever sends it is the bottleneck",
            c.at_(),
            c.list(", ")
        ),
        evidence: vec![c.idle_line()],
        advice: "make the producer upstream faster, or read more at once".into(),
    }
}

/// Threads (of `programs`) waiting for input while other processes, not the job's, kept the CPUs
/// busy (`busy`: the CPUs the job's processes and the others used on average).
pub fn input_elsewhere(c: &Context, programs: &str, busy: (f64, f64)) -> Words {
    elsewhere(format!("{}threads{programs} wait for input ({})", c.at_(), c.list(", ")), busy)
}

/// The job's processes with nothing to run while other processes kept the CPUs busy (`busy`, as
/// for [`input_elsewhere`]): a client that only waits for its server's answer.
pub fn no_work_elsewhere(c: &Context, busy: (f64, f64)) -> Words {
    elsewhere(format!("{}the command's processes had nothing to run", c.at_()), busy)
}

/// The words of a job whose work is done outside the watched processes: `what` it did meanwhile.
fn elsewhere(what: String, (job, others): (f64, f64)) -> Words {
    Words {
        summary: format!(
            "{what} while other processes kept {others:.1} CPUs busy and the command's own processes {job:.2}: the work seems to be done outside the processes scalescope watches (a server the command talks to), so why it scales as it does cannot be seen from here"
        ),
        evidence: vec![format!(
            "during the runs other processes used {others:.2} CPUs on average, the command's processes {job:.3}: the CPUs were not idle"
        )],
        advice: "watch the processes that do the work: start the server inside the command (a script that starts it, runs the client and stops it), or `scalescope attach` to it during a sweep; the speed-up above is the server's, timed through the client".into(),
    }
}

/// Threads (of `programs`) that sleep.
pub fn sleep(c: &Context, programs: &str) -> Words {
    Words {
        summary: format!(
            "{}threads{programs} sleep ({}) while CPUs are idle: a polling loop or a throttle",
            c.at_(),
            c.list(", ")
        ),
        // The sleepers may be a front end beside the work threads, asleep while nothing runs.
        evidence: vec![c.idle_line_of("thread")],
        advice: "wait on the event itself (a condition variable, poll on a descriptor) instead of sleeping".into(),
    }
}

/// What an I/O finding's threads wait on, for its words.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum IoWait {
    /// Output blocked on the reader of a pipe or socket.
    Output,
    /// Storage, with writes among the waits.
    Writes,
    /// Storage, reads or anything else.
    Reads,
}

/// Threads waiting for I/O, or on output that blocks on its reader; `shares` the waits' share of
/// thread time by count (the I/O class's, or for output the pipes' and sockets').
pub fn io(c: &Context, wait: IoWait, shares: &[(f64, f64)]) -> Words {
    let mut evidence = vec![c.idle_line()];
    let what = if wait == IoWait::Output { "waits on pipes and sockets" } else { "I/O waits" };
    evidence.extend(c.shares(shares).map(|s| format!("{what}, share of thread time: {s}")));
    let (at_, objects) = (c.at_(), c.list(", "));
    Words {
        summary: if wait == IoWait::Output {
            format!("{at_}writes block ({objects}) while CPUs are idle: the reader on the other side is slower")
        } else {
            format!("{at_}threads wait for I/O while CPUs are idle: {objects}")
        },
        evidence,
        advice: if wait == IoWait::Output {
            "the reader of the pipe or socket sets the pace: make the consumer faster (or give it more threads), or hand over larger pieces so that each hand-over costs less"
        } else if wait == IoWait::Writes {
            "more threads will not help past the storage's speed: write larger blocks, sync less often (a sync per write, O_DSYNC) where durability allows, overlap the writes with work, or write to faster storage"
        } else {
            "more threads will not help past the storage's speed: measure what the files can deliver (--ceiling), read larger blocks, overlap I/O with work, or warm the cache"
        }
        .into(),
    }
}

/// Kernel locks waited on (the objects, if any) and `kernel_s` more CPU in the kernel than at the
/// baseline, when it grew; `handed`, when it came with threads blocking and waking one another
/// far more often than at the baseline (said where no kernel lock is named: a lock's waiters
/// block and wake too, and the lock is the cause).
pub fn kernel(c: &Context, kernel_s: Option<f64>, handed: Option<Switches>) -> Words {
    let mut evidence: Vec<String> = kernel_s
        .map(|s| format!("the same work took {s:.3} s more CPU in the kernel than at the baseline"))
        .into_iter()
        .collect();
    let handed = handed.filter(|_| c.objects.is_empty());
    let handovers = handed.zip(kernel_s).map(|(w, s)| {
        evidence.push(handovers_line(w, s));
        if w.base >= 1.0 {
            format!(", as threads block and wake one another {:.0}× as often", w.top / w.base)
        } else {
            ", as threads block and wake one another where the baseline's hardly did".into()
        }
    });
    if !c.objects.is_empty() {
        evidence.push(c.idle_line());
    }
    let (at_, objects) = (c.at_(), c.list("; "));
    let handing = handovers.as_deref().unwrap_or("");
    Words {
        summary: match (kernel_s.is_some(), c.objects.is_empty()) {
            (true, true) => format!("{at_}the kernel does more work for the same job{handing}: its CPU time grew beyond the baseline's"),
            (false, _) => format!("{at_}threads wait on kernel locks while CPUs are idle: {objects}"),
            (true, false) => format!("{at_}the kernel takes more CPU for the same work{handing}, and threads wait on kernel locks: {objects}"),
        },
        evidence,
        // Without a kernel lock waited on, nothing says where the kernel's time went: ripgrep's
        // walk of 13,000 files read "avoid mprotect/munmap … use huge pages".
        advice: if handovers.is_some() {
            HANDOVERS
        } else if c.objects.is_empty() {
            "find which system calls hold the extra kernel time (strace -c -f, perf trace -s): batch small reads and writes into larger ones, reuse memory instead of mapping and unmapping it (a pool or arena allocator), and for many small files fewer calls per file (open, stat, getdents)"
        } else {
            "map memory once and reuse it (a pool or arena allocator), avoid mprotect/munmap in the hot loop, batch small system calls, use huge pages; for file locks, fewer and larger critical sections"
        }
        .into(),
    }
}

/// What to do about threads that block and wake one another far more often than the baseline.
pub const HANDOVERS: &str = "each time a thread blocks and another wakes it, both pay in the kernel: hand work over in larger batches (fewer, bigger items through each queue), let a thread do more before it waits, or use fewer threads; strace -c -f counts the futex calls";

/// `4000 voluntary context switches per run against 20 at the baseline …`, with `kernel_s` more
/// kernel CPU per run than the baseline's.
pub fn handovers_line(w: Switches, kernel_s: f64) -> String {
    format!(
        "{:.0} voluntary context switches per run against {:.0} at the baseline for the same work: about {:.0} µs of the extra kernel time per added switch (a block and a wake-up through a futex, a condition variable or a pipe take kernel time on both sides)",
        w.top,
        w.base,
        1e6 * kernel_s / (w.top - w.base)
    )
}

/// Busy CPUs spinning on a lock: `code` of the on-CPU samples in lock code, first in `names`.
pub fn spin(c: &Context, l: &Ledger, names: &[String], code: f64) -> Words {
    Words {
        summary: format!(
            "{}busy CPUs spin on a lock instead of working: {} of the CPU samples are in lock code ({})",
            c.at_(),
            pct(code),
            names.first().map(String::as_str).unwrap_or("a lock")
        ),
        evidence: vec![
            c.cpu_line(l),
            format!("{} of the on-CPU samples in lock code: {}", pct(code), names.join(", ")),
        ],
        advice: "take the lock less often (per-thread partial results merged once at the end, a reduction clause in OpenMP), or shorten what it protects".into(),
    }
}

/// Busy CPUs spinning in a parallel runtime's wait code: `code` of the on-CPU samples, first in
/// `names`.
pub fn runtime_spin(c: &Context, l: &Ledger, names: &[String], code: f64) -> Words {
    Words {
        summary: format!(
            "{}busy CPUs spin in the parallel runtime instead of working: {} of the CPU samples are in {}, threads waiting for each other on a CPU",
            c.at_(),
            pct(code),
            names.first().map(String::as_str).unwrap_or("the runtime")
        ),
        evidence: vec![
            c.cpu_line(l),
            format!("{} of the on-CPU samples in the runtime's own code, outside its locks: {}", pct(code), names.join(", ")),
        ],
        advice: "spinning hides what the threads wait for (a barrier, the end of an uneven loop, a serial part between parallel regions): sweep again with OMP_WAIT_POLICY=passive (KMP_BLOCKTIME=0 for LLVM's or Intel's OpenMP) so they sleep and the wait is named (a sweep to diagnose, not a fix: sleeping at every region can make a program with short regions far slower)".into(),
    }
}

/// Busy CPUs doing less work each; `noise`, when the extra is within the runs' noise, the CPU
/// time's ratio to the baseline's (95% interval) and the fastest runs' ratio.
pub fn extra_user(c: &Context, l: &Ledger, noise: Option<([f64; 2], f64)>) -> Words {
    let mut evidence = vec![c.cpu_line(l)];
    // The extra is within the noise when the interval reaches 1, or when only the slower runs
    // cost more (the fastest runs alike): each is said as what it is.
    evidence.extend(noise.map(|([lo, hi], fastest)| if lo <= 1.0 {
        format!(
            "within the runs' noise: the CPU time per unit of work is {lo:.2}–{hi:.2}× the baseline's (95% interval) and {fastest:.2}× in the fastest runs, so this may be the machine, not the program"
        )
    } else {
        format!(
            "the fastest runs cost about the same ({fastest:.2}× the baseline's CPU time per unit of work), though on average it is {lo:.2}–{hi:.2}× (95% interval): slower runs, not a dearer program, may make the extra, so this may be the machine"
        )
    }));
    Words {
        summary: format!(
            "{}busy CPUs each do less work: the same work takes {} more CPU time than at {}",
            c.at_(),
            pct(l.cpu_s / l.useful_s.max(1e-9) - 1.0),
            c.baseline()
        ),
        evidence,
        advice: "look for false sharing (per-thread data in one cache line: pad to 64–128 bytes), shared counters, memory bandwidth, or spinning".into(),
    }
}

/// A serial start-up: fewer work threads than CPUs in the run's first part. A first part that is
/// most of the run is not called a start-up: lrzip's single-threaded pre-pass took 95% of a run,
/// a DuckDB query over a serial source 51%, and "parallelise the start-up (reading, parsing)"
/// sent their users looking for a loader.
pub fn startup(c: &Context, l: &Ledger) -> Words {
    let share = l.startup_s / l.wall_s.max(1e-9);
    let (what, advice) = if share < MOST_OF_THE_RUN {
        (
            "a serial start-up",
            "parallelise the start-up (reading, parsing, building indexes) or overlap it with the work",
        )
    } else {
        (
            "most of the run is serial, from its start",
            "find what that part runs on one thread (a profile of it: a serial pass, a source or a stage the count does not parallelise) and parallelise it or overlap it with the rest",
        )
    };
    Words {
        summary: format!(
            "{}the first {} of a run ({}) had fewer work threads running than the {} CPUs: {what}",
            c.at_(),
            secs(l.startup_s),
            pct(share),
            count_tenths(l.capacity)
        ),
        evidence: Vec::new(),
        advice: advice.into(),
    }
}

/// A first part of a run at least this share of it is most of the run, not a start-up.
const MOST_OF_THE_RUN: f64 = 0.5;

/// A tail: threads done with their share wait (on the objects) for the others.
pub fn tail(c: &Context, l: &Ledger) -> Words {
    Words {
        summary: format!(
            "{}the last {} of a run ({}) had fewer work threads than CPUs: the others had finished",
            c.at_(),
            secs(l.tail_s),
            pct(l.tail_s / l.wall_s.max(1e-9))
        ),
        evidence: (!c.objects.is_empty())
            .then(|| format!("threads done with their share waited on: {}", c.list(", ")))
            .into_iter()
            .collect(),
        advice: "split the work in smaller pieces handed out dynamically (work stealing, a shared queue) so no thread is left with a big share".into(),
    }
}

/// A tail of `tail_s` seconds in runs of `wall_s` left by threads that progressed unevenly under
/// contention, counted with it.
pub fn uneven_progress(tail_s: f64, wall_s: f64) -> String {
    format!(
        "slowed by this extra CPU, the threads finished apart even with equal shares: the last {} of a run ({}) had fewer work threads than CPUs, and that idle time is counted here",
        secs(tail_s),
        pct(tail_s / wall_s.max(1e-9))
    )
}

/// CPUs idle with no work thread that had work: `capacity` the share of the capacity.
pub fn no_work(c: &Context, capacity: f64) -> Words {
    Words {
        summary: format!(
            "{}CPUs sat idle with no work thread that had work ({} of the capacity): not enough parallel work (serial steps, dependencies, too few pieces)",
            c.at_(),
            pct(capacity)
        ),
        evidence: Vec::new(),
        advice:
            "find the part that does not run in parallel: more, smaller pieces of work, fewer dependencies between them"
                .into(),
    }
}

/// More busy threads (`busy`) than CPUs at a count that fits the workers: they wait for a CPU
/// `runq` of their time.
pub fn oversubscribed(c: &Context, l: &Ledger, busy: usize, runq: f64) -> Words {
    Words {
        summary: format!(
            "{}the job runs {busy} busy threads on {} CPUs: they wait for a CPU {} of their time, and switching between them costs {} more CPU for the same work than at {}",
            c.at_(),
            count_tenths(l.capacity),
            pct(runq),
            pct(l.cpu_s / l.useful_s.max(1e-9) - 1.0),
            c.baseline()
        ),
        evidence: Vec::new(),
        advice: "the threads beside the workers (producers, readers, helpers) need CPUs too: choose the count so that all busy threads fit the CPUs, or give the helpers less work".into(),
    }
}

/// The machine's load held the capacity (`capacity` its share) from `source`; `mostly` when it is
/// most of the gap.
pub fn load(c: &Context, source: NoiseSource, capacity: f64, mostly: bool) -> Words {
    let (what, detail, host, advice) = match source {
        NoiseSource::Steal => (
            "the hypervisor gave this virtual machine's CPUs to other guests while the job's threads ran",
            ", steal time",
            "the host's load",
            "measure on a dedicated node or a quieter host (steal varies from minute to minute; `cat /proc/stat` shows it in the 8th column), and compare only sweeps taken side by side",
        ),
        NoiseSource::Watching => (
            "work threads were runnable while scalescope (its sampling, or its reading of the run's output) held a CPU",
            "",
            "the cost of watching",
            "compare the timings with a sweep taken with --no-sample (which says nothing of waits); the more often threads switch, the more watching them costs",
        ),
        // A window of a running job has no runs to add or order.
        _ if matches!(c.at, At::Window) => (
            "work threads were runnable but other processes held the CPUs",
            "",
            "the machine's load",
            "attach again when the machine is quieter, or give the job reserved CPUs",
        ),
        _ => (
            "work threads were runnable but other processes held the CPUs",
            "",
            "the machine's load",
            "measure on a quiet machine or on reserved CPUs, with more runs (-r); the default interleaved order spreads the disturbance over all points (not with --order sequential)",
        ),
    };
    let verdict = if mostly {
        format!("the gap is mostly {host}, not the program's")
    } else {
        format!("the figures include {host}")
    };
    Words {
        summary: format!(
            "{}{what} ({} of the capacity{detail}): {verdict}",
            c.at_(),
            pct(capacity)
        ),
        evidence: Vec::new(),
        advice: advice.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A cause's context at 2 threads against 1: waits on `object` that idled `core_s` while
    /// `threads` waited.
    fn at_two_threads(object: &str, core_s: f64, threads: usize) -> Context<'static> {
        Context {
            at: At::Count(2.0, "threads"),
            baseline: Some(1.0),
            objects: vec![object.into()],
            idle: Idle { core_s, threads, span: None, carried_s: 0.0 },
        }
    }

    #[test]
    fn workers_asleep_in_the_openmp_runtime_get_advice_on_its_regions_not_on_pipes() {
        // Tesseract under OMP_WAIT_POLICY=passive, Debian's libgomp without symbols.
        let c = at_two_threads(
            "libgomp.so.1.0.0+0x13dad ← tesseract::LSTM::Forward (heap+0x2905904)",
            24.2,
            2,
        );
        let w = waiting(&c, &[], &Meanwhile { running: 0.41, most: None });
        assert!(w.advice.starts_with("the threads wait in the OpenMP runtime"), "{}", w.advice);
        assert!(!w.advice.contains("a pipe"), "{}", w.advice);
        let plain = at_two_threads("pthread_cond_wait ← worker (heap+0x10)", 1.0, 2);
        let w = waiting(&plain, &[], &Meanwhile { running: 0.41, most: None });
        assert!(w.advice.starts_with("find what should feed them"), "{}", w.advice);
    }

    #[test]
    fn the_thread_an_openmp_team_waits_for_runs_the_code_between_its_regions() {
        // FastTree's pool thread docked in Debian's libgomp while the main thread runs alone.
        let c = at_two_threads(
            "libgomp.so.1.0.0+0x1f64e ← libgomp.so.1.0.0+0x1cd67 (heap+0x38244)",
            1.96,
            1,
        );
        let f =
            Feeder { name: "fasttreeMP".into(), tid: Some(6729), main: true, ..Default::default() };
        let w = starved(&c, &f, &[]);
        assert!(
            w.summary.contains("threads of an OpenMP team wait in its runtime"),
            "{}",
            w.summary
        );
        assert!(!w.summary.contains("feeds them"), "{}", w.summary);
        assert!(w.advice.starts_with("parallelise what thread 'fasttreeMP' (tid 6729, the main thread) runs outside the regions"), "{}", w.advice);
        let plain = at_two_threads("pthread_cond_wait ← worker (heap+0x10)", 1.0, 2);
        let w = starved(&plain, &f, &[]);
        assert!(w.summary.contains("the feeder is the bottleneck"), "{}", w.summary);
    }

    #[test]
    fn a_feeder_named_as_its_workers_is_told_apart_when_it_is_the_main_thread() {
        // Every thread of x264 is named x264, and the tid is new each run.
        let f = Feeder { name: "x264".into(), tid: Some(29790), ..Default::default() };
        assert_eq!(who(&f), "'x264' (tid 29790)");
        let main = Feeder { main: true, ..f };
        assert_eq!(who(&main), "'x264' (tid 29790, the main thread)");
        assert_eq!(who(&Feeder { tid: None, ..main }), "'x264' (the main thread)");
    }

    #[test]
    fn a_condition_variable_is_not_called_a_lock_held_by_others() {
        // x264's frame threads wait for rows of the frame before theirs.
        let c =
            at_two_threads("pthread_cond_wait ← libx264.so.164+0x965f3 (heap+0x6e000)", 0.35, 1);
        let w = lock(&c, None, None, &[], false, false);
        assert!(
            w.summary.contains("a condition variable that other threads signal"),
            "{}",
            w.summary
        );
        assert!(w.advice.starts_with("see what the threads that signal it do"), "{}", w.advice);
        let c = at_two_threads("pthread_mutex_lock ← update_histogram (heap+0x2a0)", 0.35, 1);
        let w = lock(&c, None, None, &[], false, false);
        assert!(w.summary.contains("a lock held by other threads"), "{}", w.summary);
    }

    #[test]
    fn workers_without_a_feeder_are_said_to_wait_beside_what_ran_meanwhile() {
        let c = at_two_threads("GangWorker::loop", 0.48, 3);
        let idle = Meanwhile::default();
        let w = waiting(&c, &[], &idle);
        assert!(w.summary.ends_with("and no thread of the job runs meanwhile"), "{}", w.summary);
        assert!(w.advice.starts_with("find what should feed them"), "{}", w.advice);
        // A JVM's idle GC workers while its two application threads took turns running.
        let ran = Meanwhile { running: 0.86, most: Some(("pool-1-thread-2".into(), 0.36)) };
        let w = waiting(&c, &[], &ran);
        assert!(
            w.summary.contains("while 0.9 other threads of the job run on average ('pool-1-thread-2' the most, 36% of the time)")
                && !w.summary.contains("no thread"),
            "{}",
            w.summary
        );
        assert!(w.advice.contains("that the count does not parallelise"), "{}", w.advice);
        let little = Meanwhile { running: 0.2, most: None };
        assert!(waiting(&c, &[], &little).summary.ends_with("run little (0.20 on average)"));
    }

    #[test]
    fn two_causes_of_one_kind_are_told_apart_on_the_ledger_line() {
        let l = Ledger {
            capacity: 2.0,
            lost_s: 0.6,
            cpu_s: 1.4,
            unexplained: 0.04,
            ..Ledger::default()
        };
        let causes = [
            (Kind::LockContention, None, 0.83),
            (Kind::SerialPhase, None, 0.05),
            (Kind::LockContention, None, 0.08),
        ];
        let line = ledger_line(At::Count(2.0, "threads"), "", &l, &causes, None);
        assert!(
            line.contains("lock-contention (1st) 83%, serial-phase 5%, lock-contention (2nd) 8%, unexplained 4%"),
            "{line}"
        );
        // The machine's causes say what each is: a trial read "noisy-measurement (1st) 54%".
        let noise = [
            (Kind::NoisyMeasurement, Some(NoiseSource::OtherProcesses.words()), 0.54),
            (Kind::NoisyMeasurement, Some(NoiseSource::Watching.words()), 0.17),
        ];
        let line = ledger_line(At::Count(2.0, "threads"), "", &l, &noise, None);
        assert!(
            line.contains(
                "noisy-measurement (other processes) 54%, noisy-measurement (watching) 17%"
            ),
            "{line}"
        );
        let one = ledger_line(At::Count(2.0, "threads"), "", &l, &causes[..2], None);
        assert!(one.contains("— lock-contention 83%, serial-phase 5%"), "{one}");
        let window = ledger_line(At::Window, "", &l, &causes[..1], None);
        assert!(window.starts_with("the window: 0.60 of ") && !window.contains("per run"));
    }

    #[test]
    fn a_window_is_not_told_to_add_runs() {
        let c = |at| Context {
            at,
            baseline: None,
            objects: Vec::new(),
            idle: Idle { core_s: 0.3, threads: 2, span: None, carried_s: 0.0 },
        };
        let window = load(&c(At::Window), NoiseSource::OtherProcesses, 0.3, true);
        assert!(!window.advice.contains("runs") && window.advice.contains("attach again"));
        let point = load(&c(At::Run), NoiseSource::OtherProcesses, 0.3, true);
        assert!(point.advice.contains("more runs (-r)"), "{}", point.advice);
    }

    #[test]
    fn a_summary_says_what_its_evidence_says() {
        let c = at_two_threads("lock!m+0x0", 0.3, 2);
        let l = Ledger { capacity: 2.0, lost_s: 0.7, cpu_s: 1.4, ..Ledger::default() };
        // Waiters of which more than one runs at times contend; they are not serialised.
        let contended = Turns::Among { running: 0.71, peak: 1.4, serialised: false };
        let w = lock(&c, None, Some(contended), &[], false, true);
        assert!(
            w.summary.contains("threads contend for one lock, and handing it over"),
            "{}",
            w.summary
        );
        assert!(w.evidence.iter().any(|e| e.contains("(contended, not serialised)")));
        let w = lock(&c, None, None, &[], true, true);
        assert!(
            w.summary.contains("threads are serialised on one lock, and handing"),
            "{}",
            w.summary
        );
        // An interval that reaches 1 is the runs' noise; one above 1 with the fastest runs alike
        // is said as that.
        let reaching = extra_user(&c, &l, Some(([0.95, 1.12], 1.02)));
        assert!(reaching.evidence.iter().any(|e| e.starts_with("within the runs' noise: ")));
        let above = extra_user(&c, &l, Some(([1.03, 1.12], 1.02)));
        assert!(
            above
                .evidence
                .iter()
                .any(|e| e.starts_with("the fastest runs cost about the same (1.02×")
                    && e.contains("on average it is 1.03–1.12×")),
            "{:?}",
            above.evidence
        );
        assert!(!above.evidence.iter().any(|e| e.contains("within the runs' noise")));
        // Writes to storage get a writer's advice; reads and output blocked on a reader do not.
        let writes = io(&c, IoWait::Writes, &[]);
        assert!(
            writes.advice.contains("write larger blocks, sync less often"),
            "{}",
            writes.advice
        );
        assert!(writes.summary.contains("threads wait for I/O"), "{}", writes.summary);
        assert!(io(&c, IoWait::Reads, &[]).advice.contains("read larger blocks"));
        let output = io(&c, IoWait::Output, &[]);
        assert!(output.summary.contains("the reader on the other side is slower"));
        assert!(output.advice.contains("consumer") && !output.advice.contains("storage"));
    }
}
