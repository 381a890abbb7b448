//! The spawn helper's side (see [`super::spawner`]): a small process that keeps a copy of itself
//! ready to become the next run.
//!
//! After each run (and before the first) the helper forks a *ready child*, while scalescope deals
//! with the run that ended: no fork stands between scalescope's request and the run's start. The
//! ready child warms itself up on a request of its own (so that the real one meets its code and
//! heap already in memory), then reads scalescope's next request itself, builds the arguments and
//! environment, sets up the run's output, descriptors and signals, takes the clock, tells the
//! helper the time and execs the program: the clock holds the exec and the run. An *armed*
//! request is set up the same way at once and started by a later "go" (see
//! [`super::spawner::Spawner::arm`]).
//!
//! The run's peak memory is its own, as GNU time reports it: exec counts the peak of the memory
//! map it replaces into the new program's, and the ready child's map holds only what a fork
//! copies of the helper (its data, about 0.3 MiB: a fork copies no page of code) and the code it
//! runs once it has dropped the rest (see [`super::shed`]).

use super::capture::readable_within;
use super::shed::{self, Shed};
use super::spawner::{
    self, HELPER_NAME, RunUsage, put_i64, receive, send, take_bytes, take_i64, take_u8, torn,
};
use crate::sample::monotonic_ns;
use crate::sample::procfs::ProcFile;
use std::ffi::{CString, OsStr};
use std::fs::File;
use std::io::{self, Read};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStringExt;
use std::os::unix::fs::OpenOptionsExt;

/// How far into a run the next ready child is made. Its fork and warm-up (0.3-0.5 ms of CPU on
/// the project's VM) then no longer stand between two runs, and do not compete with a run's
/// start, when the tracer also starts (2 ms in).
const NEXT_READY_AFTER: std::time::Duration = std::time::Duration::from_millis(5);

/// Serves runs when this process was started as the helper; returns its exit code then.
pub(crate) fn serve_if_asked() -> Option<i32> {
    let mut args = std::env::args_os();
    if args.next()? != HELPER_NAME {
        return None;
    }
    let parent = args.next().and_then(|a| a.to_str()?.parse::<i32>().ok())?;
    Some(match serve(parent) {
        Ok(()) => 0,
        Err(e) => {
            crate::fmt::say!("scalescope: the spawn helper stopped: {e}");
            1
        }
    })
}

fn serve(parent: i32) -> io::Result<()> {
    // SAFETY: plain system calls on this single-threaded process.
    unsafe {
        // Ctrl-C reaches scalescope's process group, this helper included: scalescope decides.
        for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
            libc::signal(sig, libc::SIG_IGN);
        }
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong, 0, 0, 0);
    }
    // SAFETY: getppid cannot fail. A parent gone before the death signal was set: nothing to serve.
    if unsafe { libc::getppid() } != parent {
        return Ok(());
    }
    let null =
        std::fs::OpenOptions::new().read(true).custom_flags(libc::O_CLOEXEC).open("/dev/null")?;
    let base: Vec<Vec<u8>> = std::env::vars_os()
        .map(|(k, v)| {
            let mut e = k.into_vec();
            e.push(b'=');
            e.extend(v.into_vec());
            e
        })
        .collect();
    let ranges = shed::droppable_now();
    let ready = Making { parent, null: null.as_raw_fd(), base: &base, ranges: &ranges };
    // SAFETY: stdout was set up by scalescope as the pipe of replies; this process owns it.
    let mut to = unsafe { File::from_raw_fd(1) };
    let mut next = None;
    loop {
        let mut run = match next.take() {
            Some(r) => r,
            None => Ready::fork(&ready)?,
        };
        match run.says()? {
            Says::Nothing => return run.end(),
            Says::Refused(errno) => {
                run.reap();
                refuse(&mut to, errno)?;
            }
            Says::Exec { t0, kill_group, out, err, own_usage, own_io } => {
                // The output's write ends stay open here until the clock has stopped: the run's
                // exit then wakes no reader of its output while it is timed.
                let held = [out, err].map(|fd| open_output(parent, fd).ok());
                match run.says()? {
                    // Its end of the report pipe closed at exec.
                    Says::Nothing => {
                        let mut r = vec![1u8];
                        put_i64(&mut r, run.pid.into());
                        send(&mut to, &r)?;
                        // The next ready child is made while this run goes on, once it is old
                        // enough (a shorter run gets it after its end).
                        if !run.ends_within(NEXT_READY_AFTER) {
                            next = Some(Ready::fork(&ready)?);
                        }
                        let finished = wait(&mut run, t0, kill_group, own_usage, own_io);
                        drop(held);
                        send(&mut to, &finished)?;
                    }
                    Says::Refused(errno) => {
                        run.reap();
                        refuse(&mut to, errno)?;
                    }
                    Says::Exec { .. } => return Err(torn()),
                }
            }
        }
    }
}

