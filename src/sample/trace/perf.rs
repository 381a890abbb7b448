//! The perf_event ABI the tracer needs, by hand: the attribute struct up to `clockid`
//! (PERF_ATTR_SIZE_VER3), opening an event, and a ring buffer whose records are copied out whole
//! (wrapped records included) and handed on as bytes. Nothing here interprets a record.

use std::sync::atomic::{AtomicU64, Ordering};

/// `struct perf_event_attr` up to `clockid` (PERF_ATTR_SIZE_VER3, 96 bytes).
#[repr(C)]
#[derive(Clone, Copy, Default, Debug)]
pub struct Attr {
    /// PERF_TYPE_*.
    pub kind: u32,
    /// Size of this struct.
    pub size: u32,
    /// Event within the type.
    pub config: u64,
    /// Event count between samples (nanoseconds for the clock events).
    pub sample_period: u64,
    /// PERF_SAMPLE_* bits.
    pub sample_type: u64,
    /// PERF_FORMAT_* bits.
    pub read_format: u64,
    /// The bitfield: see the `FLAG_*` constants.
    pub flags: u64,
    /// Wake up after this many samples, or (with `FLAG_WATERMARK`) once this many bytes wait.
    pub wakeup_events: u32,
    /// Breakpoint type (unused).
    pub bp_type: u32,
    /// config1 (unused).
    pub config1: u64,
    /// config2 (unused).
    pub config2: u64,
    /// Branch sampling (unused).
    pub branch_sample_type: u64,
    /// User registers to dump with each sample.
    pub sample_regs_user: u64,
    /// Bytes of user stack to dump with each sample.
    pub sample_stack_user: u32,
    /// Clock of the timestamps when `FLAG_USE_CLOCKID` is set.
    pub clockid: i32,
}

/// Software events.
pub const TYPE_SOFTWARE: u32 = 1;
/// The task's CPU clock.
pub const SW_TASK_CLOCK: u64 = 1;
/// The software event that counts nothing: its side records (switches) are what it is for.
pub const SW_DUMMY: u64 = 9;
/// Sample field: pid and tid.
pub const SAMPLE_TID: u64 = 1 << 1;
/// Sample field: timestamp.
pub const SAMPLE_TIME: u64 = 1 << 2;
/// Sample field: user registers.
pub const SAMPLE_REGS_USER: u64 = 1 << 12;
/// Sample field: a copy of the user stack.
pub const SAMPLE_STACK_USER: u64 = 1 << 13;
/// Flag: inherited by threads and processes created later.
pub const FLAG_INHERIT: u64 = 1 << 1;
/// Flag: count user space only.
pub const FLAG_EXCLUDE_KERNEL: u64 = 1 << 5;
/// Flag: no hypervisor.
pub const FLAG_EXCLUDE_HV: u64 = 1 << 6;
/// Flag: records for executable mappings.
pub const FLAG_MMAP: u64 = 1 << 8;
/// Flag: records for comm changes (and exec).
pub const FLAG_COMM: u64 = 1 << 9;
/// Flag: fork and exit records.
pub const FLAG_TASK: u64 = 1 << 13;
/// Flag: `wakeup_events` is a watermark in bytes.
pub const FLAG_WATERMARK: u64 = 1 << 14;
/// Flag: the sample_id trailer on every record.
pub const FLAG_SAMPLE_ID_ALL: u64 = 1 << 18;
/// Flag: MMAP2 records (with inode and protection).
pub const FLAG_MMAP2: u64 = 1 << 23;
/// Flag: exec marked on comm records.
pub const FLAG_COMM_EXEC: u64 = 1 << 24;
/// Flag: timestamps on `clockid`.
pub const FLAG_USE_CLOCKID: u64 = 1 << 25;
/// Flag: SWITCH records when the task leaves or regains a CPU.
pub const FLAG_CONTEXT_SWITCH: u64 = 1 << 26;

const PERF_FLAG_FD_CLOEXEC: libc::c_ulong = 8;
const IOC_SET_OUTPUT: libc::c_ulong = 0x2405;
const PAGE: usize = 4096;

/// An open event: its file descriptor, closed on drop.
pub struct Event {
    fd: i32,
}

impl Event {
    /// Opens `attr` on task `tid` on CPU `cpu`; the error is the kernel's refusal.
    pub fn open(attr: &Attr, tid: i32, cpu: i32) -> std::io::Result<Event> {
        let mut a = *attr;
        a.size = std::mem::size_of::<Attr>() as u32;
        // SAFETY: `a` is a valid perf_event_attr of the size it declares, alive for the call.
        let fd = unsafe {
            libc::syscall(
                libc::SYS_perf_event_open,
                &a as *const Attr,
                tid,
                cpu,
                -1,
                PERF_FLAG_FD_CLOEXEC,
            )
        };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(Event { fd: fd as i32 })
    }

    /// Sends this event's records into the buffer of the ring whose event is `ring` ([`Ring::fd`],
    /// same CPU; the ring must outlive this event).
    pub fn redirect(&self, ring: i32) -> std::io::Result<()> {
        // SAFETY: plain ioctl on our perf event fd; the kernel checks that `ring` is one too.
        let r = unsafe { libc::ioctl(self.fd, IOC_SET_OUTPUT as _, ring) };
        if r < 0 { Err(std::io::Error::last_os_error()) } else { Ok(()) }
    }
}

