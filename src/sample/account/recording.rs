//! The end of sampling: the history becomes the run's [`ThreadReport`] — thread time by class, the
//! top waits with how threads behaved around them, the capacity accounting, the timeline, the
//! busiest threads and the hottest code.

use super::accounting::{self, Accounting, Cause, Use};
use super::behaviour;
use super::joins;
use super::thread_time::History;
use crate::results::{
    Around, Capacity, Class, Feeder, Hot, IdleKind, IdleShare, MachineCpu, Phases, Sooner,
    StackProfile, ThreadReport, ThreadSummary, Timeline, Wait,
};
use crate::sample::proc::{Recorder, Site, Thread, Tracker, procfs};
use crate::sample::trace::{Buffers, Code, Evidence, same_code};
use crate::sample::unwind::{Namer, Place};
use std::collections::{BTreeMap, HashMap};

/// Threads listed one by one in the report.
const LISTED_THREADS: usize = 16;
/// Waits listed, largest first.
const LISTED_WAITS: usize = 10;
/// Most timeline bins stored per run.
const TIMELINE_BINS: usize = 256;

/// What the sampler recorded, handed over when it stops: the threads' history and the waits seen,
/// the evidence layer, and what was read at the start to set against the end.
pub(crate) struct Recording {
    /// CPUs the job could use at once, when known (the sampler's [`Config`](super::Config)).
    pub capacity: Option<f64>,
    /// Whether the threads' lives before sampling count (a run sampled from its spawn).
    pub prior_life: bool,
    /// The machine's busy and stolen CPU ticks when sampling began (`/proc/stat`).
    pub cpu_ticks: Option<(u64, u64)>,
    /// The CPUs' current-frequency files, where the kernel shows them.
    pub frequency: Vec<std::fs::File>,
    /// Their mean frequency at the start, MHz.
    pub mhz: Option<f64>,
    /// `/proc/stat`, kept open for the reading at the end.
    pub stat: Option<std::fs::File>,
    /// This process's CPU seconds when sampling began.
    pub own_cpu_s: f64,
    /// Every thread followed, by thread id.
    pub threads: HashMap<i32, Thread>,
    /// Every thread's time, bin by bin.
    pub history: History,
    /// The waits seen, indexed by their label.
    pub labels: Vec<(Class, Option<Site>)>,
    /// Futex addresses located while their process lived.
    pub places: HashMap<Site, Place>,
    /// Sweeps taken.
    pub samples: u64,
    /// Most threads alive at once.
    pub peak: usize,
    /// Limits lines so far.
    pub limits: Vec<String>,
    /// CPU seconds spent on work the rate budget leaves out.
    pub oneoff_s: f64,
    /// Threads (pid, tid) the tracer's records announced that ended before a sweep opened them.
    pub unopened: Vec<(i32, i32)>,
    /// On-CPU samples by place (from the per-thread events, when the tracer does not run).
    pub hot: HashMap<Place, u64>,
    /// The tracer and the stacks of blocked threads.
    pub evidence: Option<Evidence>,
    /// Per wait label, where it was taken and how often.
    pub taken_at: HashMap<u32, HashMap<String, u32>>,
    /// A finished tracer's buffers, let go of once the report is out.
    pub spent: Option<Buffers>,
    /// The tree's memory peaks and means.
    pub memory_seen: Tracker,
    /// The run as a time series.
    pub series: Recorder,
    /// The CPU the memory readings took in all.
    pub memory_cpu_s: f64,
    /// Processes whose memory could not be read.
    pub memory_refused: usize,
    /// Seconds the run was held stopped.
    pub stopped_s: f64,
}

