//! The table as printed on a terminal: aligned columns, notes underneath, and colour where it
//! carries meaning (a bold header, finding severities, faster/slower, warnings) when allowed:
//! `--color`, then `NO_COLOR`/`CLICOLOR_FORCE`, then whether stdout is a terminal.

use super::table::Table;
use crate::results::findings::Severity;
use anstyle::{AnsiColor, Style};

/// Section headings and the table header.
pub const HEADING: Style = Style::new().bold();
/// A change for the better (compare: faster).
pub const BETTER: Style = AnsiColor::Green.on_default();
/// A change for the worse (compare: slower).
pub const WORSE: Style = AnsiColor::Red.on_default();
/// Warnings.
pub const WARNING: Style = AnsiColor::Yellow.on_default();

/// Whether to use colours on stdout.
pub fn colour() -> bool {
    anstream::AutoStream::choice(&std::io::stdout()) != anstream::ColorChoice::Never
}

/// The style of a finding's severity tag.
pub fn severity(s: Severity) -> Style {
    match s {
        Severity::High => AnsiColor::Red.on_default().bold(),
        Severity::Medium => AnsiColor::Yellow.on_default(),
        Severity::Low => AnsiColor::Cyan.on_default(),
        Severity::Info => Style::new().dimmed(),
    }
}

/// `text` in `style` when colours are on.
pub fn paint(text: &str, style: Style, colour: bool) -> String {
    if colour && !text.is_empty() { format!("{style}{text}{style:#}") } else { text.to_string() }
}

/// Prints `scalescope: warning: MESSAGE` on stderr, the word in colour when stderr allows it.
pub fn warn(message: &str) {
    use std::io::Write as _;
    // Dropped when stderr is gone (a closed pipe), as every line of `fmt::say!`.
    let _ = writeln!(anstream::stderr(), "scalescope: {WARNING}warning:{WARNING:#} {message}");
}

/// Renders the table with columns padded to their widest cell.
pub fn render(table: &Table, colour: bool) -> String {
    render_painted(table, colour, &|_, _| None)
}

/// Renders the table; `paint_cell(row, column)` gives a cell its style.
pub fn render_painted(
    table: &Table,
    colour: bool,
    paint_cell: &dyn Fn(usize, usize) -> Option<Style>,
) -> String {
    let width = |s: &str| s.chars().count();
    // A row wider than the table (the note of rows left out) does not widen its first column.
    let widths: Vec<usize> = (0..table.headers.len())
        .map(|c| {
            let cells =
                table.rows.iter().filter(|r| !r[1..].iter().all(String::is_empty) || r.len() == 1);
            cells.map(|r| width(&r[c])).chain([width(&table.headers[c])]).max().unwrap_or(0)
        })
        .collect();
    let line = |cells: &[String], style: &dyn Fn(usize) -> Option<Style>| {
        let padded: Vec<String> = cells
            .iter()
            .enumerate()
            .map(|(c, cell)| {
                let pad = " ".repeat(widths[c].saturating_sub(width(cell)));
                let cell = style(c).map_or_else(|| cell.clone(), |s| paint(cell, s, colour));
                if table.numeric[c] { format!("{pad}{cell}") } else { format!("{cell}{pad}") }
            })
            .collect();
        padded.join("  ").trim_end().to_string()
    };
    let mut out = paint(&line(&table.headers, &|_| None), HEADING, colour);
    out.push('\n');
    for (r, row) in table.rows.iter().enumerate() {
        out.push_str(&line(row, &|c| paint_cell(r, c)));
        out.push('\n');
    }
    out
}

/// Rows (or lines) shown at each end of a long table (or list) on the terminal without `--all`.
pub const ENDS: usize = 10;

/// The table with only its first and last [`ENDS`] rows and, between them, a row saying how many
/// were left out; unchanged when that would not make it shorter.
pub fn ends(table: &Table) -> Table {
    let n = table.rows.len();
    if n <= 2 * ENDS + 1 {
        return table.clone();
    }
    let mut gap = vec![String::new(); table.headers.len()];
    gap[0] = format!("… {} more rows (--all shows them) …", n - 2 * ENDS);
    let mut rows = table.rows[..ENDS].to_vec();
    rows.push(gap);
    rows.extend_from_slice(&table.rows[n - ENDS..]);
    Table { headers: table.headers.clone(), numeric: table.numeric.clone(), rows }
}

/// The first and last [`ENDS`] lines and, between them, one saying how many were left out.
pub fn ends_of_lines(lines: &[String]) -> Vec<String> {
    let n = lines.len();
    if n <= 2 * ENDS + 1 {
        return lines.to_vec();
    }
    let mut out = lines[..ENDS].to_vec();
    out.push(format!("… {} more (--all shows them) …", n - 2 * ENDS));
    out.extend_from_slice(&lines[n - ENDS..]);
    out
}

/// Renders lines as an indented list under a heading, or nothing; a line's leading `warning:`
/// is painted as a warning.
pub fn render_section(title: &str, notes: &[String], colour: bool) -> String {
    section(title, HEADING, notes, colour)
}

/// Like [`render_section`], for a section whose every line is a warning.
pub fn render_warnings(title: &str, notes: &[String], colour: bool) -> String {
    section(title, WARNING.bold(), notes, colour)
}

fn section(title: &str, style: Style, notes: &[String], colour: bool) -> String {
    if notes.is_empty() {
        return String::new();
    }
    let mut out = format!("\n{}\n", paint(title, style, colour));
    for n in notes {
        let n = match n.strip_prefix("warning:") {
            Some(rest) => format!("{}{rest}", paint("warning:", WARNING, colour)),
            None => n.clone(),
        };
        out.push_str(&format!("  - {n}\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn painted_cells_keep_the_columns_aligned() {
        let t = Table {
            headers: vec!["point".into(), "verdict".into()],
            rows: vec![vec!["a".into(), "faster".into()], vec!["bb".into(), "no change".into()]],
            numeric: vec![false, true],
        };
        let plain = render(&t, false);
        let painted = render_painted(&t, true, &|r, c| (r == 0 && c == 1).then_some(BETTER));
        assert!(painted.contains("\x1b[32mfaster\x1b[0m"), "{painted:?}");
        let stripped =
            painted.replace("\x1b[32m", "").replace("\x1b[0m", "").replace("\x1b[1m", "");
        assert_eq!(stripped, plain);
        assert!(!render_painted(&t, false, &|_, _| Some(WORSE)).contains('\x1b'));
    }

    #[test]
    fn a_leading_warning_is_painted_and_nothing_else() {
        let lines = vec!["warning: few runs".to_string(), "a warning: inside".to_string()];
        let s = render_section("model", &lines, true);
        assert!(
            s.contains("\x1b[33mwarning:\x1b[0m few runs") && s.contains("  - a warning: inside\n"),
            "{s:?}"
        );
    }
}
