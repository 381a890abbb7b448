//! `scalescope analyze` on published scaling tables (tests/fixtures/*.csv), the findings those
//! tables give as sweeps, the round trip of `show --export-csv` through `analyze --csv`, and
//! degenerate input.

use crate::common;
use common::*;
use scalescope::plan::Counts;
use scalescope::results::Results;
use scalescope::results::analysis::{Analysis, IntervalMethod, PointScaling, UslLimit};
use scalescope::results::findings::{Kind, Severity};
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name)
}

fn analyze_csv(file: &Path, count: &str) -> (String, Analysis) {
    analyze_columns(
        file,
        &["--count", count, "--throughput", "throughput_mb_s", "--cpu", "cpu_pct"],
    )
}

/// `analyze --csv FILE COLUMNS…`: what it prints and the analysis it exports.
fn analyze_columns(file: &Path, columns: &[&str]) -> (String, Analysis) {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("a.json");
    let mut args = vec!["analyze", "--csv", file.to_str().unwrap()];
    args.extend(columns);
    args.extend(["--export-json", out.to_str().unwrap()]);
    let o = scalescope(d.path(), &args);
    assert!(o.status.success(), "{}", stderr(&o));
    (stdout(&o), serde_json::from_str(&std::fs::read_to_string(out).unwrap()).unwrap())
}

/// The fixture's rows up to the first of count `from`, as a table in `d`.
fn cut_before(d: &tempfile::TempDir, name: &str, from: u32) -> std::path::PathBuf {
    let cut = d.path().join("cut.csv");
    let full = std::fs::read_to_string(fixture(name)).unwrap();
    let start = format!("{from},");
    let kept: Vec<&str> = full.lines().take_while(|l| !l.starts_with(&start)).collect();
    std::fs::write(&cut, kept.join("\n") + "\n").unwrap();
    cut
}

fn point(a: &Analysis, count: f64) -> &PointScaling {
    a.series[0].points.iter().find(|p| p.count == count).unwrap()
}

#[test]
fn the_90x_dataset_gives_46x_at_64_threads_as_if_99_4_percent_parallel() {
    let (text, a) = analyze_csv(&fixture("readspeed-90x.csv"), "threads");
    let p = point(&a, 64.0);
    assert!((p.speedup - 46.1).abs() < 0.06, "{p:?}");
    assert!((p.amdahl_parallel_pct.unwrap() - 99.4).abs() < 0.05, "{p:?}");
    assert!(
        text.contains("46.15× at 64 threads")
            && text.contains("as if 99.4% of the work were parallel"),
        "{text}"
    );
    let s = &a.series[0];
    assert!(
        s.amdahl.as_ref().unwrap().serial_fraction.ci95.is_some(),
        "the Amdahl fit has an interval"
    );
    let usl = s.usl.as_ref().unwrap();
    assert!(usl.sigma.value < 0.01 && usl.kappa.value > 0.0, "{usl:?}");
    assert!(s.retrograde.is_none(), "the 90x dataset still scales");
    assert_eq!(s.best.as_ref().unwrap().count, 64.0);
    assert!(!text.contains("R²") && !text.contains("R-squared"));
}

#[test]
fn the_original_dataset_before_patches_is_retrograde_past_32_threads() {
    let (text, a) = analyze_csv(&fixture("readspeed-original-before-patches.csv"), "threads");
    let s = &a.series[0];
    let best = s.best.as_ref().unwrap();
    assert_eq!((best.count, best.near_best_count), (32.0, Some(16.0)));
    let retro = s.retrograde.as_ref().unwrap();
    assert_eq!(retro.beyond, 32.0);
    assert!(retro.change_pct < -10.0, "{retro:?}");
    let usl = s.usl.as_ref().unwrap();
    assert_eq!(usl.limited_by, UslLimit::Coherency);
    let peak = usl.peak_count.unwrap().value;
    assert!((16.0..48.0).contains(&peak), "USL peak {peak}");
    assert!(text.contains("retrograde: beyond 32 threads, more is slower"), "{text}");
}

