//! results.json's schema: generated from the document's types into docs/results.schema.json and
//! kept in sync; every fixture and a freshly written results.json validate against it and come
//! back unchanged through the types; files of schema version 1 still load, their axis, analysis
//! and findings made again.

use crate::common;
#[path = "schema/validate.rs"]
mod validate;

use common::{probe_scalable, scalescope, stderr, sweep};
use scalescope::plan::{Axis, Counts, Scaling};
use scalescope::results::{Results, SCHEMA_VERSION, json_schema};
use serde_json::Value;
use std::path::{Path, PathBuf};

fn repo(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

fn read(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn shipped() -> Value {
    read(&repo("docs/results.schema.json"))
}

/// Validates against the shipped schema, then reads through the types and writes back: nothing
/// may be lost or changed on the way. With UPDATE_GOLDEN set, a fixture that gains a field, or
/// whose statistics the types now derive otherwise from the runs it holds, is written back.
fn check(path: &Path) -> Results {
    let doc = read(path);
    let errors = validate::validate(&shipped(), &doc);
    assert!(errors.is_empty(), "{}: {errors:#?}", path.display());
    let typed: Results =
        serde_json::from_value(doc.clone()).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let again: Value = serde_json::from_str(&serde_json::to_string(&typed).unwrap()).unwrap();
    if let Some(at) = difference(&again, &doc, "$") {
        // A point's statistics are derived from its runs: what the types derive now stands.
        if std::env::var_os("UPDATE_GOLDEN").is_some()
            && (at.ends_with("(added)") || at.contains(".stats."))
        {
            std::fs::write(path, serde_json::to_string(&typed).unwrap() + "\n").unwrap();
            return typed;
        }
        panic!(
            "{} changes through the types at {at}; rerun with UPDATE_GOLDEN=1 if it gains a field",
            path.display()
        );
    }
    typed
}

/// The first place where two values differ.
fn difference(a: &Value, b: &Value, path: &str) -> Option<String> {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let keys = x.keys().chain(y.keys().filter(|k| !x.contains_key(*k)));
            keys.map(|k| (k, x.get(k), y.get(k))).find_map(|(k, u, v)| match (u, v) {
                (Some(u), Some(v)) => difference(u, v, &format!("{path}.{k}")),
                (u, _) => {
                    Some(format!("{path}.{k} ({})", if u.is_some() { "added" } else { "lost" }))
                }
            })
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => x
            .iter()
            .zip(y)
            .enumerate()
            .find_map(|(i, (u, v))| difference(u, v, &format!("{path}[{i}]"))),
        _ => (a != b).then(|| format!("{path}: {a} against {b}")),
    }
}

#[test]
fn the_shipped_schema_is_the_one_the_types_give() {
    let path = repo("docs/results.schema.json");
    let want = json_schema();
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, &want).unwrap();
    }
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        want,
        "rerun with UPDATE_GOLDEN=1 after changing the types"
    );
}

#[test]
fn every_fixture_validates_and_comes_back_unchanged_through_the_types() {
    for f in [
        "tests/fixtures/report/results.json",
        "tests/fixtures/sampled/results.json",
        "tests/fixtures/compare/faster.json",
        "tests/fixtures/guide/results.json",
    ] {
        let doc = check(&repo(f));
        assert_eq!(doc.schema_version, SCHEMA_VERSION, "{f}");
        let a = doc.analysis.as_ref().unwrap_or_else(|| panic!("{f} stores its analysis"));
        assert_eq!(Some(&a.axis), doc.plan.axis.as_ref(), "{f}");
    }
}

