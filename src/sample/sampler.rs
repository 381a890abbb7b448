//! The sampler thread: follows a process tree through /proc, reads every thread's exact counters
//! (schedstat, stat) each sweep, classifies the threads that are off-CPU, records it all in the
//! history, and turns the history into a [`ThreadReport`] when stopped.

use super::account::{self, History, Interval, Label, Recording, Switches};
use super::proc::procfs::{self, ProcFile};
use super::proc::{
    self, Counts, CpuSampler, Pause, Recorder, Site, Thread, Tree, TreeMemory, Woken,
};
use super::trace::{self, Evidence, TracerConfig};
use super::unwind::{self, Place};
use crate::results::{Class, LEAN_BUSY, LEAN_RATE_HZ, ThreadReport};
use std::collections::{HashMap, HashSet, VecDeque};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

/// Longest pause between sweeps when the CPU budget forces the rate down.
const MAX_INTERVAL_S: f64 = 1.0;
/// A pause of the sampler held this long beyond its sleep, its CPU and its wait for one is the job
/// held stopped; shorter, a late wake-up.
const HELD_MIN_S: f64 = 0.05;
/// With this many threads, new ones are looked for every fifth sweep only.
const BIG_TREE: usize = 256;
/// While the tracer's records announce the job's threads, one sweep in this many still walks
/// /proc for them.
const FOLLOWED_WALK: u64 = 20;
/// Up to this many threads, new processes are looked for at every sweep (a shell script's
/// children are found as they start, not up to five sweeps later).
const SMALL_TREE: usize = 32;
/// Share of the workload's own CPU use the sampler may take when that exceeds the base budget.
const WORKLOAD_SHARE: f64 = 0.005;
/// The tracer starts this far into a run, whatever the sweep rate. A shorter run would get no
/// on-CPU sample from it (one per 10 ms of CPU) but pay for its ring buffers, which the kernel
/// allocates and zeroes while the run is timed (`true`: 1.165× hyperfine's time without the delay,
/// 1.089× with it). Threads started meanwhile are found in /proc and given events of their own,
/// as for `attach`: a longer delay would give more of them a start-up's worth of opens.
const TRACER_DELAY_S: f64 = 0.002;

/// Sweeps in a row in which no thread began to wait (the busy ones ran throughout, the others
/// stayed in the waits they were found in), after which the pause stretches while the tracer
/// records the switches: a sweep then has no wait to name, and each one took a CPU from the job
/// (two busy threads of `sysbench cpu` on two CPUs ran 2.3% slower watched, 0.4% with the pause
/// stretched).
const QUIET_SWEEPS: u32 = 3;
/// The longest pause while the job's threads all run.
const QUIET_MAX_S: f64 = 0.1;

/// Sweeps whose intervals together judge whether the job keeps its CPUs busy (a running thread's
/// counters lag by up to a tick: one interval alone misreads it).
const BUSY_SWEEPS: usize = 3;

/// The tree's memory is read at most this often…
const MEMORY_MIN_S: f64 = 0.05;
/// …and, once the run is old, about this often, when its cost allows…
const MEMORY_MAX_S: f64 = 1.0;
/// …with the pause in between this share of the run so far: a short run gets readings enough
/// for its peak, a long one one a second.
const MEMORY_RUN_SHARE: f64 = 0.01;
/// CPU the readings may take, as a fraction of one core, or [`MEMORY_WORKLOAD_SHARE`] of the
/// workload's CPU use when that is more. `smaps_rollup` walks every page table of the process
/// (6.5 ms for a process with 200 MB resident on the project's VM, about 30 µs per MB), so a
/// tree with 1 GB resident is read every 3 s or so, as the budget allows.
const MEMORY_BUDGET: f64 = 0.01;
/// Share of the workload's CPU use the memory readings may take (half the sweeps' share).
const MEMORY_WORKLOAD_SHARE: f64 = 0.0025;
/// A reading comes early when the tree's resident memory, as the sweeps see it, has grown this
/// share past the largest any reading saw (and by [`MEMORY_GROWN_KB`])…
const MEMORY_GROWN: f64 = 0.03;
/// …and by at least this much, KiB…
const MEMORY_GROWN_KB: u64 = 2048;
/// …while the readings have cost at most this share of one core over the run so far: a short
/// spike of 300 MB in a 2 s run was read at 245 MB by the paced readings alone.
const MEMORY_GROWN_BUDGET: f64 = 0.02;
/// The paced readings' share of their budget while the job keeps every CPU busy, when they take
/// their CPU from the job's threads (zstd -T2 on two CPUs: 12 readings, 10 ms of a 0.8 s run;
/// with this, 7-8 readings, 5-6 ms, the same peak PSS). Readings for growth keep their budget:
/// quartered too, forked workers sharing 200 MiB read 130.
const MEMORY_SATURATED: f64 = 0.25;

/// A window of a running thread that was off-CPU at least this long…
const CATCH_OFF_S: f64 = 0.0002;
/// …and this share of it, in waits no sweep saw, asks for short waits to be caught.
const CATCH_OFF_SHARE: f64 = 0.05;

/// How the sampler runs.
#[derive(Clone, Copy, Debug)]
pub struct Config {
    /// Sweeps per second wanted.
    pub rate_hz: f64,
    /// CPU the sampler may use, as a fraction of one core (or 0.5% of the workload's CPU use when
    /// that is more); the rate lowers itself to stay under.
    pub budget: f64,
    /// CPUs the job could use at once, when the sweep counts workers (min(N, allowed CPUs));
    /// otherwise the accounting takes the most work threads alive at once.
    pub capacity: Option<f64>,
    /// Count the threads' lives before sampling began (a run sampled from its spawn); `attach`
    /// counts only the window it watched.
    pub prior_life: bool,
    /// Run the event tracer beside the /proc sampler where the kernel allows it (exact switch
    /// intervals, on-CPU stacks), and take the stacks of blocked threads.
    pub trace: bool,
    /// Without the tracer, sample on-CPU code with an event on each thread. Like the tracer's,
    /// such events make every switch of the job's threads dearer: 3% of `pigz -p 2`'s CPU.
    pub on_cpu: bool,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            rate_hz: 100.0,
            budget: 0.015,
            capacity: None,
            prior_life: true,
            trace: true,
            on_cpu: true,
        }
    }
}

