//! Every user mistake gets one clear sentence on stderr and exit code 2, and nothing runs.

use crate::common;
use common::*;

#[test]
fn bad_input_exits_2_with_one_sentence() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("a-file"), "").unwrap();
    let cases: &[(&[&str], &str)] = &[
        (
            &["run", "--param", "threads=1,2", "--", "prog", "-T{thread}"],
            "unknown placeholder {thread}",
        ),
        (&["run", "--param", "threads=", "--", "true"], "value list is empty"),
        (&["run", "--param", "threads=1,,2", "--", "true"], "empty value"),
        (&["run", "--param", "threads=8..1", "--", "true"], "is empty"),
        (&["run", "--param", "threads=1..8:x1", "--", "true"], "never grows"),
        (&["run", "--param", "threads=1,2"], "no command given"),
        (&["run", "--param", "threads=1,2", "xz", "-T{threads}"], "after `--`"),
        (&["run", "--param", "threads", "1,2", "--", "true"], "--param threads=1,2"),
        (&["run", "--thread", "1,2", "--", "true"], "run has no option --thread: "),
        (&["run", "--threads=1,2", "--", "true"], "write --param threads=1,2 and {threads}"),
        (&["run", "--threds", "1,2", "--", "true"], "write --param threads=1,2 and {threads}"),
        (&["run", "--warmpu", "1", "--", "true"], "did you mean"),
        (
            &["run", "--evict", "/nonexistent/input", "--", "true"],
            "cannot evict '/nonexistent/input'",
        ),
        (&["run", "--timeout", "ten", "--", "true"], "bad duration 'ten'"),
        (&["run", "--runs=two", "--", "true"], "invalid value 'two' for '--runs <N>'"),
        (&["run", "--order", "seq", "--", "true"], "a similar value exists: 'sequential'"),
        (&["run", "--metric", "x=([0-9", "--", "true"], "does not compile"),
        (&["run", "--metric", "x=[0-9]+", "--", "true"], "no capture group"),
        (&["run", "--work", "3 apples", "--", "true"], "work amount"),
        (&["run", "-o", "/proc/no/such/dir", "--", "true"], "cannot create the results folder"),
        (&["run", "-o", "a-file", "--", "true"], "a file of that name exists"),
        (&["run", "--", "/nonexistent/program"], "no such command"),
        (&["run", "--param", "a-b=1", "--", "true"], "not a parameter name"),
        (&["run", "--param", "n=1", "--param", "n=2", "--", "true"], "given twice"),
        (&["run", "--scale", "size", "--param", "n=1", "--", "true"], "--scale"),
        (
            &["run", "--baseline", "16", "--param", "threads=1,2", "--", "true"],
            "threads=16 would not be measured",
        ),
        (&["run", "--resume", "/nonexistent/results"], "cannot read"),
        (&["show", "/nonexistent/results.json"], "cannot read"),
        (&["probe", "scalable", "--threads", "0"], "at least 1"),
    ];
    for (args, phrase) in cases {
        let o = scalescope(d.path(), args);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {e}");
        assert!(e.contains(phrase), "{args:?}: expected '{phrase}' in: {e}");
        assert!(!e.contains("panicked") && !e.contains("RUST_BACKTRACE"), "{args:?}: {e}");
        assert!(
            e.starts_with("scalescope: ") && e.lines().count() == 1,
            "{args:?}: not one sentence: {e}"
        );
    }
}

#[test]
fn a_results_file_that_is_not_one_is_refused_clearly() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("x.json"), "{\"hello\": 1}").unwrap();
    std::fs::write(d.path().join("new.json"), "{\"schema_version\": 99}").unwrap();
    std::fs::write(d.path().join("torn.json"), "{\"schema_version\": 1, \"points\": [").unwrap();
    for (file, phrase) in [
        ("x.json", "no schema_version"),
        ("new.json", "install a newer scalescope"),
        ("torn.json", "not a scalescope results file"),
    ] {
        let o = scalescope(d.path(), &["show", file]);
        assert_eq!(o.status.code(), Some(2), "{file}");
        assert!(stderr(&o).contains(phrase), "{file}: {}", stderr(&o));
    }
}

