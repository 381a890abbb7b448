//! `scalescope show RESULTS`: the table and model of a finished (or interrupted) sweep, again.

use super::args::ShowArgs;
use super::{Exit, Usage, view};
use crate::error::Error;
use std::path::Path;

/// Loads the results and prints their table and model.
pub fn show(args: &ShowArgs) -> Result<Exit, Error> {
    let (_, mut doc) = crate::results::load(&args.results)?;
    view::analyse(&mut doc, &args.view)?;
    // The series go first: a folder that cannot be written stops `show` before it prints.
    if let Some(dir) = &args.export_prmon {
        export_prmon(&doc, &args.results, dir)?;
    }
    let sections = crate::report::Sections::of(&doc);
    view::print_and_export(&doc, &sections, None, &args.view)?;
    Ok(Exit::Done)
}

/// Writes every run's time series into `dir` in prmon's formats.
fn export_prmon(doc: &crate::results::Results, results: &Path, dir: &Path) -> Result<(), Error> {
    let files = crate::report::prmon_exports(doc);
    if files.is_empty() {
        return Err(Usage(format!(
            "{} holds no run with a time series to export (recorded with --no-sample, or before scalescope kept time series)",
            results.display()
        ))
        .into());
    }
    std::fs::create_dir_all(dir)
        .map_err(|e| Usage(format!("cannot create {}: {e}", dir.display())))?;
    for f in files {
        view::write(&dir.join(format!("{}.txt", f.name)), &f.tsv)?;
        view::write(&dir.join(format!("{}.json", f.name)), &f.json)?;
    }
    Ok(())
}
