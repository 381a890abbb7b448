//! `report.html` in every results folder, `scalescope report` in its three formats, the page in
//! a real headless browser, escaping of hostile command lines, and every export of two recorded
//! sweeps (unsampled, and sampled with findings, waits and notes) against its golden file.

use crate::common;

use common::{argv, bin, golden, in_fixtures, results, scalescope, stderr, stdout};
use scalescope::results::Results;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The results folder of one sampled sweep of the lock probe at 1 and 2 threads, run once for
/// the tests that read it: two sweeps at once on 2 CPUs would leave the lock uncontended.
fn sampled_sweep() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let _g = common::measuring();
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("report-sweep");
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let exe = bin().display().to_string();
        let o = scalescope(
            &dir,
            &argv(
                "run -o r --param threads=1,2 -r 2 -w 0",
                &[
                    "--",
                    &exe,
                    "probe",
                    "lock",
                    "-t",
                    "{threads}",
                    "--ops",
                    "1500000",
                    "--critical",
                    "0.6",
                ],
            ),
        );
        assert!(o.status.success(), "{}", stderr(&o));
        dir.join("r")
    })
}

/// The page with its style sheet and the inside of every chart left out: the structure and text
/// that a golden file can hold.
fn html_structure(page: &str) -> String {
    let mut out = String::new();
    let mut rest = page;
    while let Some(start) = rest.find("<svg") {
        out.push_str(&rest[..start]);
        out.push_str("<svg/>");
        let end = rest[start..].find("</svg>").expect("a closed chart") + start + "</svg>".len();
        rest = &rest[end..];
    }
    out.push_str(rest);
    let (head, tail) = out.split_once("<style>").expect("a style sheet");
    let tail = &tail[tail.find("</style>").expect("a closed style sheet")..];
    format!("{head}<style>{tail}")
}

/// Every finding of `doc` has its block on the page, with its severity, kind and summary.
fn finding_blocks(page: &str, doc: &Results) {
    assert!(!doc.findings.is_empty());
    for f in &doc.findings {
        let sev = f.severity.name();
        let head = format!("<div class=\"finding {sev}\"><p><b>[{sev}] {}</b>: ", f.kind_name());
        // Two findings of one kind and severity (noisy runs and a busy machine) have a block each.
        let summary = scalescope::report::svg::escape(&f.summary);
        let found = page.match_indices(&head).any(|(at, _)| {
            let block = &page[at..at + page[at..].find("</div>").unwrap()];
            block.contains(&summary)
        });
        assert!(found, "no block for {f:?}");
    }
}

const CHARTS: [&str; 7] =
    ["throughput", "time", "speedup", "efficiency", "cpu", "threads", "timeline"];

