//! Printing the table and the model block and writing the exports, shared by `run`, `show` and
//! `analyze`.

use super::Usage;
use super::args::ViewArgs;
use crate::analysis::{self, Analysis, Choice, Options};
use crate::report::{charts, csv, html, markdown, model, table, terminal};
use crate::results::Results;
use std::io::Write;
use std::path::Path;

/// File name of the Markdown summary written into every results folder.
pub const SUMMARY_MD: &str = "summary.md";

/// The analysis of a results document as the view options ask for it.
pub fn analysis(doc: &Results, view: &ViewArgs) -> anyhow::Result<Option<Analysis>> {
    let choice = Choice { scale: view.scale.as_deref(), weak: view.weak, workers: view.workers };
    let opts = Options { baseline: view.baseline.clone(), predict: view.predict.clone(), cpus: None };
    Ok(analysis::analyze_results(doc, &choice, &opts)?)
}

/// The findings of a results document and its analysis.
pub fn findings(doc: &Results, analysis: Option<&Analysis>) -> Vec<crate::diagnose::Finding> {
    crate::diagnose::diagnose(doc, analysis)
}

/// Prints the table, the model block and notes, writes the requested exports and, when `folder`
/// is given, the Markdown summary inside it.
pub fn print_and_export(
    doc: &Results,
    analysis: Option<&Analysis>,
    folder: Option<&Path>,
    view: &ViewArgs,
) -> anyhow::Result<()> {
    let t = table::summary(doc, analysis);
    let notes = table::notes(doc);
    let colour = terminal::colour();
    let mut text = terminal::render(&t, colour);
    text.push_str(&terminal::render_section("waits", &table::waits(doc), colour));
    text.push_str(&terminal::render_section("ranks", &crate::report::threads::rank_lines(doc), colour));
    text.push_str(&terminal::render_section("I/O ceiling", &table::ceiling(doc), colour));
    text.push_str(&terminal::render_section("model", &analysis.map(model::lines).unwrap_or_default(), colour));
    let finding_lines = crate::report::findings::lines(&findings(doc, analysis));
    text.push_str(&terminal::render_section("findings", &finding_lines, colour));
    text.push_str(&terminal::render_section("notes", &notes, colour));
    let post = markdown_report(doc, analysis);
    if let Some(dir) = folder {
        write(&dir.join(SUMMARY_MD), &post)?;
        write(&dir.join(html::REPORT_HTML), &html_report(doc, analysis, None))?;
        text.push_str(&format!("\nresults: {}\n", dir.join(crate::results::FILE_NAME).display()));
        text.push_str(&format!("report:  {} (open it in a browser)\n", dir.join(html::REPORT_HTML).display()));
    }
    print(&text)?;
    if let Some(p) = &view.export_json {
        write(p, &(serde_json::to_string_pretty(doc)? + "\n"))?;
    }
    if let Some(p) = &view.export_csv {
        write(p, &csv::render(doc, analysis))?;
    }
    if let Some(p) = &view.export_markdown {
        write(p, &post)?;
    }
    Ok(())
}

/// The Markdown post of a results document: the command, machine, table, model, I/O ceiling,
/// findings and notes.
pub fn markdown_report(doc: &Results, analysis: Option<&Analysis>) -> String {
    let t = table::summary(doc, analysis);
    let mut lines = analysis.map(model::lines).unwrap_or_default();
    lines.extend(table::ceiling(doc));
    lines.extend(crate::report::threads::rank_lines(doc));
    let found = crate::report::findings::lines(&findings(doc, analysis));
    lines.extend(found.iter().map(|l| l.replace("\n      ", " — ")));
    markdown::document(doc, &t, &lines, &table::notes(doc))
}

/// The HTML report of a results document; `timeline` picks the run whose thread states are drawn
/// (point index, run index).
pub fn html_report(doc: &Results, analysis: Option<&Analysis>, timeline: Option<(usize, usize)>) -> String {
    let t = table::summary(doc, analysis);
    let model_lines = analysis.map(model::lines).unwrap_or_default();
    let found = findings(doc, analysis);
    let figs = charts::figures(&[charts::Drawn { label: String::new(), doc, analysis }], timeline);
    html::report(&html::Parts {
        doc,
        table: &t,
        model: &model_lines,
        findings: &found,
        waits: &table::waits(doc),
        ceiling: &table::ceiling(doc),
        notes: &table::notes(doc),
        figures: &figs,
    })
}

/// Writes text to stdout.
pub fn print(text: &str) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(())
}

/// Writes a file, a failure being the user's to fix.
pub fn write(path: &Path, text: &str) -> anyhow::Result<()> {
    crate::files::write(path, text.as_bytes())
        .map_err(|e| Usage(format!("cannot write {}: {e}", path.display())).into())
}
