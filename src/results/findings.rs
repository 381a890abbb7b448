//! Findings as results.json stores them: what limits scaling, how much it matters, the evidence,
//! what to try next. [`crate::diagnose`] makes them; the reports read them. Described in
//! docs/findings.md.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What a finding is about.
#[derive(
    Clone, Copy, Debug, Serialize, Deserialize, JsonSchema, PartialEq, Eq, PartialOrd, Ord,
)]
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
    /// Every count ran for the same time doing more work: a speed-up from wall time says nothing.
    FixedTime,
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
            Kind::FixedTime => "fixed-time",
        }
    }

    /// Findings that describe the shape of the curve or the measurement rather than a cause.
    pub fn describes_curve(self) -> bool {
        matches!(
            self,
            Kind::Retrograde | Kind::SerialFraction | Kind::ScalesWell | Kind::NoisyMeasurement
        )
    }
}

/// How much a finding matters.
#[derive(
    Clone, Copy, Debug, Serialize, Deserialize, JsonSchema, PartialEq, Eq, PartialOrd, Ord,
)]
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
    /// The same share in each run of its point, in percent (`cost_pct` is their mean): how sure
    /// the share is, and so its severity where the share decides it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cost_per_run_pct: Vec<f64>,
    /// The count the finding is judged at.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<f64>,
    /// For a noisy measurement, what made it noisy (absent from other findings and from results
    /// recorded before it was kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub noise: Option<NoiseSource>,
    /// For a cause: the speed-up predicted without it, at the count it is judged at.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub what_if: Option<WhatIf>,
}

/// What removing a finding's cause would buy: the run shortened along its critical path (a wait
/// off it, or one other work would have filled, buys less than its share) and the speed-up that
/// follows (docs/findings.md, "what fixing it buys").
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct WhatIf {
    /// The count it is predicted at.
    pub at: f64,
    /// The speed-up measured there.
    pub speedup: f64,
    /// The speed-up predicted without the cause.
    pub without: f64,
    /// 95% interval of the prediction (the runs resampled, and the measured speed-up's own
    /// interval), when there are several runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub without_ci95: Option<[f64; 2]>,
    /// Mean seconds per run the run would be shorter.
    pub sooner_s: f64,
    /// The cost removed is CPU spent spinning on a lock: the prediction is for the lock
    /// uncontended, since with its critical section as it is the spinning would turn to waiting.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub spin: bool,
    /// The waiters take turns on the lock (one runs while the others wait): the prediction is an
    /// upper bound, reached only if the work they do holding it could run at once.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub turns: bool,
}

impl WhatIf {
    /// What it buys: the predicted speed-up less the measured one.
    pub fn gain(&self) -> f64 {
        self.without - self.speedup
    }
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

impl NoiseSource {
    /// What the source is, in a few words: `other processes`.
    pub fn words(self) -> &'static str {
        match self {
            NoiseSource::Spread => "run-to-run spread",
            NoiseSource::Steal => "steal",
            NoiseSource::OtherProcesses => "other processes",
            NoiseSource::Watching => "watching",
            NoiseSource::Undecided => "undecided",
        }
    }
}

impl Finding {
    /// Whether it is a statement about the curve rather than a cause of its loss: its kind
    /// describes the curve, except a serial fraction the ledger measured (CPUs idle with no work
    /// thread that had work, with its share of the loss), which is a cause like the others.
    pub fn states_the_curve(&self) -> bool {
        self.kind.describes_curve()
            && !(self.kind == Kind::SerialFraction && self.cost_pct.is_some())
    }

    /// ` (explains ~40% of the lost CPU capacity)`, or nothing without a cost.
    pub fn cost_text(&self) -> String {
        self.cost_pct
            .map(|c| format!(" (explains ~{c:.0}% of the lost CPU capacity)"))
            .unwrap_or_default()
    }

