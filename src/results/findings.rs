//! Findings as results.json stores them: what limits scaling, how much it matters, the evidence,
//! what to try next. [`crate::diagnose`] makes them; the reports read them. Described in
//! docs/findings.md.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What a finding is about.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, JsonSchema, PartialEq, Eq, PartialOrd, Ord)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// Efficiency stays high at the largest count.
    ScalesWell,
    /// Amdahl: a serial fraction bounds the speed-up.
    SerialFraction,
    /// More workers are slower beyond the best point.
    Retrograde,
    /// Threads wait on a contended user-space lock.
    LockContention,
    /// Workers wait for work: the feeder is the bottleneck.
    WaitForWork,
    /// More threads than CPUs: time waiting for a CPU.
    CpuOversubscription,
    /// Threads wait for the disk or the page cache.
    IoBound,
    /// Threads wait on kernel locks (the mmap lock, file locks) or spend their time in the kernel.
    KernelContention,
    /// A tail where few threads still run.
    LoadImbalance,
    /// A start-up phase where one thread runs.
    SerialPhase,
    /// Threads are busy, but each CPU-second does less work as threads are added.
    OnCpuInefficiency,
    /// The parameter does not change how many threads work.
    ThreadsIgnored,
    /// Runs are so short that start-up dominates.
    StartupDominated,
    /// Run-to-run variation too large to trust small differences.
    NoisyMeasurement,
    /// One rank (or node) finishes well after the others, which wait for it.
    RankImbalance,
    /// Ranks or copies that failed or never reported; the others' figures are kept.
    FailedRanks,
    /// Concurrent copies slow each other down: they share a saturated resource.
    CopiesInterfere,
    /// Concurrent copies run as fast as one alone.
    CopiesIndependent,
    /// The tree's memory, not the CPUs, limits the count that fits the node.
    MemoryLimit,
}

impl Kind {
    /// The name used in results.json and reports (`lock-contention`…).
    pub fn name(self) -> &'static str {
        match self {
            Kind::ScalesWell => "scales-well",
            Kind::SerialFraction => "serial-fraction",
            Kind::Retrograde => "retrograde",
            Kind::LockContention => "lock-contention",
            Kind::WaitForWork => "wait-for-work",
            Kind::CpuOversubscription => "cpu-oversubscription",
            Kind::IoBound => "io-bound",
            Kind::KernelContention => "kernel-contention",
            Kind::LoadImbalance => "load-imbalance",
            Kind::SerialPhase => "serial-phase",
            Kind::OnCpuInefficiency => "on-cpu-inefficiency",
            Kind::ThreadsIgnored => "threads-ignored",
            Kind::StartupDominated => "startup-dominated",
            Kind::NoisyMeasurement => "noisy-measurement",
            Kind::RankImbalance => "rank-imbalance",
            Kind::FailedRanks => "failed-ranks",
            Kind::CopiesInterfere => "copies-interfere",
            Kind::CopiesIndependent => "copies-independent",
            Kind::MemoryLimit => "memory-limit",
        }
    }

    /// Findings that describe the shape of the curve or the measurement rather than a cause.
    pub fn describes_curve(self) -> bool {
        matches!(self, Kind::Retrograde | Kind::SerialFraction | Kind::ScalesWell | Kind::NoisyMeasurement)
    }
}

/// How much a finding matters.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, JsonSchema, PartialEq, Eq, PartialOrd, Ord)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// Good to know.
    Info,
    /// Costs a little.
    Low,
    /// Costs a noticeable part of the scaling.
    Medium,
    /// The main limit.
    High,
}

impl Severity {
    /// The name used in reports (`high`, `medium`…).
    pub fn name(self) -> &'static str {
        match self {
            Severity::High => "high",
            Severity::Medium => "medium",
            Severity::Low => "low",
            Severity::Info => "info",
        }
    }
}

/// One finding.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct Finding {
    /// What it is about.
    pub kind: Kind,
    /// How much it matters.
    pub severity: Severity,
    /// The verdict, in one line.
    pub summary: String,
    /// Figures behind the verdict.
    pub evidence: Vec<String>,
    /// What to try next.
    pub advice: String,
    /// Share of the lost CPU capacity (capacity × wall − the baseline's CPU for the same work) that
    /// this cause explains, in percent; the shares of one point add up to at most 100.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_pct: Option<f64>,
    /// The count the finding is judged at.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<f64>,
    /// For a noisy measurement, what made it noisy (absent from other findings and from results
    /// recorded before it was kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub noise: Option<NoiseSource>,
}

/// What a noisy-measurement finding is about, so that findings are told apart by their data, not
/// their wording.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum NoiseSource {
    /// The runs of the sweep's points vary from one to the next.
    Spread,
    /// The hypervisor took CPU time from the job's CPUs for other guests.
    Steal,
    /// Other processes held CPUs the job's threads were ready to run on.
    OtherProcesses,
    /// scalescope's own threads held CPUs the job's threads were ready to run on.
    Watching,
    /// The runs cannot tell the verdict at a count.
    Undecided,
}

impl Finding {
    /// ` (explains ~40% of the lost CPU capacity)`, or nothing without a cost.
    pub fn cost_text(&self) -> String {
        self.cost_pct.map(|c| format!(" (explains ~{c:.0}% of the lost CPU capacity)")).unwrap_or_default()
    }

    /// The kind as written in results.json (`lock-contention`…).
    pub fn kind_name(&self) -> String {
        self.kind.name().to_string()
    }
}
