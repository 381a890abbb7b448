//! Printing the table and writing the exports, shared by `run` and `show`.

use super::Usage;
use super::args::ViewArgs;
use crate::analysis::speedups;
use crate::report::{csv, markdown, table, terminal};
use crate::results::Results;
use std::io::Write;
use std::path::Path;

/// File name of the Markdown summary written into every results folder.
pub const SUMMARY_MD: &str = "summary.md";

/// Prints the table and notes, writes the requested exports and, when `folder` is given, the
/// Markdown summary inside it.
pub fn print_and_export(doc: &Results, folder: Option<&Path>, view: &ViewArgs) -> anyhow::Result<()> {
    let speed = speedups(doc, view.scale.as_deref(), view.baseline.as_deref())?;
    let t = table::summary(doc, &speed);
    let notes = table::notes(doc);
    let colour = terminal::colour();
    let mut text = terminal::render(&t, colour);
    text.push_str(&terminal::render_notes(&notes, colour));
    if let Some(dir) = folder {
        let md = markdown::document(doc, &t, &notes);
        write(&dir.join(SUMMARY_MD), &md)?;
        text.push_str(&format!("\nresults: {}\n", dir.join(crate::results::FILE_NAME).display()));
    }
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    if let Some(p) = &view.export_json {
        write(p, &(serde_json::to_string_pretty(doc)? + "\n"))?;
    }
    if let Some(p) = &view.export_csv {
        write(p, &csv::render(doc, &speed))?;
    }
    if let Some(p) = &view.export_markdown {
        write(p, &markdown::document(doc, &t, &notes))?;
    }
    Ok(())
}

fn write(path: &Path, text: &str) -> anyhow::Result<()> {
    std::fs::write(path, text).map_err(|e| Usage(format!("cannot write {}: {e}", path.display())).into())
}
