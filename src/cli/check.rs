//! `scalescope check`: the newest sweep (or `--sweep ID`) against the comparable sweeps before
//! it, for CI: exit 1 with one sentence when a figure stepped beyond the threshold and the runs
//! say it is no chance; `--all` lists every step in the history.

use super::fraction::fraction;
use super::history::{file, filter, series, series_title};
use super::history_args::CheckArgs;
use super::{Exit, Usage, view};
use crate::error::Error;
use crate::history::check::{self, Options, Step};
use crate::history::figures::{self, Figure, Track};
use crate::history::query::{self, Filter};
use crate::history::record::Sweep;
use crate::history::trend::p_text;
use crate::history::{History, HistoryError};

/// The figures judged: the time at every count, the efficiency at the largest count and the
/// serial fraction, per sub-series, from runs scaled to the machine's usual pace.
fn judged(g: &[Sweep]) -> Vec<Track> {
    let axis = g[0].axis.clone().unwrap_or_default();
    let mut counts: Vec<f64> = g.iter().flat_map(|s| &s.points).filter_map(|p| p.count).collect();
    counts.sort_by(f64::total_cmp);
    counts.dedup();
    let mut out = Vec::new();
    for f in [Figure::Efficiency, Figure::SerialFraction] {
        out.extend(figures::paced_tracks(g, f, &axis));
    }
    for c in counts.iter().rev() {
        out.extend(figures::paced_tracks(g, Figure::Time(Some(*c)), &axis));
    }
    out.retain(|t| t.entries.iter().any(|e| e.value.is_some()));
    out
}

/// Runs `scalescope check`.
pub fn check(a: &CheckArgs) -> Result<Exit, Error> {
    let o = Options { threshold: fraction("--threshold", &a.threshold)?, ..Options::default() };
    let path = file(a.file.history.as_deref())?;
    let wanted: Option<i64> =
        match &a.sweep {
            Some(id) => Some(id.trim_start_matches('#').parse().map_err(|_| {
                Usage(format!("--sweep {id}: give a sweep's number, e.g. 12 or #12"))
            })?),
            None => None,
        };
    // A history not made yet (a CI cache missed) has nothing to judge against, as one sweep has not.
    let h = match History::open(&path) {
        Err(HistoryError::NotFound { path }) => {
            view::print(&format!(
                "there is no history at {path} yet: nothing to judge the newest sweep against\n"
            ))?;
            return Ok(Exit::Done);
        }
        h => h?,
    };
    let f = filter(&a.filter)?;
    if a.all {
        return all(&h, &f, &o, a.json);
    }
    let target = match wanted {
        Some(n) => query::by_id(&h, n)?,
        None => query::sweeps(&h, &f)?.pop().ok_or_else(|| {
            HistoryError::Missing(format!("no sweep in the history {} matches", path.display()))
        })?,
    };
    // The series up to the sweep judged.
    let mut g = series(&h, &Filter { series: Some(target.series.clone()), ..Filter::default() })?
        .pop()
        .unwrap_or_default();
    if let Some(i) = g.iter().position(|s| s.id == target.id) {
        g.truncate(i + 1);
    }
    if g.len() < 2 {
        let msg = format!(
            "#{} ({}) has no comparable sweep before it to be judged against (the same command, parameters and kind of machine)",
            target.id,
            target.label()
        );
        print_verdict(
            a.json,
            &target,
            &Verdict { regression: false, undecided: false, early: false, left_out: 0 },
            &[],
            &msg,
        )?;
        return Ok(Exit::Done);
    }
    let disturbance = figures::left_out(&g);
    let left_out = disturbance.0;
    let mut tracks = judged(&g);
    let mut steps: Vec<(usize, Step)> =
        tracks.iter().enumerate().filter_map(|(i, t)| Some((i, check::newest(t, &o)?))).collect();
    // Runs left out: a slowdown beyond all the CPU other processes could have taken from them is
    // the program's all the same.
    let mut at_best = false;
    if left_out > 0 && !steps.iter().any(|(_, s)| s.regression) {
        let axis = g[0].axis.clone().unwrap_or_default();
        for t in figures::best_case_times(&g, &axis) {
            if let Some(s) = check::newest(&t, &o).filter(|s| s.regression) {
                at_best = true;
                tracks.push(t);
                steps.push((tracks.len() - 1, s));
            }
        }
    }
    // A step from a sweep of the same commit, both clean, is the machine's: a repeat is no
    // regression.
    let same = |t: &Track| {
        let before = last_before(t).map(|e| &g[e.sweep]);
        let (a, b) = (before.and_then(|s| s.git.as_ref()), g[g.len() - 1].git.as_ref());
        matches!((a, b), (Some(a), Some(b)) if a.commit == b.commit && !a.dirty && !b.dirty)
    };
    let repeats: Vec<String> = steps
        .iter()
        .filter(|(i, s)| s.regression && same(&tracks[*i]))
        .map(|(_, s)| format!("{} {} → {}", s.figure, s.before_text, s.after_text))
        .collect();
    steps.retain(|(i, s)| !(s.regression && same(&tracks[*i])));
    let regression = steps.iter().any(|(_, s)| s.regression);
    // Figures with fewer than two runs left at the sweep's count: not judged.
    let unjudged: Vec<&str> = tracks
        .iter()
        .filter(|t| t.entries.last().is_some_and(check::thin))
        .map(|t| t.name.as_str())
        .collect();
    // The sweep judged, with its points.
    let target = g.last().cloned().unwrap_or(target);
    // A figure without enough sweeps at its level to be judged (the first sweeps, the ones right
    // after a step): said, not passed as in line.
    let levels: Vec<check::Level> = tracks.iter().map(|t| check::level(t, &o)).collect();
    let level = tracks
        .iter()
        .zip(&levels)
        .filter(|(t, _)| t.entries.last().is_some_and(|e| e.value.is_some()))
        .map(|(_, l)| l.sweeps)
        .min()
        .unwrap_or(0);
    let early = !regression && level < check::MIN_LEVEL;
    let mut sentence = if regression {
        sentence(&tracks, &steps, &g, &target)
    } else if early && unjudged.is_empty() {
        not_yet(&tracks, &target, level)
    } else if !repeats.is_empty() {
        format!(
            "#{} ({}) differs from the sweep of the same commit before it ({}): the machine's doing, not the code's; run it again on a quiet machine",
            target.id,
            target.label(),
            repeats.join(", ")
        )
    } else if !unjudged.is_empty() {
        format!(
            "{}, so {} cannot be judged: run it again on a quiet machine",
            disturbed(&g, disturbance),
            unjudged.join(", ")
        )
    } else {
        let restarted = levels.iter().any(|l| l.restarted);
        in_line(&tracks, &g, &target, &steps, restarted.then_some(level))
    };
    if at_best {
        sentence.push_str(&format!(
            " ({}; even as if they had taken all that CPU time from its runs, they were slower)",
            disturbed(&g, disturbance)
        ));
    } else if (regression || unjudged.is_empty()) && left_out > 0 {
        sentence.push_str(&format!(" ({}; they were left out)", disturbed(&g, disturbance)));
    }
    let list: Vec<Step> = steps.into_iter().map(|(_, s)| s).collect();
    let verdict = Verdict {
        regression,
        undecided: !regression && (!unjudged.is_empty() || early || !repeats.is_empty()),
        early: early && unjudged.is_empty(),
        left_out,
    };
    print_verdict(a.json, &target, &verdict, &list, &sentence)?;
    Ok(if regression { Exit::Failed } else { Exit::Done })
}

