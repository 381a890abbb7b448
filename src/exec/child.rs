//! Runs one process in its own process group and measures it: wall time on the monotonic clock,
//! rusage of the whole waited-for tree via `wait4`, `/proc/<pid>/io` read while the child is a
//! zombie (these three by the spawn helper), bounded output capture, thread sampling, and a
//! timeout that stops the whole group. The [`Executor`] trait lets the sweep run on scripted
//! outcomes in tests.

use super::capture::{Capture, Captured, Streams, Wake, readable_within};
use super::metrics::Scanner;
use super::signals;
use super::spawner::{Finished, Refused, Request, RunUsage, Spawner};
use super::strays::{Children, become_subreaper, kill_strays};
use crate::results::ThreadReport;
use crate::sample::{Config, Sampler};
use std::collections::HashMap;
use std::fs::File;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Between SIGTERM and SIGKILL when a run times out.
const GRACE: Duration = Duration::from_secs(signals::GRACE_S as u64);
/// How long output is still read after a run's group is gone.
const OUTPUT_GRACE: Duration = Duration::from_secs(2);
/// How far into a run the sampler starts. Started at the spawn, a thread beside the run in its
/// first instants made `true` 0.09 ms longer on the project's two-CPU VM (0.83 against 0.74 ms
/// started 1 ms in, 0.71 ms unsampled; 6 interleaved rounds of 200 runs); started 1 ms in, its
/// first sweep and the tracer's start (every thread's files opened, its maps read while the
/// loader maps libraries, events opened on every thread) made 3 ms runs of `pigz` on 32 KB
/// 8% slower, and a run that ends before a second sweep gets no report anyway. What a thread did
/// before the first sweep is counted from its counters.
const SAMPLE_AFTER: Duration = Duration::from_millis(5);

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
    /// The same command runs next if this run succeeds, with nothing in between: it may be set up
    /// during this run and started the moment this one has ended (and its sampler's report is
    /// made), while this one is recorded.
    pub again: bool,
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
            SpawnError::NotFound { .. }
                | SpawnError::PermissionDenied { .. }
                | SpawnError::NotExecutable { .. }
        )
    }

    fn of(program: &str, e: std::io::Error) -> SpawnError {
        let program = program.to_string();
        match e.raw_os_error() {
            Some(libc::ENOENT | libc::ENOTDIR) => SpawnError::NotFound { program },
            // execvp reports EACCES when it met an unreadable folder on PATH and found the
            // program nowhere: that is a missing program, not a permission to fix.
            Some(libc::EACCES | libc::EPERM) if !program.contains('/') && !on_path(&program) => {
                SpawnError::NotFound { program }
            }
            Some(libc::EACCES | libc::EPERM) => SpawnError::PermissionDenied { program },
            Some(libc::ENOEXEC) => SpawnError::NotExecutable { program },
            _ => SpawnError::System { program, source: e },
        }
    }
}

/// Whether a file of that name is in a folder on PATH.
fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(program).exists()))
}

/// Runs processes and measures them: the sweep's one way to the system, so that it can be
/// tested with scripted outcomes.
pub trait Executor {
    /// Runs the process to its end (or timeout, or interrupt) and measures it.
    fn run(&mut self, spec: &Spec) -> Result<Outcome, SpawnError>;
}

/// The executor of real processes, started through the spawn helper (see [`super::spawner`]).
pub struct Processes {
    spawner: Option<Spawner>,
    /// Programs already looked up on PATH.
    paths: HashMap<String, PathBuf>,
    /// scalescope's children after the latest run that killed its leftovers (the helper, a
    /// hook's servers), which the next such run need not list again; `None` once anything else
    /// may have started one.
    children: Option<Vec<i32>>,
    /// Where they are listed.
    listed: Children,
    /// The next run, set up by the helper ahead of its start.
    armed: Option<Armed>,
    /// The next run, started the moment the one before was done ([`Spec::again`]), and when.
    started: Option<(Armed, Instant)>,
}

/// A run's output pipes before it starts: scalescope's read ends, and the write ends the run opens
/// through /proc.
struct Pipes {
    out: (std::io::PipeReader, std::io::PipeWriter),
    err: (std::io::PipeReader, std::io::PipeWriter),
}

impl Pipes {
    fn new() -> std::io::Result<Pipes> {
        Ok(Pipes { out: std::io::pipe()?, err: std::io::pipe()? })
    }
}

/// A run the helper has set up ahead (see [`Spawner::arm`]): the ready child prepares it and drops
/// its code pages before the "go", not on the way to the clock. A command that runs again
/// ([`Spec::again`]) is armed 1 ms into the run before, and started as soon as that one has
/// ended and its sampler's report is made; after any other measured run the same command is armed, and started if the sweep asks
/// for it next (another request replaces it).
struct Armed {
    argv: Vec<String>,
    env: Vec<(String, String)>,
    pipes: Pipes,
}