/// Builds the report of a finished sampling of `wall_s` seconds. The recording keeps what it held
/// (the tracer's buffers, every thread's open files) for the caller to let go of once the report
/// is out.
pub(crate) fn report(s: &mut Recording, wall_s: f64, sampler_cpu_s: f64) -> ThreadReport {
    let coverage = coverage(&s.history);
    let cpus = crate::machine::allowed_cpus().max(1) as f64;
    let uses: Vec<Use> = s
        .labels
        .iter()
        .map(|(class, _)| match class {
            Class::Io | Class::KernelLock => Use::Work,
            Class::Lock => Use::Blocked,
            Class::Sleep => Use::Timer,
            _ => Use::Idle,
        })
        .collect();
    let work = accounting::work_threads(&s.history, s.capacity, cpus, &uses);
    // A contended mutex (futex value 2) is a lock even when its holder lets go of it by ending.
    let futex_waits = |l: u32| s.labels[l as usize].0 == Class::WaitForWork;
    for l in joins::ended_by_an_end(&s.history, &work, futex_waits) {
        s.labels[l as usize].0 = Class::Join;
    }
    let joins: Vec<u32> =
        (0..s.labels.len() as u32).filter(|&l| s.labels[l as usize].0 == Class::Join).collect();
    s.history.spread_unlabelled(&work, &joins);
    // A run is sampled from its spawn; `attach` samples a window of a running job, with no
    // start-up or tail of its own.
    let acc = if s.prior_life {
        accounting::account(&s.history, wall_s, s.capacity, cpus, (&uses, &joins))
    } else {
        accounting::account_window(&s.history, wall_s, s.capacity, cpus, (&uses, &joins))
    };
    let mut namer = Namer::default();
    let names: Vec<String> = s
        .labels
        .iter()
        .map(|(class, site)| wait_name(*class, site.as_ref(), &s.places, &mut namer))
        .collect();
    let by_track: HashMap<usize, &Thread> = s.threads.values().map(|t| (t.track, t)).collect();
    let comm = |track: usize| by_track.get(&track).map_or_else(String::new, |t| t.comm.clone());

    let mut classes: BTreeMap<Class, f64> = BTreeMap::new();
    let mut per_label: Vec<(f64, Vec<usize>)> = vec![(0.0, Vec::new()); s.labels.len()];
    // Seconds work threads waited on each label: their waits are listed first.
    let mut work_s: Vec<f64> = vec![0.0; s.labels.len()];
    for (track, tr) in s.history.tracks.iter().enumerate() {
        let user = by_track.get(&track).map_or(1.0, |t| t.user_share());
        let on = tr.on_s();
        *classes.entry(Class::CpuUser).or_default() += on * user;
        *classes.entry(Class::CpuKernel).or_default() += on * (1.0 - user);
        *classes.entry(Class::Runqueue).or_default() += tr.runq_s();
        for &(_, label, sec) in &tr.off {
            let sec = sec as f64;
            match label {
                Some(l) => {
                    if acc.work.get(track).copied().unwrap_or(false) {
                        work_s[l as usize] += sec;
                    }
                    let e = &mut per_label[l as usize];
                    e.0 += sec;
                    // Tracks come in order: a repeat is the last one pushed.
                    if e.1.last() != Some(&track) {
                        e.1.push(track);
                    }
                }
                None => *classes.entry(Class::Unsampled).or_default() += sec,
            }
        }
    }
    for (l, (sec, _)) in per_label.iter().enumerate() {
        *classes.entry(s.labels[l].0).or_default() += sec;
    }
    classes.retain(|_, v| *v > 0.0);

    if s.memory_refused > 0 {
        s.limits.push(format!(
            "memory of {} processes not readable (another user's, or setuid): left out of the tree's PSS and RSS",
            s.memory_refused
        ));
    }
    let mut top_waits = waits(s, &names, (&per_label, &work_s), &comm);
    top_waits.truncate(LISTED_WAITS);
    for w in &mut top_waits {
        w.around = around(s, &names, &per_label, &w.name, &comm);
    }
    let capacity = capacity(&acc, &s.labels, &names, coverage);
    let unopened: Vec<(i32, i32)> =
        s.unopened.iter().copied().filter(|(_, tid)| !s.threads.contains_key(tid)).collect();
    let threads_seen = s.threads.len() + unopened.len();
    let mut listed: Vec<ThreadSummary> = s
        .threads
        .iter()
        .map(|(&tid, t)| {
            let tr = &s.history.tracks[t.track];
            ThreadSummary {
                tid,
                pid: t.pid,
                name: t.comm.clone(),
                on_cpu_s: tr.on_s(),
                runqueue_s: tr.runq_s(),
                off_cpu_s: tr.off_s(),
                main_wait: main_wait(&s.history, t.track, &s.labels),
                voluntary_switches: t.switches.0,
                involuntary_switches: t.switches.1,
                read_bytes: t.io_bytes.0,
                write_bytes: t.io_bytes.1,
                work: acc.work.get(t.track).copied().unwrap_or(false),
            }
        })
        .collect();
    let sum = |f: &dyn Fn(&ThreadSummary) -> u64| listed.iter().map(f).sum::<u64>();
    let (voluntary_switches, involuntary_switches) =
        (sum(&|t| t.voluntary_switches), sum(&|t| t.involuntary_switches));
    let (read_bytes, write_bytes) = (sum(&|t| t.read_bytes), sum(&|t| t.write_bytes));
    listed.sort_by(|a, b| b.on_cpu_s.total_cmp(&a.on_cpu_s));
    listed.truncate(LISTED_THREADS);
    let phases = Phases { startup_end_s: acc.startup_s, tail_start_s: wall_s - acc.tail_s };
    let untraced: Vec<(i32, f64)> =
        s.threads.iter().map(|(&tid, t)| (tid, s.history.tracks[t.track].off_s())).collect();
    let found = s.evidence.take().map(|e| {
        let (found, buffers) = e.finish(phases, &untraced);
        s.spent = buffers;
        found
    });
    let (stacks, tracer, code) = match found {
        Some(f) => {
            for l in f.limits {
                if !s.limits.contains(&l) {
                    s.limits.push(l);
                }
            }
            (f.stacks, f.tracer, (!f.code.is_empty()).then_some(f.code))
        }
        None => (None, None, None),
    };
    let hot = match (&stacks, tracer.is_some()) {
        (Some(p), true) => hot_from_stacks(p),
        _ => hot_functions(&s.hot, &mut namer),
    };
    for w in &mut top_waits {
        w.taken_at = taken_at(s, &names, &w.name);
        if let (Some(a), Some(code)) = (w.around.as_mut(), code.as_ref()) {
            peer_code(s, (&names, &per_label), &w.name, a, code);
        }
    }
    ThreadReport {
        wall_s,
        classes,
        threads_seen,
        processes_seen: s
            .threads
            .values()
            .map(|t| t.pid)
            .chain(unopened.iter().map(|&(pid, _)| pid))
            .collect::<std::collections::HashSet<_>>()
            .len(),
        peak_threads: s.peak,
        samples: s.samples,
        sample_rate_hz: if wall_s > 0.0 { s.samples as f64 / wall_s } else { 0.0 },
        sampler_cpu_s,
        sampler_oneoff_cpu_s: s.oneoff_s,
        stopped_s: s.stopped_s,
        top_waits,
        timeline: timeline(&s.history, &s.labels),
        concurrency_s: concurrency(&s.history),
        voluntary_switches,
        involuntary_switches,
        read_bytes,
        write_bytes,
        threads: listed,
        hot,
        limits: std::mem::take(&mut s.limits),
        capacity: Some(capacity),
        stacks,
        tracer,
        machine_cpu: machine_cpu(s.cpu_ticks, s.stat.as_ref(), procfs::ticks_per_second()).map(
            |m| MachineCpu {
                mhz: s.mhz.zip(procfs::mean_mhz(&s.frequency)).map(|(a, b)| 0.5 * (a + b)),
                ..m
            },
        ),
        scalescope_cpu_s: (procfs::process_cpu_s() - s.own_cpu_s).max(0.0),
        lean: None,
        memory: s.memory_seen.finish(wall_s, s.memory_cpu_s),
        series: std::mem::take(&mut s.series).finish(),
    }
}

