//! Findings as lines for the terminal and Markdown: the verdict with its kind and severity, how
//! much of the gap to ideal it explains, the evidence, and what to try.

use crate::results::Finding;

/// One block of lines per finding.
pub fn lines(findings: &[Finding]) -> Vec<String> {
    findings
        .iter()
        .map(|f| {
            let (sev, kind) = (f.severity.name(), f.kind_name());
            let cost = f.cost_text();
            let mut line = format!("[{sev}] {kind}: {}{cost}", f.summary);
            for e in &f.evidence {
                line.push_str(&format!("\n      {e}"));
            }
            line.push_str(&format!("\n      → {}", f.advice));
            line
        })
        .collect()
}
