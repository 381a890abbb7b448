//! The tree's memory and I/O, read now and then: every process's `smaps_rollup` (PSS, USS, RSS,
//! swap), `statm` (virtual size) and `io` (bytes through system calls and to storage), summed over
//! the tree. `smaps_rollup` walks the process's page tables, so it is read far less often than
//! the threads' counters (the sampler paces it: [`crate::sample::Sampler`]). Any process may read
//! these files of its user's own processes; one it may not read (a setuid program) is left out
//! and counted.

use super::procfs::ProcFile;
use crate::results::RunMemory;
use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

/// One process's memory, from its `smaps_rollup`, in KiB.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Rollup {
    /// Resident set: every page mapped and in memory, shared ones counted whole.
    pub rss_kb: u64,
    /// Proportional set: each resident page divided by the number of processes that map it.
    pub pss_kb: u64,
    /// Unique set: the pages no other process maps (`Private_Clean` + `Private_Dirty`).
    pub uss_kb: u64,
    /// Swapped out.
    pub swap_kb: u64,
}

/// Parses `smaps_rollup` (or a whole `smaps`: the fields of every mapping add up); `None` when it
/// holds no `Pss` line (a zombie's file is empty).
pub fn rollup(text: &str) -> Option<Rollup> {
    let mut r = Rollup::default();
    let mut seen = false;
    for line in text.lines() {
        let Some((key, rest)) = line.split_once(':') else { continue };
        let Some(kb) = rest.split_ascii_whitespace().next().and_then(|v| v.parse::<u64>().ok())
        else {
            continue;
        };
        match key {
            "Rss" => r.rss_kb += kb,
            "Pss" => {
                r.pss_kb += kb;
                seen = true;
            }
            "Private_Clean" | "Private_Dirty" => r.uss_kb += kb,
            "Swap" => r.swap_kb += kb,
            _ => {}
        }
    }
    seen.then_some(r)
}

/// Parses `statm`: the virtual size in KiB, from its first field in pages.
pub fn statm_vmem_kb(text: &str, page_kb: u64) -> Option<u64> {
    text.split_ascii_whitespace().next()?.parse::<u64>().ok().map(|pages| pages * page_kb)
}

/// A process's `io`: bytes through read-like and write-like calls, bytes from and to storage.
pub fn io_counts(text: &str) -> Option<[u64; 4]> {
    let get = |key: &str| {
        text.lines().find_map(|l| l.strip_prefix(key)).and_then(|v| v.trim().parse().ok())
    };
    Some([get("rchar:")?, get("wchar:")?, get("read_bytes:")?, get("write_bytes:")?])
}

/// The tree's memory and I/O at one instant.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Reading {
    /// Summed [`Rollup`] of the processes read.
    pub mem: Rollup,
    /// Summed virtual size, KiB.
    pub vmem_kb: u64,
    /// rchar, wchar, read_bytes, write_bytes of the tree so far (never decreasing).
    pub io: [u64; 4],
    /// Processes read.
    pub processes: u32,
}

/// One process's files, kept open.
struct Files {
    rollup: ProcFile,
    statm: Option<ProcFile>,
    io: Option<ProcFile>,
}

impl Files {
    /// Whether the process still has its memory: a process that exited (a zombie, whose `statm`
    /// reads all zeros, or gone) has none. Without `statm`, taken as alive.
    fn has_memory(&mut self) -> bool {
        match &mut self.statm {
            Some(f) => f
                .read()
                .is_some_and(|t| t.split_ascii_whitespace().next().is_some_and(|v| v != "0")),
            None => true,
        }
    }
}

/// Reads the tree's memory and I/O, keeping each process's files open from one reading to the next.
#[derive(Default)]
pub struct TreeMemory {
    files: HashMap<i32, Files>,
    /// Processes whose `smaps_rollup` could not be opened (another user's, a setuid program).
    pub refused: HashSet<i32>,
    /// The I/O totals of the last reading: a child reaped by its parent moves its counts into the
    /// parent's, an orphan adopted outside the tree takes them away; the tree's totals only rise.
    io: [u64; 4],
}

