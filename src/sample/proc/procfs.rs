//! Our own /proc parsing: files are opened once and re-read with `pread` at offset 0 (no reopen
//! per sample), and `/proc/<tid>/syscall` is read in all three forms (`running`, `nr args… sp pc`,
//! `-1 sp pc`). A thread vanishing between listing and reading is normal: callers get `None`.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;

/// A /proc file kept open and re-read from the start.
#[derive(Debug)]
pub struct ProcFile {
    file: File,
    buf: Vec<u8>,
}

impl ProcFile {
    /// Opens a /proc file; `None` when it is gone or not readable.
    pub fn open(path: &Path) -> Option<ProcFile> {
        ProcFile::try_open(path).ok()
    }

    /// Opens a /proc file, telling a vanished thread (NotFound, ESRCH) from a refusal (PermissionDenied).
    pub fn try_open(path: &Path) -> std::io::Result<ProcFile> {
        File::open(path).map(|file| ProcFile { file, buf: vec![0; 512] })
    }

    /// Reads the whole file anew; `None` when the thread is gone.
    pub fn read(&mut self) -> Option<&str> {
        let mut len = 0;
        loop {
            if len == self.buf.len() {
                self.buf.resize(self.buf.len() * 2, 0);
            }
            match self.file.read_at(&mut self.buf[len..], len as u64) {
                Ok(0) => break,
                Ok(n) => len += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => return None,
            }
        }
        std::str::from_utf8(&self.buf[..len]).ok()
    }
}

/// `/proc/<tid>/schedstat`: time on a CPU and time waiting for one, since the thread started.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Schedstat {
    /// Nanoseconds on a CPU.
    pub on_cpu_ns: u64,
    /// Nanoseconds runnable but waiting for a CPU.
    pub runq_ns: u64,
}

/// Parses schedstat (`on_cpu_ns runq_ns timeslices`).
pub fn schedstat(text: &str) -> Option<Schedstat> {
    let mut it = text.split_ascii_whitespace().map(|v| v.parse::<u64>().ok());
    Some(Schedstat { on_cpu_ns: it.next()??, runq_ns: it.next()?? })
}

/// The parts of `/proc/<tid>/stat` the sampler uses.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Stat {
    /// Thread name (comm).
    pub comm: String,
    /// State letter: R running or runnable, S sleeping, D uninterruptible, Z zombie, T stopped…
    pub state: char,
    /// Parent process.
    pub ppid: i32,
    /// User CPU time in clock ticks.
    pub utime: u64,
    /// System CPU time in clock ticks.
    pub stime: u64,
    /// Start time in clock ticks since boot.
    pub starttime: u64,
    /// The process's resident set, in pages (the same for all its threads).
    pub rss_pages: u64,
}

/// Parses stat; the name may hold spaces and parentheses, so fields are counted after the last `)`.
pub fn stat(text: &str) -> Option<Stat> {
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let comm = text.get(open + 1..close)?.to_string();
    let f: Vec<&str> = text.get(close + 1..)?.split_ascii_whitespace().collect();
    // f[0] is field 3 (state); field k is f[k - 3].
    let num = |k: usize| f.get(k - 3).and_then(|v| v.parse::<u64>().ok());
    Some(Stat {
        comm,
        state: f.first()?.chars().next()?,
        ppid: f.get(1)?.parse().ok()?,
        utime: num(14)?,
        stime: num(15)?,
        starttime: num(22)?,
        rss_pages: num(24).unwrap_or(0),
    })
}

/// What `/proc/<tid>/syscall` says.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Syscall {
    /// The thread is on a CPU.
    Running,
    /// Blocked in system call `nr` with these arguments.
    In {
        /// System call number.
        nr: i64,
        /// Its six arguments.
        args: [u64; 6],
    },
    /// Blocked outside a system call (a page fault, for instance): `-1 sp pc`.
    NotInSyscall,
}

/// Parses the syscall file in its three forms.
pub fn syscall(text: &str) -> Option<Syscall> {
    let t = text.trim();
    if t == "running" {
        return Some(Syscall::Running);
    }
    let mut it = t.split_ascii_whitespace();
    let nr: i64 = it.next()?.parse().ok()?;
    if nr < 0 {
        return Some(Syscall::NotInSyscall);
    }
    let mut args = [0u64; 6];
    for a in &mut args {
        *a = u64::from_str_radix(it.next()?.trim_start_matches("0x"), 16).ok()?;
    }
    Some(Syscall::In { nr, args })
}

