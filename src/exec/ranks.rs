//! The parts of a launched run: every rank (or local copy) runs under `scalescope agent`, which
//! writes what it measured to `rank-NNNNN.json` in the run's parts folder; the coordinator reads
//! them all and merges them into the run: CPU time summed over ranks, peak memory the largest
//! (`wait4`'s; the trees' PSS and series summed at common instants),
//! throughput the ranks' work over the span they ran in (the sum of their throughputs across
//! nodes), and a failed or missing rank fails the run while
//! every other rank's figures are kept.

use super::metrics::json_number;
use crate::files;
use crate::results::{RankPart, RunRecord, ThreadReport};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The file a rank writes into the parts folder.
pub fn part_path(dir: &Path, rank: u32) -> PathBuf {
    dir.join(format!("rank-{rank:05}.json"))
}

/// Writes a part atomically (a temporary file renamed into place).
pub fn write(dir: &Path, part: &RankPart) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let path = part_path(dir, part.rank);
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    files::write(&tmp, &serde_json::to_vec(part).map_err(std::io::Error::other)?)?;
    std::fs::rename(tmp, path)
}

/// Every readable part in `dir`, by rank; unreadable files are skipped (that rank counts as missing).
pub fn read_all(dir: &Path) -> Vec<RankPart> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut parts: Vec<RankPart> = entries
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().ends_with(".json"))
        .filter_map(|e| serde_json::from_slice(&std::fs::read(e.path()).ok()?).ok())
        .collect();
    parts.sort_by_key(|p| p.rank);
    parts.dedup_by_key(|p| p.rank);
    parts
}

/// Merges the parts of `expected` ranks into the run measured by the launcher; unless the
/// throughput comes from `--work` (`work_based`), it becomes the ranks' joint throughput.
pub fn merge(run: &mut RunRecord, parts: Vec<RankPart>, expected: u32, work_based: bool) {
    run.missing_ranks = (0..expected).filter(|r| !parts.iter().any(|p| p.rank == *r)).collect();
    if !parts.is_empty() {
        run.user_s = parts.iter().map(|p| p.user_s).sum();
        run.sys_s = parts.iter().map(|p| p.sys_s).sum();
        run.cpu_pct =
            if run.wall_s > 0.0 { 100.0 * (run.user_s + run.sys_s) / run.wall_s } else { 0.0 };
        run.max_rss_bytes = parts.iter().map(|p| p.max_rss_bytes).max().unwrap_or(0);
        run.storage_read_bytes = parts.iter().map(|p| p.storage_read_bytes).sum();
        run.syscall_read_bytes = parts.iter().map(|p| p.syscall_read_bytes).sum();
        let tps: Option<Vec<f64>> =
            parts.iter().map(|p| p.metrics.get("throughput").and_then(Value::as_f64)).collect();
        match tps.filter(|_| parts.len() as u32 == expected) {
            Some(tps) => {
                let sum = joint_throughput(&parts, &tps).unwrap_or_else(|| tps.iter().sum());
                run.metrics.insert("throughput".into(), json_number(sum));
                if !work_based {
                    run.throughput = Some(sum);
                }
            }
            None if !work_based => run.throughput = None,
            None => {}
        }
        // Copies on one node read one clock: their series are laid on it by when each started.
        let one_node = parts.iter().all(|p| p.node == parts[0].node);
        let earliest = parts.iter().filter_map(|p| p.started_unix_s).reduce(f64::min);
        let start = |p: &RankPart| match (p.started_unix_s, earliest) {
            (Some(s), Some(e)) if one_node => s - e,
            _ => 0.0,
        };
        let reports: Vec<(&ThreadReport, f64)> =
            parts.iter().filter_map(|p| Some((p.threads.as_ref()?, start(p)))).collect();
        if let Some(mut first) = crate::sample::report_of_parts(&reports) {
            // Copies on one node share its CPUs: their capacity is at most those.
            if let Some(c) =
                first.capacity.as_mut().filter(|_| parts.iter().all(|p| p.node == parts[0].node))
            {
                c.cpus = c.cpus.min(crate::machine::allowed_cpus().max(1) as f64);
            }
            run.threads = Some(Box::new(first));
        }
    }
    let failed = parts.iter().find(|p| !p.succeeded());
    // The launcher passes a failed copy's end on as an exit code (139 for SIGSEGV): the copy's
    // own status says what happened.
    let passed_on =
        |f: &RankPart| run.exit_code == Some(0) || run.exit_code == Some(f.agent_exit_code());
    if let Some(f) = failed.filter(|f| passed_on(f)) {
        run.exit_code = f.exit_code;
        run.signal = f.signal;
    } else if run.exit_code == Some(0) && !run.missing_ranks.is_empty() {
        run.exit_code = None;
    }
    run.ranks = parts;
}

