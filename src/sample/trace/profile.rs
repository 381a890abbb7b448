//! Call stacks of one run by phase, as stored in results.json: on-CPU stacks with their sample
//! counts and off-CPU stacks with the cause and the seconds spent, frames and stacks interned so
//! that a 64-thread run stays small. [`ProfileBuilder`] joins the tracer's exact intervals with the
//! stacks the /proc sampler captured for blocked threads.

use super::tracer::{Interval, StackSample, TraceSummary};
use crate::sample::proc::Class;
use crate::sample::unwind::{Frame, StackId, Stacks};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// Part of a run, by how fully it used the capacity.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Phase {
    /// Before the first moment the job used three quarters of its capacity.
    #[serde(rename = "start-up")]
    Startup,
    /// From then to the last such moment.
    Steady,
    /// After the last such moment.
    Tail,
}

impl Phase {
    /// Every phase in order.
    pub const ALL: [Phase; 3] = [Phase::Startup, Phase::Steady, Phase::Tail];

    /// `start-up`, `steady`, `tail`.
    pub fn name(self) -> &'static str {
        match self {
            Phase::Startup => "start-up",
            Phase::Steady => "steady",
            Phase::Tail => "tail",
        }
    }
}

/// Where the phases begin and end, in seconds from the start of sampling.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Phases {
    /// End of start-up.
    pub startup_end_s: f64,
    /// Start of the tail.
    pub tail_start_s: f64,
}

impl Phases {
    /// The phase of an instant.
    pub fn of(&self, t_s: f64) -> Phase {
        if t_s < self.startup_end_s {
            Phase::Startup
        } else if t_s >= self.tail_start_s {
            Phase::Tail
        } else {
            Phase::Steady
        }
    }
}

/// A frame: function and module.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
pub struct StackFrame {
    /// Demangled function, or `module+0x…` without a symbol.
    pub function: String,
    /// Module file name.
    pub module: String,
}

/// On-CPU samples of one stack in one phase.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct OnCpuStack {
    /// Index into `stacks`.
    pub stack: u32,
    /// The phase.
    pub phase: Phase,
    /// Samples.
    pub samples: u64,
}

/// Off-CPU time of one stack, cause and phase.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct OffCpuStack {
    /// Index into `stacks`.
    pub stack: u32,
    /// The phase.
    pub phase: Phase,
    /// What the thread waited on.
    pub class: Class,
    /// Thread seconds.
    pub seconds: f64,
}

/// The call stacks of one run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct StackProfile {
    /// Every frame once.
    pub frames: Vec<StackFrame>,
    /// Every stack once, as indices into `frames`, outermost first.
    pub stacks: Vec<Vec<u32>>,
    /// On-CPU samples (one every `sample_period_ms` of a thread's CPU time).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub on_cpu: Vec<OnCpuStack>,
    /// CPU time between on-CPU samples, milliseconds.
    #[serde(default)]
    pub sample_period_ms: f64,
    /// Off-CPU time by stack and cause.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub off_cpu: Vec<OffCpuStack>,
    /// Where the phases lie.
    pub phases: Phases,
}

impl StackProfile {
    /// The frames of stack `i`, outermost first.
    pub fn frames_of(&self, i: u32) -> impl Iterator<Item = &StackFrame> {
        self.stacks.get(i as usize).into_iter().flatten().filter_map(|&f| self.frames.get(f as usize))
    }

