//! The sampler thread: follows a process tree through /proc, reads every thread's exact counters
//! (schedstat, stat) each sweep, classifies the threads that are off-CPU, and turns it all into a
//! [`ThreadReport`] when stopped.

use super::classify::{self, Class, Site};
use super::cpu::CpuSampler;
use super::procfs::{self, ProcFile};
use super::report::{Hot, ThreadReport, ThreadSummary, Timeline, Wait};
use super::symbols::{self, Namer, Place};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Context switches and I/O bytes are read every this many sweeps of a thread that ran.
const DETAIL_EVERY: u64 = 10;
/// Threads listed one by one in the report.
const LISTED_THREADS: usize = 16;

impl Thread {
    /// Reads the context switches and I/O bytes (costlier files, read now and then).
    fn read_details(&mut self) {
        if self.status.is_none() {
            self.status = ProcFile::open(&self.dir.join("status"));
        }
        if let Some(v) = self.status.as_mut().and_then(|f| f.read()).and_then(procfs::switches) {
            self.switches = v;
        }
        if self.io.is_none() {
            self.io = ProcFile::open(&self.dir.join("io"));
        }
        if let Some(v) = self.io.as_mut().and_then(|f| f.read()).and_then(procfs::io) {
            self.io_bytes = v;
        }
    }
}

/// Longest pause between sweeps when the CPU budget forces the rate down.
const MAX_INTERVAL_S: f64 = 1.0;
/// With this many threads, new ones are looked for every fifth sweep only.
const BIG_TREE: usize = 256;
/// Share of the workload's own CPU use the sampler may take when that exceeds the base budget.
const WORKLOAD_SHARE: f64 = 0.005;

/// How the sampler runs.
#[derive(Clone, Copy, Debug)]
pub struct Config {
    /// Sweeps per second wanted.
    pub rate_hz: f64,
    /// CPU the sampler may use, as a fraction of one core (or 0.5% of the workload's CPU use when
    /// that is more); the rate lowers itself to stay under.
    pub budget: f64,
}

impl Default for Config {
    fn default() -> Config {
        Config { rate_hz: 100.0, budget: 0.015 }
    }
}

/// A running sampler.
pub struct Sampler {
    stop: Arc<AtomicBool>,
    handle: std::thread::JoinHandle<ThreadReport>,
}

impl Sampler {
    /// Starts sampling the tree rooted at `root`.
    pub fn start(root: i32, config: Config) -> Option<Sampler> {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let handle = std::thread::Builder::new()
            .name("scalescope-sampler".into())
            .spawn(move || State::new(root, config).run(&flag))
            .ok()?;
        Some(Sampler { stop, handle })
    }

    /// Stops sampling and returns the report.
    pub fn stop(self) -> ThreadReport {
        self.stop.store(true, Ordering::SeqCst);
        self.handle.thread().unpark();
        self.handle.join().unwrap_or_default()
    }
}

/// Files and counters of one thread.
struct Thread {
    pid: i32,
    dir: PathBuf,
    comm: String,
    stat: ProcFile,
    schedstat: ProcFile,
    /// Opened the first time the thread is seen off-CPU.
    syscall: Option<ProcFile>,
    wchan: Option<ProcFile>,
    opened_wait_files: bool,
    start_s: f64,
    last_seen_s: f64,
    on_ns: u64,
    runq_ns: u64,
    utime: u64,
    stime: u64,
    /// Class of the latest off-CPU sample, for the timeline.
    current: Option<Class>,
    /// State letter at the latest sweep that read it.
    state: char,
    /// Sweeps that saw this thread.
    samples: u64,
    /// Sweeps after which its counters had moved.
    moved: u64,
    /// On-CPU code sampling, where allowed.
    cpu: Option<CpuSampler>,
    /// `/proc/<tid>/status` and `/proc/<tid>/io`, opened on first use.
    status: Option<ProcFile>,
    io: Option<ProcFile>,
    switches: (u64, u64),
    io_bytes: (u64, u64),
    /// Site of the latest off-CPU sample.
    last_site: Option<Site>,
    off_samples: BTreeMap<Class, u64>,
    sites: HashMap<(Site, Class), u64>,
    alive: bool,
}

