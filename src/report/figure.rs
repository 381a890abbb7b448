//! What a chart is once drawn, and the result sets it is drawn from: shared by the charts of a
//! report and its memory figures.

use crate::results::Results;

/// One chart: an identifier (for files and anchors), a caption and the SVG.
pub struct Figure {
    /// `throughput`, `speedup`… (file name of `--format svg`).
    pub id: String,
    /// What it shows, in a sentence.
    pub caption: String,
    /// The chart.
    pub svg: String,
}

/// A result set to draw: its label (empty for a single set) and document, with its analysis.
pub struct Drawn<'a> {
    /// Legend prefix when several sets are overlaid.
    pub label: String,
    /// The document.
    pub doc: &'a Results,
}

/// A label made safe for a file name.
pub fn file_safe(s: &str) -> String {
    let safe: String = s
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '.' { c } else { '_' })
        .collect();
    // `(single point)` reads `single_point`, not `_single_point_`.
    safe.trim_matches('_').to_string()
}
