//! A command that runs for a fixed time (`stress-ng -t 1`, `sysbench --time`, fio's `time_based`)
//! does more work at more threads, not the same work sooner: every count's runs take the same
//! time while the CPU they use grows, and a speed-up from that wall time says nothing.

use super::{Finding, Kind, Severity};
use crate::analysis::count_label;
use crate::results::Results;
use crate::results::analysis::SeriesAnalysis;

/// Every count's median wall time within this share of the others', and each count's runs as
/// tight, is the same time.
const SAME_WALL: f64 = 0.02;
/// Runs shorter than this are start-up's, not a time limit's.
const LONG_ENOUGH_S: f64 = 0.3;
/// The top count's CPU use at least this many times the baseline's: more was done.
const MORE_CPU: f64 = 1.3;
/// Options that set a run's length in common tools.
const DURATION_FLAGS: [&str; 7] =
    ["-t", "--time", "--timeout", "--duration", "--seconds", "--runtime", "--time_based"];

/// The finding, when every count's runs took the same time while the CPU they used grew from the
/// baseline to the top count, and the runs do not give their work (with `--metric` or `--work`
/// the speed-up comes from the work).
pub fn fixed_time(doc: &Results, s: &SeriesAnalysis, name: &str, label: &str) -> Option<Finding> {
    let base = s.points.iter().find(|p| p.count == s.baseline)?;
    let top = s.points.iter().rfind(|p| p.count >= 2.0 * base.count)?;
    if s.points.iter().any(|p| doc.points[p.index].runs.iter().any(|r| r.throughput.is_some())) {
        return None;
    }
    let walls: Vec<(f64, f64)> = s
        .points
        .iter()
        .map(|p| {
            let w = doc.points[p.index].stats().wall_s?;
            (w.n >= 2 && w.rel_stddev() <= SAME_WALL).then_some((p.count, w.median))
        })
        .collect::<Option<_>>()?;
    let (lo, hi) = walls.iter().fold((f64::INFINITY, 0.0f64), |(a, b), w| (a.min(w.1), b.max(w.1)));
    let (cpu_b, cpu_t) = (base.cpu_pct?, top.cpu_pct?);
    let commands: Vec<&[String]> =
        s.points.iter().map(|p| doc.points[p.index].command.as_slice()).collect();
    let flag = duration_flag(&commands);
    // A baseline that kept the CPUs busy cannot use much more: then the command's own length
    // option tells.
    if lo < LONG_ENOUGH_S
        || hi > lo * (1.0 + SAME_WALL)
        || (cpu_t < MORE_CPU * cpu_b.max(1.0) && flag.is_none())
    {
        return None;
    }
    let (b, t) = (count_label(base.count, name), count_label(top.count, name));
    let mut evidence = vec![
        format!(
            "median wall time: {}",
            walls
                .iter()
                .map(|(c, w)| format!("{}: {w:.3} s", count_label(*c, name)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        format!("%CPU {cpu_b:.0} at {b}, {cpu_t:.0} at {t}"),
    ];
    evidence
        .extend(flag.map(|f| format!("the command sets a length, the same at every count: '{f}'")));
    Some(Finding {
        noise: None,
        kind: Kind::FixedTime,
        severity: Severity::High,
        summary: format!(
            "every count's runs took the same time ({}) while the CPU they used grew {:.1}× from {b} to {t}: the command seems to run for a fixed time, doing more work at more {name} rather than the same work sooner, so a speed-up from its wall time says nothing{label}",
            if format!("{lo:.3}") == format!("{hi:.3}") {
                format!("{lo:.3} s")
            } else {
                format!("{lo:.3}–{hi:.3} s")
            },
            cpu_t / cpu_b.max(1.0)
        ),
        evidence,
        advice: "give the work each run did (--metric 'REGEX' on a figure it prints, such as stress-ng --metrics-brief's bogo ops/s, or --work), or make it do a fixed amount of work (an operation count instead of a time limit)".into(),
        cost_pct: None,
        cost_per_run_pct: Vec::new(),
        at: Some(top.count),
        what_if: None,
    })
}

/// A copy whose CPU time with the others fell below this share of its CPU time alone, in the same
/// wall time, did less work rather than the same work slower.
const LESS_WORK: f64 = 0.8;
/// A copy alone on a CPU for at least this share of its wall time: its CPU time measures its work.
const ON_CPU: f64 = 0.3;

/// For copies, whose CPU grows with their number whether or not they run for a fixed time: each
/// copy took as long with the others as alone (`walls`: alone, together), while the CPU time it
/// used (`cpus`) fell. Then its wall time cannot tell whether copies slow each other (four copies
/// of `sysbench cpu --time=2` on 2 CPUs each took 2.0 s and read "they do not slow each other",
/// each on a CPU 20% of the time); the finding says so, and the share of its CPU time each copy
/// kept, which then stands for its speed, is returned beside it.
pub fn copies(
    commands: &[&[String]],
    (base, top): (f64, f64),
    walls: (f64, f64),
    cpus: (f64, f64),
    label: &str,
) -> Option<(Finding, f64)> {
    let ((wall_b, wall_t), (cpu_b, cpu_t)) = (walls, cpus);
    let kept = cpu_t / cpu_b;
    if wall_b < LONG_ENOUGH_S
        || cpu_b < ON_CPU * wall_b
        || kept >= LESS_WORK
        || (wall_t / wall_b - 1.0).abs() > 0.1
    {
        return None;
    }
    let mut evidence = vec![
        format!(
            "a copy takes {wall_t:.3} s with {} running, {wall_b:.3} s with {}",
            count_label(top, "copies"),
            count_label(base, "copies")
        ),
        format!("a copy used {cpu_t:.3} s of CPU with {top:.0} running, {cpu_b:.3} s alone"),
    ];
    evidence.extend(
        duration_flag(commands)
            .map(|f| format!("the command sets a length, the same for every copy: '{f}'")),
    );
    let finding = Finding {
        noise: None,
        kind: Kind::FixedTime,
        severity: Severity::High,
        summary: format!(
            "each copy ran as long with {top:.0} running as alone while using {:.0}% of the CPU time it used alone: the command seems to run for a fixed time, doing less work beside the others rather than the same work slower, so its wall time cannot tell whether copies slow each other; their CPU time is judged instead{label}",
            100.0 * kept
        ),
        evidence,
        advice: "give the work each copy did (--metric 'REGEX' on a figure it prints, or --work), or make it do a fixed amount of work (an operation count instead of a time limit)".into(),
        cost_pct: None,
        cost_per_run_pct: Vec::new(),
        at: Some(top),
        what_if: None,
    };
    Some((finding, kept))
}

/// The first option that sets a run's length in every one of `commands` (the points' argvs), with
/// the same value in all: `-t 1`. An option whose value changes with the count (`bwa mem -t
/// {threads}`) is the count, not a length.
fn duration_flag(commands: &[&[String]]) -> Option<String> {
    let options = |command: &[String]| -> Vec<String> {
        let words: Vec<&str> = command.iter().flat_map(|a| a.split_whitespace()).collect();
        words
            .iter()
            .enumerate()
            .filter(|(_, w)| DURATION_FLAGS.contains(&w.split('=').next().unwrap_or(w)))
            .map(|(i, w)| match words.get(i + 1).filter(|_| !w.contains('=')) {
                Some(v) if !v.starts_with('-') => format!("{w} {v}"),
                _ => (*w).to_string(),
            })
            // A length of 0 is none (sysbench's `--time=0` runs until its events are done).
            .filter(|o| !o.ends_with("=0") && !o.ends_with(" 0"))
            .collect()
    };
    let (first, rest) = commands.split_first()?;
    options(first).into_iter().find(|o| rest.iter().all(|c| options(c).contains(o)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(s: &str) -> Vec<String> {
        s.split(' ').map(String::from).collect()
    }

    #[test]
    fn a_length_option_is_one_whose_value_every_count_shares() {
        let flag = |cmds: &[&str]| {
            let v: Vec<Vec<String>> = cmds.iter().map(|c| argv(c)).collect();
            duration_flag(&v.iter().map(Vec::as_slice).collect::<Vec<_>>())
        };
        assert_eq!(
            flag(&["stress-ng --pipe 1 -t 1", "stress-ng --pipe 2 -t 1"]),
            Some("-t 1".into())
        );
        assert_eq!(
            flag(&["sysbench --time=10 --threads=1", "sysbench --time=10 --threads=2"]),
            Some("--time=10".into())
        );
        let shell =
            |n: u32| vec!["sh".to_string(), "-c".into(), format!("fio --runtime 5 --numjobs={n}")];
        assert_eq!(
            duration_flag(&[shell(1).as_slice(), shell(2).as_slice()]),
            Some("--runtime 5".into())
        );
        assert_eq!(flag(&["bwa mem -t 1 ref.fa", "bwa mem -t 2 ref.fa"]), None);
        assert_eq!(flag(&["pigz -p 1 -c big", "pigz -p 2 -c big"]), None);
        assert_eq!(flag(&["sysbench --time=0 --threads=1", "sysbench --time=0 --threads=2"]), None);
    }
}