impl TreeMemory {
    /// Reads every process of `pids`; `None` when none could be read (all gone, or all refused).
    pub fn read(&mut self, pids: &HashSet<i32>) -> Option<Reading> {
        self.files.retain(|pid, _| pids.contains(pid));
        let page_kb = page_kb();
        let mut r = Reading::default();
        let mut io = [0u64; 4];
        let mut read: Vec<(i32, Rollup, u64)> = Vec::with_capacity(pids.len());
        for &pid in pids {
            if self.refused.contains(&pid) {
                continue;
            }
            let f = match self.files.entry(pid) {
                std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
                std::collections::hash_map::Entry::Vacant(e) => {
                    let dir = format!("/proc/{pid}");
                    match ProcFile::try_open(Path::new(&format!("{dir}/smaps_rollup"))) {
                        Ok(rollup) => {
                            let statm = ProcFile::open(Path::new(&format!("{dir}/statm")));
                            let io = ProcFile::open(Path::new(&format!("{dir}/io")));
                            e.insert(Files { rollup, statm, io })
                        }
                        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
                            self.refused.insert(pid);
                            continue;
                        }
                        Err(_) => continue,
                    }
                }
            };
            let Some(m) = f.rollup.read().and_then(rollup) else {
                // Gone, a zombie, or its PID reused: opened anew at the next reading.
                self.files.remove(&pid);
                continue;
            };
            let vmem_kb = f
                .statm
                .as_mut()
                .and_then(ProcFile::read)
                .and_then(|t| statm_vmem_kb(t, page_kb))
                .unwrap_or(0);
            read.push((pid, m, vmem_kb));
            if let Some(c) = f.io.as_mut().and_then(ProcFile::read).and_then(io_counts) {
                for (sum, v) in io.iter_mut().zip(c) {
                    *sum += v;
                }
            }
        }
        // A process that ended while the others were read leaves its pages' shares to those read
        // after it: four workers sharing 200 MiB read 40 each before one exits and 50 each after,
        // 230 in all. Without the ended one's share the sum stays within the tree's footprint. A
        // process read alone left nothing else to take its share: it counts.
        let alone = read.len() == 1;
        for (pid, m, vmem_kb) in read {
            if !alone && !self.files.get_mut(&pid).is_some_and(Files::has_memory) {
                continue;
            }
            r.mem.rss_kb += m.rss_kb;
            r.mem.pss_kb += m.pss_kb;
            r.mem.uss_kb += m.uss_kb;
            r.mem.swap_kb += m.swap_kb;
            r.vmem_kb += vmem_kb;
            r.processes += 1;
        }
        if r.processes == 0 {
            return None;
        }
        for (total, now) in self.io.iter_mut().zip(io) {
            *total = (*total).max(now);
        }
        r.io = self.io;
        Some(r)
    }
}

/// The page size in KiB.
pub fn page_kb() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if p > 0 { p as u64 / 1024 } else { 4 }
}

/// The peaks and time-weighted means of a run's readings, kept as they come. While the tree keeps
/// the processes the latest reading found, the means follow the sweeps' view of their resident
/// set between readings, scaled by what that reading found per KiB of it (a spike of 0.2 s between
/// readings 0.5 s apart is not held for 0.5 s). Once a process has started or ended since, whose
/// pages change hands with it, the latest reading holds until the next one; the last until the
/// run's end.
#[derive(Default)]
pub struct Tracker {
    first_s: Option<f64>,
    last: Option<(f64, Reading)>,
    peaks: RunMemory,
    /// The latest sweep: when, the summed resident set in KiB, and over how many processes.
    swept_last: Option<(f64, u64, usize)>,
    /// PSS and RSS per KiB of the sweeps' sum at the latest reading, and its processes.
    per_swept: Option<(f64, f64, usize)>,
    /// KiB × seconds of PSS and RSS since the first reading, up to the latest sweep or reading.
    pss_kb_s: f64,
    rss_kb_s: f64,
    /// When the integrals reach.
    until_s: f64,
}

impl Tracker {
    /// Adds a reading taken `t_s` seconds into the run.
    pub fn add(&mut self, t_s: f64, r: &Reading) {
        self.integrate(t_s);
        self.first_s.get_or_insert(t_s);
        self.until_s = self.until_s.max(t_s);
        self.last = Some((t_s, *r));
        self.per_swept =
            self.swept_last.filter(|&(_, kb, n)| kb > 0 && n == r.processes as usize).map(
                |(_, kb, n)| (r.mem.pss_kb as f64 / kb as f64, r.mem.rss_kb as f64 / kb as f64, n),
            );
        let m = &mut self.peaks;
        m.peak_pss_bytes = m.peak_pss_bytes.max(r.mem.pss_kb * 1024);
        m.peak_rss_bytes = m.peak_rss_bytes.max(r.mem.rss_kb * 1024);
        m.peak_rss_swept_bytes = m.peak_rss_swept_bytes.max(m.peak_rss_bytes);
        m.peak_uss_bytes = m.peak_uss_bytes.max(r.mem.uss_kb * 1024);
        m.peak_swap_bytes = m.peak_swap_bytes.max(r.mem.swap_kb * 1024);
        m.peak_vmem_bytes = m.peak_vmem_bytes.max(r.vmem_kb * 1024);
        m.readings += 1;
    }

