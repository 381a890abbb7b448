//! Drives a sweep: asks the scheduler for the next run, runs hooks, evicts inputs, runs and
//! measures the command, and hands every finished run to a [`Sink`] at once, so that nothing
//! measured is lost when the sweep stops for any reason.

use super::capture::Captured;
use super::child::{self, Executor, Outcome, Spec};
use super::metrics::{self, Scanner};
use super::ranks;
use super::tail::Printed;
use super::{ExecError, HookFailed, signals};
use crate::files::{self, WriteError};
use crate::pagecache;
use crate::plan::{Launch, Order, Plan, PlanError, Point};
use crate::plan::{PointProgress, Scheduler, Task};
use crate::results::{Capacity, LEAN_BUSY, LEAN_RATE_HZ, OutputFile, RunRecord, signal_name};
use crate::sample::Config;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Receives what the sweep produces; implemented by the results store (and progress display).
pub trait Sink {
    /// A measured run finished; store it now. `units` gives the unit of each metric it carries.
    fn record(
        &mut self,
        point: usize,
        run: RunRecord,
        units: &[(String, String)],
    ) -> Result<(), WriteError>;
    /// A point's number of runs became known.
    fn target(&mut self, point: usize, runs: u32);
    /// Something to show the user: a run starting, or a warning.
    fn event(&mut self, event: Event);
    /// Where captured output files go (`output/` is created inside), if anywhere.
    fn folder(&self) -> Option<PathBuf>;
    /// Runs already stored for `point`, failed ones included (numbers the next run).
    fn runs_recorded(&self, point: usize) -> usize;
    /// Whether the stored runs of `point` were watched lean, and after which share (see
    /// [`crate::results::ThreadReport::lean`]): runs added to decide a verdict, or a resumed sweep,
    /// go on lean without tracing the point again.
    fn lean(&self, _point: usize) -> Option<f64> {
        None
    }
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
    /// A `--metric` was found in no run of the first round (every point's first measured run
    /// that succeeded): its regex is wrong, and measuring on would not read it either.
    MetricsNotFound,
    /// A run failed and `--ignore-failure` was not given.
    Failed {
        /// Point of the failed run.
        point: usize,
        /// How it ended, in words.
        outcome: String,
        /// The end of what it printed on stderr (or stdout), safe for a terminal.
        printed: Printed,
        /// Where that stream was saved in the results folder, if it was.
        saved: Option<String>,
    },
}

/// Runs the sweep from the given progress until done, interrupted or failed, numbering its rounds
/// from `first_round`; every process goes through `exec`.
pub fn run(
    plan: &Plan,
    (progress, first_round): (Vec<PointProgress>, u32),
    sink: &mut dyn Sink,
    exec: &mut dyn Executor,
    show_output: bool,
) -> Result<Stop, ExecError> {
    signals::install();
    let scanner =
        Arc::new(Scanner::new(&plan.metrics).map_err(|e| PlanError::Invalid(e.to_string()))?);
    let sched = Scheduler::new(plan.order, plan.warmup, plan.runs, progress, plan.seed)
        .from_round(first_round);
    for (i, p) in sched.progress().iter().enumerate() {
        if let Some(t) = p.target {
            sink.target(i, t);
        }
    }
    let mut sweep = Sweep {
        plan,
        scanner,
        timeout: plan.timeout_s.map(Duration::from_secs_f64),
        show_output,
        sched,
        set_up: vec![false; plan.len()],
        cleaned: vec![false; plan.len()],
        lean: (0..plan.len()).map(|p| sink.lean(p).filter(|_| !plan.trace_every_run)).collect(),
        warnings: Warnings::default(),
        metrics_read: (Vec::new(), vec![false; plan.len()]),
    };
    let stopped = sweep.tasks(sink, exec);
    if !matches!(stopped, Ok(Stop::Complete)) {
        sweep.clean_up_after_stop(sink, exec);
    }
    stopped
}

