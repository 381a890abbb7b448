//! `scalescope compare`: verdicts on result sets with known differences, unmatched points,
//! different machines, the why from real sampler data, published tables, exports against their
//! golden files, and mistakes.

use crate::common;

use common::{argv, bin, golden, in_fixtures, results, scalescope, stderr, stdout, sweep};
use scalescope::results::Results;
use serde_json::Value;
use std::path::Path;

/// A real two-point sweep of `true`, whose run times are then set to known values per point.
fn base(dir: &Path) -> Results {
    let o = sweep(dir, "--param threads=1,2 -r 5 -w 0 --no-sample", &["true"]);
    assert!(o.status.success(), "{}", stderr(&o));
    results(&dir.join("r"))
}

/// Writes `doc` with the runs of point i taking `times[i]` seconds into `dir/name/results.json`;
/// its analysis and findings, which no longer hold, are left for compare to make again.
fn set(dir: &Path, doc: &Results, name: &str, times: &[&[f64]]) {
    set_with(dir, doc, name, times, None);
}

/// The same, each run also doing `work` operations when given (a throughput of work / time).
fn set_with(dir: &Path, doc: &Results, name: &str, times: &[&[f64]], work: Option<f64>) {
    let mut doc = doc.clone();
    doc.throughput_unit = work.map(|_| "ops/s".into());
    doc.analysis = None;
    doc.findings.clear();
    for (p, t) in doc.points.iter_mut().zip(times) {
        p.runs.truncate(t.len());
        for (r, &w) in p.runs.iter_mut().zip(*t) {
            r.wall_s = w;
            r.user_s = w;
            r.sys_s = 0.0;
            r.cpu_pct = 100.0;
            r.throughput = work.map(|w| w / r.wall_s);
        }
    }
    std::fs::create_dir_all(dir.join(name)).unwrap();
    std::fs::write(dir.join(name).join("results.json"), serde_json::to_string(&doc).unwrap())
        .unwrap();
}

fn json(dir: &Path, args: &[&str]) -> Value {
    let mut a = vec!["compare"];
    a.extend(args);
    a.extend(["--export-json", "c.json"]);
    let o = scalescope(dir, &a);
    assert!(o.status.success(), "{}", stderr(&o));
    serde_json::from_str(&std::fs::read_to_string(dir.join("c.json")).unwrap()).unwrap()
}

fn verdict(c: &Value, point: usize, set: usize) -> String {
    c["points"][point]["cells"][set]["change"]["verdict"].as_str().unwrap_or("none").to_string()
}

#[test]
fn real_changes_noise_and_variance_get_the_right_verdicts() {
    let d = tempfile::tempdir().unwrap();
    let doc = base(d.path());
    let a: &[f64] = &[1.00, 1.01, 0.99, 1.005, 0.995];
    set(d.path(), &doc, "a", &[a, a]);
    set(
        d.path(),
        &doc,
        "faster",
        &[&[0.80, 0.81, 0.79, 0.805, 0.795], &[1.2, 1.21, 1.19, 1.205, 1.195]],
    );
    set(d.path(), &doc, "same", &[&[1.01, 1.02, 1.0, 1.015, 1.005], a]);
    set(d.path(), &doc, "wild", &[&[0.4, 1.6, 0.6, 1.4, 0.5], &[0.5, 1.5, 0.45, 1.55, 0.6]]);
    let c = json(d.path(), &["a", "faster", "same", "wild"]);
    assert_eq!(verdict(&c, 0, 1), "faster", "{}", c["points"][0]);
    assert_eq!(verdict(&c, 1, 1), "slower");
    assert_eq!(verdict(&c, 0, 2), "no-change");
    assert_eq!(verdict(&c, 1, 2), "no-change");
    assert_eq!(verdict(&c, 0, 3), "not-significant");
    assert_eq!(verdict(&c, 1, 3), "not-significant");
    let ch = &c["points"][0]["cells"][1]["change"];
    assert_eq!(ch["judged_by"], "time");
    assert!((ch["ratio"].as_f64().unwrap() - 0.8).abs() < 1e-9);
    let [lo, hi] = [ch["ci95"][0].as_f64().unwrap(), ch["ci95"][1].as_f64().unwrap()];
    assert!(lo < 0.8 && hi > 0.8 && hi < 0.82, "{lo} {hi}");
    assert!(ch["p"].as_f64().unwrap() < 0.001);
    assert!(c["machines"].as_array().unwrap().is_empty());
    let out = stdout(&scalescope(d.path(), &["compare", "a", "faster"]));
    assert!(out.contains("faster (−20% time)") && out.contains("slower (+20% time)"), "{out}");
    assert!(out.contains("faster/a time [95% CI]") && out.contains("a time (s)"), "{out}");
}

