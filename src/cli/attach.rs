//! `scalescope attach PID`: where the threads of a running process (and its children) spend their
//! time, sampled for a while without stopping or tracing it. The sampler takes each thread's
//! counters at its first sweep as the baseline, so the totals cover exactly the window sampled.
//! Where the kernel allows it, the event tracer runs alongside (exact switch intervals and on-CPU
//! stacks in the report's `tracer` and `stacks`). What idled the CPUs its threads could use is
//! judged as for one run of a sweep, the window having no start-up or tail of its own (findings).

use super::args::AttachArgs;
use super::{Exit, Usage, view};
use crate::error::Error;
use crate::plan::parse_seconds;
use crate::report::{terminal, thread_time, wait_lines};
use crate::results::Class;
use crate::sample;
use std::time::{Duration, Instant};

/// Whether the process still runs (a zombie has exited, whether or not its parent reaped it).
fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| crate::sample::procfs::stat(&s))
        .is_some_and(|st| !matches!(st.state, 'Z' | 'X'))
}

/// Samples the process for the requested duration (or until it exits) and prints the breakdown.
pub fn attach(args: &AttachArgs) -> Result<Exit, Error> {
    let pid = args.pid;
    let name = std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .map_err(|_| Usage(format!("no process with PID {pid} (or it is not visible to you)")))?;
    if pid == std::process::id() as i32 {
        return Err(
            Usage(format!("PID {pid} is this scalescope: attach to the process to watch")).into()
        );
    }
    // Linux hides another user's waits (syscall, stacks) and refuses events on them: nothing
    // the breakdown says would be worth reading.
    use std::os::unix::fs::MetadataExt;
    // SAFETY: geteuid has no preconditions.
    let euid = unsafe { libc::geteuid() };
    if let Ok(m) = std::fs::metadata(format!("/proc/{pid}"))
        && euid != 0
        && m.uid() != euid
    {
        return Err(Usage(format!(
            "process {pid} ({}) belongs to another user (uid {}): Linux shows where a process's threads wait only to its owner and to root; attach to one of your processes, or run scalescope as that user",
            name.trim(),
            m.uid()
        ))
        .into());
    }
    let seconds = parse_seconds(&args.duration)?;
    if !(0.05..=86_400.0).contains(&seconds) {
        return Err(
            Usage(format!("--duration {}: give between 50ms and 24h", args.duration)).into()
        );
    }
    if !(args.sample_rate.is_finite() && (0.1..=10_000.0).contains(&args.sample_rate)) {
        return Err(Usage(format!(
            "--sample-rate {}: give a rate between 0.1 and 10000 Hz",
            args.sample_rate
        ))
        .into());
    }
    let config = sample::Config {
        rate_hz: args.sample_rate,
        prior_life: false,
        trace: !args.no_trace,
        ..Default::default()
    };
    let sampler = sample::Sampler::start(pid, config).ok_or(Error::Sampler)?;
    let start = Instant::now();
    let limit = Duration::from_secs_f64(seconds);
    let mut exited = false;
    while start.elapsed() < limit {
        std::thread::sleep(Duration::from_millis(20).min(limit.saturating_sub(start.elapsed())));
        if !alive(pid) {
            exited = true;
            break;
        }
    }
    let report = sampler.stop();
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
    if let Some(merged) = crate::analysis::threads::merge(&[&report]).map(crate::diagnose::as_shown)
    {
        out.push_str(&format!("\nwhere thread time went: {}\n", thread_time(&merged)));
        let mut lines = Vec::new();
        for c in Class::ALL {
            let s = merged.classes.get(&c).copied().unwrap_or(0.0);
            if s > 0.0 {
                lines.push(format!("{:<14} {:>9.3} s  {:>5.1}%", c.name(), s, 100.0 * s / total));
            }
        }
        out.push_str(&terminal::render_section("thread time by class", &lines, terminal::colour()));
        out.push_str(&terminal::render_section(
            "waits",
            &wait_lines(&format!("{pid}"), &merged, true),
            terminal::colour(),
        ));
        let running: Vec<String> = report
            .concurrency_s
            .iter()
            .enumerate()
            .filter(|(_, s)| **s > 0.0)
            .map(|(k, s)| {
                format!("{k} running {:.0}%", 100.0 * s / report.concurrency_s.iter().sum::<f64>())
            })
            .collect();
        if !running.is_empty() {
            out.push_str(&format!("\nthreads on a CPU at once: {}\n", running.join(" · ")));
        }
        for l in &report.limits {
            out.push_str(&format!("not seen: {l}\n"));
        }
        let found = crate::diagnose::window(&report);
        if !found.is_empty() {
            out.push_str(&terminal::render_section(
                "findings",
                &crate::report::finding_lines(&found, terminal::colour(), &|n| format!("{n}")),
                terminal::colour(),
            ));
        }
    }
    view::print(&out)?;
    if let Some(p) = &args.export_json {
        view::write(p, &(serde_json::to_string_pretty(&report)? + "\n"))?;
    }
    Ok(Exit::Done)
}
