//! The records the tracer's events write, decoded: context switches, on-CPU samples with user
//! registers and a copy of the user stack, executable mappings, exec, fork and exit, and lost
//! records. Every record carries the `sample_id` trailer (pid, tid, time) the tracer asks for.

use crate::sample::unwind::Regs;

/// User registers dumped with a sample, in the order the kernel writes them (ascending bit).
#[cfg(target_arch = "x86_64")]
pub const REGS_MASK: u64 = (1 << 6) | (1 << 7) | (1 << 8); // bp, sp, ip
/// User registers dumped with a sample, in the order the kernel writes them (ascending bit).
#[cfg(target_arch = "aarch64")]
pub const REGS_MASK: u64 = (1 << 29) | (1 << 30) | (1 << 31) | (1 << 32); // fp, lr, sp, pc
/// User registers dumped with a sample (none on other architectures: no stacks there).
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
pub const REGS_MASK: u64 = 0;

/// The registers in the order the kernel dumps them with a sample.
#[cfg(target_arch = "x86_64")]
fn regs_from_dump(v: &[u64]) -> Regs {
    Regs { fp: v[0], sp: v[1], pc: v[2], lr: 0 }
}

/// The registers in the order the kernel dumps them with a sample.
#[cfg(target_arch = "aarch64")]
fn regs_from_dump(v: &[u64]) -> Regs {
    Regs { fp: v[0], lr: v[1], sp: v[2], pc: v[3] }
}

/// No registers are dumped on other architectures.
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
fn regs_from_dump(_: &[u64]) -> Regs {
    Regs::default()
}

/// One decoded record.
#[derive(Clone, Debug, PartialEq)]
pub enum Record {
    /// An on-CPU sample in user space.
    Sample {
        /// Process.
        pid: i32,
        /// Thread.
        tid: i32,
        /// Nanoseconds on CLOCK_MONOTONIC.
        time: u64,
        /// Registers at the sample, `None` when the kernel had none (a kernel thread).
        regs: Option<Regs>,
        /// The bytes of stack from `regs.sp` up.
        stack: Vec<u8>,
    },
    /// The thread left a CPU (`out`), preempted or not, or got one.
    Switch {
        /// Process.
        pid: i32,
        /// Thread.
        tid: i32,
        /// Nanoseconds on CLOCK_MONOTONIC.
        time: u64,
        /// Leaving the CPU (true) or getting it (false).
        out: bool,
        /// Left while still runnable (preempted), not to wait.
        preempted: bool,
    },
    /// A new executable mapping.
    Mmap {
        /// Process.
        pid: i32,
        /// First address.
        addr: u64,
        /// Length.
        len: u64,
        /// File offset of `addr`.
        pgoff: u64,
        /// The file.
        path: String,
        /// Nanoseconds on CLOCK_MONOTONIC.
        time: u64,
    },
    /// A thread renamed itself, or the process executed a new program (`exec`).
    Comm {
        /// Process.
        pid: i32,
        /// Thread.
        tid: i32,
        /// New name.
        comm: String,
        /// An exec: the process's mappings start anew.
        exec: bool,
        /// Nanoseconds on CLOCK_MONOTONIC.
        time: u64,
    },
    /// A thread or process was created.
    Fork {
        /// Its process.
        pid: i32,
        /// The parent process.
        ppid: i32,
        /// The new thread.
        tid: i32,
        /// Nanoseconds on CLOCK_MONOTONIC.
        time: u64,
    },
    /// A thread ended.
    Exit {
        /// Its process.
        pid: i32,
        /// The thread.
        tid: i32,
        /// Nanoseconds on CLOCK_MONOTONIC.
        time: u64,
    },
    /// The kernel dropped this many records: the buffer was full.
    Lost(u64),
    /// Any other record.
    Other,
}

