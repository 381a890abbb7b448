//! Workload faults: each recorded as what it was, the sweep going on (with --ignore-failure) or
//! stopping as asked; bounded capture of huge output with flat memory; nothing left running.

use crate::common;

use common::{behave, results, scalescope, stderr, stdout, sweep};
use scalescope::results::RunRecord;
use std::path::Path;

/// Runs one sweep of `command` with `-i` and returns its first run.
fn one(dir: &Path, extra: &[&str], command: &[&str]) -> RunRecord {
    let _ = std::fs::remove_dir_all(dir.join("r"));
    let mut args = vec!["run", "-o", "r", "-r", "1", "-w", "0", "--no-sample", "-i"];
    args.extend(extra);
    args.push("--");
    args.extend(command);
    let o = scalescope(dir, &args);
    let run = results(&dir.join("r")).points.swap_remove(0).runs.swap_remove(0);
    if run.succeeded() && !run.missing_metrics.is_empty() {
        // A --metric no run printed: the user's mistake, exit code 2, the run kept.
        assert_eq!(o.status.code(), Some(2), "{command:?}: {}", stderr(&o));
    } else if run.succeeded() {
        assert!(o.status.success(), "{command:?}: {}", stderr(&o));
    } else {
        // Nothing was measured: said in one sentence, exit code 1, the run kept.
        assert_eq!(o.status.code(), Some(1), "{command:?}: {}", stderr(&o));
        assert!(stderr(&o).contains("every run failed"), "{command:?}: {}", stderr(&o));
    }
    run
}

/// Processes whose command line contains `marker`.
fn survivors(marker: &str) -> Vec<String> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().bytes().all(|b| b.is_ascii_digit()))
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
        .filter(|c| c.contains(marker) && !c.contains("scalescope"))
        .collect()
}

#[test]
fn crashes_are_recorded_as_what_they_were() {
    let d = tempfile::tempdir().unwrap();
    let exe = behave().display().to_string();
    let r = one(d.path(), &[], &[&exe, "segv"]);
    assert_eq!((r.signal, r.exit_code), (Some(11), None), "{r:?}");
    let r = one(d.path(), &[], &["sh", "-c", "kill -KILL $$"]);
    assert_eq!(r.signal, Some(9), "{r:?}");
    let r = one(d.path(), &["--metric", "tp=tp=([0-9]+)"], &["sh", "-c", "exit 0"]);
    assert_eq!(r.missing_metrics, ["tp"], "{r:?}");
    assert_eq!(r.exit_code, Some(0));
    // Missing from the first round: said once, counted in the notes, and the sweep stops there.
    let _ = std::fs::remove_dir_all(d.path().join("r"));
    let o = sweep(d.path(), "-r 3 -w 0 --no-sample --metric tp=tp=([0-9]+)", &["true"]);
    assert_eq!(stderr(&o).matches("metric 'tp' was not found").count(), 1, "{}", stderr(&o));
    assert!(stderr(&o).contains("stopped after every point's first run"), "{}", stderr(&o));
    assert!(stdout(&o).contains("1 run lacks a --metric value"), "{}", stdout(&o));
    let r = one(d.path(), &[], &["sh", "-c", "exec 1>&-; sleep 0.1; echo still here >&2"]);
    assert_eq!(r.exit_code, Some(0), "closing stdout early is not a failure: {r:?}");
    // Without --ignore-failure a crash stops the sweep with exit code 1, the run kept.
    let _ = std::fs::remove_dir_all(d.path().join("r"));
    let o = scalescope(
        d.path(),
        &["run", "-o", "r", "-r", "2", "-w", "0", "--no-sample", "--", &exe, "segv"],
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).starts_with("scalescope: a run failed (killed by SIGSEGV)"),
        "{}",
        stderr(&o)
    );
    assert_eq!(results(&d.path().join("r")).points[0].runs.len(), 1);
    // Nothing measured: no table of dashes, no report to open.
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(!out.contains("time (s)") && !out.contains("report:"), "{out}");
}

