//! Findings as lines for the terminal and Markdown: the verdict with its kind and severity, how
//! much of the gap to ideal it explains, what fixing it buys, the evidence, and what to try.

use super::terminal;
use crate::results::Finding;
use crate::results::findings::fix_order;

/// One block of lines per finding, after the fixes in the order of what they buy; with `colour`,
/// the severity tag in its colour. `at` says a count in words (`2 threads`).
pub fn lines(findings: &[Finding], colour: bool, at: &dyn Fn(f64) -> String) -> Vec<String> {
    let head = fix_order(findings, at).map(|h| format!("what to fix first: {h}"));
    head.into_iter().chain(findings.iter().map(|f| block(f, colour, at))).collect()
}

fn block(f: &Finding, colour: bool, at: &dyn Fn(f64) -> String) -> String {
    let sev = terminal::paint(
        &format!("[{}]", f.severity.name()),
        terminal::severity(f.severity),
        colour,
    );
    let (kind, cost) = (f.kind_name(), f.cost_text());
    let mut line = format!("{sev} {kind}: {}{cost}", f.summary);
    if let Some(w) = f.what_if_text(at) {
        line.push_str(&format!("\n      {w}"));
    }
    for e in &f.evidence {
        line.push_str(&format!("\n      {e}"));
    }
    line.push_str(&format!("\n      → {}", f.advice));
    line
}
