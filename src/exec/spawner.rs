//! scalescope's end of the spawn helper, and the messages they exchange. When a process execs,
//! Linux records the peak memory of the image it replaces as part of the new program's peak
//! (`ru_maxrss`): a run forked or vforked from scalescope itself would report at least
//! scalescope's own memory, which grows with a long sweep. So scalescope starts one small helper
//! (itself, exec'd anew, doing nothing else) that starts every run (see [`super::helper`]) and
//! takes the clock: from just before the run execs to the moment it has exited, collecting its
//! resource usage with `wait4`.
//!
//! They talk over a pair of pipes: requests go down one (read by the process that becomes the
//! run), replies come up the other. A request can also be *armed*: the run is set up at once but
//! started by a later "go", so that the set-up happens while scalescope records the run before
//! (see [`Spawner::arm`]). The run's output pipes stay scalescope's: the run opens their
//! write ends through `/proc/<scalescope>/fd/N` (no socket, no descriptor passing).

use std::ffi::OsStr;
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};

/// The name the helper runs under (its `argv[0]`); `scalescope` started so serves runs.
pub(super) const HELPER_NAME: &str = "scalescope-spawner";

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

/// The first byte of a message down the request pipe: start the run now…
pub(super) const RUN: u8 = 0;
/// …set it up and wait for [`GO`] (or for another request, which replaces it)…
pub(super) const ARM: u8 = 1;
/// …start the run set up last (a message of this one byte).
pub(super) const GO: u8 = 2;

impl Request<'_> {
    /// The request as the helper reads it: [`RUN`] or [`ARM`] first.
    pub(super) fn encode(&self, kind: u8) -> Vec<u8> {
        let mut m = Vec::with_capacity(256);
        m.push(kind);
        m.push(u8::from(self.kill_group));
        put_i64(&mut m, self.stdout.into());
        put_i64(&mut m, self.stderr.into());
        put_bytes(&mut m, self.program.as_bytes());
        put_i64(&mut m, self.argv.len() as i64);
        for a in self.argv {
            put_bytes(&mut m, a.as_bytes());
        }
        put_i64(&mut m, self.env.len() as i64);
        for (k, v) in self.env {
            put_bytes(&mut m, format!("{k}={v}").as_bytes());
        }
        m
    }
}

/// How a run ended, as the helper saw it.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Finished {
    /// The `wait4` status.
    pub status: i32,
    /// Nanoseconds from just before the run execs to its exit, on the monotonic clock.
    pub wall_ns: u64,
    /// `wait4`'s resource usage of the run.
    pub usage: RunUsage,
    /// `rchar` and `wchar` of `/proc/<pid>/io`, read while the run was a zombie.
    pub io: Option<(u64, u64)>,
}

/// The figures of a `struct rusage` that a run reports, in the kernel's units, as the helper and
/// the ready child send them: the fields in this order, each a little-endian `i64`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct RunUsage {
    /// User CPU time in µs.
    pub user_us: i64,
    /// System CPU time in µs.
    pub sys_us: i64,
    /// Peak resident set in KiB.
    pub max_rss_kib: i64,
    /// Minor page faults.
    pub minor_faults: i64,
    /// Major page faults.
    pub major_faults: i64,
    /// Blocks read (512-byte units).
    pub in_blocks: i64,
    /// Blocks written (512-byte units).
    pub out_blocks: i64,
    /// Voluntary context switches.
    pub voluntary_switches: i64,
    /// Involuntary context switches.
    pub involuntary_switches: i64,
}

impl RunUsage {
    /// Its length in a message.
    pub const LEN: usize = std::mem::size_of::<RunUsage>();

    /// The figures of `ru`. Inlined: the ready child calls it after dropping its code pages.
    #[inline(always)]
    pub fn of(ru: &libc::rusage) -> RunUsage {
        let micros = |tv: libc::timeval| tv.tv_sec * 1_000_000 + tv.tv_usec;
        RunUsage {
            user_us: micros(ru.ru_utime),
            sys_us: micros(ru.ru_stime),
            max_rss_kib: ru.ru_maxrss,
            minor_faults: ru.ru_minflt,
            major_faults: ru.ru_majflt,
            in_blocks: ru.ru_inblock,
            out_blocks: ru.ru_oublock,
            voluntary_switches: ru.ru_nvcsw,
            involuntary_switches: ru.ru_nivcsw,
        }
    }

    /// The figures in their order in a message. Inlined, as [`RunUsage::of`].
    #[inline(always)]
    pub fn fields(self) -> [i64; 9] {
        [
            self.user_us,
            self.sys_us,
            self.max_rss_kib,
            self.minor_faults,
            self.major_faults,
            self.in_blocks,
            self.out_blocks,
            self.voluntary_switches,
            self.involuntary_switches,
        ]
    }

    /// Reads the figures from a message.
    pub fn take(at: &mut &[u8]) -> io::Result<RunUsage> {
        Ok(RunUsage {
            user_us: take_i64(at)?,
            sys_us: take_i64(at)?,
            max_rss_kib: take_i64(at)?,
            minor_faults: take_i64(at)?,
            major_faults: take_i64(at)?,
            in_blocks: take_i64(at)?,
            out_blocks: take_i64(at)?,
            voluntary_switches: take_i64(at)?,
            involuntary_switches: take_i64(at)?,
        })
    }

