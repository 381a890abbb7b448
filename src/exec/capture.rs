//! Captures a run's stdout and stderr: keeps the first and last bytes (bounded memory whatever
//! the program prints), scans every line for metrics, and optionally passes the output through.
//! The thread that waits for the run reads both pipes itself ([`Streams`]).

use super::metrics::{Found, Scanner};
use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, RawFd};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Bytes kept from the start and, separately, from the end of each stream.
pub const KEEP_BYTES: usize = 64 * 1024;
/// Longest line scanned for metrics; longer lines are cut.
const MAX_LINE: usize = 64 * 1024;

/// What one stream printed, bounded.
#[derive(Debug, Default)]
pub struct Captured {
    /// The first bytes.
    pub head: Vec<u8>,
    /// The last bytes after the head (up to twice the kept size; the last `KEEP_BYTES` count).
    tail: Vec<u8>,
    /// All bytes the stream carried.
    pub total: u64,
    /// Metrics found in the stream.
    pub found: Vec<Found>,
}

impl Captured {
    /// Whether bytes between the head and the tail were dropped.
    pub fn truncated(&self) -> bool {
        self.total > (self.head.len() + self.tail().len()) as u64
    }

    /// The kept end of the stream.
    pub fn tail(&self) -> &[u8] {
        &self.tail[self.tail.len().saturating_sub(KEEP_BYTES)..]
    }

    /// The kept text, with a marker where bytes were dropped.
    pub fn bytes(&self) -> Vec<u8> {
        let mut out = self.head.clone();
        if self.truncated() {
            let dropped = self.total - (self.head.len() + self.tail().len()) as u64;
            out.extend_from_slice(
                format!("\n[… scalescope dropped {dropped} bytes here …]\n").as_bytes(),
            );
        }
        out.extend_from_slice(self.tail());
        out
    }
}

/// Where one stream's bytes go as they arrive: kept (bounded), scanned line by line for metrics,
/// and echoed when asked.
pub struct Capture {
    cap: Captured,
    line: Vec<u8>,
    scanner: Arc<Scanner>,
    echo: Option<Box<dyn Write + Send>>,
}

impl Capture {
    /// A capture scanning with `scanner` and echoing to `echo` when given.
    pub fn new(scanner: Arc<Scanner>, echo: Option<Box<dyn Write + Send>>) -> Capture {
        Capture { cap: Captured::default(), line: Vec::new(), scanner, echo }
    }

    /// Takes the next bytes of the stream.
    pub fn feed(&mut self, chunk: &[u8]) {
        self.cap.total += chunk.len() as u64;
        if let Some(w) = self.echo.as_mut()
            && w.write_all(chunk).and_then(|_| w.flush()).is_err()
        {
            self.echo = None;
        }
        keep(&mut self.cap, chunk);
        // Newlines found with memchr: a byte-by-byte split made the thread reading zstd's 50 MB
        // of compressed output the largest part of scalescope's CPU time beside it.
        let mut start = 0;
        for end in memchr::memchr_iter(b'\n', chunk) {
            self.piece(&chunk[start..=end], true);
            start = end + 1;
        }
        if start < chunk.len() {
            self.piece(&chunk[start..], false);
        }
    }

    /// A piece of a line, `complete` when it ends one.
    fn piece(&mut self, piece: &[u8], complete: bool) {
        if complete && self.line.is_empty() {
            // The common case: a whole line inside the chunk, scanned in place.
            self.scanner.scan_line(&piece[..piece.len().min(MAX_LINE)], &mut self.cap.found);
            return;
        }
        if self.line.len() < MAX_LINE {
            self.line.extend_from_slice(&piece[..piece.len().min(MAX_LINE - self.line.len())]);
        }
        if complete {
            self.scanner.scan_line(&self.line, &mut self.cap.found);
            self.line.clear();
        }
    }

    /// The stream ended: what it printed.
    pub fn finish(mut self) -> Captured {
        if !self.line.is_empty() {
            self.scanner.scan_line(&self.line, &mut self.cap.found);
        }
        self.cap
    }
}

/// Reads `src` to its end; where it goes: kept, scanned, and echoed to `echo` when given.
#[cfg(test)]
pub fn drain(
    mut src: impl Read,
    scanner: Arc<Scanner>,
    echo: Option<Box<dyn Write + Send>>,
) -> Captured {
    let mut c = Capture::new(scanner, echo);
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match src.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => c.feed(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        }
    }
    c.finish()
}

/// Why [`Streams::until`] returned.
#[derive(Debug, PartialEq)]
pub(crate) enum Wake {
    /// The other descriptor has something to read.
    Other,
    /// The deadline passed.
    Deadline,
    /// Both streams are closed (and there is no other descriptor to wait for).
    Closed,
}

/// After a read that found less than half a buffer, the pipes are left to fill this long (the
/// run's end still wakes the reader at once). Woken at every write, the reader had taken 0.05–0.07
/// s of CPU per 0.26 s run from `rg -j2 -c`, whose threads print each file's count with a write
/// of its own, on CPUs the run's threads wanted: a fifth of a CPU, called the cost of watching.
const SETTLE: Duration = Duration::from_millis(2);
/// The pipes' size asked of the kernel, so that a writer fills them in a pause only beyond
/// 500 MB/s (when reads find full buffers and there is no pause); the default 64 KiB stays when
/// the user's pipe allowance refuses it.
const PIPE_BYTES: libc::c_int = 1 << 20;
/// Bytes read at once.
const READ_BYTES: usize = 64 * 1024;

