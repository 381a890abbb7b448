//! `scalescope history` (list, import, trend) and the recording of a finished sweep, which never
//! changes how the sweep ends: a history that cannot be written is one sentence on stderr.

use super::fraction::fraction;
use super::history_args::{
    FilterArgs, HistoryArgs, HistoryCommand, ImportArgs, RecordArgs, TrendArgs,
};
use super::{Exit, Usage, view};
use crate::analysis::table_csv::Columns;
use crate::error::Error;
use crate::history::check::{self, Options};
use crate::history::figures::{self, Figure};
use crate::history::query::{self, Filter};
use crate::history::record::{self, Sweep};
use crate::history::{self as hist, History, HistoryError, import, trend};
use crate::plan::Ask;
use crate::report::terminal;
use crate::report::{NONE, Table};
use crate::results::Results;
use crate::results::provenance::{self, Provenance};
use std::path::{Path, PathBuf};

/// The provenance of a sweep about to start: the git state of the working directory and the
/// `--tag`s (a tag without `=` is the user's mistake).
pub fn provenance(args: &RecordArgs) -> Result<Provenance, Error> {
    let tags = provenance::parse_tags(&args.tag).map_err(Usage)?;
    let git = std::env::current_dir().ok().and_then(|d| provenance::git_state(&d));
    Ok(Provenance { git, tags })
}

/// Records a finished sweep, unless `--no-history`; a failure is one sentence on stderr and
/// nothing else: the results are in their folder whatever happens here.
pub fn record(doc: &Results, dir: &Path, args: &RecordArgs) {
    if args.no_history {
        return;
    }
    let Some(path) = hist::location(args.history.as_deref()) else {
        crate::fmt::say!(
            "scalescope: the sweep was not recorded in the history: no home folder to keep it in (set {} or use --history PATH)",
            hist::ENV
        );
        return;
    };
    let source = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let sweep = Sweep::of_results(doc, &source.display().to_string());
    match History::create(&path).and_then(|mut h| record::insert(&mut h, &sweep)) {
        Ok(id) => crate::fmt::say!("history: sweep #{id} recorded in {}", path.display()),
        Err(e) => crate::fmt::say!(
            "scalescope: the sweep was not recorded in the history: {e}; its results are in {} (record them later with `scalescope history import {}`)",
            dir.display(),
            dir.display()
        ),
    }
}

/// The history file to read.
pub fn file(flag: Option<&Path>) -> Result<PathBuf, Error> {
    hist::location(flag).ok_or_else(|| {
        Usage(format!(
            "no home folder to find the history in: set {} or use --history PATH",
            hist::ENV
        ))
        .into()
    })
}

/// The filter the flags ask for.
pub fn filter(f: &FilterArgs) -> Result<Filter, Error> {
    let tags = provenance::parse_tags(&f.tag).map_err(Usage)?.into_iter().collect();
    let since = f.since.as_deref().map(query::check_date).transpose().map_err(Usage)?;
    Ok(Filter {
        command: f.command.clone(),
        tags,
        machine: f.machine.clone(),
        since,
        series: None,
        last: f.last,
    })
}

/// Runs `scalescope history` and its subcommands.
pub fn history(args: &HistoryArgs) -> Result<Exit, Error> {
    match &args.command {
        Some(HistoryCommand::Import(a)) => import_paths(&file(a.file.history.as_deref())?, a),
        Some(HistoryCommand::Trend(a)) => trend_cmd(&file(a.file.history.as_deref())?, a),
        None => list(&file(args.file.history.as_deref())?, &filter(&args.filter)?, args.json),
    }
}

