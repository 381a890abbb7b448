//! Keeping the spawn helper's memory below any program's, so that it can start runs with
//! `posix_spawn` (vfork: no copy of its memory map, about 0.1 ms less per run than fork) and still
//! report each run's own peak memory. At exec the kernel counts the peak resident size of the
//! memory map being replaced into the new program's `ru_maxrss`; after a vfork that map is the
//! helper's. So just before each spawn the helper drops the pages of its read-only file mappings
//! (code and constants, read back from the page cache when next used) and resets its peak to what
//! is left: its data (about 0.3 MiB) and the code it takes back while starting the run, 0.9–1.5
//! MiB in all (docs/user-guide.md, "How runs are measured").

use std::fs::File;
use std::io::Write;

/// The helper's read-only file mappings without private copies, and its `clear_refs` file.
pub(crate) struct Shed {
    ranges: Vec<(usize, usize)>,
    clear_refs: File,
}

impl Shed {
    /// Finds what can be dropped; `None` when /proc does not allow it (the helper then forks).
    pub fn prepare() -> Option<Shed> {
        let smaps = std::fs::read_to_string("/proc/self/smaps").ok()?;
        let clear_refs = std::fs::OpenOptions::new().write(true).open("/proc/self/clear_refs").ok()?;
        Some(Shed { ranges: droppable(&smaps), clear_refs })
    }

    /// Drops the pages and resets the peak resident size to the current one.
    pub fn now(&mut self) {
        for &(start, len) in &self.ranges {
            // SAFETY: the range is a read-only private file mapping with no page of its own
            // (checked in smaps): dropping its pages loses nothing, they are read back on use.
            unsafe { libc::madvise(start as *mut libc::c_void, len, libc::MADV_DONTNEED) };
        }
        // "5" resets the peak resident size (proc(5), /proc/pid/clear_refs).
        let _ = self.clear_refs.write_all(b"5");
    }
}

/// `(start, length)` of the mappings in `smaps` that are read-only, backed by a file and hold no
/// anonymous (copied-on-write) page.
fn droppable(smaps: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut current: Option<(usize, usize)> = None;
    for line in smaps.lines() {
        let mut words = line.split_whitespace();
        let first = words.next().unwrap_or_default();
        if let Some((a, b)) = first.split_once('-')
            && let (Ok(a), Ok(b)) = (usize::from_str_radix(a, 16), usize::from_str_radix(b, 16))
        {
            let perms = words.next().unwrap_or_default();
            let path = words.nth(3).unwrap_or_default();
            current = (perms.starts_with("r-") && path.starts_with('/')).then_some((a, b - a));
        } else if first == "Anonymous:"
            && let Some(range) = current.take()
            && words.next() == Some("0")
        {
            out.push(range);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn only_read_only_file_mappings_without_copies_are_dropped() {
        let smaps = "\
5555a000-5555b000 r--p 00000000 08:01 12 /usr/bin/x
Anonymous:             0 kB
5555b000-5555d000 r-xp 00001000 08:01 12 /usr/bin/x
Anonymous:             0 kB
5555d000-5555e000 r--p 00003000 08:01 12 /usr/bin/x
Anonymous:             4 kB
5555e000-5555f000 rw-p 00004000 08:01 12 /usr/bin/x
Anonymous:             0 kB
7fff0000-7fff1000 r--p 00000000 00:00 0 [vvar]
Anonymous:             0 kB
";
        assert_eq!(super::droppable(smaps), [(0x5555a000, 0x1000), (0x5555b000, 0x2000)]);
    }
}