impl Record {
    /// The record's time, where it has one.
    pub fn time(&self) -> Option<u64> {
        match self {
            Record::Sample { time, .. }
            | Record::Switch { time, .. }
            | Record::Fork { time, .. }
            | Record::Exit { time, .. }
            | Record::Mmap { time, .. }
            | Record::Comm { time, .. } => Some(*time),
            _ => None,
        }
    }
}

const MMAP2: u32 = 10;
const LOST: u32 = 2;
const COMM: u32 = 3;
const EXIT: u32 = 4;
const FORK: u32 = 7;
const SAMPLE: u32 = 9;
const LOST_SAMPLES: u32 = 13;
const SWITCH: u32 = 14;
const MISC_SWITCH_OUT: u16 = 1 << 13;
const MISC_SWITCH_OUT_PREEMPT: u16 = 1 << 14;
const MISC_COMM_EXEC: u16 = 1 << 13;
/// pid, tid and time at the end of every non-sample record.
const TRAILER: usize = 16;

/// A little-endian cursor that never panics: reads past the end give `None`.
struct Cursor<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn u64(&mut self) -> Option<u64> {
        let v = self.b.get(self.at..self.at + 8)?;
        self.at += 8;
        Some(u64::from_le_bytes(v.try_into().ok()?))
    }

    fn u32(&mut self) -> Option<u32> {
        let v = self.b.get(self.at..self.at + 4)?;
        self.at += 4;
        Some(u32::from_le_bytes(v.try_into().ok()?))
    }

    fn bytes(&mut self, n: usize) -> Option<&'a [u8]> {
        let v = self.b.get(self.at..self.at.checked_add(n)?)?;
        self.at += n;
        Some(v)
    }
}

fn c_string(b: &[u8]) -> String {
    let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
    String::from_utf8_lossy(&b[..end]).into_owned()
}