/// The user stack pointer and program counter that end `/proc/<tid>/syscall` for a blocked
/// thread (`nr args… sp pc` or `-1 sp pc`); `None` for `running` or an unreadable line.
pub fn user_sp_pc(text: &str) -> Option<(u64, u64)> {
    let mut it = text.split_ascii_whitespace().rev();
    let pc = it.next()?;
    let sp = it.next()?;
    let hex = |v: &str| u64::from_str_radix(v.strip_prefix("0x")?, 16).ok();
    Some((hex(sp)?, hex(pc)?))
}

/// Voluntary and involuntary context switches from `/proc/<tid>/status`.
pub fn switches(text: &str) -> Option<(u64, u64)> {
    let get = |key: &str| {
        text.lines().find_map(|l| l.strip_prefix(key)).and_then(|v| v.trim().parse().ok())
    };
    Some((get("voluntary_ctxt_switches:")?, get("nonvoluntary_ctxt_switches:")?))
}

/// Storage bytes read and written from `/proc/<tid>/io`.
pub fn io(text: &str) -> Option<(u64, u64)> {
    let get = |key: &str| {
        text.lines().find_map(|l| l.strip_prefix(key)).and_then(|v| v.trim().parse().ok())
    };
    Some((get("read_bytes:")?, get("write_bytes:")?))
}

/// Clock ticks per second (`sysconf(_SC_CLK_TCK)`).
pub fn ticks_per_second() -> f64 {
    // SAFETY: sysconf has no preconditions.
    let t = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if t > 0 { t as f64 } else { 100.0 }
}

/// The machine's CPU time so far, in clock ticks, from the first line of `/proc/stat`: busy (user,
/// nice, system, irq, softirq) and stolen (steal: time a virtual CPU wanted to run and the
/// hypervisor ran something else). Only the first line is read.
pub fn cpu_ticks() -> Option<(u64, u64)> {
    cpu_ticks_of(&File::open("/proc/stat").ok()?)
}

/// As [`cpu_ticks`], from `/proc/stat` opened earlier (an open right after a process exits costs
/// 30-50 µs on a VM, a read of an open file a few).
pub fn cpu_ticks_of(stat: &File) -> Option<(u64, u64)> {
    let mut buf = [0u8; 256];
    let n = stat.read_at(&mut buf, 0).ok()?;
    cpu_line(std::str::from_utf8(&buf[..n]).ok()?)
}

/// CPUs whose clock frequency a run's report samples: a few of those the job may use, enough to
/// see a governor or a thermal limit at work without opening a file per CPU of a large node.
const FREQUENCY_CPUS: usize = 8;

/// The current-frequency files (`cpufreq/scaling_cur_freq`) of up to [`FREQUENCY_CPUS`] of the
/// CPUs this process may use, opened once; empty where the kernel shows no frequency (most VMs).
pub fn frequency_files() -> Vec<File> {
    crate::machine::allowed_cpu_ids()
        .into_iter()
        .take(FREQUENCY_CPUS)
        .filter_map(|c| {
            File::open(format!("/sys/devices/system/cpu/cpu{c}/cpufreq/scaling_cur_freq")).ok()
        })
        .collect()
}

/// The mean of the frequencies the files read now, in MHz (they hold kHz).
pub fn mean_mhz(files: &[File]) -> Option<f64> {
    let khz: Vec<f64> = files
        .iter()
        .filter_map(|f| {
            let mut buf = [0u8; 32];
            let n = f.read_at(&mut buf, 0).ok()?;
            std::str::from_utf8(&buf[..n]).ok()?.trim().parse::<f64>().ok()
        })
        .collect();
    (!khz.is_empty()).then(|| khz.iter().sum::<f64>() / khz.len() as f64 / 1000.0)
}

