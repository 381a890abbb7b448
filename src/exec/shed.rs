//! Keeping the ready child's memory below any program's peak (see [`super::helper`]). Exec counts
//! the peak resident size of the memory map it replaces into the new program's peak
//! (`ru_maxrss`). The ready child's map holds the helper's data, copied at the fork, and the code
//! it ran since, which the kernel maps a page-cache folio at a time (up to 64 KiB for a page
//! touched): 2 MiB by its exec, where GNU time reads 1 MiB for `true`. So once the run is set up,
//! before the clock starts, the child drops the pages of its read-only file mappings (code and
//! constants, read back from the page cache when next used) and resets its peak to what is left:
//! its data and the code that execs the run (`true`: 1.0 MiB). It costs 0.08 ms between two runs.

use std::fs::File;
use std::os::fd::AsRawFd;

/// The read-only file mappings to drop, and the child's own peak reset.
pub(crate) struct Shed {
    ranges: Vec<(usize, usize)>,
    clear_refs: File,
    /// Bytes written to `clear_refs` so far (the run's I/O counters must not count them).
    written: u64,
}

/// The helper's read-only file mappings without private copies, `(start, length)`; empty where
/// /proc does not show them. A ready child, a fork, has the same.
pub(crate) fn droppable_now() -> Vec<(usize, usize)> {
    std::fs::read_to_string("/proc/self/smaps").map(|s| droppable(&s)).unwrap_or_default()
}

impl Shed {
    /// In the ready child: opens its `/proc/self/clear_refs`; `None` where /proc does not allow it
    /// (the run's peak then counts the child's code).
    pub fn open(ranges: &[(usize, usize)]) -> Option<Shed> {
        let clear_refs =
            std::fs::OpenOptions::new().write(true).open("/proc/self/clear_refs").ok()?;
        (!ranges.is_empty()).then(|| Shed { ranges: ranges.to_vec(), clear_refs, written: 0 })
    }

    /// Drops the pages (the peak is reset apart, just before the clock: [`Shed::reset`]).
    pub fn drop_pages(&self) {
        for &(start, len) in &self.ranges {
            // SAFETY: the range is a read-only private file mapping with no page of its own
            // (checked in smaps): dropping its pages loses nothing, they are read back on use.
            unsafe { libc::madvise(start as *mut libc::c_void, len, libc::MADV_DONTNEED) };
        }
    }

    /// Resets the peak resident size to the current one: what ran since the pages were dropped
    /// is part of what the exec replaces.
    pub fn reset(&mut self) {
        // "5" resets the peak resident size (proc(5), /proc/pid/clear_refs). A raw system call:
        // what runs after the pages were dropped counts in the run's peak.
        // SAFETY: writes one byte from a constant to a descriptor this process holds.
        if unsafe { libc::syscall(libc::SYS_write, self.clear_refs.as_raw_fd(), b"5".as_ptr(), 1) }
            == 1
        {
            self.written += 1;
        }
    }

    /// Bytes written to `/proc/self/clear_refs` so far.
    pub fn written(&self) -> u64 {
        self.written
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
