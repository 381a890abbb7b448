//! `report.html` in every results folder, `scalescope report` in its three formats, the page in
//! a real headless browser, escaping of hostile command lines, and the Markdown golden file.

mod common;

use common::{argv, bin, scalescope, stderr, stdout};
use std::path::{Path, PathBuf};
use std::process::Command;

/// A sampled sweep of the lock probe at 1 and 2 threads, results in `dir/r`.
fn sampled_sweep(dir: &Path) {
    let exe = bin().display().to_string();
    let o = scalescope(
        dir,
        &argv(
            "run -o r --param threads=1,2 -r 2 -w 0",
            &["--", &exe, "probe", "lock", "-t", "{threads}", "--ops", "1500000"],
        ),
    );
    assert!(o.status.success(), "{}", stderr(&o));
}

const CHARTS: [&str; 7] = ["throughput", "time", "speedup", "efficiency", "cpu", "threads", "timeline"];

#[test]
fn every_results_folder_gets_a_report_with_every_chart_drawn() {
    let d = tempfile::tempdir().unwrap();
    sampled_sweep(d.path());
    let page = std::fs::read_to_string(d.path().join("r/report.html")).unwrap();
    let external = page.contains(" src=") || page.contains("href=\"http") || page.contains("@import");
    assert!(page.starts_with("<!DOCTYPE html>") && !page.contains("<script") && !external, "self-contained");
    for id in CHARTS {
        let start = page.find(&format!("<figure id=\"fig-{id}\">")).unwrap_or_else(|| panic!("no {id} chart"));
        let fig = &page[start..start + page[start..].find("</figure>").unwrap()];
        let marks = fig.matches("class=\"series\"").count()
            + fig.matches("class=\"bar\"").count()
            + fig.matches("class=\"area\"").count();
        assert!(marks > 0 && !fig.contains("no data"), "{id} is empty");
    }
    assert!(page.contains("Findings") && page.contains("Machine and commands"));
    let o = scalescope(d.path(), &["report", "r", "--format", "svg", "-o", "svg"]);
    assert!(o.status.success(), "{}", stderr(&o));
    for id in CHARTS {
        let svg = std::fs::read_to_string(d.path().join(format!("svg/{id}.svg"))).unwrap();
        assert!(svg.starts_with("<svg xmlns") && svg.trim_end().ends_with("</svg>"), "{id}");
    }
    let o = scalescope(d.path(), &["report", "r", "--timeline", "threads=1:2", "-o", "t.html"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(std::fs::read_to_string(d.path().join("t.html")).unwrap().contains("threads=1 run 2"));
    let o = scalescope(d.path(), &["report", "r", "--timeline", "threads=9:1"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("no point threads=9; the points are threads=1, threads=2"), "{}", stderr(&o));
}

#[test]
fn the_report_renders_in_a_headless_browser_without_errors() {
    let Some(browser) = common::chromium() else { return };
    let d = tempfile::tempdir().unwrap();
    sampled_sweep(d.path());
    let page = d.path().join("r/report.html");
    let url = format!("file://{}", page.display());
    let flags = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--enable-logging=stderr", "--v=0"];
    let dom = Command::new(&browser).args(flags).arg("--dump-dom").arg(&url).output().unwrap();
    let html = String::from_utf8_lossy(&dom.stdout);
    assert!(dom.status.success(), "{}", String::from_utf8_lossy(&dom.stderr));
    assert_eq!(html.matches("<svg").count(), CHARTS.len(), "every chart is in the rendered DOM");
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
    assert!(bytes.starts_with(b"\x89PNG") && bytes.len() > 50_000, "a real screenshot: {} bytes", bytes.len());
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
        page.contains("&#39;&lt;script&gt;alert(1)&lt;/script&gt;&#39; &#39;&quot;&#39;\\&#39;&#39;&amp;&#39;"),
        "{page}"
    );
    let md = stdout(&scalescope(d.path(), &["report", "r", "--format", "md"]));
    let outside_code: String = md.split("```").step_by(2).collect();
    assert!(!outside_code.contains("<script>"), "{md}");
    assert!(md.contains("<script>alert(1)</script>"), "the command is shown verbatim inside its code block: {md}");
}

#[test]
fn the_markdown_post_matches_its_golden_file() {
    let here = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let o = Command::new(bin())
        .args(["report", "fixtures/report/results.json", "--format", "md"])
        .current_dir(&here)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let got = stdout(&o);
    let golden = here.join("fixtures/report/summary.golden.md");
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&golden, &got).unwrap();
    }
    let want = std::fs::read_to_string(&golden).unwrap();
    assert_eq!(got, want, "rerun with UPDATE_GOLDEN=1 after an intended change, and review the diff");
}