/// A running sampler.
pub struct Sampler {
    stop: Arc<AtomicBool>,
    pause: Option<Arc<Pause>>,
    thread: std::thread::Thread,
    report: mpsc::Receiver<Ended>,
}

impl Sampler {
    /// Starts sampling the tree rooted at `root`, until stopped or until `root` exits.
    pub fn start(root: i32, config: Config) -> Option<Sampler> {
        let stop = Arc::new(AtomicBool::new(false));
        let pause = Pause::new(root).map(Arc::new);
        let (flag, waits) = (stop.clone(), pause.clone());
        let (tx, report) = mpsc::sync_channel(1);
        let handle = std::thread::Builder::new()
            .name("scalescope-sampler".into())
            .spawn(move || State::new(root, config).run(&flag, waits.as_deref(), &tx))
            .ok()?;
        Some(Sampler { stop, pause, thread: handle.thread().clone(), report })
    }

    /// Asks the sampler to stop now (it stops by itself when the root exits), without waiting.
    pub fn ask_stop(&self) {
        self.stop.store(true, Ordering::SeqCst);
        match &self.pause {
            Some(p) => p.wake(),
            None => self.thread.unpark(),
        }
    }

    /// Stops sampling and returns the report, made on the caller's thread: the sampler steps aside
    /// once the root exits (SCHED_IDLE, which it cannot leave unprivileged), and on a machine other
    /// programs keep busy it took seconds to make it (the whole run of a copy under `scalescope
    /// agent`, whose exit waits for it). What the recording held (the tracer's buffers, every
    /// thread's open files) is let go of after.
    pub fn stop(self) -> ThreadReport {
        self.ask_stop();
        match self.report.recv() {
            Ok(mut e) => account::report(&mut e.recording, e.wall_s, e.cpu_s),
            Err(_) => ThreadReport::default(),
        }
    }
}

/// What the sampler hands over when it ends: the recording, the seconds it sampled and the CPU
/// its thread used.
struct Ended {
    recording: Recording,
    wall_s: f64,
    cpu_s: f64,
}

/// Everything the sampler keeps while it runs.
pub(crate) struct State {
    config: Config,
    tick: f64,
    started: Instant,
    /// When tracing is wanted and not started yet: seconds into sampling when it starts.
    trace_at: Option<f64>,
    /// The process at the root of the tree.
    root: i32,
    /// Seconds since boot when sampling began.
    started_boot: f64,
    /// The machine's busy and stolen CPU ticks when sampling began (`/proc/stat`).
    cpu_ticks: Option<(u64, u64)>,
    /// The CPUs' current-frequency files, where the kernel shows them.
    frequency: Vec<std::fs::File>,
    /// Their mean frequency at the start, MHz.
    mhz: Option<f64>,
    /// `/proc/stat`, kept open for the reading at the end.
    stat: Option<std::fs::File>,
    /// This process's CPU seconds when sampling began.
    own_cpu_s: f64,
    tree: Tree,
    threads: HashMap<i32, Thread>,
    history: History,
    /// The waits seen, indexed by their label.
    labels: Vec<(Class, Option<Site>)>,
    label_index: HashMap<(Class, Option<Site>), u32>,
    maps: HashMap<i32, Vec<unwind::Mapping>>,
    /// Futex addresses located while their process lived.
    places: HashMap<Site, Place>,
    samples: u64,
    peak: usize,
    limits: Vec<String>,
    syscall_unreadable: bool,
    /// CPUs the workload kept busy during the latest sweep interval.
    busy_cpus: f64,
    /// CPUs this process may run on, and so the job too.
    cpus: f64,
    /// CPU seconds spent on work the rate budget leaves out: discovery, opening new threads'
    /// files, a module's first symbols, the tracer's start and drains, the caught waits.
    oneoff_s: f64,
    /// Whether the latest look for threads found new ones: the tree is still growing.
    growing: bool,
    /// Threads the tracer's fork records announced since the latest look for threads.
    born: Vec<(i32, i32)>,
    /// Whether the tracer records every fork and exit of the job: new threads are then found in
    /// its records, not by walking /proc.
    follows: bool,
    /// Whether a walk of /proc since the tracer started found no thread its records had not
    /// announced.
    records_trusted: bool,
    /// Threads the records announced that were gone before they could be opened.
    unopened: Vec<(i32, i32)>,
    /// Threads given an on-CPU sampling event so far.
    cpu_events: usize,
    /// Whether the kernel refused on-CPU sampling, or it was stopped as too dear.
    cpu_refused: bool,
    /// Until this far into the run (seconds), threads get no on-CPU sampling event, as the tracer
    /// starts no earlier: its ring buffer, allocated while the run is timed, would cost a run of
    /// `true` 2% of its time for a sample it is too short to take. `None` once given.
    cpu_late: Option<f64>,
    /// On-CPU samples by place (from the per-thread events, when the tracer does not run).
    hot: HashMap<Place, u64>,
    /// The tracer and the stacks of blocked threads.
    evidence: Option<Evidence>,
    /// Per wait label, where it was taken (`pthread_mutex_lock ← update_histogram ← worker`) and
    /// how often.
    taken_at: HashMap<u32, HashMap<String, u32>>,
    /// The tracer's switch intervals, which lay out each window of a traced thread.
    switches: Switches,
    /// Threads found gone whose last window waits for the tracer's records of their exit (the
    /// drain after the sweep that found them gone brings them).
    gone: Vec<i32>,
    /// Sweeps in a row that found no thread newly waiting or off-CPU since the sweep before.
    quiet: u32,
    /// The job's CPU seconds run or waited for in the run queue, and the capacity's CPU seconds,
    /// over each of the last [`BUSY_SWEEPS`] sweeps' intervals (see [`State::busy`]).
    wanted: VecDeque<(f64, f64)>,
    /// Whether the current sweep found a thread that waited or was off-CPU.
    stirred: bool,
    /// Whether the tracer's last drain held a thread leaving its CPU of its own accord.
    waited: bool,
    /// The tree's memory and I/O, read at the pace of [`State::read_memory`].
    memory: TreeMemory,
    /// Its peaks and means so far.
    memory_seen: proc::Tracker,
    /// The run as a time series, one sample per memory reading.
    series: Recorder,
    /// When the next memory reading is due, seconds into sampling.
    memory_at: f64,
    /// The CPU the memory readings took in all.
    memory_cpu_s: f64,
    /// Each process's resident pages at the latest read of one of its threads' `stat`.
    rss_pages: HashMap<i32, u64>,
    /// Threads alive at the latest sweep.
    alive: u32,
    /// When the latest sweep was made, seconds into sampling.
    swept_at: f64,
    /// Seconds the run was held stopped: sweeps that found every thread of the tree stopped
    /// (SIGSTOP, Ctrl-Z), and pauses of the sampler itself beyond its sleep, its CPU and its
    /// wait for a CPU (the whole job suspended, as a batch system does).
    pub stopped_s: f64,
    /// The sampler thread's own schedstat, for the pauses it did not account for.
    own: Option<ProcFile>,
    /// Of the latest pause, the seconds the sampler was held stopped.
    held_s: f64,
}