/// The machine's CPU time since `start` (busy and stolen ticks at the sampler's start), read from
/// `/proc/stat` kept open.
fn machine_cpu(
    start: Option<(u64, u64)>,
    stat: Option<&std::fs::File>,
    ticks_per_s: f64,
) -> Option<MachineCpu> {
    let ((b0, s0), (b1, s1)) = start.zip(stat.and_then(procfs::cpu_ticks_of))?;
    Some(MachineCpu {
        busy_s: b1.saturating_sub(b0) as f64 / ticks_per_s,
        stolen_s: s1.saturating_sub(s0) as f64 / ticks_per_s,
        mhz: None,
    })
}

/// Share of the off-CPU time that samples attributed to a wait, before unlabelled time is spread.
fn coverage(h: &History) -> f64 {
    let (mut labelled, mut all) = (0.0, 0.0);
    for t in &h.tracks {
        for &(_, label, s) in &t.off {
            all += s as f64;
            if label.is_some() {
                labelled += s as f64;
            }
        }
    }
    if all > 0.0 { labelled / all } else { 1.0 }
}

/// A readable name for a wait: the lock's symbol, the system call and wait channel.
fn wait_name(
    class: Class,
    site: Option<&Site>,
    places: &HashMap<Site, Place>,
    namer: &mut Namer,
) -> String {
    match site {
        Some(site @ Site::Futex { addr, .. }) => {
            namer.name(&places.get(site).cloned().unwrap_or(Place::Unknown(*addr)))
        }
        Some(Site::Join { pid }) => {
            format!("pthread_join in process {pid}: waiting for threads to finish")
        }
        Some(Site::Kernel { syscall, wchan }) if wchan.is_empty() => syscall.clone(),
        Some(Site::Kernel { syscall, wchan }) => format!("{syscall} in {wchan}"),
        None => class.name().to_string(),
    }
}

