//! A comparison as text: the per-point table (two sets: the compared figure of both, the ratio,
//! p, %CPU and the verdict; more: one column per set against the reference, headed by the figure
//! it compares), the lines saying what is compared and how it is judged, and the models.

use super::Comparison;
use super::points::{Cell, Change, Figure, PointRow, Verdict};
use super::why::pct_change;
use crate::report::model::{estimate, sig};
use crate::report::{Column, NONE, Table};
use crate::report::{decimals, num, throughput_scale};
use crate::results::analysis::JudgedBy;

/// The per-point table.
pub fn table(c: &Comparison) -> Table {
    let r = c.reference;
    let mut cols: Vec<Column<PointRow>> =
        vec![Column::text("point", |row: &PointRow| row.label.clone())];
    if c.labels.len() == 2 {
        let o = 1 - r;
        let f = c.judged_by[o].unwrap_or(Figure::Time);
        let (a, b) = (&c.labels[r], &c.labels[o]);
        let (head, value) = figure_column(c, f);
        let other = value.clone();
        cols.push(Column::number(format!("{a} {head}"), move |row: &PointRow| {
            value(&row.cells[r])
        }));
        let value = other;
        cols.push(Column::number(format!("{b} {head}"), move |row: &PointRow| {
            value(&row.cells[o])
        }));
        let change = move |row: &PointRow| row.cells[o].as_ref().and_then(|x| x.change.clone());
        let intervals = c.points.iter().any(|row| change(row).is_some_and(|ch| ch.ci95.is_some()));
        let ci_head = if intervals { " [95% CI]" } else { "" };
        cols.push(Column::number(
            format!("{b}/{a} {}{ci_head}", f.name()),
            move |row: &PointRow| {
                change(row).map_or(NONE.into(), |ch| {
                    let ci = ch
                        .ci95
                        .map_or(String::new(), |[lo, hi]| format!(" [{}, {}]", sig(lo), sig(hi)));
                    format!("{}{ci}", sig(ch.ratio))
                })
            },
        ));
        cols.push(Column::number("p", move |row: &PointRow| {
            change(row).and_then(|ch| ch.p).map_or(NONE.into(), p_text)
        }));
        cols.push(Column::number("%CPU", move |row: &PointRow| {
            let cpu = |i: usize| {
                row.cells[i]
                    .as_ref()
                    .and_then(|x| x.cpu_pct)
                    .map_or(NONE.into(), |v| format!("{v:.0}"))
            };
            if change(row).is_some() { format!("{} → {}", cpu(r), cpu(o)) } else { NONE.into() }
        }));
        let labels = c.labels.clone();
        cols.push(Column::text("verdict", move |row: &PointRow| match change(row) {
            Some(ch) => verdict(&ch),
            None if row.cells[r].is_none() => format!("only in {}", labels[o]),
            None if row.cells[o].is_none() => format!("only in {}", labels[r]),
            None => NONE.into(),
        }));
    } else {
        let shown = common(c).unwrap_or(Figure::Time);
        let (head, value) = figure_column(c, shown);
        cols.push(Column::number(format!("{} {head}", c.labels[r]), move |row: &PointRow| {
            value(&row.cells[r])
        }));
        for (i, label) in c.labels.iter().enumerate().filter(|&(i, _)| i != r) {
            let f = c.judged_by[i].map_or("", Figure::name);
            let (_, value) = figure_column(c, c.judged_by[i].unwrap_or(Figure::Time));
            let reference = c.labels[r].clone();
            cols.push(Column::number(
                format!("{label}/{} {f}", c.labels[r]),
                move |row: &PointRow| match &row.cells[i] {
                    Some(Cell { change: Some(ch), .. }) => {
                        format!("{}× {}", sig(ch.ratio), verdict(ch))
                    }
                    Some(_) => format!("{}, not in {reference}", value(&row.cells[i])),
                    None => NONE.into(),
                },
            ));
        }
    }
    Table::of(&cols, &c.points)
}

/// The figure every set is judged by, when it is one.
fn common(c: &Comparison) -> Option<Figure> {
    let mut figures =
        c.judged_by.iter().enumerate().filter(|(i, _)| *i != c.reference).map(|(_, f)| *f);
    let first = figures.next()??;
    figures.all(|f| f == Some(first)).then_some(first)
}