/// A sweep under way: what stays the same through it, and what it carries from one task to the
/// next.
struct Sweep<'a> {
    plan: &'a Plan,
    scanner: Arc<Scanner>,
    timeout: Option<Duration>,
    show_output: bool,
    sched: Scheduler,
    /// Points whose setup hook has run.
    set_up: Vec<bool>,
    /// Points whose cleanup hook has run.
    cleaned: Vec<bool>,
    /// Per point, the share of its capacity the traced run kept busy or wanted, after which the
    /// point's runs are watched lean.
    lean: Vec<Option<f64>>,
    warnings: Warnings,
    /// The `--metric` names read in some run so far, and the points with a successful measured run.
    metrics_read: (Vec<String>, Vec<bool>),
}

/// One run of a task: its point, whether it is a warm-up, its number among the point's recorded
/// runs, and the names its files take.
struct RunOf<'a> {
    point: &'a Point,
    warmup: bool,
    index: u32,
    /// `003-001`, `003-warmup`: the stem of its saved output's names.
    stem: String,
    /// Where its ranks write their parts, when it is launched.
    parts: Option<PathBuf>,
}

impl Sweep<'_> {
    /// Runs the scheduler's tasks until done, interrupted or failed.
    fn tasks(&mut self, sink: &mut dyn Sink, exec: &mut dyn Executor) -> Result<Stop, ExecError> {
        let mut current: Option<(usize, Point)> = None;
        while let Some(task) = self.sched.next_task() {
            if signals::interrupted() {
                return Ok(Stop::Interrupted);
            }
            let p = task.point();
            if current.as_ref().is_none_or(|(i, _)| *i != p) {
                current = Some((p, self.plan.point(p)?));
            }
            let Some((_, point)) = &current else { continue };
            if let Some(stop) = self.task(task, point, sink, exec)? {
                return Ok(stop);
            }
        }
        Ok(if signals::interrupted() { Stop::Interrupted } else { Stop::Complete })
    }

    /// Notes the metrics a successful measured run of point `p` printed; true when every point
    /// has had one and a `--metric` was read in none of them.
    fn metrics_unread(&mut self, p: usize, record: &RunRecord) -> bool {
        let (read, measured) = &mut self.metrics_read;
        measured[p] = true;
        for m in &self.plan.metrics {
            if !record.missing_metrics.contains(&m.name) && !read.contains(&m.name) {
                read.push(m.name.clone());
            }
        }
        measured.iter().all(|&m| m) && self.plan.metrics.iter().any(|m| !read.contains(&m.name))
    }

    /// After a sweep stopped early (a failed run or hook, an interruption), runs the cleanup hook
    /// of every point whose setup ran and whose cleanup did not: a server a setup started is not
    /// left running. A cleanup that fails is a warning; the sweep's own error stands.
    fn clean_up_after_stop(&mut self, sink: &mut dyn Sink, exec: &mut dyn Executor) {
        for p in 0..self.plan.len() {
            if !self.set_up[p] || self.cleaned[p] {
                continue;
            }
            let Ok(point) = self.plan.point(p) else { continue };
            if point.hooks.cleanup.is_none() {
                continue;
            }
            self.cleaned[p] = true;
            let ran = Hooks { exec: &mut *exec, point: &point, show_output: self.show_output }
                .run("cleanup", &point.hooks.cleanup);
            if let Err(e) = ran {
                sink.event(Event::Warning(format!("after the sweep stopped, {e}")));
            }
        }
    }

    /// Runs one task of the scheduler: the hooks around it, the eviction, the run, and its record
    /// handed to the sink. `Some` when the sweep stops here.
    fn task(
        &mut self,
        task: Task,
        point: &Point,
        sink: &mut dyn Sink,
        exec: &mut dyn Executor,
    ) -> Result<Option<Stop>, ExecError> {
        let warmup = matches!(task, Task::Warmup(_));
        let p = task.point();
        let eviction = self.before(p, point, sink, exec)?;
        sink.event(Event::Starting { point: p, warmup, progress: self.sched.progress() });
        let started = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64());
        let index = sink.runs_recorded(p) as u32;
        let stem = if warmup { format!("{p:03}-warmup") } else { format!("{p:03}-{index:03}") };
        let parts = point.launch.as_ref().map(|_| parts_dir(sink, &stem));
        let argv = match (&point.launch, &parts) {
            (Some(l), Some(dir)) => agent_argv(l, dir, self.plan, &point.argv)?,
            _ => point.argv.clone(),
        };
        let pace_ns = super::pace::measure();
        let memory_pace_ns = super::pace::memory();
        let mut outcome = exec.run(&self.spec(task, point, &argv))?;
        if outcome.interrupted {
            return Ok(Some(Stop::Interrupted));
        }
        Hooks { exec: &mut *exec, point, show_output: self.show_output }
            .run("conclude", &point.hooks.conclude)?;
        let run = RunOf { point, warmup, index, stem, parts };
        let mut record = self.record(&mut outcome, &run, started, eviction, sink);
        record.pace_ns = Some(pace_ns);
        record.memory_pace_ns = Some(memory_pace_ns);
        let failed = !record.succeeded();
        self.watch_lean(p, warmup, &mut record);
        let units = units(&outcome);
        if outcome.strays > 0 {
            sink.event(Event::Warning(left_running(point, outcome.strays)));
        }
        if !warmup {
            self.warnings.missing_metrics(sink, &record, point);
            let held = record.held() && !failed;
            let again = held && self.sched.held(p);
            if held {
                sink.event(Event::Warning(held_warning(point, &record, again)));
            }
            if !again {
                self.schedule(p, failed, record.wall_s, sink);
            }
        }
        let copy = failed_copy(&record);
        let printed = copy
            .as_ref()
            .map_or_else(|| Printed::of(&outcome.stdout, &outcome.stderr), |c| c.1.clone());
        let saved = match printed.stream() {
            Some("stderr") => record.stderr.as_ref(),
            _ => record.stdout.as_ref(),
        }
        .map(|f| f.path.clone());
        let outcome_text = match (self.plan.timeout_s, copy) {
            (Some(t), _) if record.timed_out => format!("timed out after {t} s (--timeout)"),
            (_, Some((ended, _))) => ended,
            _ => record.outcome(),
        };
        let unread = !warmup && !failed && self.metrics_unread(p, &record);
        if !warmup {
            sink.record(p, record, &units).map_err(ExecError::Sink)?;
        }
        if unread {
            return Ok(Some(Stop::MetricsNotFound));
        }
        if failed && !self.plan.ignore_failure {
            return Ok(Some(Stop::Failed { point: p, outcome: outcome_text, printed, saved }));
        }
        if !warmup && self.sched.point_complete(p) {
            self.cleaned[p] = true;
            Hooks { exec: &mut *exec, point, show_output: self.show_output }
                .run("cleanup", &point.hooks.cleanup)?;
        }
        Ok(None)
    }

    /// What comes before a run: the point's setup hook (once), its prepare hook, and the eviction
    /// of its inputs, which it returns.
    fn before(
        &mut self,
        p: usize,
        point: &Point,
        sink: &mut dyn Sink,
        exec: &mut dyn Executor,
    ) -> Result<Option<pagecache::Eviction>, ExecError> {
        let mut hooks = Hooks { exec, point, show_output: self.show_output };
        if !self.set_up[p] {
            // Interleaved rounds set every point up before any is cleaned up: a setup that starts
            // a server finds the last point's still running.
            let other = (0..self.set_up.len()).find(|&q| self.set_up[q] && !self.cleaned[q]);
            hooks.run("setup", &point.hooks.setup).map_err(|e| match (e, other) {
                (ExecError::Hook(mut h), Some(other)) if self.plan.order != Order::Sequential => {
                    h.hint = format!(
                        "; the setup of {} ran and its cleanup had not yet: in interleaved rounds every point is set up before any is cleaned up (--order sequential sets up, runs and cleans up one point at a time)",
                        self.plan.point(other).map_or_else(|_| "another point".into(), |o| o.label())
                    );
                    ExecError::Hook(h)
                }
                (e, _) => e,
            })?;
            self.set_up[p] = true;
        }
        hooks.run("prepare", &point.hooks.prepare)?;
        let eviction =
            if point.evict.is_empty() { None } else { Some(pagecache::evict(&point.evict)?) };
        self.warnings.eviction(sink, eviction.as_ref());
        Ok(eviction)
    }

    /// Marks a run watched lean, or, after a measured, traced run whose threads ran on or were
    /// ready for [`LEAN_BUSY`] of its CPU capacity, watches the point's later runs lean: the
    /// tracer explains idle CPUs and the run left almost none, while on busy CPUs the events on
    /// the job's threads take its time (3% of the CPU of `pigz -p 2`). Not with
    /// `--trace-every-run`, and not after a failed run or one the machine held back.
    fn watch_lean(&mut self, p: usize, warmup: bool, record: &mut RunRecord) {
        let decides = !warmup && record.counted();
        let Some(threads) = record.threads.as_mut() else { return };
        if let Some(busy) = self.lean[p] {
            threads.lean = Some(busy);
            return;
        }
        let busy = threads.capacity.as_ref().map(Capacity::wanted_share);
        if let Some(busy) = busy.filter(|&b| b >= LEAN_BUSY)
            && decides
            && threads.tracer.is_some()
            && !self.plan.trace_every_run
        {
            self.lean[p] = Some(busy);
        }
    }

    /// What to run for `task` and how: `argv` (the point's command, or the launcher's).
    fn spec<'s>(&self, task: Task, point: &'s Point, argv: &'s [String]) -> Spec<'s> {
        let lean = self.lean[task.point()].is_some();
        let sample = self.plan.sample_rate_hz.map(|rate_hz| Config {
            rate_hz: if lean { rate_hz.min(LEAN_RATE_HZ) } else { rate_hz },
            trace: !self.plan.no_trace && !lean,
            on_cpu: !lean,
            capacity: capacity(self.plan, point),
            ..Default::default()
        });
        Spec {
            argv,
            env: &point.env,
            timeout: self.timeout,
            scanner: self.scanner.clone(),
            show_output: self.show_output,
            sample: if point.launch.is_some() { None } else { sample },
            kill_leftovers: true,
            again: point.launch.is_none()
                && point.evict.is_empty()
                && point.hooks.prepare.is_none()
                && point.hooks.conclude.is_none()
                && self.sched.next_on_success(task).is_some_and(|t| t.point() == task.point()),
        }
    }

    /// The run's record: what it measured, its round, eviction and thread report, its ranks'
    /// parts merged, and its output saved (a warm-up's only when it failed).
    fn record(
        &self,
        outcome: &mut Outcome,
        run: &RunOf,
        started: f64,
        eviction: Option<pagecache::Eviction>,
        sink: &dyn Sink,
    ) -> RunRecord {
        let mut record = measure(outcome, run.point, run.index, started, &self.scanner);
        record.round = if run.warmup { None } else { self.sched.round() };
        record.evict = eviction.map(Box::new);
        // One sweep of the sampler says nothing about where a run's time went (a run shorter
        // than the sampling interval): no report rather than an empty one.
        record.threads = outcome.threads.take().filter(|t| t.samples >= 2).map(Box::new);
        if let (Some(l), Some(dir)) = (&run.point.launch, &run.parts) {
            ranks::merge(&mut record, ranks::read_all(dir), l.ranks, run.point.work.is_some());
            let _ = std::fs::remove_dir_all(dir);
            if let Some(base) = dir.parent() {
                let _ = std::fs::remove_dir(base);
            }
        }
        // A process may have held more between two memory readings than any reading saw.
        let max_rss = record.max_rss_bytes;
        if let Some(m) = record.threads.as_mut().and_then(|t| t.memory.as_mut()) {
            m.at_least_resident(max_rss);
        }
        if !run.warmup || !record.succeeded() {
            record.stdout = save_output(sink, &run.stem, "stdout", &outcome.stdout).map(Box::new);
            record.stderr = save_output(sink, &run.stem, "stderr", &outcome.stderr).map(Box::new);
        }
        record
    }

    /// Tells the scheduler how a measured run of point `p` ended, and the sink the point's number
    /// of runs when that became known.
    fn schedule(&mut self, p: usize, failed: bool, wall_s: f64, sink: &mut dyn Sink) {
        let had_target = self.sched.progress()[p].target.is_some();
        if failed {
            self.sched.failed(p);
        } else {
            self.sched.finished(p, wall_s);
        }
        if let (false, Some(t)) = (had_target, self.sched.progress()[p].target) {
            sink.target(p, t);
        }
    }
}

