//! Beyond one process: local copies, ranks through a real one-node SLURM (`srun`) and OpenMPI
//! (`mpirun`), merged parts, straggler and failed ranks, copies that do or do not interfere, and
//! zipped ranks × threads grids. The SLURM and MPI tests are ignored unless asked for (`cargo test
//! -- --include-ignored`); `.ci/run` starts SLURM and runs them.

use crate::common;

use common::{bin, results, scalescope, stderr, stdout};
use scalescope::plan::LauncherKind;
use scalescope::results::Results;
use scalescope::results::findings::{Finding, Kind};
use std::path::Path;

fn run(dir: &Path, options: &[&str], command: &[&str]) -> std::process::Output {
    let mut args = vec!["run", "-o", "r", "-w", "0"];
    args.extend(options);
    args.push("--");
    args.extend(command);
    scalescope(dir, &args)
}

fn kinds(doc: &Results) -> Vec<Kind> {
    doc.findings.iter().map(|f| f.kind).collect()
}

fn finding(doc: &Results, kind: Kind) -> &Finding {
    doc.findings
        .iter()
        .find(|f| f.kind == kind)
        .unwrap_or_else(|| panic!("no {kind:?}: {:#?}", doc.findings))
}

/// A metric of a run or a rank.
fn metric(metrics: &serde_json::Map<String, serde_json::Value>, name: &str) -> f64 {
    metrics.get(name).and_then(|v| v.as_f64()).unwrap_or_else(|| panic!("no metric {name}"))
}

fn probe(threads: &str) -> Vec<String> {
    [
        bin().display().to_string(),
        "probe".into(),
        "scalable".into(),
        "--threads".into(),
        threads.into(),
        "--ops".into(),
        "150000000".into(),
    ]
    .to_vec()
}

#[test]
fn copies_of_a_cpu_probe_are_independent_and_their_figures_add_up() {
    let _g = common::measuring();
    let d = tempfile::tempdir().unwrap();
    let p = probe("1");
    let cmd: Vec<&str> = p.iter().map(String::as_str).collect();
    let o = run(d.path(), &["-r", "3", "--copies", "2"], &cmd);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc = results(&d.path().join("r"));
    let run2 = &doc.points[1].runs[0];
    let ranks = &run2.ranks;
    assert_eq!(ranks.len(), 2);
    // The copies' work over the span they ran in (a disturbed host that runs them partly apart
    // makes it 19% less than their rates summed, as in one CI run).
    two_ranks_merged(&doc, 1);
    let sum_user: f64 = ranks.iter().map(|r| r.user_s).sum();
    assert!((run2.user_s - sum_user).abs() < 1e-9);
    assert!(ranks.iter().all(|r| r.threads.is_some()), "each copy is sampled");
    let k = kinds(&doc);
    // Each copy's speed with two running against one alone: two CPU-bound copies on two CPUs keep
    // it near 100%, but this VM's host at times gives two busy vCPUs 77-80% each (measured with
    // the machine to the test alone). What must hold: the verdict follows the figure, and no cause
    // the copies do not have (a lock, the kernel, a straggler) is named.
    let wall = |p: usize| {
        let w: Vec<f64> =
            doc.points[p].runs.iter().flat_map(|r| r.ranks.iter().map(|x| x.wall_s)).collect();
        w.iter().sum::<f64>() / w.len() as f64
    };
    let each = wall(0) / wall(1);
    if each >= 0.9 {
        assert!(k.contains(&Kind::CopiesIndependent), "each copy at {:.0}%: {k:?}", 100.0 * each);
    } else {
        eprintln!("note: each copy ran at {:.0}% of one alone (a busy machine)", 100.0 * each);
    }
    if each >= 0.8 {
        assert!(!k.contains(&Kind::CopiesInterfere), "each copy at {:.0}%: {k:?}", 100.0 * each);
    }
    for silent in
        [Kind::RankImbalance, Kind::FailedRanks, Kind::LockContention, Kind::KernelContention]
    {
        assert!(!k.contains(&silent), "{silent:?}: {k:?}");
    }
}