impl State {
    fn new(root: i32, config: Config) -> State {
        let mut s = State {
            config,
            tick: procfs::ticks_per_second(),
            started: Instant::now(),
            switches: Switches::new(trace::monotonic_ns()),
            gone: Vec::new(),
            started_boot: procfs::boot_seconds(),
            stat: std::fs::File::open("/proc/stat").ok(),
            cpu_ticks: None,
            frequency: procfs::frequency_files(),
            mhz: None,
            own_cpu_s: procfs::process_cpu_s(),
            tree: Tree::new(root),
            threads: HashMap::new(),
            history: History::default(),
            labels: Vec::new(),
            label_index: HashMap::new(),
            maps: HashMap::new(),
            places: HashMap::new(),
            samples: 0,
            peak: 0,
            limits: Vec::new(),
            syscall_unreadable: false,
            busy_cpus: 0.0,
            cpus: crate::machine::allowed_cpus().max(1) as f64,
            oneoff_s: 0.0,
            growing: false,
            born: Vec::new(),
            follows: false,
            records_trusted: false,
            unopened: Vec::new(),
            cpu_events: 0,
            cpu_refused: false,
            cpu_late: Some(TRACER_DELAY_S),
            hot: HashMap::new(),
            trace_at: config.trace.then_some(TRACER_DELAY_S),
            root,
            evidence: None,
            taken_at: HashMap::new(),
            quiet: 0,
            wanted: VecDeque::with_capacity(BUSY_SWEEPS + 1),
            stirred: false,
            waited: false,
            memory: TreeMemory::default(),
            memory_seen: proc::Tracker::default(),
            series: Recorder::default(),
            memory_at: 0.0,
            memory_cpu_s: 0.0,
            rss_pages: HashMap::new(),
            alive: 0,
            swept_at: 0.0,
            stopped_s: 0.0,
            own: ProcFile::open(Path::new("/proc/thread-self/schedstat")),
            held_s: 0.0,
        };
        s.cpu_ticks = s.stat.as_ref().and_then(procfs::cpu_ticks_of);
        s.mhz = procfs::mean_mhz(&s.frequency);
        s
    }

    /// Samples until stopped or the root exits, then hands its recording over for the report.
    fn run(mut self, stop: &AtomicBool, pause: Option<&Pause>, report: &mpsc::SyncSender<Ended>) {
        let mut cost_avg: Option<f64> = None;
        let mut last_interval = 1.0 / self.config.rate_hz.max(0.1);
        while !stop.load(Ordering::SeqCst) {
            let cpu0 = procfs::thread_cpu_s();
            let (oneoff0, memory0) = (self.oneoff_s, self.memory_cpu_s);
            let loads0 = self.evidence.as_ref().map_or(0.0, Evidence::load_cpu_s);
            self.start_tracer();
            self.open_late_cpu();
            self.drain_tracer();
            self.discover();
            self.sweep();
            self.drain_cpu();
            self.stop_dear_cpu_events();
            self.read_memory();
            self.samples += 1;
            // Stay within the CPU budget on the smoothed cost of a sweep; opening a new thread's
            // files and a module's first use by the stacks are one-offs, and the tracer's drain
            // costs what the job's switches make it cost (`tracer.cpu_s`) whatever the rate: all
            // are counted in the sampler's CPU time but not here. At least 1 Hz.
            self.oneoff_s += self.evidence.as_ref().map_or(0.0, Evidence::load_cpu_s) - loads0;
            // The memory readings keep a budget of their own.
            let set_aside = (self.oneoff_s - oneoff0) + (self.memory_cpu_s - memory0);
            let cost = (procfs::thread_cpu_s() - cpu0 - set_aside).max(0.0);
            // The first sweep opens everything (threads, maps, symbol tables): it sets no rate.
            if self.samples > 1 {
                cost_avg = Some(cost_avg.map_or(cost, |a| 0.7 * a + 0.3 * cost));
            }
            // The budget grows with the CPU the workload itself uses: 64 busy threads get the full
            // rate, a thousand idle ones a few sweeps a second.
            let budget = self.config.budget.max(WORKLOAD_SHARE * self.busy_cpus).max(1e-4);
            let wanted = 1.0 / self.config.rate_hz.max(0.1);
            // The pause at most doubles from one sweep to the next: one dear sweep (a stack
            // unwound through a large binary's tables for the first time) had set it to 1 s at
            // once, and a 0.6 s run got no sweep but its first and last, after its threads ended.
            let paced = (cost_avg.unwrap_or(0.0) / budget)
                .min(MAX_INTERVAL_S.max(wanted))
                .min(2.0 * last_interval);
            let mut interval = wanted.max(paced);
            // Every thread ran through the last sweeps and the tracer keeps their switches: the
            // pause doubles, up to QUIET_MAX_S; a sweep that finds a wait brings the rate back.
            if self.quiet >= QUIET_SWEEPS && self.evidence.as_ref().is_some_and(Evidence::traced) {
                let stretch = f64::from(1u32 << (self.quiet - QUIET_SWEEPS + 1).min(4));
                interval = interval.max((wanted * stretch).min(QUIET_MAX_S));
            }
            // The job's threads ran or were ready to for nearly all of the capacity: the CPUs have
            // no idle time for a sweep to explain, and every sweep takes one from the job (traced
            // in every run, `pigz -p 2` paid 2.8% of its wall time at 100 Hz, 1.6% with this). The
            // rate falls to a lean run's, and comes back once those intervals leave more idle.
            if self.busy() {
                interval = interval.max(1.0 / LEAN_RATE_HZ);
            }
            if let Some(at) = self.trace_at.or(self.cpu_late) {
                interval = interval.min((at - self.started.elapsed().as_secs_f64()).max(0.0));
            }
            last_interval = interval.max(wanted);
            let slept_from = (self.started.elapsed().as_secs_f64(), self.own_schedstat_s());
            let interval = Duration::from_secs_f64(interval);
            match pause {
                // The root has exited (or a stop was asked): the last stretch and the report are
                // made while scalescope is told the run is over.
                Some(p) if p.sleep(interval) == Woken::End => {
                    step_aside();
                    break;
                }
                Some(_) => {}
                None => std::thread::park_timeout(interval),
            }
            self.held_s = self.held(slept_from, interval.as_secs_f64());
        }
        // The last stretch, up to the moment sampling stopped. A drain takes the records that
        // have settled: once they have, they hold the exits of the threads this sweep finds gone.
        if self.evidence.as_ref().is_some_and(Evidence::traced) {
            std::thread::sleep(Duration::from_nanos(trace::SETTLE_NS));
        }
        self.drain_tracer();
        let born = std::mem::take(&mut self.born);
        self.set_aside_unopened(born);
        self.sweep();
        self.close_gone();
        self.drain_cpu();
        let wall_s = self.started.elapsed().as_secs_f64();
        proc::set_live_pss_kb(0);
        let _ = report.send(Ended {
            recording: self.recording(),
            wall_s,
            cpu_s: procfs::thread_cpu_s(),
        });
    }

