//! Findings as lines for the terminal and Markdown: the verdict with its kind and severity, how
//! much of the gap to ideal it explains, the evidence, and what to try.

use super::terminal;
use crate::results::Finding;

/// One block of lines per finding; with `colour`, the severity tag in its colour.
pub fn lines(findings: &[Finding], colour: bool) -> Vec<String> {
    findings
        .iter()
        .map(|f| {
            let sev = terminal::paint(&format!("[{}]", f.severity.name()), terminal::severity(f.severity), colour);
            let (kind, cost) = (f.kind_name(), f.cost_text());
            let mut line = format!("{sev} {kind}: {}{cost}", f.summary);
            for e in &f.evidence {
                line.push_str(&format!("\n      {e}"));
            }
            line.push_str(&format!("\n      → {}", f.advice));
            line
        })
        .collect()
}