struct State {
    root: i32,
    config: Config,
    tick: f64,
    started: Instant,
    pids: HashSet<i32>,
    /// PIDs seen in /proc that are not part of the tree.
    outside: HashSet<i32>,
    threads: HashMap<i32, Thread>,
    maps: HashMap<i32, Vec<symbols::Mapping>>,
    places: HashMap<Site, Place>,
    samples: u64,
    peak: usize,
    limits: Vec<String>,
    syscall_unreadable: bool,
    timeline: Bins,
    concurrency: Vec<f64>,
    /// CPUs the workload kept busy during the latest sweep interval.
    busy_cpus: f64,
    /// CPU seconds spent on one-off work: discovery, opening new threads' files.
    oneoff_s: f64,
    /// CPU seconds spent opening new threads' files (part of the one-off work).
    opening_s: f64,
    /// Threads given an on-CPU sampling event so far.
    cpu_events: usize,
    /// Whether the kernel refused on-CPU sampling.
    cpu_refused: bool,
    /// On-CPU samples by place.
    hot: HashMap<Place, u64>,
}

impl State {
    fn new(root: i32, config: Config) -> State {
        State {
            root,
            config,
            tick: procfs::ticks_per_second(),
            started: Instant::now(),
            pids: HashSet::new(),
            outside: HashSet::new(),
            threads: HashMap::new(),
            maps: HashMap::new(),
            places: HashMap::new(),
            samples: 0,
            peak: 0,
            limits: Vec::new(),
            syscall_unreadable: false,
            timeline: Bins::new(),
            concurrency: Vec::new(),
            busy_cpus: 0.0,
            oneoff_s: 0.0,
            opening_s: 0.0,
            cpu_events: 0,
            cpu_refused: false,
            hot: HashMap::new(),
        }
    }

    fn run(mut self, stop: &AtomicBool) -> ThreadReport {
        let mut last = Instant::now();
        let mut cost_avg: Option<f64> = None;
        while !stop.load(Ordering::SeqCst) {
            let cpu0 = thread_cpu_s();
            let oneoff0 = self.oneoff_s;
            if self.samples.is_multiple_of(5) {
                // Looking through /proc for new processes is a one-off per process, not the rate's cost.
                self.discover();
                self.oneoff_s += thread_cpu_s() - cpu0;
            } else if self.threads.len() < BIG_TREE {
                let opening0 = self.opening_s;
                self.discover_threads();
                self.oneoff_s += self.opening_s - opening0;
            }
            let dt = last.elapsed().as_secs_f64();
            last = Instant::now();
            self.sweep(dt);
            self.drain_cpu();
            self.samples += 1;
            // Stay within the CPU budget on the smoothed cost of a sweep; opening a new thread's
            // files is a one-off, counted in the sampler's CPU time but not here. At least 1 Hz.
            let cost = (thread_cpu_s() - cpu0 - (self.oneoff_s - oneoff0)).max(0.0);
            cost_avg = Some(cost_avg.map_or(cost, |a| 0.7 * a + 0.3 * cost));
            // The budget grows with the CPU the workload itself uses: 64 busy threads get the full
            // rate, a thousand idle ones a few sweeps a second.
            let budget = self.config.budget.max(WORKLOAD_SHARE * self.busy_cpus).max(1e-4);
            let wanted = 1.0 / self.config.rate_hz.max(0.1);
            let interval = wanted.max((cost_avg.unwrap_or(0.0) / budget).min(MAX_INTERVAL_S.max(wanted)));
            std::thread::park_timeout(Duration::from_secs_f64(interval));
        }
        self.report()
    }

    /// Finds new processes of the tree (new PIDs in /proc whose parent is in the tree) and their threads.
    fn discover(&mut self) {
        if self.pids.is_empty() {
            self.pids.insert(self.root);
        }
        let Ok(dir) = std::fs::read_dir("/proc") else { return };
        let mut fresh: Vec<(i32, i32)> = dir
            .flatten()
            .filter_map(|e| e.file_name().to_str().and_then(|s| s.parse::<i32>().ok()))
            .filter(|pid| !self.pids.contains(pid) && !self.outside.contains(pid))
            .filter_map(|pid| {
                let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
                Some((pid, procfs::stat(&stat)?.ppid))
            })
            .collect();
        // Parents first, so a child and its own child found in one scan both join the tree.
        loop {
            let before = fresh.len();
            fresh.retain(|&(pid, ppid)| {
                let joins = self.pids.contains(&ppid);
                if joins {
                    self.pids.insert(pid);
                }
                !joins
            });
            if fresh.len() == before {
                break;
            }
        }
        self.outside.extend(fresh.into_iter().map(|(pid, _)| pid));
        self.discover_threads();
    }

