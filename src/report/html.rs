//! The self-contained HTML report: one file with inline CSS and SVG charts and no network,
//! readable in any browser and in print; the only script (zoom and search in flame graphs) is
//! optional. Every user-provided text is escaped.

use super::charts::Figure;
use super::format::command_line;
use super::sections::Sections;
use super::svg::escape;
use super::table::Table;
use crate::results::Finding;
use crate::results::Results;

/// File name of the report written into every results folder.
pub const REPORT_HTML: &str = "report.html";

const STYLE: &str = "body{font-family:system-ui,sans-serif;max-width:1180px;margin:2em auto;padding:0 1em;color:#222;line-height:1.4}\
h1{font-size:1.5em}h2{font-size:1.2em;border-bottom:1px solid #ddd;padding-bottom:.2em;margin-top:1.6em}\
pre{background:#f6f8fa;padding:.6em;overflow-x:auto;white-space:pre-wrap;word-break:break-all}\
table{border-collapse:collapse;font-size:.9em;margin:.5em 0}th,td{border:1px solid #ddd;padding:.25em .5em}\
td.n{text-align:right;font-variant-numeric:tabular-nums}th{background:#f6f8fa}\
.figs{display:flex;flex-wrap:wrap;gap:1em}figure{margin:0;break-inside:avoid}figcaption{font-size:.85em;color:#555;max-width:560px}\
.finding{border-left:4px solid #999;padding:.2em .8em;margin:.6em 0;break-inside:avoid}\
.high{border-color:#D55E00}.medium{border-color:#E69F00}.low{border-color:#56B4E9}.info{border-color:#999}\
.finding ul{margin:.2em 0}.advice{color:#333}dl{display:grid;grid-template-columns:max-content auto;gap:.1em 1em}dt{font-weight:bold}\
@media print{body{max-width:none}a{color:inherit}}";

/// A whole page around `body`.
pub fn page(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>{}</title><style>{STYLE}</style></head><body>\n{body}\n</body></html>\n",
        escape(title)
    )
}

/// A table; numeric columns right-aligned.
pub fn table(t: &Table) -> String {
    let mut out = String::from("<table><thead><tr>");
    for h in &t.headers {
        out.push_str(&format!("<th>{}</th>", escape(h)));
    }
    out.push_str("</tr></thead><tbody>");
    for r in &t.rows {
        out.push_str("<tr>");
        for (i, c) in r.iter().enumerate() {
            let class =
                if t.numeric.get(i).copied().unwrap_or(false) { " class=\"n\"" } else { "" };
            out.push_str(&format!("<td{class}>{}</td>", escape(c)));
        }
        out.push_str("</tr>");
    }
    out.push_str("</tbody></table>\n");
    out
}

/// A heading and a bullet list, or nothing when there are no items.
pub fn section(title: &str, items: &[String]) -> String {
    if items.is_empty() {
        return String::new();
    }
    let lis: String = items.iter().map(|i| format!("<li>{}</li>", escape(i))).collect();
    format!("<h2>{}</h2><ul>{lis}</ul>\n", escape(title))
}

/// The figures, side by side where the page is wide.
pub fn figures(figs: &[Figure]) -> String {
    if figs.is_empty() {
        return String::new();
    }
    let mut out = String::from("<h2>Charts</h2><div class=\"figs\">");
    for f in figs {
        out.push_str(&format!(
            "<figure id=\"fig-{}\">{}<figcaption>{}</figcaption></figure>",
            escape(&f.id),
            f.svg,
            escape(&f.caption)
        ));
    }
    out.push_str("</div>\n");
    out
}

/// The findings with what fixing each buys (ordered in a headline), their evidence and advice;
/// `measured` is whether any run succeeded; `at` says a count in words.
pub fn findings(list: &[Finding], measured: bool, at: &dyn Fn(f64) -> String) -> String {
    if list.is_empty() && !measured {
        return "<h2>Findings</h2><p>No finding: no run succeeded, so there is nothing to judge (see the notes).</p>\n"
            .into();
    }
    if list.is_empty() {
        return "<h2>Findings</h2><p>No finding: nothing in the measurements points at a scaling problem.</p>\n".into();
    }
    let mut out = String::from("<h2>Findings</h2>");
    if let Some(h) = crate::results::findings::fix_order(list, at) {
        out.push_str(&format!("<p class=\"fixes\"><b>What to fix first</b>: {}</p>", escape(&h)));
    }
    for f in list {
        let (sev, kind) = (f.severity.name(), f.kind_name());
        let cost = f.cost_text();
        let what_if =
            f.what_if_text(at).map(|w| format!("<li class=\"what-if\">{}</li>", escape(&w)));
        let evidence: String = what_if
            .into_iter()
            .chain(f.evidence.iter().map(|e| format!("<li>{}</li>", escape(e))))
            .collect();
        out.push_str(&format!(
            "<div class=\"finding {sev}\"><p><b>[{sev}] {}</b>: {}{}</p><ul>{evidence}</ul><p class=\"advice\">→ {}</p></div>",
            escape(&kind),
            escape(&f.summary),
            escape(&cost),
            escape(&f.advice)
        ));
    }
    out.push('\n');
    out
}

/// The machine and the exact command lines.
pub fn provenance(doc: &Results) -> String {
    let m = &doc.machine;
    let rows = [
        ("command", command_line(&doc.plan.command)),
        ("scalescope", command_line(&doc.command_line)),
        ("machine", format!("{} · {}", m.host, m.cpu_model)),
        (
            "CPUs",
            format!(
                "{} logical ({} allowed), {} physical cores",
                m.logical_cpus, m.allowed_cpus, m.physical_cores
            ),
        ),
        ("memory", format!("{:.1} GiB", m.memory_bytes as f64 / (1u64 << 30) as f64)),
        ("system", format!("{} {} ({})", m.os, m.kernel, m.arch)),
        ("when", format!("{} to {} ({:?})", doc.created, doc.updated, doc.status)),
        ("scalescope version", doc.scalescope_version.clone()),
    ];
    let dl: String =
        rows.iter().map(|(k, v)| format!("<dt>{k}</dt><dd>{}</dd>", escape(v))).collect();
    format!("<h2>Machine and commands</h2><dl>{dl}</dl>\n")
}

/// Renders the whole report page of `doc`: its sections and charts.
pub fn report(doc: &Results, s: &Sections, figs: &[Figure]) -> String {
    let title = format!("scalescope: {}", command_line(&doc.plan.command));
    let mut body = format!(
        "<h1>{}</h1>\n<pre><code>{}</code></pre>\n",
        escape("Scaling report"),
        escape(&command_line(&doc.plan.command))
    );
    body.push_str("<h2>Results</h2>");
    body.push_str(&table(&s.table));
    let measured = doc.points.iter().any(|p| p.runs.iter().any(|r| r.succeeded()));
    body.push_str(&findings(&s.findings, measured, &|n| s.count_words(n)));
    body.push_str(&section("Model", &s.model));
    body.push_str(&section("Speed-up stacks (cores)", &s.stacks));
    body.push_str(&figures(figs));
    body.push_str(&section("Top waits: locks, system calls and hot functions", &s.waits));
    body.push_str(&super::flame::section(doc));
    body.push_str(&section("Ranks and copies", &s.ranks));
    body.push_str(&section("I/O ceiling", &s.ceiling));
    body.push_str(&section("Notes", &s.notes));
    body.push_str(&provenance(doc));
    page(&title, &body)
}
