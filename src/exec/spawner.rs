//! Starting runs from a small helper process. When a process execs, Linux records the peak
//! memory of the image it replaces as part of the new program's peak (`ru_maxrss`): a run forked
//! or vforked from scalescope itself would report at least scalescope's own memory, which grows
//! with a long sweep. So scalescope starts one helper (itself, exec'd anew, doing nothing else)
//! that starts every run with `posix_spawn` after shedding its own pages (see [`super::shed`]), or
//! forks it where /proc does not allow that: a run's peak memory is then its own, as GNU time
//! reports it. The helper also takes the clock, as late and as early as possible: from just before
//! the spawn to the moment the run has exited, and collects its resource usage with `wait4`.
//!
//! The two talk over a pair of pipes. The run's output pipes stay scalescope's: the helper opens
//! their write ends through `/proc/<scalescope>/fd/N` (no socket, no descriptor passing).

use std::ffi::{CString, OsStr};
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};

use super::shed::Shed;

/// The name the helper runs under (its `argv[0]`); `scalescope` started so serves runs.
const HELPER_NAME: &str = "scalescope-spawner";

/// What to start.
pub(crate) struct Request<'a> {
    /// The program's path (already looked up on PATH).
    pub program: &'a OsStr,
    /// Its arguments, the program name first.
    pub argv: &'a [String],
    /// Environment variables to set on top of scalescope's own.
    pub env: &'a [(String, String)],
    /// scalescope's descriptors of the write ends the run's stdout and stderr go to.
    pub stdout: RawFd,
    /// See `stdout`.
    pub stderr: RawFd,
    /// Kill the run's process group once its leader has exited.
    pub kill_group: bool,
}

/// How a run ended, as the helper saw it.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Finished {
    /// The `wait4` status.
    pub status: i32,
    /// Nanoseconds from just before the fork to the exit, on the monotonic clock.
    pub wall_ns: u64,
    /// `wait4`'s resource usage: user and system CPU in µs, max RSS in KiB, minor and major faults,
    /// blocks in and out, voluntary and involuntary context switches.
    pub usage: [i64; 9],
    /// `rchar` and `wchar` of `/proc/<pid>/io`, read while the run was a zombie.
    pub io: Option<(u64, u64)>,
}

/// scalescope's end of the helper.
pub(crate) struct Spawner {
    child: Child,
    /// `None` once dropped: the end of its input tells the helper to exit.
    to: Option<File>,
    from: File,
}

/// Why a run could not be started: the `errno` of `execve` (or of opening its output).
pub(crate) struct Refused(pub i32);

impl Spawner {
    /// Starts the helper.
    pub fn start() -> io::Result<Spawner> {
        let (req_r, req_w) = io::pipe()?;
        let (rep_r, rep_w) = io::pipe()?;
        let child = Command::new("/proc/self/exe")
            .arg0(HELPER_NAME)
            .arg(std::process::id().to_string())
            .stdin(Stdio::from(OwnedFd::from(req_r)))
            .stdout(Stdio::from(OwnedFd::from(rep_w)))
            .spawn()?;
        Ok(Spawner { child, to: Some(File::from(OwnedFd::from(req_w))), from: File::from(OwnedFd::from(rep_r)) })
    }

    /// Starts a run; returns its process id once it has exec'd.
    pub fn spawn(&mut self, r: &Request) -> io::Result<Result<i32, Refused>> {
        let mut m = Vec::with_capacity(256);
        m.push(u8::from(r.kill_group));
        put_i64(&mut m, r.stdout.into());
        put_i64(&mut m, r.stderr.into());
        put_bytes(&mut m, r.program.as_bytes());
        put_i64(&mut m, r.argv.len() as i64);
        for a in r.argv {
            put_bytes(&mut m, a.as_bytes());
        }
        put_i64(&mut m, r.env.len() as i64);
        for (k, v) in r.env {
            put_bytes(&mut m, format!("{k}={v}").as_bytes());
        }
        let to = self.to.as_mut().ok_or_else(|| io::Error::from(io::ErrorKind::BrokenPipe))?;
        send(to, &m)?;
        let reply = receive(&mut self.from)?;
        let mut at = &reply[..];
        let (ok, value) = (take_u8(&mut at)?, take_i64(&mut at)? as i32);
        Ok(if ok == 1 { Ok(value) } else { Err(Refused(value)) })
    }

    /// The descriptor that becomes readable when the run started last has ended.
    pub fn reply_fd(&self) -> RawFd {
        self.from.as_raw_fd()
    }

