//! The sampler thread: follows a process tree through /proc, reads every thread's exact counters
//! (schedstat, stat) each sweep, classifies the threads that are off-CPU, and turns it all into a
//! [`ThreadReport`] when stopped.

use super::classify::{self, Class, Site};
use super::procfs::{self, ProcFile};
use super::report::{ThreadReport, Timeline, Wait};
use super::symbols::{self, Namer, Place};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How the sampler runs.
#[derive(Clone, Copy, Debug)]
pub struct Config {
    /// Sweeps per second wanted.
    pub rate_hz: f64,
    /// Most CPU the sampler may use, as a fraction of one core; the rate lowers itself to stay under.
    pub budget: f64,
}

impl Default for Config {
    fn default() -> Config {
        Config { rate_hz: 100.0, budget: 0.03 }
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
    comm: String,
    stat: ProcFile,
    schedstat: ProcFile,
    syscall: Option<ProcFile>,
    wchan: Option<ProcFile>,
    start_s: f64,
    last_seen_s: f64,
    on_ns: u64,
    runq_ns: u64,
    utime: u64,
    stime: u64,
    /// Class of the latest off-CPU sample, for the timeline.
    current: Option<Class>,
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
    threads: HashMap<i32, Thread>,
    maps: HashMap<i32, Vec<symbols::Mapping>>,
    places: HashMap<Site, Place>,
    samples: u64,
    peak: usize,
    limits: Vec<String>,
    syscall_unreadable: bool,
    timeline: Bins,
    concurrency: Vec<f64>,
}

impl State {
    fn new(root: i32, config: Config) -> State {
        State {
            root,
            config,
            tick: procfs::ticks_per_second(),
            started: Instant::now(),
            pids: HashSet::new(),
            threads: HashMap::new(),
            maps: HashMap::new(),
            places: HashMap::new(),
            samples: 0,
            peak: 0,
            limits: Vec::new(),
            syscall_unreadable: false,
            timeline: Bins::new(),
            concurrency: Vec::new(),
        }
    }

    fn run(mut self, stop: &AtomicBool) -> ThreadReport {
        let mut last = Instant::now();
        while !stop.load(Ordering::SeqCst) {
            let cpu0 = thread_cpu_s();
            if self.samples.is_multiple_of(5) {
                self.discover();
            } else {
                self.discover_threads();
            }
            let dt = last.elapsed().as_secs_f64();
            last = Instant::now();
            self.sweep(dt);
            self.samples += 1;
            let cost = thread_cpu_s() - cpu0;
            let interval = (1.0 / self.config.rate_hz.max(0.1)).max(cost / self.config.budget.max(1e-4));
            std::thread::park_timeout(Duration::from_secs_f64(interval));
        }
        self.report()
    }

    /// Finds every process of the tree (through /proc/<pid>/task/<tid>/children) and their threads.
    fn discover(&mut self) {
        let mut queue = vec![self.root];
        let mut seen = HashSet::new();
        while let Some(pid) = queue.pop() {
            if !seen.insert(pid) {
                continue;
            }
            let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else { continue };
            self.pids.insert(pid);
            for t in tasks.flatten() {
                let Some(tid) = t.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else { continue };
                if let Ok(children) = std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/children")) {
                    queue.extend(children.split_ascii_whitespace().filter_map(|c| c.parse::<i32>().ok()));
                }
                self.add_thread(pid, tid);
            }
        }
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
        let dir = PathBuf::from(format!("/proc/{pid}/task/{tid}"));
        let (Some(mut stat), Some(schedstat)) =
            (ProcFile::open(&dir.join("stat")), ProcFile::open(&dir.join("schedstat")))
        else {
            return;
        };
        let Some(st) = stat.read().and_then(procfs::stat) else { return };
        let syscall = ProcFile::open(&dir.join("syscall"));
        if syscall.is_none() && !self.syscall_unreadable {
            self.syscall_unreadable = true;
            self.limits.push("/proc/<tid>/syscall is not readable here (ptrace policy): waits classified by wait channel and state only".into());
        }
        let start_s = st.starttime as f64 / self.tick;
        self.threads.insert(
            tid,
            Thread {
                pid,
                comm: st.comm,
                stat,
                schedstat,
                syscall,
                wchan: ProcFile::open(&dir.join("wchan")),
                start_s,
                last_seen_s: start_s,
                on_ns: 0,
                runq_ns: 0,
                utime: 0,
                stime: 0,
                current: None,
                off_samples: BTreeMap::new(),
                sites: HashMap::new(),
                alive: true,
            },
        );
    }