/// Two copies of a CPU-bound probe beside two threads of another program that keep both CPUs
/// busy: each copy runs well below one alone's speed, but the CPUs free of the other program
/// explain it. No shared resource is claimed; the machine's load is said.
#[test]
fn copies_slowed_by_other_processes_are_not_said_to_interfere() {
    let _g = common::measuring();
    let d = tempfile::tempdir().unwrap();
    let mut hog = std::process::Command::new(bin())
        .args(["probe", "scalable", "--threads", "2", "--seconds", "60"])
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let cmd = probe("1");
    let cmd: Vec<&str> = cmd.iter().map(String::as_str).collect();
    let o = run(d.path(), &["-r", "3", "--copies", "2"], &cmd);
    let _ = hog.kill();
    let _ = hog.wait();
    assert!(o.status.success(), "{}", stderr(&o));
    let doc = results(&d.path().join("r"));
    let k = kinds(&doc);
    assert!(!k.contains(&Kind::CopiesInterfere), "{:#?}", doc.findings);
    assert!(k.contains(&Kind::NoisyMeasurement), "the machine's load is said: {:#?}", doc.findings);
}

/// Copies of a probe that runs for a fixed time, twice as many as the CPUs: each takes as long as
/// alone, which is no sign that they do not slow each other. The finding says the command runs for
/// a fixed time and judges the copies by their CPU time: they take turns on the CPUs.
#[test]
fn copies_that_run_for_a_fixed_time_are_judged_by_their_cpu_time() {
    let _g = common::measuring();
    let d = tempfile::tempdir().unwrap();
    let cpus = scalescope::machine::allowed_cpus();
    let copies = (2 * cpus).to_string();
    let p = bin().display().to_string();
    let cmd = [&p, "probe", "scalable", "--threads", "1", "--seconds", "0.6"];
    let o = run(d.path(), &["-r", "2", "--param", &format!("copies=1,{copies}")], &cmd);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc = results(&d.path().join("r"));
    let f = finding(&doc, Kind::FixedTime);
    assert!(
        f.summary.contains("ran as long with") && f.evidence.iter().any(|e| e.contains("s of CPU")),
        "{f:?}"
    );
    assert!(f.evidence.iter().any(|e| e.contains("'--seconds 0.6'")), "{f:?}");
    let k = kinds(&doc);
    assert!(!k.contains(&Kind::CopiesIndependent), "{:#?}", doc.findings);
    assert!(!k.contains(&Kind::CopiesInterfere), "{:#?}", doc.findings);
    let over = finding(&doc, Kind::CpuOversubscription);
    assert!(over.summary.contains("by CPU time"), "{over:?}");
}