#[test]
fn a_fresh_sweep_validates_and_stores_its_axis_analysis_and_findings() {
    let d = tempfile::tempdir().unwrap();
    let o =
        sweep(d.path(), "-r 2 -w 0 --param threads=1,2", &probe_scalable(&["--ops", "80000000"]));
    assert!(o.status.success(), "{}", stderr(&o));
    let doc = check(&d.path().join("r/results.json"));
    let axis = Axis { param: "threads".into(), counts: Counts::Workers, scaling: Scaling::Strong };
    assert_eq!(doc.plan.axis.as_ref(), Some(&axis));
    let a = doc.analysis.as_ref().unwrap();
    assert_eq!(a.axis, axis);
    assert_eq!(a.series[0].points.iter().map(|p| p.count).collect::<Vec<_>>(), [1.0, 2.0]);
    assert!(
        doc.points.iter().all(|p| p.runs.iter().all(|r| r.threads.is_some())),
        "sampled runs are in the document"
    );
    assert_eq!(
        doc.findings,
        scalescope::diagnose::diagnose(&doc, Some(a)),
        "the findings stored are the rules' on it"
    );
    std::fs::create_dir(d.path().join("c")).unwrap();
    let o = sweep(&d.path().join("c"), "-r 1 -w 0 --no-sample --copies 2", &["true"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc = check(&d.path().join("c/r/results.json"));
    assert_eq!(doc.points[1].runs[0].ranks.len(), 2);
    assert_eq!(doc.plan.axis.map(|a| (a.counts, a.scaling)), Some((Counts::Copies, Scaling::Weak)));
}

#[test]
fn the_validator_finds_what_the_schema_forbids() {
    let schema = shipped();
    let good = read(&repo("tests/fixtures/report/results.json"));
    assert!(validate::validate(&schema, &good).is_empty());
    let broken = |f: &dyn Fn(&mut Value)| {
        let mut doc = good.clone();
        f(&mut doc);
        validate::validate(&schema, &doc)
    };
    let says = |errors: Vec<String>, what: &str| {
        assert!(errors.iter().any(|e| e.contains(what)), "expected '{what}' in {errors:#?}");
    };
    says(
        broken(&|d| drop(d.as_object_mut().unwrap().remove("machine"))),
        "$: the required field machine is missing",
    );
    says(broken(&|d| d["status"] = "finished".into()), "$.status");
    says(
        broken(&|d| d["points"][0]["runs"][0]["wall_s"] = "1.5".into()),
        "$.points[0].runs[0].wall_s",
    );
    says(broken(&|d| d["plan"]["runs"]["min"] = (-1).into()), "$.plan.runs.min");
    says(
        broken(&|d| d["analysis"]["series"][0]["amdahl"]["serial_fraction"] = Value::Null),
        "$.analysis.series[0].amdahl.serial_fraction: null is not of type object",
    );
    says(broken(&|d| d["findings"][0]["severity"] = "dire".into()), "$.findings[0].severity");
    says(broken(&|d| d["plan"]["env"] = serde_json::json!([["ONLY_A_NAME"]])), "$.plan.env[0]");
}

#[test]
fn a_version_1_file_loads_with_its_axis_analysis_and_findings_made_again() {
    let d = tempfile::tempdir().unwrap();
    let v1 = repo("tests/fixtures/v1/results.json");
    assert_eq!(read(&v1)["schema_version"], 1);
    let out = d.path().join("v2.json");
    let o = scalescope(
        d.path(),
        &["show", v1.to_str().unwrap(), "--export-json", out.to_str().unwrap()],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let doc = check(&out);
    assert_eq!(doc.schema_version, SCHEMA_VERSION);
    assert_eq!(doc.plan.axis.as_ref().map(|a| a.param.as_str()), Some("threads"));
    // The same sweep as the report fixture, which stores what this version computes.
    let stored = check(&repo("tests/fixtures/report/results.json"));
    assert_eq!(doc.analysis, stored.analysis);
    assert_eq!(doc.findings, stored.findings);
}

#[test]
fn show_reads_the_stored_analysis_and_findings_back_unless_another_view_is_asked_for() {
    let d = tempfile::tempdir().unwrap();
    let mut doc: Results =
        serde_json::from_value(read(&repo("tests/fixtures/report/results.json"))).unwrap();
    doc.findings[0].summary = "a finding planted in results.json".into();
    doc.analysis.as_mut().unwrap().notes.push("a note planted in results.json".into());
    std::fs::write(d.path().join("results.json"), serde_json::to_string(&doc).unwrap()).unwrap();
    let o = scalescope(d.path(), &["show", "results.json", "--export-json", "same.json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = common::stdout(&o);
    assert!(text.contains("a finding planted") && text.contains("a note planted"), "{text}");
    assert_eq!(check(&d.path().join("same.json")).findings, doc.findings);
    let o = scalescope(
        d.path(),
        &["show", "results.json", "--baseline", "2", "--export-json", "other.json"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let text = common::stdout(&o);
    assert!(!text.contains("planted"), "another baseline is a new analysis: {text}");
    let other = check(&d.path().join("other.json"));
    let series = &other.analysis.as_ref().unwrap().series[0];
    assert_eq!(series.baseline, 2.0, "the file says what the screen shows");
    assert_eq!(series.points.iter().find(|p| p.count == 2.0).map(|p| p.speedup), Some(1.0));
    let speedup = series.points[0].speedup;
    assert!(
        speedup < 0.6 && text.contains(&format!("{speedup:.2}×")),
        "the screen shows it too: {text}"
    );
    assert_eq!(other.findings, scalescope::diagnose::diagnose(&other, other.analysis.as_ref()));
}