    /// Adds another profile (another rank or run), re-indexing its frames and stacks.
    pub fn absorb(&mut self, o: &StackProfile) {
        let mut frame_ids: HashMap<StackFrame, u32> =
            self.frames.iter().cloned().enumerate().map(|(i, f)| (f, i as u32)).collect();
        let fmap: Vec<u32> = o
            .frames
            .iter()
            .map(|f| {
                *frame_ids.entry(f.clone()).or_insert_with(|| {
                    self.frames.push(f.clone());
                    (self.frames.len() - 1) as u32
                })
            })
            .collect();
        let mut stack_ids: HashMap<Vec<u32>, u32> =
            self.stacks.iter().cloned().enumerate().map(|(i, s)| (s, i as u32)).collect();
        let smap: Vec<u32> = o
            .stacks
            .iter()
            .map(|s| {
                let s: Vec<u32> = s.iter().filter_map(|&f| fmap.get(f as usize).copied()).collect();
                *stack_ids.entry(s.clone()).or_insert_with(|| {
                    self.stacks.push(s);
                    (self.stacks.len() - 1) as u32
                })
            })
            .collect();
        for s in &o.on_cpu {
            let Some(&stack) = smap.get(s.stack as usize) else { continue };
            match self.on_cpu.iter_mut().find(|m| m.stack == stack && m.phase == s.phase) {
                Some(m) => m.samples += s.samples,
                None => self.on_cpu.push(OnCpuStack { stack, ..s.clone() }),
            }
        }
        for s in &o.off_cpu {
            let Some(&stack) = smap.get(s.stack as usize) else { continue };
            match self.off_cpu.iter_mut().find(|m| m.stack == stack && m.phase == s.phase && m.class == s.class) {
                Some(m) => m.seconds += s.seconds,
                None => self.off_cpu.push(OffCpuStack { stack, ..s.clone() }),
            }
        }
    }
}

/// The tracer's account in results.json.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TracerReport {
    /// CPU seconds the tracer used.
    pub cpu_s: f64,
    /// Records the kernel dropped (a full buffer): never silent.
    pub lost_records: u64,
    /// On-CPU samples, and how many unwound.
    pub samples: u64,
    /// See `samples`.
    pub unwound: u64,
    /// Times threads left a CPU.
    pub switches: u64,
    /// Thread seconds on a CPU, from the switch records.
    pub on_cpu_s: f64,
    /// Thread seconds off a CPU after a wait began (wake-up latency included).
    pub off_cpu_waiting_s: f64,
    /// Thread seconds off a CPU after a preemption.
    pub off_cpu_preempted_s: f64,
    /// Every CPU covered and nothing lost: the intervals are exact.
    pub exact: bool,
    /// The kernel's typical switch from one traced thread to another (median, microseconds),
    /// counted on the CPU as schedstat counts it; absent (0) when too few were seen.
    #[serde(default, skip_serializing_if = "unmeasured")]
    pub switch_us: f64,
    /// CPUs with a buffer, of those the job may use.
    pub cpus_covered: usize,
    /// See `cpus_covered`.
    pub cpus_wanted: usize,
    /// Buffer per CPU, KiB.
    pub buffer_kib: usize,
    /// The threads with the most time on a CPU (up to 16), exact.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub threads: Vec<TracedThread>,
    /// Seconds after its start at which the tracer stopped itself (the job switched too often to
    /// be watched switch by switch): the figures above cover that stretch only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped_s: Option<f64>,
}

/// Whether a figure was never measured (0).
fn unmeasured(x: &f64) -> bool {
    *x == 0.0
}

/// One traced thread's exact times.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TracedThread {
    /// Thread id.
    pub tid: i32,
    /// Process id.
    pub pid: i32,
    /// Seconds on a CPU.
    pub on_cpu_s: f64,
    /// Seconds off a CPU after a wait began (wake-up latency included).
    pub off_cpu_waiting_s: f64,
    /// Seconds off a CPU after a preemption.
    pub off_cpu_preempted_s: f64,
    /// Times it left a CPU.
    pub switches: u64,
}

impl TracerReport {
    /// The report of a tracer's summary.
    pub fn of(s: &TraceSummary) -> TracerReport {
        let sum = |f: &dyn Fn(&super::tracer::ThreadTotals) -> u64| s.threads.iter().map(f).sum::<u64>();
        TracerReport {
            cpu_s: s.cpu_s,
            lost_records: s.lost,
            samples: s.samples,
            unwound: s.unwound,
            switches: sum(&|t| t.switches),
            on_cpu_s: sum(&|t| t.on_ns) as f64 * 1e-9,
            off_cpu_waiting_s: sum(&|t| t.off_waiting_ns) as f64 * 1e-9,
            off_cpu_preempted_s: sum(&|t| t.off_preempted_ns) as f64 * 1e-9,
            exact: s.exact,
            switch_us: s.switch_ns as f64 * 1e-3,
            cpus_covered: s.cpus_covered,
            cpus_wanted: s.cpus_wanted,
            buffer_kib: s.buffer_bytes / 1024,
            threads: listed(&s.threads),
            stopped_s: s.stopped_s,
        }
    }