    /// Picks up threads born since the last sweep in the processes already known.
    fn discover_threads(&mut self) {
        let pids: Vec<i32> = self.pids.iter().copied().collect();
        for pid in pids {
            let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else { continue };
            for t in tasks.flatten() {
                if let Some(tid) = t.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) {
                    self.add_thread(pid, tid);
                }
            }
        }
    }

    fn add_thread(&mut self, pid: i32, tid: i32) {
        if self.threads.contains_key(&tid) {
            return;
        }
        let t0 = thread_cpu_s();
        self.open_thread(pid, tid);
        self.opening_s += thread_cpu_s() - t0;
    }

    /// An on-CPU sampling event for a new thread, while allowed and under the cap.
    fn open_cpu(&mut self, tid: i32) -> Option<CpuSampler> {
        if self.cpu_refused || self.cpu_events >= super::cpu::MAX_THREADS {
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
                    super::cpu::refusal(&e)
                });
                None
            }
        }
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

    fn open_thread(&mut self, pid: i32, tid: i32) {
        let dir = PathBuf::from(format!("/proc/{pid}/task/{tid}"));
        let (Some(mut stat), Some(schedstat)) =
            (ProcFile::open(&dir.join("stat")), ProcFile::open(&dir.join("schedstat")))
        else {
            return;
        };
        let Some(st) = stat.read().and_then(procfs::stat) else { return };
        let start_s = st.starttime as f64 / self.tick;
        let cpu = self.open_cpu(tid);
        self.threads.insert(
            tid,
            Thread {
                pid,
                dir,
                comm: st.comm,
                stat,
                schedstat,
                syscall: None,
                wchan: None,
                opened_wait_files: false,
                start_s,
                last_seen_s: start_s,
                on_ns: 0,
                runq_ns: 0,
                current: None,
                state: st.state,
                samples: 0,
                moved: 0,
                cpu,
                status: None,
                io: None,
                switches: (0, 0),
                io_bytes: (0, 0),
                utime: st.utime,
                stime: st.stime,
                last_site: None,
                off_samples: BTreeMap::new(),
                sites: HashMap::new(),
                alive: true,
            },
        );
    }

    /// Reads every live thread once.
    fn sweep(&mut self, dt: f64) {
        let mut oneoff = 0.0;
        let now_boot = procfs::boot_seconds();
        let tids: HashSet<u64> = self.threads.keys().map(|&t| t as u64).collect();
        let mut running_sum = 0.0;
        let mut alive = 0;
        let mut new_sites: Vec<(Site, i32)> = Vec::new();
        let mut frame: BTreeMap<Lane, f64> = BTreeMap::new();
        let mut refused = false;
        for (&tid, t) in self.threads.iter_mut().filter(|(_, t)| t.alive) {
            // schedstat first: it is cheap, and a thread whose counters have not moved has not run,
            // so its state and CPU times cannot have changed either.
            let Some(ss) = t.schedstat.read().and_then(procfs::schedstat) else {
                t.alive = false;
                continue;
            };
            let (d_on, d_runq) = (ss.on_cpu_ns.saturating_sub(t.on_ns), ss.runq_ns.saturating_sub(t.runq_ns));
            let first = t.samples == 0;
            t.samples += 1;
            let unmoved = !first && d_on == 0 && d_runq == 0;
            // On its first sweep the thread's stat was read moments ago, when it was found.
            let state = if unmoved || first {
                t.state
            } else {
                let Some(st) = t.stat.read().and_then(procfs::stat) else {
                    t.alive = false;
                    continue;
                };
                t.utime = st.utime;
                t.stime = st.stime;
                t.state = st.state;
                st.state
            };
            if state == 'Z' || state == 'X' {
                t.alive = false;
                continue;
            }
            alive += 1;
            // Threads that have not run since they were found pay nothing for these.
            if !unmoved && !first {
                t.moved += 1;
                if t.moved % DETAIL_EVERY == 1 {
                    t.read_details();
                }
            }
            t.on_ns = ss.on_cpu_ns;
            t.runq_ns = ss.runq_ns;
            t.last_seen_s = now_boot;
            if state != 'R'
                && unmoved
                && let Some(class) = t.current
            {
                // It has not run since the last sweep: still in the same wait.
                *t.off_samples.entry(class).or_default() += 1;
                if let Some(site) = t.last_site.clone() {
                    *t.sites.entry((site, class)).or_default() += 1;
                }
            } else if state != 'R' {
                if !t.opened_wait_files {
                    let t0 = thread_cpu_s();
                    t.opened_wait_files = true;
                    match ProcFile::try_open(&t.dir.join("syscall")) {
                        Ok(f) => t.syscall = Some(f),
                        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => refused = true,
                        Err(_) => {}
                    }
                    t.wchan = ProcFile::open(&t.dir.join("wchan"));
                    oneoff += thread_cpu_s() - t0;
                }
                let syscall = t.syscall.as_mut().and_then(|f| f.read().and_then(procfs::syscall));
                if syscall == Some(procfs::Syscall::Running) {
                    // It woke between the two reads: this sample finds it running, not waiting.
                    t.current = None;
                    t.last_site = None;
                    continue_timeline(&mut frame, &mut running_sum, first, dt, d_on, d_runq, None);
                    continue;
                }
                let wchan = t.wchan.as_mut().and_then(|f| f.read().map(|w| w.trim().to_string())).unwrap_or_default();
                let wchan = if wchan == "0" { String::new() } else { wchan };
                let pid = t.pid;
                let (class, site) =
                    classify::blocked(state, syscall, &wchan, pid, |v| v != tid as u64 && tids.contains(&v));
                *t.off_samples.entry(class).or_default() += 1;
                if let Some(site) = &site {
                    *t.sites.entry((site.clone(), class)).or_default() += 1;
                    if matches!(site, Site::Futex { .. }) {
                        new_sites.push((site.clone(), pid));
                    }
                }
                t.last_site = site;
                t.current = Some(class);
            } else {
                t.current = None;
            }
            continue_timeline(&mut frame, &mut running_sum, first, dt, d_on, d_runq, t.current);
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
        self.busy_cpus = running_sum;
        if dt > 0.0 && self.samples > 0 {
            let k = running_sum.round() as usize;
            if self.concurrency.len() <= k {
                self.concurrency.resize(k + 1, 0.0);
            }
            self.concurrency[k] += dt;
            self.timeline.add(self.started.elapsed().as_secs_f64(), dt, &frame);
        }
        self.oneoff_s += oneoff;
    }

    /// Resolves a futex address of `pid` while the process is alive; maps are read once and again on a miss.
    fn place(&mut self, pid: i32, addr: u64) -> Place {
        let read = || {
            std::fs::read_to_string(format!("/proc/{pid}/maps")).map(|t| symbols::parse_maps(&t)).unwrap_or_default()
        };
        let maps = self.maps.entry(pid).or_insert_with(read);
        let place = symbols::locate(maps, addr);
        if matches!(place, Place::Unknown(_)) {
            *maps = read();
            return symbols::locate(maps, addr);
        }
        place
    }

    fn report(mut self) -> ThreadReport {
        self.drain_cpu();
        // Threads waiting at the last sweep went on waiting until sampling stopped (at most one
        // interval): their off-CPU time extends in the class last seen. Running ones are not guessed.
        let now_boot = procfs::boot_seconds();
        for t in self.threads.values_mut().filter(|t| t.alive && t.current.is_some()) {
            t.last_seen_s = now_boot;
        }
        let mut classes: BTreeMap<Class, f64> = BTreeMap::new();
        let mut sites: HashMap<Site, (f64, HashSet<i32>, Vec<String>, Class)> = HashMap::new();
        for (&tid, t) in &self.threads {
            // Counters run from the thread's start, so its whole life counts, even before we saw it.
            let life = (t.last_seen_s - t.start_s).max(0.0);
            let on = t.on_ns as f64 * 1e-9;
            let runq = t.runq_ns as f64 * 1e-9;
            let ticks = (t.utime + t.stime) as f64;
            let user_frac = if ticks > 0.0 { t.utime as f64 / ticks } else { 1.0 };
            *classes.entry(Class::CpuUser).or_default() += on * user_frac;
            *classes.entry(Class::CpuKernel).or_default() += on * (1.0 - user_frac);
            *classes.entry(Class::Runqueue).or_default() += runq;
            let off = (life - on - runq).max(0.0);
            let n: u64 = t.off_samples.values().sum();
            if n == 0 {
                *classes.entry(Class::Unsampled).or_default() += off;
                continue;
            }
            let per_sample = off / n as f64;
            for (&c, &k) in &t.off_samples {
                *classes.entry(c).or_default() += per_sample * k as f64;
            }
            for ((site, class), &k) in &t.sites {
                let class = *class;
                let e = sites.entry(site.clone()).or_insert_with(|| (0.0, HashSet::new(), Vec::new(), class));
                e.0 += per_sample * k as f64;
                if e.1.insert(tid) && e.2.len() < 4 && !e.2.contains(&t.comm) {
                    e.2.push(t.comm.clone());
                }
            }
        }
        let mut listed: Vec<ThreadSummary> = self
            .threads
            .iter()
            .map(|(&tid, t)| {
                let on = t.on_ns as f64 * 1e-9;
                let runq = t.runq_ns as f64 * 1e-9;
                ThreadSummary {
                    tid,
                    pid: t.pid,
                    name: t.comm.clone(),
                    on_cpu_s: on,
                    runqueue_s: runq,
                    off_cpu_s: (t.last_seen_s - t.start_s - on - runq).max(0.0),
                    main_wait: t.off_samples.iter().max_by_key(|(_, n)| **n).map(|(c, _)| *c),
                    voluntary_switches: t.switches.0,
                    involuntary_switches: t.switches.1,
                    read_bytes: t.io_bytes.0,
                    write_bytes: t.io_bytes.1,
                }
            })
            .collect();
        let sum = |f: &dyn Fn(&ThreadSummary) -> u64| listed.iter().map(f).sum::<u64>();
        let (voluntary_switches, involuntary_switches) =
            (sum(&|t| t.voluntary_switches), sum(&|t| t.involuntary_switches));
        let (read_bytes, write_bytes) = (sum(&|t| t.read_bytes), sum(&|t| t.write_bytes));
        listed.sort_by(|a, b| b.on_cpu_s.total_cmp(&a.on_cpu_s));
        listed.truncate(LISTED_THREADS);
        let mut namer = Namer::default();
        let hot = hot_functions(&self.hot, &mut namer);
        let mut top: Vec<Wait> = sites
            .into_iter()
            .map(|(site, (seconds, waiters, names, class))| {
                let name = match &site {
                    Site::Futex { addr, .. } => {
                        namer.name(&self.places.get(&site).cloned().unwrap_or(Place::Unknown(*addr)))
                    }
                    Site::Join { pid } => format!("pthread_join in process {pid}: waiting for threads to finish"),
                    Site::Kernel { syscall, wchan } if wchan.is_empty() => syscall.clone(),
                    Site::Kernel { syscall, wchan } => format!("{syscall} in {wchan}"),
                };
                Wait { class: Some(class), name, seconds, waiters: waiters.len(), thread_names: names }
            })
            .collect();
        top.sort_by(|a, b| b.seconds.total_cmp(&a.seconds));
        top.truncate(10);
        let wall_s = self.started.elapsed().as_secs_f64();
        ThreadReport {
            wall_s,
            classes,
            threads_seen: self.threads.len(),
            processes_seen: self.pids.len(),
            peak_threads: self.peak,
            samples: self.samples,
            sample_rate_hz: if wall_s > 0.0 { self.samples as f64 / wall_s } else { 0.0 },
            sampler_cpu_s: thread_cpu_s(),
            top_waits: top,
            timeline: self.timeline.finish(),
            concurrency_s: self.concurrency,
            voluntary_switches,
            involuntary_switches,
            read_bytes,
            write_bytes,
            threads: listed,
            hot,
            limits: self.limits,
        }
    }
}