/// The waits merged by class and name (one lock in several processes): the work threads' waits
/// first, largest first, then the other threads'.
fn waits(
    s: &Recording,
    names: &[String],
    (per_label, work_s): (&[(f64, Vec<usize>)], &[f64]),
    comm: &dyn Fn(usize) -> String,
) -> Vec<Wait> {
    let mut out: Vec<Wait> = Vec::new();
    let mut who: Vec<std::collections::HashSet<usize>> = Vec::new();
    for (l, (seconds, tracks)) in per_label.iter().enumerate() {
        if *seconds <= 0.0 || s.labels[l].1.is_none() {
            continue;
        }
        let class = Some(s.labels[l].0);
        let i = match out.iter().position(|w| w.name == names[l] && w.class == class) {
            Some(i) => i,
            None => {
                out.push(Wait { class, name: names[l].clone(), ..Default::default() });
                who.push(Default::default());
                out.len() - 1
            }
        };
        out[i].seconds += seconds;
        out[i].work_s += work_s.get(l).copied().unwrap_or(0.0);
        for &t in tracks {
            if who[i].insert(t) && out[i].thread_names.len() < 4 {
                let name = comm(t);
                if !out[i].thread_names.contains(&name) {
                    out[i].thread_names.push(name);
                }
            }
        }
        out[i].waiters = who[i].len();
    }
    // The work threads' waits first, by their seconds, then the others': a runtime's helper
    // threads (a JVM's compiler and GC threads) wait the whole run and would crowd out the wait
    // that idles the CPUs.
    crate::results::sort_waits(&mut out);
    out
}