    /// Adds another rank's tracer.
    pub fn absorb(&mut self, o: &TracerReport) {
        self.cpu_s += o.cpu_s;
        self.lost_records += o.lost_records;
        self.samples += o.samples;
        self.unwound += o.unwound;
        self.switches += o.switches;
        self.on_cpu_s += o.on_cpu_s;
        self.off_cpu_waiting_s += o.off_cpu_waiting_s;
        self.off_cpu_preempted_s += o.off_cpu_preempted_s;
        self.exact &= o.exact;
        self.stopped_s = match (self.stopped_s, o.stopped_s) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        self.switch_us = self.switch_us.max(o.switch_us);
        self.threads.extend(o.threads.iter().cloned());
    }
}

/// Threads listed in the report.
const LISTED: usize = 16;

fn listed(threads: &[super::tracer::ThreadTotals]) -> Vec<TracedThread> {
    let mut v: Vec<TracedThread> = threads
        .iter()
        .map(|t| TracedThread {
            tid: t.tid,
            pid: t.pid,
            on_cpu_s: t.on_ns as f64 * 1e-9,
            off_cpu_waiting_s: t.off_waiting_ns as f64 * 1e-9,
            off_cpu_preempted_s: t.off_preempted_ns as f64 * 1e-9,
            switches: t.switches,
        })
        .collect();
    v.sort_by(|a, b| b.on_cpu_s.total_cmp(&a.on_cpu_s).then(a.tid.cmp(&b.tid)));
    v.truncate(LISTED);
    v
}

/// Width of the time bins the builder keeps (phases are placed to this resolution).
const BIN_NS: u64 = 10_000_000;

/// A wait seen by the sampler, waiting for the tracer's interval that holds it.
struct Label {
    time_ns: u64,
    stack: StackId,
    class: Class,
}

/// Collects a run's stacks, then places them in phases.
pub struct ProfileBuilder {
    start_ns: u64,
    period_ms: f64,
    on: HashMap<(u32, StackId), u64>,
    /// Seconds of labelled off-CPU time by (bin, stack, class).
    off: HashMap<(u32, StackId, Class), f64>,
    /// Waits seen, per thread, not yet matched with an interval.
    labels: HashMap<i32, Vec<Label>>,
    /// Labelled intervals per (thread, bin, stack, class): weights for the unlabelled time.
    weights: HashMap<(i32, u32, StackId, Class), u32>,
    /// Off-CPU seconds no label fell in, per (thread, bin).
    unlabelled: HashMap<(i32, u32), f64>,
    /// The latest on-CPU stack per thread: where it was preempted.
    last_on: HashMap<i32, StackId>,
    /// On-CPU samples per thread and stack: what code each thread runs.
    by_thread: HashMap<i32, HashMap<StackId, u64>>,
}

impl ProfileBuilder {
    /// A builder whose clock starts at `start_ns` (CLOCK_MONOTONIC), with on-CPU samples every
    /// `period_ns` of CPU time.
    pub fn new(start_ns: u64, period_ns: u64) -> ProfileBuilder {
        ProfileBuilder {
            start_ns,
            period_ms: period_ns as f64 * 1e-6,
            on: HashMap::new(),
            off: HashMap::new(),
            labels: HashMap::new(),
            weights: HashMap::new(),
            unlabelled: HashMap::new(),
            last_on: HashMap::new(),
            by_thread: HashMap::new(),
        }
    }

    fn bin(&self, t_ns: u64) -> u32 {
        (t_ns.saturating_sub(self.start_ns) / BIN_NS) as u32
    }

    /// An on-CPU sample from the tracer.
    pub fn sample(&mut self, s: &StackSample) {
        if let Some(stack) = s.stack {
            *self.on.entry((self.bin(s.time_ns), stack)).or_default() += 1;
            *self.by_thread.entry(s.tid).or_default().entry(stack).or_default() += 1;
            self.last_on.insert(s.tid, stack);
        }
    }

    /// A blocked thread seen by the sampler: its stack (from [`Stacks::blocked`]) and the class
    /// of its wait, at `time_ns` (CLOCK_MONOTONIC).
    pub fn wait(&mut self, tid: i32, time_ns: u64, stack: StackId, class: Class) {
        self.labels.entry(tid).or_default().push(Label { time_ns, stack, class });
    }