    /// Hands what the report is made of over to a [`Recording`].
    fn recording(&mut self) -> Recording {
        use std::mem::take;
        // A rate asked above the default that the budget held to under half of it: said, once
        // a sweep (the wording is the same for every run).
        let elapsed = self.started.elapsed().as_secs_f64();
        if self.config.rate_hz > Config::default().rate_hz
            && elapsed > 0.0
            && (self.samples as f64) < 0.5 * self.config.rate_hz * elapsed
        {
            self.limits.push(format!(
                "what waits shorter than the pause between sweeps were on: the sweeps ran at fewer than the {:.0} Hz --sample-rate asked for (each run's rate is threads.sample_rate_hz in results.json), their CPU time held under {:.1}% of a core, or {:.1}% of the job's",
                self.config.rate_hz,
                100.0 * self.config.budget,
                100.0 * WORKLOAD_SHARE
            ));
        }
        Recording {
            capacity: self.config.capacity,
            prior_life: self.config.prior_life,
            cpu_ticks: self.cpu_ticks,
            frequency: take(&mut self.frequency),
            mhz: self.mhz,
            stat: self.stat.take(),
            own_cpu_s: self.own_cpu_s,
            threads: take(&mut self.threads),
            history: take(&mut self.history),
            labels: take(&mut self.labels),
            places: take(&mut self.places),
            samples: self.samples,
            peak: self.peak,
            limits: take(&mut self.limits),
            oneoff_s: self.oneoff_s,
            unopened: take(&mut self.unopened),
            hot: take(&mut self.hot),
            evidence: self.evidence.take(),
            taken_at: take(&mut self.taken_at),
            spent: None,
            memory_seen: take(&mut self.memory_seen),
            series: take(&mut self.series),
            memory_cpu_s: self.memory_cpu_s,
            memory_refused: self.memory_refused(),
            stopped_s: self.stopped_s,
        }
    }

    /// Reads the tree's memory and I/O when a reading is due, and adds it to the run's peaks,
    /// means and series. Readings come every [`MEMORY_MIN_S`] at first, then apart by
    /// [`MEMORY_RUN_SHARE`] of the run so far up to [`MEMORY_MAX_S`], and never more often than
    /// [`MEMORY_BUDGET`] allows for what a reading costs (a thousand processes: every few seconds).
    fn read_memory(&mut self) {
        let now = self.started.elapsed().as_secs_f64();
        // The sweeps read the `stat` of every thread that ran, which holds its process's resident
        // set: summed over the tree at every sweep, it shows growth the readings have not seen.
        let pids = &self.tree.pids;
        self.rss_pages.retain(|pid, _| pids.contains(pid));
        let swept_kb = self.rss_pages.values().sum::<u64>() * proc::page_kb();
        self.memory_seen.swept(now, swept_kb, self.rss_pages.len());
        let grown = self.memory_seen.peak_rss_kb().is_some_and(|kb| {
            swept_kb as f64 > kb as f64 * (1.0 + MEMORY_GROWN) && swept_kb >= kb + MEMORY_GROWN_KB
        });
        let early = grown && self.memory_cpu_s <= MEMORY_GROWN_BUDGET * now;
        if now < self.memory_at && !early {
            return;
        }
        let t0 = procfs::thread_cpu_s();
        let reading = self.memory.read(&self.tree.pids);
        let cost = (procfs::thread_cpu_s() - t0).max(0.0);
        self.memory_cpu_s += cost;
        // A reading costs in proportion to the memory mapped: the latest cost is the best guess
        // of the next one. A reading that came early for growth leaves the next paced one where
        // it was: taken as workers fork (before their shares are counted), it had put the next
        // off past the run's end, and forked workers sharing 200 MiB read 160.
        if now >= self.memory_at {
            let share = if self.busy_cpus >= self.cpus - 0.5 { MEMORY_SATURATED } else { 1.0 };
            let budget = share * MEMORY_BUDGET.max(MEMORY_WORKLOAD_SHARE * self.busy_cpus);
            let pace = (MEMORY_RUN_SHARE * now).clamp(MEMORY_MIN_S, MEMORY_MAX_S);
            self.memory_at = now + pace.max(cost / budget);
        }
        let Some(r) = reading else { return };
        proc::set_live_pss_kb(r.mem.pss_kb);
        self.memory_seen.add(now, &r);
        let (user, system) =
            self.threads.values().fold((0u64, 0u64), |(u, s), t| (u + t.utime, s + t.stime));
        let counts = Counts {
            utime_s: user as f64 / self.tick,
            stime_s: system as f64 / self.tick,
            threads: self.alive,
        };
        self.series.offer(now, &r, counts);
    }

