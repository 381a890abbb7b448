//! The lines under the table: the largest waits of every sampled point, the speed-up stacks, the
//! points' warnings, and the job's read rate against the measured I/O ceiling.

use crate::results::{Added, Results, RunRecord};

/// The largest waits of every sampled point, and what the sampler could not see.
pub fn waits(doc: &Results) -> Vec<String> {
    let mut out = Vec::new();
    let mut limits: Vec<String> = Vec::new();
    let last = doc.points.iter().rposition(|p| p.runs.iter().any(|r| r.threads.is_some()));
    for (i, p) in doc.points.iter().enumerate() {
        if let Some(t) = super::threads::of_point(p) {
            // Where on-CPU time went rarely differs between points: said once, for the last.
            out.extend(super::threads::wait_lines(&p.label(), &t, Some(i) == last));
            limits.extend(t.limits.into_iter().filter(|l| !limits.contains(l)).collect::<Vec<_>>());
        }
    }
    out.extend(limits.into_iter().map(|l| format!("not seen: {l}")));
    out
}

/// Most parts of a speed-up stack named on its line; the rest are added up as `other causes`.
const STACK_PARTS: usize = 4;

/// `threads=2: 2 = 1.62 speed-up + 0.21 lock (queue_lock) + 0.09 no work (tail) + 0.08
/// unexplained`: each speed-up stack in cores, parts of 0.01 or more.
pub fn stacks(doc: &Results) -> Vec<String> {
    doc.stacks
        .iter()
        .map(|st| {
            let label = doc.points[st.point].label();
            let label = if st.series.is_empty() { label } else { format!("{} {label}", st.series) };
            let mut terms = vec![format!("{:.2} speed-up", st.speedup)];
            let shown: Vec<_> = st.parts.iter().filter(|p| p.cores >= 0.005).collect();
            for p in shown.iter().take(STACK_PARTS) {
                let object = p
                    .object
                    .as_deref()
                    .map(|o| format!(" ({})", object_name(o)))
                    .unwrap_or_default();
                terms.push(format!("+ {:.2} {}{object}", p.cores, p.cause));
            }
            let rest: f64 =
                st.lost() - shown.iter().take(STACK_PARTS).map(|p| p.cores).sum::<f64>();
            if rest >= 0.005 {
                terms.push(format!("+ {rest:.2} other causes"));
            }
            if st.unexplained >= 0.005 {
                terms.push(format!("+ {:.2} unexplained", st.unexplained));
            } else if st.unexplained <= -0.005 {
                terms.push(format!("− {:.2} where the baseline idled", -st.unexplained));
            }
            format!("{label}: {} = {}", crate::fmt::count(st.count), terms.join(" "))
        })
        .collect()
}

/// A symbol's short name (`GLOBAL_LOCK`); an address (`heap+0x4088`), a system call or a phase
/// as it is: two objects in the heap must not read the same.
fn object_name(o: &str) -> String {
    if o.contains("::") || o.contains('!') { super::threads::short_name(o) } else { o.to_string() }
}

/// Warnings of every point, as `label: warning` lines.
pub fn notes(doc: &Results) -> Vec<String> {
    let mut out: Vec<String> = stopped(doc).into_iter().collect();
    out.extend(
        doc.points
            .iter()
            .flat_map(|p| p.warnings().into_iter().map(move |w| format!("{}: {w}", p.label()))),
    );
    out.extend(added(doc));
    out.extend(lean(doc));
    out.extend(doc.points.iter().filter_map(memory_gap));
    out.extend(doc.points.iter().filter_map(memory_missed));
    out
}

/// `the sweep stopped before its runs were done (3 of 8 runs): …`, for a sweep interrupted or
/// stopped by a failure with runs still to take: its figures and findings stand on fewer runs
/// than planned, and the next ones may change them.
fn stopped(doc: &Results) -> Option<String> {
    use crate::results::Status;
    if !matches!(doc.status, Status::Interrupted | Status::Failed) {
        return None;
    }
    let taken = doc.run_count();
    let planned: usize =
        doc.points.iter().map(|p| p.runs.len().max(p.target_runs.unwrap_or(0) as usize)).sum();
    (taken < planned).then(|| {
        format!(
            "the sweep stopped before its runs were done ({taken} of {planned} runs): its figures and findings are provisional, and the rest of the runs may change them (run --resume takes them)"
        )
    })
}