#[test]
fn the_original_dataset_after_patches_gives_26_7x_at_64_threads() {
    let (_, a) = analyze_csv(&fixture("readspeed-original-after-patches.csv"), "threads");
    assert!((point(&a, 64.0).speedup - 26.7).abs() < 0.1);
    assert!(a.series[0].retrograde.is_none());
}

#[test]
fn a_files_sweep_is_not_treated_as_a_thread_sweep() {
    let (text, a) = analyze_csv(&fixture("readspeed-files-at-64-threads.csv"), "files");
    assert_eq!((a.axis.param.as_str(), a.axis.counts), ("files", Counts::Other));
    let s = &a.series[0];
    assert!(s.amdahl.is_none() && s.usl.is_none());
    assert!(point(&a, 90.0).efficiency.is_none() && point(&a, 90.0).karp_flatt.is_none());
    assert!(text.contains("'files' does not count parallel workers"), "{text}");
    assert!(!text.lines().next().unwrap().contains("efficiency"), "no efficiency column: {text}");
}

#[test]
fn predictions_come_with_intervals_and_a_warning() {
    let d = tempfile::tempdir().unwrap();
    let o = scalescope(
        d.path(),
        &[
            "analyze",
            "--csv",
            fixture("readspeed-90x.csv").to_str().unwrap(),
            "--count",
            "threads",
            "--throughput",
            "throughput_mb_s",
            "--predict",
            "128,256",
            "--baseline",
            "16",
        ],
    );
    let text = stdout(&o);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(text.contains("prediction at 256 threads (extrapolated): "), "{text}");
    assert!(text.contains("the laws at 256 threads (95%, each law's own fit alone; the prediction's interval above is the one to bet on): Amdahl"), "{text}");
    assert!(text.contains("(T in s per MB)"), "{text}");
    assert!(
        text.contains("back-test: from 2–32 threads this procedure predicted 48 threads"),
        "{text}"
    );
    assert!(text.contains("are extrapolations"), "{text}");
    assert!(text.contains("against 16 threads"), "{text}");
}

/// The figures of `[a–b unit]` and `interval a–b unit` in a line, in the order printed.
fn intervals(line: &str) -> Vec<(f64, f64)> {
    let mut out = Vec::new();
    for (i, _) in line.match_indices('–') {
        let before: String = line[..i]
            .chars()
            .rev()
            .take_while(|c| c.is_ascii_digit() || *c == '.')
            .collect::<String>();
        let lo: String = before.chars().rev().collect();
        let hi: String = line[i + '–'.len_utf8()..]
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == '.')
            .collect();
        if let (Ok(lo), Ok(hi)) = (lo.parse(), hi.parse()) {
            out.push((lo, hi));
        }
    }
    out
}

#[test]
fn a_timed_table_predicts_in_seconds_lower_bound_first_beside_its_back_test() {
    let table = "tables/cp2k_h2o_dft_ls_nrep3_pizdaint.csv";
    let o = in_fixtures(&argv(
        "analyze --count processes --time time_s --predict 96,512 --csv",
        &[table],
    ));
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    golden("analyze/nrep3-predict.golden.txt", &text);
    let lines: Vec<&str> =
        text.lines().filter(|l| l.contains("prediction at") || l.contains("the laws at")).collect();
    assert_eq!(lines.len(), 4, "{text}");
    for l in &lines {
        let found = intervals(l);
        assert!(!found.is_empty(), "{l}");
        assert!(found.iter().all(|(lo, hi)| lo <= hi), "upper bound first in {l}");
        assert!(l.contains("s per run") && !l.contains("MB/s"), "{l}");
    }
    assert!(
        text.contains(
            "back-test: from 4–128 processes this procedure predicted 256 processes time "
        ),
        "{text}"
    );
    assert!(text.contains("residual σ ") && text.contains("% of the fitted rate"), "{text}");
}