    /// An interval from the tracer: time off a CPU waiting goes to the wait seen in it, or to the
    /// pool of unlabelled time of its thread.
    pub fn interval(&mut self, i: &Interval, stacks: &mut Stacks) {
        let secs = i.end_ns.saturating_sub(i.start_ns) as f64 * 1e-9;
        if i.on_cpu {
            return;
        }
        let bin = self.bin((i.start_ns + i.end_ns) / 2);
        if i.preempted {
            let stack = match self.last_on.get(&i.tid) {
                Some(&s) => s,
                None => stacks.intern_frames(&[label_frame("[preempted]")]),
            };
            *self.off.entry((bin, stack, Class::Runqueue)).or_default() += secs;
            return;
        }
        let labels = self.labels.entry(i.tid).or_default();
        let upto = labels.partition_point(|l| l.time_ns <= i.end_ns);
        let inside: Vec<Label> = labels.drain(..upto).filter(|l| l.time_ns >= i.start_ns).collect();
        if inside.is_empty() {
            *self.unlabelled.entry((i.tid, bin)).or_default() += secs;
            return;
        }
        let share = secs / inside.len() as f64;
        for l in inside {
            *self.off.entry((bin, l.stack, l.class)).or_default() += share;
            *self.weights.entry((i.tid, bin, l.stack, l.class)).or_default() += 1;
        }
    }

    /// Off-CPU seconds of thread `tid` that no interval of the tracer carries, from its counters:
    /// all of it where the tracer did not follow the thread (refused, or not covered), what came
    /// after `from_ns` where it stopped itself (`None`: since the profile's start; `to_ns` is the
    /// sampler's end). Spread over the waits the sampler saw it in and no interval took; without
    /// any, kept with its unlabelled time in the middle of that stretch (shared at the end among
    /// the thread's other waits, or an `[unsampled wait]`), so that the profile holds all of it.
    pub fn off_cpu_unseen(&mut self, tid: i32, seconds: f64, from_ns: Option<u64>, to_ns: u64) {
        let labels = self.labels.remove(&tid).unwrap_or_default();
        if seconds <= 0.0 {
            return;
        }
        if labels.is_empty() {
            let from = from_ns.unwrap_or(self.start_ns);
            let bin = self.bin(from / 2 + to_ns.max(from) / 2);
            *self.unlabelled.entry((tid, bin)).or_default() += seconds;
            return;
        }
        let share = seconds / labels.len() as f64;
        for l in labels {
            *self.off.entry((self.bin(l.time_ns), l.stack, l.class)).or_default() += share;
        }
    }

    /// What code each thread ran on a CPU: per thread, its on-CPU samples by the chain of callers
    /// of the sampled instruction (its stack without the innermost frame, whose exact address
    /// differs from sample to sample where there are no symbols). Threads that run the same
    /// chains do the same work.
    pub fn code_by_thread(&self, stacks: &Stacks) -> Code {
        let (_, all) = stacks.tables();
        self.by_thread
            .iter()
            .map(|(&tid, samples)| {
                let mut chains: HashMap<Vec<u32>, u64> = HashMap::new();
                for (&id, &n) in samples {
                    let frames = all.get(id as usize).map_or(&[][..], |f| &f[..f.len().saturating_sub(1)]);
                    *chains.entry(frames.to_vec()).or_default() += n;
                }
                (tid, chains)
            })
            .collect()
    }

