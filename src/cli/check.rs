//! `scalescope check`: the newest sweep (or `--sweep ID`) against the comparable sweeps before
//! it, for CI: exit 1 with one sentence when a figure stepped beyond the threshold and the runs
//! say it is no chance; `--all` lists every step in the history.

use super::history::{file, filter, series, series_title};
use super::history_args::CheckArgs;
use super::{Exit, Usage, compare::fraction, view};
use crate::history::check::{self, Options, Step};
use crate::history::figures::{self, Figure, Track};
use crate::history::query::{self, Filter};
use crate::history::record::Sweep;
use crate::history::trend::p_text;
use crate::history::{History, HistoryError};

/// The figures judged: the time at every count, the efficiency at the largest count and the
/// serial fraction, per sub-series.
fn judged(g: &[Sweep]) -> Vec<Track> {
    let axis = g[0].axis.clone().unwrap_or_default();
    let mut counts: Vec<f64> = g.iter().flat_map(|s| &s.points).filter_map(|p| p.count).collect();
    counts.sort_by(f64::total_cmp);
    counts.dedup();
    let mut out = Vec::new();
    for f in [Figure::Efficiency, Figure::SerialFraction] {
        out.extend(figures::tracks(g, f, &axis));
    }
    for c in counts.iter().rev() {
        out.extend(figures::tracks(g, Figure::Time(Some(*c)), &axis));
    }
    out.retain(|t| t.entries.iter().any(|e| e.value.is_some()));
    out
}

/// Runs `scalescope check`.
pub fn check(a: &CheckArgs) -> anyhow::Result<Exit> {
    let o = Options { threshold: fraction("--threshold", &a.threshold)?, ..Options::default() };
    let path = file(a.file.history.as_deref())?;
    let h = History::open(&path)?;
    let f = filter(&a.filter)?;
    if a.all {
        return all(&h, &f, &o, a.json);
    }
    let target = match &a.sweep {
        Some(id) => {
            let n: i64 = id
                .trim_start_matches('#')
                .parse()
                .map_err(|_| Usage(format!("--sweep {id}: give a sweep's number, e.g. 12 or #12")))?;
            query::by_id(&h, n)?
        }
        None => query::sweeps(&h, &f)?
            .pop()
            .ok_or_else(|| HistoryError::Missing(format!("no sweep in the history {} matches", path.display())))?,
    };
    // The series up to the sweep judged.
    let mut g =
        series(&h, &Filter { series: Some(target.series.clone()), ..Filter::default() })?.pop().unwrap_or_default();
    if let Some(i) = g.iter().position(|s| s.id == target.id) {
        g.truncate(i + 1);
    }
    if g.len() < 2 {
        let msg = format!(
            "#{} ({}) has no comparable sweep before it to be judged against (the same command, parameters and kind of machine)",
            target.id,
            target.label()
        );
        print_verdict(a.json, &target, false, &[], &msg)?;
        return Ok(Exit::Done);
    }
    let tracks = judged(&g);
    let steps: Vec<(usize, Step)> =
        tracks.iter().enumerate().filter_map(|(i, t)| Some((i, check::newest(t, &o)?))).collect();
    let previous = &g[g.len() - 2];
    let regression = steps.iter().any(|(_, s)| s.regression);
    let sentence =
        if regression { sentence(&tracks, &steps, previous, &target) } else { in_line(&tracks, &g, &target, &steps) };
    let list: Vec<Step> = steps.into_iter().map(|(_, s)| s).collect();
    print_verdict(a.json, &target, regression, &list, &sentence)?;
    Ok(if regression { Exit::Failed } else { Exit::Done })
}