#[test]
fn a_gigabyte_of_output_is_captured_bounded_with_flat_memory() {
    // Against the same sweep of a kilobyte: scalescope's own fixed memory (among it the buffer
    // of the walk through memory timed before each run, twice the last-level cache) is no growth.
    let (small, _) = peak_of_a_sweep_printing(1_000);
    let (peak, d) = peak_of_a_sweep_printing(1_000_000_000);
    assert!(small > 0.0 && peak > 0.0, "scalescope's peak memory was read");
    assert!(
        peak - small < 32.0,
        "scalescope grew to {peak:.0} MiB reading 1 GB of output, against {small:.0} MiB for 1 kB"
    );
    let doc = results(&d.path().join("r"));
    let out = doc.points[0].runs[0].stdout.as_ref().expect("the output is saved");
    assert_eq!((out.bytes, out.truncated), (1_000_000_000, true), "{out:?}");
    let saved = std::fs::metadata(d.path().join("r").join(&out.path)).unwrap().len();
    assert!(saved <= 256 * 1024, "{saved} bytes kept");
}

#[test]
fn a_line_per_write_is_read_in_batches_not_one_wake_up_each() {
    let _guard = common::measuring();
    // Two threads write 20,000 lines, one write each. Woken at every write, the reader took 0.064
    // s of CPU per run against the job's 0.44 s (15%), on CPUs the job's threads wanted; the pipes
    // left to fill between short reads, 0.005 s (1%), sampler and tracer included.
    let d = tempfile::tempdir().unwrap();
    let exe = behave().to_str().unwrap().to_string();
    let o = sweep(d.path(), "-r 3 -w 0", &[&exe, "print", "2", "10000"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc = results(&d.path().join("r"));
    for r in &doc.points[0].runs {
        let own = r.threads.as_ref().expect("a thread report").scalescope_cpu_s;
        let job = r.user_s + r.sys_s;
        assert!(own < 0.05 * job, "scalescope used {own:.4} s of CPU beside the job's {job:.3} s");
        let out = r.stdout.as_ref().expect("the output is saved");
        // `thread T item I\n`: 16 to 19 bytes as I has 1 to 4 digits, every line read.
        assert_eq!(out.bytes, 2 * (10 * 16 + 90 * 17 + 900 * 18 + 9000 * 19));
    }
}

/// The peak of scalescope's own memory, in MiB, over a one-run sweep of a command that prints
/// `bytes` bytes, and the folder it wrote.
fn peak_of_a_sweep_printing(bytes: u64) -> (f64, tempfile::TempDir) {
    let d = tempfile::tempdir().unwrap();
    let size = bytes.to_string();
    let mut child = std::process::Command::new(common::bin())
        .args(["run", "-o", "r", "-r", "1", "-w", "0", "--no-sample", "--"])
        // A pause after the output, so that the peak is read after the walk's buffer is laid out.
        .args(["sh", "-c", &format!("head -c {size} /dev/zero; sleep 0.1")])
        .current_dir(d.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Read while it runs: wait4's ru_maxrss would also count this test process, whose pages the
    // child shared until it started scalescope.
    let status_file = format!("/proc/{}/status", child.id());
    let mut peak_kib = 0u64;
    let status = loop {
        if let Some(kib) = std::fs::read_to_string(&status_file).ok().and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches(" kB").parse().ok())
        }) {
            peak_kib = peak_kib.max(kib);
        }
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    };
    assert!(status.success());
    (peak_kib as f64 / 1024.0, d)
}

#[test]
fn a_fork_burst_and_a_daemon_leave_nothing_behind() {
    let d = tempfile::tempdir().unwrap();
    let r = one(d.path(), &[], &["sh", "-c", "for i in $(seq 300); do sleep 31.7 & done; exit 0"]);
    assert_eq!(r.exit_code, Some(0), "{r:?}");
    let r = one(d.path(), &[], &["sh", "-c", "setsid sleep 32.3 & sleep 0.2"]);
    assert_eq!(r.exit_code, Some(0), "{r:?}");
    std::thread::sleep(std::time::Duration::from_millis(200));
    assert!(survivors("sleep 31.7").is_empty(), "{:?}", survivors("sleep 31.7"));
    assert!(survivors("sleep 32.3").is_empty(), "{:?}", survivors("sleep 32.3"));
}
