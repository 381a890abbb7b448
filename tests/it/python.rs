//! docs/python.md: its recipes run as written (a sweep from Python, results.json and the CSV
//! export in pandas, the report in a notebook's display) against the binary under test.

use crate::common;

use common::{bin, scalescope, stderr, stdout};
use std::path::Path;
use std::process::Command;

/// The Python to run the recipes with: `SCALESCOPE_PYTHON` (CI points it at a venv) or python3.
fn python() -> String {
    std::env::var("SCALESCOPE_PYTHON").unwrap_or_else(|_| "python3".into())
}

/// The ```python blocks of a Markdown file, in order.
fn python_blocks(markdown: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    for line in markdown.lines() {
        match (&mut current, line.trim_end()) {
            (None, "```python") => current = Some(String::new()),
            (Some(_), "```") => blocks.push(current.take().unwrap()),
            (Some(block), _) => block.push_str(&format!("{line}\n")),
            (None, _) => {}
        }
    }
    blocks
}

#[test]
#[ignore = "needs a Python with pandas and IPython (SCALESCOPE_PYTHON names it); .ci/run runs it"]
fn the_python_recipes_run_as_written() {
    let py = python();
    let has = Command::new(&py).args(["-c", "import pandas, IPython"]).output();
    assert!(
        has.as_ref().is_ok_and(|o| o.status.success()),
        "{py} lacks pandas or IPython (pip install pandas ipython)"
    );
    let doc = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/python.md"))
        .unwrap();
    let blocks = python_blocks(&doc);
    assert_eq!(blocks.len(), 4, "the sweep, results.json, the CSV, the notebook");
    // What the recipes leave behind, checked in the same interpreter after them.
    let checks = r#"
assert set(runs.threads) == {1, 2} and runs.ok.all() and (runs.wall_s > 0).all(), runs
assert list(table.threads) == [1, 2] and table.speedup[0] == 1.0 and table.runs.min() >= 3, table
assert "<svg" in page and "&lt;svg" in report_view._repr_html_() and page.count("<figure") >= 5
print("recipes ok")
"#;
    let script = blocks.concat() + checks;
    let d = tempfile::tempdir().unwrap();
    let path = format!(
        "{}:{}",
        bin().parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let o = Command::new(&py)
        .args(["-W", "error::UserWarning", "-c"])
        .arg(&script)
        .current_dir(d.path())
        .env("PATH", path)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert!(o.status.success(), "the recipes failed:\n{}\n{}", stdout(&o), stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("wall_mean_s") && out.trim_end().ends_with("recipes ok"), "{out}");
}

#[test]
fn the_csv_export_has_a_header_for_every_field() {
    let d = tempfile::tempdir().unwrap();
    let here = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/report/results.json");
    let o = scalescope(d.path(), &["show", here.to_str().unwrap(), "--export-csv", "t.csv"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let csv = std::fs::read_to_string(d.path().join("t.csv")).unwrap();
    let fields = |line: &str| line.split(',').count();
    let header = fields(csv.lines().next().unwrap());
    assert!(
        csv.lines().skip(1).all(|l| fields(l) == header),
        "rows and header differ in length:\n{csv}"
    );
}
