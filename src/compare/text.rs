//! A comparison as text: the per-point table (two sets: the figures of both and the ratio; more:
//! one column per set against the reference), the models side by side, and the why.

use super::Comparison;
use super::points::Cell;
use super::why::pct_change;
use crate::report::format::num;
use crate::report::model::sig;
use crate::report::table::Table;

/// The per-point table.
pub fn table(c: &Comparison) -> Table {
    let two = c.labels.len() == 2;
    let r = c.reference;
    let mut headers = vec!["point".to_string()];
    if two {
        let o = 1 - r;
        let (a, b) = (&c.labels[r], &c.labels[o]);
        headers.extend([
            format!("{a} time (s)"),
            format!("{b} time (s)"),
            format!("{b}/{a} [95% CI]"),
            "p".into(),
            "%CPU".into(),
            "verdict".into(),
        ]);
    } else {
        headers.push(format!("{} time (s)", c.labels[r]));
        headers.extend((0..c.labels.len()).filter(|&i| i != r).map(|i| format!("{} vs {}", c.labels[i], c.labels[r])));
    }
    let numeric: Vec<bool> = headers.iter().enumerate().map(|(i, _)| i > 0 && !(two && i == 6)).collect();
    let missing = || "—".to_string();
    let time =
        |cell: &Option<Cell>| cell.as_ref().map_or_else(missing, |c| format!("{} ± {}", num(c.time_s), num(c.time_sd)));
    let rows = c
        .points
        .iter()
        .map(|row| {
            let mut cells = vec![row.label.clone()];
            if two {
                let (a, b) = (&row.cells[r], &row.cells[1 - r]);
                cells.push(time(a));
                cells.push(time(b));
                match b.as_ref().and_then(|b| b.change.as_ref()) {
                    Some(ch) => {
                        let ci = ch.ci95.map_or(String::new(), |[lo, hi]| format!(" [{}, {}]", sig(lo), sig(hi)));
                        cells.push(format!("{} {}{ci}", sig(ch.ratio), ch.judged_by));
                        cells.push(ch.p.map_or_else(missing, p_text));
                        let (ca, cb) = (a.as_ref().map_or(0.0, |a| a.cpu_pct), b.as_ref().map_or(0.0, |b| b.cpu_pct));
                        cells.push(format!("{ca:.0} → {cb:.0}"));
                        cells.push(verdict(ch.verdict, ch.ratio, ch.judged_by));
                    }
                    None => {
                        let only = if a.is_some() { &c.labels[r] } else { &c.labels[1 - r] };
                        cells.extend([missing(), missing(), missing(), format!("only in {only}")]);
                    }
                }
            } else {
                cells.push(time(&row.cells[r]));
                for (_, cell) in row.cells.iter().enumerate().filter(|(i, _)| *i != r) {
                    cells.push(match cell {
                        Some(Cell { change: Some(ch), .. }) => {
                            format!("{}× {}", sig(ch.ratio), verdict(ch.verdict, ch.ratio, ch.judged_by))
                        }
                        Some(cell) => format!("{} s, not in {}", num(cell.time_s), c.labels[r]),
                        None => missing(),
                    });
                }
            }
            cells
        })
        .collect();
    Table { headers, rows, numeric }
}

/// The verdict shown in a cell of [`table`], if the cell shows one.
pub fn verdict_at(c: &Comparison, row: usize, column: usize) -> Option<super::points::Verdict> {
    let cells = &c.points.get(row)?.cells;
    let set = if c.labels.len() == 2 {
        (column == 6).then_some(1 - c.reference)?
    } else {
        (0..c.labels.len()).filter(|&i| i != c.reference).nth(column.checked_sub(2)?)?
    };
    Some(cells.get(set)?.as_ref()?.change.as_ref()?.verdict)
}

fn p_text(p: f64) -> String {
    if p < 0.001 { "< 0.001".into() } else { format!("{p:.3}") }
}

fn verdict(v: super::points::Verdict, ratio: f64, by: &str) -> String {
    use super::points::Verdict::*;
    match v {
        Faster | Slower => format!("{} ({})", v.text(), pct_change(ratio, by)),
        _ => v.text().into(),
    }
}

/// Lines of the models block: one per parameter, the sets side by side.
pub fn models(c: &Comparison) -> Vec<String> {
    c.models
        .iter()
        .map(|m| {
            let cells: Vec<String> = m
                .values
                .iter()
                .zip(&c.labels)
                .map(|(v, l)| {
                    format!("{l} {}", v.as_ref().map_or("—".into(), |e| crate::report::model::estimate(e, sig)))
                })
                .collect();
            format!("{}: {}", m.name, cells.join(" · "))
        })
        .collect()
}

/// Header lines: what is compared with what, the noise threshold, machine differences.
pub fn header(c: &Comparison) -> Vec<String> {
    let mut lines: Vec<String> = c
        .labels
        .iter()
        .zip(&c.paths)
        .enumerate()
        .map(|(i, (l, p))| format!("{l} = {p}{}", if i == c.reference { " (reference)" } else { "" }))
        .collect();
    lines.push(format!(
        "verdicts need Welch's p < 0.05 and a change beyond ±{:.0}% noise; ratios are means over runs with bootstrap intervals",
        100.0 * c.noise
    ));
    if !c.machines.is_empty() {
        lines.push("the machines differ:".into());
        lines.extend(c.machines.iter().map(|m| format!("  {m}")));
    }
    lines
}
