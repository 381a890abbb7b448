//! Where on-CPU time goes, where the kernel allows it: a software task-clock event per thread
//! (`perf_event_open`, user space only, so `perf_event_paranoid` ≤ 2 suffices) samples the
//! instruction pointer every 4 ms of CPU time into a small ring buffer that the sampler
//! drains. Never required: when the kernel refuses, the run's limits say why.

use std::sync::atomic::{AtomicU64, Ordering};

/// CPU time between samples, in nanoseconds.
const PERIOD_NS: u64 = 4_000_000;
/// Data pages of each ring buffer (a power of two).
const DATA_PAGES: usize = 8;
/// Threads given an event at most.
pub const MAX_THREADS: usize = 16;

/// The first 64 bytes of `struct perf_event_attr` (PERF_ATTR_SIZE_VER0).
#[repr(C)]
#[derive(Default)]
struct Attr {
    kind: u32,
    size: u32,
    config: u64,
    sample_period: u64,
    sample_type: u64,
    read_format: u64,
    flags: u64,
    wakeup_events: u32,
    bp_type: u32,
    bp_addr: u64,
}

const PERF_TYPE_SOFTWARE: u32 = 1;
const PERF_COUNT_SW_TASK_CLOCK: u64 = 1;
const PERF_SAMPLE_IP: u64 = 1;
const PERF_SAMPLE_TID: u64 = 2;
const FLAG_EXCLUDE_KERNEL: u64 = 1 << 5;
const FLAG_EXCLUDE_HV: u64 = 1 << 6;
const PERF_FLAG_FD_CLOEXEC: libc::c_ulong = 8;
const PERF_RECORD_SAMPLE: u32 = 9;

/// One thread's event and ring buffer.
pub struct CpuSampler {
    fd: i32,
    base: *mut u8,
    len: usize,
    tail: u64,
}

// SAFETY: the mapping is owned by this value and only touched through &mut self.
unsafe impl Send for CpuSampler {}

impl CpuSampler {
    /// Opens an event on thread `tid`; the error says why the kernel refused.
    pub fn open(tid: i32) -> Result<CpuSampler, std::io::Error> {
        let attr = Attr {
            kind: PERF_TYPE_SOFTWARE,
            size: std::mem::size_of::<Attr>() as u32,
            config: PERF_COUNT_SW_TASK_CLOCK,
            sample_period: PERIOD_NS,
            sample_type: PERF_SAMPLE_IP | PERF_SAMPLE_TID,
            flags: FLAG_EXCLUDE_KERNEL | FLAG_EXCLUDE_HV,
            ..Default::default()
        };
        // SAFETY: attr is a valid perf_event_attr of the size it declares.
        let fd = unsafe {
            libc::syscall(
                libc::SYS_perf_event_open,
                &attr as *const Attr,
                tid,
                -1,
                -1,
                PERF_FLAG_FD_CLOEXEC,
            )
        };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let fd = fd as i32;
        let page = 4096usize;
        let len = page * (1 + DATA_PAGES);
        // SAFETY: maps the event's ring buffer as the perf ABI prescribes; unmapped in Drop.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            let e = std::io::Error::last_os_error();
            unsafe { libc::close(fd) };
            return Err(e);
        }
        Ok(CpuSampler { fd, base: base as *mut u8, len, tail: 0 })
    }

    fn head(&self) -> &AtomicU64 {
        // SAFETY: data_head is a u64 at offset 1024 of the control page, written by the kernel.
        unsafe { &*(self.base.add(1024) as *const AtomicU64) }
    }

    fn tail_slot(&self) -> &AtomicU64 {
        // SAFETY: data_tail is a u64 at offset 1032 of the control page, written by us.
        unsafe { &*(self.base.add(1032) as *const AtomicU64) }
    }

    /// Hands every new sample's (pid, instruction pointer) to `f`.
    pub fn drain(&mut self, mut f: impl FnMut(i32, u64)) {
        let head = self.head().load(Ordering::Acquire);
        let size = (DATA_PAGES * 4096) as u64;
        // SAFETY: the data area follows the control page and is `size` bytes long.
        let data = unsafe { std::slice::from_raw_parts(self.base.add(4096), size as usize) };
        let byte = |off: u64| data[(off % size) as usize];
        let read = |off: u64, n: usize| -> u64 {
            (0..n).fold(0u64, |acc, i| acc | (byte(off + i as u64) as u64) << (8 * i))
        };
        while self.tail + 8 <= head {
            let kind = read(self.tail, 4) as u32;
            let rec_size = read(self.tail + 6, 2);
            if rec_size < 8 || self.tail + rec_size > head {
                break;
            }
            if kind == PERF_RECORD_SAMPLE && rec_size >= 24 {
                let ip = read(self.tail + 8, 8);
                let pid = read(self.tail + 16, 4) as i32;
                f(pid, ip);
            }
            self.tail += rec_size;
        }
        self.tail_slot().store(self.tail, Ordering::Release);
    }
}

impl Drop for CpuSampler {
    fn drop(&mut self) {
        // SAFETY: base/len come from our mmap; fd from perf_event_open.
        unsafe {
            libc::munmap(self.base as *mut libc::c_void, self.len);
            libc::close(self.fd);
        }
    }
}

/// Why sampling on-CPU code is not possible here, for the run's limits.
pub fn refusal(e: &std::io::Error) -> String {
    let paranoid =
        std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid").unwrap_or_default();
    format!(
        "on-CPU code sampling unavailable (perf_event_open: {e}; kernel.perf_event_paranoid = {}): no hot functions",
        paranoid.trim()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_this_thread_when_the_kernel_allows() {
        // SAFETY: gettid has no preconditions.
        let tid = unsafe { libc::syscall(libc::SYS_gettid) } as i32;
        let mut s = match CpuSampler::open(tid) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("{}", refusal(&e));
                return;
            }
        };
        let mut x = 1u64;
        for _ in 0..200_000_000u64 {
            x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
        }
        let mut n = 0;
        s.drain(|pid, ip| {
            assert_eq!(pid, std::process::id() as i32);
            assert!(ip > 0);
            n += 1;
        });
        assert!(n > 5, "{n} samples");
    }
}