/// `#2 (fe19c67) cannot be judged yet: efficiency at 2 threads 91.2% → 62.0%; …`.
fn not_yet(tracks: &[Track], target: &Sweep, level: usize) -> String {
    let moved: Vec<String> = tracks
        .iter()
        .take(2)
        .filter_map(|t| {
            let now = t.entries.last()?.value?;
            Some(match last_before(t).and_then(|e| e.value) {
                Some(before) => format!("{} {} → {}", t.name, t.show(before), t.show(now)),
                None => format!("{} {}", t.name, t.show(now)),
            })
        })
        .collect();
    format!(
        "#{} ({}) cannot be judged yet{}: {level} comparable sweep{} at its level before it, and {} are needed to tell a step from the machine's noise",
        target.id,
        target.label(),
        if moved.is_empty() { String::new() } else { format!(" ({})", moved.join(", ")) },
        if level == 1 { "" } else { "s" },
        check::MIN_LEVEL
    )
}

/// What the newest sweep was judged to be.
struct Verdict {
    regression: bool,
    /// Some figure could not be judged: every run behind it was disturbed, or too few sweeps are
    /// at its level yet.
    undecided: bool,
    /// Too few sweeps at the level yet.
    early: bool,
    /// Runs left out as disturbed.
    left_out: usize,
}

/// `#13 (a1b2c3d): other processes kept up to 0.9 CPUs of 2 busy during 3 of its 6 runs, more
/// than they usually did`, of the last of the series `g`, from its [`figures::left_out`].
fn disturbed(g: &[Sweep], (out, total, most): (usize, usize, f64)) -> String {
    let s = &g[g.len() - 1];
    format!(
        "#{} ({}): other processes kept up to {most:.1} CPUs of {} busy during {out} of its {total} runs, more than they usually did",
        s.id,
        s.label(),
        s.machine.allowed_cpus
    )
}

