//! Helpers shared by the integration tests: the binary, temporary folders, results documents.

use scalescope::results::Results;
use std::cell::{Cell, RefCell};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};

/// The machine: shared by the tests that run scalescope or build a workload, held alone by those
/// whose figures need the CPUs to themselves (the harness runs tests in parallel, and two sweeps
/// at once on 2 CPUs measure each other).
static MACHINE: RwLock<()> = RwLock::new(());

thread_local! {
    /// This test's share of the machine, taken when it first runs scalescope or builds a workload
    /// and kept until the test ends: the harness runs each test on a thread of its own, whose end
    /// drops it. Tests must not call these helpers from threads they spawn while `measuring`.
    static SHARE: RefCell<Option<RwLockReadGuard<'static, ()>>> = const { RefCell::new(None) };
    /// Whether this test holds the machine alone.
    static ALONE: Cell<bool> = const { Cell::new(false) };
}

/// The machine to this test alone until the guard drops: no other test runs scalescope or
/// builds a workload meanwhile.
pub struct Alone {
    _guard: RwLockWriteGuard<'static, ()>,
}

impl Drop for Alone {
    fn drop(&mut self) {
        ALONE.set(false);
    }
}

/// Waits until no other test uses the machine and keeps it for this test while the guard lives.
pub fn measuring() -> Alone {
    SHARE.with_borrow_mut(|s| *s = None);
    let guard = MACHINE.write().unwrap_or_else(|e| e.into_inner());
    ALONE.set(true);
    Alone { _guard: guard }
}

/// Takes this test's share of the machine, unless it holds it alone already. The workloads' builders
/// take it before they wait for a build another test may be running: taken inside, a test waiting
/// to hold the machine alone and one building for it would wait for each other.
fn share() {
    if !ALONE.get() {
        SHARE.with_borrow_mut(|s| {
            if s.is_none() {
                *s = Some(MACHINE.read().unwrap_or_else(|e| e.into_inner()));
            }
        });
    }
}

/// The scalescope binary under test. Every scalescope the tests start, however they start it,
/// records its sweeps in a history of this test binary's own (`SCALESCOPE_HISTORY`), never in
/// the user's.
pub fn bin() -> PathBuf {
    share();
    static HISTORY: std::sync::Once = std::sync::Once::new();
    HISTORY.call_once(|| {
        let file = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("history-{}.sqlite", std::process::id()));
        // SAFETY: the tests read and change the environment only through std, which serialises
        // that with this write; no test calls C code that reads it meanwhile.
        unsafe { std::env::set_var("SCALESCOPE_HISTORY", file) };
    });
    PathBuf::from(env!("CARGO_BIN_EXE_scalescope"))
}

/// Runs scalescope with `args` in `cwd`, without a terminal.
pub fn scalescope(cwd: &Path, args: &[&str]) -> Output {
    Command::new(bin())
        .args(args)
        .current_dir(cwd)
        .env("NO_COLOR", "1")
        .output()
        .expect("spawn scalescope")
}

/// Reads the results.json in `dir` through the document's types, as written (no statistics
/// recomputed, no journal replayed).
pub fn results(dir: &Path) -> Results {
    let text = std::fs::read_to_string(dir.join("results.json")).expect("results.json exists");
    serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("results.json reads as a results document: {e}"))
}

/// The largest share of a point's capacity the hypervisor took (steal time, as the ledger and the
/// table reckon it: 0 on real hardware and for unsampled runs).
pub fn stolen_share(doc: &Results) -> f64 {
    doc.points
        .iter()
        .filter_map(|p| scalescope::diagnose::ledger::of(p, None))
        .map(|l| l.stolen_s / (l.capacity * l.wall_s).max(1e-12))
        .fold(0.0, f64::max)
}

/// The largest share of a point's capacity that other processes held while the job's threads
/// waited for a CPU (the ledger's "other processes": the suite's other tests, on a loaded CI).
pub fn other_load_share(doc: &Results) -> f64 {
    use scalescope::diagnose::ledger::Cause;
    doc.points
        .iter()
        .filter_map(|p| scalescope::diagnose::ledger::of(p, None))
        .map(|l| {
            l.item(&Cause::OtherLoad).map_or(0.0, |i| i.core_s) / (l.capacity * l.wall_s).max(1e-12)
        })
        .fold(0.0, f64::max)
}

/// Stderr as text.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Stdout as text.
pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Whether a process is still alive (not a zombie, not gone).
pub fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(s) => {
            let state =
                s.rsplit_once(')').map(|(_, r)| r.trim_start().chars().next().unwrap_or('?'));
            !matches!(state, Some('Z') | Some('X'))
        }
        Err(_) => false,
    }
}

/// Runs `scalescope run -o r OPTIONS -- COMMAND…` in `dir` (results in `dir/r`); OPTIONS is split
/// on whitespace, so give options with spaces through `scalescope` directly.
pub fn sweep(dir: &Path, options: &str, command: &[&str]) -> Output {
    let mut args = vec!["run", "-o", "r"];
    args.extend(options.split_whitespace());
    args.push("--");
    args.extend(command);
    scalescope(dir, &args)
}