#[test]
fn time_ratios_and_throughput_ratios_are_labelled_in_a_three_way_comparison() {
    let d = tempfile::tempdir().unwrap();
    let doc = base(d.path());
    let a: &[f64] = &[1.00, 1.01, 0.99, 1.005, 0.995];
    set_with(d.path(), &doc, "a", &[a, a], Some(100.0));
    // Slower in time, without a throughput; slower in throughput.
    set(d.path(), &doc, "b", &[&[1.31, 1.32, 1.30, 1.325, 1.315], a]);
    set_with(d.path(), &doc, "c", &[&[1.22, 1.23, 1.21, 1.225, 1.215], a], Some(100.0));
    let c = json(d.path(), &["a", "b", "c"]);
    assert_eq!(c["judged_by"], serde_json::json!([null, "time", "throughput"]));
    assert_eq!((verdict(&c, 0, 1), verdict(&c, 0, 2)), ("slower".into(), "slower".into()));
    let out = stdout(&scalescope(d.path(), &["compare", "a", "b", "c"]));
    let head = out.lines().find(|l| l.starts_with("point")).unwrap();
    assert!(head.contains("b/a time") && head.contains("c/a throughput"), "{out}");
    assert!(
        out.contains("throughput (above 1: faster) for c; wall time (below 1: faster) for b"),
        "{out}"
    );
    assert!(
        out.contains("slower (+31% time)") && out.contains("slower (−18% throughput)"),
        "{out}"
    );
}

#[test]
fn unmatched_points_and_other_machines_are_said() {
    let d = tempfile::tempdir().unwrap();
    let mut doc = base(d.path());
    let a: &[f64] = &[1.0, 1.01, 0.99];
    set(d.path(), &doc, "a", &[a, a]);
    doc.points.remove(1);
    doc.machine.cpu_model = "Some Other CPU".into();
    set(d.path(), &doc, "b", &[a]);
    let o = scalescope(d.path(), &["compare", "a", "b", "--label", "before", "--label", "after"]);
    let out = stdout(&o);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(out.contains("only in before"), "{out}");
    assert!(out.contains("the machines differ") && out.contains("Some Other CPU"), "{out}");
    assert!(!out.contains("the commands differ"), "{out}");
}

#[test]
fn other_commands_are_said() {
    let d = tempfile::tempdir().unwrap();
    let mut doc = base(d.path());
    let a: &[f64] = &[1.0, 1.01, 0.99];
    set(d.path(), &doc, "a", &[a, a]);
    doc.plan.command = vec!["./build-b/prog".into(), "-t".into(), "{threads}".into()];
    set(d.path(), &doc, "b", &[a, a]);
    let out = stdout(&scalescope(d.path(), &["compare", "a", "b"]));
    let said = out
        .lines()
        .skip_while(|l| !l.contains("the commands differ"))
        .collect::<Vec<_>>()
        .join("\n");
    assert!(said.contains("b: ./build-b/prog -t {threads}"), "{out}");
}

