//! Building the history from what is on disk: results folders (a folder of them is searched for
//! results.json files), and published tables, one sweep per value of a label column (a commit, a
//! kernel, a version). The same folder or table imported again replaces its entries.

use super::HistoryError;
use super::record::{self, FindingRow, PointRow, RunRow, Sweep};
use super::store::History;
use crate::analysis::observations::Observations;
use crate::analysis::table_csv::{self, Columns};
use crate::plan::Ask;
use crate::results::FILE_NAME;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The results files under `path`: its own, or those of the folders below it (any depth),
/// sorted by path.
pub fn results_files(path: &Path) -> Result<Vec<PathBuf>, HistoryError> {
    if path.is_file() {
        return Ok(vec![path.to_path_buf()]);
    }
    if !path.is_dir() {
        return Err(HistoryError::Import(format!("{}: no such results folder", path.display())));
    }
    let mut found = Vec::new();
    let mut todo = vec![path.to_path_buf()];
    while let Some(dir) = todo.pop() {
        if dir.join(FILE_NAME).is_file() {
            found.push(dir.join(FILE_NAME));
            continue;
        }
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for e in entries.flatten() {
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                todo.push(e.path());
            }
        }
    }
    if found.is_empty() {
        return Err(HistoryError::Import(format!(
            "{}: no results.json in it or in the folders below it",
            path.display()
        )));
    }
    found.sort();
    Ok(found)
}

/// The entry of the results in `file`, with `tags` added to its own.
pub fn sweep_of(file: &Path, tags: &BTreeMap<String, String>) -> Result<Sweep, HistoryError> {
    let (dir, doc) = crate::results::load(file)?;
    let source = std::fs::canonicalize(&dir).unwrap_or(dir);
    let mut s = Sweep::of_results(&doc, &source.display().to_string());
    s.tags.extend(tags.iter().map(|(k, v)| (k.clone(), v.clone())));
    Ok(s)
}

/// What `--csv` import needs: the table's columns and the label column.
#[derive(Clone, Debug)]
pub struct TableSpec<'a> {
    /// The columns of the counted parameter, time or throughput, and %CPU.
    pub columns: Columns<'a>,
    /// The column whose values tell the sweeps apart (a commit, a kernel, a version).
    pub label: &'a str,
    /// What the counted parameter counts (`--workers`, `--weak`).
    pub ask: Ask<'a>,
}

/// One sweep per value of the label column of a table, in the order the values first appear.
pub fn table_sweeps(path: &Path, spec: &TableSpec) -> Result<Vec<Sweep>, HistoryError> {
    let err = |m: String| HistoryError::Import(format!("{}: {m}", path.display()));
    let text = std::fs::read_to_string(path).map_err(|e| err(e.to_string()))?;
    let mut reader = csv::ReaderBuilder::new()
        .comment(Some(b'#'))
        .trim(csv::Trim::All)
        .flexible(true)
        .from_reader(text.as_bytes());
    let header = reader.headers().map_err(|e| err(e.to_string()))?.clone();
    let col = header.iter().position(|h| h == spec.label).ok_or_else(|| {
        err(format!(
            "no column named '{}' (columns: {})",
            spec.label,
            header.iter().collect::<Vec<_>>().join(", ")
        ))
    })?;
    let mut groups: Vec<(String, Vec<csv::StringRecord>)> = Vec::new();
    for row in reader.records() {
        let row = row.map_err(|e| err(e.to_string()))?;
        let label = row.get(col).unwrap_or("").to_string();
        match groups.iter_mut().find(|(l, _)| *l == label) {
            Some((_, rows)) => rows.push(row),
            None => groups.push((label, vec![row])),
        }
    }
    if groups.is_empty() {
        return Err(err("the table has a header but no rows".into()));
    }
    let canonical = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let name = path
        .file_name()
        .map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into_owned());
    let mut out = Vec::new();
    for (i, (label, rows)) in groups.iter().enumerate() {
        let mut w = csv::Writer::from_writer(Vec::new());
        let piece = (|| {
            w.write_record(&header)?;
            for r in rows {
                w.write_record(r)?;
            }
            w.into_inner().map_err(|e| csv::Error::from(e.into_error()))
        })()
        .map_err(|e| err(e.to_string()))?;
        let piece = String::from_utf8_lossy(&piece).into_owned();
        let shown = format!("{} ({}={label})", path.display(), spec.label);
        let obs = table_csv::parse(&piece, &shown, &spec.columns, &spec.ask)
            .map_err(|e| err(e.to_string()))?;
        out.push(table_sweep(&obs, &canonical, &name, spec, label, i));
    }
    Ok(out)
}

