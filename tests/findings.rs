//! The diagnosis on the zoo: every probe has one known problem, and a knob that removes it. A
//! sweep over threads=1,2 must raise that finding first, with its evidence, and the fixed variant
//! must not raise it. Serialised: the probes are CPU-bound and timing-sensitive.

mod common;
use common::*;
use scalescope::results::findings::{Finding, Kind, Severity};
use std::sync::Mutex;

static SERIAL: Mutex<()> = Mutex::new(());

/// Sweeps a probe (threads=1,2 unless `threads` says otherwise) and returns its findings.
fn findings(threads: &str, probe: &[&str]) -> Vec<Finding> {
    findings_with("-r 2 -w 0", threads, probe)
}

/// The same with other run options.
fn findings_with(options: &str, threads: &str, probe: &[&str]) -> Vec<Finding> {
    let _guard = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let d = tempfile::tempdir().unwrap();
    let exe = bin().to_string_lossy().into_owned();
    let mut command = vec![exe.as_str(), "probe"];
    command.extend(probe);
    let o = sweep(d.path(), &format!("{options} --param threads={threads}"), &command);
    assert!(o.status.success(), "{probe:?}: {}", stderr(&o));
    let doc = results(&d.path().join("r"));
    doc.findings.into_iter().filter(|f| f.kind != Kind::NoisyMeasurement).collect()
}

fn kinds(f: &[Finding]) -> Vec<Kind> {
    f.iter().map(|x| x.kind).collect()
}

fn first(f: &[Finding], kind: Kind) -> &Finding {
    assert_eq!(f.first().map(|x| x.kind), Some(kind), "findings: {:?}", kinds(f));
    &f[0]
}

fn absent(f: &[Finding], kind: Kind) {
    assert!(!kinds(f).contains(&kind), "{kind:?} raised for the fixed variant: {:?}", kinds(f));
}

#[test]
fn scalable_within_the_cores_scales_well_and_nothing_else() {
    let f = findings("1,2", &["scalable", "--threads", "{threads}"]);
    first(&f, Kind::ScalesWell);
    assert!(f.iter().skip(1).all(|x| x.severity == Severity::Info), "{:?}", kinds(&f));
}

#[test]
fn a_global_mutex_is_lock_contention_named_by_its_symbol() {
    let f = findings("1,2", &["lock", "--threads", "{threads}", "--critical", "0.6"]);
    let l = first(&f, Kind::LockContention);
    assert!(l.summary.contains("scalescope::probes::zoo::GLOBAL_LOCK+0x0"), "{l:?}");
    absent(&findings("1,2", &["lock", "--threads", "{threads}", "--critical", "0"]), Kind::LockContention);
}

#[test]
fn a_single_threaded_phase_is_a_serial_phase_of_the_right_length() {
    let f = findings("1,2", &["serial", "--threads", "{threads}", "--serial", "0.3"]);
    let s = first(&f, Kind::SerialPhase);
    let phase: f64 = s.evidence[0].split_whitespace().nth(2).unwrap().parse().unwrap();
    assert!(phase > 0.05, "{s:?}");
    absent(&findings("1,2", &["serial", "--threads", "{threads}", "--serial", "0"]), Kind::SerialPhase);
}

#[test]
fn one_thread_with_a_bigger_share_is_load_imbalance() {
    first(&findings("1,2", &["imbalance", "--threads", "{threads}"]), Kind::LoadImbalance);
    absent(&findings("1,2", &["imbalance", "--threads", "{threads}", "--balanced"]), Kind::LoadImbalance);
}

#[test]
fn one_producer_for_many_consumers_is_wait_for_work() {
    let f = findings("1,2", &["starved", "--threads", "{threads}"]);
    assert!(kinds(&f).contains(&Kind::WaitForWork), "{:?}", kinds(&f));
    absent(&findings("1,2", &["starved", "--threads", "{threads}", "--producers", "2"]), Kind::WaitForWork);
}

#[test]
fn counters_in_one_cache_line_are_on_cpu_inefficiency() {
    let f = findings("1,2", &["false-sharing", "--threads", "{threads}"]);
    assert!(kinds(&f)[..2.min(f.len())].contains(&Kind::OnCpuInefficiency), "{:?}", kinds(&f));
    absent(&findings("1,2", &["false-sharing", "--threads", "{threads}", "--padded"]), Kind::OnCpuInefficiency);
}

#[test]
fn an_mmap_storm_is_kernel_contention_with_the_syscalls_named() {
    let f = findings("1,2", &["mmap-churn", "--threads", "{threads}"]);
    let k = f.iter().find(|x| x.kind == Kind::KernelContention).unwrap_or_else(|| panic!("{:?}", kinds(&f)));
    let s = &k.summary;
    assert!(["mprotect", "mmap", "munmap", "page fault"].iter().any(|n| s.contains(n)), "{s}");
    absent(&findings("1,2", &["scalable", "--threads", "{threads}"]), Kind::KernelContention);
}

#[test]
fn more_threads_than_cores_is_oversubscription() {
    let cpus = std::thread::available_parallelism().unwrap().get();
    let f = findings(&format!("1,{cpus},{}", 4 * cpus), &["scalable", "--threads", "{threads}"]);
    assert!(kinds(&f).contains(&Kind::CpuOversubscription), "{:?}", kinds(&f));
    absent(&findings(&format!("1,{cpus}"), &["scalable", "--threads", "{threads}"]), Kind::CpuOversubscription);
}

#[test]
fn a_program_that_ignores_the_parameter_is_threads_ignored() {
    let f = findings("1,2", &["scalable", "--threads", "1"]);
    first(&f, Kind::ThreadsIgnored);
}

#[test]
fn runs_of_a_few_milliseconds_are_startup_dominated() {
    let f = findings("1,2", &["scalable", "--threads", "{threads}", "--ops", "10000"]);
    assert!(kinds(&f).contains(&Kind::StartupDominated), "{:?}", kinds(&f));
}

#[test]
fn cold_random_reads_are_io_bound_with_the_syscall_named() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("in");
    let o = scalescope(d.path(), &["gen", "files", "--dir", dir.to_str().unwrap(), "--count", "2", "--size", "64MB"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let files = dir.to_str().unwrap();
    let f = findings("1,2", &["io", "--threads", "{threads}", "--files", files, "--reads", "20000"]);
    let io = first(&f, Kind::IoBound);
    assert!(io.summary.contains("pread64"), "{io:?}");
    let warm = findings_with(
        "-r 2 -w 1",
        "1,2",
        &["io", "--threads", "{threads}", "--files", files, "--warm", "--reads", "20000"],
    );
    absent(&warm, Kind::IoBound);
}

#[test]
fn wildly_varying_runs_are_noisy_measurement() {
    let _guard = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let d = tempfile::tempdir().unwrap();
    let o = scalescope(
        d.path(),
        &["run", "-r", "4", "-w", "0", "-o", "r", "--param", "n=1,2", "--shell", "--", "sleep 0.0$(( $$ % 9 + 1 ))"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let doc = results(&d.path().join("r"));
    assert!(doc.findings.iter().any(|x| x.kind == Kind::NoisyMeasurement), "{:?}", doc.findings);
}