impl Armed {
    fn runs(&self, spec: &Spec) -> bool {
        self.argv == spec.argv && self.env == spec.env && spec.kill_leftovers
    }
}

impl Processes {
    /// An executor, which makes scalescope the reaper of its runs' orphans; its helper starts with
    /// the first run.
    pub fn new() -> Processes {
        become_subreaper();
        Processes {
            spawner: None,
            paths: HashMap::new(),
            children: None,
            listed: Children::open(),
            armed: None,
            started: None,
        }
    }
}

impl Default for Processes {
    fn default() -> Processes {
        Processes::new()
    }
}

impl Executor for Processes {
    fn run(&mut self, spec: &Spec) -> Result<Outcome, SpawnError> {
        let program = &spec.argv[0];
        let early = self.take_started(spec);
        let spawner = match &mut self.spawner {
            Some(s) => s,
            None => {
                // A new helper is a new child.
                self.children = None;
                self.spawner.insert(Spawner::start().map_err(SpawnError::Helper)?)
            }
        };
        let earlier = match (spec.kill_leftovers, self.children.take()) {
            (true, Some(known)) => known,
            (true, None) => self.listed.list(),
            (false, _) => Vec::new(),
        };
        // Everything is ready before the helper takes the clock: only the program is timed.
        let path = self.paths.entry(program.clone()).or_insert_with(|| resolve(program)).clone();
        let (pipes, reply, early_at) = begin(spawner, &mut self.armed, spec, &path, early)?;
        let Pipes { out: (out_r, out_w), err: (err_r, err_w) } = pipes;
        let mut streams = streams(spec, out_r, err_r);
        let pid = match reply {
            Ok(Ok(pid)) => pid,
            Ok(Err(Refused(errno))) => {
                return Err(SpawnError::of(program, std::io::Error::from_raw_os_error(errno)));
            }
            Err(e) => return Err(self.helper_failed(e)),
        };
        // The helper holds its own copies now: the streams end when the run's tree exits.
        drop((out_w, err_w));
        signals::set_current_group(pid);
        let again = spec.again && spec.kill_leftovers;
        let running = Running {
            spec,
            path: &path,
            pid,
            started: early_at.unwrap_or_else(Instant::now),
            again,
        };
        let watched = watch(spawner, &mut streams, &mut self.armed, &running);
        // The sampler takes its last sweep while the run's leftovers are killed.
        if let Some(s) = &watched.sampler {
            s.ask_stop();
        }
        signals::set_current_group(0);
        let finished = watched.finished.map_err(|e| self.helper_failed(e));
        let strays = self.end_strays(spec, earlier);
        let succeeded = finished
            .as_ref()
            .is_ok_and(|f| libc::WIFEXITED(f.status) && libc::WEXITSTATUS(f.status) == 0);
        // The sampler's report is made, and its buffers let go of, before the next run starts:
        // 2.5-4 ms of CPU a run (zstd, pigz, make -j), which took 0.7% of the CPU of the next
        // 0.18 s pigz run on two CPUs.
        let threads = watched.sampler.map(Sampler::stop);
        if again && succeeded && !watched.timed_out {
            self.start_next(spec, &path);
        }
        // A descendant that escaped the group may hold a pipe open: stop reading after a while.
        let _ = streams.until(None, Some(Instant::now() + OUTPUT_GRACE));
        let captured = streams.finish();
        self.arm_next(spec, &path);
        Ok(outcome(&finished?, watched.timed_out, captured, threads, strays))
    }
}

/// A run going on, as the deadline loop watches it.
struct Running<'a> {
    spec: &'a Spec<'a>,
    /// The program, looked up on PATH.
    path: &'a Path,
    pid: i32,
    /// When it started (the helper's clock started just before).
    started: Instant,
    /// The same command runs next if this one succeeds: set it up during this one.
    again: bool,
}

/// What the deadline loop saw of a run: the helper's report of its end, whether the timeout
/// stopped it, and its sampler, when one was started.
struct Watched {
    finished: std::io::Result<Finished>,
    timed_out: bool,
    sampler: Option<Sampler>,
}

/// How the run starts: the run started ahead when it is this one, else the one armed for it with
/// a "go", else a new request. Returns its output pipes, the helper's reply, and when a run
/// started ahead started.
fn begin(
    spawner: &mut Spawner,
    armed: &mut Option<Armed>,
    spec: &Spec,
    path: &Path,
    early: Option<(Pipes, Instant)>,
) -> Result<Begun, SpawnError> {
    if let Some((pipes, at)) = early {
        return Ok((pipes, spawner.started(), Some(at)));
    }
    let armed = armed.take().filter(|a| a.runs(spec));
    match armed
        .and_then(|a| spawner.go().map(|sent| (a.pipes, sent.and_then(|()| spawner.started()))))
    {
        Some((pipes, reply)) => Ok((pipes, reply, None)),
        None => {
            let pipes = Pipes::new().map_err(|e| SpawnError::of(&spec.argv[0], e))?;
            let reply = spawner.spawn(&request(spec, path, &pipes));
            Ok((pipes, reply, None))
        }
    }
}

