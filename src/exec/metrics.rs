//! Reading figures from a program's output: `--metric NAME=REGEX` extractors and the built-in
//! line `scalescope-metric NAME VALUE [UNIT]` ([`crate::metric_line`]) that scalescope's probes
//! (and any program) print.

use crate::metric_line;
use crate::plan::{MetricSpec, parse_quantity};
use regex::bytes::Regex;

/// A value read from the output: name, value (unit prefix applied) and unit text.
#[derive(Clone, Debug, PartialEq)]
pub struct Found {
    /// Metric name.
    pub name: String,
    /// The number, with k/M/G/Ki/Mi/Gi… prefixes applied.
    pub value: f64,
    /// What followed the number and its prefix (e.g. `B/s`), possibly empty.
    pub unit: String,
}

/// A metric value as stored in results.json (a number; null if not finite).
pub fn json_number(v: f64) -> serde_json::Value {
    serde_json::Number::from_f64(v).map_or(serde_json::Value::Null, serde_json::Value::Number)
}

/// The metrics of both output streams as a JSON map, stdout's value first when both have one.
pub fn to_map<'a>(
    stdout: &'a [Found],
    stderr: &'a [Found],
) -> serde_json::Map<String, serde_json::Value> {
    let mut metrics = serde_json::Map::new();
    for f in stdout.iter().chain(stderr) {
        metrics.entry(f.name.clone()).or_insert_with(|| json_number(f.value));
    }
    metrics
}

/// Compiled extractors, shared by the output readers of every run.
#[derive(Debug)]
pub struct Scanner {
    specs: Vec<(String, Regex)>,
}

impl Scanner {
    /// Compiles the extractors; the plan has already checked that they compile.
    pub fn new(specs: &[MetricSpec]) -> Result<Scanner, regex::Error> {
        let specs = specs
            .iter()
            .map(|m| Ok((m.name.clone(), Regex::new(&m.regex)?)))
            .collect::<Result<_, _>>()?;
        Ok(Scanner { specs })
    }

    /// Names of the `--metric` extractors, which must match in every run.
    pub fn expected(&self) -> impl Iterator<Item = &str> {
        self.specs.iter().map(|(n, _)| n.as_str())
    }

    /// Appends what one output line reports to `found`; later matches replace earlier ones.
    /// Works on bytes: output need not be UTF-8, and most lines cost no conversion at all.
    pub fn scan_line(&self, line: &[u8], found: &mut Vec<Found>) {
        if let Some((name, value, unit)) = metric_line::parse(line) {
            put(found, Found { name, value, unit });
        }
        for (name, re) in &self.specs {
            if let Some(group) = re.captures(line).and_then(|c| c.get(1))
                && let Some((value, unit)) = read(group.as_bytes(), &line[group.end()..])
            {
                put(found, Found { name: name.clone(), value, unit });
            }
        }
    }
}

/// The number a capture group holds, with its unit: the group's own (`12.5 GB/s`), else a rate
/// printed right after it (`(24880.12 MiB/sec)` captured as `24880.12`), whose prefix applies as
/// if it had been captured. Only a rate (a `/` in the word) is taken from outside the group: a
/// word such as `Pages` or `threads` after a count is no unit of it.
fn read(group: &[u8], after: &[u8]) -> Option<(f64, String)> {
    let text = String::from_utf8_lossy(group);
    let (value, unit) = parse_quantity(&text)?;
    if !unit.is_empty() {
        return Some((value, rate_unit(unit)));
    }
    let after = String::from_utf8_lossy(after);
    let word = after.strip_prefix(' ').unwrap_or(&after);
    let word = word.split(|c: char| c.is_whitespace() || ")],;".contains(c)).next().unwrap_or("");
    if !word.starts_with(|c: char| c.is_alphabetic()) || !word.contains('/') {
        return Some((value, String::new()));
    }
    let joined = format!("{text} {word}");
    let (value, unit) = parse_quantity(&joined)?;
    Some((value, rate_unit(unit)))
}

/// A rate's unit with its time written as scalescope writes it: `MiB/sec` reads `MiB/s`.
fn rate_unit(unit: &str) -> String {
    for long in ["/second", "/sec"] {
        if let Some(head) = unit.strip_suffix(long) {
            return format!("{head}/s");
        }
    }
    unit.to_string()
}

fn put(found: &mut Vec<Found>, f: Found) {
    match found.iter_mut().find(|x| x.name == f.name) {
        Some(slot) => *slot = f,
        None => found.push(f),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_builtin_lines_and_regexes_with_units() {
        let spec =
            MetricSpec { name: "tp".into(), regex: r"Throughput \(MB/s\): ([0-9.]+)".into() };
        let s = Scanner::new(&[spec]).unwrap();
        let mut found = Vec::new();
        s.scan_line(b"scalescope-metric throughput 1.5e6 ops/s", &mut found);
        s.scan_line(b"Throughput (MB/s): 12.5", &mut found);
        s.scan_line(b"\xff\xfe binary \x00 Throughput (MB/s): 13.5", &mut found);
        s.scan_line(b"scalescope-metric broken x", &mut found);
        assert_eq!(found.len(), 2);
        assert_eq!(
            found[0],
            Found { name: "throughput".into(), value: 1.5e6, unit: "ops/s".into() }
        );
        assert_eq!(found[1].value, 13.5, "the last match wins");
    }

    #[test]
    fn a_rate_printed_after_the_captured_number_is_its_unit_and_other_words_are_not() {
        let spec = |regex: &str| MetricSpec { name: "throughput".into(), regex: regex.into() };
        let s = Scanner::new(&[
            spec(r"\(([0-9.]+) MiB/sec\)"),
            MetricSpec { name: "pages".into(), regex: r"read ([0-9]+)".into() },
            MetricSpec { name: "ops".into(), regex: r"ops=([0-9.]+)".into() },
        ])
        .unwrap();
        let mut found = Vec::new();
        s.scan_line(b"24576.00 MiB transferred (24880.12 MiB/sec)", &mut found);
        s.scan_line(b"read 12 Pages", &mut found);
        s.scan_line(b"ops=5.5, done", &mut found);
        assert_eq!(found[0].unit, "B/s");
        assert!((found[0].value / (24880.12 * 1048576.0) - 1.0).abs() < 1e-12, "{found:?}");
        assert_eq!((found[1].value, found[1].unit.as_str()), (12.0, ""));
        assert_eq!((found[2].value, found[2].unit.as_str()), (5.5, ""));
    }
}