    /// Adds the tree's RSS summed over its `processes` at a sweep of the threads, `t_s` seconds
    /// into the run, KiB.
    pub fn swept(&mut self, t_s: f64, rss_kb: u64, processes: usize) {
        self.integrate(t_s);
        self.peaks.peak_rss_swept_bytes = self.peaks.peak_rss_swept_bytes.max(rss_kb * 1024);
        self.swept_last = Some((t_s, rss_kb, processes));
    }

    /// PSS and RSS now, KiB: from the latest sweep while the tree keeps the latest reading's
    /// processes, else the latest reading's.
    fn level(&self) -> Option<(f64, f64)> {
        let (_, r) = self.last?;
        let from_sweep =
            self.per_swept.zip(self.swept_last).filter(|((_, _, read), (_, _, now))| read == now);
        Some(match from_sweep {
            Some(((pss, rss, _), (_, kb, _))) => (kb as f64 * pss, kb as f64 * rss),
            None => (r.mem.pss_kb as f64, r.mem.rss_kb as f64),
        })
    }

    /// Adds the level since the integrals' end up to `t_s`.
    fn integrate(&mut self, t_s: f64) {
        if let Some((pss, rss)) = self.level() {
            let dt = (t_s - self.until_s).max(0.0);
            self.pss_kb_s += dt * pss;
            self.rss_kb_s += dt * rss;
            self.until_s = self.until_s.max(t_s);
        }
    }

    /// The largest summed RSS a reading saw, KiB; `None` before the first.
    pub fn peak_rss_kb(&self) -> Option<u64> {
        self.last.map(|_| self.peaks.peak_rss_bytes / 1024)
    }

    /// The run's memory, the latest level held until `end_s`; `None` without a reading.
    pub fn finish(&self, end_s: f64, cpu_s: f64) -> Option<RunMemory> {
        let (first, (t, last)) = (self.first_s?, self.last?);
        let end = end_s.max(t);
        let span = end - first;
        let (pss, rss) = match self.level() {
            Some((pss, rss)) if span > 0.0 => {
                let tail = (end - self.until_s).max(0.0);
                ((self.pss_kb_s + tail * pss) / span, (self.rss_kb_s + tail * rss) / span)
            }
            _ => (last.mem.pss_kb as f64, last.mem.rss_kb as f64),
        };
        // PSS is never above RSS: no mean above the resident peak the sweeps saw.
        let resident = self.peaks.peak_rss_bytes.max(self.peaks.peak_rss_swept_bytes);
        Some(RunMemory {
            mean_pss_bytes: ((pss * 1024.0).round() as u64).min(resident),
            mean_rss_bytes: ((rss * 1024.0).round() as u64).min(resident),
            cpu_s,
            ..self.peaks
        })
    }
}

/// The tree's PSS at the latest reading of the run being sampled, KiB (0 between runs): for a long
/// run's progress line.
static LIVE_PSS_KB: AtomicU64 = AtomicU64::new(0);

/// The PSS of the tree being sampled now, bytes, when a reading has been taken.
pub fn live_pss_bytes() -> Option<u64> {
    let kb = LIVE_PSS_KB.load(Ordering::Relaxed);
    (kb > 0).then_some(kb * 1024)
}

/// Sets (or, with 0, clears) the PSS shown while a run goes on.
pub(crate) fn set_live_pss_kb(kb: u64) {
    LIVE_PSS_KB.store(kb, Ordering::Relaxed);
}

#[cfg(test)]
mod tests {
    use super::*;

    const ROLLUP: &str =
        "5588a7e4d000-7ffc6bdf5000 ---p 00000000 00:00 0                          [rollup]
Rss:                3968 kB
Pss:                 961 kB
Pss_Anon:            180 kB
Pss_File:            781 kB
Pss_Shmem:             0 kB
Shared_Clean:       3232 kB
Shared_Dirty:          0 kB
Private_Clean:       556 kB
Private_Dirty:       180 kB
Referenced:         3968 kB
Anonymous:           180 kB
Swap:                 12 kB
SwapPss:              12 kB
Locked:                0 kB
";