/// The argv of the built-in `scalable` probe with `{threads}` threads and extra options.
pub fn probe_scalable(extra: &[&'static str]) -> Vec<&'static str> {
    let exe: &'static str = Box::leak(bin().to_string_lossy().into_owned().into_boxed_str());
    let mut argv = vec![exe, "probe", "scalable", "--threads", "{threads}"];
    argv.extend(extra);
    argv
}

/// tests/workloads/behave.c, built once per test binary with the system C compiler.
pub fn behave() -> &'static Path {
    static BIN: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    share();
    BIN.get_or_init(|| build_workload("behave"))
}

/// tests/workloads/histogram.c (workers contending on a heap mutex), built once per test binary.
pub fn histogram() -> &'static Path {
    static BIN: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    share();
    BIN.get_or_init(|| build_workload("histogram"))
}

/// tests/workloads/histogram.rs (workers contending on a `std::sync::Mutex`), built once per
/// test binary with the toolchain's rustc, optimised, symbols kept.
pub fn histogram_rust() -> &'static Path {
    static BIN: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    share();
    BIN.get_or_init(|| {
        let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
        build(&rustc, &["--edition", "2021", "-C", "opt-level=2"], "histogram.rs", &[])
    })
}

/// tests/workloads/histogram.c with update_histogram inlined into its callers, and DWARF (-g).
pub fn histogram_inlined() -> &'static Path {
    static BIN: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    share();
    BIN.get_or_init(|| build_workload_with("histogram", &["-g", "-DINLINED"]))
}

/// tests/workloads/critical.c (an OpenMP loop with a critical section, or a reduction), built once
/// per test binary with the system C compiler and its OpenMP runtime.
pub fn critical() -> &'static Path {
    static BIN: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    share();
    BIN.get_or_init(|| build_workload_with("critical", &["-fopenmp"]))
}

/// tests/workloads/handover.c (two stages handing items over through a condition variable),
/// built once per test binary.
pub fn handover() -> &'static Path {
    static BIN: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    share();
    BIN.get_or_init(|| build_workload("handover"))
}

/// Builds tests/workloads/NAME.c with the system C compiler (no frame pointers: stacks are
/// unwound from DWARF CFI).
fn build_workload(name: &str) -> PathBuf {
    build_workload_with(name, &[])
}

/// The same with more compiler flags.
fn build_workload_with(name: &str, flags: &[&str]) -> PathBuf {
    build("cc", &["-O1", "-pthread"], &format!("{name}.c"), flags)
}

/// Builds tests/workloads/SOURCE with `compiler`, its `options` and `flags`, into a program named
/// after the source without its extension.
fn build(compiler: &str, options: &[&str], source: &str, flags: &[&str]) -> PathBuf {
    share();
    // One folder per run of the tests (two may build at the same time), source and variant; the
    // program keeps its name.
    let name = source.split_once('.').map_or(source, |(n, _)| n);
    let variant: String = [source]
        .iter()
        .chain(flags)
        .flat_map(|f| f.chars())
        .filter(|c| c.is_ascii_alphanumeric())
        .collect();
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("{variant}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a folder for the workload");
    let out = dir.join(name);
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/workloads").join(source);
    let st = std::process::Command::new(compiler)
        .args(options)
        .args(flags)
        .arg("-o")
        .arg(&out)
        .arg(&src)
        .status()
        .unwrap_or_else(|e| panic!("{compiler} runs: {e}"));
    assert!(st.success(), "{compiler} failed on {}", src.display());
    out
}

/// `fixed` split on whitespace, then `rest`: keeps long argument lists readable.
pub fn argv<'a>(fixed: &'a str, rest: &[&'a str]) -> Vec<&'a str> {
    fixed.split_whitespace().chain(rest.iter().copied()).collect()
}

/// Chromium: the browser test is ignored unless asked for (`--include-ignored`, as .ci/run does),
/// and then the browser must be there.
pub fn chromium() -> PathBuf {
    ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .find_map(|n| {
            std::env::split_paths(&std::env::var_os("PATH")?)
                .map(|p| p.join(n))
                .find(|p| p.is_file())
        })
        .expect("chromium is not installed (apt-get install chromium)")
}

/// Compares `got` whole with the golden file at `path` (under tests/fixtures/), or rewrites the
/// file when UPDATE_GOLDEN is set.
pub fn golden(path: &str, got: &str) {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(path);
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&file, got).unwrap();
    }
    let want = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    assert!(
        got == want,
        "{path} differs; rerun with UPDATE_GOLDEN=1 after an intended change and review the diff:\n{got}"
    );
}

/// Runs scalescope with `args` in tests/fixtures/ (so that paths in its output are relative).
pub fn in_fixtures(args: &[&str]) -> Output {
    scalescope(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures"), args)
}
