//! Drives a sweep: asks the scheduler for the next run, runs hooks, evicts inputs, runs and
//! measures the command, and hands every finished run to a [`Sink`] at once, so that nothing
//! measured is lost when the sweep stops for any reason.

use super::child::{self, Outcome, Spec};
use super::metrics::Scanner;
use super::record::{OutputFile, RunRecord};
use super::{ExecError, signals};
use crate::pagecache;
use crate::plan::schedule::{PointProgress, Scheduler, Task};
use crate::plan::{Plan, Point};
use serde_json::Value;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Receives what the sweep produces; implemented by the results store (and progress display).
pub trait Sink {
    /// A measured run finished; store it now. `units` gives the unit of each metric it carries.
    fn record(&mut self, point: usize, run: RunRecord, units: &[(String, String)]) -> anyhow::Result<()>;
    /// A point's number of runs became known.
    fn target(&mut self, point: usize, runs: u32);
    /// Something to show the user: a run starting, or a warning.
    fn event(&mut self, event: Event);
    /// Where captured output files go (`output/` is created inside), if anywhere.
    fn folder(&self) -> Option<PathBuf>;
    /// Runs already stored for `point`, failed ones included (numbers the next run).
    fn runs_recorded(&self, point: usize) -> usize;
}

/// Progress and warnings during a sweep.
#[derive(Debug)]
pub enum Event<'a> {
    /// A run of `point` is about to start.
    Starting {
        /// The point.
        point: usize,
        /// A warm-up run (not recorded).
        warmup: bool,
        /// Every point's progress so far.
        progress: &'a [PointProgress],
    },
    /// A problem worth a line on the terminal.
    Warning(String),
}

/// Why a sweep ended.
#[derive(Debug, PartialEq)]
pub enum Stop {
    /// Every point has its runs.
    Complete,
    /// Ctrl-C, SIGTERM or SIGHUP; the interrupted run was discarded.
    Interrupted,
    /// A run failed and `--ignore-failure` was not given.
    Failed {
        /// Point of the failed run.
        point: usize,
        /// How it ended, in words.
        outcome: String,
        /// The end of what it printed on stderr (or stdout).
        last_output: String,
        /// Where its captured output was saved, if it was.
        saved: Option<String>,
    },
}

