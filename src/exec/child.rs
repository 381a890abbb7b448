//! Runs one process in its own process group and measures it: wall time on the monotonic clock,
//! rusage of the whole waited-for tree via `wait4`, `/proc/<pid>/io` read while the child is a
//! zombie (these three by the spawn helper), bounded output capture, thread sampling, and a
//! timeout that stops the whole group. The [`Executor`] trait lets the sweep run on scripted
//! outcomes in tests.

use super::capture::{self, Captured};
use super::metrics::Scanner;
use super::signals;
use super::spawner::{Refused, Request, Spawner};
use crate::sample::procfs;
use crate::sample::{Config, Sampler, ThreadReport};
use std::io::Read;
use std::os::fd::AsRawFd;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::Duration;

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
    pub sample: Option<Config>,
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
    pub threads: Option<ThreadReport>,
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
pub enum SpawnError {
    /// No such program.
    #[error("cannot run '{program}': no such command (not on PATH and not a file)")]
    NotFound {
        /// As given.
        program: String,
    },
    /// The program may not be executed.
    #[error("cannot run '{program}': permission denied (is it executable?)")]
    PermissionDenied {
        /// As given.
        program: String,
    },
    /// The file is not a program this system can run.
    #[error("cannot run '{program}': not an executable this system can run")]
    NotExecutable {
        /// As given.
        program: String,
    },
    /// The system could not start it (out of processes, memory or file descriptors).
    #[error("cannot start '{program}'")]
    System {
        /// As given.
        program: String,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// The helper that starts runs failed.
    #[error("the helper that starts runs failed")]
    Helper(#[source] std::io::Error),
}

impl SpawnError {
    /// Whether the user can fix it by naming another program (exit code 2), rather than the
    /// system failing to start one (exit code 1).
    pub fn is_user_mistake(&self) -> bool {
        matches!(
            self,
            SpawnError::NotFound { .. } | SpawnError::PermissionDenied { .. } | SpawnError::NotExecutable { .. }
        )
    }

    fn of(program: &str, e: std::io::Error) -> SpawnError {
        let program = program.to_string();
        match e.raw_os_error() {
            Some(libc::ENOENT | libc::ENOTDIR) => SpawnError::NotFound { program },
            Some(libc::EACCES | libc::EPERM) => SpawnError::PermissionDenied { program },
            Some(libc::ENOEXEC) => SpawnError::NotExecutable { program },
            _ => SpawnError::System { program, source: e },
        }
    }
}

/// Runs processes and measures them: the sweep's one way to the system, so that it can be
/// tested with scripted outcomes.
pub trait Executor {
    /// Runs the process to its end (or timeout, or interrupt) and measures it.
    fn run(&mut self, spec: &Spec) -> Result<Outcome, SpawnError>;
}

/// The executor of real processes, started through the spawn helper (see [`super::spawner`]).
#[derive(Default)]
pub struct Processes {
    spawner: Option<Spawner>,
}

impl Processes {
    /// An executor; its helper starts with the first run.
    pub fn new() -> Processes {
        Processes::default()
    }
}

impl Executor for Processes {
    fn run(&mut self, spec: &Spec) -> Result<Outcome, SpawnError> {
        let program = &spec.argv[0];
        if self.spawner.is_none() {
            self.spawner = Some(Spawner::start().map_err(SpawnError::Helper)?);
        }
        let spawner = self.spawner.as_mut().ok_or_else(|| SpawnError::Helper(std::io::ErrorKind::NotFound.into()))?;
        // Pipes and their reader threads exist before the clock starts: only the program is timed.
        let (out_r, out_w) = std::io::pipe().map_err(|e| SpawnError::of(program, e))?;
        let (err_r, err_w) = std::io::pipe().map_err(|e| SpawnError::of(program, e))?;
        let echo_out = spec.show_output.then(|| Box::new(std::io::stdout()) as _);
        let echo_err = spec.show_output.then(|| Box::new(std::io::stderr()) as _);
        let readers = [reader(out_r, &spec.scanner, echo_out), reader(err_r, &spec.scanner, echo_err)];
        let earlier = if spec.kill_leftovers { own_children() } else { Vec::new() };
        let path = resolve(program);
        let request = Request {
            program: path.as_os_str(),
            argv: spec.argv,
            env: spec.env,
            stdout: out_w.as_raw_fd(),
            stderr: err_w.as_raw_fd(),
            kill_group: spec.kill_leftovers,
        };
        let pid = match spawner.spawn(&request) {
            Ok(Ok(pid)) => pid,
            Ok(Err(Refused(errno))) => return Err(SpawnError::of(program, std::io::Error::from_raw_os_error(errno))),
            Err(e) => return Err(self.helper_failed(e)),
        };
        // The helper holds its own copies now: the readers see end-of-file when the run's tree exits.
        drop((out_w, err_w));
        signals::set_current_group(pid);
        let sampler = spec.sample.and_then(|c| Sampler::start(pid, c));
        let timed_out = Arc::new(AtomicBool::new(false));
        let watchdog = spec.timeout.map(|t| watchdog(pid, t, timed_out.clone()));
        let finished = spawner.finish();
        let threads = sampler.map(Sampler::stop);
        if let Some((done, handle)) = watchdog {
            drop(done);
            let _ = handle.join();
        }
        signals::set_current_group(0);
        let finished = finished.map_err(|e| self.helper_failed(e))?;
        let strays = if spec.kill_leftovers { kill_strays(&earlier) } else { 0 };
        let u = finished.usage;
        let mut outcome = Outcome {
            wall_s: finished.wall_ns as f64 * 1e-9,
            timed_out: timed_out.load(Ordering::SeqCst),
            interrupted: signals::interrupted(),
            usage: Usage {
                user_s: u[0] as f64 * 1e-6,
                sys_s: u[1] as f64 * 1e-6,
                max_rss_bytes: u[2].max(0) as u64 * 1024,
                minor_faults: u[3].max(0) as u64,
                major_faults: u[4].max(0) as u64,
                in_blocks: u[5].max(0) as u64,
                out_blocks: u[6].max(0) as u64,
                voluntary_switches: u[7].max(0) as u64,
                involuntary_switches: u[8].max(0) as u64,
            },
            io: finished.io,
            threads,
            strays,
            ..Outcome::default()
        };
        let status = finished.status;
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
}

impl Processes {
    /// The helper is gone or spoke nonsense: forget it (the next run starts another).
    fn helper_failed(&mut self, e: std::io::Error) -> SpawnError {
        self.spawner = None;
        SpawnError::Helper(e)
    }
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
                .and_then(|s| procfs::stat(&s))
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

/// Finds a bare program name on PATH, as exec would, so the search is not timed with the run.
pub fn resolve(program: &str) -> PathBuf {
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

/// `rchar` and `wchar` of `/proc/<pid>/io`, when readable.
pub(crate) fn read_io(pid: i32) -> Option<(u64, u64)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/io")).ok()?;
    let field = |key: &str| text.lines().find_map(|l| l.strip_prefix(key)).and_then(|v| v.trim().parse::<u64>().ok());
    Some((field("rchar:")?, field("wchar:")?))
}