/// `efficiency at 8 threads fell from 94% to 71% (−24%, p < 0.001) between a1b2c3d and e4f5a6b;
/// serial fraction 0.8% → 4.6%`.
fn sentence(tracks: &[Track], steps: &[(usize, Step)], before: &Sweep, after: &Sweep) -> String {
    let regressions: Vec<&(usize, Step)> = steps.iter().filter(|(_, s)| s.regression).collect();
    let (_, main) = regressions[0];
    let verb = if main.after > main.before { "rose" } else { "fell" };
    let p = main.p.map_or_else(String::new, |p| format!(", {}", p_text(p)));
    let mut out = format!(
        "{} {verb} from {} to {} ({:+.0}%{p}) between {} and {}",
        main.figure,
        main.before_text,
        main.after_text,
        main.change * 100.0,
        before.label(),
        after.label()
    );
    for (_, s) in steps.iter().filter(|(_, s)| !std::ptr::eq(s, main)) {
        out.push_str(&format!("; {} {} → {}", s.figure, s.before_text, s.after_text));
    }
    // The serial fraction beside the verdict, even when it alone did not step.
    if let Some(t) = tracks.iter().find(|t| t.name.starts_with("serial fraction"))
        && !steps.iter().any(|(_, s)| s.figure == t.name)
        && let (Some(b), Some(a)) = (t.entries[t.entries.len() - 2].value, t.entries.last().and_then(|e| e.value))
    {
        out.push_str(&format!("; {} {} → {}", t.name, t.show(b), t.show(a)));
    }
    out
}

/// `#21 (e4f5a6b) is in line with the 20 comparable sweeps before it: …`.
fn in_line(tracks: &[Track], g: &[Sweep], target: &Sweep, steps: &[(usize, Step)]) -> String {
    let mut out = format!(
        "#{} ({}) is in line with the {} comparable sweep{} before it",
        target.id,
        target.label(),
        g.len() - 1,
        if g.len() == 2 { "" } else { "s" }
    );
    let shown: Vec<String> = tracks
        .iter()
        .take(2)
        .filter_map(|t| Some(format!("{} {}", t.name, t.show(t.entries.last()?.value?))))
        .collect();
    if !shown.is_empty() {
        out.push_str(&format!(": {}", shown.join(", ")));
    }
    for (_, s) in steps {
        out.push_str(&format!("; better: {} {} → {}", s.figure, s.before_text, s.after_text));
    }
    out
}

fn print_verdict(json: bool, target: &Sweep, regression: bool, steps: &[Step], sentence: &str) -> anyhow::Result<()> {
    if json {
        let v = serde_json::json!({
            "sweep": target.id, "commit": target.git.as_ref().map(|g| g.commit.clone()),
            "regression": regression, "verdict": sentence, "steps": steps,
        });
        return view::print(&(v.to_string() + "\n"));
    }
    let lead = if regression { "regression: " } else { "" };
    view::print(&format!("{lead}{sentence}\n"))
}

/// `--all`: every step of every series.
fn all(h: &History, f: &Filter, o: &Options, json: bool) -> anyhow::Result<Exit> {
    let mut lines = Vec::new();
    let mut found = Vec::new();
    let mut regression = false;
    for g in series(h, f)? {
        if g.len() < 2 {
            continue;
        }
        for t in judged(&g) {
            for s in check::all(&t, o) {
                regression |= s.regression;
                let sweep = &g[t.entries[s.at].sweep];
                let before = &g[t.entries[s.at].sweep.saturating_sub(1)];
                let verb = if s.after > s.before { "rose" } else { "fell" };
                let p = s.p.map_or_else(String::new, |p| format!(", {}", p_text(p)));
                lines.push(format!(
                    "#{} {}: {} {verb} from {} to {} ({:+.0}%{p}) between {} and {}{}",
                    sweep.id,
                    series_title(sweep),
                    s.figure,
                    s.before_text,
                    s.after_text,
                    s.change * 100.0,
                    before.label(),
                    sweep.label(),
                    if s.regression { " [regression]" } else { "" }
                ));
                found.push(serde_json::json!({
                    "sweep": sweep.id, "series": sweep.series, "position": s.at, "step": s,
                }));
            }
        }
    }
    if json {
        view::print(&(serde_json::json!({ "regression": regression, "steps": found }).to_string() + "\n"))?;
    } else if lines.is_empty() {
        view::print("no step in the history\n")?;
    } else {
        view::print(&(lines.join("\n") + "\n"))?;
    }
    Ok(if regression { Exit::Failed } else { Exit::Done })
}