/// Prints the sweeps that match, oldest first.
fn list(path: &Path, f: &Filter, json: bool) -> Result<Exit, Error> {
    let h = History::open(path)?;
    let sweeps = query::sweeps(&h, f)?;
    if json {
        let mut out = String::new();
        for s in &sweeps {
            let m = s.models.first();
            let line = serde_json::json!({
                "id": s.id, "created": s.created, "command": s.command, "source": s.source, "status": s.status,
                "host": s.machine.host, "kernel": s.machine.kernel, "cpu_model": s.machine.cpu_model,
                "commit": s.git.as_ref().map(|g| g.commit.clone()), "dirty": s.git.as_ref().map(|g| g.dirty),
                "tags": s.tags, "series": s.series,
                "efficiency_at_largest": m.and_then(|m| m.efficiency_at_largest),
                "serial_fraction": m.and_then(|m| m.serial_fraction.map(|s| s.0)),
                "first_finding": s.findings.first().map(|f| f.kind.clone()),
            });
            out.push_str(&line.to_string());
            out.push('\n');
        }
        view::print(&out)?;
        return Ok(Exit::Done);
    }
    if sweeps.is_empty() {
        view::print(&format!("no sweep in {} matches\n", path.display()))?;
        return Ok(Exit::Done);
    }
    let rows = sweeps
        .iter()
        .map(|s| {
            let m = s.models.first();
            let pct = |v: Option<f64>| {
                v.map_or_else(|| NONE.to_string(), |v| format!("{:.1}%", v * 100.0))
            };
            let eff = m.and_then(|m| {
                let e = m.efficiency_at_largest?;
                Some(format!("{:.0}% at {}", e * 100.0, crate::report::model::count(m.largest)))
            });
            vec![
                format!("#{}", s.id),
                trend::when(&s.created),
                s.commit_column(),
                trend::tags(s),
                short(&s.command, 48),
                s.machine.host.clone(),
                eff.unwrap_or_else(|| NONE.to_string()),
                pct(m.and_then(|m| m.serial_fraction.map(|s| s.0))),
                s.findings.first().map_or_else(|| NONE.to_string(), |f| f.kind.clone()),
            ]
        })
        .collect();
    let t = Table {
        headers: [
            "sweep",
            "started (UTC)",
            "commit",
            "tags",
            "command",
            "host",
            "efficiency",
            "serial",
            "first finding",
        ]
        .map(String::from)
        .to_vec(),
        numeric: vec![true, false, false, false, false, false, true, true, false],
        rows,
    };
    let mut out = terminal::render(&t, terminal::colour());
    out.push_str(&format!(
        "{} sweep{} in {}\n",
        sweeps.len(),
        if sweeps.len() == 1 { "" } else { "s" },
        path.display()
    ));
    view::print(&out)?;
    Ok(Exit::Done)
}

/// `text` cut to `n` characters with an ellipsis.
fn short(text: &str, n: usize) -> String {
    if text.chars().count() <= n {
        text.to_string()
    } else {
        text.chars().take(n - 1).collect::<String>() + "…"
    }
}

/// Imports folders or tables.
fn import_paths(path: &Path, a: &ImportArgs) -> Result<Exit, Error> {
    let tags = provenance::parse_tags(&a.tag).map_err(Usage)?;
    let mut sweeps = Vec::new();
    if a.csv {
        let label = a.label.as_deref().ok_or_else(|| {
            Usage("--csv needs --label COLUMN: the column that tells the sweeps apart (a commit, a kernel)".into())
        })?;
        let count =
            a.columns.count.as_deref().ok_or_else(|| Usage("--csv needs --count COLUMN".into()))?;
        let columns = Columns {
            count,
            time: a.columns.time.as_deref(),
            throughput: a.columns.throughput.as_deref(),
            cpu: a.columns.cpu.as_deref(),
        };
        let spec =
            import::TableSpec { columns, label, ask: Ask { workers: a.workers, ..Ask::default() } };
        for p in &a.paths {
            let mut found = import::table_sweeps(p, &spec)?;
            for s in &mut found {
                s.tags.extend(tags.clone());
            }
            sweeps.extend(found);
        }
    } else {
        for p in &a.paths {
            for f in import::results_files(p)? {
                sweeps.push(import::sweep_of(&f, &tags)?);
            }
        }
    }
    let mut h = History::create(path)?;
    let before = query::sweeps(&h, &Filter::default())?.len();
    let ids = import::insert_all(&mut h, &sweeps)?;
    let n = ids.len();
    let total = query::sweeps(&h, &Filter::default())?.len();
    // A sweep imported again replaces its earlier copy.
    let replaced = (before + n).saturating_sub(total);
    view::print(&format!(
        "{n} sweep{} imported into {} ({}{total} in all)\n",
        if n == 1 { "" } else { "s" },
        path.display(),
        if replaced > 0 {
            format!("{replaced} replacing the same sweep imported before; ")
        } else {
            String::new()
        }
    ))?;
    Ok(Exit::Done)
}