/// The warning for a run held stopped: how long, and what becomes of it.
fn held_warning(point: &Point, record: &RunRecord, again: bool) -> String {
    let then = if again { "measured again" } else { "no more runs added in its place" };
    format!(
        "{}: run {} was held stopped for {:.1} s of its {:.1} s (SIGSTOP, Ctrl-Z or a batch system's suspend): kept in the results, left out of the statistics, {then}",
        point.label(),
        record.index + 1,
        record.stopped_s(),
        record.wall_s
    )
}

/// Warnings a sweep says once: a metric missing from one run is usually missing from all (the
/// table's notes count the runs without it), and an eviction that may not have left the inputs
/// cold is so for every run.
#[derive(Default)]
struct Warnings {
    /// The metrics said missing.
    missing: Vec<String>,
    /// The eviction was said not cold.
    eviction: bool,
}

impl Warnings {
    /// Says why an eviction may not have left the inputs cold, the first time.
    fn eviction(&mut self, sink: &mut dyn Sink, e: Option<&pagecache::Eviction>) {
        if let Some(why) = e.and_then(not_cold).filter(|_| !self.eviction) {
            sink.event(Event::Warning(why));
            self.eviction = true;
        }
    }

    /// Says which metrics a measured run did not print, each the first time.
    fn missing_metrics(&mut self, sink: &mut dyn Sink, record: &RunRecord, point: &Point) {
        for name in &record.missing_metrics {
            if self.missing.contains(name) {
                continue;
            }
            sink.event(Event::Warning(format!(
                "metric '{name}' was not found in the output of run {} of {} (its regex matched nothing, or captured no number scalescope reads); recorded as missing (said once: the table's notes count the runs without it)",
                record.index + 1,
                point.label()
            )));
            self.missing.push(name.clone());
        }
    }
}

