//! Captures a child's stdout or stderr: keeps the first and last bytes (bounded memory whatever
//! the program prints), scans every line for metrics, and optionally passes the output through.

use super::metrics::{Found, Scanner};
use std::io::{Read, Write};
use std::sync::Arc;

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
            out.extend_from_slice(format!("\n[… scalescope dropped {dropped} bytes here …]\n").as_bytes());
        }
        out.extend_from_slice(self.tail());
        out
    }
}

/// Reads `src` to its end; where it goes: kept, scanned, and echoed to `echo` when given.
pub fn drain(mut src: impl Read, scanner: Arc<Scanner>, mut echo: Option<Box<dyn Write + Send>>) -> Captured {
    let mut cap = Captured::default();
    let mut buf = vec![0u8; 64 * 1024];
    let mut line: Vec<u8> = Vec::new();
    loop {
        let n = match src.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        let chunk = &buf[..n];
        cap.total += n as u64;
        if let Some(w) = echo.as_mut()
            && w.write_all(chunk).and_then(|_| w.flush()).is_err()
        {
            echo = None;
        }
        keep(&mut cap, chunk);
        for piece in chunk.split_inclusive(|&b| b == b'\n') {
            let complete = piece.ends_with(b"\n");
            if complete && line.is_empty() {
                // The common case: a whole line inside the chunk, scanned in place.
                scanner.scan_line(&piece[..piece.len().min(MAX_LINE)], &mut cap.found);
                continue;
            }
            if line.len() < MAX_LINE {
                line.extend_from_slice(&piece[..piece.len().min(MAX_LINE - line.len())]);
            }
            if complete {
                scanner.scan_line(&line, &mut cap.found);
                line.clear();
            }
        }
    }
    if !line.is_empty() {
        scanner.scan_line(&line, &mut cap.found);
    }
    cap
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
