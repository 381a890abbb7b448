//! %CPU of a program burning N threads is at most 100 × min(N, CPUs), and its CPU time is that of
//! every thread. Alone in its test binary so that no other test competes for the cores. Other
//! processes on the machine lower %CPU by any amount, so only what they cannot change is asserted:
//! the ceiling, and the CPU time of a fixed amount of work.

use crate::common;
use common::*;

#[test]
fn cpu_percent_follows_busy_threads_up_to_the_cores() {
    let d = tempfile::tempdir().unwrap();
    let cpus = std::thread::available_parallelism().unwrap().get();
    let n = (cpus * 2).to_string();
    let params = format!("-r 2 -w 0 --param threads=1,{cpus},{n}");
    // The same total work at every count: the CPU time it takes does not depend on the threads.
    let o = sweep(d.path(), &params, &probe_scalable(&["--ops", "200000000"]));
    assert!(o.status.success(), "{}", stderr(&o));
    let doc = results(&d.path().join("r"));
    let cpu_time = |i: usize| {
        let s = doc.points[i].stats();
        s.user_s.as_ref().unwrap().mean + s.sys_s.as_ref().unwrap().mean
    };
    for (i, threads) in [1, cpus, cpus * 2].into_iter().enumerate() {
        let p = &doc.points[i];
        let ceiling = 100.0 * threads.min(cpus) as f64;
        for r in &p.runs {
            assert!(
                r.cpu_pct <= 1.05 * ceiling,
                "threads={threads}: %CPU {} above {ceiling}",
                r.cpu_pct
            );
            let pct = 100.0 * (r.user_s + r.sys_s) / r.wall_s;
            assert!((r.cpu_pct - pct).abs() < 1e-6 * pct, "%CPU is (user + sys) / wall: {r:?}");
        }
        // Every thread's CPU time is counted: counting one of N would give a fraction of it.
        let ratio = cpu_time(i) / cpu_time(0);
        assert!(
            (0.75..1.35).contains(&ratio),
            "threads={threads}: {ratio:.2}× the CPU time of one thread"
        );
        assert!(p.stats().throughput.as_ref().unwrap().mean > 0.0);
    }
    assert_eq!(doc.throughput_unit.as_deref(), Some("ops/s"));
}