/// Four copies of a one-thread probe on this machine's CPUs (fewer than four): they take turns
/// on the CPUs, which is said as such, with how many fit; no shared resource is claimed.
#[test]
fn more_copies_than_cpus_take_turns_and_the_finding_says_how_many_fit() {
    let _g = common::measuring();
    let cpus = scalescope::machine::allowed_cpus();
    if cpus >= 4 {
        eprintln!("note: {cpus} CPUs: four copies fit, nothing to test");
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let cmd = probe("1");
    let cmd: Vec<&str> = cmd.iter().map(String::as_str).collect();
    let o = run(d.path(), &["-r", "3", "--param", "copies=1,4"], &cmd);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc = results(&d.path().join("r"));
    let f = finding(&doc, Kind::CpuOversubscription);
    assert!(
        f.summary.contains("4 copies want") && f.advice.contains(&format!("at most {cpus} ")),
        "{f:?}"
    );
    assert!(!kinds(&doc).contains(&Kind::CopiesInterfere), "{:#?}", doc.findings);
}

#[test]
fn copies_serialised_on_a_lock_file_interfere_and_the_lock_is_named() {
    let _g = common::measuring();
    let d = tempfile::tempdir().unwrap();
    let lock = d.path().join("lockfile").display().to_string();
    let mut cmd = vec!["flock".to_string(), lock];
    cmd.extend(probe("1"));
    let cmd: Vec<&str> = cmd.iter().map(String::as_str).collect();
    // A host whose other guests or processes took a tenth of a point's CPUs slows one copy alone
    // as much as the lock slows two: such a sweep is taken again, up to three times.
    let mut attempt = 1;
    let (o, doc) = loop {
        let _ = std::fs::remove_dir_all(d.path().join("r"));
        let o = run(d.path(), &["-r", "3", "--copies", "2"], &cmd);
        assert!(o.status.success(), "{}", stderr(&o));
        let doc = results(&d.path().join("r"));
        let disturbed = common::stolen_share(&doc).max(common::other_load_share(&doc));
        if kinds(&doc).contains(&Kind::CopiesInterfere) || disturbed < 0.1 || attempt == 3 {
            break (o, doc);
        }
        eprintln!(
            "note: the host or other processes took {:.0}% of a point's CPUs in sweep {attempt}: swept again",
            100.0 * disturbed
        );
        attempt += 1;
    };
    let f = finding(&doc, Kind::CopiesInterfere);
    let ev = f.evidence.join("\n");
    assert!(ev.contains("a copy takes") && ev.contains("flock"), "{f:?}");
    let out = stdout(&o);
    assert!(
        out.contains("copies=2 rank 1 on") && out.contains("klock"),
        "every rank's breakdown is shown: {out}"
    );
    assert!(!kinds(&doc).contains(&Kind::CopiesIndependent));
}

#[test]
fn a_straggler_rank_is_named_and_a_crashed_rank_is_kept_as_failed() {
    let _g = common::measuring();
    let d = tempfile::tempdir().unwrap();
    let slow = r#"if [ "$SCALESCOPE_RANK" = 1 ]; then sleep 0.5; else sleep 0.1; fi"#;
    let o = run(d.path(), &["-r", "2", "--no-sample", "--param", "copies=2", "--shell"], &[slow]);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc = results(&d.path().join("r"));
    let f = finding(&doc, Kind::RankImbalance);
    assert!(f.summary.contains("rank 1 on"), "{f:?}");
    assert!(!kinds(&doc).contains(&Kind::FailedRanks));

    let _ = std::fs::remove_dir_all(d.path().join("r"));
    let crash =
        r#"if [ "$SCALESCOPE_RANK" = 1 ]; then exit 3; fi; echo scalescope-metric throughput 5"#;
    let o = run(
        d.path(),
        &["-r", "2", "--no-sample", "-i", "--param", "copies=2", "--shell"],
        &[crash],
    );
    // A run whose rank failed failed: with every run so, nothing was measured (exit code 1).
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("every run failed (the first: exit code 3)"), "{}", stderr(&o));
    let doc = results(&d.path().join("r"));
    let r0 = &doc.points[0].runs[0];
    assert_eq!(r0.exit_code, Some(3), "{r0:?}");
    assert_eq!(r0.ranks[0].exit_code, Some(0));
    assert_eq!(metric(&r0.ranks[0].metrics, "throughput"), 5.0);
    let f = finding(&doc, Kind::FailedRanks);
    assert!(f.evidence[0].contains("rank 1 on") && f.evidence[0].contains("exit code 3"), "{f:?}");
}

/// A copy killed by a signal is named with its signal, not the exit code the launcher passed on,
/// and the lines shown are its own, not those of a healthy copy that printed last.
#[test]
fn a_crashed_copy_is_named_by_its_signal_with_its_own_output() {
    let d = tempfile::tempdir().unwrap();
    let crash = r#"if [ "$SCALESCOPE_RANK" = 1 ]; then echo copy-one-dying; kill -SEGV $$; fi; sleep 0.2; echo healthy"#;
    let o = run(d.path(), &["-r", "1", "--no-sample", "--param", "copies=2", "--shell"], &[crash]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("failed (rank 1: killed by SIGSEGV)"), "{err}");
    let shown = err.split("it printed, at the end:").nth(1).unwrap_or_else(|| panic!("{err}"));
    assert!(shown.contains("copy-one-dying") && !shown.contains("healthy"), "{err}");
    let r = &results(&d.path().join("r")).points[0].runs[0];
    assert_eq!((r.exit_code, r.signal), (None, Some(11)), "the copy's own end: {r:?}");
}

