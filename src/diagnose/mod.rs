//! Findings: the sentences an expert would write after looking at the sweep — what limits scaling,
//! with the evidence (the share of the lost CPU capacity each cause explains, the lock's name, the
//! feeder, the system calls, the phase), and what to try next (docs/findings.md).

mod causes;
mod ceiling;
mod curve;
pub mod evidence;
mod fixed_time;
mod known;
pub mod ledger;
mod memory;
mod noise;
mod ranks;
mod series;
mod speedup_stack;
mod tie;
mod undecided;
mod whatif;
mod wording;

use crate::analysis::{AnalysisError, Options, analyze_results};
use crate::plan::Axis;
use crate::results::Results;
use crate::results::analysis::Analysis;
pub use crate::results::findings::{Finding, Kind, NoiseSource, Severity};
pub use curve::INDIFFERENT;
pub use known::as_shown;
pub use speedup_stack::stacks;
pub use undecided::{Question, questions};

/// Analyses `doc` along `axis` (no analysis without one) and diagnoses it, storing both in it.
pub fn analyse(
    doc: &mut Results,
    axis: Option<&Axis>,
    opts: &Options,
) -> Result<(), AnalysisError> {
    doc.analysis = axis.map(|a| analyze_results(doc, a, opts)).transpose()?;
    doc.findings = diagnose(doc, doc.analysis.as_ref());
    doc.stacks = doc.analysis.as_ref().map(|a| speedup_stack::stacks(doc, a)).unwrap_or_default();
    Ok(())
}

/// Findings for a sweep: scales-well first when it holds, then by severity, causes before what
/// the curve looks like, each ledger's causes by their share of the lost capacity.
pub fn diagnose(doc: &Results, analysis: Option<&Analysis>) -> Vec<Finding> {
    let mut out = Vec::new();
    curve::noisy(doc, &mut out);
    ranks::rules(doc, &mut out);
    match analysis.filter(|a| !a.series.is_empty()) {
        Some(a) => {
            for s in &a.series {
                series::judge(doc, a, s, &mut out);
            }
        }
        None => {
            for i in 0..doc.points.len() {
                series::point(doc, i, &mut out);
            }
        }
    }
    if let Some(a) = analysis {
        memory::rules(doc, a, &mut out);
        undecided::settle(doc, a, &mut out);
        series::defer_retrograde(&mut out);
    }
    merge_noise(&mut out);
    // A stable sort: within one severity, causes keep the order their ledger gave them. First
    // what says the whole sweep scales, or that the parameter, the runs' length or counts beyond
    // the CPUs (a curve flat past them, or a baseline that already filled them) make the rest moot.
    // A baseline that filled the CPUs leads unless a high cause stands at that count: a cause
    // that lost much of what the CPUs still allowed (a saturated feeder) binds first. A `low`
    // one at counts beyond the CPUs leads only where no high cause stands below them: a
    // producer-bound queue read "[low] cpu-oversubscription" above its own high cause.
    let cpus = doc.machine.allowed_cpus as f64;
    let high_below =
        out.iter().any(|g| g.at.is_some_and(|n| n <= cpus) && series::is_high_cause(g));
    let leads: Vec<bool> = out
        .iter()
        .map(|f| {
            matches!(
                f.kind,
                Kind::ScalesWell | Kind::StartupDominated | Kind::ThreadsIgnored | Kind::FixedTime
            ) || (f.kind == Kind::CpuOversubscription
                && f.severity > Severity::Info
                && (f.at.is_some_and(|n| n > cpus)
                    && (f.severity >= Severity::Medium || !high_below)
                    || f.severity >= Severity::Medium && !series::high_cause_at(&out, f.at)))
        })
        .collect();
    let mut order: Vec<(bool, Finding)> = leads.into_iter().zip(out).collect();
    order.sort_by(|(lx, x), (ly, y)| {
        ly.cmp(lx)
            .then(y.severity.cmp(&x.severity))
            .then(x.states_the_curve().cmp(&y.states_the_curve()))
    });
    let mut out: Vec<Finding> = order.into_iter().map(|(_, f)| f).collect();
    tie::say(&mut out);
    out
}

/// Findings for a window of a running job (`attach`): what idled the CPUs its threads could use,
/// judged as one point run once (the window has no start-up or tail of its own), or that nothing
/// did. There is no speed-up to judge without a sweep, so nothing is said of the curve.
pub fn window(report: &crate::results::ThreadReport) -> Vec<Finding> {
    use crate::results::Class;
    let run = crate::results::RunRecord {
        wall_s: report.wall_s,
        user_s: report.seconds(Class::CpuUser),
        sys_s: report.seconds(Class::CpuKernel),
        exit_code: Some(0),
        threads: Some(Box::new(report.clone())),
        ..Default::default()
    };
    let p = crate::results::PointResult {
        params: Default::default(),
        command: Vec::new(),
        target_runs: None,
        runs: vec![run],
    };
    let mut out = Vec::new();
    series::window(&p, crate::machine::allowed_cpus().max(1) as f64, &mut out);
    merge_noise(&mut out);
    let lead = |f: &Finding| matches!(f.kind, Kind::ScalesWell | Kind::CpuOversubscription);
    out.sort_by(|x, y| lead(y).cmp(&lead(x)).then(y.severity.cmp(&x.severity)));
    out
}

/// One noisy-measurement finding where one will do: the run-to-run spread joins the first finding
/// that other processes held the CPUs, and the sweep's steal time joins the first finding that the
/// hypervisor took a count's capacity.
fn merge_noise(out: &mut Vec<Finding>) {
    let about = |f: &Finding, source: NoiseSource| {
        f.kind == Kind::NoisyMeasurement && f.noise == Some(source)
    };
    // The spread and the steal time are said of the whole sweep (no count); a cause's share is
    // said at a count.
    let sweep_wide = |f: &Finding| f.cost_pct.is_none() && f.at.is_none();
    if let (Some(w), Some(l)) = (
        out.iter().position(|f| about(f, NoiseSource::Steal) && sweep_wide(f)),
        out.iter().position(|f| about(f, NoiseSource::Steal) && f.cost_pct.is_some()),
    ) {
        let wide = out.remove(w);
        let l = if w < l { l - 1 } else { l };
        out[l].severity = out[l].severity.max(wide.severity);
        out[l].evidence.extend(wide.evidence);
    }
    // Steal time is said on its own: it explains the noise, the machine's load does not.
    let spread = out.iter().position(|f| about(f, NoiseSource::Spread) && sweep_wide(f));
    let load =
        out.iter().position(|f| about(f, NoiseSource::OtherProcesses) && f.cost_pct.is_some());
    if let (Some(s), Some(l)) = (spread, load) {
        let lines = out[s].evidence.join(", ");
        out[l].evidence.push(format!("run-to-run variation of the wall time: {lines}"));
        out.remove(s);
    }
}