/// `threads=4: the tree's resident memory reached 313 MiB between memory readings (run 2; 4 of 4
/// runs so), 90 MiB above the highest reading: its peak PSS may be as much short`, from the sweeps'
/// view of each process's resident set and `wait4`'s largest process, either of which the
/// readings' summed RSS should have reached; where `wait4`'s raised the peak PSS
/// ([`crate::results::RunMemory::at_least_resident`]), says by how much instead.
fn memory_missed(p: &crate::results::PointResult) -> Option<String> {
    use crate::results::{RAISED_BYTES, RAISED_SHARE};
    let missed: Vec<(usize, u64, u64, crate::results::RunMemory)> = p
        .runs
        .iter()
        .enumerate()
        .filter_map(|(i, r)| {
            let m = r.threads.as_ref()?.memory?;
            let seen = m.peak_rss_swept_bytes.max(r.max_rss_bytes);
            let short = seen.saturating_sub(m.peak_rss_bytes);
            (short >= RAISED_BYTES && short as f64 >= RAISED_SHARE * seen as f64)
                .then_some((i, seen, short, m))
        })
        .collect();
    let &(i, seen, short, m) = missed.iter().max_by_key(|m| m.2)?;
    let bytes = |b: u64| super::format::bytes(b as f64);
    let runs = format!("run {}; {} of {} runs so", i + 1, missed.len(), p.runs.len());
    Some(match m.peak_pss_read_bytes {
        Some(read) => format!(
            "{}: a process held {} resident between memory readings ({runs}), {} above the highest reading: its peak PSS counts it, {} where the readings saw {}",
            p.label(),
            bytes(seen),
            bytes(short),
            bytes(m.peak_pss_bytes),
            bytes(read)
        ),
        None => format!(
            "{}: the tree's resident memory reached {} between memory readings ({runs}), {} above the highest reading: its peak PSS may be as much short",
            p.label(),
            bytes(seen),
            bytes(short)
        ),
    })
}

/// `watched lean after a traced run kept 95% or more of its CPUs busy (…): threads=1 (99%, 2 of 3
/// runs lean), …`, the points whose later runs were
/// watched without the tracer (see [`crate::results::ThreadReport::lean`]).
fn lean(doc: &Results) -> Vec<String> {
    let points: Vec<String> = doc
        .points
        .iter()
        .filter_map(|p| {
            let lean: Vec<f64> = p.runs.iter().filter_map(RunRecord::lean).collect();
            let first = *lean.first()?;
            Some(format!(
                "{} ({:.0}%, {} of {} runs lean)",
                p.label(),
                100.0 * first,
                lean.len(),
                p.runs.len()
            ))
        })
        .collect();
    if points.is_empty() {
        return Vec::new();
    }
    vec![format!(
        "watched lean after a traced run kept {:.0}% or more of its CPUs busy (no idle CPUs to explain, and watching takes busy CPUs' time): {}: sampled from /proc at up to {:.0} Hz, no call stacks (--trace-every-run traces every run)",
        100.0 * crate::results::LEAN_BUSY,
        points.join(", "),
        crate::results::LEAN_RATE_HZ
    )]
}

/// A last memory reading before this share of a run leaves its end unread.
const READ_TO: f64 = 0.8;

/// `threads=4: memory was last read 0.59 s into a 1.46 s run (run 2; 1 of 3 runs so): a peak after
/// that is not in its peak PSS`, for runs of half a second or more whose readings stop early and
/// whose sweeps did not watch the resident set to the end (results written before they did: see
/// [`memory_missed`] for the others).
fn memory_gap(p: &crate::results::PointResult) -> Option<String> {
    let gaps: Vec<(usize, f64, f64)> = p
        .runs
        .iter()
        .enumerate()
        .filter_map(|(i, r)| {
            let threads = r.threads.as_ref()?;
            if threads.memory.is_some_and(|m| m.peak_rss_swept_bytes > 0) {
                return None;
            }
            let last = f64::from(*threads.series.as_ref()?.t_s.last()?);
            (r.wall_s >= 0.5 && last < READ_TO * r.wall_s).then_some((i, last, r.wall_s))
        })
        .collect();
    let &(i, last, wall) = gaps.iter().min_by(|a, b| (a.1 / a.2).total_cmp(&(b.1 / b.2)))?;
    Some(format!(
        "{}: memory was last read {last:.2} s into a {wall:.2} s run (run {}; {} of {} runs so): a peak after that is not in its peak PSS",
        p.label(),
        i + 1,
        gaps.len(),
        p.runs.len()
    ))
}