#[test]
fn a_table_cut_before_its_collapse_bounds_its_slow_end_at_the_last_measured_rate() {
    // readspeed before its patches: 1181 MB/s at 16 threads, then 1211, 1114 and 1070 at 32–64,
    // which no curve through 1–16 threads foresees. The slow end says at least no gain past 16
    // threads (the plateau at 32 is inside); further out, the draws whose models grow an overhead
    // reach below it, and hold the collapse (docs/analysis.md says so).
    let d = tempfile::tempdir().unwrap();
    let cut = cut_before(&d, "readspeed-original-before-patches.csv", 32);
    let (text, a) = analyze_columns(
        &cut,
        &["--count", "threads", "--throughput", "throughput_mb_s", "--predict", "32,48,64"],
    );
    for (count, measured) in [(32.0, 1210.60), (48.0, 1113.97), (64.0, 1069.62)] {
        let p = a.series[0].predictions.iter().find(|p| p.count == count).unwrap();
        let f = p.forecast.as_ref().unwrap();
        let [lo, hi] = f.interval90.unwrap();
        assert!(lo <= 1181.64 && hi > f.rate && f.rate > 1181.63, "{f:?}\n{text}");
        assert!(lo <= measured && measured <= hi, "{count}: {f:?}");
        assert_eq!(f.plateau_from.is_some(), (lo - 1181.63).abs() < 0.01, "{f:?}");
    }
    let line = text.lines().find(|l| l.contains("prediction at 32 threads")).unwrap();
    assert!(
        line.contains(
            "slow end: no gain past 16 threads, as a bottleneck the measured counts cannot show"
        ),
        "{line}"
    );
}

#[test]
fn a_count_above_the_machines_cpus_is_predicted_as_that_many() {
    // rayon's tree sum on a 16-vCPU machine: 0.1643 s at 16 threads and 0.1651 s at 32, which a
    // curve through 1–8 threads would put near half of it.
    let d = tempfile::tempdir().unwrap();
    let cut = cut_before(&d, "tables/rayon_tree_sum_100M_gcp_c4std16.csv", 16);
    let ask = ["--count", "threads", "--time", "time_s", "--workers", "--predict", "16,32"];
    let (text, a) = analyze_columns(&cut, &[&ask[..], &["--cpus", "16"]].concat());
    let at = |a: &Analysis, n: f64| {
        a.series[0].predictions.iter().find(|p| p.count == n).unwrap().forecast.clone().unwrap()
    };
    let (sixteen, shared) = (at(&a, 16.0), at(&a, 32.0));
    assert_eq!((sixteen.cpus, shared.cpus), (None, Some(16.0)));
    assert_eq!((shared.rate, shared.interval90), (sixteen.rate, sixteen.interval90));
    let laws = |n: f64| a.series[0].predictions.iter().find(|p| p.count == n).unwrap().amdahl;
    assert_eq!(laws(32.0), laws(16.0), "the laws are capped too");
    assert!((1.0 / shared.rate / 0.1651 - 1.0).abs() < 0.15, "{shared:?}");
    let line = text.lines().find(|l| l.contains("prediction at 32 threads")).unwrap();
    assert!(
        line.contains("(as at 16 threads: above the machine's 16 CPUs its workers share them"),
        "{line}"
    );
    let (_, free) = analyze_columns(&cut, &ask);
    assert!(at(&free, 32.0).rate > 1.5 * shared.rate && at(&free, 32.0).cpus.is_none());
    let o = scalescope(d.path(), &["analyze", "--csv", cut.to_str().unwrap(), "--cpus", "0"]);
    assert!(!o.status.success() && stderr(&o).contains("--cpus"), "{}", stderr(&o));
}