/// Decodes one record (header included) written with the tracer's sample type
/// (tid, time, user registers, user stack) and `sample_id_all`; `None` when it is malformed.
pub fn decode(rec: &[u8]) -> Option<Record> {
    let kind = u32::from_le_bytes(rec.get(0..4)?.try_into().ok()?);
    let misc = u16::from_le_bytes(rec.get(4..6)?.try_into().ok()?);
    let body = rec.get(8..)?;
    let trailer = || -> Option<(i32, i32, u64)> {
        let t = body.get(body.len().checked_sub(TRAILER)?..)?;
        let mut c = Cursor { b: t, at: 0 };
        Some((c.u32()? as i32, c.u32()? as i32, c.u64()?))
    };
    let mut c = Cursor { b: body, at: 0 };
    Some(match kind {
        SAMPLE => {
            let (pid, tid, time) = (c.u32()? as i32, c.u32()? as i32, c.u64()?);
            let abi = c.u64()?;
            let n = REGS_MASK.count_ones() as usize;
            let regs = if abi == 0 {
                None
            } else {
                let v: Option<Vec<u64>> = (0..n).map(|_| c.u64()).collect();
                Some(regs_from_dump(&v?))
            };
            let size = c.u64()? as usize;
            let stack = if size > 0 {
                let data = c.bytes(size)?;
                let dyn_size = (c.u64()? as usize).min(size);
                data[..dyn_size].to_vec()
            } else {
                Vec::new()
            };
            Record::Sample { pid, tid, time, regs, stack }
        }
        SWITCH => {
            let (pid, tid, time) = trailer()?;
            let out = misc & MISC_SWITCH_OUT != 0;
            Record::Switch {
                pid,
                tid,
                time,
                out,
                preempted: out && misc & MISC_SWITCH_OUT_PREEMPT != 0,
            }
        }
        MMAP2 => {
            let pid = c.u32()? as i32;
            let _tid = c.u32()?;
            let (addr, len, pgoff) = (c.u64()?, c.u64()?, c.u64()?);
            c.bytes(24 + 8)?; // inode or build id, prot, flags
            let name = body.get(c.at..body.len().checked_sub(TRAILER)?)?;
            Record::Mmap { pid, addr, len, pgoff, path: c_string(name), time: trailer()?.2 }
        }
        COMM => {
            let (pid, tid) = (c.u32()? as i32, c.u32()? as i32);
            let name = body.get(c.at..body.len().checked_sub(TRAILER)?)?;
            Record::Comm {
                pid,
                tid,
                comm: c_string(name),
                exec: misc & MISC_COMM_EXEC != 0,
                time: trailer()?.2,
            }
        }
        FORK | EXIT => {
            let (pid, ppid, tid, _ptid, time) =
                (c.u32()? as i32, c.u32()? as i32, c.u32()? as i32, c.u32()?, c.u64()?);
            if kind == FORK {
                Record::Fork { pid, ppid, tid, time }
            } else {
                Record::Exit { pid, tid, time }
            }
        }
        LOST => {
            let _id = c.u64()?;
            Record::Lost(c.u64()?)
        }
        LOST_SAMPLES => Record::Lost(c.u64()?),
        _ => Record::Other,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(kind: u32, misc: u16, body: &[u8]) -> Vec<u8> {
        let mut r = kind.to_le_bytes().to_vec();
        r.extend(misc.to_le_bytes());
        r.extend(((body.len() + 8) as u16).to_le_bytes());
        r.extend(body);
        r
    }

    fn trailer(pid: u32, tid: u32, time: u64) -> Vec<u8> {
        [pid.to_le_bytes().as_slice(), &tid.to_le_bytes(), &time.to_le_bytes()].concat()
    }

    #[test]
    fn decodes_switches_with_their_direction_and_preemption() {
        let out = record(SWITCH, MISC_SWITCH_OUT | MISC_SWITCH_OUT_PREEMPT, &trailer(5, 6, 77));
        assert_eq!(
            decode(&out),
            Some(Record::Switch { pid: 5, tid: 6, time: 77, out: true, preempted: true })
        );
        let back = record(SWITCH, 0, &trailer(5, 6, 80));
        assert_eq!(
            decode(&back),
            Some(Record::Switch { pid: 5, tid: 6, time: 80, out: false, preempted: false })
        );
    }

    #[test]
    fn decodes_mmap2_comm_and_fork() {
        let mut body = [5u32.to_le_bytes(), 5u32.to_le_bytes()].concat();
        for v in [0x1000u64, 0x2000, 0] {
            body.extend(v.to_le_bytes());
        }
        body.extend([0u8; 32]);
        body.extend(b"/lib/libc.so.6\0\0");
        body.extend(trailer(5, 5, 1));
        let m = decode(&record(MMAP2, 0, &body)).unwrap();
        let path = "/lib/libc.so.6".into();
        assert_eq!(m, Record::Mmap { pid: 5, addr: 0x1000, len: 0x2000, pgoff: 0, path, time: 1 });
        let mut body = [5u32.to_le_bytes(), 5u32.to_le_bytes()].concat();
        body.extend(b"worker\0\0");
        body.extend(trailer(5, 5, 2));
        let c = decode(&record(COMM, MISC_COMM_EXEC, &body)).unwrap();
        assert_eq!(c, Record::Comm { pid: 5, tid: 5, comm: "worker".into(), exec: true, time: 2 });
        let body =
            [[5u32, 4, 9, 5].map(u32::to_le_bytes).concat(), 42u64.to_le_bytes().to_vec()].concat();
        assert_eq!(
            decode(&record(FORK, 0, &body)),
            Some(Record::Fork { pid: 5, ppid: 4, tid: 9, time: 42 })
        );
    }

    #[test]
    fn a_truncated_record_is_refused_not_read_past_its_end() {
        assert_eq!(decode(&record(SAMPLE, 0, &[1, 2, 3])), None);
        assert_eq!(decode(&record(SWITCH, 0, &[1, 2])), None);
        assert_eq!(decode(&[9, 0]), None);
    }
}