#[test]
fn a_zipped_grid_counts_workers_as_ranks_times_threads() {
    let d = tempfile::tempdir().unwrap();
    let o = run(
        d.path(),
        &["-r", "1", "--no-sample", "--param", "ranks=1,2,4", "--param", "threads=4,2,1", "--zip"],
        &["true"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let doc = results(&d.path().join("r"));
    let labels: Vec<String> = doc.points.iter().map(|p| p.label()).collect();
    assert_eq!(
        labels,
        [
            "ranks=1 threads=4 workers=4",
            "ranks=2 threads=2 workers=4",
            "ranks=4 threads=1 workers=4"
        ]
    );
    assert!(
        doc.points.iter().all(|p| p.params.get("workers").is_some_and(|w| w.is_number())),
        "a number"
    );
    assert_eq!(doc.plan.scale.as_deref(), Some("workers"));
    assert_eq!(doc.plan.axis.as_ref().map(|a| a.param.as_str()), Some("workers"));
    let o =
        run(d.path(), &["--param", "ranks=1,2", "--param", "threads=4,2,1", "--zip"], &["true"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--zip pairs values position by position"), "{}", stderr(&o));
    let o = run(d.path(), &["--launcher", "mpirun", "--param", "nodes=2"], &["true"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--launcher mpirun maps only ntasks/ranks"), "{}", stderr(&o));
}

/// The launcher tests are ignored unless asked for (`--include-ignored`, as .ci/run does, which
/// starts a one-node SLURM); then the tool must be usable.
fn require(tool: &str) {
    let found = std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(tool).is_file()));
    assert!(found, "{tool} is not installed: .ci/run installs SLURM and OpenMPI");
    assert!(
        tool == "mpirun" || std::env::var_os("SLURM_CONF").is_some(),
        "SLURM_CONF is unset: .ci/run starts SLURM"
    );
}

fn two_ranks_merged(doc: &Results, point: usize) {
    let runs = &doc.points[point].runs;
    for r in runs {
        assert_eq!(r.ranks.len(), 2, "{r:?}");
        assert!(r.ranks.iter().all(|x| x.exit_code == Some(0) && !x.node.is_empty()));
        // Ranks of one node: their work over the span from the first start to the last end.
        let work: f64 = r.ranks.iter().map(|x| metric(&x.metrics, "throughput") * x.wall_s).sum();
        let start = |x: &scalescope::results::RankPart| x.started_unix_s.unwrap();
        let first = r.ranks.iter().map(start).fold(f64::INFINITY, f64::min);
        let last = r.ranks.iter().map(|x| start(x) + x.wall_s).fold(0.0, f64::max);
        let tp = r.throughput.unwrap();
        assert!((tp - work / (last - first)).abs() < 1e-6 * tp, "{tp}: {:?}", r.ranks);
    }
}

#[test]
#[ignore = "needs SLURM and OpenMPI; .ci/run starts them and runs it"]
fn srun_launches_every_rank_through_slurm() {
    let _g = common::measuring();
    require("srun");
    let d = tempfile::tempdir().unwrap();
    let p = probe("1");
    let cmd: Vec<&str> = p.iter().map(String::as_str).collect();
    let o = run(d.path(), &["-r", "2", "--launcher", "srun", "--param", "ntasks=1,2"], &cmd);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc = results(&d.path().join("r"));
    assert_eq!(doc.plan.launcher.kind, LauncherKind::Srun);
    two_ranks_merged(&doc, 1);
    assert!(stdout(&o).contains("2 ntasks"), "{}", stdout(&o));
    // More tasks than CPUs: SLURM refuses unless told to overcommit.
    let _ = std::fs::remove_dir_all(d.path().join("r"));
    let o = run(
        d.path(),
        &[
            "-r",
            "1",
            "--no-sample",
            "--launcher",
            "srun",
            "--launcher-args",
            "--overcommit",
            "--param",
            "ntasks=3",
        ],
        &cmd,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let doc = results(&d.path().join("r"));
    assert_eq!(doc.points[0].runs[0].ranks.len(), 3);
}

#[test]
#[ignore = "needs SLURM and OpenMPI; .ci/run starts them and runs it"]
fn mpirun_launches_every_rank() {
    let _g = common::measuring();
    require("mpirun");
    let d = tempfile::tempdir().unwrap();
    let p = probe("1");
    let cmd: Vec<&str> = p.iter().map(String::as_str).collect();
    let o = run(
        d.path(),
        &["-r", "2", "--no-sample", "--launcher", "mpirun", "--param", "ranks=1,2"],
        &cmd,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let doc = results(&d.path().join("r"));
    two_ranks_merged(&doc, 1);
}

/// MPI ranks of a CPU-bound probe, all on this machine, up to twice its CPUs: beyond them they take
/// turns on the CPUs as threads do, and the finding says so with how many fit.
#[test]
fn ranks_beyond_the_cpus_of_this_machine_take_turns_on_them() {
    let _g = common::measuring();
    require("mpirun");
    let cpus = scalescope::machine::allowed_cpus();
    if cpus > 4 {
        eprintln!("note: {cpus} CPUs: the ranks this test can afford fit, nothing to test");
        return;
    }
    let d = tempfile::tempdir().unwrap();
    // Judged by wall time: the ranks' own rates, summed, read 4 ranks 6–7% faster than 2 in two
    // CI runs (ranks that take turns end at different times, and each rate is over its own
    // life), so the probe's throughput lines are not shown to scalescope.
    let mut p = probe("1");
    *p.last_mut().unwrap() = "400000000".into();
    let shell = format!("exec {} > /dev/null", p.join(" "));
    let counts = format!("ranks=1,{cpus},{}", 2 * cpus);
    let o = run(
        d.path(),
        &["-r", "2", "--launcher", "mpirun", "--param", &counts, "--shell"],
        &[&shell],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let doc = results(&d.path().join("r"));
    let f = finding(&doc, Kind::CpuOversubscription);
    assert!(
        f.summary.contains(&format!("{} ranks on {cpus} CPUs", 2 * cpus))
            && f.advice.contains(&format!("at most {cpus} ranks")),
        "{f:?}"
    );
    let k = kinds(&doc);
    for silent in
        [Kind::RankImbalance, Kind::FailedRanks, Kind::LockContention, Kind::CopiesInterfere]
    {
        assert!(!k.contains(&silent), "{silent:?}: {:#?}", doc.findings);
    }
}

#[test]
#[ignore = "needs SLURM and OpenMPI; .ci/run starts them and runs it"]
fn sbatch_runs_a_whole_sweep_inside_one_allocation() {
    let _g = common::measuring();
    require("sbatch");
    require("srun");
    let d = tempfile::tempdir().unwrap();
    let p = probe("1");
    let mut args = vec![
        "sbatch", "--nodes", "1", "--ntasks", "2", "--time", "00:05:00", "-o", "sweep.sh", "--",
    ];
    args.extend([
        "--launcher",
        "srun",
        "-r",
        "2",
        "-w",
        "0",
        "--no-sample",
        "-o",
        "r",
        "--param",
        "ntasks=1,2",
        "--",
    ]);
    args.extend(p.iter().map(String::as_str));
    let o = scalescope(d.path(), &args);
    assert!(o.status.success(), "{}", stderr(&o));
    let script = std::fs::read_to_string(d.path().join("sweep.sh")).unwrap();
    assert!(
        script.starts_with("#!/bin/bash\n") && script.contains("#SBATCH --ntasks=2"),
        "{script}"
    );
    let job = std::process::Command::new("sbatch")
        .args(["--wait", "sweep.sh"])
        .current_dir(d.path())
        .output()
        .unwrap();
    assert!(job.status.success(), "{}", String::from_utf8_lossy(&job.stderr));
    let doc = results(&d.path().join("r"));
    two_ranks_merged(&doc, 1);
    let o = scalescope(d.path(), &["sbatch", "--", "no-command-here"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("then -- and the command"), "{}", stderr(&o));
}