/// What a ready child is made with.
struct Making<'a> {
    /// scalescope's process id.
    parent: i32,
    /// `/dev/null`, the run's stdin.
    null: RawFd,
    /// The helper's environment, as `NAME=VALUE`.
    base: &'a [Vec<u8>],
    /// The helper's read-only file mappings, which the child drops before its exec.
    ranges: &'a [(usize, usize)],
}

/// The ready child, seen from the helper.
struct Ready {
    pid: i32,
    /// Its `/proc/<pid>/io`, opened while it waits: opened at the run's exit, it took 0.1 ms of
    /// the time between two runs.
    io: Option<ProcFile>,
    /// What the child says: that it execs now, that it could not, or nothing (the end of its
    /// pipe: it exec'd, or exited).
    report: File,
}

/// What the ready child said.
enum Says {
    /// Its pipe ended: it exec'd (after saying so) or exited (before).
    Nothing,
    /// It execs now: the clock's start, the run's options, scalescope's descriptors of its
    /// output, what it used itself before the clock and the bytes it read and wrote itself before
    /// the exec (its request and this message), which the run's usage and I/O counters must not
    /// count.
    Exec { t0: u64, kill_group: bool, out: i64, err: i64, own_usage: RunUsage, own_io: (u64, u64) },
    /// The run could not be started: the `errno` of opening its output or of `execve`.
    Refused(i32),
}

impl Ready {
    fn fork(m: &Making) -> io::Result<Ready> {
        let (report_r, report_w) = io::pipe()?;
        // SAFETY: getpid cannot fail.
        let helper = unsafe { libc::getpid() };
        // SAFETY: this process is single-threaded, so the child may do anything it could.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            drop(report_r);
            child(helper, m, File::from(OwnedFd::from(report_w)));
        }
        if pid < 0 {
            return Err(io::Error::last_os_error());
        }
        // Also here, so the group exists whichever process runs first.
        // SAFETY: pid is this process's child.
        unsafe { libc::setpgid(pid, pid) };
        let io = ProcFile::open(std::path::Path::new(&format!("/proc/{pid}/io")));
        Ok(Ready { pid, io, report: File::from(OwnedFd::from(report_r)) })
    }

    fn says(&mut self) -> io::Result<Says> {
        let m = match receive(&mut self.report) {
            Ok(m) => m,
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(Says::Nothing),
            Err(e) => return Err(e),
        };
        let mut at = &m[..];
        Ok(match take_u8(&mut at)? {
            1 => Says::Exec {
                t0: take_i64(&mut at)? as u64,
                kill_group: take_u8(&mut at)? == 1,
                out: take_i64(&mut at)?,
                err: take_i64(&mut at)?,
                own_usage: RunUsage::take(&mut at)?,
                own_io: (take_i64(&mut at)? as u64, take_i64(&mut at)? as u64),
            },
            _ => Says::Refused(take_i64(&mut at)? as i32),
        })
    }

    /// Waits for the child, which exited without becoming a run; returns its exit status.
    fn reap(&self) -> i32 {
        let mut status = 0;
        // SAFETY: waits for this process's own child.
        while unsafe { libc::waitpid(self.pid, &mut status, 0) } < 0
            && io::Error::last_os_error().raw_os_error() == Some(libc::EINTR)
        {}
        status
    }

    /// Whether the run this child became ends within `d` (false when it cannot be watched: no
    /// pidfd before Linux 5.3).
    fn ends_within(&self, d: std::time::Duration) -> bool {
        // SAFETY: pidfd_open returns a new descriptor or -1.
        let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, self.pid, 0) } as i32;
        if fd < 0 {
            return false;
        }
        // SAFETY: the descriptor is new and owned here.
        let pidfd = unsafe { OwnedFd::from_raw_fd(fd) };
        readable_within(pidfd.as_raw_fd(), d)
    }

    /// The child ended before a request: scalescope closed its end (or sent a torn message).
    fn end(self) -> io::Result<()> {
        let status = self.reap();
        if libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0 { Ok(()) } else { Err(torn()) }
    }
}