/// Whether the thread that ran while the threads waiting on `name` waited runs their code: its
/// share of on-CPU samples in the chains of callers the waiters run, and the waiters' own share
/// of time on a CPU.
fn peer_code(
    s: &Recording,
    (names, per_label): (&[String], &[(f64, Vec<usize>)]),
    name: &str,
    a: &mut Around,
    code: &Code,
) {
    let Some(f) = a.feeder.as_mut() else { return };
    let Some(label) = (0..names.len())
        .filter(|&l| names[l] == name)
        .max_by(|&x, &y| per_label[x].0.total_cmp(&per_label[y].0))
    else {
        return;
    };
    let tid_of =
        |track: usize| s.threads.iter().find(|(_, t)| t.track == track).map(|(&tid, _)| tid);
    let waiters: Vec<usize> =
        per_label[label].1.iter().copied().filter(|&t| tid_of(t) != f.tid).collect();
    let mut theirs: HashMap<Vec<u32>, u64> = HashMap::new();
    for chains in waiters.iter().filter_map(|&t| tid_of(t)).filter_map(|tid| code.get(&tid)) {
        for (k, n) in chains {
            *theirs.entry(k.clone()).or_default() += n;
        }
    }
    f.same_code = f.tid.and_then(|tid| code.get(&tid)).and_then(|mine| same_code(mine, &theirs));
    let busy: Vec<f64> = waiters
        .iter()
        .map(|&t| {
            let tr = &s.history.tracks[t];
            let life = tr.on_s() + tr.runq_s() + tr.off_s();
            if life > 0.0 { tr.on_s() / life } else { 0.0 }
        })
        .collect();
    f.waiters_busy = (!busy.is_empty()).then(|| busy.iter().sum::<f64>() / busy.len() as f64);
}

/// How threads behaved around the largest label of this name.
fn around(
    s: &Recording,
    names: &[String],
    per_label: &[(f64, Vec<usize>)],
    name: &str,
    comm: &dyn Fn(usize) -> String,
) -> Option<Around> {
    let label = (0..names.len())
        .filter(|&l| names[l] == name)
        .max_by(|&a, &b| per_label[a].0.total_cmp(&per_label[b].0))?;
    let b = behaviour::of(&s.history, label as u32)?;
    let private = private_to(s, label);
    let feeder = b.feeder.map(|(track, running)| {
        let tr = &s.history.tracks[track];
        let life = tr.on_s() + tr.runq_s() + tr.off_s();
        let waiting_for_work: f64 = tr
            .off
            .iter()
            .filter(|(_, l, _)| l.is_some_and(|l| s.labels[l as usize].0 == Class::WaitForWork))
            .map(|&(_, _, v)| v as f64)
            .sum();
        let thread = s.threads.iter().find(|(_, t)| t.track == track);
        Feeder {
            name: comm(track),
            tid: thread.map(|(&tid, _)| tid),
            main: thread.is_some_and(|(&tid, t)| t.pid == tid),
            cannot_wake: private.is_some_and(|pid| thread.is_none_or(|(_, t)| t.pid != pid)),
            running,
            busy: if life > 0.0 { tr.on_s() / life } else { 0.0 },
            waits_for_work: (life > 0.0).then(|| waiting_for_work / life),
            same_code: None,
            waiters_busy: None,
            waits: main_wait_label(&s.history, track).map(|l| {
                let class = s.labels[l as usize].0;
                format!("{} on {}", class.short(), names[l as usize])
            }),
        }
    });
    let meanwhile = b
        .meanwhile
        .iter()
        .filter(|m| m.2 >= 0.1 && s.labels[m.1 as usize].0 != Class::Join)
        .map(|&(track, l, share)| {
            let class = s.labels[l as usize].0;
            format!(
                "'{}' {} on {} ({:.0}% of the time)",
                comm(track),
                class.short(),
                names[l as usize],
                100.0 * share
            )
        })
        .collect();
    Some(Around {
        members_running: b.members_running,
        others_running: b.others_running,
        members_peak: b.members_peak,
        finished: b.finished,
        feeder,
        meanwhile,
    })
}

