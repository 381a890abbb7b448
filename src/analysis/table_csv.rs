//! Reading a published or hand-made scaling table from CSV: a header row, then one row per point,
//! the columns named on the command line.

use super::AnalysisError;
use super::observations::{Obs, Observations, Series};
use crate::plan::axis::{Ask, Axis};
use crate::results::analysis::Basis;

/// Which columns hold what.
#[derive(Clone, Debug)]
pub struct Columns<'a> {
    /// The counted parameter (threads, files…).
    pub count: &'a str,
    /// Wall time in seconds, when the table has it.
    pub time: Option<&'a str>,
    /// Throughput, when the table has it.
    pub throughput: Option<&'a str>,
    /// %CPU, optional.
    pub cpu: Option<&'a str>,
}

/// Splits one CSV line into fields (double quotes, doubled quotes inside).
fn fields(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                cur.push('"');
                chars.next();
            }
            ('"', _) => quoted = !quoted,
            (',', false) => out.push(std::mem::take(&mut cur)),
            _ => cur.push(c),
        }
    }
    out.push(cur);
    out.into_iter().map(|f| f.trim().to_string()).collect()
}

/// Parses the table into observations (one value per row; rows are points), along the count
/// column with what `ask` says about it (`--workers`, `--weak`).
pub fn parse(text: &str, name: &str, cols: &Columns, ask: &Ask) -> Result<Observations, AnalysisError> {
    let err = |m: String| AnalysisError(format!("{name}: {m}"));
    let mut lines = text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty() && !l.trim_start().starts_with('#'));
    let (_, header) = lines.next().ok_or_else(|| err("the table is empty".into()))?;
    let header = fields(header);
    let find = |col: &str| {
        header
            .iter()
            .position(|h| h == col)
            .ok_or_else(|| err(format!("no column named '{col}' (columns: {})", header.join(", "))))
    };
    let (value_col, basis) = match (cols.throughput, cols.time) {
        (Some(t), _) => (find(t)?, Basis::Throughput),
        (None, Some(t)) => (find(t)?, Basis::Time),
        (None, None) => return Err(err("name the column to analyse with --time COLUMN or --throughput COLUMN".into())),
    };
    let count_col = find(cols.count)?;
    let cpu_col = cols.cpu.map(find).transpose()?;
    let mut points: Vec<Obs> = Vec::new();
    for (lineno, line) in lines {
        let row = fields(line);
        let number = |col: usize, what: &str| -> Result<f64, AnalysisError> {
            let cell = row.get(col).map(String::as_str).unwrap_or("");
            let v: f64 =
                cell.parse().map_err(|_| err(format!("line {}: {what} '{cell}' is not a number", lineno + 1)))?;
            if !v.is_finite() || v <= 0.0 {
                return Err(err(format!("line {}: {what} is {cell}; it must be a positive number", lineno + 1)));
            }
            Ok(v)
        };
        let count = number(count_col, &header[count_col])?;
        if let Some(prev) = points.iter().find(|p| p.count == count) {
            return Err(err(format!(
                "line {}: {} = {count} appears twice (first on row {}); give one row per count",
                lineno + 1,
                header[count_col],
                prev.index + 1
            )));
        }
        let value = number(value_col, &header[value_col])?;
        let cpu_pct = cpu_col.map(|c| number(c, &header[c])).transpose()?;
        points.push(Obs { index: points.len(), count, values: vec![value], cpu_pct });
    }
    if points.is_empty() {
        return Err(err("the table has a header but no rows".into()));
    }
    points.sort_by(|a, b| a.count.total_cmp(&b.count));
    let unit = (basis == Basis::Throughput).then(|| unit_from_column(&header[value_col]));
    Ok(Observations {
        axis: Axis::along(cols.count, ask),
        basis,
        unit,
        series: vec![Series { label: String::new(), points }],
    })
}

/// `throughput_mb_s` → `MB/s`; otherwise the column name.
fn unit_from_column(col: &str) -> String {
    let lower = col.to_ascii_lowercase();
    for (suffix, unit) in
        [("mb_s", "MB/s"), ("mib_s", "MiB/s"), ("gb_s", "GB/s"), ("ops_s", "ops/s"), ("events_s", "events/s")]
    {
        if lower.ends_with(suffix) {
            return unit.into();
        }
    }
    col.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{Counts, Scaling};

    const COLS: Columns = Columns { count: "threads", time: None, throughput: Some("tp_mb_s"), cpu: Some("cpu") };

    #[test]
    fn reads_a_table() {
        let o = parse("threads,tp_mb_s,cpu\n2,190,199\n1,\"95.5\",99\n", "t.csv", &COLS, &Ask::default()).unwrap();
        let p = &o.series[0].points;
        assert_eq!((p[0].count, p[0].values[0], p[0].cpu_pct), (1.0, 95.5, Some(99.0)));
        assert_eq!(o.unit.as_deref(), Some("MB/s"));
        assert_eq!(o.axis, Axis { param: "threads".into(), counts: Counts::Workers, scaling: Scaling::Strong });
    }

    #[test]
    fn refuses_bad_cells_duplicates_and_missing_columns() {
        for (text, phrase) in [
            ("threads,tp_mb_s,cpu\n1,abc,99\n", "'abc' is not a number"),
            ("threads,tp_mb_s,cpu\n1,0,99\n", "must be a positive number"),
            ("threads,tp_mb_s,cpu\n1,-3,99\n", "must be a positive number"),
            ("threads,tp_mb_s,cpu\n1,NaN,99\n", "must be a positive number"),
            ("threads,tp_mb_s,cpu\n1,5,99\n1,6,99\n", "appears twice"),
            ("threads,speed\n1,5\n", "no column named 'tp_mb_s'"),
            ("threads,tp_mb_s,cpu\n", "no rows"),
            ("", "empty"),
        ] {
            let e = parse(text, "t.csv", &COLS, &Ask::default()).unwrap_err().to_string();
            assert!(e.contains(phrase), "{text:?}: {e}");
        }
    }
}