#[test]
fn a_lock_that_went_away_is_the_why_and_its_what_if_is_set_against_the_fix() {
    let _g = common::measuring();
    let d = tempfile::tempdir().unwrap();
    let exe = bin().display().to_string();
    for (name, critical) in [("locked", "0.8"), ("free", "0")] {
        let args = format!("-o {name} --param threads=1,2 -r 3 -w 0");
        let mut a: Vec<&str> = vec!["run"];
        a.extend(args.split_whitespace());
        a.extend([
            "--",
            &exe,
            "probe",
            "lock",
            "-t",
            "{threads}",
            "--ops",
            "1000000",
            "--critical",
            critical,
        ]);
        let o = scalescope(d.path(), &a);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let c = json(d.path(), &["locked", "free", "--export-markdown", "c.md"]);
    assert_eq!(verdict(&c, 1, 1), "faster", "{}", c["points"][1]);
    let why = c["why"].as_array().unwrap();
    assert!(
        why.iter().any(|w| w.as_str().unwrap().contains("threads=2 is faster")
            && w.as_str().unwrap().contains("lock wait fell")),
        "{why:?}"
    );
    assert!(c["models"][0]["name"].as_str().unwrap().contains("Amdahl"));
    // The lock's what-if, set against the speed-up the sweep without it obtained.
    let predicted = c["predicted"].as_array().unwrap();
    let lock =
        predicted.iter().filter_map(|l| l.as_str()).find(|l| l.starts_with("lock-contention"));
    assert!(
        lock.is_some_and(|l| l.contains("at 2 threads: locked measured")
            && l.contains("without it; free obtained")
            && !l.contains("no gain")),
        "{predicted:?}"
    );
    let md = std::fs::read_to_string(d.path().join("c.md")).unwrap();
    assert!(
        md.contains("| point |")
            && md.contains("### Why")
            && md.contains("### Predicted against obtained"),
        "{md}"
    );
    // The same command again, at the same commit and tags: no fix to set the what-if against.
    let again = d.path().join("again");
    std::fs::create_dir(&again).unwrap();
    std::fs::copy(d.path().join("locked/results.json"), again.join("results.json")).unwrap();
    let c = json(d.path(), &["locked", "again"]);
    let predicted: Vec<&str> =
        c["predicted"].as_array().unwrap().iter().filter_map(|l| l.as_str()).collect();
    assert!(
        predicted.len() == 1 && predicted[0].starts_with("again: the same command as locked"),
        "{predicted:?}"
    );
}

#[test]
fn labels_are_text_in_markdown_and_mistakes_get_one_sentence() {
    let d = tempfile::tempdir().unwrap();
    let doc = base(d.path());
    let a: &[f64] = &[1.0, 1.01, 0.99];
    set(d.path(), &doc, "a", &[a, a]);
    set(d.path(), &doc, "b", &[a, a]);
    let o = scalescope(
        d.path(),
        &[
            "compare",
            "a",
            "b",
            "--label",
            "<script>alert(1)</script>",
            "--label",
            "\"'&",
            "--export-markdown",
            "m.md",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let md = std::fs::read_to_string(d.path().join("m.md")).unwrap();
    assert!(!md.contains("<script>") && md.contains("&lt;script&gt;"), "{md}");
    let cases: [(&[&str], &str); 5] = [
        (&["compare", "a"], "at least two result sets"),
        (&["compare", "a", "missing"], "missing"),
        (&["compare", "a", "b", "--noise", "lots"], "--noise lots"),
        (&["compare", "a", "b", "--label", "x"], "one --label per result set"),
        (&["compare", "a", "b", "--reference", "c"], "--reference c"),
    ];
    for (args, says) in cases {
        let o = scalescope(d.path(), args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says) && !err.contains("panicked"), "{args:?}: {err}");
    }
}

#[test]
fn the_markdown_and_json_comparisons_match_their_golden_files_and_the_html_renders() {
    let d = tempfile::tempdir().unwrap();
    let out = |f: &str| d.path().join(f).to_str().unwrap().to_string();
    let (md, json, html) = (out("c.md"), out("c.json"), out("c.html"));
    let o = in_fixtures(&[
        "compare",
        "report/results.json",
        "compare/faster.json",
        "--label",
        "before",
        "--label",
        "after",
        "--export-markdown",
        &md,
        "--export-json",
        &json,
        "--export-html",
        &html,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let got = std::fs::read_to_string(&md).unwrap();
    golden("compare/compare.golden.md", &got);
    golden("compare/compare.golden.json", &std::fs::read_to_string(&json).unwrap());
    assert!(got.contains("faster (+25% throughput)"), "{got}");
    let page = std::fs::read_to_string(&html).unwrap();
    for id in ["throughput", "time", "speedup", "efficiency", "cpu"] {
        assert!(page.contains(&format!("<figure id=\"fig-{id}\">")), "{id}");
    }
    assert!(page.contains("before") && page.contains("after") && !page.contains("<script"));
}

#[test]
fn published_tables_are_compared_by_the_threshold_alone() {
    let d = tempfile::tempdir().unwrap();
    let json = d.path().join("c.json");
    let columns =
        "--count threads --throughput throughput_mb_s --cpu cpu_pct --label before --label after";
    let tables = ["readspeed-original-before-patches.csv", "readspeed-original-after-patches.csv"];
    let mut args = argv("compare --csv", &tables);
    args.extend(argv(columns, &["--export-json", json.to_str().unwrap()]));
    let o = in_fixtures(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    golden("compare/tables.golden.txt", &stdout(&o));
    let c: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let label = |i: usize| c["points"][i]["label"].as_str().unwrap().to_string();
    assert_eq!(
        (label(1), verdict(&c, 1, 1)),
        ("threads=2".into(), "no-change".into()),
        "−1.6% is within 5%"
    );
    assert_eq!((label(7), verdict(&c, 7, 1)), ("threads=64".into(), "faster".into()));
    let ch = &c["points"][7]["cells"][1]["change"];
    assert_eq!(
        (&ch["judged_by"], &ch["decided_by"], &ch["p"]),
        (&Value::from("throughput"), &Value::from("threshold"), &Value::Null)
    );
    assert!((ch["ratio"].as_f64().unwrap() - 2516.84 / 1069.62).abs() < 1e-9, "{ch}");
    assert!(
        c["models"][0]["values"][1].is_object(),
        "each table's fit, side by side: {}",
        c["models"]
    );
    for (args, says) in [
        (
            &["compare", "--csv", "readspeed-90x.csv", "readspeed-90x.csv"][..],
            "--csv needs --count",
        ),
        (
            &[
                "compare",
                "--csv",
                "nowhere.csv",
                "readspeed-90x.csv",
                "--count",
                "threads",
                "--time",
                "t_s",
            ][..],
            "nowhere.csv",
        ),
        (
            &[
                "compare",
                "--csv",
                "readspeed-90x.csv",
                "readspeed-90x.csv",
                "--count",
                "threads",
                "--time",
                "t",
            ][..],
            "no column named 't'",
        ),
        (
            &["compare", "report/results.json", "compare/faster.json", "--count", "threads"][..],
            "--csv",
        ),
    ] {
        let o = in_fixtures(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(
            stderr(&o).contains(says) && !stderr(&o).contains("panicked"),
            "{args:?}: {}",
            stderr(&o)
        );
    }
}

/// A sweep whose own findings say its runs were disturbed makes every verdict against it suspect:
/// compare says so under what it compares, and says nothing when both sets ran quietly.
#[test]
fn a_sweep_measured_on_a_noisy_machine_is_named_with_its_finding() {
    use scalescope::results::findings::{Finding, Kind, Severity};
    let d = tempfile::tempdir().unwrap();
    // A real sweep, as it stored its analysis and findings; a copy of it with one more finding.
    // (Runs of `true` last a millisecond: a busy machine can make them noisy; not here.)
    let mut doc = base(d.path());
    doc.findings.retain(|f| f.kind != Kind::NoisyMeasurement);
    std::fs::create_dir_all(d.path().join("a")).unwrap();
    std::fs::write(d.path().join("a/results.json"), serde_json::to_string(&doc).unwrap()).unwrap();
    assert!(doc.analysis.is_some());
    doc.findings.push(Finding {
        kind: Kind::NoisyMeasurement,
        severity: Severity::Medium,
        summary: "other processes held 44% of the CPUs during these runs".into(),
        evidence: Vec::new(),
        advice: "measure again on a quiet machine".into(),
        cost_pct: None,
        cost_per_run_pct: Vec::new(),
        at: None,
        noise: None,
        what_if: None,
    });
    std::fs::create_dir_all(d.path().join("b")).unwrap();
    std::fs::write(d.path().join("b/results.json"), serde_json::to_string(&doc).unwrap()).unwrap();
    let out = stdout(&scalescope(d.path(), &["compare", "a", "b"]));
    let caution =
        out.lines().find(|l| l.contains("caution: b was measured on a busy or noisy machine"));
    let caution = caution.unwrap_or_else(|| panic!("{out}"));
    assert!(caution.contains("[medium] other processes held 44% of the CPUs"), "{caution}");
    assert!(!out.contains("caution: a "), "{out}");
    let quiet_only = stdout(&scalescope(d.path(), &["compare", "a", "a"]));
    assert!(!quiet_only.contains("caution:"), "{quiet_only}");
}