/// The process whose private memory holds the futex of wait `label` (its `[heap]` or its main
/// thread's stack): only that process's threads can wake its waiters. `None` for any other wait,
/// and for a futex in anonymous memory, which a forked process may share.
fn private_to(s: &Recording, label: usize) -> Option<i32> {
    let site = s.labels.get(label)?.1.as_ref()?;
    let Site::Futex { pid, .. } = site else { return None };
    matches!(s.places.get(site), Some(Place::BrkHeap(_) | Place::Stack(_))).then_some(*pid)
}

/// The label that took most of a thread's off-CPU time.
fn main_wait_label(h: &History, track: usize) -> Option<u32> {
    let mut by: HashMap<u32, f64> = HashMap::new();
    for &(_, label, s) in &h.tracks[track].off {
        if let Some(l) = label {
            *by.entry(l).or_default() += s as f64;
        }
    }
    by.into_iter().max_by(|a, b| a.1.total_cmp(&b.1)).map(|(l, _)| l)
}

fn main_wait(h: &History, track: usize, labels: &[(Class, Option<Site>)]) -> Option<Class> {
    main_wait_label(h, track).map(|l| labels[l as usize].0)
}

/// The accounting in the results' terms: causes named, merged by object and phase, largest first.
fn capacity(
    acc: &Accounting,
    labels: &[(Class, Option<Site>)],
    names: &[String],
    coverage: f64,
) -> Capacity {
    let mut idle: Vec<IdleShare> = Vec::new();
    for (&(cause, phase), &core_s) in &acc.idle {
        if core_s <= 0.0 {
            continue;
        }
        let (kind, class, object) = match cause {
            Cause::Wait(l) => {
                (IdleKind::Wait, Some(labels[l as usize].0), Some(names[l as usize].clone()))
            }
            Cause::Runqueue => (IdleKind::Runqueue, None, None),
            Cause::NoWork => (IdleKind::NoWork, None, None),
            Cause::Unlabelled => (IdleKind::Unlabelled, None, None),
        };
        let threads = acc.threads.get(&cause).copied().unwrap_or(0);
        let carried_s = acc.carried.get(&(cause, phase)).copied().unwrap_or(0.0);
        match idle
            .iter_mut()
            .find(|i| i.kind == kind && i.class == class && i.object == object && i.phase == phase)
        {
            Some(i) => {
                i.core_s += core_s;
                i.carried_s += carried_s;
                i.threads = i.threads.max(threads);
            }
            None => idle.push(IdleShare { kind, class, object, phase, core_s, threads, carried_s }),
        }
    }
    let mut sooner: Vec<Sooner> = Vec::new();
    for (&l, &s) in &acc.sooner {
        let (class, object) = (labels[l as usize].0, names[l as usize].clone());
        match sooner.iter_mut().find(|x| x.class == class && x.object == object) {
            Some(x) => x.s = x.s.max(s),
            None => sooner.push(Sooner { class, object, s }),
        }
    }
    sooner.retain(|x| x.s > 0.0);
    sooner.sort_by(|a, b| b.s.total_cmp(&a.s));
    idle.sort_by(|a, b| b.core_s.total_cmp(&a.core_s));
    let work_threads = acc.work.iter().filter(|&&w| w).count();
    Capacity {
        cpus: acc.capacity,
        from_axis: acc.from_axis,
        span_s: acc.span_s,
        cpu_s: acc.cpu_s,
        over_s: acc.over_s,
        idle,
        startup_s: acc.startup_s,
        tail_s: acc.tail_s,
        work_threads,
        peak_work_threads: acc.peak_work_threads,
        helper_threads: acc.work.len() - work_threads,
        demand: acc.demand,
        coverage,
        sooner,
        sooner_all_s: (acc.sooner_all > 0.0).then_some(acc.sooner_all),
    }
}

