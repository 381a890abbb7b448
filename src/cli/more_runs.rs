//! Measuring until the verdict is clear: after the first pass, the points whose verdict the runs
//! cannot decide (an efficiency whose interval straddles 90%, a count that may or may not be
//! slower than the best) get more runs, look by look, as many as the spread so far says would
//! decide it, within `--budget` and at most `--max-runs` a point. Each look spends part of the
//! intervals' 5% error, so that stopping when the answer looks clear does not make them lie
//! (docs/analysis.md).

use super::args::ViewArgs;
use super::progress::{Clock, Session};
use super::view;
use crate::diagnose::{self, Question};
use crate::error::Error;
use crate::exec::sweep::{self, Stop};
use crate::exec::{ExecError, Processes};
use crate::plan::PointProgress;
use crate::results::{Added, Results, Sequential, Store};
use crate::stats::sequential::Confidence;
use std::collections::BTreeMap;
use std::time::Instant;

/// Added runs per look are at most this many times the runs a point has: a spread estimated from
/// three runs may be far off, and the next look sees it better.
const GROWTH: u32 = 4;

/// Adds runs look by look while questions remain, the budget lasts and looks remain, and records
/// what it did in the document's `sequential`. `first_pass_s` is the time the first pass took, and
/// the progress lines go on from its `clock`.
/// Returns how the last sweep of added runs ended (`Complete` when none ran); the outer error is
/// the analysis's or the disk's.
pub fn settle(
    store: &mut Store,
    view: &ViewArgs,
    (first_pass_s, clock): (f64, Clock),
    show_output: bool,
) -> Result<Result<Stop, ExecError>, Error> {
    let plan = store.doc.plan.clone();
    let Some(budget) = plan.runs.budget else { return Ok(Ok(Stop::Complete)) };
    if store.doc.sequential.is_none() {
        store.doc.sequential = Some(Sequential {
            looks: 1,
            first_pass_s,
            budget_s: budget.seconds(first_pass_s),
            ..Sequential::default()
        });
    }
    let overhead = overhead(&store.doc);
    loop {
        view::analyse(&mut store.doc, view)?;
        let seq = store.doc.sequential.clone().unwrap_or_default();
        let questions =
            diagnose::questions(&store.doc, Confidence::at_look(seq.looks + 1), plan.runs.max);
        if questions.is_empty() {
            set_undecided(&mut store.doc, Vec::new(), None);
            return Ok(Ok(Stop::Complete));
        }
        let left = seq.budget_s - seq.spent_s;
        let targets = targets(&store.doc, &questions, (plan.runs.max, overhead), left);
        if !seq.confidence().may_look_again() || targets.is_empty() {
            let (why, stopped_by) = if targets.is_empty() && seq.confidence().may_look_again() {
                // What is left may be too little for the runs a question needs (a round of the
                // slowest point), not nothing: said as such.
                let short = if left >= 1.0 {
                    format!("{left:.0} s of the budget left, too little for another round")
                } else {
                    "the budget ran out".into()
                };
                (format!("{short}; budget {}", budget_words(&seq)), short)
            } else {
                let looked =
                    format!("{} looks at the runs, the most their 95% intervals allow", seq.looks);
                (format!("after {looked}"), looked)
            };
            let max = plan.runs.max;
            let undecided: Vec<String> = questions
                .iter()
                .map(|q| {
                    let more = match q.runs_needed {
                        Some(n) => {
                            format!("about {n} runs a point would tell, by the spread so far")
                        }
                        None => format!(
                            "at this spread, not even {max} runs a point (--max-runs) would tell"
                        ),
                    };
                    format!("{} ({}; {more})", q.what, q.now)
                })
                .collect();
            for u in &undecided {
                crate::fmt::say!(
                    "scalescope: still undecided ({why}): {u}; --budget sets how long to measure"
                );
            }
            set_undecided(&mut store.doc, undecided, Some(stopped_by));
            store.save()?;
            return Ok(Ok(Stop::Complete));
        }
        let look = seq.looks + 1;
        let mut added = Vec::new();
        for q in &questions {
            let points: Vec<(usize, u32)> = q
                .points
                .iter()
                .filter_map(|p| targets.get(p).map(|t| (*p, t - done(&store.doc, *p))))
                .collect();
            let Some(&(_, most)) = points.iter().max_by_key(|(_, n)| *n) else { continue };
            let labels: Vec<String> =
                points.iter().map(|(p, _)| store.doc.points[*p].label()).collect();
            crate::fmt::say!(
                "scalescope: {most} more run{} of {} to tell {} ({})",
                if most == 1 { "" } else { "s" },
                labels.join(" and "),
                q.what,
                q.now
            );
            for (p, n) in points {
                if !added.iter().any(|a: &Added| a.point == p) {
                    added.push(Added {
                        look,
                        point: p,
                        runs: n,
                        what: q.what.clone(),
                        now: q.now.clone(),
                    });
                }
            }
        }
        for (&p, &t) in &targets {
            store.doc.points[p].target_runs = Some(t);
        }
        let progress: Vec<PointProgress> = (0..store.doc.points.len())
            .map(|p| {
                let d = done(&store.doc, p);
                PointProgress::warm(d, targets.get(&p).copied().unwrap_or(d))
            })
            .collect();
        store.save()?;
        let first_round = store.doc.next_round();
        let started = Instant::now();
        let mut session = Session::new(store, show_output, Some(clock));
        let outcome = sweep::run(
            &plan,
            (progress, first_round),
            &mut session,
            &mut Processes::new(),
            show_output,
        );
        session.finish();
        if let Some(s) = store.doc.sequential.as_mut() {
            s.looks = look;
            s.spent_s += started.elapsed().as_secs_f64();
            s.added.extend(added);
        }
        if !matches!(outcome, Ok(Stop::Complete)) {
            return Ok(outcome);
        }
    }
}