    /// The profile, placed in `phases` (the accounting's); unlabelled off-CPU time is shared among the waits labelled in the
    /// same thread and phase (or anywhere in the thread), or kept as `[unsampled wait]`.
    pub fn finish(mut self, stacks: &mut Stacks, phases: Phases) -> StackProfile {
        let bin_s = BIN_NS as f64 * 1e-9;
        let phase_of = |bin: u32| phases.of((bin as f64 + 0.5) * bin_s);
        let unsampled = stacks.intern_frames(&[label_frame("[unsampled wait]")]);
        let mut off: HashMap<(StackId, Phase, Class), f64> = HashMap::new();
        for ((bin, stack, class), s) in self.off.drain() {
            *off.entry((stack, phase_of(bin), class)).or_default() += s;
        }
        let mut pools: HashMap<(i32, Phase), f64> = HashMap::new();
        for ((tid, bin), s) in self.unlabelled.drain() {
            *pools.entry((tid, phase_of(bin))).or_default() += s;
        }
        let mut weights: HashMap<(i32, Phase), Vec<Weight>> = HashMap::new();
        let mut thread_weights: HashMap<i32, Vec<Weight>> = HashMap::new();
        for ((tid, bin, stack, class), n) in self.weights.drain() {
            weights.entry((tid, phase_of(bin))).or_default().push((stack, class, n));
            thread_weights.entry(tid).or_default().push((stack, class, n));
        }
        for ((tid, phase), secs) in pools {
            let w = weights.get(&(tid, phase)).or_else(|| thread_weights.get(&tid));
            match w {
                Some(w) => {
                    let total: u32 = w.iter().map(|x| x.2).sum();
                    for &(stack, class, n) in w {
                        *off.entry((stack, phase, class)).or_default() += secs * n as f64 / total as f64;
                    }
                }
                None => *off.entry((unsampled, phase, Class::Unsampled)).or_default() += secs,
            }
        }
        let mut on: HashMap<(StackId, Phase), u64> = HashMap::new();
        for ((bin, stack), n) in self.on.drain() {
            *on.entry((stack, phase_of(bin))).or_default() += n;
        }
        compact(stacks, on, off, phases, self.period_ms)
    }
}

/// Per thread, on-CPU samples by chain of callers (frame ids, outermost first).
pub type Code = HashMap<i32, HashMap<Vec<u32>, u64>>;

/// The share of `a`'s on-CPU samples in chains of callers that `b` runs as much (Σ min of the two
/// threads' shares per chain): 1 for threads that run the same code in the same proportions, 0
/// for threads that share none. `None` when either has no samples.
pub fn same_code(a: &HashMap<Vec<u32>, u64>, b: &HashMap<Vec<u32>, u64>) -> Option<f64> {
    let (ta, tb) = (a.values().sum::<u64>() as f64, b.values().sum::<u64>() as f64);
    if ta == 0.0 || tb == 0.0 {
        return None;
    }
    Some(a.iter().map(|(k, &n)| (n as f64 / ta).min(b.get(k).map_or(0.0, |&m| m as f64 / tb))).sum())
}

/// Labelled intervals of one stack and cause.
type Weight = (StackId, Class, u32);

/// A frame that stands for what has no stack.
fn label_frame(name: &str) -> Frame {
    Frame { function: name.into(), module: String::new() }
}

