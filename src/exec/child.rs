//! Runs one process in its own process group and measures it: wall time on the monotonic clock,
//! rusage of the whole waited-for tree via `wait4`, `/proc/<pid>/io` read while the child is a
//! zombie, bounded output capture, and a timeout that stops the whole group.

use super::capture::{self, Captured};
use super::metrics::Scanner;
use super::signals;
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// What to run and how.
pub struct Spec<'a> {
    /// Program and arguments.
    pub argv: &'a [String],
    /// Extra environment variables.
    pub env: &'a [(String, String)],
    /// Stop the group after this long.
    pub timeout: Option<Duration>,
    /// Metric extractors applied to both streams.
    pub scanner: Arc<Scanner>,
    /// Echo the program's output to ours.
    pub show_output: bool,
    /// Sample where the run's threads spend their time.
    pub sample: Option<crate::sample::Config>,
    /// Kill what the run leaves running, in its process group and outside it (not for hooks, whose
    /// servers may be meant to outlive them).
    pub kill_leftovers: bool,
}

/// How the process ended and what it used.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Wall time from spawn to exit.
    pub wall_s: f64,
    /// Exit code, when it exited.
    pub exit_code: Option<i32>,
    /// Terminating signal, when killed.
    pub signal: Option<i32>,
    /// Stopped by the timeout.
    pub timed_out: bool,
    /// Stopped because scalescope was interrupted.
    pub interrupted: bool,
    /// Resource usage of the process and its waited-for descendants.
    pub usage: Usage,
    /// rchar and wchar from `/proc/<pid>/io`, when readable.
    pub io: Option<(u64, u64)>,
    /// Captured stdout.
    pub stdout: Captured,
    /// Captured stderr.
    pub stderr: Captured,
    /// Where the threads' time went, when sampled.
    pub threads: Option<crate::sample::ThreadReport>,
    /// Processes the run left behind outside its process group (daemons), killed afterwards.
    pub strays: u32,
}

/// The parts of `struct rusage` scalescope records.
#[derive(Debug, Default, Clone, Copy)]
pub struct Usage {
    /// User CPU seconds.
    pub user_s: f64,
    /// System CPU seconds.
    pub sys_s: f64,
    /// Peak resident set in bytes.
    pub max_rss_bytes: u64,
    /// Minor page faults.
    pub minor_faults: u64,
    /// Major page faults.
    pub major_faults: u64,
    /// Blocks read (512-byte units).
    pub in_blocks: u64,
    /// Blocks written (512-byte units).
    pub out_blocks: u64,
    /// Voluntary context switches.
    pub voluntary_switches: u64,
    /// Involuntary context switches.
    pub involuntary_switches: u64,
}

/// Why a process could not be started.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct SpawnError(pub String);

/// Runs the process to its end (or timeout, or interrupt) and measures it.
pub fn run(spec: &Spec) -> Result<Outcome, SpawnError> {
    // Pipes and their reader threads exist before the clock starts: only the program is timed.
    let (out_r, out_w) = std::io::pipe().map_err(|e| spawn_error(&spec.argv[0], &e))?;
    let (err_r, err_w) = std::io::pipe().map_err(|e| spawn_error(&spec.argv[0], &e))?;
    let echo_out = spec.show_output.then(|| Box::new(std::io::stdout()) as _);
    let echo_err = spec.show_output.then(|| Box::new(std::io::stderr()) as _);
    let readers = [reader(out_r, &spec.scanner, echo_out), reader(err_r, &spec.scanner, echo_err)];
    let mut cmd = Command::new(resolve(&spec.argv[0]));
    cmd.args(&spec.argv[1..])
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(out_w)
        .stderr(err_w)
        .process_group(0);
    reset_peak_rss();
    let earlier = if spec.kill_leftovers { own_children() } else { Vec::new() };
    let start = Instant::now();
    let spawned = cmd.spawn();
    // Drop our copies of the write ends so the readers see end-of-file when the program's tree exits.
    drop(cmd);
    let child = spawned.map_err(|e| spawn_error(&spec.argv[0], &e))?;
    let pid = child.id() as i32;
    signals::set_current_group(pid);
    let sampler = spec.sample.and_then(|c| crate::sample::Sampler::start(pid, c));
    let timed_out = Arc::new(AtomicBool::new(false));
    let watchdog = spec.timeout.map(|t| watchdog(pid, t, timed_out.clone()));

    wait_exited(pid);
    let wall_s = start.elapsed().as_secs_f64();
    let threads = sampler.map(crate::sample::Sampler::stop);
    if let Some((done, handle)) = watchdog {
        drop(done);
        let _ = handle.join();
    }
    let io = read_io(pid);
    // Kill what the run left behind in its group while the leader's pid is still reserved.
    if spec.kill_leftovers {
        unsafe { libc::kill(-pid, libc::SIGKILL) };
    }
    signals::set_current_group(0);
    let (status, usage) = reap(pid);
    drop(child);
    let strays = if spec.kill_leftovers { kill_strays(&earlier) } else { 0 };

    let mut outcome = Outcome {
        wall_s,
        timed_out: timed_out.load(Ordering::SeqCst),
        interrupted: signals::interrupted(),
        usage,
        io,
        threads,
        strays,
        ..Outcome::default()
    };
    if libc::WIFEXITED(status) {
        outcome.exit_code = Some(libc::WEXITSTATUS(status));
    } else if libc::WIFSIGNALED(status) {
        outcome.signal = Some(libc::WTERMSIG(status));
    }
    let [out, err] = readers;
    outcome.stdout = collect(out);
    outcome.stderr = collect(err);
    Ok(outcome)
}

