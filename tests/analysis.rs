//! `scalescope analyze` on published scaling tables (../shared/fixtures, or tests/fixtures when
//! the project is built alone) and on degenerate input.

mod common;
use common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    let shared = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/fixtures").join(name);
    if shared.exists() { shared } else { Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name) }
}

fn analyze_csv(file: &Path, count: &str) -> (String, Value) {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("a.json");
    let o = scalescope(
        d.path(),
        &[
            "analyze",
            "--csv",
            file.to_str().unwrap(),
            "--count",
            count,
            "--throughput",
            "throughput_mb_s",
            "--cpu",
            "cpu_pct",
            "--export-json",
            out.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    (stdout(&o), serde_json::from_str(&std::fs::read_to_string(out).unwrap()).unwrap())
}

fn point(a: &Value, count: f64) -> &Value {
    a["series"][0]["points"].as_array().unwrap().iter().find(|p| p["count"].as_f64() == Some(count)).unwrap()
}

#[test]
fn the_90x_dataset_gives_46x_at_64_threads_as_if_99_4_percent_parallel() {
    let (text, a) = analyze_csv(&fixture("readspeed-90x.csv"), "threads");
    let p = point(&a, 64.0);
    assert!((p["speedup"].as_f64().unwrap() - 46.1).abs() < 0.06, "{p}");
    assert!((p["amdahl_parallel_pct"].as_f64().unwrap() - 99.4).abs() < 0.05, "{p}");
    assert!(text.contains("46.15× at 64 threads") && text.contains("as if 99.4% of the work were parallel"), "{text}");
    let s = &a["series"][0];
    assert!(s["amdahl"]["serial_fraction"]["ci95"].is_array(), "the Amdahl fit has an interval");
    assert!(s["usl"]["model"]["params"].is_array());
    assert!(s["retrograde"].is_null(), "the 90x dataset still scales");
    assert_eq!(s["best"]["count"], 64.0);
    assert!(!text.contains("R²") && !text.contains("R-squared"));
}

#[test]
fn the_original_dataset_before_patches_is_retrograde_past_32_threads() {
    let (text, a) = analyze_csv(&fixture("readspeed-original-before-patches.csv"), "threads");
    let s = &a["series"][0];
    assert_eq!(s["best"]["count"], 32.0);
    assert_eq!(s["best"]["near_best_count"], 16.0);
    assert_eq!(s["retrograde"]["beyond"], 32.0);
    assert!(s["retrograde"]["change_pct"].as_f64().unwrap() < -10.0);
    assert_eq!(s["usl"]["limited_by"], "coherency");
    let peak = s["usl"]["peak_count"]["value"].as_f64().unwrap();
    assert!((16.0..48.0).contains(&peak), "USL peak {peak}");
    assert!(text.contains("retrograde: beyond 32 threads, more is slower"), "{text}");
}

#[test]
fn the_original_dataset_after_patches_gives_26_7x_at_64_threads() {
    let (_, a) = analyze_csv(&fixture("readspeed-original-after-patches.csv"), "threads");
    assert!((point(&a, 64.0)["speedup"].as_f64().unwrap() - 26.7).abs() < 0.1);
    assert!(a["series"][0]["retrograde"].is_null());
}

#[test]
fn a_files_sweep_is_not_treated_as_a_thread_sweep() {
    let (text, a) = analyze_csv(&fixture("readspeed-files-at-64-threads.csv"), "files");
    assert_eq!(a["workers"], false);
    let s = &a["series"][0];
    assert!(s["amdahl"].is_null() && s["usl"].is_null());
    assert!(point(&a, 90.0)["efficiency"].is_null() && point(&a, 90.0)["karp_flatt"].is_null());
    assert!(text.contains("'files' does not count parallel workers"), "{text}");
    assert!(!text.lines().next().unwrap().contains("efficiency"), "no efficiency column: {text}");
}

#[test]
fn predictions_come_with_intervals_and_a_warning() {
    let d = tempfile::tempdir().unwrap();
    let o = scalescope(
        d.path(),
        &[
            "analyze",
            "--csv",
            fixture("readspeed-90x.csv").to_str().unwrap(),
            "--count",
            "threads",
            "--throughput",
            "throughput_mb_s",
            "--predict",
            "128,256",
            "--baseline",
            "16",
        ],
    );
    let text = stdout(&o);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(text.contains("prediction at 256 threads (extrapolated): Amdahl"), "{text}");
    assert!(text.contains("are extrapolations"), "{text}");
    assert!(text.contains("against 16 threads"), "{text}");
}

#[test]
fn degenerate_tables_get_a_clear_sentence_not_a_made_up_number() {
    let d = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| {
        let p = d.path().join(name);
        std::fs::write(&p, text).unwrap();
        p.to_str().unwrap().to_string()
    };
    let bad = [
        (write("nan.csv", "threads,time_s\n1,2.0\n2,NaN\n"), "must be a positive number"),
        (write("zero.csv", "threads,time_s\n1,2.0\n2,0\n"), "must be a positive number"),
        (write("neg.csv", "threads,time_s\n1,2.0\n2,-1\n"), "must be a positive number"),
        (write("text.csv", "threads,time_s\n1,2.0\ntwo,1.0\n"), "'two' is not a number"),
        (write("dup.csv", "threads,time_s\n1,2.0\n1,1.0\n"), "appears twice"),
        (write("cols.csv", "n,seconds\n1,2.0\n"), "no column named 'time_s' (columns: n, seconds)"),
    ];
    for (file, phrase) in &bad {
        let o = scalescope(d.path(), &["analyze", "--csv", file, "--count", "threads", "--time", "time_s"]);
        assert_eq!(o.status.code(), Some(2), "{file}: {}", stderr(&o));
        assert!(stderr(&o).contains(phrase), "{file}: {}", stderr(&o));
    }
    let one = write("one.csv", "threads,time_s\n4,2.0\n");
    let o = scalescope(d.path(), &["analyze", "--csv", &one, "--count", "threads", "--time", "time_s"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("one point: there is nothing to fit"), "{}", stdout(&o));
    assert!(!stdout(&o).contains("Amdahl"), "{}", stdout(&o));
    let flat = write("flat.csv", "threads,time_s\n1,2.0\n2,2.0\n4,2.0\n8,2.0\n");
    let o = scalescope(d.path(), &["analyze", "--csv", &flat, "--count", "threads", "--time", "time_s"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("as if 0.00 [") || stdout(&o).contains("as if 0.00%"), "{}", stdout(&o));
    let o = scalescope(d.path(), &["analyze", "--csv", &flat, "--time", "time_s"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--count"), "{}", stderr(&o));
}

#[test]
fn every_run_stores_and_prints_the_model() {
    let d = tempfile::tempdir().unwrap();
    let o = sweep(d.path(), "-r 3 -w 0 --param threads=1,2", &probe_scalable(&["--ops", "20000000"]));
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("model\n") && stdout(&o).contains("Amdahl fit"), "{}", stdout(&o));
    let doc = results(&d.path().join("r"));
    let s = &doc["analysis"]["series"][0];
    assert_eq!(doc["analysis"]["count"], "threads");
    assert_eq!(s["points"].as_array().unwrap().len(), 2);
    assert!(s["points"][1]["speedup_ci95"].is_array(), "three runs per point give an interval");
    assert_eq!(s["amdahl"]["model"]["intervals"], "bootstrap");
    let o = scalescope(d.path(), &["analyze", "r"]);
    assert!(o.status.success() && stdout(&o).contains("Amdahl fit"), "{}", stderr(&o));
}