/// The throughput of ranks on one node, each rate `tps[i]` taken over its own life: the work
/// they did together (each rate times its wall time) over the span from the first start to the
/// last end. Ranks that take turns on the CPUs end at different times, and a rank that ran while
/// others had ended has a rate above its share: summing the rates counted 4 ranks on 2 CPUs 6–7%
/// faster than 2. `None` across nodes (their clocks are not one) or without start times.
fn joint_throughput(parts: &[RankPart], tps: &[f64]) -> Option<f64> {
    if parts.iter().any(|p| p.node != parts[0].node || p.wall_s <= 0.0) {
        return None;
    }
    let starts: Option<Vec<f64>> = parts.iter().map(|p| p.started_unix_s).collect();
    let starts = starts?;
    let first = starts.iter().copied().reduce(f64::min)?;
    let last = parts.iter().zip(&starts).map(|(p, s)| s + p.wall_s).reduce(f64::max)?;
    let work: f64 = parts.iter().zip(tps).map(|(p, tp)| tp * p.wall_s).sum();
    (last > first).then(|| work / (last - first))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Map;

    fn part(rank: u32, user: f64, tp: f64, exit: i32) -> RankPart {
        let mut metrics = Map::new();
        metrics.insert("throughput".into(), tp.into());
        RankPart {
            rank,
            node: "n".into(),
            wall_s: 1.0,
            user_s: user,
            exit_code: Some(exit),
            metrics,
            max_rss_bytes: 10 * (rank as u64 + 1),
            ..Default::default()
        }
    }

    #[test]
    fn ranks_add_up_and_a_failed_or_missing_rank_fails_the_run() {
        let d = tempfile::tempdir().unwrap();
        for p in [part(1, 2.0, 30.0, 0), part(0, 1.0, 10.0, 0)] {
            write(d.path(), &p).unwrap();
        }
        std::fs::write(d.path().join("rank-00007.json"), "{ truncated").unwrap();
        let parts = read_all(d.path());
        assert_eq!(parts.iter().map(|p| p.rank).collect::<Vec<_>>(), [0, 1]);
        let mut run = RunRecord { wall_s: 2.0, exit_code: Some(0), ..Default::default() };
        merge(&mut run, parts.clone(), 2, false);
        assert_eq!(
            (run.user_s, run.cpu_pct, run.throughput, run.max_rss_bytes),
            (3.0, 150.0, Some(40.0), 20)
        );
        assert!(run.succeeded() && run.missing_ranks.is_empty());
        let mut run = RunRecord { wall_s: 2.0, exit_code: Some(0), ..Default::default() };
        merge(&mut run, parts.clone(), 3, false);
        assert_eq!(
            (run.missing_ranks.clone(), run.succeeded(), run.throughput),
            (vec![2], false, None)
        );
        let mut run = RunRecord { wall_s: 2.0, exit_code: Some(0), ..Default::default() };
        merge(&mut run, vec![part(0, 1.0, 10.0, 0), part(1, 1.0, 10.0, 3)], 2, false);
        assert_eq!((run.exit_code, run.ranks.len()), (Some(3), 2));
    }

    #[test]
    fn ranks_that_end_apart_are_read_over_the_span_they_ran_in() {
        // Two ranks of 10 units: one ran alone for its last half second, at a rate its share of
        // the CPUs did not give it while both ran.
        let at = |rank, start: f64, wall: f64| RankPart {
            started_unix_s: Some(start),
            wall_s: wall,
            ..part(rank, 1.0, 10.0 / wall, 0)
        };
        let mut run = RunRecord { wall_s: 2.0, exit_code: Some(0), ..Default::default() };
        merge(&mut run, vec![at(0, 100.0, 1.5), at(1, 100.0, 2.0)], 2, false);
        let tp = run.throughput.unwrap();
        assert!((tp - 10.0).abs() < 1e-9, "20 units in 2 s, not {tp} (the rates sum to 11.67)");
        // Across nodes the clocks are not one: the rates add up.
        let mut far = at(1, 100.0, 2.0);
        far.node = "m".into();
        let mut run = RunRecord { wall_s: 2.0, exit_code: Some(0), ..Default::default() };
        merge(&mut run, vec![at(0, 100.0, 1.5), far], 2, false);
        assert!((run.throughput.unwrap() - (10.0 / 1.5 + 5.0)).abs() < 1e-9);
    }
}