/// Threads on a CPU, runnable and waiting by class, averaged per bin (at most [`TIMELINE_BINS`]).
fn timeline(h: &History, labels: &[(Class, Option<Site>)]) -> Option<Timeline> {
    let bins = h.bins();
    if bins == 0 {
        return None;
    }
    let merge = bins.div_ceil(TIMELINE_BINS).max(1);
    let n = bins.div_ceil(merge);
    let width = h.width() * merge as f64;
    let mut running = vec![0.0f64; n];
    let mut runnable = vec![0.0f64; n];
    let mut waiting: BTreeMap<Class, Vec<f64>> = BTreeMap::new();
    for t in &h.tracks {
        for (b, (&on, &rq)) in t.on.iter().zip(&t.runq).enumerate() {
            running[b / merge] += on as f64;
            runnable[b / merge] += rq as f64;
        }
        for &(b, label, s) in &t.off {
            let class = label.map_or(Class::Unsampled, |l| labels[l as usize].0);
            waiting.entry(class).or_insert_with(|| vec![0.0; n])[b as usize / merge] += s as f64;
        }
    }
    let avg = |v: Vec<f64>| v.into_iter().map(|x| (x / width) as f32).collect();
    Some(Timeline {
        bin_s: width,
        running: avg(running),
        runnable: avg(runnable),
        waiting: waiting.into_iter().map(|(c, v)| (c, avg(v))).collect(),
    })
}

/// Seconds spent with 0, 1, 2… threads on a CPU.
fn concurrency(h: &History) -> Vec<f64> {
    let mut out: Vec<f64> = Vec::new();
    for b in 0..h.bins() {
        let run: f64 = h.tracks.iter().map(|t| t.on_in(b)).sum::<f64>() / h.width();
        let k = run.round() as usize;
        if out.len() <= k {
            out.resize(k + 1, 0.0);
        }
        out[k] += h.width();
    }
    out
}

/// Where the waits of this name were taken most often, from the blocked threads' stacks.
fn taken_at(s: &Recording, names: &[String], name: &str) -> Option<String> {
    let mut by: HashMap<&str, u32> = HashMap::new();
    for (l, sites) in &s.taken_at {
        if names[*l as usize] == name {
            for (site, n) in sites {
                *by.entry(site.as_str()).or_default() += n;
            }
        }
    }
    by.into_iter().max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(a.0))).map(|(site, _)| site.to_string())
}

/// Rust's `core` and `alloc` helpers (indexing, iterators, atomics, methods of primitive types
/// such as `<u64>::unchecked_add`), inlined into the code that calls them: their time is counted
/// in that code's.
fn core_helper(function: &str) -> bool {
    let primitive = function
        .strip_prefix('<')
        .and_then(|rest| rest.split_once(">::"))
        .is_some_and(|(ty, _)| !ty.contains("::") && !ty.contains(" as "));
    primitive
        || ["core::", "<core::", "alloc::", "<alloc::"].iter().any(|p| function.starts_with(p))
        || [" as core::", " as alloc::"].iter().any(|p| function.contains(p))
}

/// The on-CPU place of code in no file (JIT-compiled code).
const OUTSIDE_FILES: &str = "code in no file (JIT-compiled?)";

/// On-CPU time by innermost function (Rust's core helpers counted in their caller) from the
/// tracer's stacks, largest first, the top ten.
fn hot_from_stacks(p: &StackProfile) -> Vec<Hot> {
    let mut by_name: HashMap<String, u64> = HashMap::new();
    for s in &p.on_cpu {
        let frames: Vec<_> = p.frames_of(s.stack).collect();
        let Some(leaf) = frames.iter().rev().find(|f| !core_helper(&f.function)).or(frames.last())
        else {
            continue;
        };
        let name = if leaf.module == "?" {
            // Outside every file: code a JIT compiled (Java, JavaScript, LuaJIT), at addresses
            // that differ from run to run and have no name to tell them apart by.
            OUTSIDE_FILES.to_string()
        } else if leaf.function.contains("::") || leaf.function.starts_with(&leaf.module) {
            leaf.function.clone()
        } else {
            format!("{}!{}", leaf.module, leaf.function)
        };
        *by_name.entry(thread_closure(without_offset(name))).or_default() += s.samples;
    }
    let total: u64 = by_name.values().sum();
    top_ten(by_name, total)
}

