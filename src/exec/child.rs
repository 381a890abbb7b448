//! Runs one process in its own process group and measures it: wall time on the monotonic clock,
//! rusage of the whole waited-for tree via `wait4`, `/proc/<pid>/io` read while the child is a
//! zombie (these three by the spawn helper), bounded output capture, thread sampling, and a
//! timeout that stops the whole group. The [`Executor`] trait lets the sweep run on scripted
//! outcomes in tests.

use super::capture::{Capture, Captured, Streams, Wake, readable_within};
use super::metrics::Scanner;
use super::signals;
use super::spawner::{Refused, Request, Spawner};
use super::strays::{Children, become_subreaper, kill_strays};
use crate::sample::{Config, Sampler, ThreadReport};
use std::collections::HashMap;
use std::fs::File;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
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
    /// during this run and started the moment this one has ended, while this one is recorded.
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
            SpawnError::NotFound { .. } | SpawnError::PermissionDenied { .. } | SpawnError::NotExecutable { .. }
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
    std::env::var_os("PATH").is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(program).exists()))
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
    /// The next run, started the moment the one before ended ([`Spec::again`]), and when.
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
/// ended; after any other measured run the same command is armed, and started if the sweep asks
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
        // A run started as the one before ended is this one; another request stops it.
        let early = match self.started.take() {
            Some((a, at)) if a.runs(spec) => Some((a.pipes, at)),
            Some((other, _)) => {
                self.stop_started(other);
                None
            }
            None => None,
        };
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
        let request = |pipes: &Pipes| Request {
            program: path.as_os_str(),
            argv: spec.argv,
            env: spec.env,
            stdout: pipes.out.1.as_raw_fd(),
            stderr: pipes.err.1.as_raw_fd(),
            kill_group: spec.kill_leftovers,
        };
        let arm = |spawner: &mut Spawner| {
            let pipes = Pipes::new().ok()?;
            spawner.arm(&request(&pipes)).ok()?;
            Some(Armed { argv: spec.argv.to_vec(), env: spec.env.to_vec(), pipes })
        };
        let (pipes, reply, early_at) = match early {
            Some((pipes, at)) => (pipes, spawner.started(), Some(at)),
            None => {
                let armed = self.armed.take().filter(|a| a.runs(spec));
                match armed.and_then(|a| spawner.go().map(|sent| (a.pipes, sent.and_then(|()| spawner.started())))) {
                    Some((pipes, reply)) => (pipes, reply, None),
                    None => {
                        let pipes = Pipes::new().map_err(|e| SpawnError::of(program, e))?;
                        let reply = spawner.spawn(&request(&pipes));
                        (pipes, reply, None)
                    }
                }
            }
        };
        let Pipes { out: (out_r, out_w), err: (err_r, err_w) } = pipes;
        let echo_out = spec.show_output.then(|| Box::new(std::io::stdout()) as _);
        let echo_err = spec.show_output.then(|| Box::new(std::io::stderr()) as _);
        let captures = [Capture::new(spec.scanner.clone(), echo_out), Capture::new(spec.scanner.clone(), echo_err)];
        let mut streams = Streams::new([File::from(OwnedFd::from(out_r)), File::from(OwnedFd::from(err_r))], captures);
        let pid = match reply {
            Ok(Ok(pid)) => pid,
            Ok(Err(Refused(errno))) => return Err(SpawnError::of(program, std::io::Error::from_raw_os_error(errno))),
            Err(e) => return Err(self.helper_failed(e)),
        };
        // The helper holds its own copies now: the streams end when the run's tree exits.
        drop((out_w, err_w));
        signals::set_current_group(pid);
        let started = early_at.unwrap_or_else(Instant::now);
        let mut sampler = None;
        let mut sample_at = spec.sample.map(|c| (started + SAMPLE_AFTER, c));
        // The next run is set up once this one is old enough for the set-up not to share its first
        // instants (a shorter run has it set up after its end).
        let again = spec.again && spec.kill_leftovers;
        let mut arm_at = again.then_some(started + SAMPLE_AFTER);
        let mut timed_out = false;
        let mut kill_at = spec.timeout.map(|t| (started + t, libc::SIGTERM));
        let finished = loop {
            let deadline = [kill_at.map(|(at, _)| at), sample_at.map(|(at, _)| at), arm_at].into_iter().flatten().min();
            match streams.until(Some(spawner.reply_fd()), deadline) {
                Ok(Wake::Deadline) => {
                    let now = Instant::now();
                    if let Some((at, c)) = sample_at
                        && now >= at
                    {
                        sample_at = None;
                        sampler = Sampler::start(pid, c);
                    }
                    if arm_at.is_some_and(|at| now >= at) {
                        arm_at = None;
                        self.armed = arm(spawner);
                    }
                    let Some((at, sig)) = kill_at else { continue };
                    if now < at {
                        continue;
                    }
                    timed_out = true;
                    // SAFETY: signals the run's own process group.
                    unsafe { libc::kill(-pid, sig) };
                    kill_at = (sig == libc::SIGTERM).then(|| (Instant::now() + GRACE, libc::SIGKILL));
                }
                Ok(_) => break spawner.finish(),
                Err(e) => break Err(e),
            }
        };
        // The sampler builds its report while the run's leftovers are killed and its output read.
        if let Some(s) = &sampler {
            s.ask_stop();
        }
        signals::set_current_group(0);
        let finished = finished.map_err(|e| self.helper_failed(e));
        let strays = if spec.kill_leftovers { kill_strays(&mut self.listed, &earlier) } else { 0 };
        if spec.kill_leftovers {
            self.children = Some(earlier);
        }
        // The same command runs next: it starts now, while this run's output is read, its report
        // made and the run recorded.
        let succeeded = finished.as_ref().is_ok_and(|f| libc::WIFEXITED(f.status) && libc::WEXITSTATUS(f.status) == 0);
        if again
            && succeeded
            && !timed_out
            && !signals::interrupted()
            && let Some(spawner) = self.spawner.as_mut()
            && let Some(next) = self.armed.take().filter(|a| a.runs(spec)).or_else(|| arm(spawner))
            && let Some(Ok(())) = spawner.go()
        {
            self.started = Some((next, Instant::now()));
        }
        // A descendant that escaped the group may hold a pipe open: stop reading after a while.
        let _ = streams.until(None, Some(Instant::now() + OUTPUT_GRACE));
        let [stdout, stderr] = streams.finish();
        // The same command is likely next: set it up while the sampler's report and the record
        // of this run are made.
        if spec.kill_leftovers
            && self.started.is_none()
            && self.armed.is_none()
            && let Some(spawner) = self.spawner.as_mut()
        {
            self.armed = arm(spawner);
        }
        let threads = sampler.map(Sampler::stop);
        let finished = finished?;
        let u = finished.usage;
        let mut outcome = Outcome {
            wall_s: finished.wall_ns as f64 * 1e-9,
            timed_out,
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
            stdout,
            stderr,
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
        Ok(outcome)
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
        .find(|p| std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0))
        .unwrap_or_else(|| program.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_program_on_no_folder_of_path_is_missing_even_when_exec_says_permission() {
        let eacces = || std::io::Error::from_raw_os_error(libc::EACCES);
        assert!(matches!(SpawnError::of("no-such-program-xyz", eacces()), SpawnError::NotFound { .. }));
        assert!(matches!(SpawnError::of("sh", eacces()), SpawnError::PermissionDenied { .. }));
        assert!(matches!(SpawnError::of("./x", eacces()), SpawnError::PermissionDenied { .. }));
    }
}
