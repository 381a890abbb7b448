//! `scalescope analyze`: the scaling models of a results folder, or of a published table.

use super::args::AnalyzeArgs;
use super::table_columns::TableColumns;
use super::{Exit, Usage, view};
use crate::analysis::observations::Observations;
use crate::analysis::table_csv::{self, Columns};
use crate::analysis::{Options, analyze as fit};
use crate::error::Error;
use crate::plan::Ask;
use crate::report::{markdown, model, terminal};
use std::path::Path;

/// Analyses results or a CSV table and prints the per-point figures and the model block.
pub fn analyze(args: &AnalyzeArgs) -> Result<Exit, Error> {
    let Some(csv) = &args.csv else {
        let path = args.results.as_ref().expect("clap requires RESULTS without --csv");
        let (_, mut doc) = crate::results::load(path)?;
        view::analyse(&mut doc, &args.view)?;
        if doc.analysis.is_none() {
            return Err(Usage(format!(
                "{}: no parameter has numeric values, so there is nothing to count along",
                path.display()
            ))
            .into());
        }
        let sections = crate::report::Sections::of(&doc);
        view::print_and_export(&doc, &sections, None, &args.view)?;
        return Ok(Exit::Done);
    };
    let ask = Ask { workers: args.view.workers, weak: args.view.weak, ..Ask::default() };
    let obs = read_table(csv, &args.columns, &ask)?;
    let opts = Options {
        baseline: args.view.baseline.clone(),
        predict: args.view.predict.clone(),
        cpus: args.view.cpus.map(f64::from),
        predict_cpus: args.view.cpus.map(f64::from),
        ..Options::default()
    };
    let a = fit(&obs, &opts)?;
    let colour = terminal::colour();
    let mut out = String::new();
    let mut md = String::new();
    for s in &a.series {
        let t = model::points_table(&a, s);
        out.push_str(&terminal::render(&t, colour));
        md.push_str(&markdown::table(&t));
    }
    let lines = model::lines(&a);
    out.push_str(&terminal::render_section("model", &lines, colour));
    view::print(&out)?;
    if let Some(p) = &args.view.export_markdown {
        md.push_str(&markdown::list("Model", &lines));
        view::write(p, &md)?;
    }
    if let Some(p) = &args.view.export_json {
        view::write(p, &(serde_json::to_string_pretty(&a)? + "\n"))?;
    }
    Ok(Exit::Done)
}

/// Reads a CSV table into observations along its `--count` column.
pub fn read_table(path: &Path, columns: &TableColumns, ask: &Ask) -> Result<Observations, Error> {
    let count = columns
        .count
        .as_deref()
        .ok_or_else(|| Usage("--csv needs --count COLUMN (e.g. --count threads)".into()))?;
    let text = std::fs::read_to_string(path)
        .map_err(|e| Usage(format!("cannot read {}: {e}", path.display())))?;
    let cols = Columns {
        count,
        time: columns.time.as_deref(),
        throughput: columns.throughput.as_deref(),
        cpu: columns.cpu.as_deref(),
    };
    Ok(table_csv::parse(&text, &path.display().to_string(), &cols, ask)?)
}