    /// Writes the figures into a message.
    pub fn put(self, m: &mut Vec<u8>) {
        for v in self.fields() {
            put_i64(m, v);
        }
    }

    /// Each figure less what `own` counted, never below zero: the run's part of a usage that also
    /// counts what its process did before the clock.
    pub fn less(self, own: RunUsage) -> RunUsage {
        let less = |a: i64, b: i64| (a - b).max(0);
        RunUsage {
            user_us: less(self.user_us, own.user_us),
            sys_us: less(self.sys_us, own.sys_us),
            max_rss_kib: less(self.max_rss_kib, own.max_rss_kib),
            minor_faults: less(self.minor_faults, own.minor_faults),
            major_faults: less(self.major_faults, own.major_faults),
            in_blocks: less(self.in_blocks, own.in_blocks),
            out_blocks: less(self.out_blocks, own.out_blocks),
            voluntary_switches: less(self.voluntary_switches, own.voluntary_switches),
            involuntary_switches: less(self.involuntary_switches, own.involuntary_switches),
        }
    }
}

/// scalescope's end of the helper.
pub(crate) struct Spawner {
    child: Child,
    /// `None` once dropped: the end of its input tells the helper to exit.
    to: Option<File>,
    from: File,
    /// A run was armed and not started yet.
    armed: bool,
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
        Ok(Spawner {
            child,
            to: Some(File::from(OwnedFd::from(req_w))),
            from: File::from(OwnedFd::from(rep_r)),
            armed: false,
        })
    }

    /// Starts a run (replacing an armed one); returns its process id once it has exec'd.
    pub fn spawn(&mut self, r: &Request) -> io::Result<Result<i32, Refused>> {
        self.armed = false;
        self.send(&r.encode(RUN))?;
        self.started()
    }

    /// Sets up a run without starting it: the process that becomes it reads the request, prepares
    /// the arguments, opens the output and drops its code pages at once, and takes the clock at
    /// [`Spawner::go`]. Another request replaces it.
    pub fn arm(&mut self, r: &Request) -> io::Result<()> {
        self.send(&r.encode(ARM))?;
        self.armed = true;
        Ok(())
    }

    /// Starts the run armed last, without waiting for it: [`Spawner::started`] gives its process
    /// id. `None` when none is armed.
    pub fn go(&mut self) -> Option<io::Result<()>> {
        if !std::mem::take(&mut self.armed) {
            return None;
        }
        Some(self.send(&[GO]))
    }

    fn send(&mut self, m: &[u8]) -> io::Result<()> {
        let to = self.to.as_mut().ok_or_else(|| io::Error::from(io::ErrorKind::BrokenPipe))?;
        send(to, m)
    }

    /// The reply to a start: the run's process id once it has exec'd, or why it could not start.
    pub fn started(&mut self) -> io::Result<Result<i32, Refused>> {
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
        let mut f = Finished {
            status: take_i64(&mut at)? as i32,
            wall_ns: take_i64(&mut at)? as u64,
            usage: RunUsage::take(&mut at)?,
            io: None,
        };
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

pub(super) fn put_i64(m: &mut Vec<u8>, v: i64) {
    m.extend_from_slice(&v.to_le_bytes());
}

pub(super) fn put_bytes(m: &mut Vec<u8>, b: &[u8]) {
    put_i64(m, b.len() as i64);
    m.extend_from_slice(b);
}

pub(super) fn take_u8(at: &mut &[u8]) -> io::Result<u8> {
    let (&b, rest) = at.split_first().ok_or_else(torn)?;
    *at = rest;
    Ok(b)
}

pub(super) fn take_i64(at: &mut &[u8]) -> io::Result<i64> {
    let (head, rest) = at.split_at_checked(8).ok_or_else(torn)?;
    *at = rest;
    Ok(i64::from_le_bytes(head.try_into().map_err(|_| torn())?))
}

pub(super) fn take_bytes<'a>(at: &mut &'a [u8]) -> io::Result<&'a [u8]> {
    let n = usize::try_from(take_i64(at)?).map_err(|_| torn())?;
    let (head, rest) = at.split_at_checked(n).ok_or_else(torn)?;
    *at = rest;
    Ok(head)
}

pub(super) fn torn() -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        "a torn message between scalescope and its spawn helper",
    )
}

/// Writes one message: its length, then its bytes, in one write.
pub(super) fn send(to: &mut File, payload: &[u8]) -> io::Result<()> {
    let mut m = Vec::with_capacity(payload.len() + 8);
    put_bytes(&mut m, payload);
    to.write_all(&m)
}

/// Reads one message; end of input is `UnexpectedEof`.
pub(super) fn receive(from: &mut File) -> io::Result<Vec<u8>> {
    let mut len = [0u8; 8];
    from.read_exact(&mut len)?;
    let n = usize::try_from(i64::from_le_bytes(len)).map_err(|_| torn())?;
    let mut m = vec![0u8; n];
    from.read_exact(&mut m)?;
    Ok(m)
}

#[cfg(test)]
mod tests {
    use super::*;

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
