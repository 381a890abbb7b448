//! The registers an unwinder starts from, as a sample's register dump or a blocked thread's
//! `/proc/<tid>/syscall` gives them.

/// The registers an unwinder starts from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Regs {
    /// Instruction pointer.
    pub pc: u64,
    /// Stack pointer.
    pub sp: u64,
    /// Frame pointer (rbp, x29), 0 when unknown.
    pub fp: u64,
    /// Link register (aarch64), 0 when unknown.
    pub lr: u64,
}
