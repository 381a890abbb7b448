//! The evidence layer the /proc sampler drives for one run: the tracer where the kernel allows
//! it (exact switch intervals, on-CPU stacks), the stacks of blocked threads (from their
//! `/proc/<tid>/syscall`), the wait sites named from those stacks, and the stack profile by phase.
//! It never fails: a refusal is a limits line and the /proc evidence carries on.

use super::clock;
use super::profile::ProfileBuilder;
use super::tracer::{Buffers, Drained, ThreadTotals, TraceSummary, Tracer, TracerConfig};
use crate::results::{Class, Phases, StackProfile, TracedThread, TracerReport};
use crate::sample::proc::procfs;
use crate::sample::unwind::{self, StackId, Stacks};
use std::collections::HashMap;

/// Caller frames named after the library entry point of a wait.
const SITE_CALLERS: usize = 2;

/// Stacks and intervals of one run.
pub struct Evidence {
    stacks: Stacks,
    tracer: Option<Tracer>,
    builder: ProfileBuilder,
    sites: HashMap<StackId, String>,
    limits: Vec<String>,
}

/// What the evidence layer hands back when the run ends.
#[derive(Clone, Debug, Default)]
pub struct Findings {
    /// The stack profile, when any stack was taken.
    pub stacks: Option<StackProfile>,
    /// The tracer's account, when it ran.
    pub tracer: Option<TracerReport>,
    /// Exact totals of every traced thread (empty without the tracer).
    pub threads: Vec<ThreadTotals>,
    /// Limits lines: refusals, lost records, uncovered threads or CPUs.
    pub limits: Vec<String>,
    /// What code each thread ran on a CPU (empty without on-CPU samples).
    pub code: super::profile::Code,
}

impl Evidence {
    /// Starts on process `pid` (just spawned, or running for long: its existing threads are
    /// covered too); the profile's clock starts at `origin_ns` (CLOCK_MONOTONIC, the sampler's time
    /// 0). A refused tracer leaves a limits line and stack capture of blocked threads.
    pub fn start(pid: i32, config: &TracerConfig, origin_ns: u64) -> Evidence {
        let mut limits = Vec::new();
        let tracer = match Tracer::start(pid, config) {
            Ok(t) => {
                limits.extend(t.limits().iter().cloned());
                Some(t)
            }
            Err(refused) => {
                limits.push(refused.to_string());
                None
            }
        };
        Evidence {
            stacks: Stacks::new(),
            tracer,
            builder: ProfileBuilder::new(origin_ns, config.period_ns),
            sites: HashMap::new(),
            limits,
        }
    }

    /// Whether the tracer runs (exact intervals and on-CPU stacks).
    pub fn traced(&self) -> bool {
        self.tracer.is_some()
    }

    /// CPU seconds spent so far opening files (one-offs, first use of a module).
    pub fn load_cpu_s(&self) -> f64 {
        self.stacks.load_cpu_s
    }

    /// Drains the tracer (call it every sweep) and returns what it found: the intervals that
    /// ended, the on-CPU samples and the threads caught in short waits. Give it back to
    /// [`Evidence::add`] once the caught waits are classified (and counted with
    /// [`Evidence::caught`]).
    pub fn drain(&mut self) -> Drained {
        self.stacks.next_sweep();
        let Some(t) = self.tracer.as_mut() else { return Drained::default() };
        t.drain(&mut self.stacks)
    }

    /// Adds what a drain found to the profile: samples, and intervals labelled by the waits seen
    /// in them (so the caught ones must be counted first).
    pub fn add(&mut self, d: &Drained) {
        for s in &d.samples {
            self.builder.sample(s);
        }
        for i in &d.intervals {
            self.builder.interval(i, &mut self.stacks);
        }
    }

    /// A thread the sampler found blocked: `syscall` is the text of its `/proc/<tid>/syscall`,
    /// `class` what the sampler made of the wait. Takes its stack (cached per thread, sp and pc;
    /// thrown away when the thread left that wait while its stack was read),
    /// counts the wait in the profile, and returns where the wait is taken:
    /// `pthread_mutex_lock ← update_histogram ← worker`. `None` when no stack could be taken.
    pub fn blocked(&mut self, pid: i32, tid: i32, syscall: &str, class: Class) -> Option<String> {
        let (sp, pc) = procfs::user_sp_pc(syscall)?;
        let path = format!("/proc/{pid}/task/{tid}/syscall");
        let unmoved = || {
            std::fs::read_to_string(&path)
                .is_ok_and(|now| procfs::user_sp_pc(&now) == Some((sp, pc)))
        };
        let id = self.stacks.blocked(pid, tid, sp, pc, unmoved)?;
        Some(self.wait(tid, clock::monotonic_ns(), id, class))
    }