    /// Processes whose memory could not be read (another user's, a setuid program), if any.
    fn memory_refused(&self) -> usize {
        self.memory.refused.len()
    }

    /// Starts the tracer and the stacks of blocked threads once the run is [`TRACER_DELAY_S`] old.
    fn start_tracer(&mut self) {
        if self.trace_at.is_some_and(|at| self.started.elapsed().as_secs_f64() >= at) {
            self.trace_at = None;
            let t0 = procfs::thread_cpu_s();
            self.evidence = Some(Evidence::start(
                self.root,
                &TracerConfig::default(),
                self.switches.origin_ns(),
            ));
            // Threads already blocked are classified again at the next sweep, for their stacks:
            // a main thread that waits in pthread_join from the first millisecond otherwise stays
            // in the wait it was found in, without one.
            for t in self.threads.values_mut() {
                t.waiting = None;
            }
            self.oneoff_s += procfs::thread_cpu_s() - t0;
        }
    }

    /// Drains the tracer, when it runs, before the counters are read: the windows they close are
    /// laid out on the switch intervals it found. Its cost is counted apart (the job's switches
    /// make it, whatever the rate).
    fn drain_tracer(&mut self) {
        if let Some(e) = self.evidence.as_mut() {
            let t0 = procfs::thread_cpu_s();
            // Modules loaded meanwhile are counted by the loop, with the others.
            let loads0 = e.load_cpu_s();
            let drained = e.drain();
            // A wait is news when its thread was not in a named wait at the latest sweep: `xargs`
            // back in wait4 between its children is not, and a sweep would only name it again.
            let unnamed = |tid: i32| self.threads.get(&tid).is_none_or(|t| t.waiting.is_none());
            self.waited = !drained.caught.is_empty()
                || drained.intervals.iter().any(|i| !i.on_cpu && !i.preempted && unnamed(i.tid));
            self.switches.add(&drained);
            self.follows = drained.follows;
            self.born.extend(&drained.born);
            for &(pid, tid) in &drained.ended {
                if pid == tid {
                    self.tree.leave(pid);
                }
            }
            for c in &drained.caught {
                self.caught(c);
            }
            let loads = self.evidence.as_mut().map_or(0.0, |e| {
                e.add(&drained);
                e.load_cpu_s() - loads0
            });
            self.oneoff_s += procfs::thread_cpu_s() - t0 - loads;
        }
    }

    /// Finds new processes and threads: from the tracer's fork records while it follows the job;
    /// else in /proc (every sweep in a small tree, whose children files cost little to read, or
    /// while the latest look found new ones; else every fifth sweep: a one-off cost per process)
    /// and new threads (in a big tree, every fifth sweep too, unless the latest look found some:
    /// at the 1 Hz floor a program still creating its threads would otherwise be seen half-built
    /// for five seconds).
    fn discover(&mut self) {
        let t0 = procfs::thread_cpu_s();
        // The tracer's records name every thread the job starts once its events are on every
        // task (the tasks forked while it started have none: a shell's hundred children were
        // missed): a walk of /proc at every sweep cost 60 µs a sweep beside
        // `xargs -P 2 sha256sum`, a fifth of the sampler's time. Once a walk found no thread the
        // records had not announced, they are trusted; one sweep in FOLLOWED_WALK still walks.
        if self.follows && self.records_trusted && !self.samples.is_multiple_of(FOLLOWED_WALK) {
            let born = std::mem::take(&mut self.born);
            self.growing = false;
            for &(pid, tid) in &born {
                if !self.threads.contains_key(&tid) {
                    self.open_thread(pid, tid);
                    if self.threads.contains_key(&tid) {
                        self.tree.pids.insert(pid);
                        self.growing = true;
                    }
                }
            }
            self.set_aside_unopened(born);
            self.oneoff_s += procfs::thread_cpu_s() - t0;
            return;
        }
        let born = std::mem::take(&mut self.born);
        let announced: HashSet<i32> = born.iter().map(|&(_, tid)| tid).collect();
        let small = self.threads.len() <= SMALL_TREE && proc::children_listed();
        // While the tree grows, new processes are looked for at every sweep: a shell that starts
        // a hundred short jobs has them all exit before a fifth sweep at a few sweeps a second.
        let walked =
            if small || (self.growing && proc::children_listed()) || self.samples.is_multiple_of(5)
            {
                self.tree.scan(self.threads.len(), BIG_TREE)
            } else if self.threads.len() >= BIG_TREE && !self.growing {
                return;
            } else {
                None
            };
        self.growing = false;
        let full = walked.is_some();
        let mut unannounced = false;
        for (pid, tid) in walked.unwrap_or_else(|| self.tree.tasks()) {
            if !self.threads.contains_key(&tid) {
                unannounced |= !announced.contains(&tid);
                self.open_thread(pid, tid);
                self.growing = true;
            }
        }
        if self.follows && full {
            self.records_trusted = !unannounced;
        }
        self.set_aside_unopened(born);
        self.oneoff_s += procfs::thread_cpu_s() - t0;
    }