/// Why the ready child did not become a run.
enum Stop {
    /// No request came (scalescope closed its end), or the helper is gone.
    Quiet,
    /// A message it could not read.
    Torn,
    /// The `errno` of opening the run's output or of `execve`.
    Refused(i32),
}

/// The ready child: becomes the next run, or exits.
fn child(helper: i32, m: &Making, mut report: File) -> ! {
    // The helper's other descriptors (a running run's output, made while it goes on) are not
    // this run's to hold.
    close_others(&[m.null, report.as_raw_fd()]);
    // SAFETY: plain system calls in this child of a single-threaded process.
    unsafe {
        libc::setpgid(0, 0);
        // Until it execs: a helper gone meanwhile takes it along.
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong, 0, 0, 0);
    }
    // SAFETY: getppid cannot fail.
    let code = if unsafe { libc::getppid() } != helper {
        0
    } else {
        warm_up(m.base);
        let shed = Shed::open(m.ranges);
        match become_run(m, &mut report, shed) {
            Stop::Quiet => 0,
            Stop::Torn => 1,
            Stop::Refused(errno) => {
                let _ = refuse(&mut report, errno);
                127
            }
        }
    };
    // SAFETY: ends this child without running the helper's destructors.
    unsafe { libc::_exit(code) }
}

/// Prepares a made-up request the way [`become_run`] prepares the real one: the code it runs and
/// the heap it writes (shared with the helper until written) are then in this process's memory
/// before scalescope waits on it, and count in the run's peak as they would anyway.
fn warm_up(base: &[Vec<u8>]) {
    let argv = ["scalescope-warm-up".to_string()];
    let env = [("SCALESCOPE_WARM_UP".to_string(), "1".to_string())];
    let r = spawner::Request {
        program: OsStr::new("/"),
        argv: &argv,
        env: &env,
        stdout: 1,
        stderr: 2,
        kill_group: false,
    };
    let m = r.encode(spawner::RUN);
    if let Ok(r) = Request::read(&m[1..]) {
        std::hint::black_box(prepare(&r, base).is_ok());
    }
}

/// The program, arguments and environment of a request, as `execve` wants them.
type Prepared = (CString, Vec<CString>, Vec<CString>);

fn prepare(r: &Request, base: &[Vec<u8>]) -> Result<Prepared, std::ffi::NulError> {
    let argv = r.argv.iter().map(|a| CString::new(*a)).collect::<Result<Vec<_>, _>>()?;
    Ok((CString::new(r.program)?, argv, environment(base, &r.extra)?))
}

/// A run set up: what `execve` takes, and the output it opened.
struct SetUp {
    program: CString,
    /// Kept for `argp`, which points into it.
    _argv: Vec<CString>,
    /// Kept for `envp`, which points into it.
    _env: Vec<CString>,
    argp: Vec<*mut libc::c_char>,
    envp: Vec<*mut libc::c_char>,
    /// The output opened, closed when a request replaces this one (and at the exec).
    _files: [File; 2],
    /// The message that tells the helper it execs, made before the page drop (see [`Exec`]).
    exec: Exec,
}

/// The "it execs now" message with its length, made while the run is set up, and filled in just
/// before the exec in place with stores and raw system calls: code run after the page drop is
/// brought back in (a page-cache folio at a time) and counts in the run's peak, as a fresh
/// allocation or libc's `write` and `clock_gettime` would.
struct Exec(Vec<u8>);

impl Exec {
    /// Where the clock's start, the usage before it and the bytes read and written are.
    const T0: usize = 9;
    const USAGE: usize = Exec::T0 + 8 + 1 + 16;
    const READ: usize = Exec::USAGE + RunUsage::LEN;
    const LEN: usize = Exec::READ + 16;

    fn new(kill_group: bool, out: i64, err: i64) -> Exec {
        let mut m = Vec::with_capacity(Exec::LEN);
        put_i64(&mut m, (Exec::LEN - 8) as i64);
        m.push(1);
        put_i64(&mut m, 0);
        m.push(u8::from(kill_group));
        put_i64(&mut m, out);
        put_i64(&mut m, err);
        m.resize(Exec::LEN, 0);
        Exec(m)
    }

    #[inline(always)]
    fn put(&mut self, at: usize, v: i64) {
        self.0[at..at + 8].copy_from_slice(&v.to_le_bytes());
    }
}

