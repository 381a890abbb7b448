//! Building a run's stack profile by phase (results' [`StackProfile`]): [`ProfileBuilder`] joins
//! the tracer's exact intervals with the stacks the /proc sampler captured for blocked threads,
//! and tells which threads run the same code.

use super::tracer::{Interval, StackSample};
use crate::results::{
    Class, OPENMP_RUNTIMES, OffCpuStack, OnCpuStack, Phase, Phases, StackFrame, StackProfile,
};
use crate::sample::unwind::{Frame, StackId, Stacks, UNMAPPED};
use std::collections::HashMap;

/// The first id of a chain whose unwinding broke, followed by its module's.
const BROKEN: u32 = u32::MAX;

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
    /// chains do the same work. Work an OpenMP runtime hands out is called from the runtime on
    /// every thread of the team, from `GOMP_parallel` on the thread that started the region and
    /// from the pool's own entry on the others: its chain starts after the runtime's last frame.
    ///
    /// A stack whose outermost frame lies in no module is one whose unwinding broke (code without
    /// unwind tables, such as hand-written SIMD, left junk read as return addresses, a chain of
    /// its own in every sample): its callers are unknown, and it counts as the module it ran in.
    pub fn code_by_thread(&self, stacks: &Stacks) -> Code {
        let (table, all) = stacks.tables();
        let module = |f: &u32| table.get(*f as usize).map(|f| f.module.as_str());
        let runtime = |f: &u32| module(f).is_some_and(dispatches);
        // A module stands for itself by the first frame of it in the table.
        let mut first_of: HashMap<&str, u32> = HashMap::new();
        self.by_thread
            .iter()
            .map(|(&tid, samples)| {
                let mut chains: HashMap<Vec<u32>, u64> = HashMap::new();
                for (&id, &n) in samples {
                    let stack = all.get(id as usize).map_or(&[][..], Vec::as_slice);
                    if let [outermost, .., leaf] = stack
                        && module(outermost).is_none_or(|m| m == UNMAPPED)
                        && let Some(m) = module(leaf)
                    {
                        let id = *first_of.entry(m).or_insert_with(|| {
                            table.iter().position(|f| f.module == m).unwrap_or(0) as u32
                        });
                        *chains.entry(vec![BROKEN, id]).or_default() += n;
                        continue;
                    }
                    let mut frames = &stack[..stack.len().saturating_sub(1)];
                    // Out of the runtime's own code (its spinning stays a chain of its own).
                    if stack.last().is_some_and(|f| !runtime(f))
                        && let Some(last) = frames.iter().rposition(runtime)
                    {
                        frames = &frames[last + 1..];
                    }
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
                        *off.entry((stack, phase, class)).or_default() +=
                            secs * n as f64 / total as f64;
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

/// Whether a module is a parallel runtime that calls the work it hands out on each thread of a
/// team.
fn dispatches(module: &str) -> bool {
    OPENMP_RUNTIMES.iter().any(|m| module.starts_with(m))
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
    Some(
        a.iter().map(|(k, &n)| (n as f64 / ta).min(b.get(k).map_or(0.0, |&m| m as f64 / tb))).sum(),
    )
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
                        p.frames.push(StackFrame {
                            function: fr.function.clone(),
                            module: fr.module.clone(),
                        });
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
        let f: Vec<Frame> = names.iter().map(|n| f(n, "prog")).collect();
        stacks.intern_frames(&f)
    }

    /// A frame of `function` in `module`.
    fn f(function: &str, module: &str) -> Frame {
        Frame { function: function.into(), module: module.into() }
    }

    /// The code by thread of one on-CPU sample per `(tid, stack)`.
    fn code_of(stacks: &Stacks, samples: &[(i32, StackId)]) -> Code {
        let mut b = ProfileBuilder::new(0, 10_000_000);
        for &(tid, stack) in samples {
            b.sample(&StackSample { pid: 1, tid, time_ns: 5, stack: Some(stack) });
        }
        b.code_by_thread(stacks)
    }

    #[test]
    fn threads_running_the_same_chains_of_callers_run_the_same_code() {
        let mut stacks = Stacks::new();
        // Two workers in one loop, sampled at different instructions; a producer elsewhere.
        let w1 = frames(&mut stacks, &["start", "worker", "mix+0x10"]);
        let w2 = frames(&mut stacks, &["start", "worker", "mix+0x24"]);
        let p = frames(&mut stacks, &["start", "producer", "mix+0x10"]);
        let code = code_of(&stacks, &[(1, w1), (1, w2), (2, w2), (2, w2), (3, p), (3, p)]);
        assert_eq!(same_code(&code[&1], &code[&2]), Some(1.0));
        assert_eq!(same_code(&code[&3], &code[&2]), Some(0.0), "the same function from other code");
        assert_eq!(same_code(&code[&1], &HashMap::new()), None);
    }

    #[test]
    fn an_openmp_teams_threads_run_the_same_code_whoever_started_the_region() {
        let mut stacks = Stacks::new();
        let gomp = "libgomp.so.1.0.0";
        let caller = stacks.intern_frames(&[
            f("main", "prog"),
            f("GOMP_parallel", gomp),
            f("main._omp_fn.0", "prog"),
        ]);
        let pooled = stacks.intern_frames(&[
            f("start_thread", "libc.so.6"),
            f("libgomp.so.1.0.0+0x1cd99", gomp),
            f("main._omp_fn.0", "prog"),
        ]);
        let spinning = stacks.intern_frames(&[
            f("start_thread", "libc.so.6"),
            f("libgomp.so.1.0.0+0x1cd99", gomp),
            f("libgomp.so.1.0.0+0x1f823", gomp),
        ]);
        let code = code_of(&stacks, &[(1, caller), (2, pooled), (3, spinning)]);
        assert_eq!(same_code(&code[&1], &code[&2]), Some(1.0));
        assert_eq!(
            same_code(&code[&3], &code[&2]),
            Some(0.0),
            "spinning in the runtime is no work"
        );
    }

    #[test]
    fn stacks_whose_unwinding_broke_count_as_the_module_they_ran_in() {
        let mut stacks = Stacks::new();
        // b3sum's hashing in hand-written SIMD: junk callers, a new one in every sample.
        let mut broken = |junk: &str, leaf: &str, module: &str| {
            stacks.intern_frames(&[f("0x1", UNMAPPED), f(junk, UNMAPPED), f(leaf, module)])
        };
        let (a, b) = (
            broken("0x947f1000947ef", "b3sum+0x41b4c", "b3sum"),
            broken("0x9f111", "b3sum+0x42b2f", "b3sum"),
        );
        let other = broken("0xa9861", "libc.so.6+0x9a0", "libc.so.6");
        // Compiled code a JIT left in anonymous memory, called from a module: not broken.
        let jit = stacks.intern_frames(&[
            f("start_thread", "libc.so.6"),
            f("0x7f00aa", UNMAPPED),
            f("0x7f00bb", UNMAPPED),
        ]);
        let code = code_of(&stacks, &[(1, a), (2, b), (3, other), (4, jit), (5, jit)]);
        assert_eq!(same_code(&code[&1], &code[&2]), Some(1.0));
        assert_eq!(same_code(&code[&1], &code[&3]), Some(0.0), "another module");
        assert_eq!(same_code(&code[&4], &code[&5]), Some(1.0));
        assert_eq!(same_code(&code[&4], &code[&1]), Some(0.0));
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
        let off = |start_ns, end_ns| Interval {
            pid: 1,
            tid: 2,
            start_ns,
            end_ns,
            on_cpu: false,
            preempted: false,
        };
        b.wait(2, 150_000_000, lock, Class::Lock);
        b.interval(&off(100_000_000, 400_000_000), &mut stacks);
        b.wait(2, 500_000_000, io, Class::Io);
        b.interval(&off(450_000_000, 550_000_000), &mut stacks);
        // Two short waits no sweep saw: shared 1:1 between the two labelled kinds.
        b.interval(&off(600_000_000, 700_000_000), &mut stacks);
        b.interval(&off(700_000_000, 800_000_000), &mut stacks);
        let p = b.finish(&mut stacks, Phases { startup_end_s: 0.0, tail_start_s: 10.0 });
        let secs =
            |c: Class| p.off_cpu.iter().filter(|s| s.class == c).map(|s| s.seconds).sum::<f64>();
        assert!((secs(Class::Lock) - 0.4).abs() < 1e-9, "{p:?}");
        assert!((secs(Class::Io) - 0.2).abs() < 1e-9, "{p:?}");
        let names: Vec<&str> =
            p.frames_of(p.off_cpu[0].stack).map(|f| f.function.as_str()).collect();
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