/// Keeps only the stacks and frames in use, renumbered.
fn compact(
    stacks: &Stacks,
    on: HashMap<(StackId, Phase), u64>,
    off: HashMap<(StackId, Phase, Class), f64>,
    phases: Phases,
    period_ms: f64,
) -> StackProfile {
    let (all_frames, all_stacks) = stacks.tables();
    let mut p = StackProfile { phases, sample_period_ms: period_ms, ..Default::default() };
    let mut fmap: HashMap<u32, u32> = HashMap::new();
    let mut smap: HashMap<StackId, u32> = HashMap::new();
    let mut renumber = |id: StackId, p: &mut StackProfile| -> u32 {
        *smap.entry(id).or_insert_with(|| {
            let frames = all_stacks[id as usize]
                .iter()
                .map(|&f| {
                    *fmap.entry(f).or_insert_with(|| {
                        let fr = &all_frames[f as usize];
                        p.frames.push(StackFrame { function: fr.function.clone(), module: fr.module.clone() });
                        (p.frames.len() - 1) as u32
                    })
                })
                .collect();
            p.stacks.push(frames);
            (p.stacks.len() - 1) as u32
        })
    };
    let mut on: Vec<_> = on.into_iter().collect();
    on.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    for ((id, phase), samples) in on {
        let stack = renumber(id, &mut p);
        p.on_cpu.push(OnCpuStack { stack, phase, samples });
    }
    let mut off: Vec<_> = off.into_iter().filter(|(_, s)| *s > 0.0).collect();
    off.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    for ((id, phase, class), seconds) in off {
        let stack = renumber(id, &mut p);
        p.off_cpu.push(OffCpuStack { stack, phase, class, seconds });
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frames(stacks: &mut Stacks, names: &[&str]) -> StackId {
        let f: Vec<Frame> = names.iter().map(|n| Frame { function: n.to_string(), module: "prog".into() }).collect();
        stacks.intern_frames(&f)
    }

    #[test]
    fn threads_running_the_same_chains_of_callers_run_the_same_code() {
        let mut stacks = Stacks::new();
        let mut b = ProfileBuilder::new(0, 10_000_000);
        // Two workers in one loop, sampled at different instructions; a producer elsewhere.
        let w1 = frames(&mut stacks, &["start", "worker", "mix+0x10"]);
        let w2 = frames(&mut stacks, &["start", "worker", "mix+0x24"]);
        let p = frames(&mut stacks, &["start", "producer", "mix+0x10"]);
        for (tid, stack) in [(1, w1), (1, w2), (2, w2), (2, w2), (3, p), (3, p)] {
            b.sample(&StackSample { pid: 1, tid, time_ns: 5, stack: Some(stack) });
        }
        let code = b.code_by_thread(&stacks);
        assert_eq!(same_code(&code[&1], &code[&2]), Some(1.0));
        assert_eq!(same_code(&code[&3], &code[&2]), Some(0.0), "the same function, called from other code");
        assert_eq!(same_code(&code[&1], &HashMap::new()), None);
    }

    #[test]
    fn an_instant_falls_in_its_phase() {
        let p = Phases { startup_end_s: 1.5, tail_start_s: 5.0 };
        assert_eq!((p.of(0.2), p.of(2.0), p.of(5.5)), (Phase::Startup, Phase::Steady, Phase::Tail));
    }

    #[test]
    fn exact_intervals_go_to_the_wait_seen_in_them_and_the_rest_is_shared() {
        let mut stacks = Stacks::new();
        let lock = frames(&mut stacks, &["main", "worker", "pthread_mutex_lock"]);
        let io = frames(&mut stacks, &["main", "worker", "read"]);
        let mut b = ProfileBuilder::new(0, 10_000_000);
        let off = |start_ns, end_ns| Interval { pid: 1, tid: 2, start_ns, end_ns, on_cpu: false, preempted: false };
        b.wait(2, 150_000_000, lock, Class::Lock);
        b.interval(&off(100_000_000, 400_000_000), &mut stacks);
        b.wait(2, 500_000_000, io, Class::Io);
        b.interval(&off(450_000_000, 550_000_000), &mut stacks);
        // Two short waits no sweep saw: shared 1:1 between the two labelled kinds.
        b.interval(&off(600_000_000, 700_000_000), &mut stacks);
        b.interval(&off(700_000_000, 800_000_000), &mut stacks);
        let p = b.finish(&mut stacks, Phases { startup_end_s: 0.0, tail_start_s: 10.0 });
        let secs = |c: Class| p.off_cpu.iter().filter(|s| s.class == c).map(|s| s.seconds).sum::<f64>();
        assert!((secs(Class::Lock) - 0.4).abs() < 1e-9, "{p:?}");
        assert!((secs(Class::Io) - 0.2).abs() < 1e-9, "{p:?}");
        let names: Vec<&str> = p.frames_of(p.off_cpu[0].stack).map(|f| f.function.as_str()).collect();
        assert_eq!(names, ["main", "worker", "pthread_mutex_lock"]);
    }

    #[test]
    fn profiles_of_two_ranks_add_up_with_their_frames_renumbered() {
        let mut stacks = Stacks::new();
        let a = frames(&mut stacks, &["main", "a"]);
        let mut b = ProfileBuilder::new(0, 10_000_000);
        b.sample(&StackSample { pid: 1, tid: 1, time_ns: 5, stack: Some(a) });
        let one = b.finish(&mut stacks, Phases::default());
        let mut other = Stacks::new();
        let x = frames(&mut other, &["main", "x"]);
        let a2 = frames(&mut other, &["main", "a"]);
        let mut b = ProfileBuilder::new(0, 10_000_000);
        b.sample(&StackSample { pid: 1, tid: 1, time_ns: 5, stack: Some(x) });
        b.sample(&StackSample { pid: 1, tid: 1, time_ns: 6, stack: Some(a2) });
        let two = b.finish(&mut other, Phases::default());
        let mut sum = one.clone();
        sum.absorb(&two);
        assert_eq!(sum.frames.len(), 3);
        let count = |leaf: &str| {
            sum.on_cpu
                .iter()
                .filter(|s| sum.frames_of(s.stack).last().unwrap().function == leaf)
                .map(|s| s.samples)
                .sum::<u64>()
        };
        assert_eq!((count("a"), count("x")), (2, 1));
    }
}