#[test]
fn an_existing_results_folder_is_not_overwritten() {
    let d = tempfile::tempdir().unwrap();
    assert!(
        scalescope(d.path(), &["run", "-r", "1", "-w", "0", "-o", "r", "--", "true"])
            .status
            .success()
    );
    let before = std::fs::read_to_string(d.path().join("r/results.json")).unwrap();
    let o = scalescope(d.path(), &["run", "-r", "1", "-o", "r", "--", "true"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("already holds results"), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(d.path().join("r/results.json")).unwrap(), before);
}

#[test]
fn a_misspelt_command_leaves_no_folder_and_the_fixed_one_runs_with_the_same_out() {
    let d = tempfile::tempdir().unwrap();
    let o =
        scalescope(d.path(), &["run", "-r", "1", "-w", "0", "-o", "r", "--", "/nonexistent/true"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("no such command"), "{}", stderr(&o));
    assert!(!d.path().join("r").exists(), "nothing was measured, nothing is kept");
    let o = scalescope(d.path(), &["run", "-r", "1", "-w", "0", "-o", "r", "--", "true"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(d.path().join("r/results.json").is_file());
}

#[test]
fn every_reader_refuses_a_broken_results_file_in_one_sentence() {
    let d = tempfile::tempdir().unwrap();
    let good = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/report/results.json"
    ))
    .unwrap();
    let version = format!("\"schema_version\": {}", scalescope::results::SCHEMA_VERSION);
    assert!(good.contains(&version), "the fixture is of this version");
    let mut rng = scalescope::stats::Rng::new(9);
    let garbage: Vec<u8> = (0..20_000_000).map(|_| rng.next_u64() as u8).collect();
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        ("torn.json", good.as_bytes()[..good.len() / 2].to_vec(), "not a scalescope results file"),
        ("garbage.json", garbage, "not a scalescope results file"),
        ("array.json", b"[1, 2, 3]".to_vec(), "no schema_version"),
        (
            "old.json",
            good.replace(&version, "\"schema_version\": 0").into_bytes(),
            "older than this scalescope reads",
        ),
        (
            "new.json",
            good.replace(&version, "\"schema_version\": 7").into_bytes(),
            "install a newer scalescope",
        ),
        (
            "edited.json",
            good.replacen("\"wall_s\": 0.", "\"wall_s\": \"fast\", \"x\": 0.", 1).into_bytes(),
            "not a scalescope results file",
        ),
        ("empty.json", Vec::new(), "not a scalescope results file"),
    ];
    for (name, bytes, _) in &cases {
        std::fs::write(d.path().join(name), bytes).unwrap();
    }
    std::fs::write(d.path().join("good.json"), &good).unwrap();
    for (name, _, says) in &cases {
        let commands: [Vec<&str>; 5] = [
            vec!["show", name],
            vec!["analyze", name],
            vec!["report", name, "-o", "x.html"],
            vec!["compare", "good.json", name],
            vec!["run", "--resume", name],
        ];
        for args in commands {
            let o = scalescope(d.path(), &args);
            let err = stderr(&o);
            assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
            assert!(
                err.contains(says) && !err.contains("panicked") && err.trim().lines().count() == 1,
                "{args:?}: {err}"
            );
        }
    }
}

/// `scalescope run … 2>&1 | head -1`: the pipe closes after the first progress line, and the sweep
/// goes on to its end, writes its report and exits 0 (it had panicked, exit 101, with no report).
#[test]
fn a_closed_output_pipe_neither_crashes_nor_loses_the_report() {
    let dir = tempfile::tempdir().unwrap();
    let script = format!(
        "'{}' run -r 3 -w 0 -o r --param k=5,6 -- sleep 0.{{k}} 2>&1 | head -1; exit ${{PIPESTATUS[0]}}",
        crate::common::bin().display()
    );
    let o = std::process::Command::new("bash")
        .args(["-c", &script])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(dir.path().join("r/report.html").exists(), "the report is written");
    assert_eq!(crate::common::results(&dir.path().join("r")).run_count(), 6);
}