/// The header of a column of `figure` (`time (s)`, `throughput (MB/s)`) and its cell: mean ± σ.
fn figure_column(
    c: &Comparison,
    figure: Figure,
) -> (String, impl Fn(&Option<Cell>) -> String + Clone + 'static) {
    let (div, head) = match figure {
        Figure::Time => (1.0, "time (s)".to_string()),
        Figure::Throughput => {
            let means =
                c.points.iter().flat_map(|p| p.cells.iter().flatten()).filter_map(|x| x.throughput);
            let (div, unit) = throughput_scale(
                c.unit.as_deref().unwrap_or_default(),
                means.map(|m| m.mean).fold(0.0, f64::max),
            );
            (div, format!("throughput ({unit})"))
        }
    };
    let cell =
        move |x: &Option<Cell>| match x.as_ref().and_then(|x| x.of(figure).map(|m| (x.runs, m))) {
            Some((runs, m)) if runs > 1 => {
                let d = decimals(m.mean / div);
                format!("{:.*} ± {:.*}", d, m.mean / div, d, m.sd / div)
            }
            Some((_, m)) => num(m.mean / div),
            None => NONE.into(),
        };
    (head, cell)
}

/// The verdict shown in a cell of [`table`], if the cell shows one.
pub fn verdict_at(c: &Comparison, row: usize, column: usize) -> Option<Verdict> {
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

/// `faster (+25% throughput)`, `no change`.
fn verdict(ch: &Change) -> String {
    match ch.verdict {
        Verdict::Faster | Verdict::Slower => {
            format!("{} ({})", ch.verdict.text(), pct_change(ch.ratio, ch.judged_by.name()))
        }
        v => v.text().into(),
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
                    format!("{l} {}", v.as_ref().map_or(NONE.into(), |e| estimate(e, sig)))
                })
                .collect();
            format!("{}: {}", m.name, cells.join(" · "))
        })
        .collect()
}

/// Header lines: what is compared with what, which figure each ratio is of, how verdicts are
/// reached, machine differences.
pub fn header(c: &Comparison) -> Vec<String> {
    let r = c.reference;
    let mut lines: Vec<String> = c
        .labels
        .iter()
        .zip(&c.paths)
        .enumerate()
        .map(|(i, (l, p))| format!("{l} = {p}{}", if i == r { " (reference)" } else { "" }))
        .collect();
    let others = |f: Option<Figure>| -> Vec<&str> {
        (0..c.labels.len())
            .filter(|&i| i != r && c.judged_by[i] == f)
            .map(|i| c.labels[i].as_str())
            .collect()
    };
    let mut figures = Vec::new();
    for (f, what) in [
        (Figure::Throughput, "throughput (above 1: faster)"),
        (Figure::Time, "wall time (below 1: faster)"),
    ] {
        let sets = others(Some(f));
        if !sets.is_empty() {
            figures.push(format!("{what} for {}", sets.join(", ")));
        }
    }
    if !figures.is_empty() {
        lines.push(format!(
            "ratios are each set's mean over {}'s: {}",
            c.labels[r],
            figures.join("; ")
        ));
    }
    let apart = others(None);
    if !apart.is_empty() {
        lines.push(format!(
            "no figure measured by both {} and {}: not compared",
            c.labels[r],
            apart.join(", ")
        ));
    }
    let decided = |by: JudgedBy| {
        c.points
            .iter()
            .flat_map(|p| p.cells.iter().flatten())
            .any(|x| x.change.as_ref().is_some_and(|ch| ch.decided_by == by))
    };
    if decided(JudgedBy::Runs) {
        lines.push(format!(
            "verdicts need Welch's p < 0.05 and a change beyond ±{:.0}% noise of both the mean and the median run; ratios are means over runs with bootstrap intervals",
            100.0 * c.noise
        ));
    }
    if decided(JudgedBy::Threshold) {
        lines.push(format!(
            "single values (one per point, as in a published table): no test and no interval; a change beyond ±{:.0}% is faster or slower",
            100.0 * c.noise.max(crate::analysis::SINGLE_VALUE_THRESHOLD)
        ));
    }
    if let Some(paired) = &c.paired_by {
        lines.push(paired.clone());
    }
    if !c.commands.is_empty() {
        lines.push(format!("the commands differ: {}", c.commands.join("; ")));
    }
    if !c.machines.is_empty() {
        lines.push("the machines differ:".into());
        lines.extend(c.machines.iter().map(|m| format!("  {m}")));
    }
    lines.extend(c.cautions.iter().cloned());
    lines
}