/// A started run's output pipes, the helper's reply (its process id, or why it could not
/// start), and when it started if it was started ahead.
type Begun = (Pipes, std::io::Result<Result<i32, Refused>>, Option<Instant>);

/// The deadline loop: reads the run's output until the helper says the run has ended, and at
/// their instants starts the sampler, sets the next run up and stops the run at its timeout
/// (SIGTERM, then SIGKILL after a grace).
fn watch(
    spawner: &mut Spawner,
    streams: &mut Streams,
    armed: &mut Option<Armed>,
    run: &Running,
) -> Watched {
    let mut sampler = None;
    let mut sample_at = run.spec.sample.map(|c| (run.started + SAMPLE_AFTER, c));
    // The next run is set up once this one is old enough for the set-up not to share its first
    // instants (a shorter run has it set up after its end).
    let mut arm_at = run.again.then_some(run.started + SAMPLE_AFTER);
    let mut timed_out = false;
    let mut kill_at = run.spec.timeout.map(|t| (run.started + t, libc::SIGTERM));
    let finished = loop {
        let deadline = [kill_at.map(|(at, _)| at), sample_at.map(|(at, _)| at), arm_at]
            .into_iter()
            .flatten()
            .min();
        match streams.until(Some(spawner.reply_fd()), deadline) {
            Ok(Wake::Deadline) => {
                let now = Instant::now();
                if let Some((at, c)) = sample_at
                    && now >= at
                {
                    sample_at = None;
                    sampler = Sampler::start(run.pid, c);
                }
                if arm_at.is_some_and(|at| now >= at) {
                    arm_at = None;
                    *armed = arm(spawner, run.spec, run.path);
                }
                let Some((at, sig)) = kill_at else { continue };
                if now < at {
                    continue;
                }
                timed_out = true;
                // SAFETY: signals the run's own process group.
                unsafe { libc::kill(-run.pid, sig) };
                kill_at = (sig == libc::SIGTERM).then(|| (Instant::now() + GRACE, libc::SIGKILL));
            }
            Ok(_) => break spawner.finish(),
            Err(e) => break Err(e),
        }
    };
    Watched { finished, timed_out, sampler }
}

/// Reads a run's output from the read ends of its pipes into bounded captures, echoed to
/// scalescope's own when asked.
fn streams(spec: &Spec, out: std::io::PipeReader, err: std::io::PipeReader) -> Streams {
    let echo_out = spec.show_output.then(|| Box::new(std::io::stdout()) as _);
    let echo_err = spec.show_output.then(|| Box::new(std::io::stderr()) as _);
    let captures = [
        Capture::new(spec.scanner.clone(), echo_out),
        Capture::new(spec.scanner.clone(), echo_err),
    ];
    Streams::new([File::from(OwnedFd::from(out)), File::from(OwnedFd::from(err))], captures)
}

/// The request that starts `spec`'s command (found at `path`) with its output into `pipes`.
fn request<'a>(spec: &'a Spec, path: &'a Path, pipes: &Pipes) -> Request<'a> {
    Request {
        program: path.as_os_str(),
        argv: spec.argv,
        env: spec.env,
        stdout: pipes.out.1.as_raw_fd(),
        stderr: pipes.err.1.as_raw_fd(),
        kill_group: spec.kill_leftovers,
    }
}

/// Has the helper set `spec`'s command up as the next run (see [`Armed`]); `None` when it cannot.
fn arm(spawner: &mut Spawner, spec: &Spec, path: &Path) -> Option<Armed> {
    let pipes = Pipes::new().ok()?;
    spawner.arm(&request(spec, path, &pipes)).ok()?;
    Some(Armed { argv: spec.argv.to_vec(), env: spec.env.to_vec(), pipes })
}

/// The run's outcome from the helper's report of its end: wall time, exit code or signal, and
/// its usage decoded.
fn outcome(
    finished: &Finished,
    timed_out: bool,
    [stdout, stderr]: [Captured; 2],
    threads: Option<ThreadReport>,
    strays: u32,
) -> Outcome {
    let status = finished.status;
    Outcome {
        wall_s: finished.wall_ns as f64 * 1e-9,
        exit_code: libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status)),
        signal: (!libc::WIFEXITED(status) && libc::WIFSIGNALED(status))
            .then(|| libc::WTERMSIG(status)),
        timed_out,
        interrupted: signals::interrupted(),
        usage: Usage::from(finished.usage),
        io: finished.io,
        stdout,
        stderr,
        threads,
        strays,
    }
}