#[test]
fn a_count_no_model_can_predict_says_so_and_a_pinned_law_gives_no_interval() {
    // Two counts, the second slower: Amdahl is pinned at s = 1 and nothing else is tried.
    let d = tempfile::tempdir().unwrap();
    let table = d.path().join("slower.csv");
    std::fs::write(&table, "threads,time_s\n1,1.0\n2,1.2\n").unwrap();
    let (text, a) =
        analyze_columns(&table, &["--count", "threads", "--time", "time_s", "--predict", "8"]);
    assert!(a.series[0].predictions[0].forecast.is_none(), "{text}");
    let line = text
        .lines()
        .find(|l| l.contains("prediction at 8 threads"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(line.contains("(extrapolated): none: no candidate model"), "{line}");
    let laws = text
        .lines()
        .find(|l| l.contains("the laws at 8 threads"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        laws.contains(" s per run (s at its bound: no gain, no interval)") && !laws.contains('['),
        "{laws}"
    );
}

#[test]
fn degenerate_tables_get_a_clear_sentence_not_a_made_up_number() {
    let d = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| {
        let p = d.path().join(name);
        std::fs::write(&p, text).unwrap();
        p.to_str().unwrap().to_string()
    };
    let bad = [
        (write("nan.csv", "threads,time_s\n1,2.0\n2,NaN\n"), "must be a positive number"),
        (write("zero.csv", "threads,time_s\n1,2.0\n2,0\n"), "must be a positive number"),
        (write("neg.csv", "threads,time_s\n1,2.0\n2,-1\n"), "must be a positive number"),
        (write("text.csv", "threads,time_s\n1,2.0\ntwo,1.0\n"), "'two' is not a number"),
        (write("cols.csv", "n,seconds\n1,2.0\n"), "no column named 'time_s' (columns: n, seconds)"),
    ];
    for (file, phrase) in &bad {
        let o = scalescope(
            d.path(),
            &["analyze", "--csv", file, "--count", "threads", "--time", "time_s"],
        );
        assert_eq!(o.status.code(), Some(2), "{file}: {}", stderr(&o));
        assert!(stderr(&o).contains(phrase), "{file}: {}", stderr(&o));
    }
    let one = write("one.csv", "threads,time_s\n4,2.0\n");
    let o =
        scalescope(d.path(), &["analyze", "--csv", &one, "--count", "threads", "--time", "time_s"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("one point: there is nothing to fit"), "{}", stdout(&o));
    assert!(!stdout(&o).contains("Amdahl"), "{}", stdout(&o));
    let flat = write("flat.csv", "threads,time_s\n1,2.0\n2,2.0\n4,2.0\n8,2.0\n");
    let o = scalescope(
        d.path(),
        &["analyze", "--csv", &flat, "--count", "threads", "--time", "time_s"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("s = 1 → as if 0% parallel: no count measured ran faster"),
        "{}",
        stdout(&o)
    );
    let o = scalescope(d.path(), &["analyze", "--csv", &flat, "--time", "time_s"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--count"), "{}", stderr(&o));
    // A shell loop's table, a row per run: rows of one count are that point's runs, and the
    // speed-up's interval comes from them.
    let runs = write("runs.csv", "threads,time_s\n1,2.0\n2,1.1\n1,2.1\n2,1.0\n1,1.9\n2,1.05\n");
    let o = scalescope(
        d.path(),
        &["analyze", "--csv", &runs, "--count", "threads", "--time", "time_s"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let line =
        out.lines().find(|l| l.contains("speed-up 1.90× [")).unwrap_or_else(|| panic!("{out}"));
    assert!(line.contains("at 2 threads"), "{out}");
}

#[test]
fn every_run_stores_and_prints_the_model() {
    let d = tempfile::tempdir().unwrap();
    let o =
        sweep(d.path(), "-r 3 -w 0 --param threads=1,2", &probe_scalable(&["--ops", "20000000"]));
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("model\n") && stdout(&o).contains("Amdahl fit"), "{}", stdout(&o));
    let doc = results(&d.path().join("r"));
    let a = doc.analysis.as_ref().unwrap();
    let s = &a.series[0];
    assert_eq!((a.axis.param.as_str(), a.axis.counts), ("threads", Counts::Workers));
    assert_eq!(s.points.len(), 2);
    assert!(s.points[1].speedup_ci95.is_some(), "three runs per point give an interval");
    assert_eq!(s.amdahl.as_ref().unwrap().fit.intervals, IntervalMethod::Bootstrap);
    let o = scalescope(d.path(), &["analyze", "r"]);
    assert!(o.status.success() && stdout(&o).contains("Amdahl fit"), "{}", stderr(&o));
    round_trip(d.path(), "r", a);
}

#[test]
fn analyze_prints_a_published_table_as_its_golden_file() {
    let table = "readspeed-original-before-patches.csv";
    let o = in_fixtures(&argv(
        "analyze --count threads --throughput throughput_mb_s --cpu cpu_pct --csv",
        &[table],
    ));
    assert!(o.status.success(), "{}", stderr(&o));
    golden("analyze/before-patches.golden.txt", &stdout(&o));
}

/// The speed-ups, efficiencies and fits of `a` and `b` agree (intervals aside: a table of means
/// has no runs to resample).
fn same_scaling(a: &Analysis, b: &Analysis) {
    let close = |x: f64, y: f64| (x - y).abs() <= 1e-9 * x.abs().max(1e-300);
    let (s, t) = (&a.series[0], &b.series[0]);
    assert_eq!(s.points.len(), t.points.len());
    for (p, q) in s.points.iter().zip(&t.points) {
        assert_eq!(p.count, q.count);
        assert!(close(p.speedup, q.speedup) && close(p.rate, q.rate), "{p:?} vs {q:?}");
        assert_eq!(p.efficiency.is_some(), q.efficiency.is_some());
        assert!(close(p.efficiency.unwrap_or(0.0), q.efficiency.unwrap_or(0.0)), "{p:?} vs {q:?}");
    }
    let (am, an) = (s.amdahl.as_ref().unwrap(), t.amdahl.as_ref().unwrap());
    assert!(close(am.serial_fraction.value, an.serial_fraction.value), "{am:?} vs {an:?}");
    // The best point is not compared: with runs it is the fewest workers within their noise of
    // the top, and a table of means has no noise to judge by.
}

/// `show DOC --export-csv` read back by `analyze --csv`, on the figure `show` analysed.
fn round_trip(dir: &Path, doc: &str, shown: &Analysis) {
    let csv = dir.join("t.csv");
    let o = scalescope(dir, &["show", doc, "--export-csv", csv.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let value = match shown.basis {
        scalescope::results::analysis::Basis::Throughput => ["--throughput", "throughput_mean"],
        scalescope::results::analysis::Basis::Time => ["--time", "wall_mean_s"],
    };
    let mut columns = vec!["--count", "threads", "--cpu", "cpu_pct_mean"];
    columns.extend(value);
    let (text, back) = analyze_columns(&csv, &columns);
    same_scaling(shown, &back);
    assert_eq!(back.unit, shown.unit, "the unit comes back from the throughput_unit column");
    assert!(text.contains("speed-up"), "{text}");
}

#[test]
fn the_csv_export_read_back_gives_the_speedups_efficiencies_and_fits_of_show() {
    let d = tempfile::tempdir().unwrap();
    let fx = fixture("report/results.json");
    let doc: Results = serde_json::from_str(&std::fs::read_to_string(&fx).unwrap()).unwrap();
    round_trip(d.path(), fx.to_str().unwrap(), doc.analysis.as_ref().unwrap());
}

/// A published table as a sweep on a 128-CPU machine: one run per row, its throughput and %CPU
/// from the table, for a job of 1000 MB.
fn published_sweep(dir: &Path, table: &str) -> Results {
    let template: Results =
        serde_json::from_str(&std::fs::read_to_string(fixture("report/results.json")).unwrap())
            .unwrap();
    let mut doc = template.clone();
    doc.machine.logical_cpus = 128;
    doc.machine.allowed_cpus = 128;
    doc.throughput_unit = Some("MB/s".into());
    doc.analysis = None;
    doc.findings.clear();
    doc.points.clear();
    let text = std::fs::read_to_string(fixture(table)).unwrap();
    let mut counts = Vec::new();
    for line in text.lines().skip(1) {
        let f: Vec<f64> = line.split(',').map(|x| x.parse().unwrap()).collect();
        let (threads, mb_s, cpu) = (f[0], f[1], f[2]);
        let mut p = template.points[0].clone();
        p.params.insert("threads".into(), serde_json::Value::from(threads as u64));
        p.runs.truncate(1);
        let r = &mut p.runs[0];
        r.wall_s = 1000.0 / mb_s;
        r.throughput = Some(mb_s);
        r.metrics.clear();
        r.cpu_pct = cpu;
        r.user_s = cpu / 100.0 * r.wall_s;
        r.sys_s = 0.0;
        doc.points.push(p);
        counts.push(format!("{threads}"));
    }
    doc.plan.params[0].values = counts;
    std::fs::write(dir.join("doc.json"), serde_json::to_string(&doc).unwrap()).unwrap();
    let out = dir.join("shown.json");
    let o = scalescope(dir, &["show", "doc.json", "--export-json", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    serde_json::from_str(&std::fs::read_to_string(out).unwrap()).unwrap()
}

#[test]
fn a_published_table_past_its_peak_is_a_retrograde_finding() {
    let d = tempfile::tempdir().unwrap();
    let doc = published_sweep(d.path(), "readspeed-original-before-patches.csv");
    let r = doc
        .findings
        .iter()
        .find(|f| f.kind == Kind::Retrograde)
        .unwrap_or_else(|| panic!("{:?}", doc.findings));
    assert!(r.severity >= Severity::Medium, "{r:?}");
    assert!(r.summary.contains("32 threads") && r.summary.contains("64 threads"), "{r:?}");
    round_trip(d.path(), "doc.json", doc.analysis.as_ref().unwrap());
    let fine = published_sweep(d.path(), "readspeed-90x.csv");
    assert!(!fine.findings.iter().any(|f| f.kind == Kind::Retrograde), "{:?}", fine.findings);
}

#[test]
fn a_published_table_far_from_ideal_with_no_cause_is_a_serial_fraction() {
    let d = tempfile::tempdir().unwrap();
    let doc = published_sweep(d.path(), "readspeed-original-after-patches.csv");
    let s = doc
        .findings
        .iter()
        .find(|f| f.kind == Kind::SerialFraction)
        .unwrap_or_else(|| panic!("{:?}", doc.findings));
    assert!(s.severity >= Severity::Medium && s.at == Some(64.0), "{s:?}");
    let serial =
        doc.analysis.as_ref().unwrap().series[0].amdahl.as_ref().unwrap().serial_fraction.value;
    assert!(s.evidence.iter().any(|e| e.contains(&format!("{serial:.4}"))), "{s:?}");
    assert!(!doc.findings.iter().any(|f| f.kind == Kind::ScalesWell), "{:?}", doc.findings);
}

#[test]
fn show_and_the_html_report_put_the_back_test_beside_an_extrapolation() {
    // The guide's sweep of 1, 2 and 4 threads, as if taken on 4 CPUs: three counts to fit.
    let d = tempfile::tempdir().unwrap();
    let mut doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fixture("guide/results.json")).unwrap())
            .unwrap();
    doc["machine"]["allowed_cpus"] = 4.into();
    std::fs::write(d.path().join("results.json"), serde_json::to_string(&doc).unwrap()).unwrap();
    let guide = "results.json";
    let o = scalescope(d.path(), &["show", guide, "--predict", "8"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.contains("back-test: from 1–2 threads this procedure predicted 4 threads"),
        "{text}"
    );
    assert!(text.contains("prediction at 8 threads (extrapolated): "), "{text}");
    let o = scalescope(d.path(), &["report", guide, "--predict", "8", "-o", "r.html"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let page = std::fs::read_to_string(d.path().join("r.html")).unwrap();
    assert!(
        page.contains("back-test: from 1–2 threads this procedure predicted 4 threads"),
        "no back-test in the report"
    );
    let o = scalescope(d.path(), &["show", guide, "--predict", "3"]);
    assert!(!stdout(&o).contains("back-test"), "{}", stdout(&o));
}

/// Every model line docs/analysis.md shows under a `$ scalescope analyze --csv TABLE …` is one that
/// command prints, on the fixture table of that name.
#[test]
fn the_model_lines_in_analysis_md_are_what_analyze_prints() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let doc = std::fs::read_to_string(root.join("docs/analysis.md")).unwrap();
    let mut checked = 0;
    for block in doc.split("```console\n").skip(1) {
        let block = block.split("```").next().unwrap();
        let Some(cmd) = block.lines().next().and_then(|l| l.strip_prefix("$ scalescope ")) else {
            continue;
        };
        let args: Vec<&str> = cmd.split_whitespace().collect();
        let table = args[args.iter().position(|a| *a == "--csv").unwrap() + 1];
        let dir = ["tests/fixtures", "tests/fixtures/tables"]
            .map(|d| root.join(d))
            .into_iter()
            .find(|d| d.join(table).exists());
        let o = scalescope(&dir.unwrap_or_else(|| panic!("{table} is no fixture")), &args);
        let printed = stdout(&o);
        for line in block.lines().filter(|l| l.starts_with("  - ")) {
            assert!(
                printed.lines().any(|p| p == line),
                "docs/analysis.md shows a line `{cmd}` does not print:\n{line}\n\n{printed}"
            );
            checked += 1;
        }
    }
    assert!(checked >= 10, "{checked} lines checked");
}

#[test]
fn weak_scaling_predictions_are_said_in_seconds_a_run_takes() {
    // Work grows with the count; each run takes a little longer than the one before.
    let d = tempfile::tempdir().unwrap();
    let table = d.path().join("weak.csv");
    std::fs::write(&table, "threads,time_s\n1,10.0\n2,10.5\n4,11.1\n8,12.0\n").unwrap();
    let (text, _) = analyze_columns(
        &table,
        &["--count", "threads", "--time", "time_s", "--weak", "--predict", "16"],
    );
    let line = text
        .lines()
        .find(|l| l.contains("prediction at 16 threads"))
        .unwrap_or_else(|| panic!("{text}"));
    let secs: f64 =
        line.split("): ").nth(1).and_then(|r| r.split(' ').next()).unwrap().parse().unwrap();
    assert!((12.0..16.0).contains(&secs), "a run at 16 threads takes 12-16 s, not 1/rate: {line}");
    // Karp–Flatt falls as a fixed cost is spread over growing work: no fast baseline in that.
    assert!(!text.contains("did more per core"), "{text}");
}

#[test]
fn a_superlinear_first_step_is_left_out_of_the_forecast_and_said() {
    // CP2K's LiH on Jaguar: 1024 cores took 4.8 times as long as 2048, and 65536 cores 256 s.
    let d = tempfile::tempdir().unwrap();
    let cut = cut_before(&d, "tables/cp2k_lih_hfx_jaguar_xt5.csv", 32768);
    let (text, a) =
        analyze_columns(&cut, &["--count", "cores", "--time", "time_s", "--predict", "65536"]);
    let b = a.series[0].fast_baseline.as_ref().unwrap();
    assert!(b.count == 1024.0 && b.second[0] == 2048.0 && b.second[1] < -0.5, "{b:?}");
    assert!(
        text.contains("baseline: 1024 cores did less per core than the rest (2048 cores ran faster than perfect scaling from it"),
        "{text}"
    );
    let f = a.series[0].predictions[0].forecast.as_ref().unwrap();
    let [lo, hi] = f.interval90.unwrap();
    assert!(lo <= 1.0 / 255.97 && 1.0 / 255.97 <= hi, "{f:?}\n{text}");
    assert!(f.model.starts_with("Amdahl"), "{f:?}");
}