/// The warning for a run that left processes running outside its group.
fn left_running(point: &Point, strays: u32) -> String {
    format!(
        "a run of {} left {} process{} running after it exited (daemons out of its process group); killed",
        point.label(),
        strays,
        if strays == 1 { "" } else { "es" }
    )
}

/// The first failed copy or rank of a launched run, how it ended and what it printed at its end:
/// its own lines (nothing when it printed none), not the run's output, which mixes every copy's.
fn failed_copy(record: &RunRecord) -> Option<(String, Printed)> {
    let f = record.ranks.iter().find(|p| !p.succeeded())?;
    let ended =
        RunRecord { exit_code: f.exit_code, signal: f.signal, ..Default::default() }.outcome();
    let printed = f
        .printed
        .clone()
        .map_or(Printed::Nothing, |lines| Printed::Text { stream: "stdout", lines });
    Some((format!("rank {}: {ended}", f.rank), printed))
}

/// Builds the run record from what the child run measured.
fn measure(
    o: &Outcome,
    point: &Point,
    index: u32,
    started_unix_s: f64,
    scanner: &Scanner,
) -> RunRecord {
    let u = &o.usage;
    let metrics = metrics::to_map(&o.stdout.found, &o.stderr.found);
    let throughput = match &point.work {
        Some(w) if o.wall_s > 0.0 => Some(w.amount / o.wall_s),
        _ => metrics.get("throughput").and_then(Value::as_f64),
    };
    let missing_metrics =
        scanner.expected().filter(|n| !metrics.contains_key(*n)).map(String::from).collect();
    RunRecord {
        index,
        round: None,
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
        pace_ns: None,
        memory_pace_ns: None,
        throughput,
        evict: None,
        threads: None,
        stdout: None,
        stderr: None,
        ranks: Vec::new(),
        missing_ranks: Vec::new(),
    }
}