    /// Asks the tracer, where it runs, to catch thread `tid`'s short waits as they begin.
    pub fn want_catch(&self, pid: i32, tid: i32) {
        if let Some(t) = &self.tracer {
            t.want_catch(pid, tid);
        }
    }

    /// A thread the catcher read in a short wait (see [`super::catch`]): as [`Evidence::blocked`],
    /// from the stack copied then, counted in the profile at the instant it was read.
    pub fn caught(&mut self, c: &super::catch::Catch, class: Class) -> Option<String> {
        let (sp, pc) = procfs::user_sp_pc(&c.syscall)?;
        let id = match &c.stack {
            Some(s) if !s.is_empty() => self.stacks.blocked_from(c.pid, c.tid, sp, pc, s)?,
            Some(_) => return None,
            None => self.stacks.blocked_cached(c.tid, sp, pc)?,
        };
        Some(self.wait(c.tid, c.time_ns, id, class))
    }

    /// Counts a wait at stack `id` in the profile; returns where it is taken.
    fn wait(&mut self, tid: i32, time_ns: u64, id: StackId, class: Class) -> String {
        self.builder.wait(tid, time_ns, id, class);
        let stacks = &self.stacks;
        self.sites
            .entry(id)
            .or_insert_with(|| {
                unwind::wait_site(stacks.frames(id), SITE_CALLERS).unwrap_or_default()
            })
            .clone()
    }

    /// Ends the run. `phases` places the stacks (the accounting's, so that stacks and findings
    /// speak of the same start-up and tail); `untraced_off` gives every thread's off-CPU seconds,
    /// from the counters, to be spread over the waits seen in it where the tracer did not follow
    /// it (or, once it stopped itself, beyond what it saw). The tracer's buffers come back to be
    /// let go of when there is time.
    pub fn finish(
        mut self,
        phases: Phases,
        untraced_off: &[(i32, f64)],
    ) -> (Findings, Option<Buffers>) {
        let mut summary = None;
        let mut buffers = None;
        if let Some(t) = self.tracer.take() {
            let (d, s, b) = t.finish(&mut self.stacks);
            buffers = Some(b);
            self.add(&d);
            summary = Some(s);
        }
        // A tracer that stopped itself saw each thread's waits up to then: the rest of its time
        // off a CPU, from the counters, goes to the waits sampled since (or stays unlabelled).
        let stopped = summary.as_ref().and_then(|s| s.stopped_ns);
        let now = clock::monotonic_ns();
        let traced: HashMap<i32, f64> = summary
            .iter()
            .flat_map(|s| s.threads.iter().map(|t| (t.tid, t.off_waiting_ns as f64 * 1e-9)))
            .collect();
        for &(tid, secs) in untraced_off {
            match (traced.get(&tid), stopped) {
                (None, _) => self.builder.off_cpu_unseen(tid, secs, None, now),
                (Some(&seen), Some(at)) => {
                    self.builder.off_cpu_unseen(tid, secs - seen, Some(at), now)
                }
                (Some(_), None) => {}
            }
        }
        if let Some(r) = &self.stacks.refusal {
            self.limits.push(r.clone());
        }
        let code = self.builder.code_by_thread(&self.stacks);
        let profile = self.builder.finish(&mut self.stacks, phases);
        let mut limits = self.limits;
        if let Some(s) = &summary {
            limits.extend(
                s.limits.iter().filter(|l| !limits.contains(l)).cloned().collect::<Vec<_>>(),
            );
        }
        let findings = Findings {
            stacks: (!profile.stacks.is_empty()).then_some(profile),
            tracer: summary.as_ref().map(tracer_report),
            threads: summary.map(|s| s.threads).unwrap_or_default(),
            limits,
            code,
        };
        (findings, buffers)
    }
}

/// The tracer's account of itself, from its summary.
fn tracer_report(s: &TraceSummary) -> TracerReport {
    let sum = |f: &dyn Fn(&ThreadTotals) -> u64| s.threads.iter().map(f).sum::<u64>();
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

/// Threads listed in the report.
const LISTED: usize = 16;

fn listed(threads: &[ThreadTotals]) -> Vec<TracedThread> {
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
