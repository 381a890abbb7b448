//! Load: a tree of 100 processes followed by the sampler, and a sweep of 1,000 points whose
//! results file stays proportionate and still analyses and reports. (1,000 threads and 10,000
//! thread births a second are in tests/it/threads.rs.)

use crate::common;

use common::{results, scalescope, stderr, stdout};
use scalescope::results::Class;
use scalescope::results::Results;
use std::path::Path;

#[test]
fn a_tree_of_a_hundred_processes_is_followed() {
    let d = tempfile::tempdir().unwrap();
    let o = scalescope(
        d.path(),
        &[
            "run",
            "-o",
            "r",
            "-r",
            "1",
            "-w",
            "0",
            "--",
            "sh",
            "-c",
            "for i in $(seq 100); do sleep 1 & done; wait",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let doc = results(&d.path().join("r"));
    let t = doc.points[0].runs[0].threads.as_ref().unwrap();
    assert!(t.processes_seen >= 100, "{}", t.processes_seen);
    let sleep_s = t.classes.get(&Class::Sleep).copied().unwrap_or(0.0);
    assert!(sleep_s > 50.0, "100 sleepers × ~1 s: {:?}", t.classes);
}

#[test]
fn a_thousand_point_sweep_stays_proportionate_and_reports() {
    let d = tempfile::tempdir().unwrap();
    let o = scalescope(
        d.path(),
        &[
            "run",
            "-o",
            "r",
            "-r",
            "1",
            "-w",
            "0",
            "--no-sample",
            "--param",
            "i=1..1000",
            "--",
            "true",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let size = std::fs::metadata(d.path().join("r/results.json")).unwrap().len();
    assert!(size < 1000 * 4096, "{size} bytes for 1,000 runs");
    assert_eq!(results(&d.path().join("r")).points.len(), 1000);
    let o = scalescope(d.path(), &["analyze", "r"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("1000"), "{}", stdout(&o));
    let page = std::fs::read_to_string(d.path().join("r/report.html")).unwrap();
    assert!(
        page.contains("<figure id=\"fig-time\">") && page.len() < 2_000_000,
        "{} bytes",
        page.len()
    );
}

#[test]
#[ignore = "needs chromium (apt-get install chromium); .ci/run runs it"]
fn a_report_of_a_thousand_points_opens_in_a_browser_with_its_charts() {
    let d = tempfile::tempdir().unwrap();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/report/results.json");
    let mut doc: Results =
        serde_json::from_str(&std::fs::read_to_string(fixture).unwrap()).unwrap();
    let point = doc.points[0].clone();
    doc.points = (1..=1000)
        .map(|i| {
            let mut p = point.clone();
            p.params.insert("threads".into(), serde_json::Value::from(i));
            p
        })
        .collect();
    doc.plan.params[0].values = (1..=1000).map(|i| i.to_string()).collect();
    doc.analysis = None;
    std::fs::write(d.path().join("doc.json"), serde_json::to_string(&doc).unwrap()).unwrap();
    let o = scalescope(d.path(), &["report", "doc.json", "-o", "page.html"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let url = format!("file://{}", d.path().join("page.html").display());
    let dom = std::process::Command::new(common::chromium())
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--dump-dom", &url])
        .output()
        .unwrap();
    let html = String::from_utf8_lossy(&dom.stdout);
    assert!(
        dom.status.success() && html.matches("<svg").count() >= 3,
        "the report opens with its charts"
    );
}