impl Drop for Event {
    fn drop(&mut self) {
        // SAFETY: our fd from perf_event_open, closed once.
        unsafe { libc::close(self.fd) };
    }
}

/// An event with its ring buffer mapped.
pub struct Ring {
    event: Event,
    base: *mut u8,
    data_pages: usize,
    tail: u64,
}

// SAFETY: the mapping is owned by this value and only touched through &mut self.
unsafe impl Send for Ring {}

impl Ring {
    /// Maps `data_pages` (a power of two) of buffer for `event`; on failure the event comes back.
    pub fn map(event: Event, data_pages: usize) -> Result<Ring, (Event, std::io::Error)> {
        let len = PAGE * (1 + data_pages);
        // SAFETY: maps the event's ring buffer as the perf ABI prescribes; unmapped in Drop.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                event.fd,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err((event, std::io::Error::last_os_error()));
        }
        Ok(Ring { event, base: base as *mut u8, data_pages, tail: 0 })
    }

    /// The descriptor of the ring's event: poll it for the watermark, redirect other events to it.
    pub fn fd(&self) -> i32 {
        self.event.fd
    }

    /// Bytes of buffer.
    pub fn bytes(&self) -> usize {
        self.data_pages * PAGE
    }

    fn control(&self, offset: usize) -> &AtomicU64 {
        // SAFETY: data_head (1024) and data_tail (1032) are aligned u64s of the control page.
        unsafe { &*(self.base.add(offset) as *const AtomicU64) }
    }

    /// Bytes written by the kernel and not yet taken out.
    pub fn pending(&self) -> u64 {
        self.control(1024).load(Ordering::Acquire).saturating_sub(self.tail)
    }

    /// Appends every complete record since the last call to `out`, each as its own bytes
    /// (header included), and frees their space for the kernel.
    pub fn drain(&mut self, out: &mut Vec<Vec<u8>>) {
        let head = self.control(1024).load(Ordering::Acquire);
        let size = self.bytes() as u64;
        // SAFETY: the data area follows the control page and is `size` bytes long.
        let data = unsafe { std::slice::from_raw_parts(self.base.add(PAGE), size as usize) };
        while self.tail + 8 <= head {
            let at = (self.tail % size) as usize;
            let mut header = [0u8; 8];
            copy_wrapped(data, at, &mut header);
            let len = u16::from_le_bytes([header[6], header[7]]) as u64;
            if len < 8 || self.tail + len > head {
                break;
            }
            let mut rec = vec![0u8; len as usize];
            copy_wrapped(data, at, &mut rec);
            out.push(rec);
            self.tail += len;
        }
        self.control(1032).store(self.tail, Ordering::Release);
    }
}

/// Copies `out.len()` bytes from the circular `data` starting at `at`.
fn copy_wrapped(data: &[u8], at: usize, out: &mut [u8]) {
    let first = out.len().min(data.len() - at);
    out[..first].copy_from_slice(&data[at..at + first]);
    let rest = out.len() - first;
    out[first..].copy_from_slice(&data[..rest]);
}

impl Drop for Ring {
    fn drop(&mut self) {
        // SAFETY: base and length come from our mmap.
        unsafe { libc::munmap(self.base as *mut libc::c_void, PAGE * (1 + self.data_pages)) };
    }
}

/// The CPUs `pid` may run on (from its `Cpus_allowed_list`), or every online CPU.
pub fn allowed_cpus(pid: i32) -> Vec<i32> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let list = status.lines().find_map(|l| l.strip_prefix("Cpus_allowed_list:")).map(str::trim);
    let online = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap_or_default();
    let parse = |s: &str| -> Vec<i32> {
        s.trim()
            .split(',')
            .filter_map(|r| match r.split_once('-') {
                Some((a, b)) => {
                    Some((a.trim().parse::<i32>().ok()?..=b.trim().parse::<i32>().ok()?).collect())
                }
                None => r.trim().parse::<i32>().ok().map(|c| vec![c]),
            })
            .flatten()
            .collect()
    };
    let online = parse(&online);
    let allowed = list.map(parse).unwrap_or_default();
    let both: Vec<i32> =
        allowed.into_iter().filter(|c| online.is_empty() || online.contains(c)).collect();
    if both.is_empty() { online } else { both }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrapped_copies_join_the_end_and_the_start() {
        let data = [1u8, 2, 3, 4, 5, 6];
        let mut out = [0u8; 4];
        copy_wrapped(&data, 4, &mut out);
        assert_eq!(out, [5, 6, 1, 2]);
        copy_wrapped(&data, 1, &mut out);
        assert_eq!(out, [2, 3, 4, 5]);
    }

    #[test]
    fn this_process_may_run_on_some_cpu() {
        let cpus = allowed_cpus(std::process::id() as i32);
        assert!(!cpus.is_empty());
        assert!(cpus.iter().all(|c| *c >= 0));
    }
}