/// A table's rows for one label as a sweep: one point per row, its single value a run.
fn table_sweep(
    obs: &Observations,
    path: &Path,
    name: &str,
    spec: &TableSpec,
    label: &str,
    order: usize,
) -> Sweep {
    let analysis = crate::analysis::analyze(obs, &Default::default()).ok();
    let command = format!(
        "table {name} ({} by {})",
        spec.columns.time.or(spec.columns.throughput).unwrap_or("?"),
        spec.columns.count
    );
    let axis = obs.axis.param.clone();
    let counts: Vec<String> = obs
        .series
        .iter()
        .flat_map(|s| &s.points)
        .map(|p| crate::report::model::count(p.count))
        .collect();
    let params = serde_json::json!({ axis.clone(): counts }).to_string();
    let times = spec.columns.time.is_some() && spec.columns.throughput.is_none();
    let points: Vec<PointRow> = obs
        .series
        .iter()
        .flat_map(|s| &s.points)
        .map(|p| {
            let scaling = analysis.as_ref().and_then(|a| a.point(p.index));
            let v = p.values[0];
            let shown = crate::report::model::count(p.count);
            PointRow {
                idx: p.index as i64,
                label: format!("{axis}={shown}"),
                params: serde_json::json!({ axis.clone(): p.count }).to_string(),
                series: String::new(),
                count: Some(p.count),
                wall: times.then_some([v, v, 0.0, v, v]),
                speedup: scaling.map(|s| s.speedup),
                efficiency: scaling.and_then(|s| s.efficiency),
                karp_flatt: scaling.and_then(|s| s.karp_flatt),
                runs: vec![RunRow {
                    ok: true,
                    wall_s: times.then_some(v),
                    cpu_pct: p.cpu_pct,
                    throughput: (!times).then_some(v),
                    ..RunRow::default()
                }],
            }
        })
        .collect();
    let mut tags = BTreeMap::new();
    tags.insert(spec.label.to_string(), label.to_string());
    // Tables carry no dates: their rows keep the table's order.
    let created = format!("0000-table-{order:06}");
    let machine = crate::machine::Machine::default();
    Sweep {
        uid: super::hash(&format!(
            "table\u{1f}{}\u{1f}{}\u{1f}{label}",
            path.display(),
            spec.label
        )),
        series: record::series_key("table", &command, &params, &machine),
        kind: "table".into(),
        created,
        recorded: crate::results::time::iso_utc(crate::results::time::unix_now()),
        source: path.display().to_string(),
        status: "complete".into(),
        command,
        params,
        axis: Some(axis),
        basis: Some(if times { "time" } else { "throughput" }.into()),
        tool_version: env!("CARGO_PKG_VERSION").into(),
        machine,
        git: None,
        tags,
        points,
        models: analysis.as_ref().map(record::models).unwrap_or_default(),
        findings: Vec::<FindingRow>::new(),
        id: 0,
    }
}

/// Writes sweeps in one transaction per sweep; returns their row numbers.
pub fn insert_all(h: &mut History, sweeps: &[Sweep]) -> Result<Vec<i64>, HistoryError> {
    sweeps.iter().map(|s| record::insert(h, s)).collect()
}