    /// Keeps the threads of `born` that no sweep opened (gone before one could), for the count of
    /// the threads seen.
    fn set_aside_unopened(&mut self, born: Vec<(i32, i32)>) {
        let threads = &self.threads;
        self.unopened.extend(born.into_iter().filter(|(_, tid)| !threads.contains_key(tid)));
    }

    fn open_thread(&mut self, pid: i32, tid: i32) {
        let track = self.history.tracks.len();
        let Some(mut t) = Thread::open(pid, tid, track, self.tick) else { return };
        self.rss_pages.entry(pid).or_insert(t.rss_pages);
        self.history.add_thread();
        t.cpu = self.open_cpu(tid);
        self.threads.insert(tid, t);
    }

    /// Gives the threads found so far their on-CPU sampling events, once the run is old enough.
    fn open_late_cpu(&mut self) {
        if self.cpu_late.is_some_and(|at| self.started.elapsed().as_secs_f64() >= at) {
            self.cpu_late = None;
            let waiting: Vec<i32> =
                self.threads.iter().filter(|(_, t)| t.cpu.is_none()).map(|(&tid, _)| tid).collect();
            for tid in waiting {
                let cpu = self.open_cpu(tid);
                if let Some(t) = self.threads.get_mut(&tid) {
                    t.cpu = cpu;
                }
            }
        }
    }

    /// An on-CPU sampling event for a new thread, while allowed and under the cap, when the tracer
    /// (whose stacks say more) does not run.
    fn open_cpu(&mut self, tid: i32) -> Option<CpuSampler> {
        if self.cpu_refused
            || !self.config.on_cpu
            || self.cpu_late.is_some()
            || self.cpu_events >= proc::MAX_CPU_EVENTS
            || self.evidence.as_ref().is_some_and(Evidence::traced)
        {
            return None;
        }
        match CpuSampler::open(tid) {
            Ok(s) => {
                self.cpu_events += 1;
                Some(s)
            }
            Err(e) if e.raw_os_error() == Some(libc::ESRCH) => None,
            Err(e) => {
                self.cpu_refused = true;
                self.limits.push(if self.cpu_events > 0 {
                    format!(
                        "on-CPU code sampled in the first {} threads only (the kernel refused more: {e}; see kernel.perf_event_mlock_kb)",
                        self.cpu_events
                    )
                } else {
                    proc::cpu_refusal(&e)
                });
                None
            }
        }
    }

    /// Closes the per-thread on-CPU sampling events when the job's threads leave their CPUs so
    /// often that the kernel's switching of the events with them slows them down, by the
    /// tracer's measure ([`trace::MAX_SWITCHES_PER_CPU_S`]): two threads passing a byte through
    /// pipes ran at half their speed beside them.
    fn stop_dear_cpu_events(&mut self) {
        if self.cpu_refused
            || self.cpu_events == 0
            || self.started.elapsed().as_secs_f64() < trace::JUDGE_AFTER_S
        {
            return;
        }
        let sampled = || self.threads.values().filter(|t| t.cpu.is_some());
        let switches: u64 = sampled().map(|t| t.switches.0 + t.switches.1).sum();
        let on_s = sampled().map(|t| t.on_ns).sum::<u64>() as f64 * 1e-9;
        if !trace::too_many_switches(switches, on_s) {
            return;
        }
        self.drain_cpu();
        for t in self.threads.values_mut() {
            t.cpu = None;
        }
        self.cpu_refused = true;
        self.limits.push(format!(
            "on-CPU sampling: stopped early in the run, the job's threads leaving a CPU more than {:.0} times per second of CPU they used (sampling them would have slowed them): the hot code is that of the start only",
            trace::MAX_SWITCHES_PER_CPU_S
        ));
    }

    /// Takes the on-CPU samples of every thread and locates them while the processes live, each
    /// distinct instruction pointer once.
    fn drain_cpu(&mut self) {
        let mut ips: HashMap<(i32, u64), u64> = HashMap::new();
        for t in self.threads.values_mut() {
            if let Some(c) = t.cpu.as_mut() {
                c.drain(|pid, ip| *ips.entry((pid, ip)).or_default() += 1);
            }
        }
        for ((pid, ip), n) in ips {
            let place = self.place(pid, ip);
            *self.hot.entry(place).or_default() += n;
        }
    }

    fn label(&mut self, class: Class, site: Option<Site>) -> u32 {
        let key = (class, site);
        if let Some(&l) = self.label_index.get(&key) {
            return l;
        }
        let l = self.labels.len() as u32;
        self.labels.push(key.clone());
        self.label_index.insert(key, l);
        l
    }

    /// Reads every live thread once and records what it did since the previous read.
    fn sweep(&mut self) {
        let now = self.started.elapsed().as_secs_f64();
        self.close_gone();
        let tids: Vec<i32> =
            self.threads.iter().filter(|(_, t)| t.alive).map(|(&tid, _)| tid).collect();
        let mut running_sum = 0.0;
        let mut wanted_s = 0.0;
        let mut alive = 0;
        let mut refused = false;
        let mut new_sites: Vec<(Site, i32)> = Vec::new();
        // New threads are news only while /proc is walked for them: the tracer's records time
        // them exactly, and one that waits at its first sweep stirs below.
        self.stirred = (self.growing && !self.follows) || self.waited;
        for tid in tids {
            let Some((seen, wanted)) = self.read_thread(tid, now, &mut refused, &mut new_sites)
            else {
                continue;
            };
            alive += 1;
            running_sum += seen;
            wanted_s += wanted;
        }
        if refused && !self.syscall_unreadable {
            self.syscall_unreadable = true;
            self.limits.push("/proc/<tid>/syscall is not readable here (ptrace policy): waits classified by wait channel and state only".into());
        }
        for (site, pid) in new_sites {
            if let (Site::Futex { addr, .. }, false) = (&site, self.places.contains_key(&site)) {
                let place = self.place(pid, *addr);
                self.places.insert(site, place);
            }
        }
        self.peak = self.peak.max(alive);
        self.alive = alive as u32;
        let all_stopped = alive > 0
            && self.threads.values().filter(|t| t.alive).all(|t| matches!(t.state, 'T' | 't'));
        let since = now - self.swept_at;
        let stopped = if all_stopped { since } else { 0.0 };
        self.stopped_s += stopped.max(std::mem::take(&mut self.held_s));
        self.swept_at = now;
        self.busy_cpus = running_sum;
        let capacity = self.config.capacity.unwrap_or(self.cpus);
        if self.wanted.len() == BUSY_SWEEPS {
            self.wanted.pop_front();
        }
        self.wanted.push_back((wanted_s, capacity * since));
        self.quiet = if self.stirred || alive == 0 { 0 } else { self.quiet + 1 };
    }