    /// `what fixing it buys: without these waits, 1.41× → 1.83× [1.72, 1.95] at 2 threads (+0.42×,
    /// runs 80 ms shorter)`, or nothing without a what-if; `at` says a count in words.
    pub fn what_if_text(&self, at: &dyn Fn(f64) -> String) -> Option<String> {
        let w = self.what_if.as_ref()?;
        let ci = crate::fmt::interval(w.without_ci95);
        let what = match self.kind {
            Kind::LockContention if w.spin => "were the lock uncontended (no spinning on it)",
            Kind::LockContention if w.turns => {
                "without these waits (an upper bound: the threads take turns on it, so the work they do holding it would have to run at once)"
            }
            Kind::LockContention | Kind::WaitForWork | Kind::IoBound => "without these waits",
            Kind::LoadImbalance => "with the work evenly spread",
            Kind::SerialPhase => "with this phase run in parallel",
            Kind::SerialFraction => "with this serial work run in parallel",
            Kind::OnCpuInefficiency | Kind::KernelContention => "without this extra CPU",
            _ => "without it",
        };
        // Runs shorter, and no speed-up to show: the count's speed-up is already at what it gives,
        // or past it (a baseline that waited too), so the projection is held at the measured one
        // (`3.17× → 3.17× [1.56, 3.17] (+0.00×, runs 76 ms shorter)` read as a contradiction).
        let held = w.without_ci95.is_none_or(|[_, hi]| hi <= w.speedup + 0.005);
        if w.gain().abs() < 0.005 && w.sooner_s >= 0.001 && held {
            return Some(format!(
                "what fixing it buys: {what}, runs {} shorter at {} (the speed-up, {:.2}×, is already at or past what the count gives)",
                crate::fmt::secs_ms_below_1(w.sooner_s),
                at(w.at),
                w.speedup
            ));
        }
        Some(format!(
            "what fixing it buys: {what}, {:.2}× → {:.2}×{ci} at {} ({:+.2}×, runs {} shorter)",
            w.speedup,
            w.without,
            at(w.at),
            w.gain(),
            crate::fmt::secs_ms_below_1(w.sooner_s)
        ))
    }

    /// The kind as written in results.json (`lock-contention`…).
    pub fn kind_name(&self) -> String {
        self.kind.name().to_string()
    }
}

/// The fixes in the order of what they buy, at each finding's count: `fix the lock-contention
/// first: +0.42× (1.41× → 1.83× [1.72, 1.95] at 2 threads); then load-imbalance: +0.10× (each
/// alone)`; `None` without a what-if worth a hundredth of a core. Findings of the machine (its
/// load, the watching) and those only good to know are no fixes; two of one kind are told apart by
/// their order in the list (`lock-contention (2nd of 2)`). The first listed stays first unless
/// another buys clearly more (see [`TIE`]). `at` says a count in words (`2 threads`).
pub fn fix_order(findings: &[Finding], at: &dyn Fn(f64) -> String) -> Option<String> {
    let mut fixes = fixes(findings);
    let listed = fixes.first().copied();
    fixes.sort_by(|a, b| b.1.gain().total_cmp(&a.1.gain()));
    if let Some((f, w)) =
        listed.filter(|(_, w)| fixes[0].1.gain() - w.gain() <= TIE.max(TIE_SHARE * w.gain()))
    {
        fixes.retain(|(g, _)| !std::ptr::eq(*g, f));
        fixes.insert(0, (f, w));
    }
    let name = |f: &Finding| fix_name(findings, f);
    let ((f, w), rest) = fixes.split_first()?;
    let ci = crate::fmt::interval(w.without_ci95);
    let mut out = format!(
        "fix the {} first: {:+.2}× ({:.2}× → {:.2}×{ci} at {})",
        name(f),
        w.gain(),
        w.speedup,
        w.without,
        at(w.at)
    );
    // The list reads by severity and share of the loss, this line by gain: say why they differ.
    if let Some((l, _)) = listed.filter(|(l, _)| !std::ptr::eq(*l, *f)) {
        out.push_str(&format!(
            ", more than the {} listed before it (the list goes by severity, then share of the lost capacity)",
            name(l)
        ));
    } else if rest.iter().any(|(_, r)| r.gain() > w.gain() + 0.005) {
        // Kept first by the tie rule: a larger gain after it would read as a wrong order.
        out.push_str(", as much as the next within the what-ifs' error");
    }
    for (f, w) in rest.iter().take(3) {
        out.push_str(&format!("; then {}: {:+.2}×", name(f), w.gain()));
    }
    // Each what-if is priced alone: two of one count may buy the same idle capacity.
    if !rest.is_empty() {
        out.push_str(" (each alone)");
    }
    Some(out)
}

/// Gains closer than this (in speed-up), or than [`TIE_SHARE`] of the first listed fix's, leave
/// the first listed fix first: within the what-if's own error, the list's order (by severity and
/// share of the lost capacity) is as good an answer, and two orders read as a contradiction.
pub const TIE: f64 = 0.02;
/// See [`TIE`].
pub const TIE_SHARE: f64 = 0.1;

/// The findings that are fixes to make (see [`is_fix`]) with a what-if worth a hundredth of a
/// core, in their order.
pub fn fixes(findings: &[Finding]) -> Vec<(&Finding, &WhatIf)> {
    findings
        .iter()
        .filter(|f| is_fix(f))
        .filter_map(|f| Some((f, f.what_if.as_ref()?)))
        .filter(|(_, w)| w.gain() >= 0.01)
        .collect()
}