/// The ready child's work; returns only when it did not exec. It reads requests until one is to
/// start at once, or a "go" starts the one armed last: an armed run is set up and its code pages
/// dropped while scalescope still records the run before.
fn become_run(m: &Making, report: &mut File, mut shed: Option<Shed>) -> Stop {
    // The requests come on stdin, which becomes the run's: read from a copy.
    // SAFETY: duplicates a descriptor this process holds.
    let fd = unsafe { libc::fcntl(0, libc::F_DUPFD_CLOEXEC, 3) };
    if fd < 0 {
        return Stop::Torn;
    }
    // SAFETY: the descriptor is new and owned here.
    let mut from = unsafe { File::from_raw_fd(fd) };
    // Bytes read from the requests, which the run's I/O counters must not count.
    let mut read = 0u64;
    // A run armed but not started, or why it could not be set up: said at its "go" only, since
    // scalescope may replace it (and close its output) before this process has read it.
    let mut armed: Option<Result<SetUp, i32>> = None;
    // The last message, in a buffer that a "go" fits without an allocation.
    let mut message = Vec::with_capacity(64);
    let run = loop {
        // An armed run waits for its "go" with its code pages dropped: what runs from here to the
        // exec is brought back in (a page-cache folio at a time) and counts in the run's peak,
        // so the wait takes the shortest path there is.
        let next = if armed.is_some() {
            receive_raw(&mut from, &mut message)
        } else {
            receive(&mut from).map(|m| message = m)
        };
        match next {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Stop::Quiet,
            Err(_) => return Stop::Torn,
        }
        read += 8 + message.len() as u64;
        let Some((&kind, request)) = message.split_first() else { return Stop::Torn };
        if kind == spawner::GO {
            // A "go" for a run that an earlier child could not set up is not this one's.
            match armed.take() {
                Some(Ok(run)) => break run,
                Some(Err(errno)) => return Stop::Refused(errno),
                None => continue,
            }
        }
        // The output of a run this request replaces is closed first.
        drop(armed.take());
        let Ok(r) = Request::read(request) else { return Stop::Torn };
        let run = set_up(m, &r);
        if let Some(s) = &shed {
            s.drop_pages();
        }
        match (kind, run) {
            (spawner::RUN, Ok(run)) => break run,
            (spawner::RUN, Err(errno)) => return Stop::Refused(errno),
            (_, run) => armed = Some(run),
        }
    };
    // From here to the exec: raw system calls and stores into memory already written (see
    // [`Exec`]). The run is not the helper's to take along.
    // SAFETY: plain system calls.
    unsafe { libc::syscall(libc::SYS_prctl, libc::PR_SET_PDEATHSIG, 0 as libc::c_ulong, 0, 0, 0) };
    if let Some(s) = shed.as_mut() {
        s.reset();
    }
    // What this process used before the clock (its fork, set-up and wait for the "go"), which the
    // run's usage must not count: `wait4` counts a process's whole life. The peak is not a sum:
    // it was reset instead.
    // SAFETY: rusage and timespec are plain data filled by the calls.
    let mut own: libc::rusage = unsafe { std::mem::zeroed() };
    let mut now = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: valid out-pointers.
    unsafe {
        libc::syscall(libc::SYS_getrusage, libc::RUSAGE_SELF, &mut own);
        libc::syscall(libc::SYS_clock_gettime, libc::CLOCK_MONOTONIC, &mut now);
    }
    own.ru_maxrss = 0;
    let mut exec = run.exec;
    exec.put(Exec::T0, now.tv_sec * 1_000_000_000 + now.tv_nsec);
    for (i, u) in RunUsage::of(&own).fields().into_iter().enumerate() {
        exec.put(Exec::USAGE + 8 * i, u);
    }
    // The requests and their lengths were read; this message is written, and the bytes that
    // reset the peak.
    exec.put(Exec::READ, read as i64);
    exec.put(Exec::READ + 8, (Exec::LEN as u64 + shed.as_ref().map_or(0, |s| s.written())) as i64);
    // One write below PIPE_BUF: whole or not at all.
    // SAFETY: writes the message's bytes to a descriptor this process holds.
    let sent = unsafe {
        libc::syscall(libc::SYS_write, report.as_raw_fd(), exec.0.as_ptr(), exec.0.len())
    };
    if sent != exec.0.len() as i64 {
        return Stop::Quiet;
    }
    // SAFETY: every pointer is to a NUL-terminated string that outlives the call, and both arrays
    // end in a null pointer.
    let errno = unsafe {
        libc::syscall(libc::SYS_execve, run.program.as_ptr(), run.argp.as_ptr(), run.envp.as_ptr())
    };
    Stop::Refused(if errno < 0 {
        io::Error::last_os_error().raw_os_error().unwrap_or(libc::ENOEXEC)
    } else {
        libc::ENOEXEC
    })
}

