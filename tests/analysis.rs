//! `scalescope analyze` on published scaling tables (../shared/fixtures, or tests/fixtures when
//! the project is built alone) and on degenerate input.

mod common;
use common::*;
use scalescope::plan::Counts;
use scalescope::results::analysis::{Analysis, IntervalMethod, PointScaling, UslLimit};
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    let shared = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/fixtures").join(name);
    if shared.exists() { shared } else { Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name) }
}

fn analyze_csv(file: &Path, count: &str) -> (String, Analysis) {
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

fn point(a: &Analysis, count: f64) -> &PointScaling {
    a.series[0].points.iter().find(|p| p.count == count).unwrap()
}

#[test]
fn the_90x_dataset_gives_46x_at_64_threads_as_if_99_4_percent_parallel() {
    let (text, a) = analyze_csv(&fixture("readspeed-90x.csv"), "threads");
    let p = point(&a, 64.0);
    assert!((p.speedup - 46.1).abs() < 0.06, "{p:?}");
    assert!((p.amdahl_parallel_pct.unwrap() - 99.4).abs() < 0.05, "{p:?}");
    assert!(text.contains("46.15× at 64 threads") && text.contains("as if 99.4% of the work were parallel"), "{text}");
    let s = &a.series[0];
    assert!(s.amdahl.as_ref().unwrap().serial_fraction.ci95.is_some(), "the Amdahl fit has an interval");
    let usl = s.usl.as_ref().unwrap();
    assert!(usl.sigma.value < 0.01 && usl.kappa.value > 0.0, "{usl:?}");
    assert!(s.retrograde.is_none(), "the 90x dataset still scales");
    assert_eq!(s.best.as_ref().unwrap().count, 64.0);
    assert!(!text.contains("R²") && !text.contains("R-squared"));
}

#[test]
fn the_original_dataset_before_patches_is_retrograde_past_32_threads() {
    let (text, a) = analyze_csv(&fixture("readspeed-original-before-patches.csv"), "threads");
    let s = &a.series[0];
    let best = s.best.as_ref().unwrap();
    assert_eq!((best.count, best.near_best_count), (32.0, Some(16.0)));
    let retro = s.retrograde.as_ref().unwrap();
    assert_eq!(retro.beyond, 32.0);
    assert!(retro.change_pct < -10.0, "{retro:?}");
    let usl = s.usl.as_ref().unwrap();
    assert_eq!(usl.limited_by, UslLimit::Coherency);
    let peak = usl.peak_count.unwrap().value;
    assert!((16.0..48.0).contains(&peak), "USL peak {peak}");
    assert!(text.contains("retrograde: beyond 32 threads, more is slower"), "{text}");
}

#[test]
fn the_original_dataset_after_patches_gives_26_7x_at_64_threads() {
    let (_, a) = analyze_csv(&fixture("readspeed-original-after-patches.csv"), "threads");
    assert!((point(&a, 64.0).speedup - 26.7).abs() < 0.1);
    assert!(a.series[0].retrograde.is_none());
}

#[test]
fn a_files_sweep_is_not_treated_as_a_thread_sweep() {
    let (text, a) = analyze_csv(&fixture("readspeed-files-at-64-threads.csv"), "files");
    assert_eq!((a.axis.param.as_str(), a.axis.counts), ("files", Counts::Other));
    let s = &a.series[0];
    assert!(s.amdahl.is_none() && s.usl.is_none());
    assert!(point(&a, 90.0).efficiency.is_none() && point(&a, 90.0).karp_flatt.is_none());
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
    let a = doc.analysis.as_ref().unwrap();
    let s = &a.series[0];
    assert_eq!((a.axis.param.as_str(), a.axis.counts), ("threads", Counts::Workers));
    assert_eq!(s.points.len(), 2);
    assert!(s.points[1].speedup_ci95.is_some(), "three runs per point give an interval");
    assert_eq!(s.amdahl.as_ref().unwrap().fit.intervals, IntervalMethod::Bootstrap);
    let o = scalescope(d.path(), &["analyze", "r"]);
    assert!(o.status.success() && stdout(&o).contains("Amdahl fit"), "{}", stderr(&o));
}
