//! Tables built from columns: a column gives its header and the cell of every row, so a header and
//! its cells cannot drift apart. Every table (terminal, Markdown, HTML, CSV) is made this way.

/// A table of text cells with per-column alignment, ready to render.
#[derive(Clone, Debug, PartialEq)]
pub struct Table {
    /// Column headers.
    pub headers: Vec<String>,
    /// Whether each column is numeric (right-aligned).
    pub numeric: Vec<bool>,
    /// Rows of cells.
    pub rows: Vec<Vec<String>>,
}

/// What a cell shows when there is no value.
pub const NONE: &str = "—";

/// One column of a table of `R` rows: its header, its alignment and how to make its cell (`C`:
/// text for the displayed tables, a typed value for CSV).
pub struct Column<'a, R, C = String> {
    /// The header.
    pub header: String,
    /// Right-aligned (numbers) or left-aligned (text).
    pub numeric: bool,
    cell: Box<dyn Fn(&R) -> C + 'a>,
}

impl<'a, R, C> Column<'a, R, C> {
    /// A right-aligned column.
    pub fn number(header: impl Into<String>, cell: impl Fn(&R) -> C + 'a) -> Self {
        Column { header: header.into(), numeric: true, cell: Box::new(cell) }
    }

    /// A left-aligned column.
    pub fn text(header: impl Into<String>, cell: impl Fn(&R) -> C + 'a) -> Self {
        Column { header: header.into(), numeric: false, cell: Box::new(cell) }
    }

    /// The cell of `row` in this column.
    pub fn cell(&self, row: &R) -> C {
        (self.cell)(row)
    }
}

impl Table {
    /// The table of `rows`, one cell per column.
    pub fn of<R>(columns: &[Column<R>], rows: &[R]) -> Table {
        Table {
            headers: columns.iter().map(|c| c.header.clone()).collect(),
            numeric: columns.iter().map(|c| c.numeric).collect(),
            rows: rows.iter().map(|r| columns.iter().map(|c| c.cell(r)).collect()).collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_row_has_one_cell_per_header() {
        type Row = (u32, &'static str);
        let cols: Vec<Column<Row>> = vec![
            Column::number("n", |r: &Row| r.0.to_string()),
            Column::text("name", |r: &Row| r.1.to_string()),
        ];
        let t = Table::of(&cols, &[(1, "a"), (22, "b")]);
        assert_eq!(t.headers, ["n", "name"]);
        assert_eq!(t.numeric, [true, false]);
        assert_eq!(t.rows, [["1", "a"], ["22", "b"]]);
    }
}
