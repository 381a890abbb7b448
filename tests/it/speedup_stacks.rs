//! Speed-up stacks end to end: a sweep of a probe with a known problem splits each count into its
//! speed-up and the cores that problem took, prints and stores the stacks, and a probe that scales
//! has no cause taking a large part.

use crate::common;
use common::*;
use scalescope::results::{Results, SpeedupStack};

fn stack<'a>(doc: &'a Results, label: &str) -> &'a SpeedupStack {
    doc.stacks
        .iter()
        .find(|s| doc.points[s.point].label() == label)
        .unwrap_or_else(|| panic!("a stack at {label}: {:?}", doc.stacks))
}

fn cores(s: &SpeedupStack, cause: &str) -> f64 {
    s.parts.iter().filter(|p| p.cause == cause).map(|p| p.cores).sum()
}

#[test]
fn a_global_lock_takes_the_largest_part_and_threads_without_a_cpu_are_counted() {
    let _guard = common::measuring();
    let d = tempfile::tempdir().unwrap();
    let exe = bin().to_string_lossy().into_owned();
    let command = [exe.as_str(), "probe", "lock", "--threads", "{threads}", "--critical", "0.6"];
    let o = sweep(d.path(), "-r 3 -w 0 --param threads=1,2,4", &command);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc = results(&d.path().join("r"));
    assert_eq!(doc.stacks.len(), 2, "one stack per count above the baseline: {:?}", doc.stacks);
    let two = stack(&doc, "threads=2");
    // The job's own largest part: the hypervisor (steal) and other processes may take more of a
    // shared machine's CPUs during a sweep, and are theirs.
    let machine = ["stolen", "other processes"];
    let lock = two.parts.iter().find(|p| !machine.contains(&p.cause.as_str())).expect("parts");
    assert!(
        lock.cause == "lock" && lock.object.as_deref().is_some_and(|o| o.contains("GLOBAL_LOCK")),
        "{two:?}"
    );
    assert!(
        lock.cores >= 0.3,
        "60% of the work under one lock idles a good part of a CPU: {two:?}"
    );
    // The parts add up to the count, and the ledger explains the loss: little is left over.
    assert!((two.speedup + two.lost() + two.unexplained - 2.0).abs() < 1e-9, "{two:?}");
    assert!(two.unexplained.abs() < 0.3, "{two:?}");
    let four = stack(&doc, "threads=4");
    let cpus = scalescope::machine::allowed_cpus() as f64;
    let no_cpu = (4.0 - cpus).max(0.0);
    assert!((cores(four, "no CPU") - no_cpu).abs() < 0.1, "{four:?}");
    let text = stdout(&o);
    assert!(text.contains("speed-up stacks (cores)") && text.contains("threads=2: 2 = "), "{text}");
    assert!(
        text.lines().any(|l| l.contains("threads=2: 2 = ") && l.contains(" lock (GLOBAL_LOCK)")),
        "{text}"
    );
    let html = std::fs::read_to_string(d.path().join("r/report.html")).unwrap();
    assert!(html.contains("Speed-up stacks"), "the report draws them");
}

#[test]
fn a_probe_that_scales_gives_its_count_to_the_speed_up() {
    let _guard = common::measuring();
    let d = tempfile::tempdir().unwrap();
    let exe = bin().to_string_lossy().into_owned();
    let o = sweep(
        d.path(),
        "-r 3 -w 0 --param threads=1,2",
        &[&exe, "probe", "scalable", "--threads", "{threads}"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let doc = results(&d.path().join("r"));
    let two = stack(&doc, "threads=2");
    // Other processes may hold a CPU meanwhile on a shared machine: their part is theirs.
    let theirs = cores(two, "other processes") + cores(two, "stolen");
    let own = two.lost() - theirs;
    assert!(two.speedup + theirs >= 1.6 && own < 0.3, "{two:?}");
    assert!(!two.parts.iter().any(|p| p.cause == "lock" && p.cores >= 0.1), "{two:?}");
}

#[test]
fn a_baseline_that_keeps_two_cpus_busy_gives_them_a_part_of_their_own() {
    let _guard = common::measuring();
    let d = tempfile::tempdir().unwrap();
    let exe = bin().to_string_lossy().into_owned();
    // Two worker threads for each count: the baseline already fills both CPUs.
    let script =
        format!("exec '{exe}' probe scalable --ops 200000000 --threads $(( {{threads}} * 2 ))");
    let o = sweep(d.path(), "-r 3 -w 0 --param threads=1,2", &["sh", "-c", &script]);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc = results(&d.path().join("r"));
    let two = stack(&doc, "threads=2");
    let busy = cores(two, "busy baseline");
    // Other processes may take a share of the baseline's CPUs on a shared machine.
    assert!(
        busy >= 0.5 && two.speedup <= 1.4,
        "the baseline's second CPU is its own part: {two:?}"
    );
    assert!(two.unexplained.abs() < 0.35, "{two:?}");
    assert!((two.speedup + two.lost() + two.unexplained - 2.0).abs() < 1e-9, "{two:?}");
    let text = stdout(&o);
    assert!(
        text.lines().any(|l| l.contains("threads=2: 2 = ") && l.contains(" busy baseline (")),
        "{text}"
    );
}