    /// Records the last window of every thread [`State::went`] marked gone, from the tracer's
    /// records up to its exit (see [`Switches::last_window`]).
    fn close_gone(&mut self) {
        for tid in std::mem::take(&mut self.gone) {
            let Some(t) = self.threads.get(&tid) else { continue };
            if let Some(mut iv) = self.switches.last_window(tid, t.read_at) {
                iv.label = t.waiting;
                self.history.record(t.track, &iv);
            }
        }
    }

    /// Marks thread `tid` gone; its last window is recorded at the next sweep.
    fn went(&mut self, tid: i32) {
        if let Some(t) = self.threads.get_mut(&tid) {
            t.alive = false;
            if self.evidence.as_ref().is_some_and(Evidence::traced) {
                self.gone.push(tid);
            }
        }
    }

    /// The sampler thread's own time on a CPU and waiting for one, in seconds.
    fn own_schedstat_s(&mut self) -> Option<f64> {
        let ss = self.own.as_mut()?.read().and_then(procfs::schedstat)?;
        Some((ss.on_cpu_ns + ss.runq_ns) as f64 * 1e-9)
    }

    /// Seconds of the pause that began at `from` (time into sampling, own schedstat) that the
    /// sampler spent neither asleep for `interval`, nor on a CPU, nor waiting for one: the time
    /// the whole job was held stopped. Shorter holds ([`HELD_MIN_S`]) are a late wake-up.
    fn held(&mut self, from: (f64, Option<f64>), interval: f64) -> f64 {
        let (Some(before), Some(after)) = (from.1, self.own_schedstat_s()) else { return 0.0 };
        let pause = self.started.elapsed().as_secs_f64() - from.0;
        let held = pause - interval - (after - before);
        if held >= HELD_MIN_S { held } else { 0.0 }
    }

    /// Whether the job's threads ran or waited in the run queue for [`LEAN_BUSY`] or more of the
    /// capacity over the last [`BUSY_SWEEPS`] sweeps' intervals: the rule that watches a point's
    /// later runs lean (`exec`), applied within a run.
    fn busy(&self) -> bool {
        let (wanted, whole) = self.wanted.iter().fold((0.0, 0.0), |(w, c), &(a, b)| (w + a, c + b));
        self.wanted.len() == BUSY_SWEEPS && whole > 0.0 && wanted >= LEAN_BUSY * whole
    }

    /// Reads one thread; returns the CPUs it used over the interval and the seconds it ran or
    /// waited in the run queue, `None` when it is gone.
    fn read_thread(
        &mut self,
        tid: i32,
        now: f64,
        refused: &mut bool,
        new_sites: &mut Vec<(Site, i32)>,
    ) -> Option<(f64, f64)> {
        let t = self.threads.get_mut(&tid)?;
        // schedstat first: it is cheap, and a thread whose counters have not moved has not run,
        // so its state and CPU times cannot have changed either.
        let Some(ss) = t.schedstat.read().and_then(procfs::schedstat) else {
            self.went(tid);
            return None;
        };
        let first = t.samples == 0;
        let (d_on, d_runq) =
            (ss.on_cpu_ns.saturating_sub(t.on_ns), ss.runq_ns.saturating_sub(t.runq_ns));
        let unmoved = !first && d_on == 0 && d_runq == 0;
        t.samples += 1;
        t.on_ns = ss.on_cpu_ns;
        t.runq_ns = ss.runq_ns;
        // On its first sweep the thread's stat was read moments ago, when it was found.
        if !unmoved && !first {
            let st = t.stat.read().and_then(procfs::stat);
            let Some(st) = st else {
                self.went(tid);
                return None;
            };
            t.utime = st.utime;
            t.stime = st.stime;
            t.state = st.state;
            // A thread names itself after it starts (Rust and pthread_setname_np do it from
            // inside): the name read when it was found may still be its parent's.
            if st.comm != t.comm {
                t.comm = st.comm;
            }
            t.moved();
            self.rss_pages.insert(t.pid, st.rss_pages);
        }
        if t.state == 'Z' || t.state == 'X' {
            self.went(tid);
            return None;
        }
        let previous = t.waiting;
        let waiting = if t.state == 'R' {
            None
        } else if unmoved && previous.is_some() {
            // It has not run since the last sweep: still in the same wait.
            previous
        } else {
            self.classify(tid, refused, new_sites)
        };
        let t = self.threads.get_mut(&tid)?;
        t.waiting = waiting;
        // Off-CPU time since the previous read is put down to the wait it is in now, else to the
        // one it was in then (it woke up in between), else to a short wait it was caught in.
        let caught = t.caught.take().map(|(_, l)| l);
        let label: Label = waiting.or(previous).or(caught);
        let (running, pid) = (t.state == 'R', t.pid);
        let from = if first {
            let born = (t.start_boot_s - self.started_boot).max(0.0);
            if !self.config.prior_life && t.start_boot_s < self.started_boot {
                // attach: the counters so far are the baseline, not part of the window.
                t.read_at = now;
                return Some((0.0, 0.0));
            }
            born.min(now)
        } else {
            t.read_at
        };
        let span = now - from;
        let (mut on, mut runq) = (d_on as f64 * 1e-9, d_runq as f64 * 1e-9);
        t.read_at = now;
        let track = t.track;
        let excess = on + runq - span;
        if excess > 0.0 {
            // Counters caught up with earlier intervals: give that time back to them.
            let back =
                self.history.settle(track, excess * on / (on + runq), excess * runq / (on + runq));
            let keep = ((on + runq - back) / (on + runq)).max(0.0);
            (on, runq) = (on * keep, runq * keep);
            let fit = span / (on + runq).max(span);
            (on, runq) = (on * fit, runq * fit);
        }
        let off = (span - on - runq).max(0.0);
        // A thread that ran since the last sweep and waits now in another wait is news; one still
        // in the wait it was found in (a main thread in pthread_join), or back in it (`xargs` in
        // wait4 between two children), is not. Waits in between are the tracer's to tell
        // (`waited`): a running thread's counters lag by up to a tick, so its off-CPU time here is
        // no sign of one.
        if !unmoved && waiting.is_some() && waiting != previous {
            self.stirred = true;
        }
        // Waits no sweep could name: the tracer is asked to catch some as they begin.
        if label.is_none()
            && running
            && off >= CATCH_OFF_S
            && off >= CATCH_OFF_SHARE * span
            && let Some(e) = &self.evidence
        {
            e.want_catch(pid, tid);
        }
        let iv = Interval { from, to: now, on, runq, off, label };
        for part in self.switches.lay_out(tid, &iv) {
            self.history.record(track, &part);
        }
        Some((if span > 0.0 { on / span } else { 0.0 }, on + runq))
    }

