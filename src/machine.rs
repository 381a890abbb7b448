//! What machine a sweep ran on: host, kernel, CPU model, logical and physical cores, memory.
//!
//! Read once per sweep from `uname`, `/proc/cpuinfo`, `/proc/meminfo` and the scheduler's CPU
//! affinity mask. Every field degrades to a neutral value when its source is unreadable.

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
            memory_bytes: memory_bytes(),
        }
    }
}

/// The number of CPUs this process may use, as the `nproc` command reports it.
pub fn allowed_cpus() -> usize {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: a zeroed cpu_set_t is a valid empty set; the call fills it.
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        let rc = unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
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
        let rc = unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
        if rc == 0 {
            // SAFETY: CPU_ISSET reads the set filled above, within its size.
            return (0..libc::CPU_SETSIZE as usize).filter(|&c| unsafe { libc::CPU_ISSET(c, &set) }).collect();
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

fn memory_bytes() -> u64 {
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    meminfo
        .lines()
        .find_map(|l| cpuinfo_value(l, "MemTotal"))
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
    fn describes_this_machine() {
        let m = Machine::current();
        assert!(m.logical_cpus >= 1 && m.allowed_cpus >= 1);
        assert!(m.allowed_cpus <= m.logical_cpus);
        assert!(m.memory_bytes > 0);
        assert!(!m.kernel.is_empty());
    }
}