/// Runs the sweep from the given progress until done, interrupted or failed.
pub fn run(
    plan: &Plan,
    points: &[Point],
    progress: Vec<PointProgress>,
    sink: &mut dyn Sink,
    show_output: bool,
) -> Result<Stop, ExecError> {
    signals::install();
    child::become_subreaper();
    let scanner = Arc::new(Scanner::new(&plan.metrics).map_err(|e| ExecError::Usage(e.to_string()))?);
    let timeout = plan.timeout_s.map(Duration::from_secs_f64);
    let mut sched = Scheduler::new(plan.order, plan.warmup, plan.runs, progress, plan.seed);
    for (i, p) in sched.progress().iter().enumerate() {
        if let Some(t) = p.target {
            sink.target(i, t);
        }
    }
    let mut set_up = vec![false; points.len()];
    while let Some(task) = sched.next_task() {
        if signals::interrupted() {
            return Ok(Stop::Interrupted);
        }
        let (p, warmup) = match task {
            Task::Warmup(p) => (p, true),
            Task::Measure(p) => (p, false),
        };
        let point = &points[p];
        if !set_up[p] {
            hook("setup", &point.hooks.setup, point, show_output)?;
            set_up[p] = true;
        }
        hook("prepare", &point.hooks.prepare, point, show_output)?;
        let eviction =
            if point.evict.is_empty() { None } else { Some(pagecache::evict(&point.evict).map_err(ExecError::Usage)?) };
        sink.event(Event::Starting { point: p, warmup, progress: sched.progress() });
        let started = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64());
        let sample = plan.sample_rate_hz.map(|rate_hz| crate::sample::Config {
            rate_hz,
            capacity: capacity(plan, point),
            ..Default::default()
        });
        let index = sink.runs_recorded(p) as u32;
        let stem = if warmup { format!("{p:03}-warmup") } else { format!("{p:03}-{index:03}") };
        let parts = point.launch.as_ref().map(|_| parts_dir(sink, &stem));
        let argv = match (&point.launch, &parts) {
            (Some(l), Some(dir)) => agent_argv(l, dir, plan, &point.argv)?,
            _ => point.argv.clone(),
        };
        let spec = Spec {
            argv: &argv,
            env: &point.env,
            timeout,
            scanner: scanner.clone(),
            show_output,
            sample: if point.launch.is_some() { None } else { sample },
            kill_leftovers: true,
        };
        let outcome = child::run(&spec).map_err(|e| ExecError::Usage(e.0))?;
        if outcome.interrupted {
            return Ok(Stop::Interrupted);
        }
        hook("conclude", &point.hooks.conclude, point, show_output)?;

        let mut record = measure(&outcome, point, index, started, &scanner);
        record.evict = eviction;
        if let (Some(l), Some(dir)) = (&point.launch, &parts) {
            super::ranks::merge(&mut record, super::ranks::read_all(dir), l.ranks, point.work.is_some());
            let _ = std::fs::remove_dir_all(dir);
            if let Some(base) = dir.parent() {
                let _ = std::fs::remove_dir(base);
            }
        }
        let failed = !record.succeeded();
        if !warmup || failed {
            record.stdout = save_output(sink, &stem, "stdout", &outcome.stdout);
            record.stderr = save_output(sink, &stem, "stderr", &outcome.stderr);
        }
        let units = units(&outcome);
        if outcome.strays > 0 {
            sink.event(Event::Warning(format!(
                "a run of {} left {} process{} running after it exited (daemons out of its process group); killed",
                point.label(),
                outcome.strays,
                if outcome.strays == 1 { "" } else { "es" }
            )));
        }
        if !warmup {
            for name in &record.missing_metrics {
                sink.event(Event::Warning(format!(
                    "metric '{name}' was not found in the output of run {} of {}; recorded as missing",
                    index + 1,
                    point.label()
                )));
            }
            let had_target = sched.progress()[p].target.is_some();
            sched.finished(p, record.wall_s);
            if let (false, Some(t)) = (had_target, sched.progress()[p].target) {
                sink.target(p, t);
            }
        }
        let saved = record.stderr.as_ref().or(record.stdout.as_ref()).map(|f| f.path.clone());
        let outcome_text = record.outcome();
        if !warmup {
            sink.record(p, record, &units).map_err(ExecError::Sink)?;
        }
        if failed && !plan.ignore_failure {
            return Ok(Stop::Failed { point: p, outcome: outcome_text, last_output: last_lines(&outcome), saved });
        }
        if !warmup && sched.point_complete(p) {
            hook("cleanup", &point.hooks.cleanup, point, show_output)?;
        }
    }
    Ok(if signals::interrupted() { Stop::Interrupted } else { Stop::Complete })
}

/// Builds the run record from what the child run measured.
fn measure(o: &Outcome, point: &Point, index: u32, started_unix_s: f64, scanner: &Scanner) -> RunRecord {
    let u = &o.usage;
    let metrics = super::metrics::to_map(&o.stdout.found, &o.stderr.found);
    let throughput = match &point.work {
        Some(w) if o.wall_s > 0.0 => Some(w.amount / o.wall_s),
        _ => metrics.get("throughput").and_then(Value::as_f64),
    };
    let missing_metrics = scanner.expected().filter(|n| !metrics.contains_key(*n)).map(String::from).collect();
    RunRecord {
        index,
        started_unix_s,
        wall_s: o.wall_s,
        user_s: u.user_s,
        sys_s: u.sys_s,
        cpu_pct: if o.wall_s > 0.0 { 100.0 * (u.user_s + u.sys_s) / o.wall_s } else { 0.0 },
        max_rss_bytes: u.max_rss_bytes,
        voluntary_switches: u.voluntary_switches,
        involuntary_switches: u.involuntary_switches,
        minor_faults: u.minor_faults,
        major_faults: u.major_faults,
        storage_read_bytes: u.in_blocks * 512,
        storage_write_bytes: u.out_blocks * 512,
        syscall_read_bytes: o.io.map(|(r, _)| r),
        syscall_write_bytes: o.io.map(|(_, w)| w),
        exit_code: o.exit_code,
        signal: o.signal,
        timed_out: o.timed_out,
        stray_processes: o.strays,
        missing_metrics,
        metrics,
        throughput,
        evict: None,
        threads: o.threads.clone(),
        stdout: None,
        stderr: None,
        ranks: Vec::new(),
        missing_ranks: Vec::new(),
    }
}