    /// Waits for the run started last to end.
    pub fn finish(&mut self) -> io::Result<Finished> {
        let reply = receive(&mut self.from)?;
        let mut at = &reply[..];
        let mut f =
            Finished { status: take_i64(&mut at)? as i32, wall_ns: take_i64(&mut at)? as u64, ..Finished::default() };
        for u in &mut f.usage {
            *u = take_i64(&mut at)?;
        }
        if take_u8(&mut at)? == 1 {
            f.io = Some((take_i64(&mut at)? as u64, take_i64(&mut at)? as u64));
        }
        Ok(f)
    }
}

impl Drop for Spawner {
    fn drop(&mut self) {
        drop(self.to.take());
        let _ = self.child.wait();
    }
}

fn put_i64(m: &mut Vec<u8>, v: i64) {
    m.extend_from_slice(&v.to_le_bytes());
}

fn put_bytes(m: &mut Vec<u8>, b: &[u8]) {
    put_i64(m, b.len() as i64);
    m.extend_from_slice(b);
}

fn take_u8(at: &mut &[u8]) -> io::Result<u8> {
    let (&b, rest) = at.split_first().ok_or_else(torn)?;
    *at = rest;
    Ok(b)
}

fn take_i64(at: &mut &[u8]) -> io::Result<i64> {
    let (head, rest) = at.split_at_checked(8).ok_or_else(torn)?;
    *at = rest;
    Ok(i64::from_le_bytes(head.try_into().map_err(|_| torn())?))
}

fn take_bytes<'a>(at: &mut &'a [u8]) -> io::Result<&'a [u8]> {
    let n = usize::try_from(take_i64(at)?).map_err(|_| torn())?;
    let (head, rest) = at.split_at_checked(n).ok_or_else(torn)?;
    *at = rest;
    Ok(head)
}

fn torn() -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, "a torn message between scalescope and its spawn helper")
}

/// Writes one message: its length, then its bytes, in one write.
fn send(to: &mut File, payload: &[u8]) -> io::Result<()> {
    let mut m = Vec::with_capacity(payload.len() + 8);
    put_bytes(&mut m, payload);
    to.write_all(&m)
}

/// Reads one message; end of input is `UnexpectedEof`.
fn receive(from: &mut File) -> io::Result<Vec<u8>> {
    let mut len = [0u8; 8];
    from.read_exact(&mut len)?;
    let n = usize::try_from(i64::from_le_bytes(len)).map_err(|_| torn())?;
    let mut m = vec![0u8; n];
    from.read_exact(&mut m)?;
    Ok(m)
}

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
            eprintln!("scalescope: the spawn helper stopped: {e}");
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
    let mut shed = Shed::prepare();
    let null = std::fs::OpenOptions::new().read(true).custom_flags(libc::O_CLOEXEC).open("/dev/null")?;
    let base: Vec<Vec<u8>> = std::env::vars_os()
        .map(|(k, v)| {
            let mut e = k.into_vec();
            e.push(b'=');
            e.extend(v.into_vec());
            e
        })
        .collect();
    // SAFETY: stdin and stdout were set up by scalescope as the two pipes; this process owns them.
    let (mut from, mut to) = unsafe { (File::from_raw_fd(0), File::from_raw_fd(1)) };
    loop {
        let m = match receive(&mut from) {
            Ok(m) => m,
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(()),
            Err(e) => return Err(e),
        };
        let mut at = &m[..];
        let kill_group = take_u8(&mut at)? == 1;
        let (out_fd, err_fd) = (take_i64(&mut at)?, take_i64(&mut at)?);
        let program = CString::new(take_bytes(&mut at)?).map_err(|_| torn())?;
        let argv = (0..take_i64(&mut at)?).map(|_| cstring(take_bytes(&mut at)?)).collect::<io::Result<Vec<_>>>()?;
        let extra =
            (0..take_i64(&mut at)?).map(|_| take_bytes(&mut at).map(<[u8]>::to_vec)).collect::<io::Result<Vec<_>>>()?;
        let env = environment(&base, &extra)?;
        let opened = [out_fd, err_fd].map(|fd| {
            std::fs::OpenOptions::new()
                .write(true)
                .custom_flags(libc::O_CLOEXEC)
                .open(format!("/proc/{parent}/fd/{fd}"))
        });
        let [Ok(out), Ok(err)] = opened else {
            let e = opened
                .into_iter()
                .find_map(Result::err)
                .map_or(libc::EBADF, |e| e.raw_os_error().unwrap_or(libc::EBADF));
            refuse(&mut to, e)?;
            continue;
        };
        let fds = [null.as_raw_fd(), out.as_raw_fd(), err.as_raw_fd()];
        let started = match &mut shed {
            Some(shed) => launch(&program, &argv, &env, fds, shed),
            None => start(&program, &argv, &env, fds),
        };
        match started {
            Err(errno) => refuse(&mut to, errno)?,
            Ok((pid, t0)) => {
                let mut r = vec![1u8];
                put_i64(&mut r, pid.into());
                send(&mut to, &r)?;
                // The output's write ends stay open here until the clock has stopped: the run's
                // exit then wakes no reader of its output while it is timed.
                let finished = wait(pid, t0, kill_group);
                drop((out, err));
                send(&mut to, &finished)?;
            }
        }
    }
}