#[test]
fn every_results_folder_gets_a_report_with_every_chart_drawn() {
    let d = tempfile::tempdir().unwrap();
    let r = sampled_sweep().to_str().unwrap();
    let page = std::fs::read_to_string(Path::new(r).join("report.html")).unwrap();
    let external =
        page.contains(" src=") || page.contains("href=\"http") || page.contains("@import");
    // The flame graphs' optional zoom and search is the only script.
    let scripted = page.replace(scalescope::report::flame::SCRIPT, "").contains("<script");
    assert!(page.starts_with("<!DOCTYPE html>") && !scripted && !external, "self-contained");
    for id in CHARTS {
        let start = page
            .find(&format!("<figure id=\"fig-{id}\">"))
            .unwrap_or_else(|| panic!("no {id} chart"));
        let fig = &page[start..start + page[start..].find("</figure>").unwrap()];
        let marks = fig.matches("class=\"series\"").count()
            + fig.matches("class=\"bar\"").count()
            + fig.matches("class=\"area\"").count();
        assert!(marks > 0 && !fig.contains("no data"), "{id} is empty");
    }
    // Which findings a busy machine lets through varies (tests/it/findings.rs judges them); each has
    // its block, and the lock is named among the waits.
    finding_blocks(&page, &results(Path::new(r)));
    let waits = &page[page.find("<h2>Top waits").expect("a waits section")..];
    let listed = waits[..waits.find("</ul>").unwrap()].split("<li>");
    assert!(
        listed
            .into_iter()
            .any(|l| l.contains(": lock ") && l.contains("scalescope::probes::zoo::GLOBAL_LOCK")),
        "{waits}"
    );
    let o = scalescope(d.path(), &["report", r, "--format", "svg", "-o", "svg"]);
    assert!(o.status.success(), "{}", stderr(&o));
    for id in CHARTS {
        let svg = std::fs::read_to_string(d.path().join(format!("svg/{id}.svg"))).unwrap();
        assert!(svg.starts_with("<svg xmlns") && svg.trim_end().ends_with("</svg>"), "{id}");
    }
    let o = scalescope(d.path(), &["report", r, "--timeline", "threads=1:2", "-o", "t.html"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(std::fs::read_to_string(d.path().join("t.html")).unwrap().contains("threads=1 run 2"));
    let o = scalescope(d.path(), &["report", r, "--timeline", "threads=9:1"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("no point threads=9; the points are threads=1, threads=2"),
        "{}",
        stderr(&o)
    );
}

#[test]
#[ignore = "needs chromium (apt-get install chromium); .ci/run runs it"]
fn the_report_renders_in_a_headless_browser_without_errors() {
    let browser = common::chromium();
    let page = sampled_sweep().join("report.html");
    let url = format!("file://{}", page.display());
    let flags = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--enable-logging=stderr",
        "--v=0",
    ];
    let dom = Command::new(&browser).args(flags).arg("--dump-dom").arg(&url).output().unwrap();
    let html = String::from_utf8_lossy(&dom.stdout);
    assert!(dom.status.success(), "{}", String::from_utf8_lossy(&dom.stderr));
    // The charts, and the flame graphs when the runs stored stacks.
    let drawn = std::fs::read_to_string(&page).unwrap().matches("<svg").count();
    assert!(drawn >= CHARTS.len());
    assert_eq!(html.matches("<svg").count(), drawn, "every chart is in the rendered DOM");
    let log = String::from_utf8_lossy(&dom.stderr);
    assert!(!log.contains("CONSOLE") && !log.contains("Uncaught"), "console errors: {log}");
    let shots = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("artifacts");
    std::fs::create_dir_all(&shots).unwrap();
    let png = shots.join("report.png");
    let _ = std::fs::remove_file(&png);
    let o = Command::new(&browser)
        .args(flags)
        .arg(format!("--screenshot={}", png.display()))
        .arg("--window-size=1200,3200")
        .arg(&url)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let bytes = std::fs::read(&png).unwrap();
    assert!(
        bytes.starts_with(b"\x89PNG") && bytes.len() > 50_000,
        "a real screenshot: {} bytes",
        bytes.len()
    );
}

#[test]
fn a_hostile_command_line_is_text_in_html_and_markdown() {
    let d = tempfile::tempdir().unwrap();
    let o = scalescope(
        d.path(),
        &argv(
            "run -o r -r 1 -w 0 --no-sample --param x=1",
            &["--", "echo", "<script>alert(1)</script>", "\"'&", "{x}"],
        ),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let page = std::fs::read_to_string(d.path().join("r/report.html")).unwrap();
    assert!(!page.contains("<script>alert(1)</script>"), "markup in the HTML");
    // Shown shell-quoted, as it would be pasted: '<script>…' and '"'\''&', then escaped.
    assert!(
        page.contains(
            "&#39;&lt;script&gt;alert(1)&lt;/script&gt;&#39; &#39;&quot;&#39;\\&#39;&#39;&amp;&#39;"
        ),
        "{page}"
    );
    let md = stdout(&scalescope(d.path(), &["report", "r", "--format", "md"]));
    let outside_code: String = md.split("```").step_by(2).collect();
    assert!(!outside_code.contains("<script>"), "{md}");
    assert!(
        md.contains("<script>alert(1)</script>"),
        "the command is shown verbatim inside its code block: {md}"
    );
}

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// Every export of the recorded sweep in tests/fixtures/NAME/ against its golden file: the
/// terminal table, the Markdown post, the CSV, the HTML report's structure, and the JSON export
/// against the document itself.
fn exports_match_their_golden_files(name: &str) {
    let d = tempfile::tempdir().unwrap();
    let file = format!("{name}/results.json");
    let out = |f: &str| d.path().join(f).to_str().unwrap().to_string();
    let (csv, md, json) = (out("t.csv"), out("t.md"), out("t.json"));
    let o = in_fixtures(&[
        "show",
        &file,
        "--export-csv",
        &csv,
        "--export-markdown",
        &md,
        "--export-json",
        &json,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    golden(&format!("{name}/show.golden.txt"), &stdout(&o));
    golden(&format!("{name}/table.golden.csv"), &std::fs::read_to_string(&csv).unwrap());
    golden(&format!("{name}/summary.golden.md"), &std::fs::read_to_string(&md).unwrap());
    let o = in_fixtures(&["report", &file, "--format", "md"]);
    assert_eq!(
        stdout(&o),
        std::fs::read_to_string(&md).unwrap(),
        "report --format md is the exported post"
    );
    let html = out("r.html");
    let o = in_fixtures(&["report", &file, "-o", &html]);
    assert!(o.status.success(), "{}", stderr(&o));
    let page = std::fs::read_to_string(&html).unwrap();
    golden(&format!("{name}/report.golden.html"), &html_structure(&page));
    let stored: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fixtures().join(&file)).unwrap()).unwrap();
    let exported: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert!(stored == exported, "--export-json writes the document shown, unchanged");
}

#[test]
fn every_export_of_an_unsampled_sweep_matches_its_golden_file() {
    exports_match_their_golden_files("report");
}

#[test]
fn every_export_of_a_sampled_sweep_with_findings_matches_its_golden_file() {
    exports_match_their_golden_files("sampled");
    let doc: Results = serde_json::from_str(
        &std::fs::read_to_string(fixtures().join("sampled/results.json")).unwrap(),
    )
    .unwrap();
    let page = std::fs::read_to_string(fixtures().join("sampled/report.golden.html")).unwrap();
    finding_blocks(&page, &doc);
    let post = std::fs::read_to_string(fixtures().join("sampled/summary.golden.md")).unwrap();
    assert!(
        doc.findings.len() >= 2 && post.contains("\nFindings:\n") && post.contains("\nWaits:\n"),
        "{post}"
    );
    assert!(post.contains("GLOBAL\\_LOCK"), "{post}");
}
