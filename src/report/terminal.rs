//! The table as printed on a terminal: aligned columns, a bold header when colours are allowed
//! (a terminal, and `NO_COLOR` unset), notes underneath.

use super::table::Table;
use std::io::IsTerminal;

/// Whether to use colours on stdout.
pub fn colour() -> bool {
    std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()) && std::io::stdout().is_terminal()
}

/// Renders the table with columns padded to their widest cell.
pub fn render(table: &Table, colour: bool) -> String {
    let width = |s: &str| s.chars().count();
    let widths: Vec<usize> = (0..table.headers.len())
        .map(|c| table.rows.iter().map(|r| width(&r[c])).chain([width(&table.headers[c])]).max().unwrap_or(0))
        .collect();
    let line = |cells: &[String]| {
        let padded: Vec<String> = cells
            .iter()
            .enumerate()
            .map(|(c, cell)| {
                let pad = " ".repeat(widths[c] - width(cell));
                if table.numeric[c] { format!("{pad}{cell}") } else { format!("{cell}{pad}") }
            })
            .collect();
        padded.join("  ").trim_end().to_string()
    };
    let mut out = String::new();
    let header = line(&table.headers);
    if colour {
        out.push_str(&format!("\x1b[1m{header}\x1b[0m\n"));
    } else {
        out.push_str(&header);
        out.push('\n');
    }
    for row in &table.rows {
        out.push_str(&line(row));
        out.push('\n');
    }
    out
}

/// Renders lines as an indented list under a heading, or nothing.
pub fn render_section(title: &str, notes: &[String], colour: bool) -> String {
    if notes.is_empty() {
        return String::new();
    }
    let head = if colour { format!("\x1b[1m{title}\x1b[0m") } else { title.to_string() };
    let mut out = format!("\n{head}\n");
    for n in notes {
        out.push_str(&format!("  - {n}\n"));
    }
    out
}