/// `(busy, steal)` from the aggregate `cpu` line at the start of `/proc/stat`.
fn cpu_line(text: &str) -> Option<(u64, u64)> {
    let mut f = text.lines().next()?.split_ascii_whitespace();
    if f.next()? != "cpu" {
        return None;
    }
    let v: Vec<u64> = f.take(8).map(|x| x.parse().ok()).collect::<Option<_>>()?;
    let [user, nice, system, _idle, _iowait, irq, softirq, steal] = v[..] else { return None };
    Some((user + nice + system + irq + softirq, steal))
}

/// Seconds since boot on the clock /proc start times use.
pub fn boot_seconds() -> f64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: ts is a valid out-pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_BOOTTIME, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

/// CPU time of this whole process so far, every thread (`getrusage(RUSAGE_SELF)`).
pub fn process_cpu_s() -> f64 {
    // SAFETY: rusage is plain data filled by getrusage.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: ru is a valid out-pointer.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    secs(ru.ru_utime) + secs(ru.ru_stime)
}

/// CPU time of the calling thread: what the sampler and the tracer charge themselves.
pub fn thread_cpu_s() -> f64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: ts is a valid out-pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_machines_busy_and_stolen_ticks_come_from_the_cpu_line() {
        let stat = "cpu  262458 158 14609 620231 1036 7 323 4033 0 0\ncpu0 1 2 3 4 5 6 7 8 0 0\n";
        assert_eq!(cpu_line(stat), Some((262458 + 158 + 14609 + 7 + 323, 4033)));
        // Kernels before 2.6.11 had no steal column; a cut line is not read.
        assert_eq!(cpu_line("cpu  1 2 3 4 5 6 7\n"), None);
        assert_eq!(cpu_line("intr 1 2 3"), None);
        assert!(cpu_ticks().is_some(), "this machine has /proc/stat");
    }

    #[test]
    fn parses_the_three_syscall_forms() {
        assert_eq!(syscall("running\n"), Some(Syscall::Running));
        assert_eq!(syscall("-1 0x7ffd1 0x55aa\n"), Some(Syscall::NotInSyscall));
        let s = syscall("202 0x55d0c0a0 0x80 0x2 0x0 0x0 0x0 0x7ffd 0x7f12\n").unwrap();
        assert_eq!(s, Syscall::In { nr: 202, args: [0x55d0c0a0, 0x80, 2, 0, 0, 0] });
        assert_eq!(syscall("garbage"), None);
        assert_eq!(
            user_sp_pc("202 0x55d0c0a0 0x80 0x2 0x0 0x0 0x0 0x7ffd 0x7f12\n"),
            Some((0x7ffd, 0x7f12))
        );
        assert_eq!(user_sp_pc("-1 0x7ffd1 0x55aa\n"), Some((0x7ffd1, 0x55aa)));
        assert_eq!(user_sp_pc("running\n"), None);
        assert_eq!(syscall(""), None);
    }

    #[test]
    fn parses_stat_with_a_hostile_name() {
        let s = stat("42 (a) b (c)) S 7 42 1 0 -1 4194304 1 0 0 0 12 34 0 0 20 0 3 0 5555 1 1")
            .unwrap();
        assert_eq!(
            (s.comm.as_str(), s.state, s.ppid, s.utime, s.stime, s.starttime),
            ("a) b (c)", 'S', 7, 12, 34, 5555)
        );
        assert_eq!(stat("42 (x"), None);
    }

    #[test]
    fn parses_schedstat_status_and_io() {
        assert_eq!(
            schedstat("882321 88011 1\n"),
            Some(Schedstat { on_cpu_ns: 882321, runq_ns: 88011 })
        );
        assert_eq!(
            switches("voluntary_ctxt_switches:\t5\nnonvoluntary_ctxt_switches:\t7\n"),
            Some((5, 7))
        );
        assert_eq!(io("rchar: 1\nread_bytes: 4096\nwrite_bytes: 0\n"), Some((4096, 0)));
    }

    #[test]
    fn rereads_a_kept_file() {
        let mut f = ProcFile::open(Path::new("/proc/self/schedstat")).unwrap();
        let a = schedstat(f.read().unwrap()).unwrap();
        for _ in 0..200_000 {
            std::hint::black_box(0u64);
        }
        let b = schedstat(f.read().unwrap()).unwrap();
        assert!(b.on_cpu_ns >= a.on_cpu_ns);
    }
}