/// Records what was left undecided, and why no more runs were added (`None` when nothing was).
fn set_undecided(doc: &mut Results, undecided: Vec<String>, stopped_by: Option<String>) {
    if let Some(s) = doc.sequential.as_mut() {
        s.undecided = undecided;
        s.stopped_by = stopped_by;
    }
}

/// `2× the first pass, 38 s`.
fn budget_words(seq: &Sequential) -> String {
    let times = seq.budget_s / seq.first_pass_s.max(1e-9);
    format!("{times:.1}× the first pass, {:.0} s", seq.budget_s)
}

/// Runs counted towards a point's target: successful ones, or all under `--ignore-failure`.
fn done(doc: &Results, p: usize) -> u32 {
    let ignore = doc.plan.ignore_failure;
    doc.points[p].runs.iter().filter(|r| r.counted() || (ignore && !r.held())).count() as u32
}

/// The runs each point named by a question should have in all. Questions that share a point are
/// asked together: each adds what it needs by the spread so far (up to `max` when no number within
/// it would tell), at least half again and at most [`GROWTH`] times what the fewest of its points
/// have, and every point of such a group gets the most of them, so that the added runs go in
/// rounds holding all the points compared (a speed-up's interval comes from the rounds both its
/// points ran in: a baseline left out of them leaves it as wide as before). All is scaled down to
/// what `left` seconds allow, a run costing its point's mean wall time × `overhead` and the
/// rounds' total kept within `left` at 95% by their spread. Points that would gain nothing are
/// left out.
fn targets(
    doc: &Results,
    questions: &[Question],
    (max, overhead): (u32, f64),
    left: f64,
) -> BTreeMap<usize, u32> {
    // A point's run costs its mean wall time × `overhead`, give or take its spread: (mean, variance).
    let per_run = |p: usize| -> (f64, f64) {
        let runs: Vec<f64> =
            doc.points[p].runs.iter().filter(|r| r.counted()).map(|r| r.wall_s).collect();
        crate::stats::Summary::of(&runs)
            .map_or((0.0, 0.0), |s| (s.mean * overhead, (s.stddev * overhead).powi(2)))
    };
    let groups: Vec<(Vec<usize>, u32)> = groups(questions)
        .into_iter()
        .map(|(points, asked)| {
            let have = points.iter().map(|&p| done(doc, p)).min().unwrap_or(0);
            // A projection from a few runs' spread falls short as often as not, and looks are few:
            // each adds at least half of what the points have.
            let want = asked
                .iter()
                .map(|q| q.runs_needed.unwrap_or(max))
                .max()
                .unwrap_or(max)
                .max(have + (have / 2).max(2))
                .min(GROWTH * have.max(1))
                .min(max);
            (points, want.saturating_sub(have))
        })
        .collect();
    // A round of each group: its points' runs, their summed mean and variance.
    let round_cost: Vec<(f64, f64)> = groups
        .iter()
        .map(|(points, _)| {
            points.iter().map(|&p| per_run(p)).fold((0.0, 0.0), |(a, b), (m, v)| (a + m, b + v))
        })
        .collect();
    // What the rounds scaled by `share` would cost at most (their mean plus 1.64 standard
    // deviations of the sum): runs longer than the mean would otherwise overrun the budget.
    let cost = |share: f64| -> f64 {
        let (mean, var) =
            groups.iter().zip(&round_cost).fold((0.0, 0.0), |(m, v), ((_, k), (qm, qv))| {
                let k = (f64::from(*k) * share).floor();
                (m + k * qm, v + k * qv)
            });
        mean + 1.64 * var.sqrt()
    };
    let mut share = 1.0;
    while share > 0.0 && cost(share) > left {
        share = if share == 1.0 { (left / cost(1.0)).max(0.0) } else { share - 0.05 };
    }
    let share = share.max(0.0);
    let mut want: BTreeMap<usize, u32> = BTreeMap::new();
    for (points, k) in groups {
        let k = (f64::from(k) * share).floor() as u32;
        for p in points {
            want.insert(p, (done(doc, p) + k).min(max.max(done(doc, p))));
        }
    }
    want.retain(|&p, t| *t > done(doc, p));
    want
}

