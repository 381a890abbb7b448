//! Signals during a sweep. Ctrl-C and SIGTERM: the workload's group is stopped, results.json stays
//! valid with every finished run, and `--resume` completes the sweep without repeating runs. A run
//! held stopped (SIGSTOP): kept, left out of the statistics, measured again.

use crate::common;
use common::*;
use scalescope::results::{Results, SCHEMA_VERSION, Status};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Runs in results.json itself, without the journal.
fn in_file(dir: &std::path::Path) -> usize {
    let Ok(text) = std::fs::read_to_string(dir.join("results.json")) else { return 0 };
    let doc: Results = serde_json::from_str(&text).expect("results.json is never torn");
    doc.run_count()
}

/// Runs recorded so far, as any reader of the folder sees them: results.json and the journal of
/// the runs saved since it was last rewritten (rewritten seldom when saving it is slow).
fn recorded(dir: &std::path::Path) -> usize {
    if !dir.join("results.json").exists() {
        return 0;
    }
    let (_, doc) = scalescope::results::load(dir).expect("results.json is never torn");
    doc.run_count()
}

fn interrupt_then_resume(signal: i32, expected_code: i32) {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("r");
    let child = Command::new(bin())
        .args([
            "run",
            "-r",
            "3",
            "-w",
            "0",
            "-o",
            dir.to_str().unwrap(),
            "--param",
            "n=1,2,3",
            "--",
        ])
        .args(["sh", "-c", "sleep 0.15", "{n}"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while recorded(&dir) < 2 {
        assert!(start.elapsed() < Duration::from_secs(20), "no runs recorded");
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(100));
    unsafe { libc::kill(child.id() as i32, signal) };
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(expected_code));
    let msg = String::from_utf8_lossy(&out.stderr);
    assert!(msg.contains("--resume"), "{msg}");

    let doc = results(&dir);
    assert_eq!(doc.status, Status::Interrupted);
    let kept = recorded(&dir);
    assert!((2..9).contains(&kept), "{kept} runs kept");
    for r in doc.points.iter().flat_map(|p| &p.runs) {
        assert_eq!(r.exit_code, Some(0), "the interrupted run must not be recorded");
    }
    // Its findings stand on fewer runs than planned: the notes say so until the sweep completes.
    let stopped = format!("the sweep stopped before its runs were done ({kept} of 9 runs)");
    let shown = scalescope(d.path(), &["show", dir.to_str().unwrap()]);
    assert!(String::from_utf8_lossy(&shown.stdout).contains(&stopped), "{}", stderr(&shown));

    let o = scalescope(d.path(), &["run", "--resume", dir.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("the command it recorded: sh -c 'sleep 0.15' {n}"),
        "as typed: {}",
        stderr(&o)
    );
    let doc = results(&dir);
    assert_eq!(doc.status, Status::Complete);
    let shown = scalescope(d.path(), &["show", dir.to_str().unwrap()]);
    assert!(!String::from_utf8_lossy(&shown.stdout).contains("the sweep stopped"));
    for (i, p) in doc.points.iter().enumerate() {
        let idx: Vec<u32> = p.runs.iter().map(|r| r.index).collect();
        assert_eq!(idx, [0, 1, 2], "point {i}");
    }
    let again = scalescope(d.path(), &["run", "--resume", dir.to_str().unwrap()]);
    assert_eq!(again.status.code(), Some(2));
    assert!(stderr(&again).contains("already complete"));
}

#[test]
fn sigint_keeps_finished_runs_and_resume_completes_them() {
    interrupt_then_resume(libc::SIGINT, 130);
}

#[test]
fn sigterm_does_the_same() {
    interrupt_then_resume(libc::SIGTERM, 143);
}

/// SIGKILL leaves no chance to save: runs not yet in results.json are in results.journal, and
/// `show` and `--resume` read them back.
#[test]
fn sigkill_loses_no_finished_run() {
    for _attempt in 0..5 {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path().join("r");
        let mut child = Command::new(bin())
            .args(["run", "-r", "3000", "-w", "0", "-o", dir.to_str().unwrap(), "--", "true"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let journal = dir.join("results.journal");
        let start = Instant::now();
        while !journal.exists() && start.elapsed() < Duration::from_secs(30) {
            std::thread::sleep(Duration::from_millis(5));
        }
        child.kill().unwrap();
        child.wait().unwrap();
        let in_file = in_file(&dir);
        let journaled = std::fs::read_to_string(&journal).map(|t| t.lines().count()).unwrap_or(0);
        if journaled == 0 {
            continue;
        }
        let o = scalescope(d.path(), &["show", "r", "--export-json", "all.json"]);
        assert!(o.status.success(), "{}", stderr(&o));
        let all: Results =
            serde_json::from_str(&std::fs::read_to_string(d.path().join("all.json")).unwrap())
                .unwrap();
        let shown = all.points[0].runs.len();
        assert!(
            shown > in_file,
            "the journal's runs are read back: {shown} shown, {in_file} in results.json"
        );
        assert!(shown <= in_file + journaled);

        let o = scalescope(d.path(), &["run", "--resume", "r"]);
        assert!(o.status.success(), "{}", stderr(&o));
        let doc = results(&dir);
        let idx: Vec<u32> = doc.points[0].runs.iter().map(|r| r.index).collect();
        assert_eq!(idx, (0..3000).collect::<Vec<u32>>());
        assert!(!journal.exists(), "a complete sweep leaves no journal");
        return;
    }
    panic!("never caught the sweep with journaled runs");
}

#[test]
fn sighup_does_the_same() {
    interrupt_then_resume(libc::SIGHUP, 129);
}

/// A workload that ignores SIGTERM keeps the first Ctrl-C waiting for the grace period; a second
/// Ctrl-C exits at once, kills the workload, and the results file on disk is still valid.
#[test]
fn a_second_ctrl_c_exits_at_once_and_kills_the_workload() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("r");
    let pidfile = d.path().join("pid");
    let script = format!("trap '' TERM; echo $$ > {}; sleep 30", pidfile.display());
    let child = Command::new(bin())
        .args(["run", "-r", "1", "-w", "0", "-o", dir.to_str().unwrap(), "--", "sh", "-c", &script])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while !pidfile.exists() || std::fs::read_to_string(&pidfile).unwrap().trim().is_empty() {
        assert!(start.elapsed() < Duration::from_secs(10), "the workload never started");
        std::thread::sleep(Duration::from_millis(10));
    }
    let workload: i32 = std::fs::read_to_string(&pidfile).unwrap().trim().parse().unwrap();
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    std::thread::sleep(Duration::from_millis(100));
    let second = Instant::now();
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    assert!(second.elapsed() < Duration::from_secs(1), "the second Ctrl-C did not exit at once");
    assert_eq!(out.status.code(), Some(130));
    std::thread::sleep(Duration::from_millis(50));
    assert!(!alive(workload), "the workload {workload} survived");
    let doc = results(&dir);
    assert_eq!(doc.schema_version, SCHEMA_VERSION);
}

/// Runs of one command follow each other at once (the next starts as the last one ends, while
/// that one is recorded): Ctrl-C still leaves only finished runs recorded and nothing running.
#[test]
fn ctrl_c_between_runs_of_one_command_leaves_nothing_running() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("r");
    let pids = d.path().join("pids");
    let script = format!("echo $$ >> {}; sleep 0.1", pids.display());
    let child = Command::new(bin())
        .args([
            "run",
            "-r",
            "30",
            "-w",
            "0",
            "-o",
            dir.to_str().unwrap(),
            "--",
            "sh",
            "-c",
            &script,
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while recorded(&dir) < 3 {
        assert!(start.elapsed() < Duration::from_secs(20), "no runs recorded");
        std::thread::sleep(Duration::from_millis(7));
    }
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", String::from_utf8_lossy(&out.stderr));
    let doc = results(&dir);
    assert_eq!(doc.status, Status::Interrupted);
    assert!(
        doc.points[0].runs.iter().all(|r| r.exit_code == Some(0)),
        "the interrupted run must not be recorded"
    );
    let started: Vec<i32> =
        std::fs::read_to_string(&pids).unwrap().lines().map(|l| l.parse().unwrap()).collect();
    assert!(started.len() > doc.points[0].runs.len() || started.len() >= 3);
    for pid in started {
        assert!(!alive(pid), "run {pid} still runs after the sweep was interrupted");
    }
}

/// A run started ahead is stopped, not waited for, when the sweep cannot go on: here the first
/// run replaces the results folder by a file, so its record fails while the second run sleeps.
/// The second run may also not have started yet (then it never does), or be stopped between its
/// shell creating the PID file and writing it: tried until it had written it.
#[test]
fn a_run_started_ahead_is_stopped_when_the_sweep_cannot_go_on() {
    for _attempt in 0..10 {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path().join("r");
        let (count, pid) = (d.path().join("count"), d.path().join("pid"));
        let script = format!(
            "if [ -e {count} ]; then echo $$ > {pid}; exec sleep 30; fi; touch {count}; sleep 0.05; rm -r {dir}; touch {dir}",
            count = count.display(),
            pid = pid.display(),
            dir = dir.display()
        );
        let start = Instant::now();
        let out = Command::new(bin())
            .args([
                "run",
                "-r",
                "3",
                "-w",
                "0",
                "-o",
                dir.to_str().unwrap(),
                "--",
                "sh",
                "-c",
                &script,
            ])
            .output()
            .unwrap();
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "the sweep waited for the run started ahead"
        );
        assert!(!out.status.success());
        let msg = String::from_utf8_lossy(&out.stderr);
        assert!(msg.contains("cannot write"), "{msg}");
        let Some(p) = std::fs::read_to_string(&pid).ok().and_then(|p| p.trim().parse::<i32>().ok())
        else {
            continue;
        };
        assert!(!alive(p), "the run started ahead ({p}) still runs");
        return;
    }
    panic!("the second run never started before the sweep stopped");
}

/// The pid of the process whose command line is `argv`, once it runs (10 s at most).
fn pid_of(argv: &[&str]) -> i32 {
    let want: Vec<u8> = argv.iter().flat_map(|a| a.bytes().chain([0])).collect();
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(10) {
        for e in std::fs::read_dir("/proc").unwrap().flatten() {
            let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else { continue };
            if std::fs::read(e.path().join("cmdline")).is_ok_and(|c| c == want) {
                return pid;
            }
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    panic!("{argv:?} never ran");
}

/// A run held stopped (SIGSTOP, SIGCONT a second later, as Ctrl-Z or a batch system's suspend
/// would) is kept in the results, left out of the statistics and measured again.
#[test]
fn a_run_held_stopped_is_left_out_and_measured_again() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("r");
    let child = Command::new(bin())
        .args(["run", "-r", "2", "-w", "0", "-o", dir.to_str().unwrap(), "--param", "n=7", "--"])
        .args(["sleep", "0.4{n}"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = pid_of(&["sleep", "0.47"]);
    std::thread::sleep(Duration::from_millis(100));
    unsafe { libc::kill(pid, libc::SIGSTOP) };
    std::thread::sleep(Duration::from_millis(1000));
    unsafe { libc::kill(pid, libc::SIGCONT) };
    let out = child.wait_with_output().unwrap();
    let msg = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{msg}");
    assert!(msg.contains("was held stopped for 1.0 s") && msg.contains("measured again"), "{msg}");

    let doc = results(&dir);
    let runs = &doc.points[0].runs;
    assert_eq!(runs.len(), 3, "the held run is kept beside two counted ones");
    let held: Vec<_> = runs.iter().filter(|r| r.held()).collect();
    assert_eq!(held.len(), 1, "{runs:?}");
    assert!((0.85..1.3).contains(&held[0].stopped_s()), "held {} s", held[0].stopped_s());
    assert!(runs.iter().filter(|r| !r.held()).all(|r| r.stopped_s() < 0.05), "{runs:?}");
    let wall = doc.points[0].stats().wall_s.unwrap();
    assert_eq!(wall.n, 2);
    assert!(wall.max < 0.9, "the held run's {} s left out", held[0].wall_s);
}
