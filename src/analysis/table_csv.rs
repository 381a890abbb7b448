//! Reading a published or hand-made scaling table from CSV (with the csv crate): a header row,
//! then a row per point or per run (rows of one count are runs of that point), the columns named
//! on the command line; `#` starts a comment line.

use super::AnalysisError;
use super::observations::{Obs, Observations, Series};
use crate::plan::{Ask, Axis};
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

/// Parses the table into observations (one value per row; rows of one count are that point's
/// runs, their %CPU averaged), along the count column with what `ask` says about it
/// (`--workers`, `--weak`).
pub fn parse(
    text: &str,
    name: &str,
    cols: &Columns,
    ask: &Ask,
) -> Result<Observations, AnalysisError> {
    let err = |problem: String| AnalysisError::Table { table: name.into(), problem };
    let mut reader = csv::ReaderBuilder::new()
        .comment(Some(b'#'))
        .trim(csv::Trim::All)
        .flexible(true)
        .from_reader(text.as_bytes());
    let header: Vec<String> =
        reader.headers().map_err(|e| err(e.to_string()))?.iter().map(String::from).collect();
    if header.iter().all(String::is_empty) {
        return Err(err("the table is empty".into()));
    }
    let find = |col: &str| {
        header
            .iter()
            .position(|h| h == col)
            .ok_or_else(|| err(format!("no column named '{col}' (columns: {})", header.join(", "))))
    };
    let (value_col, basis) = match (cols.throughput, cols.time) {
        (Some(t), _) => (find(t)?, Basis::Throughput),
        (None, Some(t)) => (find(t)?, Basis::Time),
        (None, None) => {
            return Err(err(
                "name the column to analyse with --time COLUMN or --throughput COLUMN".into(),
            ));
        }
    };
    let count_col = find(cols.count)?;
    let cpu_col = cols.cpu.map(find).transpose()?;
    // A table exported by scalescope names the throughput's unit in a column of its own.
    let unit_col =
        header.iter().position(|h| h == "throughput_unit").filter(|_| basis == Basis::Throughput);
    let mut unit: Option<String> = None;
    let mut points: Vec<Obs> = Vec::new();
    // Summed %CPU per point, averaged over its rows at the end.
    let mut cpus: Vec<Option<f64>> = Vec::new();
    for row in reader.records() {
        let row = row.map_err(|e| err(e.to_string()))?;
        let line = row.position().map_or(0, |p| p.line());
        let number = |col: usize, what: &str| -> Result<f64, AnalysisError> {
            let cell = row.get(col).unwrap_or("");
            let v: f64 = cell
                .parse()
                .map_err(|_| err(format!("line {line}: {what} '{cell}' is not a number")))?;
            if !v.is_finite() || v <= 0.0 {
                return Err(err(format!(
                    "line {line}: {what} is {cell}; it must be a positive number"
                )));
            }
            Ok(v)
        };
        let count = number(count_col, &header[count_col])?;
        let value = number(value_col, &header[value_col])?;
        if let Some(u) = unit_col.and_then(|c| row.get(c)).filter(|u| !u.is_empty()) {
            unit.get_or_insert_with(|| u.to_string());
        }
        let cpu_pct = cpu_col.map(|c| number(c, &header[c])).transpose()?;
        match points.iter().position(|p| p.count == count) {
            Some(i) => {
                points[i].values.push(value);
                cpus[i] = cpus[i].zip(cpu_pct).map(|(a, b)| a + b);
            }
            None => {
                points.push(Obs {
                    index: points.len(),
                    count,
                    values: vec![value],
                    rounds: Vec::new(),
                    cpu_pct: None,
                });
                cpus.push(cpu_pct);
            }
        }
    }
    for (p, cpu) in points.iter_mut().zip(cpus) {
        p.cpu_pct = cpu.map(|c| c / p.values.len() as f64);
    }
    if points.is_empty() {
        return Err(err("the table has a header but no rows".into()));
    }
    points.sort_by(|a, b| a.count.total_cmp(&b.count));
    let unit = (basis == Basis::Throughput)
        .then(|| unit.unwrap_or_else(|| unit_from_column(&header[value_col])));
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
    for (suffix, unit) in [
        ("mb_s", "MB/s"),
        ("mib_s", "MiB/s"),
        ("gb_s", "GB/s"),
        ("ops_s", "ops/s"),
        ("events_s", "events/s"),
    ] {
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

    const COLS: Columns =
        Columns { count: "threads", time: None, throughput: Some("tp_mb_s"), cpu: Some("cpu") };

    #[test]
    fn reads_a_table() {
        let text = "# from a paper\nthreads,tp_mb_s,cpu\n2,190,199\n\n1,\"95.5\",99\n";
        let o = parse(text, "t.csv", &COLS, &Ask::default()).unwrap();
        let p = &o.series[0].points;
        assert_eq!((p[0].count, p[0].values[0], p[0].cpu_pct), (1.0, 95.5, Some(99.0)));
        assert_eq!(o.unit.as_deref(), Some("MB/s"));
        assert_eq!(
            o.axis,
            Axis { param: "threads".into(), counts: Counts::Workers, scaling: Scaling::Strong }
        );
    }

    #[test]
    fn rows_of_one_count_are_runs_of_its_point() {
        let text = "threads,tp_mb_s,cpu\n1,95,99\n2,180,190\n1,97,97\n2,186,198\n";
        let o = parse(text, "t.csv", &COLS, &Ask::default()).unwrap();
        let p = &o.series[0].points;
        assert_eq!(p.len(), 2);
        assert_eq!((p[0].values.clone(), p[0].cpu_pct), (vec![95.0, 97.0], Some(98.0)));
        assert_eq!((p[1].values.clone(), p[1].cpu_pct), (vec![180.0, 186.0], Some(194.0)));
    }

    #[test]
    fn refuses_bad_cells_and_missing_columns() {
        for (text, phrase) in [
            ("threads,tp_mb_s,cpu\n1,abc,99\n", "'abc' is not a number"),
            ("threads,tp_mb_s,cpu\n1,0,99\n", "must be a positive number"),
            ("threads,tp_mb_s,cpu\n1,-3,99\n", "must be a positive number"),
            ("threads,tp_mb_s,cpu\n1,NaN,99\n", "must be a positive number"),
            ("threads,speed\n1,5\n", "no column named 'tp_mb_s'"),
            ("threads,tp_mb_s,cpu\n", "no rows"),
            ("", "empty"),
        ] {
            let e = parse(text, "t.csv", &COLS, &Ask::default()).unwrap_err().to_string();
            assert!(e.contains(phrase), "{text:?}: {e}");
        }
    }
}