fn spawn_error(program: &str, e: &std::io::Error) -> SpawnError {
    SpawnError(match e.kind() {
        std::io::ErrorKind::NotFound => format!("cannot run '{program}': no such command (not on PATH and not a file)"),
        std::io::ErrorKind::PermissionDenied => {
            format!("cannot run '{program}': permission denied (is it executable?)")
        }
        _ => format!("cannot run '{program}': {e}"),
    })
}

/// Makes scalescope the reaper of orphans from its runs, so that a workload's daemons (double fork,
/// new session: out of reach of its process group) become scalescope's children when their parent
/// exits, and can be found and killed after the run.
pub fn become_subreaper() {
    // SAFETY: prctl with PR_SET_CHILD_SUBREAPER takes one integer argument.
    unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1 as libc::c_ulong, 0, 0, 0) };
}

/// Kills and reaps the children scalescope gained during a run (not those in `earlier`): orphans
/// of the run reparented to it. Killing one may orphan its own children, so it repeats until none
/// is left. Returns how many.
pub fn kill_strays(earlier: &[i32]) -> u32 {
    let mut killed = 0;
    for _ in 0..16 {
        let children: Vec<i32> = own_children().into_iter().filter(|c| !earlier.contains(c)).collect();
        if children.is_empty() {
            break;
        }
        for &c in &children {
            // An orphan that already exited (a launcher's short-lived helper) is only reaped.
            let zombie = std::fs::read_to_string(format!("/proc/{c}/stat"))
                .ok()
                .and_then(|s| crate::sample::procfs::stat(&s))
                .is_some_and(|s| s.state == 'Z');
            // SAFETY: kill and waitpid on our own children.
            unsafe {
                if !zombie {
                    libc::kill(c, libc::SIGKILL);
                }
                libc::waitpid(c, std::ptr::null_mut(), 0);
            }
            killed += u32::from(!zombie);
        }
    }
    killed
}

/// The children of every thread of this process.
fn own_children() -> Vec<i32> {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else { return Vec::new() };
    tasks
        .flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("children")).ok())
        .flat_map(|c| c.split_ascii_whitespace().filter_map(|p| p.parse().ok()).collect::<Vec<i32>>())
        .collect()
}

/// Resets scalescope's own peak resident set to its current size. The child is spawned sharing
/// our memory until it execs, and exec records that memory's peak as the child's max RSS: without
/// this, every run would report at least the largest RSS scalescope ever had.
fn reset_peak_rss() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// Finds a bare program name on PATH, as exec would, so the search is not timed with the run.
pub fn resolve(program: &str) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    if program.contains('/') {
        return program.into();
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|p| std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0))
        .unwrap_or_else(|| program.into())
}

type Reader = Option<mpsc::Receiver<Captured>>;