/// Adds one thread's share of the last interval to the timeline frame: on a CPU and runnable from
/// its counters, the rest in the class it was last seen waiting in.
fn continue_timeline(
    frame: &mut BTreeMap<Lane, f64>,
    running_sum: &mut f64,
    first: bool,
    dt: f64,
    d_on: u64,
    d_runq: u64,
    current: Option<Class>,
) {
    if first || dt <= 0.0 {
        return;
    }
    let run = (d_on as f64 * 1e-9 / dt).min(1.0);
    let wait = (d_runq as f64 * 1e-9 / dt).min(1.0 - run);
    *running_sum += run;
    *frame.entry(Lane::Running).or_default() += run;
    *frame.entry(Lane::Runnable).or_default() += wait;
    let rest = (1.0 - run - wait).max(0.0);
    *frame.entry(Lane::Waiting(current.unwrap_or(Class::Unsampled))).or_default() += rest;
}

/// On-CPU samples grouped by function (the offset dropped), largest first, the top ten.
fn hot_functions(places: &HashMap<Place, u64>, namer: &mut Namer) -> Vec<Hot> {
    let total: u64 = places.values().sum();
    let mut by_name: HashMap<String, u64> = HashMap::new();
    for (place, n) in places {
        let name = namer.name(place);
        // A Rust thread's closure is inlined into std's thread entry: say so rather than name std.
        let name = if name.ends_with("__rust_begin_short_backtrace") || name.contains("__rust_begin_short_backtrace+") {
            "thread closure (inlined into std's thread start)".to_string()
        } else {
            name
        };
        let function = match name.rsplit_once("+0x") {
            Some((f, _))
                if !f.is_empty()
                    && !matches!(place, Place::Module { .. } if !name.contains('!') && !name.contains("::")) =>
            {
                f.to_string()
            }
            _ => name,
        };
        *by_name.entry(function).or_default() += n;
    }
    let mut hot: Vec<Hot> = by_name
        .into_iter()
        .map(|(name, samples)| Hot { name, samples, share: samples as f64 / total.max(1) as f64 })
        .collect();
    hot.sort_by(|a, b| b.samples.cmp(&a.samples).then(a.name.cmp(&b.name)));
    hot.truncate(10);
    hot
}

