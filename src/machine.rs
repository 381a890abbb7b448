//! What machine a sweep ran on: host, kernel, CPU model, logical and physical cores, memory (the
//! total, what was available as the sweep started, and the limit of its cgroup).
//!
//! Read once per sweep from `uname`, `/proc/cpuinfo`, `/proc/meminfo`, the cgroup files and the
//! scheduler's CPU affinity mask. Every field degrades to a neutral value when its source is
//! unreadable.

use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// The machine description stored in every results document.
#[derive(Clone, Debug, Default, Serialize, Deserialize, schemars::JsonSchema, PartialEq)]
pub struct Machine {
    /// Host name (`uname -n`).
    pub host: String,
    /// Operating system name (`uname -s`).
    pub os: String,
    /// Kernel release (`uname -r`).
    pub kernel: String,
    /// Machine architecture (`uname -m`).
    pub arch: String,
    /// CPU model name from `/proc/cpuinfo`.
    pub cpu_model: String,
    /// Logical CPUs online on the machine.
    pub logical_cpus: usize,
    /// Logical CPUs this process may run on (affinity mask, cgroup cpusets, SLURM allocations).
    pub allowed_cpus: usize,
    /// Physical cores (distinct package/core pairs); equals `logical_cpus` when unknown.
    pub physical_cores: usize,
    /// Total memory in bytes.
    pub memory_bytes: u64,
    /// `MemAvailable` of `/proc/meminfo` as the sweep started, bytes: the kernel's estimate of
    /// what new work could use without swapping, page cache it would reclaim included (0 when
    /// unknown, as in results recorded before it was kept).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub memory_available_bytes: u64,
    /// The memory limit of the cgroup scalescope ran in (cgroup v2 `memory.max`, v1
    /// `memory.limit_in_bytes`, the tightest along its path), bytes: what a SLURM job or a
    /// container may use before the kernel kills it; absent without one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_limit_bytes: Option<u64>,
}

fn is_zero(x: &u64) -> bool {
    *x == 0
}

impl Machine {
    /// Describes the machine this process runs on.
    pub fn current() -> Machine {
        let (os, host, kernel, arch) = uname();
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let logical_cpus = online_cpus();
        let physical_cores = physical_cores(&cpuinfo).unwrap_or(logical_cpus);
        Machine {
            host,
            os,
            kernel,
            arch,
            cpu_model: cpu_model(&cpuinfo),
            logical_cpus,
            allowed_cpus: allowed_cpus(),
            physical_cores,
            memory_bytes: meminfo_bytes("MemTotal"),
            memory_available_bytes: meminfo_bytes("MemAvailable"),
            memory_limit_bytes: cgroup_memory_limit(&|p| std::fs::read_to_string(p).ok()),
        }
    }

    /// The memory a job may use on this machine, and what that figure is: the cgroup's limit
    /// when it is the tighter, else `MemAvailable` as the sweep started, else the total; `None`
    /// when none is known.
    pub fn usable_memory(&self) -> Option<(u64, &'static str)> {
        let free =
            (self.memory_available_bytes > 0)
                .then_some((
                    self.memory_available_bytes,
                    "available (MemAvailable as the sweep started)",
                ))
                .or((self.memory_bytes > 0)
                    .then_some((self.memory_bytes, "in the machine (MemTotal)")));
        match (self.memory_limit_bytes, free) {
            (Some(l), Some((f, _))) if l < f => {
                Some((l, "allowed by the job's cgroup (memory.max)"))
            }
            (Some(l), None) => Some((l, "allowed by the job's cgroup (memory.max)")),
            (_, free) => free,
        }
    }
}