fn reader(
    src: impl Read + Send + 'static,
    scanner: &Arc<Scanner>,
    echo: Option<Box<dyn std::io::Write + Send>>,
) -> Reader {
    let scanner = scanner.clone();
    let (tx, rx) = mpsc::channel();
    std::thread::Builder::new()
        .name("scalescope-output".into())
        .spawn(move || {
            let _ = tx.send(capture::drain(src, scanner, echo));
        })
        .ok()?;
    Some(rx)
}

/// Waits for a reader; a descendant that escaped the group may hold the pipe open, so give up after a while.
fn collect(reader: Reader) -> Captured {
    reader.and_then(|rx| rx.recv_timeout(Duration::from_secs(2)).ok()).unwrap_or_default()
}

fn watchdog(pid: i32, limit: Duration, fired: Arc<AtomicBool>) -> (mpsc::Sender<()>, std::thread::JoinHandle<()>) {
    let (tx, rx) = mpsc::channel::<()>();
    let handle = std::thread::spawn(move || {
        if rx.recv_timeout(limit) == Err(mpsc::RecvTimeoutError::Timeout) {
            fired.store(true, Ordering::SeqCst);
            unsafe { libc::kill(-pid, libc::SIGTERM) };
            let grace = Duration::from_secs(signals::GRACE_S as u64);
            if rx.recv_timeout(grace) == Err(mpsc::RecvTimeoutError::Timeout) {
                unsafe { libc::kill(-pid, libc::SIGKILL) };
            }
        }
    });
    (tx, handle)
}

/// Blocks until the child has exited, leaving it a zombie so its /proc entry stays readable.
fn wait_exited(pid: i32) {
    loop {
        // SAFETY: siginfo_t is plain data filled by waitid.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        let rc = unsafe { libc::waitid(libc::P_PID, pid as libc::id_t, &mut info, libc::WEXITED | libc::WNOWAIT) };
        if rc == 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            return;
        }
    }
}

fn reap(pid: i32) -> (i32, Usage) {
    let mut status = 0;
    // SAFETY: rusage is plain data filled by wait4.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        let rc = unsafe { libc::wait4(pid, &mut status, 0, &mut ru) };
        if rc >= 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            break;
        }
    }
    let secs = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 * 1e-6;
    let usage = Usage {
        user_s: secs(ru.ru_utime),
        sys_s: secs(ru.ru_stime),
        max_rss_bytes: ru.ru_maxrss.max(0) as u64 * 1024,
        minor_faults: ru.ru_minflt.max(0) as u64,
        major_faults: ru.ru_majflt.max(0) as u64,
        in_blocks: ru.ru_inblock.max(0) as u64,
        out_blocks: ru.ru_oublock.max(0) as u64,
        voluntary_switches: ru.ru_nvcsw.max(0) as u64,
        involuntary_switches: ru.ru_nivcsw.max(0) as u64,
    };
    (status, usage)
}

fn read_io(pid: i32) -> Option<(u64, u64)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/io")).ok()?;
    let field = |key: &str| text.lines().find_map(|l| l.strip_prefix(key)).and_then(|v| v.trim().parse::<u64>().ok());
    Some((field("rchar:")?, field("wchar:")?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_argv(argv: &[&str]) -> Result<Outcome, SpawnError> {
        let argv: Vec<String> = argv.iter().map(|s| s.to_string()).collect();
        let scanner = Arc::new(Scanner::new(&[]).unwrap());
        run(&Spec {
            argv: &argv,
            env: &[],
            timeout: None,
            scanner,
            show_output: false,
            sample: None,
            kill_leftovers: true,
        })
    }

    #[test]
    fn measures_exit_code_output_and_io() {
        let o = run_argv(&["sh", "-c", "head -c 100000 /dev/zero >/dev/null; echo hi; exit 3"]).unwrap();
        assert_eq!(o.exit_code, Some(3));
        assert_eq!(o.stdout.bytes(), b"hi\n");
        let (rchar, _) = o.io.expect("/proc/<pid>/io of the zombie");
        assert!(rchar >= 100_000, "rchar {rchar} includes the reaped grandchild's reads");
    }

    #[test]
    fn missing_program_is_a_spawn_error() {
        let e = run_argv(&["/nonexistent/prog"]).unwrap_err();
        assert!(e.0.contains("no such command"), "{e}");
    }
}