/// [`receive`] into `into` with raw system calls and no allocation for a message of one byte (a
/// "go"): see [`become_run`].
fn receive_raw(from: &mut File, into: &mut Vec<u8>) -> io::Result<()> {
    let fd = from.as_raw_fd();
    let read_full = |buf: &mut [u8]| {
        let mut at = 0;
        while at < buf.len() {
            // SAFETY: reads into the rest of a buffer of the length given.
            let n = unsafe {
                libc::syscall(libc::SYS_read, fd, buf[at..].as_mut_ptr(), buf.len() - at)
            };
            match n {
                0 => return Err(io::Error::from(io::ErrorKind::UnexpectedEof)),
                n if n < 0 && io::Error::last_os_error().kind() == io::ErrorKind::Interrupted => {}
                n if n < 0 => return Err(io::Error::last_os_error()),
                n => at += n as usize,
            }
        }
        Ok(())
    };
    let mut len = [0u8; 8];
    read_full(&mut len)?;
    into.clear();
    match i64::from_le_bytes(len) {
        1 => {
            let mut one = [0u8; 1];
            read_full(&mut one)?;
            into.push(one[0]);
        }
        n => {
            into.resize(usize::try_from(n).map_err(|_| torn())?, 0);
            from.read_exact(into)?;
        }
    }
    Ok(())
}

/// Sets the run of a request up in this process: arguments and environment, output, descriptors
/// and signals; the `errno` when it cannot be.
fn set_up(m: &Making, r: &Request) -> Result<SetUp, i32> {
    let (program, argv, env) = prepare(r, m.base).map_err(|_| libc::EINVAL)?;
    let (argp, envp) = (null_terminated(&argv), null_terminated(&env));
    let files = match (open_output(m.parent, r.out), open_output(m.parent, r.err)) {
        (Ok(out), Ok(err)) => [out, err],
        (Err(e), _) | (_, Err(e)) => return Err(e.raw_os_error().unwrap_or(libc::EBADF)),
    };
    // SAFETY: plain system calls on descriptors this process holds.
    unsafe {
        for (i, fd) in [m.null, files[0].as_raw_fd(), files[1].as_raw_fd()].into_iter().enumerate()
        {
            if libc::dup2(fd, i as libc::c_int) < 0 {
                return Err(io::Error::last_os_error().raw_os_error().unwrap_or(libc::EBADF));
            }
        }
        for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGPIPE] {
            libc::signal(sig, libc::SIG_DFL);
        }
        let mut none: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut none);
        libc::sigprocmask(libc::SIG_SETMASK, &none, std::ptr::null_mut());
    }
    Ok(SetUp {
        program,
        _argv: argv,
        _env: env,
        argp,
        envp,
        _files: files,
        exec: Exec::new(r.kill_group, r.out, r.err),
    })
}

/// A request as scalescope's [`super::spawner::Spawner::spawn`] writes it.
struct Request<'a> {
    kill_group: bool,
    out: i64,
    err: i64,
    program: &'a [u8],
    argv: Vec<&'a [u8]>,
    extra: Vec<&'a [u8]>,
}

impl<'a> Request<'a> {
    fn read(m: &'a [u8]) -> io::Result<Request<'a>> {
        let mut at = m;
        let kill_group = take_u8(&mut at)? == 1;
        let (out, err) = (take_i64(&mut at)?, take_i64(&mut at)?);
        let program = take_bytes(&mut at)?;
        let argv =
            (0..take_i64(&mut at)?).map(|_| take_bytes(&mut at)).collect::<io::Result<Vec<_>>>()?;
        let extra =
            (0..take_i64(&mut at)?).map(|_| take_bytes(&mut at)).collect::<io::Result<Vec<_>>>()?;
        Ok(Request { kill_group, out, err, program, argv, extra })
    }
}

/// Opens the write end of one of scalescope's output pipes (its descriptor `fd`).
fn open_output(parent: i32, fd: i64) -> io::Result<File> {
    std::fs::OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_CLOEXEC)
        .open(format!("/proc/{parent}/fd/{fd}"))
}

fn refuse(to: &mut File, errno: i32) -> io::Result<()> {
    let mut r = vec![0u8];
    put_i64(&mut r, errno.into());
    send(to, &r)
}