/// What a user must know about an eviction that may not have left the input cold (said once).
fn not_cold(e: &pagecache::Eviction) -> Option<String> {
    if e.unchecked_bytes > 0 {
        return Some(format!(
            "--evict: {:.1} MB of the inputs belong to another user and are not writable by you: they were dropped from the page cache, but Linux does not show you whether they stayed out (each run's storage_read_bytes in the results says how much came from the disk)",
            e.unchecked_bytes as f64 / 1e6
        ));
    }
    e.resident_fraction.filter(|f| *f > 0.05).map(|f| {
        format!(
            "--evict: {:.0}% of the inputs stayed in the page cache (pages another process keeps mapped, or a file system that ignores the advice): runs are not fully cold",
            f * 100.0
        )
    })
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
    l: &Launch,
    dir: &Path,
    plan: &Plan,
    command: &[String],
) -> Result<Vec<String>, ExecError> {
    let exe = std::env::current_exe().map_err(|source| child::SpawnError::System {
        program: "scalescope agent".into(),
        source,
    })?;
    let mut argv = l.prefix.clone();
    argv.extend([
        exe.display().to_string(),
        "agent".into(),
        "--parts".into(),
        dir.display().to_string(),
    ]);
    if l.copies > 0 {
        argv.extend(["--copies".into(), l.copies.to_string()]);
    }
    match plan.sample_rate_hz {
        Some(hz) => argv.extend(["--sample-rate".into(), hz.to_string()]),
        None => argv.push("--no-sample".into()),
    }
    if plan.no_trace {
        argv.push("--no-trace".into());
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

fn save_output(sink: &dyn Sink, stem: &str, stream: &str, cap: &Captured) -> Option<OutputFile> {
    if cap.total == 0 {
        return None;
    }
    let dir = sink.folder()?.join("output");
    std::fs::create_dir_all(&dir).ok()?;
    let name = format!("{stem}.{stream}");
    files::write(&dir.join(&name), &cap.bytes()).ok()?;
    Some(OutputFile {
        path: format!("output/{name}"),
        bytes: cap.total,
        truncated: cap.truncated(),
    })
}

/// Runs a point's hooks through `sh -c`, each in its own process group; a non-zero exit stops
/// the sweep.
struct Hooks<'a> {
    exec: &'a mut dyn Executor,
    point: &'a Point,
    show_output: bool,
}

impl Hooks<'_> {
    fn run(&mut self, which: &'static str, text: &Option<String>) -> Result<(), ExecError> {
        let Some(text) = text else { return Ok(()) };
        let argv = vec!["sh".to_string(), "-c".to_string(), text.clone()];
        let scanner = Arc::new(Scanner::new(&[]).expect("no extractors"));
        let spec = Spec {
            argv: &argv,
            env: &self.point.env,
            timeout: None,
            scanner,
            show_output: self.show_output,
            sample: None,
            kill_leftovers: false,
            again: false,
        };
        let o = self.exec.run(&spec)?;
        if o.interrupted || o.exit_code == Some(0) {
            return Ok(());
        }
        let ended = match (o.exit_code, o.signal) {
            (Some(c), _) => format!("exited with code {c}"),
            (_, Some(s)) => format!("was killed by {}", signal_name(s)),
            _ => "failed".into(),
        };
        Err(ExecError::Hook(Box::new(HookFailed {
            which,
            command: text.clone(),
            ended,
            point: self.point.label(),
            printed: Printed::of(&o.stdout, &o.stderr),
            hint: String::new(),
        })))
    }
}