/// A fixable finding's name among `findings`: its kind, and its place among the fixable findings
/// of that kind when there are several (`lock-contention (2nd of 2)`).
pub fn fix_name(findings: &[Finding], f: &Finding) -> String {
    let same: Vec<&Finding> = findings.iter().filter(|g| is_fix(g) && g.kind == f.kind).collect();
    match same.iter().position(|g| std::ptr::eq(*g, f)) {
        Some(i) if same.len() > 1 => {
            format!("{} ({} of {})", f.kind.name(), crate::fmt::ordinal(i + 1), same.len())
        }
        _ => f.kind.name().to_string(),
    }
}

/// Whether a finding is a fix to make: not the machine's (its load, the watching) and more than
/// good to know.
pub fn is_fix(f: &Finding) -> bool {
    f.noise.is_none() && f.severity > Severity::Info
}

#[cfg(test)]
impl Finding {
    /// A finding of `kind` and `severity` at count `at`, with no words, figures or what-if:
    /// what the rules' unit tests fill in.
    pub fn bare(kind: Kind, severity: Severity, at: Option<f64>) -> Finding {
        Finding {
            kind,
            severity,
            summary: String::new(),
            evidence: Vec::new(),
            advice: String::new(),
            cost_pct: None,
            cost_per_run_pct: Vec::new(),
            at,
            noise: None,
            what_if: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finding(kind: Kind, severity: Severity, without: f64) -> Finding {
        Finding {
            cost_pct: Some(50.0),
            what_if: Some(WhatIf {
                at: 2.0,
                speedup: 0.69,
                without,
                without_ci95: None,
                sooner_s: 0.1,
                spin: false,
                turns: false,
            }),
            ..Finding::bare(kind, severity, Some(2.0))
        }
    }

    #[test]
    fn the_fix_order_tells_two_of_a_kind_apart_and_leaves_what_is_only_good_to_know() {
        let findings = [
            finding(Kind::LockContention, Severity::High, 1.45),
            finding(Kind::OnCpuInefficiency, Severity::Info, 0.82),
            finding(Kind::LockContention, Severity::Medium, 0.73),
        ];
        let order = fix_order(&findings, &|c| format!("{c} threads")).unwrap();
        assert_eq!(
            order,
            "fix the lock-contention (1st of 2) first: +0.76× (0.69× → 1.45× at 2 threads); then lock-contention (2nd of 2): +0.04× (each alone)"
        );
        // Within the tie, the first listed leads; clearly more moves ahead of it.
        let close = [
            finding(Kind::LoadImbalance, Severity::Medium, 0.75),
            finding(Kind::OnCpuInefficiency, Severity::Medium, 0.76),
        ];
        let order = fix_order(&close, &|c| format!("{c} threads")).unwrap();
        assert!(order.starts_with("fix the load-imbalance first: +0.06×"), "{order}");
        // The first listed leads, within the error of the larger gain after it.
        assert!(
            !order.contains("listed before it")
                && order.contains(", as much as the next within the what-ifs' error; then on-cpu-inefficiency: +0.07×"),
            "{order}"
        );
        let clear = [close[0].clone(), finding(Kind::OnCpuInefficiency, Severity::Medium, 0.9)];
        let order = fix_order(&clear, &|c| format!("{c} threads")).unwrap();
        assert!(order.starts_with("fix the on-cpu-inefficiency first: +0.21×"), "{order}");
        assert!(
            order.contains(", more than the load-imbalance listed before it (the list goes by severity, then share"),
            "{order}"
        );
        assert_eq!(fix_order(&findings[1..2], &|c| format!("{c}")), None);
    }

    #[test]
    fn runs_shorter_at_a_speed_up_held_where_it_is_are_said_in_time_alone() {
        let at = |c: f64| format!("{c} threads");
        let mut held = finding(Kind::IoBound, Severity::Info, 3.17);
        let w = held.what_if.as_mut().unwrap();
        (w.speedup, w.without_ci95, w.sooner_s) = (3.17, Some([1.56, 3.17]), 0.076);
        let text = held.what_if_text(&at).unwrap();
        assert!(text.starts_with("what fixing it buys: without these waits, runs 76 ms shorter at 2 threads (the speed-up, 3.17×"), "{text}");
        let gain = finding(Kind::IoBound, Severity::Info, 1.45);
        assert!(gain.what_if_text(&at).unwrap().contains("0.69× → 1.45× at 2 threads (+0.76×"));
    }
}