/// The helper's environment with `extra` (`NAME=VALUE`) set on top, as `execve` wants it.
fn environment(base: &[Vec<u8>], extra: &[&[u8]]) -> Result<Vec<CString>, std::ffi::NulError> {
    let name = |e: &[u8]| e.iter().position(|&b| b == b'=').map_or(e.len(), |i| i + 1);
    base.iter()
        .filter(|e| !extra.iter().any(|x| x[..name(x)] == e[..name(e)]))
        .map(Vec::as_slice)
        .chain(extra.iter().copied())
        .map(CString::new)
        .collect()
}

/// Closes every descriptor above stderr but those in `keep`.
fn close_others(keep: &[RawFd]) {
    let mut keep = keep.to_vec();
    keep.sort_unstable();
    let mut from = 3;
    for fd in keep.into_iter().chain([libc::c_int::MAX]).filter(|&fd| fd >= 3) {
        if fd > from {
            close_range(from, fd - 1);
        }
        from = fd.saturating_add(1);
    }
}

/// Closes descriptors `from..=to` (close_range, Linux 5.9; one by one up to the limit before).
fn close_range(from: RawFd, to: RawFd) {
    // SAFETY: closes descriptors of this process that nothing here uses any more.
    unsafe {
        if libc::syscall(libc::SYS_close_range, from as libc::c_uint, to as libc::c_uint, 0) == 0 {
            return;
        }
        let limit = libc::sysconf(libc::_SC_OPEN_MAX).clamp(0, 1 << 20) as RawFd;
        for fd in from..=to.min(limit) {
            libc::close(fd);
        }
    }
}

/// `rchar` and `wchar` of an open `/proc/<pid>/io`.
fn read_io(f: &mut ProcFile) -> Option<(u64, u64)> {
    let text = f.read()?;
    let field = |key: &str| {
        text.lines().find_map(|l| l.strip_prefix(key)).and_then(|v| v.trim().parse::<u64>().ok())
    };
    Some((field("rchar:")?, field("wchar:")?))
}

/// The pointers of `strings` followed by a null pointer, as `execve` wants them.
fn null_terminated(strings: &[CString]) -> Vec<*mut libc::c_char> {
    strings.iter().map(|s| s.as_ptr().cast_mut()).chain([std::ptr::null_mut()]).collect()
}

/// Waits for the run to exit, stops the clock, reads its I/O while it is a zombie, kills what is
/// left of its group when asked, reaps it; returns the `Finished` message. `own_usage` and `own`
/// are what the ready child used, read and wrote itself before the clock, taken out of the run's.
fn wait(
    run: &mut Ready,
    t0: u64,
    kill_group: bool,
    own_usage: RunUsage,
    own: (u64, u64),
) -> Vec<u8> {
    let pid = run.pid;
    loop {
        // SAFETY: siginfo_t is plain data filled by waitid.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        let rc = unsafe {
            libc::waitid(libc::P_PID, pid as libc::id_t, &mut info, libc::WEXITED | libc::WNOWAIT)
        };
        if rc == 0 || io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            break;
        }
    }
    let wall_ns = monotonic_ns() - t0;
    let io = run
        .io
        .as_mut()
        .and_then(read_io)
        .map(|(r, w)| (r.saturating_sub(own.0), w.saturating_sub(own.1)));
    if kill_group {
        // SAFETY: the group's leader is a zombie not yet reaped, so its id is still this group's.
        unsafe { libc::kill(-pid, libc::SIGKILL) };
    }
    let mut status = 0;
    // SAFETY: rusage is plain data filled by wait4.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    while unsafe { libc::wait4(pid, &mut status, 0, &mut ru) } < 0
        && io::Error::last_os_error().raw_os_error() == Some(libc::EINTR)
    {}
    let mut m = Vec::with_capacity(128);
    put_i64(&mut m, status.into());
    put_i64(&mut m, wall_ns as i64);
    RunUsage::of(&ru).less(own_usage).put(&mut m);
    match io {
        Some((r, w)) => {
            m.push(1);
            put_i64(&mut m, r as i64);
            put_i64(&mut m, w as i64);
        }
        None => m.push(0),
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extra_variables_replace_those_of_the_same_name() {
        let base: Vec<Vec<u8>> =
            ["A=1", "AB=2", "C=3"].iter().map(|e| e.as_bytes().to_vec()).collect();
        let env = environment(&base, &[b"A=9", b"D=4"]).unwrap();
        let env: Vec<&str> = env.iter().map(|c| c.to_str().unwrap()).collect();
        assert_eq!(env, ["AB=2", "C=3", "A=9", "D=4"]);
    }
}
