//! Findings as lines for the terminal and Markdown: the verdict with its kind and severity, how
//! much of the gap to ideal it explains, the evidence, and what to try.

use crate::diagnose::{Finding, Severity};

/// One block of lines per finding.
pub fn lines(findings: &[Finding]) -> Vec<String> {
    findings
        .iter()
        .map(|f| {
            let sev = match f.severity {
                Severity::High => "high",
                Severity::Medium => "medium",
                Severity::Low => "low",
                Severity::Info => "info",
            };
            let kind = serde_json::to_value(f.kind).ok().and_then(|v| v.as_str().map(String::from)).unwrap_or_default();
            let cost =
                f.cost_pct.map(|c| format!(" (explains ~{c:.0}% of the gap to ideal speed-up)")).unwrap_or_default();
            let mut line = format!("[{sev}] {kind}: {}{cost}", f.summary);
            for e in &f.evidence {
                line.push_str(&format!("\n      {e}"));
            }
            line.push_str(&format!("\n      → {}", f.advice));
            line
        })
        .collect()
}