    /// Classifies an off-CPU thread by its system call, wait channel and state; `None` when it
    /// woke between the reads (found running).
    fn classify(
        &mut self,
        tid: i32,
        refused: &mut bool,
        new_sites: &mut Vec<(Site, i32)>,
    ) -> Option<u32> {
        let t = self.threads.get_mut(&tid)?;
        if !t.opened_wait_files {
            let t0 = procfs::thread_cpu_s();
            t.opened_wait_files = true;
            match ProcFile::try_open(&t.dir.join("syscall")) {
                Ok(f) => t.syscall = Some(f),
                Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => *refused = true,
                Err(_) => {}
            }
            t.wchan = ProcFile::open(&t.dir.join("wchan"));
            self.oneoff_s += procfs::thread_cpu_s() - t0;
        }
        let text = t.syscall.as_mut().and_then(|f| f.read().map(str::to_owned));
        let syscall = text.as_deref().and_then(procfs::syscall);
        if syscall == Some(procfs::Syscall::Running) {
            return None;
        }
        let wchan = t
            .wchan
            .as_mut()
            .and_then(|f| f.read().map(|w| w.trim().to_string()))
            .unwrap_or_default();
        let wchan = if wchan == "0" { String::new() } else { wchan };
        let (pid, state) = (t.pid, t.state);
        let threads = &self.threads;
        let (class, site) = proc::blocked(state, syscall, &wchan, pid, |v| {
            v != tid as u64 && threads.contains_key(&(v as i32))
        });
        if let Some(s @ Site::Futex { .. }) = &site {
            new_sites.push((s.clone(), pid));
        }
        let label = self.label(class, site);
        // Where the wait is taken, from the thread's stack (cached per thread, sp and pc).
        // The first unwinding of a wait through a module's tables is a one-off; a wait found
        // again costs a lookup.
        // (Modules loaded meanwhile are counted by the loop, with the others.)
        let (t0, loads0) =
            (procfs::thread_cpu_s(), self.evidence.as_ref().map_or(0.0, Evidence::load_cpu_s));
        if let (Some(e), Some(text)) = (self.evidence.as_mut(), text.as_deref())
            && let Some(at) = e.blocked(pid, tid, text, class).filter(|a| !a.is_empty())
        {
            *self.taken_at.entry(label).or_default().entry(at).or_default() += 1;
        }
        let loads = self.evidence.as_ref().map_or(0.0, Evidence::load_cpu_s) - loads0;
        self.oneoff_s += procfs::thread_cpu_s() - t0 - loads;
        Some(label)
    }

    /// A thread the catcher read in a short wait: its label, kept for the thread's next window,
    /// and where the wait is taken, from the stack copied then.
    fn caught(&mut self, c: &trace::Catch) {
        if !self.threads.contains_key(&c.tid) {
            return;
        }
        let threads = &self.threads;
        let syscall = procfs::syscall(&c.syscall);
        let (class, site) = proc::blocked(c.state, syscall, "", c.pid, |v| {
            v != c.tid as u64 && threads.contains_key(&(v as i32))
        });
        if let Some(s @ Site::Futex { addr, .. }) = &site
            && !self.places.contains_key(s)
        {
            let place = self.place(c.pid, *addr);
            self.places.insert(s.clone(), place);
        }
        let label = self.label(class, site);
        if let Some(at) =
            self.evidence.as_mut().and_then(|e| e.caught(c, class)).filter(|a| !a.is_empty())
        {
            *self.taken_at.entry(label).or_default().entry(at).or_default() += 1;
        }
        let at = (c.time_ns.saturating_sub(self.switches.origin_ns())) as f64 * 1e-9;
        if let Some(t) = self.threads.get_mut(&c.tid) {
            t.caught = Some((at, label));
        }
    }

    /// Resolves an address of `pid` while the process is alive; maps are read once and again on a miss.
    fn place(&mut self, pid: i32, addr: u64) -> Place {
        let read = || {
            std::fs::read_to_string(format!("/proc/{pid}/maps"))
                .map(|t| unwind::parse_maps(&t))
                .unwrap_or_default()
        };
        let maps = self.maps.entry(pid).or_insert_with(read);
        let place = unwind::locate(maps, addr);
        if matches!(place, Place::Unknown(_)) {
            *maps = read();
            return unwind::locate(maps, addr);
        }
        place
    }
}

/// Lets any other thread of the machine run before this one from now on (SCHED_IDLE, for this
/// thread only; it ends with the run). The root's exit wakes the sampler just before it wakes the
/// spawn helper, which stops the run's clock: the sampler's last sweep and report must not delay
/// that on a machine with few CPUs.
fn step_aside() {
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: changes the calling thread's policy; param is plain data.
    unsafe { libc::sched_setscheduler(0, libc::SCHED_IDLE, &param) };
}
