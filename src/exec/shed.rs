//! Keeping the spawn helper's memory below any program's, so that it can start runs with
//! `posix_spawn` (vfork: no copy of its memory map, about 0.1 ms less per run than fork) and still
//! report each run's own peak memory. At exec the kernel counts the peak resident size of the
//! memory map being replaced into the new program's `ru_maxrss`; after a vfork that map is the
//! helper's. So just before each spawn the helper drops the pages of its read-only file mappings
//! (code and constants, read back from the page cache when next used) and resets its peak to what
//! is left: its data (about 0.3 MiB) and the code it takes back while starting the run, 0.9–1.5
//! MiB in all (docs/user-guide.md, "How runs are measured").
//!
//! The code that starts a run would be faulted back while the clock runs (about 35 µs a run). So
//! after the first spawn the helper notes which of those pages are present (/proc/self/pagemap),
//! and after each drop it touches them again before the clock starts: the same pages count at
//! exec, none is faulted in the timed window.

use std::fs::File;
use std::io::Write;
use std::os::fd::AsRawFd;

/// The helper's read-only file mappings without private copies, its `clear_refs` file, and the
/// pages of those mappings that starting a run uses.
pub(crate) struct Shed {
    ranges: Vec<(usize, usize)>,
    clear_refs: File,
    /// Which pages are in memory, read into buffers allocated up front (`None` where /proc does
    /// not allow it: the pages are then faulted in while the clock runs).
    pagemap: Option<Pagemap>,
    /// Addresses of the pages a spawn brings back, learnt at the first one; empty until then.
    used: Vec<usize>,
    learnt: bool,
}

/// `/proc/self/pagemap` and room for what is read from it, so that reading it touches as little
/// code and memory as it can: what it touches is what it cannot tell from what a spawn touches.
struct Pagemap {
    file: File,
    /// One entry a page of the largest range.
    entries: Vec<u64>,
    /// Two lists of present pages, each with room for every page of every range.
    lists: [Vec<usize>; 2],
}

impl Shed {
    /// Finds what can be dropped; `None` when /proc does not allow it (the helper then forks).
    pub fn prepare() -> Option<Shed> {
        let smaps = std::fs::read_to_string("/proc/self/smaps").ok()?;
        let clear_refs = std::fs::OpenOptions::new().write(true).open("/proc/self/clear_refs").ok()?;
        let ranges = droppable(&smaps);
        let page = page_size();
        let pagemap = File::open("/proc/self/pagemap").ok().map(|file| {
            let pages = |r: &(usize, usize)| r.1 / page;
            let all = ranges.iter().map(pages).sum();
            Pagemap {
                file,
                entries: vec![0; ranges.iter().map(pages).max().unwrap_or(0)],
                lists: [Vec::with_capacity(all), Vec::with_capacity(all)],
            }
        });
        Some(Shed { ranges, clear_refs, pagemap, used: Vec::new(), learnt: false })
    }

    /// Drops the pages, takes back those a spawn uses, and resets the peak resident size to the
    /// current one.
    pub fn now(&mut self) {
        self.drop_pages();
        for &page in &self.used {
            // SAFETY: the page lies in a readable mapping of this process that stays mapped (the
            // helper never unmaps its code); reading it only faults it back in.
            unsafe { std::ptr::read_volatile(page as *const u8) };
        }
        // "5" resets the peak resident size (proc(5), /proc/pid/clear_refs).
        let _ = self.clear_refs.write_all(b"5");
    }

    /// Right after the first spawn, notes which dropped pages it brought back: those present
    /// now, less those that reading pagemap brings back by itself (measured by dropping them
    /// once more and reading again).
    pub fn learn(&mut self) {
        if std::mem::replace(&mut self.learnt, true) {
            return;
        }
        let Some(mut map) = self.pagemap.take() else { return };
        let [mut after_spawn, mut own] = std::mem::take(&mut map.lists);
        let read = map.present(&self.ranges, &mut after_spawn) && {
            self.drop_pages();
            map.present(&self.ranges, &mut own)
        };
        if read {
            self.used = after_spawn.into_iter().filter(|p| own.binary_search(p).is_err()).collect();
        }
        let page = page_size();
        for f in spawn_code() {
            let p = f / page * page;
            if self.ranges.iter().any(|&(s, l)| p >= s && p < s + l) && !self.used.contains(&p) {
                self.used.push(p);
            }
        }
    }

    fn drop_pages(&self) {
        for &(start, len) in &self.ranges {
            // SAFETY: the range is a read-only private file mapping with no page of its own
            // (checked in smaps): dropping its pages loses nothing, they are read back on use.
            unsafe { libc::madvise(start as *mut libc::c_void, len, libc::MADV_DONTNEED) };
        }
    }
}

impl Pagemap {
    /// Appends to `out` the addresses of the pages of `ranges` that are in memory, in ascending
    /// order (bit 63 of a page's entry; readable by the process itself without privileges).
    /// False when pagemap could not be read whole.
    fn present(&mut self, ranges: &[(usize, usize)], out: &mut Vec<usize>) -> bool {
        let page = page_size();
        for &(start, len) in ranges {
            let n = len / page;
            let bytes = n * 8;
            // SAFETY: `entries` holds at least `n` entries (sized for the largest range).
            let got = unsafe {
                libc::pread(self.file.as_raw_fd(), self.entries.as_mut_ptr().cast(), bytes, (start / page * 8) as i64)
            };
            if got != bytes as isize {
                return false;
            }
            out.extend((0..n).filter(|&i| self.entries[i] >> 63 == 1).map(|i| start + i * page));
        }
        true
    }
}

/// Entry points of the C library's code that a vforked child runs before its exec: their pages
/// may be among those reading pagemap also uses, so the subtraction above cannot vouch for them.
fn spawn_code() -> [usize; 9] {
    [
        libc::posix_spawn as *const () as usize,
        libc::execve as *const () as usize,
        libc::dup2 as *const () as usize,
        libc::setpgid as *const () as usize,
        libc::sigaction as *const () as usize,
        libc::sigprocmask as *const () as usize,
        libc::mmap as *const () as usize,
        libc::munmap as *const () as usize,
        libc::clone as *const () as usize,
    ]
}

fn page_size() -> usize {
    // SAFETY: sysconf only reads a system constant.
    (unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).max(4096) as usize
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
