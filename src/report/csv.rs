//! One CSV row per point with plain numbers in full precision (no units in cells), for
//! spreadsheets, pandas and `scalescope analyze --csv`. The header and every record come from the
//! same columns and are written by the csv crate, which also refuses a record of another length.

use super::summary::{PointRow, metric_names, rows};
use super::table::Column;
use crate::results::{Analysis, Results, value_text};
use crate::stats::Summary;
use serde::Serialize;

/// A CSV cell: text, a whole number, or a number written so that it reads back exactly.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Value {
    /// Text as written (parameter values, units).
    Text(String),
    /// A count.
    Count(u64),
    /// A measurement.
    Number(f64),
}

/// One record: a value, or an empty cell, per column.
#[derive(Serialize)]
struct Record(Vec<Option<Value>>);

type CsvColumn<'a> = Column<'a, PointRow<'a>, Option<Value>>;

/// One figure of a summary (its mean, its median…).
type Part = fn(&Summary) -> Option<f64>;

/// Renders the points as CSV.
pub fn render(doc: &Results, analysis: Option<&Analysis>) -> String {
    let rows = rows(doc, analysis);
    let columns = columns(doc);
    let mut w = csv::WriterBuilder::new().has_headers(false).from_writer(Vec::new());
    let written = w.write_record(columns.iter().map(|c| c.header.as_str())).and_then(|()| {
        rows.iter()
            .try_for_each(|r| w.serialize(Record(columns.iter().map(|c| c.cell(r)).collect())))
    });
    written.expect("CSV into memory cannot fail");
    String::from_utf8(w.into_inner().expect("a writer into memory flushes"))
        .expect("every field is UTF-8")
}

fn number<'a>(name: impl Into<String>, f: impl Fn(&PointRow) -> Option<f64> + 'a) -> CsvColumn<'a> {
    Column::number(name, move |r: &PointRow| f(r).map(Value::Number))
}

fn count<'a>(name: &str, f: impl Fn(&PointRow) -> usize + 'a) -> CsvColumn<'a> {
    Column::number(name, move |r: &PointRow| Some(Value::Count(f(r) as u64)))
}

fn columns(doc: &Results) -> Vec<CsvColumn<'_>> {
    let mut cols: Vec<CsvColumn> = doc
        .plan
        .params
        .iter()
        .map(|p| {
            let name = p.name.as_str();
            Column::text(name, move |r: &PointRow| {
                r.point.params.get(name).map(|v| Value::Text(value_text(v)))
            })
        })
        .collect();
    cols.push(count("runs", |r| r.point.runs.len()));
    cols.push(count("failed_runs", |r| r.point.runs.iter().filter(|x| !x.succeeded()).count()));
    let parts: [(&str, Part); 7] = [
        ("wall_mean_s", |s| Some(s.mean)),
        ("wall_stddev_s", |s| Some(s.stddev)),
        ("wall_median_s", |s| Some(s.median)),
        ("wall_min_s", |s| Some(s.min)),
        ("wall_max_s", |s| Some(s.max)),
        ("wall_ci95_low_s", |s| s.ci95.map(|c| c[0])),
        ("wall_ci95_high_s", |s| s.ci95.map(|c| c[1])),
    ];
    cols.extend(
        parts.map(|(name, part)| number(name, move |r| r.stats.wall_s.as_ref().and_then(part))),
    );
    cols.push(number("speedup", |r| r.scaling.map(|x| x.speedup)));
    cols.push(number("speedup_ci95_low", |r| r.scaling.and_then(|x| x.speedup_ci95).map(|c| c[0])));
    cols.push(number("speedup_ci95_high", |r| {
        r.scaling.and_then(|x| x.speedup_ci95).map(|c| c[1])
    }));
    cols.push(number("efficiency", |r| r.scaling.and_then(|x| x.efficiency)));
    cols.push(number("karp_flatt", |r| r.scaling.and_then(|x| x.karp_flatt)));
    cols.push(number("cpu_pct_mean", |r| r.stats.cpu_pct.as_ref().map(|s| s.mean)));
    cols.push(number("user_mean_s", |r| r.stats.user_s.as_ref().map(|s| s.mean)));
    cols.push(number("sys_mean_s", |r| r.stats.sys_s.as_ref().map(|s| s.mean)));
    cols.push(number("max_rss_bytes", |r| r.stats.max_rss_bytes.as_ref().map(|s| s.max)));
    if doc
        .points
        .iter()
        .flat_map(|p| &p.runs)
        .any(|r| r.threads.as_ref().is_some_and(|t| t.memory.is_some()))
    {
        cols.push(number("peak_pss_mean_bytes", |r| {
            r.stats.peak_pss_bytes.as_ref().map(|s| s.mean)
        }));
        cols.push(number("mean_pss_mean_bytes", |r| {
            r.stats.mean_pss_bytes.as_ref().map(|s| s.mean)
        }));
        cols.push(number("peak_rss_sum_mean_bytes", |r| {
            r.stats.peak_rss_sum_bytes.as_ref().map(|s| s.mean)
        }));
    }
    cols.push(number("throughput_mean", |r| r.stats.throughput.as_ref().map(|s| s.mean)));
    cols.push(number("throughput_stddev", |r| r.stats.throughput.as_ref().map(|s| s.stddev)));
    let unit = doc.throughput_unit.clone();
    cols.push(Column::text("throughput_unit", move |r: &PointRow| {
        r.stats.throughput.as_ref().and(unit.clone()).map(Value::Text)
    }));
    for name in metric_names(doc) {
        let m = name.clone();
        cols.push(number(format!("metric_{name}_mean"), move |r| {
            r.stats.metrics.get(&m).map(|s| s.mean)
        }));
        cols.push(number(format!("metric_{name}_stddev"), move |r| {
            r.stats.metrics.get(&name).map(|s| s.stddev)
        }));
    }
    cols
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_quoted_only_when_needed_and_numbers_read_back_exactly() {
        let mut w = csv::WriterBuilder::new().has_headers(false).from_writer(Vec::new());
        let x = 0.1 + 0.2;
        let record = Record(vec![
            Some(Value::Text("a,\"b\"".into())),
            None,
            Some(Value::Count(3)),
            Some(Value::Number(x)),
        ]);
        w.serialize(record).unwrap();
        let text = String::from_utf8(w.into_inner().unwrap()).unwrap();
        assert_eq!(text, "\"a,\"\"b\"\"\",,3,0.30000000000000004\n");
        assert_eq!(text.trim_end().rsplit(',').next().unwrap().parse::<f64>().unwrap(), x);
    }
}
