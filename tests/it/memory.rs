//! The tree's memory and each run's time series: PSS of forked workers sharing their pages, a
//! rising line for a run that allocates, the series exported as prmon writes it, and the
//! memory-limit finding: made for threads that each hold their own memory, never for a CPU-bound
//! probe whose memory does not grow.

use crate::common::{behave, probe_scalable, results, scalescope, stderr, stdout, sweep};
use scalescope::results::findings::{Kind, Severity};

const MIB: f64 = 1024.0 * 1024.0;

#[test]
fn forked_workers_sharing_their_pages_count_once_in_pss_and_the_series_exports_as_prmon_writes_it()
{
    let dir = tempfile::tempdir().unwrap();
    let exe = behave().to_str().unwrap().to_string();
    let o = sweep(dir.path(), "-r 1 -w 0 --param k=1,4", &[&exe, "share", "{k}", "200"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc = results(&dir.path().join("r"));
    for p in &doc.points {
        let r = &p.runs[0];
        let m = r
            .threads
            .as_ref()
            .and_then(|t| t.memory)
            .unwrap_or_else(|| panic!("{}: memory read", p.label()));
        let pss = m.peak_pss_bytes as f64 / MIB;
        // 200 MiB shared by the parent and its workers, plus the program's own pages. The workers
        // end together: a reading that spans their exits leaves the ended ones out (it had read
        // 247 MiB at k=4 once, counting shares from before and after the exits).
        assert!(
            (pss - 200.0).abs() <= 10.0,
            "{}: peak PSS {pss:.1} MiB is the 200 MiB mapped",
            p.label()
        );
        assert!(
            (r.max_rss_bytes as f64 / MIB) < 215.0,
            "wait4's max RSS stays per process: {}",
            r.max_rss_bytes
        );
        assert!(m.mean_pss_bytes <= m.peak_pss_bytes && m.readings >= 2, "{m:?}");
        if p.label() == "k=4" {
            let rss = m.peak_rss_bytes as f64 / MIB;
            assert!(
                rss > 3.0 * pss,
                "five processes map the pages: summed RSS {rss:.0} MiB, PSS {pss:.0} MiB"
            );
        }
    }
    // Memory held for a second is read at its peak: no note says a reading missed it.
    assert!(!stdout(&o).contains("between memory readings"), "{}", stdout(&o));
    let out = dir.path().join("prmon");
    let o = scalescope(dir.path(), &["show", "r", "--export-prmon", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let tsv = std::fs::read_to_string(out.join("k_4-run1.txt")).unwrap();
    let header: Vec<&str> = tsv.lines().next().unwrap().split('\t').collect();
    for c in [
        "Time", "wtime", "utime", "stime", "pss", "rss", "swap", "vmem", "rchar", "wchar",
        "nprocs", "nthreads",
    ] {
        assert!(header.contains(&c), "{c} in {header:?}");
    }
    assert!(tsv.lines().skip(1).all(|l| l.split('\t').count() == header.len()), "{tsv}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("k_4-run1.json")).unwrap()).unwrap();
    let pss_kb = json["Max"]["pss"].as_f64().unwrap();
    assert!((pss_kb / 1024.0 - 200.0).abs() <= 10.0, "{json}");
    for key in
        ["vmem", "rss", "swap", "rchar", "read_bytes", "wchar", "write_bytes", "nprocs", "nthreads"]
    {
        assert!(json["Max"][key].is_number() && json["Avg"][key].is_number(), "{key} in {json}");
    }
    assert!(
        json["Max"]["wtime"].is_number() && json["HW"]["mem"]["MemTotal"].is_number(),
        "{json}"
    );
}

#[test]
fn a_run_that_allocates_steadily_has_a_rising_memory_series_drawn_in_the_report() {
    let dir = tempfile::tempdir().unwrap();
    let exe = behave().to_str().unwrap().to_string();
    let o = sweep(dir.path(), "-r 1 -w 0", &[&exe, "grow", "100"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc = results(&dir.path().join("r"));
    let s =
        doc.points[0].runs[0].threads.as_ref().and_then(|t| t.series.clone()).expect("a series");
    assert!(s.len() >= 3, "{s:?}");
    assert!(s.t_s.windows(2).all(|w| w[1] > w[0]), "{:?}", s.t_s);
    let (first, last) = (s.pss_kb[0], *s.pss_kb.last().unwrap());
    assert!(last > 4 * first.max(1024), "rising: {:?}", s.pss_kb);
    let html = std::fs::read_to_string(dir.path().join("r/report.html")).unwrap();
    assert!(html.contains("Memory over the run"), "the memory chart is in the report");
    // Readings follow the growth the sweeps see, up to the last moments before the exit.
    let m = doc.points[0].runs[0].threads.as_ref().and_then(|t| t.memory).unwrap();
    assert!(m.peak_pss_bytes as f64 / MIB >= 90.0, "the peak of 100 MiB is read: {m:?}");
}

/// A process that touches 200 MiB and unmaps it at once, between two readings: `wait4` saw the
/// peak the readings missed, the peak PSS counts it and the notes say by how much it was raised.
#[test]
fn a_peak_held_for_a_moment_between_readings_is_counted_and_named_in_the_notes() {
    let dir = tempfile::tempdir().unwrap();
    let exe = behave().to_str().unwrap().to_string();
    let o = sweep(dir.path(), "-r 3 -w 0", &[&exe, "spike", "200"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc = results(&dir.path().join("r"));
    for r in &doc.points[0].runs {
        let m = r.threads.as_ref().and_then(|t| t.memory).expect("memory read");
        let seen = m.peak_rss_swept_bytes.max(r.max_rss_bytes) as f64 / MIB;
        assert!(seen >= 195.0, "wait4 or the sweeps saw the 200 MiB: {m:?} {}", r.max_rss_bytes);
        let pss = m.peak_pss_bytes as f64 / MIB;
        assert!(
            (189.0..=215.0).contains(&pss),
            "the peak PSS counts the 200 MiB, within 5%: {m:?}"
        );
    }
    // The summed RSS, what batch systems limit, counts the spike too: never below the PSS.
    let st = doc.points[0].stats();
    let (rss, pss) = (st.peak_rss_sum_bytes.unwrap().mean, st.peak_pss_bytes.unwrap().mean);
    assert!(rss >= pss && rss / MIB >= 195.0, "summed RSS {rss} against PSS {pss}");
    let out = stdout(&o);
    // Unless a reading happened to catch the moment in every run.
    let caught = doc.points[0].runs.iter().all(|r| {
        let m = r.threads.as_ref().and_then(|t| t.memory).unwrap();
        m.peak_rss_bytes as f64 >= 0.95 * m.peak_rss_swept_bytes.max(r.max_rss_bytes) as f64
    });
    let Some(note) = out.lines().find(|l| l.contains("between memory readings")) else {
        assert!(caught, "a missed peak is named: {out}");
        return;
    };
    let raised = doc.points[0]
        .runs
        .iter()
        .any(|r| r.threads.as_ref().and_then(|t| t.memory).unwrap().peak_pss_read_bytes.is_some());
    assert!(!raised || note.contains("its peak PSS counts it"), "{note}");
}

#[test]
fn exporting_runs_without_a_series_is_one_sentence_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let o = sweep(dir.path(), "-r 1 -w 0 --no-sample", &["true"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = scalescope(dir.path(), &["show", "r", "--export-prmon", "out"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(stderr(&o).trim().lines().count(), 1, "{}", stderr(&o));
    assert!(stderr(&o).contains("no run with a time series"), "{}", stderr(&o));
}

#[test]
fn threads_that_each_hold_their_own_memory_outgrow_the_limit_and_the_finding_says_at_which_count() {
    let dir = tempfile::tempdir().unwrap();
    let exe = behave().to_str().unwrap().to_string();
    // Each thread touches 30 MiB (31.5 MB) of its own; 100 MB lets three threads fit, not four.
    let o = sweep(
        dir.path(),
        "-r 1 -w 0 --param threads=1,2,4 --memory-limit 100MB",
        &[&exe, "perworker", "{threads}", "30"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let doc = results(&dir.path().join("r"));
    let m = doc.analysis.as_ref().and_then(|a| a.series[0].memory.clone()).expect("a memory fit");
    let per = m.per_count_bytes / 1e6;
    assert!(
        (per - 31.46).abs() < 2.0,
        "growth per thread {per:.2} MB is the 30 MiB each touches: {m:?}"
    );
    assert!(m.grows() && m.fixed_bytes.abs() < 10e6, "{m:?}");
    assert_eq!(
        (m.usable_bytes, m.usable_source.as_str()),
        (100_000_000, "given with --memory-limit")
    );
    assert_eq!((m.horizon, m.fits_up_to), (4.0, Some(3.0)), "{m:?}");
    let f = doc
        .findings
        .iter()
        .find(|f| f.kind == Kind::MemoryLimit)
        .unwrap_or_else(|| panic!("{:#?}", doc.findings));
    assert_eq!((f.severity, f.at), (Severity::High, Some(4.0)));
    // 4 threads were measured over the limit: said as measured, whatever the line predicts.
    assert!(f.summary.starts_with("at 4 threads the tree's PSS is already 12"), "{}", f.summary);
    assert!(
        f.summary.contains("more than the 95.4 MiB given with --memory-limit")
            && f.summary.contains("it fits up to 3 threads"),
        "{}",
        f.summary
    );
    assert!(
        f.evidence.iter().any(|e| e.starts_with("peak PSS of the tree: 1 thread 3")),
        "{:?}",
        f.evidence
    );
    for unrelated in
        [Kind::LockContention, Kind::IoBound, Kind::KernelContention, Kind::OnCpuInefficiency]
    {
        assert!(
            doc.findings.iter().all(|f| f.kind != unrelated),
            "{unrelated:?}: {:#?}",
            doc.findings
        );
    }
    let html = std::fs::read_to_string(dir.path().join("r/report.html")).unwrap();
    assert!(
        html.contains("Peak PSS of the tree") && html.contains("fitted line"),
        "the sweep's memory chart"
    );
    assert!(html.contains("memory-limit"), "the finding is in the report");
    // Judged against a larger memory, the same sweep fits the node: no finding.
    let o = scalescope(
        dir.path(),
        &["show", "r", "--memory-limit", "1GB", "--export-json", "big.json"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let big: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("big.json")).unwrap())
            .unwrap();
    let kinds: Vec<&str> =
        big["findings"].as_array().unwrap().iter().filter_map(|f| f["kind"].as_str()).collect();
    assert!(!kinds.contains(&"memory-limit"), "{kinds:?}");
    let fits = big["analysis"]["series"][0]["memory"]["fits_up_to"].as_f64().unwrap();
    assert!((29.0..=32.0).contains(&fits), "1 GB holds about 31 threads of 31.5 MB: {fits}");
    // A prediction far beyond does not demote what was measured over the limit.
    let o = scalescope(
        dir.path(),
        &["show", "r", "--memory-limit", "100MB", "--predict", "64", "--export-json", "p.json"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let p: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("p.json")).unwrap()).unwrap();
    let f = p["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["kind"] == "memory-limit")
        .expect("a finding");
    assert_eq!(f["severity"], "high", "{f}");
    assert!(
        f["summary"].as_str().unwrap().starts_with("at 4 threads the tree's PSS is already"),
        "{f}"
    );
}

#[test]
fn a_cpu_bound_probe_whose_memory_does_not_grow_gets_no_memory_finding_even_predicted_far() {
    let dir = tempfile::tempdir().unwrap();
    let argv = probe_scalable(&["--seconds", "0.3"]);
    let o = sweep(dir.path(), "-r 2 -w 0 --param threads=1,2 --predict 64", &argv);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc = results(&dir.path().join("r"));
    let m = doc.analysis.as_ref().and_then(|a| a.series[0].memory.clone()).expect("a memory fit");
    assert_eq!(m.horizon, 64.0, "{m:?}");
    assert!(doc.findings.iter().all(|f| f.kind != Kind::MemoryLimit), "{:#?}", doc.findings);
    // A limit a little above what it measured: a slope within the noise is not extrapolated.
    let peak = doc
        .points
        .iter()
        .flat_map(|p| &p.runs)
        .filter_map(|r| r.threads.as_ref()?.memory)
        .map(|x| x.peak_pss_bytes)
        .max()
        .unwrap();
    let limit = format!("{}B", peak + peak / 5);
    let o = scalescope(dir.path(), &["show", "r", "--predict", "64", "--memory-limit", &limit]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stdout(&o).contains("memory-limit"), "{}", stdout(&o));
    assert!(!m.grows() || m.per_count_bytes < 1e6, "no real growth per thread: {m:?}");
}

/// A footprint that does not grow with the count, but is already larger than the memory given:
/// the finding is made from the measured peak PSS, whatever the line.
#[test]
fn memory_that_is_flat_but_already_over_the_limit_is_a_finding() {
    let dir = tempfile::tempdir().unwrap();
    let exe = behave().to_str().unwrap().to_string();
    let o =
        sweep(dir.path(), "-r 1 -w 0 --param workers=1,2", &[&exe, "share", "{workers}", "200"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = scalescope(
        dir.path(),
        &["show", "r", "--memory-limit", "100MB", "--export-json", "small.json"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let small: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("small.json")).unwrap())
            .unwrap();
    let f = small["findings"].as_array().unwrap().iter().find(|f| f["kind"] == "memory-limit");
    let summary = f.and_then(|f| f["summary"].as_str()).unwrap_or_else(|| panic!("{small:#}"));
    assert!(summary.starts_with("at 1 worker the tree's PSS is already 20"), "{summary}");
    assert!(
        summary.contains("more than the 95.4 MiB given with --memory-limit")
            && summary.ends_with("not even 1 worker fits"),
        "{summary}"
    );
}

#[test]
fn a_memory_limit_that_is_no_size_is_one_sentence_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    for (size, said) in [
        ("lots", "a memory size is a number of bytes above 0"),
        ("-5GB", "a memory size is a number of bytes above 0"),
        ("100mb", "write the unit as in 100MB (MB, GB, MiB, GiB: m is milli)"),
        ("2gib", "write the unit as in 2GiB"),
    ] {
        let o = scalescope(dir.path(), &["run", "--memory-limit", size, "--", "true"]);
        assert_eq!(o.status.code(), Some(2), "{size}: {}", stderr(&o));
        assert!(stderr(&o).contains(said), "{size}: {}", stderr(&o));
    }
    // Without the sampler there is no PSS to judge: said before anything runs.
    let o = scalescope(
        dir.path(),
        &["run", "-o", "n", "-r", "1", "--no-sample", "--memory-limit", "1GB", "--", "true"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o)
            .contains("--memory-limit judges the tree's PSS, which --no-sample does not read"),
        "{}",
        stderr(&o)
    );
}

/// Threads against copies: each worker holds 30 MiB of its own, as threads of one process or as
/// copies. `compare` gives each set's peak PSS and throughput per GB of it at every count, and how
/// their bests compare.
#[test]
fn compare_sets_threads_against_copies_per_gigabyte_of_pss() {
    let dir = tempfile::tempdir().unwrap();
    let exe = behave().to_str().unwrap().to_string();
    let work = ["--work", "items=10"];
    let args = |out: &str, more: &[&str], k: &str| -> Vec<String> {
        let mut a: Vec<String> =
            ["run", "-o", out, "-r", "1", "-w", "0"].iter().map(|s| s.to_string()).collect();
        a.extend(work.iter().chain(more).map(|s| s.to_string()));
        a.extend(["--".to_string(), exe.clone(), "perworker".into(), k.into(), "30".into()]);
        a
    };
    for (out, more, k) in
        [("threads", &["--param", "k=1,2"][..], "{k}"), ("copies", &["--copies", "2"][..], "1")]
    {
        let a = args(out, more, k);
        let o = scalescope(dir.path(), &a.iter().map(String::as_str).collect::<Vec<_>>());
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let o = scalescope(dir.path(), &["compare", "threads", "copies"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    let memory: Vec<&str> = text.lines().skip_while(|l| *l != "memory").collect();
    let line = |set: &str| {
        memory
            .iter()
            .find(|l| l.contains(&format!("{set}: items/s per GB of PSS (peak PSS of the tree)")))
            .copied()
    };
    let mib = |l: &str| -> Vec<f64> {
        l.split('(').skip(2).filter_map(|p| p.split(" MiB)").next()?.parse::<f64>().ok()).collect()
    };
    let (t, c) = (line("threads").expect(&text), line("copies").expect(&text));
    // 30 MiB a worker, plus the program's own pages.
    for (l, workers) in [(t, [1.0, 2.0]), (c, [1.0, 2.0])] {
        let pss = mib(l);
        assert_eq!(pss.len(), 2, "{l}");
        for (p, w) in pss.iter().zip(workers) {
            assert!((p - 30.0 * w).abs() < 6.0 * w, "{p} MiB for {w} workers: {l}");
        }
    }
    assert!(
        memory
            .iter()
            .any(|l| l
                .contains("per GB of PSS at the largest count both measured, copies (2 copies)")),
        "{text}"
    );
    // prmon watches one job step each: a copy's files are its own tree's, series and summary alike.
    let out = dir.path().join("prmon");
    let o = scalescope(dir.path(), &["show", "copies", "--export-prmon", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    for rank in 0..2 {
        let name = format!("copies_2-run1-rank{rank}");
        let tsv = std::fs::read_to_string(out.join(format!("{name}.txt"))).unwrap();
        let json: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(out.join(format!("{name}.json"))).unwrap(),
        )
        .unwrap();
        let pss_col = tsv.lines().next().unwrap().split('\t').position(|c| c == "pss").unwrap();
        let series_max = tsv
            .lines()
            .skip(1)
            .filter_map(|l| l.split('\t').nth(pss_col)?.parse::<f64>().ok())
            .fold(0.0, f64::max);
        let max = json["Max"]["pss"].as_f64().unwrap();
        assert!((max / 1024.0 - 30.0).abs() < 6.0, "{name}: one copy's 30 MiB, not both: {max} kB");
        assert!(
            series_max <= max * 1.01,
            "{name}: series {series_max} kB within the summary's {max} kB"
        );
    }
    assert!(!out.join("copies_2-run1.txt").exists(), "no file mixes the copies");
}

/// The processes of this test's program whose command line names `marker`.
fn processes_naming(marker: &str) -> Vec<std::path::PathBuf> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    let mut found: Vec<std::path::PathBuf> = entries
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().bytes().all(|b| b.is_ascii_digit()))
        .filter(|e| {
            let cmdline = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
            let args: Vec<&[u8]> = cmdline.split(|&b| b == 0).collect();
            args.first().is_some_and(|a| a.ends_with(b"behave"))
                && args.contains(&marker.as_bytes())
        })
        .map(|e| e.path())
        .collect();
    found.sort();
    found
}

/// The PSS of those processes summed, KiB, read as one instant as far as /proc allows: `None`
/// when a process started or ended during the reading (their pages changed hands meanwhile). Read
/// twice, the lower sum: a copy that unmaps its file while the others are read hands its share
/// to those read after it within one pass (this reader once read 68.3 MiB of a 64 MiB file).
fn pss_of_processes_naming(marker: &str) -> Option<u64> {
    let before = processes_naming(marker);
    let sum = || -> u64 {
        before
            .iter()
            .filter_map(|p| std::fs::read_to_string(p.join("smaps_rollup")).ok())
            .filter_map(|t| {
                t.lines().find_map(|l| {
                    l.strip_prefix("Pss:")?.split_whitespace().next()?.parse::<u64>().ok()
                })
            })
            .sum()
    };
    let pss = sum().min(sum());
    (processes_naming(marker) == before).then_some(pss)
}

/// Copies that map one read-only file each peak once the others have gone (the shared pages split
/// among fewer): the run's peak PSS is that of the copies summed at the same instants, as an
/// independent reader summing them every 20 ms sees it, not the sum of each copy's own peak.
#[test]
fn copies_sharing_a_mapped_file_peak_together_not_each_at_their_own_moment() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("geometry.bin");
    std::fs::write(&file, vec![7u8; 64 << 20]).unwrap();
    let marker = file.to_str().unwrap().to_string();
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let watcher = {
        let (done, marker) = (done.clone(), marker.clone());
        std::thread::spawn(move || {
            let mut most = 0;
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                most = most.max(pss_of_processes_naming(&marker).unwrap_or(0));
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            most
        })
    };
    let exe = behave().to_str().unwrap().to_string();
    let o = sweep(dir.path(), "-r 1 -w 0 --param copies=4", &[&exe, "mapfile", &marker]);
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    let independent = watcher.join().unwrap() as f64 / 1024.0;
    assert!(o.status.success(), "{}", stderr(&o));
    let run = &results(&dir.path().join("r")).points[0].runs[0];
    let m = run.threads.as_ref().and_then(|t| t.memory).expect("memory read");
    let tool = m.peak_pss_bytes as f64 / MIB;
    let own_peaks: f64 = run
        .ranks
        .iter()
        .filter_map(|p| p.threads.as_ref()?.memory)
        .map(|m| m.peak_pss_bytes as f64 / MIB)
        .sum();
    assert!(
        own_peaks > 1.5 * independent,
        "each copy peaked alone: {own_peaks:.1} MiB, at once {independent:.1}"
    );
    assert!(
        (tool - independent).abs() <= 0.05 * independent,
        "peak PSS {tool:.1} MiB, read at once by another reader {independent:.1} MiB (sum of the copies' peaks {own_peaks:.1}) {:?}",
        run.threads.as_ref().and_then(|t| t.series.as_ref()).map(|s| s
            .t_s
            .iter()
            .zip(&s.pss_kb)
            .map(|(t, p)| format!("{t}:{}", p / 1024))
            .collect::<Vec<_>>())
    );
    assert!(m.mean_pss_bytes <= m.peak_pss_bytes, "{m:?}");
    let s = run.threads.as_ref().and_then(|t| t.series.clone()).expect("a series");
    let series_max = s.pss_kb.iter().copied().max().unwrap() as f64 / 1024.0;
    assert!(
        series_max > 0.9 * independent,
        "the series is the copies' sum, not one copy's: {series_max:.1} MiB"
    );
    assert_eq!(s.nprocs.iter().copied().max(), Some(4), "all four copies in the series");
}