fn refuse(to: &mut File, errno: i32) -> io::Result<()> {
    let mut r = vec![0u8];
    put_i64(&mut r, errno.into());
    send(to, &r)
}

fn cstring(b: &[u8]) -> io::Result<CString> {
    CString::new(b).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a NUL byte in an argument"))
}

/// The helper's environment with `extra` (`NAME=VALUE`) set on top, as `execve` wants it.
fn environment(base: &[Vec<u8>], extra: &[Vec<u8>]) -> io::Result<Vec<CString>> {
    let name = |e: &[u8]| e.iter().position(|&b| b == b'=').map_or(e.len(), |i| i + 1);
    let mut env: Vec<Vec<u8>> =
        base.iter().filter(|e| !extra.iter().any(|x| x[..name(x)] == e[..name(e)])).cloned().collect();
    env.extend(extra.iter().cloned());
    env.into_iter().map(|e| cstring(&e)).collect()
}

fn now_ns() -> u64 {
    // SAFETY: timespec is plain data filled by clock_gettime.
    let mut t: libc::timespec = unsafe { std::mem::zeroed() };
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut t) };
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

/// The pointers of `strings` followed by a null pointer, as `execve` and `posix_spawn` want them.
fn null_terminated(strings: &[CString]) -> Vec<*mut libc::c_char> {
    strings.iter().map(|s| s.as_ptr().cast_mut()).chain([std::ptr::null_mut()]).collect()
}

/// Starts the program with `posix_spawn` (a vfork) in a new process group with `fds` as its stdin,
/// stdout and stderr, the helper's pages shed first (see [`super::shed`]); returns its pid and the
/// clock reading taken just before, once it has exec'd.
fn launch(
    program: &CString,
    argv: &[CString],
    env: &[CString],
    fds: [RawFd; 3],
    shed: &mut Shed,
) -> Result<(i32, u64), i32> {
    let (argp, envp) = (null_terminated(argv), null_terminated(env));
    // SAFETY: the attributes and actions are initialised before use and destroyed after; every
    // pointer handed to posix_spawn outlives the call.
    unsafe {
        let mut attr: libc::posix_spawnattr_t = std::mem::zeroed();
        let mut actions: libc::posix_spawn_file_actions_t = std::mem::zeroed();
        libc::posix_spawnattr_init(&mut attr);
        libc::posix_spawn_file_actions_init(&mut actions);
        for (i, &fd) in fds.iter().enumerate() {
            libc::posix_spawn_file_actions_adddup2(&mut actions, fd, i as libc::c_int);
        }
        let mut defaults: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut defaults);
        for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGPIPE] {
            libc::sigaddset(&mut defaults, sig);
        }
        let mut none: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut none);
        libc::posix_spawnattr_setsigdefault(&mut attr, &defaults);
        libc::posix_spawnattr_setsigmask(&mut attr, &none);
        libc::posix_spawnattr_setpgroup(&mut attr, 0);
        let flags = libc::POSIX_SPAWN_SETPGROUP | libc::POSIX_SPAWN_SETSIGDEF | libc::POSIX_SPAWN_SETSIGMASK;
        libc::posix_spawnattr_setflags(&mut attr, flags as libc::c_short);
        shed.now();
        let mut pid = 0;
        let t0 = now_ns();
        let rc = libc::posix_spawn(&mut pid, program.as_ptr(), &actions, &attr, argp.as_ptr(), envp.as_ptr());
        shed.learn();
        libc::posix_spawn_file_actions_destroy(&mut actions);
        libc::posix_spawnattr_destroy(&mut attr);
        if rc != 0 { Err(rc) } else { Ok((pid, t0)) }
    }
}

