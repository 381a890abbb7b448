//! %CPU of a program burning N threads is 100 × min(N, CPUs). Alone in its test binary so that no
//! other test competes for the cores.

mod common;
use common::*;

#[test]
fn cpu_percent_follows_busy_threads_up_to_the_cores() {
    let d = tempfile::tempdir().unwrap();
    let cpus = std::thread::available_parallelism().unwrap().get();
    let n = (cpus * 2).to_string();
    let params = format!("-r 2 -w 0 --param threads=1,{cpus},{n}");
    let o = sweep(d.path(), &params, &probe_scalable(&["--seconds", "0.4"]));
    assert!(o.status.success(), "{}", stderr(&o));
    let doc = results(&d.path().join("r"));
    for (i, threads) in [1, cpus, cpus * 2].into_iter().enumerate() {
        let cpu = doc.points[i].stats.cpu_pct.as_ref().unwrap().mean;
        let expect = 100.0 * threads.min(cpus) as f64;
        assert!(cpu > 0.85 * expect && cpu < 1.05 * expect, "threads={threads}: %CPU {cpu}, expected about {expect}");
        let tp = doc.points[i].stats.throughput.as_ref().unwrap().mean;
        assert!(tp > 0.0);
    }
    assert_eq!(doc.throughput_unit.as_deref(), Some("ops/s"));
}