/// The matching sweeps grouped by series (comparable sweeps), oldest first in each, with their
/// points; series in the order of their newest sweep.
pub fn series(h: &History, f: &Filter) -> Result<Vec<Vec<Sweep>>, HistoryError> {
    let mut groups: Vec<Vec<Sweep>> = Vec::new();
    for mut s in query::sweeps(h, f)? {
        query::fill(h, &mut s)?;
        match groups.iter_mut().find(|g| g[0].series == s.series) {
            Some(g) => g.push(s),
            None => groups.push(vec![s]),
        }
    }
    groups.sort_by_key(|g| g.last().map(|s| (s.created.clone(), s.id)));
    Ok(groups)
}

/// `xz -T{threads} … on Intel … / 8 CPUs / 16 GiB`.
pub fn series_title(s: &Sweep) -> String {
    let m = s.machine_text();
    if m.is_empty() { s.command.clone() } else { format!("{} on {m}", s.command) }
}

/// `scalescope history trend`.
fn trend_cmd(path: &Path, a: &TrendArgs) -> Result<Exit, Error> {
    let figure = figures::parse(&a.figure, a.at).map_err(Usage)?;
    let o = Options { threshold: fraction("--threshold", &a.threshold)?, ..Options::default() };
    let h = History::open(path)?;
    let groups = series(&h, &filter(&a.filter)?)?;
    if groups.is_empty() {
        view::print(&format!("no sweep in {} matches\n", path.display()))?;
        return Ok(Exit::Done);
    }
    if let Figure::Time(Some(c)) = figure {
        let mut counts: Vec<f64> =
            groups.iter().flatten().flat_map(|s| &s.points).filter_map(|p| p.count).collect();
        counts.sort_by(f64::total_cmp);
        counts.dedup();
        if !counts.contains(&c) {
            let shown: Vec<String> =
                counts.iter().map(|c| crate::report::model::count(*c)).collect();
            return Err(Usage(format!(
                "--at {}: no sweep measured that count (they measured {})",
                crate::report::model::count(c),
                shown.join(", ")
            ))
            .into());
        }
    }
    let colour = terminal::colour();
    let mut out = String::new();
    let mut parts = Vec::new();
    for g in &groups {
        let axis = g[0].axis.clone().unwrap_or_default();
        let tracks = figures::tracks(g, figure, &axis);
        if tracks.is_empty() {
            continue;
        }
        for t in tracks {
            let steps = if figure == Figure::Finding { Vec::new() } else { check::all(&t, &o) };
            let table = trend::table(g, &t, &steps);
            let title = series_title(&g[0]);
            out.push_str(&format!("{title}\n"));
            out.push_str(&terminal::render(&table, colour));
            if a.html.is_some() {
                parts.push((
                    format!("{} — {}", t.name, title),
                    trend::chart(&t.name, g, &t, &steps),
                    table,
                ));
            }
        }
    }
    view::print(&out)?;
    if let Some(p) = &a.html {
        view::write(p, &trend::page(&format!("scalescope history: {}", a.figure), &parts))?;
    }
    Ok(Exit::Done)
}
