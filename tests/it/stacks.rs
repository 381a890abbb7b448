//! The evidence layer on real processes, as an unprivileged user (tests started as root re-run
//! themselves as `tuser` through runuser): waits named by the stacks where they are taken, the
//! tracer's exact intervals and on-CPU stacks, and the /proc evidence alone when a seccomp filter
//! refuses perf_event_open.

use crate::common;

use common::histogram;
use scalescope::results::{Class, Phases};
use scalescope::sample::TracerConfig;
use scalescope::sample::monotonic_ns;
use scalescope::sample::procfs;
use scalescope::sample::{Evidence, Findings};
use std::collections::HashMap;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::process::Command;
use std::time::Duration;

const INNER: &str = "SCALESCOPE_STACKS_INNER";
/// The workload, built by the outer test (the unprivileged user may not write in target/).
const WORKLOAD: &str = "SCALESCOPE_STACKS_WORKLOAD";
const UNPRIVILEGED: &str = "tuser";
const FUTEX: &str = "202 ";

/// Runs `name` again in a child process (a copy of this test binary that every user can run),
/// as `tuser` when started as root, with `seccomp` filters applied when asked; true when the
/// child ran it (and passed).
fn rerun(name: &str, refuse_perf: bool) -> bool {
    if std::env::var_os(INNER).is_some() {
        return false;
    }
    // Copies of the test binary and the workload that every user can reach, wherever the checkout is.
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let reachable = |from: &std::path::Path, name: &str| {
        let to = dir.path().join(name);
        std::fs::copy(from, &to).unwrap();
        std::fs::set_permissions(&to, std::fs::Permissions::from_mode(0o755)).unwrap();
        to
    };
    let exe = reachable(&std::env::current_exe().unwrap(), "stacks");
    let workload = reachable(histogram(), "histogram");
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    let has_user = Command::new("id").arg(UNPRIVILEGED).output().is_ok_and(|o| o.status.success());
    let mut cmd = if root && has_user {
        let mut c = Command::new("runuser");
        c.args(["-u", UNPRIVILEGED, "--"]).arg(&exe);
        c
    } else {
        if root {
            eprintln!("note: no user {UNPRIVILEGED}: checked as root only");
        }
        Command::new(&exe)
    };
    // Inside the one test binary, a test's name starts with its module's (`stacks::…`).
    let full =
        format!("{}::{name}", module_path!().split_once("::").map_or(module_path!(), |(_, m)| m));
    cmd.args(["--exact", &full, "--include-ignored", "--nocapture", "--test-threads", "1"])
        .env(INNER, "1")
        .env(WORKLOAD, &workload);
    if refuse_perf {
        // SAFETY: only async-signal-safe prctl calls run between fork and exec.
        unsafe { cmd.pre_exec(refuse_perf_event_open) };
    }
    let mut out = cmd.output().unwrap();
    if !out.status.success() {
        // Seen in CI, not reproduced here: the workload's own frames stayed unnamed in one run.
        // Once again, and said, so that a flaky symbolisation shows without failing the suite.
        eprintln!(
            "note: {name} failed once and is run again:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        out = cmd.output().unwrap();
    }
    let text =
        format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{text}");
    assert!(text.contains("1 passed"), "{text}");
    true
}

/// Installs a seccomp filter under which perf_event_open fails with EACCES, as in a container.
fn refuse_perf_event_open() -> std::io::Result<()> {
    #[cfg(target_arch = "x86_64")]
    const AUDIT_ARCH: u32 = 0xc000_003e;
    #[cfg(target_arch = "aarch64")]
    const AUDIT_ARCH: u32 = 0xc000_00b7;
    let nr = libc::SYS_perf_event_open as u32;
    let filter = [
        // A = arch; another architecture's calls are let through untouched.
        libc::sock_filter { code: 0x20, jt: 0, jf: 0, k: 4 },
        libc::sock_filter { code: 0x15, jt: 0, jf: 3, k: AUDIT_ARCH },
        // A = nr; perf_event_open gets EACCES.
        libc::sock_filter { code: 0x20, jt: 0, jf: 0, k: 0 },
        libc::sock_filter { code: 0x15, jt: 0, jf: 1, k: nr },
        libc::sock_filter { code: 0x06, jt: 0, jf: 0, k: 0x0005_0000 | libc::EACCES as u32 },
        libc::sock_filter { code: 0x06, jt: 0, jf: 0, k: 0x7fff_0000 },
    ];
    let prog = libc::sock_fprog {
        len: filter.len() as u16,
        filter: filter.as_ptr() as *mut libc::sock_filter,
    };
    // SAFETY: prctl with valid arguments; `prog` outlives the call.
    unsafe {
        if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
            || libc::prctl(
                libc::PR_SET_SECCOMP,
                libc::SECCOMP_MODE_FILTER,
                &prog as *const libc::sock_fprog,
            ) != 0
        {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Follows `histogram MODE 4 SECONDS` with the evidence layer as the sampler would: a sweep
/// every 10 ms, every futex-blocked thread's stack taken. Returns the sites seen and the findings.
fn follow(mode: &str, seconds: &str) -> (HashMap<String, usize>, Findings, bool) {
    let exe = std::env::var_os(WORKLOAD)
        .map_or_else(|| histogram().to_path_buf(), std::path::PathBuf::from);
    let mut child = Command::new(exe)
        .args([mode, "4", seconds])
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id() as i32;
    let mut ev = Evidence::start(pid, &TracerConfig::default(), monotonic_ns());
    let traced = ev.traced();
    let mut sites: HashMap<String, usize> = HashMap::new();
    let mut blocked: HashMap<i32, f64> = HashMap::new();
    while child.try_wait().unwrap().is_none() {
        std::thread::sleep(Duration::from_millis(10));
        let d = ev.drain();
        ev.add(&d);
        for t in std::fs::read_dir(format!("/proc/{pid}/task")).into_iter().flatten().flatten() {
            let Some(tid) = t.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else {
                continue;
            };
            let Ok(text) = std::fs::read_to_string(t.path().join("syscall")) else { continue };
            if text.starts_with(FUTEX) && text.split_whitespace().nth(3) == Some("0x2") {
                *blocked.entry(tid).or_default() += 0.01;
                if let Some(site) = ev.blocked(pid, tid, &text, Class::Lock) {
                    *sites.entry(site).or_default() += 1;
                }
            }
            assert!(procfs::user_sp_pc(&text).is_some() || text.trim() == "running", "{text}");
        }
    }
    let untraced: Vec<(i32, f64)> = blocked.into_iter().collect();
    (
        sites,
        ev.finish(Phases { startup_end_s: 0.0, tail_start_s: f64::INFINITY }, &untraced).0,
        traced,
    )
}

/// Runs `scalescope run -o r OPTIONS -- COMMAND…` in `dir`, which must succeed; its stdout.
fn swept(dir: &std::path::Path, options: &str, command: &[&str]) -> String {
    let o = common::sweep(dir, options, command);
    assert!(o.status.success(), "{}", common::stderr(&o));
    common::stdout(&o)
}

fn top(sites: &HashMap<String, usize>) -> &str {
    sites.iter().max_by_key(|(_, n)| **n).map(|(s, _)| s.as_str()).unwrap_or("")
}

#[test]
fn a_heap_mutex_is_named_where_it_is_taken() {
    let _guard = common::measuring();
    if rerun("a_heap_mutex_is_named_where_it_is_taken", false) {
        return;
    }
    let (sites, f, _) = follow("contend", "1.0");
    assert_eq!(top(&sites), "pthread_mutex_lock ← update_histogram ← worker", "{sites:?}");
    let p = f.stacks.expect("a profile");
    let lock_s: f64 = p.off_cpu.iter().filter(|s| s.class == Class::Lock).map(|s| s.seconds).sum();
    assert!(lock_s > 0.1, "{:?}", p.off_cpu);
}

#[test]
#[ignore = "needs perf_event_open (kernel.perf_event_paranoid at most 2, no seccomp filter); .ci/run runs it"]
fn the_tracer_finds_the_critical_section_on_cpu() {
    let _guard = common::measuring();
    if rerun("the_tracer_finds_the_critical_section_on_cpu", false) {
        return;
    }
    let (_, f, traced) = follow("contend", "1.0");
    assert!(traced, "the kernel refuses perf_event_open here: {:?}", f.limits);
    let p = f.stacks.expect("a profile");
    let t = f.tracer.expect("the tracer's account");
    assert!(t.samples > 10 && t.unwound * 10 >= t.samples * 9, "{t:?}");
    assert_eq!(t.lost_records, 0, "{t:?}");
    assert_eq!(t.stopped_s, None, "threads handing a lock to each other keep their tracer: {t:?}");
    assert_eq!(f.threads.len(), 5, "main and four workers: {:?}", f.threads);
    let hot_in_update = p
        .on_cpu
        .iter()
        .filter(|s| p.frames_of(s.stack).any(|fr| fr.function == "update_histogram"))
        .map(|s| s.samples)
        .sum::<u64>();
    assert!(
        hot_in_update * 2 > t.samples,
        "the critical section holds most CPU samples: {hot_in_update} of {}",
        t.samples
    );
}

#[test]
#[ignore = "needs perf_event_open (kernel.perf_event_paranoid at most 2, no seccomp filter); .ci/run runs it"]
fn a_function_inlined_into_its_caller_is_named_from_the_debug_information() {
    let _guard = common::measuring();
    if std::env::var_os(INNER).is_some() {
        return;
    }
    // update_histogram is inlined into worker: only DWARF knows it is there.
    let d = tempfile::tempdir().unwrap();
    let exe = common::histogram_inlined().to_str().unwrap().to_string();
    let out = swept(d.path(), "-r 1 -w 0", &[&exe, "contend", "4", "0.6"]);
    assert!(out.contains("lock at pthread_mutex_lock ← update_histogram ← worker"), "{out}");
    let doc = common::results(&d.path().join("r"));
    let t = doc.points[0].runs[0].threads.as_ref().expect("the run is sampled");
    assert!(t.tracer.is_some(), "the kernel refuses perf_event_open here: {:?}", t.limits);
    let p = t.stacks.as_ref().expect("the sampler stores stacks");
    let samples = |f: &dyn Fn(&str) -> bool| -> u64 {
        p.on_cpu
            .iter()
            .filter(|s| p.frames_of(s.stack).last().is_some_and(|fr| f(&fr.function)))
            .map(|s| s.samples)
            .sum()
    };
    let all = samples(&|_| true);
    let inlined = samples(&|f| f == "update_histogram");
    assert!(
        inlined * 2 > all,
        "the critical section, inlined, holds most CPU samples: {inlined} of {all}"
    );
}

#[test]
fn a_rust_mutex_is_named_where_it_is_taken() {
    let _guard = common::measuring();
    if std::env::var_os(INNER).is_some() {
        return;
    }
    // The standard library's lock_contended keeps a frame pointer; /proc gives a blocked thread's
    // sp and pc only, and the frame pointer is found on its stack.
    let d = tempfile::tempdir().unwrap();
    let exe = common::histogram_rust().to_str().unwrap().to_string();
    let out = swept(d.path(), "-r 1 -w 0", &[&exe, "4", "0.6"]);
    // Without debug information the inlined Mutex::lock is not named: the site starts at the
    // standard library's lock_contended.
    let site = "lock_contended ← histogram::update_histogram ← histogram::worker (heap+0x";
    assert!(out.lines().any(|l| l.contains(": lock at ") && l.contains(site)), "{out}");
}

#[test]
fn a_lock_taken_in_start_up_shows_in_the_start_up_phase() {
    let _guard = common::measuring();
    if std::env::var_os(INNER).is_some() {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let exe = histogram().to_str().unwrap().to_string();
    let site = "lock at pthread_mutex_lock ← update_histogram ← load_config (heap+0x";
    let sweep = || {
        let _ = std::fs::remove_dir_all(d.path().join("r"));
        swept(d.path(), "-r 1 -w 0 --param n=2", &[&exe, "startup", "{n}", "0.6"])
    };
    let in_load_config = |p: &scalescope::results::StackProfile, phase| -> f64 {
        p.off_cpu
            .iter()
            .filter(|s| s.phase == phase && s.class == Class::Lock)
            .filter(|s| p.frames_of(s.stack).any(|fr| fr.function == "load_config"))
            .map(|s| s.seconds)
            .sum()
    };
    use scalescope::results::Phase;
    let stacks = || {
        let doc = common::results(&d.path().join("r"));
        let p = doc.points[0].runs[0].threads.as_ref().and_then(|t| t.stacks.clone());
        p.expect("the sampler stores stacks")
    };
    let all_of = |p: &scalescope::results::StackProfile| -> f64 {
        Phase::ALL.into_iter().map(|ph| in_load_config(p, ph)).sum()
    };
    // One run of 0.9 s: a busy moment of the machine can hide the loaders' waits or leave their
    // switches unsampled; once more then.
    let mut out = sweep();
    if !out.contains(site) || all_of(&stacks()) <= 0.05 {
        eprintln!("note: swept again, the first sweep did not show the loaders' lock:\n{out}");
        out = sweep();
    }
    assert!(out.contains(site), "{out}");
    let p = stacks();
    let all = all_of(&p);
    assert!(all > 0.05, "the loaders' lock waits carry their stacks: {:?}", p.off_cpu);
    // The loaders usually leave a CPU idle, which makes a start-up phase; when their hand-offs kept
    // both CPUs busy there is none, and nothing can be said of where their waits fall.
    if p.phases.startup_end_s > 0.1 {
        let startup = in_load_config(&p, Phase::Startup);
        assert!(startup > 0.5 * all, "{:?} {:?}", p.phases, p.off_cpu);
    }
}

#[test]
#[ignore = "needs perf_event_open (kernel.perf_event_paranoid at most 2, no seccomp filter); .ci/run runs it"]
fn threads_that_switch_without_pause_stop_the_tracer_not_the_accounting() {
    let _guard = common::measuring();
    if std::env::var_os(INNER).is_some() {
        return;
    }
    // Two threads pass a byte through pipes for 1.5 s: a few hundred thousand switches a second,
    // each of which the tracer would record, and which ran half as fast beside it.
    // A host disturbed by other machines' work can slow every switch of the relays enough that
    // the pace stays under the tracer's bound in a run: the test sweeps again, up to twice.
    let exe = histogram().to_str().unwrap().to_string();
    let said = "tracer: stopped itself early in the run";
    let mut tries = 0;
    let (out, doc) = loop {
        tries += 1;
        let d = tempfile::tempdir().unwrap();
        let out = swept(d.path(), "-r 2 -w 0", &[&exe, "relay", "1", "1.5"]);
        let doc = common::results(&d.path().join("r"));
        let stopped = doc.points[0].runs.iter().all(|r| {
            r.threads
                .as_ref()
                .and_then(|t| t.tracer.as_ref())
                .is_some_and(|t| t.stopped_s.is_some())
        });
        if stopped || tries == 3 {
            break (out, doc);
        }
    };
    assert_eq!(out.matches(said).count(), 1, "said once for the sweep: {out}");
    for run in &doc.points[0].runs {
        let t = run.threads.as_ref().expect("a thread report");
        let tr = t.tracer.as_ref().expect("the tracer's account");
        let stopped = tr.stopped_s.unwrap_or_else(|| panic!("the tracer stopped itself: {tr:?}"));
        assert!(stopped < 1.0, "{tr:?}");
        // The rings fill in about 30 ms at this pace: a machine loaded by other tests may keep
        // the collector from its CPU that long, and records are lost before the stop (none to
        // 20% of them in the suite's runs). They are said.
        assert!(!tr.exact, "{tr:?}");
        if tr.lost_records > 0 {
            assert!(t.limits.iter().any(|l| l.contains("records lost")), "{:?}", t.limits);
        }
        assert!(t.limits.iter().any(|l| l.starts_with(said)), "{:?}", t.limits);
        // The waits after the stop are still counted: the stacks of the relays blocked in read
        // carry their time off a CPU, from the counters.
        let p = t.stacks.as_ref().expect("the stack profile");
        let profiled: f64 = p.off_cpu.iter().map(|s| s.seconds).sum();
        let off: f64 = t.threads.iter().map(|x| x.off_cpu_s).sum();
        assert!(
            profiled > 0.8 * off && off > 1.0,
            "{profiled} of {off} s off a CPU in the profile"
        );
        let in_relay: f64 = p
            .off_cpu
            .iter()
            .filter(|s| p.frames_of(s.stack).any(|fr| fr.function == "relay"))
            .map(|s| s.seconds)
            .sum();
        assert!(
            in_relay > 0.5,
            "the relays' reads carry most of it: {in_relay} s; {:?}",
            p.off_cpu
        );
    }
}

#[test]
fn with_perf_event_open_refused_the_proc_evidence_carries_on() {
    let _guard = common::measuring();
    if rerun("with_perf_event_open_refused_the_proc_evidence_carries_on", true) {
        return;
    }
    let (sites, f, traced) = follow("contend", "0.6");
    assert!(!traced);
    assert!(
        f.limits
            .iter()
            .any(|l| l.starts_with("tracer unavailable (perf_event_open: Permission denied")),
        "{:?}",
        f.limits
    );
    assert!(f.tracer.is_none());
    assert_eq!(top(&sites), "pthread_mutex_lock ← update_histogram ← worker", "{sites:?}");
    let p = f.stacks.expect("a profile from the counters and the stacks of blocked threads");
    assert!(p.off_cpu.iter().any(|s| s.class == Class::Lock && s.seconds > 0.0), "{:?}", p.off_cpu);
}

#[test]
fn stored_stacks_become_flame_graphs_and_folded_text() {
    let _guard = common::measuring();
    if std::env::var_os(INNER).is_some() {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let exe = histogram().to_str().unwrap().to_string();
    swept(d.path(), "-r 1 -w 0 --param n=2", &[&exe, "contend", "{n}", "0.6"]);
    let folded = d.path().join("f.txt");
    let o =
        common::scalescope(d.path(), &["report", "r", "--export-folded", folded.to_str().unwrap()]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    let text = std::fs::read_to_string(&folded).unwrap();
    let count = |l: &&str| l.rsplit_once(' ').and_then(|(_, n)| n.parse::<u64>().ok()).unwrap_or(0);
    let line = text
        .lines()
        .filter(|l| l.contains("off-CPU lock;"))
        .max_by_key(count)
        .unwrap_or_else(|| panic!("an off-CPU lock stack in:\n{text}"));
    assert!(
        line.starts_with("n=2;off-CPU lock;") && line.contains(";worker;update_histogram;"),
        "{line}"
    );
    for l in text.lines() {
        let (stack, count) = l.rsplit_once(' ').unwrap();
        assert!(count.parse::<u64>().unwrap() > 0 && !stack.is_empty(), "{l}");
    }
    let html = std::fs::read_to_string(d.path().join("r/report.html")).unwrap();
    assert!(
        html.contains("<h2>Flame graphs</h2>") && html.contains("class=\"flame\""),
        "the report shows them"
    );
    assert!(html.contains("data-n=\"update_histogram\""));
}
