//! Ctrl-C and SIGTERM during a sweep: the workload's group is stopped, results.json stays valid
//! with every finished run, and `--resume` completes the sweep without repeating runs.

mod common;
use common::*;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn recorded(dir: &std::path::Path) -> usize {
    let Ok(text) = std::fs::read_to_string(dir.join("results.json")) else { return 0 };
    let doc: serde_json::Value = serde_json::from_str(&text).expect("results.json is never torn");
    doc["points"].as_array().unwrap().iter().map(|p| p["runs"].as_array().unwrap().len()).sum()
}

fn interrupt_then_resume(signal: i32, expected_code: i32) {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("r");
    let child = Command::new(bin())
        .args(["run", "-r", "3", "-w", "0", "-o", dir.to_str().unwrap(), "--param", "n=1,2,3", "--", "sleep", "0.3"])
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
    assert_eq!(doc["status"], "interrupted");
    let kept = recorded(&dir);
    assert!((2..9).contains(&kept), "{kept} runs kept");
    for p in doc["points"].as_array().unwrap() {
        for r in p["runs"].as_array().unwrap() {
            assert_eq!(r["exit_code"], 0, "the interrupted run must not be recorded");
        }
    }

    let o = scalescope(d.path(), &["run", "--resume", dir.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc = results(&dir);
    assert_eq!(doc["status"], "complete");
    for i in 0..3 {
        let idx: Vec<u64> = runs(&doc, i).iter().map(|r| r["index"].as_u64().unwrap()).collect();
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