    #[test]
    fn a_rollup_gives_rss_pss_uss_and_swap_and_a_zombie_none() {
        let r = rollup(ROLLUP).unwrap();
        assert_eq!(r, Rollup { rss_kb: 3968, pss_kb: 961, uss_kb: 736, swap_kb: 12 });
        assert_eq!(rollup(""), None);
        assert_eq!(statm_vmem_kb("2000 900 500 10 0 300 0\n", 4), Some(8000));
        let io = "rchar: 10\nwchar: 20\nsyscr: 1\nsyscw: 2\nread_bytes: 4096\nwrite_bytes: 0\ncancelled_write_bytes: 0\n";
        assert_eq!(io_counts(io), Some([10, 20, 4096, 0]));
    }

    #[test]
    fn the_rollup_of_this_process_adds_up_its_smaps() {
        let own = std::process::id();
        let whole = std::fs::read_to_string(format!("/proc/{own}/smaps")).unwrap();
        let rolled = std::fs::read_to_string(format!("/proc/{own}/smaps_rollup")).unwrap();
        let (a, b) = (rollup(&whole).unwrap(), rollup(&rolled).unwrap());
        // The two files are read moments apart, while the test harness's threads allocate.
        let near = |x: u64, y: u64| x.abs_diff(y) <= x.max(y) / 10 + 256;
        assert!(near(a.pss_kb, b.pss_kb) && near(a.rss_kb, b.rss_kb), "{a:?} {b:?}");
    }

    #[test]
    fn a_process_that_ended_has_no_memory_to_count() {
        let mut live = std::process::Command::new("sleep").arg("30").spawn().unwrap();
        let mut ended = std::process::Command::new("sleep").arg("30").spawn().unwrap();
        let pids = HashSet::from([live.id() as i32, ended.id() as i32]);
        let mut tree = TreeMemory::default();
        assert_eq!(tree.read(&pids).map(|r| r.processes), Some(2));
        // Killed but not reaped: a zombie, whose files stay open and readable.
        ended.kill().unwrap();
        let zombie = ended.id() as i32;
        let stat = format!("/proc/{zombie}/stat");
        for _ in 0..200 {
            if std::fs::read_to_string(&stat).is_ok_and(|s| s.contains(") Z")) {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert!(!tree.files.get_mut(&zombie).unwrap().has_memory(), "a zombie's memory is gone");
        assert!(tree.files.get_mut(&(live.id() as i32)).unwrap().has_memory());
        assert_eq!(tree.read(&pids).map(|r| r.processes), Some(1), "only the live one is counted");
        ended.wait().unwrap();
        live.kill().unwrap();
        live.wait().unwrap();
    }

    #[test]
    fn between_readings_the_means_follow_the_sweeps_resident_set() {
        let at = |pss_kb: u64| Reading {
            mem: Rollup { pss_kb, rss_kb: pss_kb + 10, ..Rollup::default() },
            ..Reading::default()
        };
        let one = |r: Reading| Reading { processes: 1, ..r };
        let mut t = Tracker::default();
        t.swept(0.0, 110, 1);
        t.add(0.0, &one(at(100)));
        // A spike between two readings: 400 KiB resident for half a second.
        t.swept(0.5, 440, 1);
        t.swept(1.0, 110, 1);
        t.swept(2.0, 110, 1);
        t.add(2.0, &one(at(100)));
        let m = t.finish(2.0, 0.0).unwrap();
        assert_eq!(m.mean_pss_bytes, 175 * 1024, "100 for 1.5 s, 400 for 0.5 s; held, it read 100");
        assert_eq!(m.peak_rss_swept_bytes, 440 * 1024);
        // A second process from 2 s on: the last reading holds.
        t.swept(3.0, 440, 2);
        assert_eq!(
            t.finish(4.0, 0.0).unwrap().mean_pss_bytes,
            140_800,
            "(350 + 2 × 100) KiB s / 4 s"
        );
    }

    #[test]
    fn means_are_weighted_by_the_time_each_reading_held() {
        let at = |pss_kb: u64| Reading {
            mem: Rollup { pss_kb, rss_kb: 2 * pss_kb, ..Rollup::default() },
            ..Reading::default()
        };
        let mut t = Tracker::default();
        t.add(0.0, &at(100));
        t.add(1.0, &at(400));
        let m = t.finish(4.0, 0.01).unwrap();
        assert_eq!(m.peak_pss_bytes, 400 * 1024);
        assert_eq!(m.mean_pss_bytes, 325 * 1024, "100 for 1 s, 400 for 3 s");
        assert_eq!(m.mean_rss_bytes, 650 * 1024);
        assert_eq!(m.readings, 2);
        assert!(Tracker::default().finish(1.0, 0.0).is_none());
    }
}