/// A fresh folder for the parts of one launched run: inside the results folder (shared with the
/// nodes when the results are on a shared filesystem), else a temporary one.
fn parts_dir(sink: &dyn Sink, stem: &str) -> PathBuf {
    let base = sink.folder().unwrap_or_else(std::env::temp_dir).join("parts");
    let base = std::path::absolute(&base).unwrap_or(base);
    let dir = base.join(format!("{stem}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// The launcher's argv, then `scalescope agent` with the parts folder, sampling and metrics, then
/// the command.
fn agent_argv(
    l: &crate::plan::Launch,
    dir: &std::path::Path,
    plan: &Plan,
    command: &[String],
) -> Result<Vec<String>, ExecError> {
    let exe = std::env::current_exe().map_err(|e| ExecError::Usage(format!("cannot find scalescope itself: {e}")))?;
    let mut argv = l.prefix.clone();
    argv.extend([exe.display().to_string(), "agent".into(), "--parts".into(), dir.display().to_string()]);
    if l.copies > 0 {
        argv.extend(["--copies".into(), l.copies.to_string()]);
    }
    match plan.sample_rate_hz {
        Some(hz) => argv.extend(["--sample-rate".into(), hz.to_string()]),
        None => argv.push("--no-sample".into()),
    }
    for m in &plan.metrics {
        argv.extend(["--metric".into(), format!("{}={}", m.name, m.regex)]);
    }
    argv.push("--".into());
    argv.extend(command.iter().cloned());
    Ok(argv)
}

fn units(o: &Outcome) -> Vec<(String, String)> {
    o.stdout.found.iter().chain(&o.stderr.found).map(|f| (f.name.clone(), f.unit.clone())).collect()
}

fn save_output(sink: &dyn Sink, stem: &str, stream: &str, cap: &super::capture::Captured) -> Option<OutputFile> {
    if cap.total == 0 {
        return None;
    }
    let dir = sink.folder()?.join("output");
    std::fs::create_dir_all(&dir).ok()?;
    let name = format!("{stem}.{stream}");
    crate::files::write(&dir.join(&name), &cap.bytes()).ok()?;
    Some(OutputFile { path: format!("output/{name}"), bytes: cap.total, truncated: cap.truncated() })
}

/// The last few lines the failed run printed, stderr first.
fn last_lines(o: &Outcome) -> String {
    let pick = if o.stderr.total > 0 { &o.stderr } else { &o.stdout };
    let text = String::from_utf8_lossy(&pick.bytes()).into_owned();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(5)..].join("\n")
}

/// Runs a hook through `sh -c` in its own process group; a non-zero exit stops the sweep.
fn hook(which: &str, text: &Option<String>, point: &Point, show_output: bool) -> Result<(), ExecError> {
    let Some(text) = text else { return Ok(()) };
    let argv = vec!["sh".to_string(), "-c".to_string(), text.clone()];
    let scanner = Arc::new(Scanner::new(&[]).expect("no extractors"));
    let spec =
        Spec { argv: &argv, env: &point.env, timeout: None, scanner, show_output, sample: None, kill_leftovers: false };
    let o = child::run(&spec).map_err(|e| ExecError::Usage(e.0))?;
    if o.interrupted || o.exit_code == Some(0) {
        return Ok(());
    }
    let how = match (o.exit_code, o.signal) {
        (Some(c), _) => format!("exited with code {c}"),
        (_, Some(s)) => format!("was killed by {}", super::record::signal_name(s)),
        _ => "failed".into(),
    };
    let said = last_lines(&o);
    let said = if said.is_empty() { String::new() } else { format!("; it printed:\n{said}") };
    Err(ExecError::Hook(format!("the {which} hook `{text}` {how} at {}{said}", point.label())))
}

/// CPUs a run of `point` could use at once when the sweep counts workers: min(N, allowed CPUs);
/// otherwise the accounting takes the work threads it sees.
fn capacity(plan: &Plan, point: &Point) -> Option<f64> {
    let axis = plan.axis.as_ref().filter(|a| a.counts == crate::plan::Counts::Workers)?;
    let n: f64 = point.params.iter().find(|(name, _)| *name == axis.param)?.1.parse().ok()?;
    Some(n.min(crate::machine::allowed_cpus().max(1) as f64))
}