/// CPU time of the calling thread.
fn thread_cpu_s() -> f64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: ts is a valid out-pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

/// A lane of the timeline.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Lane {
    Running,
    Runnable,
    Waiting(Class),
}

/// Time bins that double their width instead of growing past a bound.
struct Bins {
    width: f64,
    lanes: BTreeMap<Lane, Vec<f64>>,
}

const MAX_BINS: usize = 240;

impl Bins {
    fn new() -> Bins {
        Bins { width: 0.01, lanes: BTreeMap::new() }
    }

    /// Adds `dt` seconds of `frame` (threads per lane) ending at `t`, spread over the bins it covers.
    fn add(&mut self, t: f64, dt: f64, frame: &BTreeMap<Lane, f64>) {
        while (t / self.width) as usize >= MAX_BINS {
            self.width *= 2.0;
            for v in self.lanes.values_mut() {
                *v = v.chunks(2).map(|c| c.iter().sum()).collect();
            }
        }
        let mut from = (t - dt).max(0.0);
        while from < t {
            let bin = (from / self.width) as usize;
            let to = ((bin + 1) as f64 * self.width).min(t);
            let part = to - from;
            for (&lane, &threads) in frame {
                let v = self.lanes.entry(lane).or_default();
                if v.len() <= bin {
                    v.resize(bin + 1, 0.0);
                }
                v[bin] += threads * part;
            }
            if part <= 0.0 {
                break;
            }
            from = to;
        }
    }

    fn finish(self) -> Option<Timeline> {
        let n = self.lanes.values().map(Vec::len).max()?;
        let w = self.width;
        let lane = |l: Lane| -> Vec<f32> {
            let mut v: Vec<f32> =
                self.lanes.get(&l).map(|v| v.iter().map(|x| (x / w) as f32).collect()).unwrap_or_default();
            v.resize(n, 0.0);
            v
        };
        let waiting = self
            .lanes
            .keys()
            .filter_map(|l| if let Lane::Waiting(c) = l { Some(*c) } else { None })
            .map(|c| (c, lane(Lane::Waiting(c))))
            .collect();
        Some(Timeline { bin_s: w, running: lane(Lane::Running), runnable: lane(Lane::Runnable), waiting })
    }
}
