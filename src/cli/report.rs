//! `scalescope report RESULTS`: the report of a results folder as HTML, Markdown or SVG charts.

use super::args::{ReportArgs, ReportFormat};
use super::{Exit, Usage, view};
use crate::error::Error;
use crate::report::{charts, html};
use crate::results::Results;

/// Writes the report in the asked format.
pub fn report(args: &ReportArgs) -> Result<Exit, Error> {
    let (dir, mut doc) = crate::results::load(&args.results)?;
    view::analyse(&mut doc, &args.view)?;
    let timeline = args.timeline.as_deref().map(|t| timeline(&doc, t)).transpose()?;
    let sections = crate::report::Sections::of(&doc);
    if let Some(path) = &args.export_folded {
        let folded = crate::report::flame::folded_document(&doc);
        if folded.is_empty() {
            return Err(Usage(format!(
                "{}: no run stored call stacks (the tracer and stack capture found none)",
                args.results.display()
            ))
            .into());
        }
        view::write(path, &folded)?;
        crate::fmt::say!("folded stacks: {}", path.display());
    }
    match args.format {
        ReportFormat::Html => {
            let path = args.out.clone().unwrap_or_else(|| dir.join(html::REPORT_HTML));
            view::write(&path, &view::html_report(&doc, &sections, timeline))?;
            crate::fmt::say!("report: {}", path.display());
        }
        ReportFormat::Md => {
            let text = sections.markdown(&doc);
            match &args.out {
                Some(p) => view::write(p, &text)?,
                None => view::print(&text)?,
            }
        }
        ReportFormat::Svg => {
            let out = args.out.clone().unwrap_or_else(|| dir.join("charts"));
            std::fs::create_dir_all(&out)
                .map_err(|e| Usage(format!("cannot create {}: {e}", out.display())))?;
            let drawn = [charts::Drawn { label: String::new(), doc: &doc }];
            let figs = charts::figures(&drawn, timeline);
            for f in &figs {
                view::write(&out.join(format!("{}.svg", f.id)), &format!("{}\n", f.svg))?;
            }
            crate::fmt::say!("{} charts in {}", figs.len(), out.display());
        }
    }
    Ok(Exit::Done)
}

/// Finds `LABEL:RUN` (run counted from 1) among the points.
fn timeline(doc: &Results, spec: &str) -> Result<(usize, usize), Error> {
    let (label, run) = spec.rsplit_once(':').unwrap_or((spec, "1"));
    let point = doc.points.iter().position(|p| p.label() == label).ok_or_else(|| {
        let known: Vec<String> = doc.points.iter().map(|p| p.label()).collect();
        Usage(format!("--timeline {spec}: no point {label}; the points are {}", known.join(", ")))
    })?;
    let n: usize = run
        .parse()
        .ok()
        .filter(|n| *n >= 1)
        .ok_or_else(|| Usage(format!("--timeline {spec}: give a run number from 1")))?;
    let r = doc.points[point]
        .runs
        .get(n - 1)
        .filter(|r| r.threads.as_ref().is_some_and(|t| t.timeline.is_some()));
    if r.is_none() {
        return Err(Usage(format!("--timeline {spec}: {label} has no sampled run {n}")).into());
    }
    Ok((point, n - 1))
}
