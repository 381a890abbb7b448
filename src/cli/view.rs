//! Printing the table and the model block and writing the exports, shared by `run`, `show` and
//! `analyze`.

use super::Usage;
use super::args::ViewArgs;
use crate::analysis::Options;
use crate::error::Error;
use crate::report::Sections;
use crate::report::{charts, csv, html, terminal};
use crate::results::Results;
use std::io::Write;
use std::path::Path;

/// File name of the Markdown summary written into every results folder.
pub const SUMMARY_MD: &str = "summary.md";

/// Gives the document the analysis and findings this view shows: the stored ones when it holds
/// them and the view asks for nothing else, otherwise computed here (so that `--export-json`
/// exports what the screen shows).
pub fn analyse(doc: &mut Results, view: &ViewArgs) -> Result<(), Error> {
    let other_axis = view.scale.is_some() || view.workers || view.weak;
    let asked = view.baseline.is_some() || !view.predict.is_empty() || view.memory_limit.is_some();
    if doc.analysis.is_some() && !other_axis && !asked {
        return Ok(());
    }
    let axis = if other_axis {
        doc.plan.axis_with(view.scale.as_deref(), view.workers, view.weak)?
    } else {
        doc.plan.axis.clone()
    };
    let opts = Options {
        baseline: view.baseline.clone(),
        predict: view.predict.clone(),
        cpus: None,
        predict_cpus: view.cpus.map(f64::from),
        memory_limit: view.memory_limit,
        ..Options::default()
    };
    crate::diagnose::analyse(doc, axis.as_ref(), &opts)?;
    Ok(())
}

/// Prints the table and its sections, writes the requested exports and, when `folder` is given,
/// summary.md and report.html inside it.
pub fn print_and_export(
    doc: &Results,
    sections: &Sections,
    folder: Option<&Path>,
    view: &ViewArgs,
) -> Result<(), Error> {
    let mut text = sections.terminal(terminal::colour(), view.all);
    let post = sections.markdown(doc);
    if let Some(dir) = folder {
        write(&dir.join(SUMMARY_MD), &post)?;
        write(&dir.join(html::REPORT_HTML), &html_report(doc, sections, None))?;
        text.push_str(&format!("\nresults: {}\n", dir.join(crate::results::FILE_NAME).display()));
        text.push_str(&format!(
            "report:  {} (open it in a browser)\n",
            dir.join(html::REPORT_HTML).display()
        ));
    }
    print(&text)?;
    if let Some(p) = &view.export_json {
        write(p, &(serde_json::to_string_pretty(doc)? + "\n"))?;
    }
    if let Some(p) = &view.export_csv {
        write(p, &csv::render(doc, doc.analysis.as_ref()))?;
    }
    if let Some(p) = &view.export_markdown {
        write(p, &post)?;
    }
    Ok(())
}

/// The HTML report of a results document; `timeline` picks the run whose thread states are drawn
/// (point index, run index).
pub fn html_report(doc: &Results, sections: &Sections, timeline: Option<(usize, usize)>) -> String {
    let figs = charts::figures(&[charts::Drawn { label: String::new(), doc }], timeline);
    html::report(doc, sections, &figs)
}

/// Writes text to stdout.
pub fn print(text: &str) -> Result<(), Error> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(())
}

/// Writes a file, a failure being the user's to fix.
pub fn write(path: &Path, text: &str) -> Result<(), Error> {
    crate::files::write(path, text.as_bytes())
        .map_err(|e| Usage(format!("cannot write {}: {e}", path.display())).into())
}