impl From<RunUsage> for Usage {
    fn from(u: RunUsage) -> Usage {
        let count = |v: i64| v.max(0) as u64;
        Usage {
            user_s: u.user_us as f64 * 1e-6,
            sys_s: u.sys_us as f64 * 1e-6,
            max_rss_bytes: count(u.max_rss_kib) * 1024,
            minor_faults: count(u.minor_faults),
            major_faults: count(u.major_faults),
            in_blocks: count(u.in_blocks),
            out_blocks: count(u.out_blocks),
            voluntary_switches: count(u.voluntary_switches),
            involuntary_switches: count(u.involuntary_switches),
        }
    }
}

impl Processes {
    /// The run started as the one before ended, when it is this one; another request stops it.
    fn take_started(&mut self, spec: &Spec) -> Option<(Pipes, Instant)> {
        match self.started.take() {
            Some((a, at)) if a.runs(spec) => Some((a.pipes, at)),
            Some((other, _)) => {
                self.stop_started(other);
                None
            }
            None => None,
        }
    }

    /// Kills what a run left running outside its group (not after a hook), and keeps `earlier`,
    /// scalescope's children before it, for the next run; returns how many it killed.
    fn end_strays(&mut self, spec: &Spec, earlier: Vec<i32>) -> u32 {
        if !spec.kill_leftovers {
            return 0;
        }
        let strays = kill_strays(&mut self.listed, &earlier);
        self.children = Some(earlier);
        strays
    }

    /// Starts the same command the moment this run's watching is done ([`Spec::again`]), while
    /// this run's output is read and the run recorded.
    fn start_next(&mut self, spec: &Spec, path: &Path) {
        if signals::interrupted() {
            return;
        }
        if let Some(spawner) = self.spawner.as_mut()
            && let Some(next) =
                self.armed.take().filter(|a| a.runs(spec)).or_else(|| arm(spawner, spec, path))
            && let Some(Ok(())) = spawner.go()
        {
            self.started = Some((next, Instant::now()));
        }
    }

    /// Sets the same command up, as it is likely next, while the sampler's report and the record
    /// of this run are made.
    fn arm_next(&mut self, spec: &Spec, path: &Path) {
        if spec.kill_leftovers
            && self.started.is_none()
            && self.armed.is_none()
            && let Some(spawner) = self.spawner.as_mut()
        {
            self.armed = arm(spawner, spec, path);
        }
    }
}

impl Processes {
    /// The helper is gone or spoke nonsense: forget it (the next run starts another).
    fn helper_failed(&mut self, e: std::io::Error) -> SpawnError {
        self.spawner = None;
        self.armed = None;
        self.started = None;
        SpawnError::Helper(e)
    }

    /// Stops a run started ahead that the sweep did not ask for after all (it stopped, or asked
    /// for another command): SIGTERM to its group, SIGKILL if it is still there after a grace.
    fn stop_started(&mut self, run: Armed) {
        drop(run);
        let Some(spawner) = self.spawner.as_mut() else { return };
        let pid = match spawner.started() {
            Ok(Ok(pid)) => pid,
            Ok(Err(_)) => return,
            Err(e) => {
                self.helper_failed(e);
                return;
            }
        };
        // SAFETY: signals the run's own process group (its leader is reaped only after its end
        // has been read below).
        unsafe { libc::kill(-pid, libc::SIGTERM) };
        if !readable_within(spawner.reply_fd(), GRACE) {
            // SAFETY: as above.
            unsafe { libc::kill(-pid, libc::SIGKILL) };
        }
        if let Err(e) = spawner.finish() {
            self.helper_failed(e);
        }
    }
}

impl Drop for Processes {
    fn drop(&mut self) {
        if let Some((run, _)) = self.started.take() {
            self.stop_started(run);
        }
    }
}

/// Finds a bare program name on PATH, as exec would, so the search is not timed with the run.
pub fn resolve(program: &str) -> PathBuf {
    if program.contains('/') {
        return program.into();
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|p| {
            std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
        .unwrap_or_else(|| program.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_program_on_no_folder_of_path_is_missing_even_when_exec_says_permission() {
        let eacces = || std::io::Error::from_raw_os_error(libc::EACCES);
        assert!(matches!(
            SpawnError::of("no-such-program-xyz", eacces()),
            SpawnError::NotFound { .. }
        ));
        assert!(matches!(SpawnError::of("sh", eacces()), SpawnError::PermissionDenied { .. }));
        assert!(matches!(SpawnError::of("./x", eacces()), SpawnError::PermissionDenied { .. }));
    }
}