/// Forks and execs the program in a new process group with `fds` as its stdin, stdout and stderr;
/// returns its pid and the clock reading taken just before the fork, once it has exec'd.
fn start(program: &CString, argv: &[CString], env: &[CString], fds: [RawFd; 3]) -> Result<(i32, u64), i32> {
    let (argp, envp) = (null_terminated(argv), null_terminated(env));
    let mut report = [0 as libc::c_int; 2];
    // SAFETY: a pipe whose descriptors this function owns and closes.
    if unsafe { libc::pipe2(report.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error().raw_os_error().unwrap_or(libc::EMFILE));
    }
    let t0 = now_ns();
    // SAFETY: this process is single-threaded; the child only makes async-signal-safe calls on
    // memory prepared before the fork, then execs or exits.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        unsafe {
            libc::setpgid(0, 0);
            for (i, &fd) in fds.iter().enumerate() {
                libc::dup2(fd, i as libc::c_int);
            }
            for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGPIPE] {
                libc::signal(sig, libc::SIG_DFL);
            }
            let mut none: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut none);
            libc::sigprocmask(libc::SIG_SETMASK, &none, std::ptr::null_mut());
            libc::execve(program.as_ptr(), argp.as_ptr().cast(), envp.as_ptr().cast());
            let errno = *libc::__errno_location();
            libc::write(report[1], (&errno as *const libc::c_int).cast(), 4);
            libc::_exit(127);
        }
    }
    let fork_errno = io::Error::last_os_error().raw_os_error().unwrap_or(libc::EAGAIN);
    // SAFETY: closing our write end, so the read below ends when the child execs or exits.
    unsafe { libc::close(report[1]) };
    // SAFETY: the read end is ours; it is closed when `report_r` drops.
    let mut report_r = unsafe { File::from_raw_fd(report[0]) };
    if pid < 0 {
        return Err(fork_errno);
    }
    // Also here, so the group exists whichever process runs first.
    unsafe { libc::setpgid(pid, pid) };
    let mut errno = [0u8; 4];
    let read = loop {
        match report_r.read(&mut errno) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            other => break other,
        }
    };
    match read {
        Ok(4) => {
            unsafe { libc::waitpid(pid, std::ptr::null_mut(), 0) };
            Err(i32::from_ne_bytes(errno))
        }
        _ => Ok((pid, t0)),
    }
}

/// Waits for the run to exit, stops the clock, reads its I/O while it is a zombie, kills what is
/// left of its group when asked, reaps it; returns the `Finished` message.
fn wait(pid: i32, t0: u64, kill_group: bool) -> Vec<u8> {
    loop {
        // SAFETY: siginfo_t is plain data filled by waitid.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        let rc = unsafe { libc::waitid(libc::P_PID, pid as libc::id_t, &mut info, libc::WEXITED | libc::WNOWAIT) };
        if rc == 0 || io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            break;
        }
    }
    let wall_ns = now_ns() - t0;
    let io = super::child::read_io(pid);
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
    let micros = |tv: libc::timeval| tv.tv_sec * 1_000_000 + tv.tv_usec;
    let usage = [
        micros(ru.ru_utime),
        micros(ru.ru_stime),
        ru.ru_maxrss,
        ru.ru_minflt,
        ru.ru_majflt,
        ru.ru_inblock,
        ru.ru_oublock,
        ru.ru_nvcsw,
        ru.ru_nivcsw,
    ];
    let mut m = Vec::with_capacity(128);
    put_i64(&mut m, status.into());
    put_i64(&mut m, wall_ns as i64);
    for u in usage {
        put_i64(&mut m, u);
    }
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
        let base: Vec<Vec<u8>> = ["A=1", "AB=2", "C=3"].iter().map(|e| e.as_bytes().to_vec()).collect();
        let env = environment(&base, &[b"A=9".to_vec(), b"D=4".to_vec()]).unwrap();
        let env: Vec<&str> = env.iter().map(|c| c.to_str().unwrap()).collect();
        assert_eq!(env, ["AB=2", "C=3", "A=9", "D=4"]);
    }

    #[test]
    fn a_message_survives_the_round_trip_and_a_torn_one_is_an_error() {
        let (r, w) = io::pipe().unwrap();
        let (mut r, mut w) = (File::from(OwnedFd::from(r)), File::from(OwnedFd::from(w)));
        let mut m = Vec::new();
        put_i64(&mut m, -5);
        put_bytes(&mut m, b"argv");
        send(&mut w, &m).unwrap();
        let got = receive(&mut r).unwrap();
        let mut at = &got[..];
        assert_eq!((take_i64(&mut at).unwrap(), take_bytes(&mut at).unwrap()), (-5, &b"argv"[..]));
        assert!(take_u8(&mut at).is_err());
    }
}
