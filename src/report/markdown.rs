//! GitHub-flavoured Markdown, ready to paste into an issue or a forum post: the command, the
//! machine, the table and the notes. Everything user-provided is escaped.

use super::format::command_line;
use super::table::Table;
use crate::results::{Finding, Results};

/// Escapes text for a Markdown table cell or paragraph: no markup, no HTML, no broken tables.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '|' => out.push_str("\\|"),
            '\\' | '`' | '*' | '_' | '[' | ']' | '#' | '~' => {
                out.push('\\');
                out.push(c);
            }
            '\n' | '\r' => out.push(' '),
            _ => out.push(c),
        }
    }
    out
}

/// Text inside a fenced code block: a fence longer than any backtick run in it.
pub fn code_block(text: &str) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    format!("{fence}\n{text}\n{fence}\n")
}

/// Renders a table as a GitHub table.
pub fn table(t: &Table) -> String {
    let row = |cells: &[String]| {
        format!("| {} |\n", cells.iter().map(|c| escape(c)).collect::<Vec<_>>().join(" | "))
    };
    let mut out = row(&t.headers);
    let align: Vec<String> =
        t.numeric.iter().map(|&n| if n { "---:".into() } else { ":---".into() }).collect();
    out.push_str(&format!("|{}|\n", align.join("|")));
    for r in &t.rows {
        out.push_str(&row(r));
    }
    out
}

/// A heading and a bullet list, or nothing when there are no items.
pub fn list(title: &str, items: &[String]) -> String {
    if items.is_empty() {
        return String::new();
    }
    let mut out = format!("\n{title}:\n");
    for i in items {
        out.push_str(&format!("- {}\n", escape(i)));
    }
    out
}

/// The findings, after the fixes in the order of what they buy, one item each with what fixing
/// it buys, its evidence and advice nested under it; `at` says a count in words.
pub fn findings(list: &[Finding], at: &dyn Fn(f64) -> String) -> String {
    if list.is_empty() {
        return String::new();
    }
    let mut out = String::from("\nFindings:\n");
    if let Some(h) = crate::results::findings::fix_order(list, at) {
        out.push_str(&format!("- what to fix first: {}\n", escape(&h)));
    }
    for f in list {
        let head =
            format!("[{}] {}: {}{}", f.severity.name(), f.kind_name(), f.summary, f.cost_text());
        out.push_str(&format!("- {}\n", escape(&head)));
        if let Some(w) = f.what_if_text(at) {
            out.push_str(&format!("  - {}\n", escape(&w)));
        }
        for e in &f.evidence {
            out.push_str(&format!("  - {}\n", escape(e)));
        }
        out.push_str(&format!("  - → {}\n", escape(&f.advice)));
    }
    out
}

/// The whole post: command, machine, table, the `sections` under it, provenance.
pub fn document(doc: &Results, t: &Table, sections: &str) -> String {
    let m = &doc.machine;
    let mut out = String::from("### Scaling of the command\n\n");
    out.push_str(&code_block(&command_line(&doc.plan.command)));
    out.push_str(&format!(
        "\n{} · {} logical CPUs ({} allowed), {} physical cores · {:.1} GiB · {} {}\n\n",
        escape(&m.cpu_model),
        m.logical_cpus,
        m.allowed_cpus,
        m.physical_cores,
        m.memory_bytes as f64 / (1u64 << 30) as f64,
        escape(&m.os),
        escape(&m.kernel)
    ));
    out.push_str(&table(t));
    out.push_str(sections);
    out.push_str(&format!("\nMeasured with scalescope {}:\n\n", escape(&doc.scalescope_version)));
    out.push_str(&code_block(&command_line(&doc.command_line)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_text_never_becomes_markup() {
        assert_eq!(escape("<script>alert(1)</script>"), "&lt;script&gt;alert(1)&lt;/script&gt;");
        assert_eq!(escape("a|b *c* \"'&"), "a\\|b \\*c\\* \"'&amp;");
        assert_eq!(code_block("echo ```x```"), "````\necho ```x```\n````\n");
    }
}
