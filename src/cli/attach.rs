//! `scalescope attach PID`: where the threads of a running process (and its children) spend their
//! time, sampled for a while without stopping or tracing it. The sampler's counters run from each
//! thread's start; what the threads had done before the attach is taken away, so the totals
//! cover exactly the window sampled. Where the kernel allows it, the event tracer runs alongside
//! (exact switch intervals and on-CPU stacks in the report's `tracer` and `stacks`).

use super::args::AttachArgs;
use super::{Exit, Usage, view};
use crate::plan::parse_seconds;
use crate::report::{terminal, threads};
use crate::sample::evidence::Evidence;
use crate::sample::procfs::{self, ProcFile};
use crate::sample::tracer::TracerConfig;
use crate::sample::{self, Class, ThreadReport};
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// Whether the process still runs (a zombie has exited, whether or not its parent reaped it).
fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| crate::sample::procfs::stat(&s))
        .is_some_and(|st| !matches!(st.state, 'Z' | 'X'))
}

/// Samples the process for the requested duration (or until it exits) and prints the breakdown.
pub fn attach(args: &AttachArgs) -> anyhow::Result<Exit> {
    let pid = args.pid;
    let name = std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .map_err(|_| Usage(format!("no process with PID {pid} (or it is not visible to you)")))?;
    let seconds = parse_seconds(&args.duration)?;
    if !(0.05..=86_400.0).contains(&seconds) {
        return Err(Usage(format!("--duration {}: give between 50ms and 24h", args.duration)).into());
    }
    if !(args.sample_rate.is_finite() && (0.1..=10_000.0).contains(&args.sample_rate)) {
        return Err(Usage(format!("--sample-rate {}: give a rate between 0.1 and 10000 Hz", args.sample_rate)).into());
    }
    let config = sample::Config { rate_hz: args.sample_rate, ..Default::default() };
    let before = Baseline::take(pid);
    let mut evidence = (!args.no_trace).then(|| Evidence::start(pid, &TracerConfig::default()));
    let sampler =
        sample::Sampler::start(pid, config).ok_or_else(|| anyhow::anyhow!("cannot start the sampler thread"))?;
    let start = Instant::now();
    let limit = Duration::from_secs_f64(seconds);
    let mut exited = false;
    while start.elapsed() < limit {
        std::thread::sleep(Duration::from_millis(20).min(limit.saturating_sub(start.elapsed())));
        if let Some(e) = evidence.as_mut() {
            e.sweep();
        }
        if !alive(pid) {
            exited = true;
            break;
        }
    }
    let mut report = sampler.stop();
    before.remove_from(&mut report);
    if let Some(e) = evidence {
        let found = e.finish(None, &[]);
        report.stacks = found.stacks;
        report.tracer = found.tracer;
        report.limits.extend(found.limits);
    }
    let mut out = format!(
        "{pid} ({}): sampled {:.1} s{}; {} threads in {} process{}, {} sweeps ({:.0} Hz), sampler used {:.3} s of CPU\n",
        name.trim(),
        report.wall_s,
        if exited { " until it exited" } else { "" },
        report.threads_seen,
        report.processes_seen,
        if report.processes_seen == 1 { "" } else { "es" },
        report.samples,
        report.sample_rate_hz,
        report.sampler_cpu_s
    );
    let total = report.total_s();
    if let Some(merged) = threads::merge(&[&report]) {
        out.push_str(&format!("\nwhere thread time went: {}\n", threads::thread_time(&merged)));
        let mut lines = Vec::new();
        for c in Class::ALL {
            let s = report.seconds(c);
            if s > 0.0 {
                lines.push(format!("{:<14} {:>9.3} s  {:>5.1}%", c.name(), s, 100.0 * s / total));
            }
        }
        out.push_str(&terminal::render_section("thread time by class", &lines, terminal::colour()));
        out.push_str(&terminal::render_section(
            "waits",
            &threads::wait_lines(&format!("{pid}"), &merged, true),
            terminal::colour(),
        ));
        let running: Vec<String> = report
            .concurrency_s
            .iter()
            .enumerate()
            .filter(|(_, s)| **s > 0.0)
            .map(|(k, s)| format!("{k} running {:.0}%", 100.0 * s / report.concurrency_s.iter().sum::<f64>()))
            .collect();
        if !running.is_empty() {
            out.push_str(&format!("\nthreads on a CPU at once: {}\n", running.join(" · ")));
        }
        for l in &report.limits {
            out.push_str(&format!("not seen: {l}\n"));
        }
    }
    view::print(&out)?;
    if let Some(p) = &args.export_json {
        view::write(p, &(serde_json::to_string_pretty(&report)? + "\n"))?;
    }
    Ok(Exit::Done)
}

/// Each thread's counters at the moment of attaching: time on a CPU, in the run queue, and off a
/// CPU since it started.
struct Baseline {
    threads: HashMap<i32, (f64, f64, f64)>,
}

impl Baseline {
    fn take(pid: i32) -> Baseline {
        let now = procfs::boot_seconds();
        let tick = procfs::ticks_per_second();
        let threads = procfs::tree_tasks(pid)
            .into_iter()
            .filter_map(|(pid, tid)| {
                let dir = std::path::PathBuf::from(format!("/proc/{pid}/task/{tid}"));
                let ss = procfs::schedstat(ProcFile::open(&dir.join("schedstat"))?.read()?)?;
                let st = procfs::stat(ProcFile::open(&dir.join("stat"))?.read()?)?;
                let (on, runq) = (ss.on_cpu_ns as f64 * 1e-9, ss.runq_ns as f64 * 1e-9);
                let off = (now - st.starttime as f64 / tick - on - runq).max(0.0);
                Some((tid, (on, runq, off)))
            })
            .collect();
        Baseline { threads }
    }

    /// Takes the time before the attach out of the report: per listed thread exactly, in the
    /// class totals (and the waits) in proportion.
    fn remove_from(&self, r: &mut ThreadReport) {
        let (mut on, mut runq, mut off) = (0.0, 0.0, 0.0);
        for (a, b, c) in self.threads.values() {
            on += a;
            runq += b;
            off += c;
        }
        for t in &mut r.threads {
            if let Some((a, b, c)) = self.threads.get(&t.tid) {
                t.on_cpu_s = (t.on_cpu_s - a).max(0.0);
                t.runqueue_s = (t.runqueue_s - b).max(0.0);
                t.off_cpu_s = (t.off_cpu_s - c).max(0.0);
            }
        }
        let cpu = r.seconds(Class::CpuUser) + r.seconds(Class::CpuKernel);
        let is_off = |c: &Class| !matches!(c, Class::CpuUser | Class::CpuKernel | Class::Runqueue);
        let off_total: f64 = r.classes.iter().filter(|(c, _)| is_off(c)).map(|(_, s)| s).sum();
        let cpu_keep = if cpu > 0.0 { ((cpu - on) / cpu).max(0.0) } else { 0.0 };
        let off_keep = if off_total > 0.0 { ((off_total - off) / off_total).max(0.0) } else { 0.0 };
        for (c, s) in r.classes.iter_mut() {
            *s = match c {
                Class::CpuUser | Class::CpuKernel => *s * cpu_keep,
                Class::Runqueue => (*s - runq).max(0.0),
                _ => *s * off_keep,
            };
        }
        for w in &mut r.top_waits {
            w.seconds *= off_keep;
        }
    }
}