/// The questions in groups that share no point: each group's points and its questions.
fn groups(questions: &[Question]) -> Vec<(Vec<usize>, Vec<&Question>)> {
    let mut groups: Vec<(Vec<usize>, Vec<&Question>)> = Vec::new();
    for q in questions {
        let (mut points, mut asked) = (q.points.clone(), vec![q]);
        // Every group that shares a point with this question joins it.
        groups.retain(|(p, a)| {
            let shares = p.iter().any(|x| points.contains(x));
            if shares {
                points.extend(p.iter().filter(|x| !q.points.contains(x)));
                asked.extend(a.iter().copied());
            }
            !shares
        });
        points.sort_unstable();
        points.dedup();
        groups.push((points, asked));
    }
    groups
}

/// The first pass's time over the wall time of its runs (those in the document when the first
/// look is taken): what warm-ups, hooks and recording add to each run, between 1 and 3.
fn overhead(doc: &Results) -> f64 {
    let Some(seq) = &doc.sequential else { return 1.0 };
    let walls: f64 = doc.points.iter().flat_map(|p| &p.runs).map(|r| r.wall_s).sum();
    (seq.first_pass_s / walls.max(1e-9)).clamp(1.0, 3.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn question(points: &[usize], runs_needed: u32) -> Question {
        Question {
            points: points.to_vec(),
            what: String::new(),
            now: String::new(),
            runs_needed: Some(runs_needed),
        }
    }

    /// A trial's sweep asked whether 2 workers scale (1 against 2) and whether 4 are slower than 2
    /// (2 against 4): added runs went to 2 and 4 only, and the speed-up of 2 stayed "after 3 runs".
    #[test]
    fn questions_that_share_a_point_are_asked_in_the_same_rounds() {
        let qs = [question(&[0, 1], 5), question(&[1, 2], 12), question(&[4, 5], 6)];
        let g = groups(&qs);
        assert_eq!(g.len(), 2);
        assert_eq!(g[0].0, [0, 1, 2]);
        assert_eq!(g[0].1.len(), 2);
        assert_eq!(g[1].0, [4, 5]);
        let chain = [question(&[0, 1], 5), question(&[2, 3], 5), question(&[1, 2], 5)];
        let joined = groups(&chain);
        assert_eq!(joined.len(), 1);
        assert_eq!(joined[0].0, [0, 1, 2, 3]);
    }
}
