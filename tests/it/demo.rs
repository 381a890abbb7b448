//! `scalescope` with no arguments runs the demo sweep, writes a results folder and records the
//! sweep in the history in the user's data folder.

use crate::common;
use common::*;

#[test]
fn no_arguments_runs_the_demo_and_writes_results() {
    let d = tempfile::tempdir().unwrap();
    // Recorded without a flag, where the user's data lives (here a folder of the test's own).
    let data = d.path().join("data");
    let o = std::process::Command::new(bin())
        .current_dir(d.path())
        .env("NO_COLOR", "1")
        .env_remove("SCALESCOPE_HISTORY")
        .env("XDG_DATA_HOME", &data)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let table = stdout(&o);
    assert!(
        table.contains("threads") && table.contains("speed-up") && table.contains("throughput"),
        "{table}"
    );
    let folders: Vec<_> = std::fs::read_dir(d.path().join("scalescope-results"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(folders.len(), 1);
    assert!(folders[0].to_string_lossy().ends_with("-demo"));
    let doc = results(&folders[0]);
    let cpus = std::thread::available_parallelism().unwrap().get();
    let threads = doc.points.last().unwrap().params.get("threads").and_then(|t| t.as_u64());
    assert_eq!(threads, Some(2 * cpus as u64), "one oversubscribed point");
    assert!(doc.points.iter().all(|p| p.runs.len() == 3));
    assert!(folders[0].join("summary.md").exists());
    let history = data.join("scalescope/history.sqlite");
    assert!(stderr(&o).contains("history: sweep #1 recorded"), "{}", stderr(&o));
    let listed = scalescope(d.path(), &["history", "--history", history.to_str().unwrap()]);
    assert!(stdout(&listed).contains("1 sweep in"), "{}{}", stdout(&listed), stderr(&listed));
}