/// A run's stdout and stderr pipes, read by the thread that waits for the run: no reader thread
/// to start or to wake, so that nothing but the run itself competes for the CPUs.
pub(crate) struct Streams {
    pipes: [Option<File>; 2],
    captures: [Capture; 2],
    buf: Vec<u8>,
    /// The last read found little: let the pipes fill before the next.
    settle: bool,
}

impl Streams {
    /// Captures of the read ends of a run's stdout and stderr pipes.
    pub fn new(pipes: [File; 2], captures: [Capture; 2]) -> Streams {
        for p in &pipes {
            // SAFETY: F_SETPIPE_SZ on a valid pipe descriptor; a refusal leaves it as it was.
            unsafe { libc::fcntl(p.as_raw_fd(), libc::F_SETPIPE_SZ, PIPE_BYTES) };
        }
        Streams { pipes: pipes.map(Some), captures, buf: vec![0u8; READ_BYTES], settle: false }
    }

    /// Captures output until `other` is readable, `deadline` passes, or both streams close.
    pub fn until(
        &mut self,
        other: Option<RawFd>,
        deadline: Option<Instant>,
    ) -> std::io::Result<Wake> {
        loop {
            if let Some(fd) = other.filter(|_| std::mem::take(&mut self.settle)) {
                let now = Instant::now();
                let pause =
                    deadline.map_or(SETTLE, |d| d.saturating_duration_since(now).min(SETTLE));
                readable_within(fd, pause);
            }
            let mut fds: Vec<libc::pollfd> = other
                .into_iter()
                .chain(self.pipes.iter().flatten().map(|p| p.as_raw_fd()))
                .map(|fd| libc::pollfd { fd, events: libc::POLLIN, revents: 0 })
                .collect();
            if other.is_none() && fds.is_empty() {
                return Ok(Wake::Closed);
            }
            // To the nanosecond: a timeout in whole milliseconds, rounded down, spun the last one.
            let left = deadline.map(|d| timespec(d.saturating_duration_since(Instant::now())));
            let timeout = left.as_ref().map_or(std::ptr::null(), |t| t as *const libc::timespec);
            // SAFETY: `fds` is a valid array of pollfd, and `timeout` null or a valid timespec, for
            // the duration of the call.
            let n = unsafe {
                libc::ppoll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, timeout, std::ptr::null())
            };
            if n < 0 {
                match std::io::Error::last_os_error() {
                    e if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    e => return Err(e),
                }
            }
            if n == 0 && deadline.is_some_and(|d| Instant::now() >= d) {
                return Ok(Wake::Deadline);
            }
            for (i, slot) in self.pipes.iter_mut().enumerate() {
                let Some(pipe) = slot else { continue };
                let ready = fds.iter().any(|f| f.fd == pipe.as_raw_fd() && f.revents != 0);
                if ready {
                    match pipe.read(&mut self.buf) {
                        Ok(0) => *slot = None,
                        Ok(n) => {
                            self.captures[i].feed(&self.buf[..n]);
                            self.settle |= n < READ_BYTES / 2;
                        }
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                        Err(_) => *slot = None,
                    }
                }
            }
            if other.is_some() && fds[0].revents != 0 {
                return Ok(Wake::Other);
            }
        }
    }

    /// What the two streams printed (a stream still open is cut where it stands).
    pub fn finish(self) -> [Captured; 2] {
        self.captures.map(Capture::finish)
    }
}

/// Whether `fd` becomes readable within `wait` (a signal meanwhile does not cut the wait short).
pub(crate) fn readable_within(fd: RawFd, wait: Duration) -> bool {
    let deadline = Instant::now() + wait;
    let mut p = libc::pollfd { fd, events: libc::POLLIN, revents: 0 };
    loop {
        let left = timespec(deadline.saturating_duration_since(Instant::now()));
        // SAFETY: one valid pollfd and a valid timespec for the duration of the call.
        let n = unsafe { libc::ppoll(&mut p, 1, &left, std::ptr::null()) };
        if n >= 0 || std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            return n > 0;
        }
    }
}

/// A timeout for `ppoll`.
fn timespec(d: Duration) -> libc::timespec {
    libc::timespec {
        tv_sec: d.as_secs().min(i32::MAX as u64) as libc::time_t,
        tv_nsec: d.subsec_nanos().into(),
    }
}

fn keep(cap: &mut Captured, chunk: &[u8]) {
    let room = KEEP_BYTES.saturating_sub(cap.head.len());
    let (to_head, rest) = chunk.split_at(room.min(chunk.len()));
    cap.head.extend_from_slice(to_head);
    let rest = &rest[rest.len().saturating_sub(KEEP_BYTES)..];
    cap.tail.extend_from_slice(rest);
    // Trim in one move once the buffer holds twice what is kept: amortised copying per byte.
    if cap.tail.len() > 2 * KEEP_BYTES {
        let cut = cap.tail.len() - KEEP_BYTES;
        cap.tail.drain(..cut);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_head_and_tail_of_huge_output_and_still_finds_metrics() {
        let mut text = String::new();
        for i in 0..200_000 {
            text.push_str(&format!("line {i}\n"));
        }
        text.push_str("scalescope-metric throughput 42 ops/s");
        let cap = drain(text.as_bytes(), Arc::new(Scanner::new(&[]).unwrap()), None);
        assert_eq!(cap.total, text.len() as u64);
        assert!(cap.truncated());
        assert_eq!(cap.head.len(), KEEP_BYTES);
        assert_eq!(cap.tail().len(), KEEP_BYTES);
        assert!(cap.bytes().ends_with(b"42 ops/s"));
        assert_eq!(cap.found[0].value, 42.0);
    }
}
