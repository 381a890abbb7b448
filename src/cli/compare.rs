//! `scalescope compare A B [C…]`: loads the result sets (or, with `--csv`, tables), compares them
//! and prints the table, the models side by side and the why; optionally exports JSON, Markdown
//! and HTML.

use super::args::CompareArgs;
use super::fraction::fraction;
use super::{Exit, Usage, analyze, view};
use crate::compare::Verdict;
use crate::compare::{self, Options, Set, text};
use crate::error::Error;
use crate::plan::Ask;
use crate::report::{markdown, terminal};
use std::path::Path;

/// Runs `scalescope compare`.
pub fn compare(args: &CompareArgs) -> Result<Exit, Error> {
    let (mut sets, reference) = match &args.history {
        Some(file) => against_history(args, file)?,
        None => (given(args)?, None),
    };
    let mut seen = std::collections::HashSet::new();
    for (i, s) in sets.iter_mut().enumerate() {
        if !seen.insert(s.label.clone()) {
            s.label = format!("{}#{}", s.label, i + 1);
        }
    }
    let noise = noise(&args.noise)?;
    let reference = match (&args.reference, reference) {
        (None, Some(r)) => r,
        (None, None) => 0,
        (Some(r), _) => match r.parse::<usize>() {
            Ok(n) if (1..=sets.len()).contains(&n) => n - 1,
            _ => sets.iter().position(|s| &s.label == r).ok_or_else(|| {
                Usage(format!(
                    "--reference {r}: give a label or a position from 1 to {}",
                    sets.len()
                ))
            })?,
        },
    };
    show(args, &sets, noise, reference)
}

/// `--history`: the one sweep given after the last comparable sweeps of the history, compared
/// with the newest of them.
fn against_history(args: &CompareArgs, file: &str) -> Result<(Vec<Set>, Option<usize>), Error> {
    let [path] = args.results.as_slice() else {
        return Err(Usage(format!(
            "--history compares one results folder with the sweeps before it in the history: give one, not {}",
            args.results.len()
        ))
        .into());
    };
    let file = super::history::file((!file.is_empty()).then_some(Path::new(file)))?;
    let (dir, doc) = crate::results::load(path)?;
    let h = crate::history::History::open(&file)?;
    let previous = crate::history::against::previous(&h, &doc, args.last.max(1))?;
    let mut sets: Vec<Set> = previous.iter().map(crate::history::against::set).collect();
    let reference = sets.len() - 1;
    let label = args.labels.first().cloned().unwrap_or_else(|| {
        dir.file_name().map_or_else(|| "this sweep".into(), |n| n.to_string_lossy().into_owned())
    });
    sets.push(Set::new(label, path.display().to_string(), doc));
    Ok((sets, Some(reference)))
}

/// The result sets named on the command line.
fn given(args: &CompareArgs) -> Result<Vec<Set>, Error> {
    if args.results.len() < 2 {
        return Err(Usage(
            "give at least two result sets to compare (or one with --history, to compare it with the sweeps before it)"
                .into(),
        )
        .into());
    }
    if !args.labels.is_empty() && args.labels.len() != args.results.len() {
        return Err(Usage(format!(
            "give one --label per result set ({} labels for {} sets)",
            args.labels.len(),
            args.results.len()
        ))
        .into());
    }
    let mut sets = Vec::new();
    let ask = Ask::default();
    for (i, path) in args.results.iter().enumerate() {
        let name = |p: &Path| p.file_stem().map(|n| n.to_string_lossy().into_owned());
        let given = args.labels.get(i).cloned();
        let shown = path.display().to_string();
        if args.csv {
            let obs = analyze::read_table(path, &args.columns, &ask)?;
            let label = given.or_else(|| name(path)).unwrap_or_else(|| format!("set{}", i + 1));
            sets.push(Set::table(label, shown, &obs));
        } else {
            let (dir, doc) = crate::results::load(path)?;
            let label = given.or_else(|| dir.file_name().map(|n| n.to_string_lossy().into_owned()));
            sets.push(Set::new(
                label.or_else(|| name(path)).unwrap_or_else(|| format!("set{}", i + 1)),
                shown,
                doc,
            ));
        }
    }
    Ok(sets)
}

/// Compares the sets, prints the comparison and writes the exports.
fn show(args: &CompareArgs, sets: &[Set], noise: f64, reference: usize) -> Result<Exit, Error> {
    let c = compare::compare(sets, &Options { noise, reference });
    let colour = terminal::colour();
    let t = text::table(&c);
    let mut out = terminal::render_section("compare", &text::header(&c), colour);
    out.push('\n');
    out.push_str(&terminal::render_painted(&t, colour, &|row, column| match text::verdict_at(
        &c, row, column,
    )? {
        Verdict::Faster => Some(terminal::BETTER),
        Verdict::Slower => Some(terminal::WORSE),
        _ => None,
    }));
    out.push_str(&terminal::render_section("models", &text::models(&c), colour));
    out.push_str(&terminal::render_section("why", &c.why, colour));
    out.push_str(&terminal::render_section("predicted against obtained", &c.predicted, colour));
    out.push_str(&terminal::render_section("memory", &c.memory, colour));
    view::print(&out)?;
    if let Some(p) = &args.export_json {
        view::write(p, &(serde_json::to_string_pretty(&c)? + "\n"))?;
    }
    if let Some(p) = &args.export_html {
        view::write(p, &compare::html::page(sets, &c))?;
    }
    if let Some(p) = &args.export_markdown {
        let mut md = String::from("## scalescope compare\n\n");
        for l in text::header(&c) {
            md.push_str(&format!("- {}\n", markdown::escape(l.trim())));
        }
        md.push('\n');
        md.push_str(&markdown::table(&t));
        for (title, lines) in [
            ("Models", text::models(&c)),
            ("Why", c.why.clone()),
            ("Predicted against obtained", c.predicted.clone()),
            ("Memory", c.memory.clone()),
        ] {
            if !lines.is_empty() {
                md.push_str(&format!("\n### {title}\n\n"));
                for l in lines {
                    md.push_str(&format!("- {}\n", markdown::escape(&l)));
                }
            }
        }
        view::write(p, &md)?;
    }
    Ok(Exit::Done)
}

/// `2%` or `0.02` as a fraction.
fn noise(text: &str) -> Result<f64, Error> {
    fraction("--noise", text)
}