/// The tightest memory limit along this process's cgroup path, v2 (`memory.max`) or v1
/// (`memory.limit_in_bytes` of the memory controller), with `read` giving a file's text; `None`
/// when there is no limit or the files cannot be read. A limit set on a parent (a SLURM job's
/// cgroup above its steps and tasks) binds its children, so the path is walked up to its root.
pub fn cgroup_memory_limit(read: &dyn Fn(&str) -> Option<String>) -> Option<u64> {
    let cgroups = read("/proc/self/cgroup")?;
    let mountinfo = read("/proc/self/mountinfo").unwrap_or_default();
    let mut best: Option<u64> = None;
    for line in cgroups.lines() {
        let mut f = line.splitn(3, ':');
        let (Some(_), Some(controllers), Some(path)) = (f.next(), f.next(), f.next()) else {
            continue;
        };
        let (v2, file) = match controllers {
            "" => (true, "memory.max"),
            c if c.split(',').any(|x| x == "memory") => (false, "memory.limit_in_bytes"),
            _ => continue,
        };
        let Some((root, mount)) = cgroup_mount(&mountinfo, v2) else { continue };
        let Some(rel) = path.strip_prefix(root.trim_end_matches('/')) else { continue };
        let mut dir = rel.trim_end_matches('/').to_string();
        loop {
            if let Some(limit) = read(&format!("{mount}{dir}/{file}")).and_then(|t| limit_value(&t))
            {
                best = Some(best.map_or(limit, |b| b.min(limit)));
            }
            match dir.rfind('/') {
                Some(i) => dir.truncate(i),
                None => break,
            }
        }
    }
    best
}

/// A limit file's value in bytes; `None` for `max` or v1's "no limit" (a number near 2⁶³).
fn limit_value(text: &str) -> Option<u64> {
    let v = text.trim().parse::<u64>().ok()?;
    (v < 1 << 60).then_some(v)
}

/// The root and mount point of the cgroup v2 hierarchy, or of v1's memory controller.
fn cgroup_mount(mountinfo: &str, v2: bool) -> Option<(String, String)> {
    mountinfo.lines().find_map(|l| {
        let (left, right) = l.split_once(" - ")?;
        let mut fs = right.split_ascii_whitespace();
        let (fstype, options) = (fs.next()?, fs.nth(1).unwrap_or_default());
        let ours = if v2 {
            fstype == "cgroup2"
        } else {
            fstype == "cgroup" && options.split(',').any(|o| o == "memory")
        };
        let f: Vec<&str> = left.split_ascii_whitespace().collect();
        (ours && f.len() >= 5).then(|| (f[3].to_string(), f[4].to_string()))
    })
}

/// The number of CPUs this process may use, as the `nproc` command reports it.
pub fn allowed_cpus() -> usize {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: a zeroed cpu_set_t is a valid empty set; the call fills it.
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        let rc =
            unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
        if rc == 0 {
            let n = unsafe { libc::CPU_COUNT(&set) };
            if n > 0 {
                return n as usize;
            }
        }
    }
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// The numbers of the CPUs this process may use (its affinity mask), in order; empty where the
/// mask cannot be read.
pub fn allowed_cpu_ids() -> Vec<usize> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: a zeroed cpu_set_t is a valid empty set; the call fills it.
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        let rc =
            unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
        if rc == 0 {
            // SAFETY: CPU_ISSET reads the set filled above, within its size.
            return (0..libc::CPU_SETSIZE as usize)
                .filter(|&c| unsafe { libc::CPU_ISSET(c, &set) })
                .collect();
        }
    }
    Vec::new()
}

fn online_cpus() -> usize {
    // SAFETY: sysconf has no preconditions.
    let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    if n > 0 { n as usize } else { allowed_cpus() }
}

/// This machine's host name (the node name of `uname`).
pub fn host_name() -> String {
    uname().1
}

fn uname() -> (String, String, String, String) {
    // SAFETY: utsname is plain data; uname fills it with NUL-terminated strings.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    if unsafe { libc::uname(&mut u) } != 0 {
        return Default::default();
    }
    let field = |f: &[libc::c_char]| {
        let bytes: Vec<u8> = f.iter().take_while(|&&c| c != 0).map(|&c| c as u8).collect();
        String::from_utf8_lossy(&bytes).into_owned()
    };
    (field(&u.sysname), field(&u.nodename), field(&u.release), field(&u.machine))
}

fn cpuinfo_value<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    let (k, v) = line.split_once(':')?;
    (k.trim() == key).then(|| v.trim())
}

fn cpu_model(cpuinfo: &str) -> String {
    for key in ["model name", "Model", "cpu model", "Processor"] {
        if let Some(v) = cpuinfo.lines().find_map(|l| cpuinfo_value(l, key)) {
            return v.to_string();
        }
    }
    String::new()
}