/// `efficiency at 8 threads fell from 94% to 71% (−24%, p < 0.001) between a1b2c3d and e4f5a6b;
/// serial fraction 0.8% → 4.6%`.
fn sentence(tracks: &[Track], steps: &[(usize, Step)], g: &[Sweep], after: &Sweep) -> String {
    let regressions: Vec<&(usize, Step)> = steps.iter().filter(|(_, s)| s.regression).collect();
    let (track, main) = regressions[0];
    // The last sweep with a value before this one: a sweep whose runs were all left out says nothing.
    let before = last_before(&tracks[*track]).map_or(&g[g.len() - 2], |e| &g[e.sweep]);
    let verb = if main.after > main.before { "rose" } else { "fell" };
    let p = main.p.map_or_else(String::new, |p| format!(", {}", p_text(p)));
    let mut out = format!(
        "{} {verb} from {} to {} ({}{p}) between {} and {}",
        main.figure,
        main.before_text,
        main.after_text,
        main.change_text(),
        before.label(),
        after.label()
    );
    for (_, s) in steps.iter().filter(|(_, s)| !std::ptr::eq(s, main)) {
        out.push_str(&format!("; {} {} → {}", s.figure, s.before_text, s.after_text));
    }
    // The serial fraction beside the verdict, even when it alone did not step.
    if let Some(t) = tracks.iter().find(|t| t.name.starts_with("serial fraction"))
        && !steps.iter().any(|(_, s)| s.figure == t.name)
        && let (Some(b), Some(a)) =
            (last_before(t).and_then(|e| e.value), t.entries.last().and_then(|e| e.value))
    {
        out.push_str(&format!("; {} {} → {}", t.name, t.show(b), t.show(a)));
    }
    out
}

/// The last entry with a value before the newest.
fn last_before(t: &Track) -> Option<&figures::Entry> {
    let n = t.entries.len().checked_sub(1)?;
    t.entries[..n].iter().rev().find(|e| e.value.is_some())
}

/// `#21 (e4f5a6b) is in line with the 20 comparable sweeps before it: …`, or, after a step, with
/// the `level` sweeps since it (the ones it was judged against).
fn in_line(
    tracks: &[Track],
    g: &[Sweep],
    target: &Sweep,
    steps: &[(usize, Step)],
    level: Option<usize>,
) -> String {
    let before = g.len() - 1;
    let mut out = if let Some(level) = level.filter(|l| *l > 0 && *l < before) {
        format!(
            "#{} ({}) is in line with the {level} sweeps at its level since the last step (of {before} comparable sweeps before it)",
            target.id,
            target.label()
        )
    } else {
        format!(
            "#{} ({}) is in line with the {before} comparable sweep{} before it",
            target.id,
            target.label(),
            if before == 1 { "" } else { "s" }
        )
    };
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

fn print_verdict(
    json: bool,
    target: &Sweep,
    v: &Verdict,
    steps: &[Step],
    sentence: &str,
) -> Result<(), Error> {
    if json {
        let v = serde_json::json!({
            "sweep": target.id, "commit": target.git.as_ref().map(|g| g.commit.clone()),
            "regression": v.regression, "undecided": v.undecided, "too_few_sweeps": v.early,
            "left_out_runs": v.left_out,
            "verdict": sentence, "steps": steps,
        });
        return view::print(&(v.to_string() + "\n"));
    }
    let lead = match (v.regression, v.undecided, v.early) {
        (true, _, _) => "regression: ",
        (false, true, false) => "cannot tell: ",
        _ => "",
    };
    view::print(&format!("{lead}{sentence}\n"))
}

/// `--all`: every step of every series.
fn all(h: &History, f: &Filter, o: &Options, json: bool) -> Result<Exit, Error> {
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
                    "#{} {}: {} {verb} from {} to {} ({}{p}) between {} and {}{}",
                    sweep.id,
                    series_title(sweep),
                    s.figure,
                    s.before_text,
                    s.after_text,
                    s.change_text(),
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
        view::print(
            &(serde_json::json!({ "regression": regression, "steps": found }).to_string() + "\n"),
        )?;
    } else if lines.is_empty() {
        view::print("no step in the history\n")?;
    } else {
        view::print(&(lines.join("\n") + "\n"))?;
    }
    Ok(if regression { Exit::Failed } else { Exit::Done })
}