/// `liblzma.so.5.4.1 (no symbols)` for `liblzma.so.5.4.1+0x15a20`: without symbols every
/// instruction would be a place of its own, and ten of one module's would fill the list.
fn without_offset(name: String) -> String {
    match name.rsplit_once("+0x") {
        Some((module, hex))
            if !module.is_empty()
                && !module.contains(['!', ':', ' '])
                && hex.chars().all(|c| c.is_ascii_hexdigit()) =>
        {
            format!("{module} (no symbols)")
        }
        _ => name,
    }
}

/// Samples by name as shares of `total`, largest first, the top ten.
fn top_ten(by_name: HashMap<String, u64>, total: u64) -> Vec<Hot> {
    let mut hot: Vec<Hot> = by_name
        .into_iter()
        .map(|(name, samples)| Hot { name, samples, share: samples as f64 / total.max(1) as f64 })
        .collect();
    hot.sort_by(|a, b| b.samples.cmp(&a.samples).then(a.name.cmp(&b.name)));
    hot.truncate(10);
    hot
}

/// A Rust thread's closure is inlined into std's thread entry: says so rather than name std.
fn thread_closure(name: String) -> String {
    if name.ends_with("__rust_begin_short_backtrace")
        || name.contains("__rust_begin_short_backtrace+")
    {
        "thread closure (inlined into std's thread start)".to_string()
    } else {
        name
    }
}

/// On-CPU samples grouped by function (the offset dropped), largest first, the top ten.
fn hot_functions(places: &HashMap<Place, u64>, namer: &mut Namer) -> Vec<Hot> {
    let total: u64 = places.values().sum();
    let mut by_name: HashMap<String, u64> = HashMap::new();
    for (place, n) in places {
        let name = namer.name(place);
        let name = thread_closure(name);
        let function = match name.rsplit_once("+0x") {
            Some((f, _))
                if !f.is_empty()
                    && !matches!(place, Place::Module { .. } if !name.contains('!') && !name.contains("::")) =>
            {
                f.to_string()
            }
            _ if matches!(place, Place::Module { .. }) => without_offset(name),
            _ => name,
        };
        *by_name.entry(function).or_default() += n;
    }
    top_ten(by_name, total)
}

#[cfg(test)]
mod tests {
    #[test]
    fn places_without_symbols_are_grouped_by_module() {
        let group = |n: &str| super::without_offset(n.to_string());
        assert_eq!(group("liblzma.so.5.4.1+0x15a20"), "liblzma.so.5.4.1 (no symbols)");
        assert_eq!(
            group("libgomp.so.1.0.0!GOMP_critical_end"),
            "libgomp.so.1.0.0!GOMP_critical_end"
        );
        assert_eq!(group("histogram!update_histogram+0x1a"), "histogram!update_histogram+0x1a");
        assert_eq!(group("heap 0x7f00"), "heap 0x7f00");
        assert_eq!(group("std::sync::Mutex::lock+0x10"), "std::sync::Mutex::lock+0x10");
    }

    #[test]
    fn rust_core_helpers_count_in_their_caller() {
        for helper in [
            "<u64>::unchecked_add",
            "<usize as core::slice::index::SliceIndex<[T]>>::index_mut",
            "core::ptr::write",
            "<alloc::vec::Vec<T>>::push",
        ] {
            assert!(super::core_helper(helper), "{helper}");
        }
        for own in [
            "m::update_histogram",
            "<m::Histogram>::add",
            "<m::Bins as m::Update>::update",
            "update_histogram",
            "memcpy",
        ] {
            assert!(!super::core_helper(own), "{own}");
        }
    }
}