/// Counts distinct (physical id, core id) pairs; `None` when cpuinfo lacks them (e.g. arm64).
fn physical_cores(cpuinfo: &str) -> Option<usize> {
    let mut cores = BTreeSet::new();
    for block in cpuinfo.split("\n\n") {
        let get = |key| block.lines().find_map(|l| cpuinfo_value(l, key));
        if let (Some(pkg), Some(core)) = (get("physical id"), get("core id")) {
            cores.insert((pkg.to_string(), core.to_string()));
        }
    }
    (!cores.is_empty()).then_some(cores.len())
}

/// A `/proc/meminfo` figure in bytes (0 when unreadable).
fn meminfo_bytes(key: &str) -> u64 {
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    meminfo
        .lines()
        .find_map(|l| cpuinfo_value(l, key))
        .and_then(|v| v.trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kib| kib * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_physical_cores_of_a_hyperthreaded_cpuinfo() {
        let info = "processor\t: 0\nphysical id\t: 0\ncore id\t: 0\n\nprocessor\t: 1\nphysical id\t: 0\ncore id\t: 0\n\nprocessor\t: 2\nphysical id\t: 0\ncore id\t: 1\n";
        assert_eq!(physical_cores(info), Some(2));
        assert_eq!(physical_cores("processor : 0\n"), None);
    }

    #[test]
    fn the_tightest_cgroup_limit_along_the_path_binds_and_max_is_none() {
        let files = |v1: bool| -> std::collections::HashMap<String, String> {
            let mut m = std::collections::HashMap::new();
            if v1 {
                m.insert(
                    "/proc/self/cgroup".into(),
                    "5:cpu:/\n4:memory:/slurm/uid_1/job_7/step_0\n".into(),
                );
                m.insert(
                    "/proc/self/mountinfo".into(),
                    "35 31 0:32 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n".into(),
                );
                m.insert(
                    "/sys/fs/cgroup/memory/slurm/uid_1/job_7/step_0/memory.limit_in_bytes".into(),
                    "9223372036854771712\n".into(),
                );
                m.insert(
                    "/sys/fs/cgroup/memory/slurm/uid_1/job_7/memory.limit_in_bytes".into(),
                    "4294967296\n".into(),
                );
            } else {
                m.insert("/proc/self/cgroup".into(), "0::/system.slice/job_7/step_0/user\n".into());
                m.insert(
                    "/proc/self/mountinfo".into(),
                    "41 23 0:38 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n".into(),
                );
                m.insert(
                    "/sys/fs/cgroup/system.slice/job_7/step_0/user/memory.max".into(),
                    "max\n".into(),
                );
                m.insert(
                    "/sys/fs/cgroup/system.slice/job_7/step_0/memory.max".into(),
                    "8589934592\n".into(),
                );
                m.insert(
                    "/sys/fs/cgroup/system.slice/job_7/memory.max".into(),
                    "17179869184\n".into(),
                );
            }
            m
        };
        for (v1, want) in [(true, Some(4 << 30)), (false, Some(8 << 30))] {
            let f = files(v1);
            assert_eq!(cgroup_memory_limit(&|p| f.get(p).cloned()), want, "v1: {v1}");
        }
        let f: std::collections::HashMap<String, String> = [
            ("/proc/self/cgroup".to_string(), "0::/\n".to_string()),
            (
                "/proc/self/mountinfo".to_string(),
                "41 23 0:38 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n".to_string(),
            ),
            ("/sys/fs/cgroup/memory.max".to_string(), "max\n".to_string()),
        ]
        .into();
        assert_eq!(cgroup_memory_limit(&|p| f.get(p).cloned()), None);
        let m = Machine {
            memory_bytes: 16 << 30,
            memory_available_bytes: 12 << 30,
            ..Machine::default()
        };
        assert_eq!(m.usable_memory().map(|u| u.0), Some(12 << 30));
        let m = Machine { memory_limit_bytes: Some(4 << 30), ..m };
        assert_eq!(m.usable_memory(), Some((4 << 30, "allowed by the job's cgroup (memory.max)")));
    }

    #[test]
    fn describes_this_machine() {
        let m = Machine::current();
        assert!(m.logical_cpus >= 1 && m.allowed_cpus >= 1);
        assert!(m.allowed_cpus <= m.logical_cpus);
        assert!(m.memory_bytes > 0);
        assert!(!m.kernel.is_empty());
    }
}
