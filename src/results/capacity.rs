//! How a run used the CPUs it could use, as stored in results.json (`threads.capacity`): the
//! capacity, the CPU the job ran, and the idle capacity by cause and phase. Computed by the
//! accounting when sampling stops; read by the analysis and the diagnosis.

use super::{Class, Phase};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What idle capacity is put down to.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum IdleKind {
    /// Work threads waiting (`class` and `object` say on what).
    Wait,
    /// Work threads runnable but not running: other processes had the CPUs.
    Runqueue,
    /// No work thread existed or had work: a serial phase, a tail, too few pieces.
    NoWork,
    /// Work threads off-CPU in waits no sample caught.
    Unlabelled,
}

/// Idle capacity put down to one cause in one phase.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct IdleShare {
    /// The kind of cause.
    pub kind: IdleKind,
    /// For waits: their class.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class: Option<Class>,
    /// For waits: the object or system call (as in `top_waits`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub object: Option<String>,
    /// The phase.
    pub phase: Phase,
    /// Idle core-seconds.
    pub core_s: f64,
    /// Work threads behind it.
    pub threads: usize,
    /// For waits: of `core_s`, the idle capacity carried forward to the wait (the tail left
    /// behind threads it made late).
    #[serde(default, skip_serializing_if = "super::is_zero")]
    pub carried_s: f64,
}

/// How much sooner a run's work threads would have ended without the waits on one object: the
/// latest end less the latest end with each thread's time in those waits taken out.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Sooner {
    /// The wait's class.
    pub class: Class,
    /// The object or system call (as in `top_waits`).
    pub object: String,
    /// Seconds.
    pub s: f64,
}

/// How one run used its CPU capacity.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Capacity {
    /// CPUs the job could use at once: min(N, CPUs) when the sweep counts workers, else the most
    /// work threads alive at once (at most the CPUs).
    pub cpus: f64,
    /// Whether `cpus` came from the swept worker count.
    pub from_axis: bool,
    /// Seconds covered.
    pub span_s: f64,
    /// Core-seconds the job's threads ran.
    pub cpu_s: f64,
    /// Core-seconds run beyond the capacity.
    pub over_s: f64,
    /// Idle capacity by cause and phase, largest first.
    pub idle: Vec<IdleShare>,
    /// Seconds of the start-up phase (before the job first used its capacity).
    pub startup_s: f64,
    /// Seconds of the tail (after it last did).
    pub tail_s: f64,
    /// Threads that did the work (ran a meaningful share of the run).
    pub work_threads: usize,
    /// Most work threads alive at once.
    pub peak_work_threads: usize,
    /// Other threads seen (coordinators, helpers).
    pub helper_threads: usize,
    /// Threads wanting a CPU at once (running or runnable), 90th percentile over time.
    #[serde(default)]
    pub demand: f64,
    /// Share of the work threads' off-CPU time that samples attributed to a wait.
    pub coverage: f64,
    /// Per wait, how much sooner the run would have ended without it, along its critical path.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sooner: Vec<Sooner>,
    /// How much sooner the run would have ended without every wait that held a work thread up,
    /// all at once (waits on two objects in turn buy together more than each alone).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sooner_all_s: Option<f64>,
}

impl Capacity {
    /// Adds another rank's or copy's capacity, as if one job had both: CPUs, CPU time and idle
    /// capacity add up (the caller bounds the CPUs by a node's), the phases and the span are the
    /// longer one's, and each wait ends the run as much sooner as it did the later of the two.
    pub fn absorb(&mut self, o: &Capacity) {
        self.cpus += o.cpus;
        self.from_axis &= o.from_axis;
        self.span_s = self.span_s.max(o.span_s);
        self.cpu_s += o.cpu_s;
        self.over_s += o.over_s;
        for i in &o.idle {
            let same = |m: &&mut IdleShare| {
                m.kind == i.kind && m.class == i.class && m.object == i.object && m.phase == i.phase
            };
            match self.idle.iter_mut().find(same) {
                Some(m) => {
                    m.core_s += i.core_s;
                    m.threads += i.threads;
                    m.carried_s += i.carried_s;
                }
                None => self.idle.push(i.clone()),
            }
        }
        self.idle.sort_by(|a, b| b.core_s.total_cmp(&a.core_s));
        self.startup_s = self.startup_s.max(o.startup_s);
        self.tail_s = self.tail_s.max(o.tail_s);
        self.work_threads += o.work_threads;
        self.peak_work_threads += o.peak_work_threads;
        self.helper_threads += o.helper_threads;
        self.demand += o.demand;
        self.coverage = self.coverage.min(o.coverage);
        for w in &o.sooner {
            match self.sooner.iter_mut().find(|m| m.class == w.class && m.object == w.object) {
                Some(m) => m.s = m.s.max(w.s),
                None => self.sooner.push(w.clone()),
            }
        }
        self.sooner_all_s = match (self.sooner_all_s, o.sooner_all_s) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
    }

    /// Idle core-seconds in all.
    pub fn idle_s(&self) -> f64 {
        self.idle.iter().map(|i| i.core_s).sum()
    }

    /// The share of the capacity (its CPUs over its span) the job's threads ran on or waited in
    /// the run queue for (other processes held the CPUs then, not a want of work); 0 with no span.
    pub fn wanted_share(&self) -> f64 {
        let whole = self.cpus * self.span_s;
        let idle: f64 =
            self.idle.iter().filter(|i| i.kind != IdleKind::Runqueue).map(|i| i.core_s).sum();
        if whole > 0.0 { (1.0 - idle / whole).clamp(0.0, 1.0) } else { 0.0 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn idle(kind: IdleKind, core_s: f64) -> IdleShare {
        IdleShare {
            kind,
            class: None,
            object: None,
            phase: Phase::Steady,
            core_s,
            threads: 2,
            carried_s: 0.0,
        }
    }

    #[test]
    fn the_run_queue_is_wanted_capacity_and_a_want_of_work_is_not() {
        let c = Capacity {
            cpus: 2.0,
            span_s: 1.0,
            idle: vec![idle(IdleKind::Runqueue, 0.3), idle(IdleKind::NoWork, 0.1)],
            ..Capacity::default()
        };
        assert!((c.wanted_share() - 0.95).abs() < 1e-9, "{}", c.wanted_share());
        assert!((c.idle_s() - 0.4).abs() < 1e-9);
        assert_eq!(Capacity::default().wanted_share(), 0.0);
    }
}