    fn sweep(&mut self, dt: f64) {
        let now_boot = procfs::boot_seconds();
        let tids: HashSet<u64> = self.threads.keys().map(|&t| t as u64).collect();
        let mut running_sum = 0.0;
        let mut alive = 0;
        let mut new_sites: Vec<(Site, i32)> = Vec::new();
        let mut frame: BTreeMap<Lane, f64> = BTreeMap::new();
        for (&tid, t) in self.threads.iter_mut().filter(|(_, t)| t.alive) {
            let Some(st) = t.stat.read().and_then(procfs::stat) else {
                t.alive = false;
                continue;
            };
            let Some(ss) = t.schedstat.read().and_then(procfs::schedstat) else {
                t.alive = false;
                continue;
            };
            if st.state == 'Z' || st.state == 'X' {
                t.alive = false;
                continue;
            }
            alive += 1;
            let (d_on, d_runq) = (ss.on_cpu_ns.saturating_sub(t.on_ns), ss.runq_ns.saturating_sub(t.runq_ns));
            let first = t.on_ns == 0 && t.runq_ns == 0 && t.utime == 0 && t.stime == 0;
            t.on_ns = ss.on_cpu_ns;
            t.runq_ns = ss.runq_ns;
            t.utime = st.utime;
            t.stime = st.stime;
            t.last_seen_s = now_boot;
            if st.state != 'R' {
                let syscall = t.syscall.as_mut().and_then(|f| f.read().and_then(procfs::syscall));
                let wchan = t.wchan.as_mut().and_then(|f| f.read().map(|w| w.trim().to_string())).unwrap_or_default();
                let wchan = if wchan == "0" { String::new() } else { wchan };
                let pid = t.pid;
                let (class, site) =
                    classify::blocked(st.state, syscall, &wchan, pid, |v| v != tid as u64 && tids.contains(&v));
                *t.off_samples.entry(class).or_default() += 1;
                if let Some(site) = site {
                    *t.sites.entry((site.clone(), class)).or_default() += 1;
                    if matches!(site, Site::Futex { .. }) {
                        new_sites.push((site, pid));
                    }
                }
                t.current = Some(class);
            } else {
                t.current = None;
            }
            if !first && dt > 0.0 {
                let run = (d_on as f64 * 1e-9 / dt).min(1.0);
                let wait = (d_runq as f64 * 1e-9 / dt).min(1.0 - run);
                running_sum += run;
                *frame.entry(Lane::Running).or_default() += run;
                *frame.entry(Lane::Runnable).or_default() += wait;
                let rest = (1.0 - run - wait).max(0.0);
                *frame.entry(Lane::Waiting(t.current.unwrap_or(Class::Unsampled))).or_default() += rest;
            }
        }
        for (site, pid) in new_sites {
            if let (Site::Futex { addr, .. }, false) = (&site, self.places.contains_key(&site)) {
                let place = self.place(pid, *addr);
                self.places.insert(site, place);
            }
        }
        self.peak = self.peak.max(alive);
        if dt > 0.0 && self.samples > 0 {
            let k = running_sum.round() as usize;
            if self.concurrency.len() <= k {
                self.concurrency.resize(k + 1, 0.0);
            }
            self.concurrency[k] += dt;
            self.timeline.add(self.started.elapsed().as_secs_f64(), dt, &frame);
        }
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

    fn report(self) -> ThreadReport {
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
        let mut namer = Namer::default();
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
            limits: self.limits,
        }
    }
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

    /// Adds `dt` seconds of `frame` (threads per lane) ending at `t`.
    fn add(&mut self, t: f64, dt: f64, frame: &BTreeMap<Lane, f64>) {
        let mut bin = (t / self.width) as usize;
        while bin >= MAX_BINS {
            self.width *= 2.0;
            for v in self.lanes.values_mut() {
                *v = v.chunks(2).map(|c| c.iter().sum()).collect();
            }
            bin = (t / self.width) as usize;
        }
        for (&lane, &threads) in frame {
            let v = self.lanes.entry(lane).or_default();
            if v.len() <= bin {
                v.resize(bin + 1, 0.0);
            }
            v[bin] += threads * dt;
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

/// Samples an already running process for `duration`.
pub fn attach(pid: i32, duration: Duration, config: Config) -> Option<ThreadReport> {
    if !std::path::Path::new(&format!("/proc/{pid}")).exists() {
        return None;
    }
    let s = Sampler::start(pid, config)?;
    std::thread::sleep(duration);
    Some(s.stop())
}