/// What runs the sweep added to decide its verdict, one line per question however many looks it
/// took, and what it could not decide: `threads=1, threads=2: 7 more runs each over 3 looks to
/// tell whether it scales at 2 threads (efficiency 21–158% after 3 runs, then 53–160% after 6,
/// then 60–127% after 8)`.
fn added(doc: &Results) -> Vec<String> {
    let Some(seq) = &doc.sequential else { return Vec::new() };
    // Per look, the points that had runs added for one question; then one question asked at
    // several looks: its runs summed, where it stood at each.
    let mut looks: Vec<(&Added, Vec<String>)> = Vec::new();
    for a in &seq.added {
        let label = doc.points.get(a.point).map_or_else(|| a.point.to_string(), |p| p.label());
        match looks.iter_mut().find(|(b, _)| (b.look, &b.what, b.runs) == (a.look, &a.what, a.runs))
        {
            Some((_, labels)) => labels.push(label),
            None => looks.push((a, vec![label])),
        }
    }
    let mut questions: Vec<(Vec<String>, &str, u32, Vec<&str>)> = Vec::new();
    for (a, labels) in looks {
        match questions.iter_mut().find(|q| q.0 == labels && q.1 == a.what) {
            Some(q) => {
                q.2 += a.runs;
                q.3.push(&a.now);
            }
            None => questions.push((labels, &a.what, a.runs, vec![&a.now])),
        }
    }
    let mut out: Vec<String> = questions
        .into_iter()
        .map(|(labels, what, runs, now)| {
            let each = if labels.len() > 1 { " each" } else { "" };
            let over =
                if now.len() > 1 { format!(" over {} looks", now.len()) } else { String::new() };
            let now: Vec<&str> = now.into_iter().filter(|n| !n.is_empty()).collect();
            let now = if now.is_empty() { String::new() } else { format!(" ({})", then(&now)) };
            format!(
                "{}: {runs} more run{}{each}{over} to tell {what}{now}",
                labels.join(", "),
                if runs == 1 { "" } else { "s" }
            )
        })
        .collect();
    let why = seq.stopped_by.as_ref().map(|w| format!("{w}; ")).unwrap_or_default();
    out.extend(seq.undecided.iter().map(|u| {
        format!(
            "still undecided after {:.0} s of added runs ({why}budget {:.0} s, --budget): {u}",
            seq.spent_s, seq.budget_s
        )
    }));
    out
}

/// Where a question stood at each look: `efficiency 21–158% after 3 runs, then 53–160% after 6`,
/// the name of the measure the looks share said once.
fn then(now: &[&str]) -> String {
    let mut out = now[0].to_string();
    for (prev, n) in now.iter().zip(&now[1..]) {
        let shared = |a: &str| a.split(' ').next().map(str::to_string).unwrap_or_default();
        let mut n = n.to_string();
        let word = shared(prev);
        // The measure's name (`efficiency`), not a figure (`1 thread at 0.80–1.30×`).
        let name = !word.is_empty() && !word.chars().any(|c| c.is_ascii_digit());
        if name && shared(&n) == word && n.len() > word.len() {
            n = n[word.len() + 1..].to_string();
        }
        out.push_str(&format!(", then {}", n.trim_end_matches(" runs")));
    }
    out
}

/// Lines comparing each point's read rate with the measured ceiling of its input files.
pub fn ceiling(doc: &Results) -> Vec<String> {
    let Some(c) = &doc.ceiling else { return vec![] };
    let mut lines = vec![format!(
        "readspeed over {} ({}): {}",
        c.files.join(" "),
        if c.cold { "evicted before each read" } else { "as cached" },
        c.points
            .iter()
            .map(|p| format!("{} {:.1} MB/s", threads(p.threads), p.bytes_per_s / 1e6))
            .collect::<Vec<_>>()
            .join(", ")
    )];
    let Some(name) = doc.plan.axis.as_ref().map(|a| a.param.clone()) else { return lines };
    for p in &doc.points {
        let count =
            p.params.get(&name).and_then(|v| v.as_f64().or_else(|| v.as_str()?.parse().ok()));
        let (Some(count), Some(rate)) = (count, crate::diagnose::evidence::read_rate(p, c.cold))
        else {
            continue;
        };
        if let Some(r) = c.judge(count, rate) {
            let share = if r.above() {
                "above the ceiling (an underestimate here)".to_string()
            } else {
                format!("= {:.0}% of the ceiling", 100.0 * r.share)
            };
            lines.push(format!(
                "{}: the job read {:.1} MB/s {share} at {}",
                p.label(),
                rate / 1e6,
                threads(r.point.threads)
            ));
        }
    }
    lines
}

fn threads(n: u32) -> String {
    format!("{n} thread{}", if n == 1 { "" } else { "s" })
}

#[cfg(test)]
mod tests {
    use super::then;

    #[test]
    fn looks_at_one_question_say_the_measure_once_and_every_figure() {
        assert_eq!(
            then(&["efficiency 71–111% after 3 runs", "efficiency 69–115% after 5 runs"]),
            "efficiency 71–111% after 3 runs, then 69–115% after 5"
        );
        assert_eq!(
            then(&[
                "1 thread at 0.80–1.30× the speed of 2 threads after 3 runs",
                "1 thread at 0.91–1.24× the speed of 2 threads after 5 runs"
            ]),
            "1 thread at 0.80–1.30× the speed of 2 threads after 3 runs, then 1 thread at 0.91–1.24× the speed of 2 threads after 5"
        );
    }
}
