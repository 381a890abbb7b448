//! The classes of thread time, as results.json names them: on a CPU, waiting for one, and each
//! kind of wait of the taxonomy in docs/architecture.md ("Where thread time goes"). The sampler
//! classifies; every reader of a run's thread time counts by these.

use serde::{Deserialize, Serialize};

/// Where a thread's time went.
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum Class {
    /// On a CPU in user mode.
    CpuUser,
    /// On a CPU in the kernel.
    CpuKernel,
    /// Runnable, waiting for a CPU.
    Runqueue,
    /// Waiting on a contended user-space lock (mutex, rwlock).
    Lock,
    /// Waiting for work: a condition variable, a parked thread, an empty queue.
    WaitForWork,
    /// Waiting for another thread or a child process to finish.
    Join,
    /// Waiting for the disk or the page cache.
    Io,
    /// Waiting on a kernel lock: the mmap lock (mmap, mprotect, munmap, faults), file locks.
    KernelLock,
    /// Waiting on a pipe, a socket, poll/select/epoll.
    Ipc,
    /// Sleeping on purpose (nanosleep, pause).
    Sleep,
    /// Any other wait, with its system call and wait channel kept.
    Other,
    /// Off-CPU time no sample caught (waits shorter than the sampling period).
    Unsampled,
}

impl Class {
    /// Every class, in display order.
    pub const ALL: [Class; 12] = [
        Class::CpuUser,
        Class::CpuKernel,
        Class::Runqueue,
        Class::Lock,
        Class::WaitForWork,
        Class::Join,
        Class::Io,
        Class::KernelLock,
        Class::Ipc,
        Class::Sleep,
        Class::Other,
        Class::Unsampled,
    ];

    /// The name used in results.json (`cpu-user`, `wait-for-work`…).
    pub fn name(self) -> &'static str {
        match self {
            Class::CpuUser => "cpu-user",
            Class::CpuKernel => "cpu-kernel",
            Class::Runqueue => "runqueue",
            Class::Lock => "lock",
            Class::WaitForWork => "wait-for-work",
            Class::Join => "join",
            Class::Io => "io",
            Class::KernelLock => "kernel-lock",
            Class::Ipc => "ipc",
            Class::Sleep => "sleep",
            Class::Other => "other",
            Class::Unsampled => "unsampled",
        }
    }

    /// Short label for tables.
    pub fn short(self) -> &'static str {
        match self {
            Class::CpuUser => "user",
            Class::CpuKernel => "kern",
            Class::Runqueue => "runq",
            Class::Lock => "lock",
            Class::WaitForWork => "wait",
            Class::Join => "join",
            Class::Io => "io",
            Class::KernelLock => "klock",
            Class::Ipc => "ipc",
            Class::Sleep => "sleep",
            Class::Other => "other",
            Class::Unsampled => "unsampled",
        }
    }
}
