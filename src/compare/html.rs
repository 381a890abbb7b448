//! A comparison as one self-contained HTML page: the verdict table, the models side by side,
//! the why, and the report's charts with one series per set, overlaid.

use super::{Comparison, Set, text};
use crate::report::{charts, flame, html};

/// Renders the page.
pub fn page(sets: &[Set], c: &Comparison) -> String {
    let drawn: Vec<charts::Drawn> = sets
        .iter()
        .filter_map(|s| Some(charts::Drawn { label: s.label.clone(), doc: s.doc.as_ref()? }))
        .collect();
    let figs = charts::figures(&drawn, None);
    let mut body = String::from("<h1>Comparison</h1>");
    body.push_str(&html::section("What is compared", &text::header(c)));
    body.push_str("<h2>Per point</h2>");
    body.push_str(&html::table(&text::table(c)));
    body.push_str(&html::section("Models", &text::models(c)));
    body.push_str(&html::section("Why", &c.why));
    body.push_str(&html::section("Predicted against obtained", &c.predicted));
    body.push_str(&html::section("Memory per unit of work", &c.memory));
    body.push_str(&html::figures(&figs));
    let reference = &sets[c.reference];
    if let Some(before) = &reference.doc {
        for s in sets.iter().filter(|s| !std::ptr::eq(*s, reference)) {
            if let Some(after) = &s.doc {
                body.push_str(&flame::compare_section(
                    (&reference.label, before),
                    (&s.label, after),
                ));
            }
        }
    }
    let commands: Vec<String> = sets
        .iter()
        .filter_map(|s| {
            Some(format!(
                "{}: {}",
                s.label,
                crate::report::command_line(&s.doc.as_ref()?.plan.command)
            ))
        })
        .collect();
    body.push_str(&html::section("Commands", &commands));
    html::page(&format!("scalescope compare: {}", c.labels.join(" vs ")), &body)
}