/// CPUs a run of `point` could use at once when the sweep counts workers: min(N, allowed CPUs);
/// otherwise the accounting takes the work threads it sees.
fn capacity(plan: &Plan, point: &Point) -> Option<f64> {
    let axis = plan.axis.as_ref().filter(|a| a.counts == crate::plan::Counts::Workers)?;
    let n: f64 = point.params.iter().find(|(name, _)| *name == axis.param)?.1.parse().ok()?;
    Some(n.min(crate::machine::allowed_cpus().max(1) as f64))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{Request, build};

    /// Runs nothing: logs each command and answers with an exit code chosen by a script.
    struct Scripted {
        log: Vec<String>,
        wall_s: f64,
        exit: fn(&str) -> i32,
    }

    impl Executor for Scripted {
        fn run(&mut self, spec: &Spec) -> Result<Outcome, child::SpawnError> {
            let line = spec.argv.join(" ");
            let code = (self.exit)(&line);
            self.log.push(line);
            let scanner = Arc::new(Scanner::new(&[]).unwrap());
            let stderr = super::super::capture::drain(&b"boom\n"[..], scanner, None);
            Ok(Outcome { wall_s: self.wall_s, exit_code: Some(code), stderr, ..Outcome::default() })
        }
    }

    #[derive(Default)]
    struct Memory {
        runs: Vec<(usize, RunRecord)>,
        targets: Vec<(usize, u32)>,
        lean: Option<f64>,
    }

    impl Sink for Memory {
        fn record(
            &mut self,
            point: usize,
            run: RunRecord,
            _: &[(String, String)],
        ) -> Result<(), WriteError> {
            self.runs.push((point, run));
            Ok(())
        }
        fn target(&mut self, point: usize, runs: u32) {
            self.targets.push((point, runs));
        }
        fn event(&mut self, _: Event) {}
        fn folder(&self) -> Option<PathBuf> {
            None
        }
        fn runs_recorded(&self, point: usize) -> usize {
            self.runs.iter().filter(|(p, _)| *p == point).count()
        }
        fn lean(&self, point: usize) -> Option<f64> {
            self.lean.filter(|_| point == 0)
        }
    }

    /// Answers every run as sampled, traced when asked, its one CPU kept busy at `t=1` and half
    /// idle at `t=2`; logs how each run was to be watched.
    struct Watched {
        log: Vec<(String, bool, f64)>,
    }

    impl Executor for Watched {
        fn run(&mut self, spec: &Spec) -> Result<Outcome, child::SpawnError> {
            let c = spec.sample.expect("sampled");
            self.log.push((spec.argv.join(" "), c.trace, c.rate_hz));
            let idle = if spec.argv[1] == "1" { 0.0 } else { 0.5 };
            let capacity = crate::results::Capacity {
                cpus: 1.0,
                span_s: 1.0,
                idle: vec![crate::results::IdleShare {
                    kind: crate::results::IdleKind::NoWork,
                    class: None,
                    object: None,
                    phase: crate::results::Phase::Steady,
                    core_s: idle,
                    threads: 0,
                    carried_s: 0.0,
                }],
                ..Default::default()
            };
            let threads = crate::results::ThreadReport {
                samples: 5,
                capacity: Some(capacity),
                tracer: c.trace.then(crate::results::TracerReport::default),
                ..Default::default()
            };
            Ok(Outcome {
                wall_s: 1.0,
                exit_code: Some(0),
                threads: Some(threads),
                ..Default::default()
            })
        }
    }

    #[test]
    fn a_point_whose_traced_run_kept_its_cpus_busy_is_watched_lean_after_it() {
        let p = plan(|r| {
            r.runs = Some(3);
            r.sample_rate_hz = Some(100.0);
        });
        let mut exec = Watched { log: Vec::new() };
        let mut sink = Memory::default();
        let progress = vec![PointProgress::default(); p.len()];
        run(&p, (progress, 0), &mut sink, &mut exec, false).unwrap();
        let watched = |arg: &str| -> Vec<(bool, f64)> {
            exec.log.iter().filter(|(a, ..)| a == arg).map(|(_, t, r)| (*t, *r)).collect()
        };
        assert_eq!(watched("prog 1"), [(true, 100.0), (false, 20.0), (false, 20.0)]);
        assert_eq!(watched("prog 2"), [(true, 100.0); 3]);
        let lean: Vec<Option<f64>> = sink
            .runs
            .iter()
            .filter(|(p, _)| *p == 0)
            .map(|(_, r)| r.threads.as_ref().unwrap().lean)
            .collect();
        assert_eq!(lean, [None, Some(1.0), Some(1.0)]);
        // Runs added later (a verdict to decide, a resumed sweep) go on lean from the stored ones.
        let mut exec = Watched { log: Vec::new() };
        let mut sink = Memory { lean: Some(0.97), ..Memory::default() };
        let progress = vec![PointProgress::default(); p.len()];
        run(&p, (progress, 0), &mut sink, &mut exec, false).unwrap();
        assert!(exec.log.iter().filter(|(a, ..)| a == "prog 1").all(|(_, t, _)| !t));
        // And with --trace-every-run, every run is traced.
        let every = plan(|r| {
            r.runs = Some(3);
            r.sample_rate_hz = Some(100.0);
            r.trace_every_run = true;
        });
        let mut exec = Watched { log: Vec::new() };
        let progress = vec![PointProgress::default(); every.len()];
        run(&every, (progress, 0), &mut Memory::default(), &mut exec, false).unwrap();
        assert!(exec.log.iter().all(|(_, t, _)| *t), "{:?}", exec.log);
    }

    fn plan(extra: impl FnOnce(&mut Request)) -> Plan {
        let mut r = Request {
            command: vec!["prog".into(), "{t}".into()],
            params: vec!["t=1,2".into()],
            runs: Some(2),
            ..Request::default()
        };
        extra(&mut r);
        build(&r, 4).unwrap()
    }

    fn sweep(
        plan: &Plan,
        exit: fn(&str) -> i32,
        wall_s: f64,
    ) -> (Result<Stop, ExecError>, Vec<String>, Memory) {
        let mut exec = Scripted { log: Vec::new(), wall_s, exit };
        let mut sink = Memory::default();
        let progress = vec![PointProgress::default(); plan.len()];
        let stop = run(plan, (progress, 0), &mut sink, &mut exec, false);
        (stop, exec.log, sink)
    }

    #[test]
    fn interleaved_rounds_run_the_hooks_with_hyperfines_meanings() {
        let p = plan(|r| {
            r.warmup = 1;
            r.hooks.setup = Some("setup {t}".into());
            r.hooks.cleanup = Some("cleanup {t}".into());
            r.hooks.prepare = Some("prepare".into());
        });
        let (stop, log, sink) = sweep(&p, |_| 0, 0.1);
        assert_eq!(stop.unwrap(), Stop::Complete);
        let runs: Vec<&str> = log
            .iter()
            .map(|l| l.strip_prefix("sh -c ").unwrap_or(l))
            .filter(|l| *l != "prepare")
            .collect();
        assert_eq!(
            runs,
            [
                "setup 1",
                "prog 1",
                "setup 2",
                "prog 2",
                "prog 1",
                "prog 2",
                "prog 1",
                "cleanup 1",
                "prog 2",
                "cleanup 2"
            ]
        );
        assert_eq!(
            log.iter().filter(|l| l.ends_with("prepare")).count(),
            6,
            "before every run, warm-ups included"
        );
        assert_eq!(sink.runs.iter().map(|(p, _)| *p).collect::<Vec<_>>(), [0, 1, 0, 1]);
        assert_eq!(
            sink.runs.iter().map(|(_, r)| r.round).collect::<Vec<_>>(),
            [Some(0), Some(0), Some(1), Some(1)]
        );
    }

    #[test]
    fn a_failed_run_is_recorded_and_stops_the_sweep_unless_ignored() {
        let p = plan(|r| r.order = Some(crate::plan::Order::Sequential));
        let (stop, _, sink) = sweep(&p, |l| if l == "prog 2" { 3 } else { 0 }, 0.1);
        let Ok(Stop::Failed { point, outcome, printed, .. }) = stop else { panic!("{stop:?}") };
        assert_eq!((point, outcome.as_str()), (1, "exit code 3"));
        assert_eq!(printed, Printed::Text { stream: "stderr", lines: "boom".into() });
        assert_eq!(sink.runs.len(), 3, "the failed run is kept");
        let p = plan(|r| r.ignore_failure = true);
        let (stop, _, sink) = sweep(&p, |l| if l == "prog 2" { 3 } else { 0 }, 0.1);
        assert_eq!((stop.unwrap(), sink.runs.len()), (Stop::Complete, 4));
    }

    #[test]
    fn automatic_runs_set_each_points_target_after_its_first_run() {
        let p = plan(|r| r.runs = None);
        let (stop, _, sink) = sweep(&p, |_| 0, 0.5);
        assert_eq!(stop.unwrap(), Stop::Complete);
        assert_eq!(sink.targets, [(0, 6), (1, 6)]);
        assert_eq!(sink.runs.len(), 12);
    }

    #[test]
    fn a_failing_hook_stops_the_sweep_with_what_it_printed() {
        let p = plan(|r| r.hooks.setup = Some("make -j{t}".into()));
        let (stop, log, _) = sweep(&p, |l| if l.contains("make") { 2 } else { 0 }, 0.1);
        let e = stop.unwrap_err();
        assert_eq!(
            e.to_string(),
            "the setup hook `make -j1` exited with code 2 at t=1; it printed, at the end:\nboom"
        );
        assert!(!e.is_user_mistake());
        assert_eq!(log.len(), 1, "nothing ran after it");
    }
}
