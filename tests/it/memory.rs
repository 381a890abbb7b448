//! The tree's memory and each run's time series: PSS of forked workers sharing their pages, a
//! rising line for a run that allocates, and the series exported as prmon writes it.

use crate::common::{behave, results, scalescope, stderr, sweep};

const MIB: f64 = 1024.0 * 1024.0;

#[test]
fn forked_workers_sharing_their_pages_count_once_in_pss_and_the_series_exports_as_prmon_writes_it() {
    let dir = tempfile::tempdir().unwrap();
    let exe = behave().to_str().unwrap().to_string();
    let o = sweep(dir.path(), "-r 1 -w 0 --param k=1,4", &[&exe, "share", "{k}", "200"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc = results(&dir.path().join("r"));
    for p in &doc.points {
        let r = &p.runs[0];
        let m = r.threads.as_ref().and_then(|t| t.memory).unwrap_or_else(|| panic!("{}: memory read", p.label()));
        let pss = m.peak_pss_bytes as f64 / MIB;
        // 200 MiB shared by the parent and its workers, plus the program's own pages.
        assert!((pss - 200.0).abs() <= 10.0, "{}: peak PSS {pss:.1} MiB is the 200 MiB mapped", p.label());
        assert!((r.max_rss_bytes as f64 / MIB) < 215.0, "wait4's max RSS stays per process: {}", r.max_rss_bytes);
        assert!(m.mean_pss_bytes <= m.peak_pss_bytes && m.readings >= 2, "{m:?}");
        if p.label() == "k=4" {
            let rss = m.peak_rss_bytes as f64 / MIB;
            assert!(rss > 3.0 * pss, "five processes map the pages: summed RSS {rss:.0} MiB, PSS {pss:.0} MiB");
        }
    }
    let out = dir.path().join("prmon");
    let o = scalescope(dir.path(), &["show", "r", "--export-prmon", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let tsv = std::fs::read_to_string(out.join("k_4-run1.txt")).unwrap();
    let header: Vec<&str> = tsv.lines().next().unwrap().split('\t').collect();
    for c in ["Time", "wtime", "utime", "stime", "pss", "rss", "swap", "vmem", "rchar", "wchar", "nprocs", "nthreads"] {
        assert!(header.contains(&c), "{c} in {header:?}");
    }
    assert!(tsv.lines().skip(1).all(|l| l.split('\t').count() == header.len()), "{tsv}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("k_4-run1.json")).unwrap()).unwrap();
    let pss_kb = json["Max"]["pss"].as_f64().unwrap();
    assert!((pss_kb / 1024.0 - 200.0).abs() <= 10.0, "{json}");
    for key in ["vmem", "rss", "swap", "rchar", "read_bytes", "wchar", "write_bytes", "nprocs", "nthreads"] {
        assert!(json["Max"][key].is_number() && json["Avg"][key].is_number(), "{key} in {json}");
    }
    assert!(json["Max"]["wtime"].is_number() && json["HW"]["mem"]["MemTotal"].is_number(), "{json}");
}

#[test]
fn a_run_that_allocates_steadily_has_a_rising_memory_series_drawn_in_the_report() {
    let dir = tempfile::tempdir().unwrap();
    let exe = behave().to_str().unwrap().to_string();
    let o = sweep(dir.path(), "-r 1 -w 0", &[&exe, "grow", "100"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc = results(&dir.path().join("r"));
    let s = doc.points[0].runs[0].threads.as_ref().and_then(|t| t.series.clone()).expect("a series");
    assert!(s.len() >= 3, "{s:?}");
    assert!(s.t_s.windows(2).all(|w| w[1] > w[0]), "{:?}", s.t_s);
    let (first, last) = (s.pss_kb[0], *s.pss_kb.last().unwrap());
    assert!(last > 4 * first.max(1024), "rising: {:?}", s.pss_kb);
    let html = std::fs::read_to_string(dir.path().join("r/report.html")).unwrap();
    assert!(html.contains("Memory over the run"), "the memory chart is in the report");
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
