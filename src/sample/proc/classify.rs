//! Where an off-CPU thread is waiting, by the taxonomy in docs/architecture.md ("Where thread time
//! goes"): the system call first (with the futex operation and value decoded), then the kernel wait
//! channel (a table that covers the renames across kernel versions), then the state letter.

use super::procfs::Syscall;
use crate::results::Class;

/// System call numbers the classifier knows, per architecture.
#[allow(missing_docs)]
mod nr {
    #[cfg(target_arch = "x86_64")]
    pub const READ: &[i64] = &[0, 17, 19, 295, 327];
    #[cfg(target_arch = "x86_64")]
    pub const WRITE: &[i64] = &[1, 18, 20, 296, 328];
    #[cfg(target_arch = "x86_64")]
    pub const SYNC: &[i64] = &[74, 75, 26, 277, 162];
    #[cfg(target_arch = "x86_64")]
    pub const MM: &[i64] = &[9, 10, 11, 25, 28, 12];
    #[cfg(target_arch = "x86_64")]
    pub const POLL: &[i64] = &[7, 23, 232, 270, 271, 281, 441, 43, 288, 45, 47, 299, 208, 426, 42];
    #[cfg(target_arch = "x86_64")]
    pub const SLEEP: &[i64] = &[35, 230, 34, 24];
    #[cfg(target_arch = "x86_64")]
    pub const WAIT: &[i64] = &[61, 247];
    #[cfg(target_arch = "x86_64")]
    pub const FILE_LOCK: &[i64] = &[73, 72];
    #[cfg(target_arch = "x86_64")]
    pub const FUTEX: &[i64] = &[202, 449];

    #[cfg(target_arch = "aarch64")]
    pub const READ: &[i64] = &[63, 67, 65, 69, 286];
    #[cfg(target_arch = "aarch64")]
    pub const WRITE: &[i64] = &[64, 68, 66, 70, 287];
    #[cfg(target_arch = "aarch64")]
    pub const SYNC: &[i64] = &[82, 83, 227, 84, 81];
    #[cfg(target_arch = "aarch64")]
    pub const MM: &[i64] = &[222, 226, 215, 216, 233, 214];
    #[cfg(target_arch = "aarch64")]
    pub const POLL: &[i64] = &[73, 72, 22, 441, 202, 242, 207, 212, 243, 4, 426, 203];
    #[cfg(target_arch = "aarch64")]
    pub const SLEEP: &[i64] = &[101, 115, 124];
    #[cfg(target_arch = "aarch64")]
    pub const WAIT: &[i64] = &[260, 95];
    #[cfg(target_arch = "aarch64")]
    pub const FILE_LOCK: &[i64] = &[32, 25];
    #[cfg(target_arch = "aarch64")]
    pub const FUTEX: &[i64] = &[98, 449];

    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    pub const READ: &[i64] = &[];
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    pub use READ as WRITE;
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    pub use READ as SYNC;
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    pub use READ as MM;
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    pub use READ as POLL;
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    pub use READ as SLEEP;
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    pub use READ as WAIT;
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    pub use READ as FILE_LOCK;
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    pub use READ as FUTEX;
}

/// The name of a system call the classifier knows, for reports.
pub fn syscall_name(n: i64) -> String {
    #[cfg(target_arch = "x86_64")]
    let name = match n {
        0 => "read",
        1 => "write",
        2 => "open",
        3 => "close",
        4 => "stat",
        5 => "fstat",
        6 => "lstat",
        7 => "poll",
        8 => "lseek",
        9 => "mmap",
        10 => "mprotect",
        11 => "munmap",
        12 => "brk",
        16 => "ioctl",
        17 => "pread64",
        18 => "pwrite64",
        19 => "readv",
        20 => "writev",
        21 => "access",
        22 => "pipe",
        23 => "select",
        24 => "sched_yield",
        25 => "mremap",
        26 => "msync",
        28 => "madvise",
        32 => "dup",
        33 => "dup2",
        34 => "pause",
        35 => "nanosleep",
        41 => "socket",
        42 => "connect",
        43 => "accept",
        44 => "sendto",
        45 => "recvfrom",
        46 => "sendmsg",
        47 => "recvmsg",
        56 => "clone",
        57 => "fork",
        59 => "execve",
        61 => "wait4",
        62 => "kill",
        72 => "fcntl",
        73 => "flock",
        74 => "fsync",
        75 => "fdatasync",
        76 => "truncate",
        77 => "ftruncate",
        78 => "getdents",
        82 => "rename",
        83 => "mkdir",
        84 => "rmdir",
        85 => "creat",
        86 => "link",
        87 => "unlink",
        89 => "readlink",
        90 => "chmod",
        202 => "futex",
        208 => "io_getevents",
        217 => "getdents64",
        230 => "clock_nanosleep",
        232 => "epoll_wait",
        247 => "waitid",
        257 => "openat",
        262 => "newfstatat",
        263 => "unlinkat",
        264 => "renameat",
        270 => "pselect6",
        271 => "ppoll",
        277 => "sync_file_range",
        281 => "epoll_pwait",
        285 => "fallocate",
        288 => "accept4",
        293 => "pipe2",
        295 => "preadv",
        296 => "pwritev",
        316 => "renameat2",
        318 => "getrandom",
        326 => "copy_file_range",
        332 => "statx",
        426 => "io_uring_enter",
        435 => "clone3",
        437 => "openat2",
        449 => "futex_waitv",
        _ => "",
    };
    #[cfg(not(target_arch = "x86_64"))]
    let name = "";
    if name.is_empty() { format!("syscall {n}") } else { name.to_string() }
}

/// What a wait is on, for grouping and naming.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Site {
    /// A futex word at this address in this process.
    Futex {
        /// Process (thread group) id.
        pid: i32,
        /// User address of the futex word.
        addr: u64,
    },
    /// Waiting for other threads of process `pid` to exit (pthread_join).
    Join {
        /// The waiting process.
        pid: i32,
    },
    /// A kernel wait: the system call (or fault) and the wait channel.
    Kernel {
        /// System call name, or `page fault` outside a system call.
        syscall: String,
        /// Kernel function the thread sleeps in, or empty.
        wchan: String,
    },
}

const FUTEX_CMD_MASK: u64 = 0x7f;
const FUTEX_PRIVATE: u64 = 0x80;
const FUTEX_CLOCK_REALTIME: u64 = 0x100;
const FUTEX_WAIT: u64 = 0;
const FUTEX_WAIT_BITSET: u64 = 9;
const FUTEX_LOCK_PI: u64 = 6;
const FUTEX_LOCK_PI2: u64 = 13;

/// Classifies a futex wait from its operation and expected value.
///
/// glibc and Rust mutexes wait with value 2 (locked, contended); Rust's RwLock waits on a state
/// with its waiting bits (30, 31) set; a parked Rust thread waits with 0xffffffff; glibc condition
/// variables use FUTEX_WAIT_BITSET|PRIVATE|CLOCK_REALTIME (0x189); pthread_join waits, shared
/// (not private), on the joined thread's TID.
pub fn futex(op: u64, val: u64, is_tid: impl Fn(u64) -> bool) -> Class {
    let cmd = op & FUTEX_CMD_MASK;
    let val = val & 0xffff_ffff;
    if cmd == FUTEX_LOCK_PI || cmd == FUTEX_LOCK_PI2 || val == 2 {
        return Class::Lock;
    }
    if val == 0xffff_ffff {
        return Class::WaitForWork;
    }
    if op & FUTEX_PRIVATE == 0 && (cmd == FUTEX_WAIT || cmd == FUTEX_WAIT_BITSET) && is_tid(val) {
        return Class::Join;
    }
    if op & FUTEX_CLOCK_REALTIME != 0 {
        return Class::WaitForWork;
    }
    if val & 0xc000_0000 != 0 {
        return Class::Lock;
    }
    Class::WaitForWork
}

/// The address a futex wait is grouped under. A glibc condition variable's waiters sleep on one
/// of two adjacent signal words (`__g_signals[2]`, 8-byte aligned), by turns: a wait on the
/// second word of such a pair, by FUTEX_WAIT_BITSET and not a lock's, is put on the first, so that
/// one condition variable (CPython's GIL is one) is one wait.
fn condvar_word(addr: u64, op: u64, class: Class) -> u64 {
    let on_second =
        addr % 8 == 4 && op & FUTEX_CMD_MASK == FUTEX_WAIT_BITSET && class == Class::WaitForWork;
    if on_second { addr - 4 } else { addr }
}

/// Wait channels by class; names vary across kernel versions (futex_wait_queue_me ≤ 5.15,
/// futex_wait_queue 5.16–6.15, futex_do_wait ≥ 6.16).
fn wchan_class(wchan: &str) -> Option<Class> {
    const IO: [&str; 9] = [
        "folio_wait_bit_common",
        "wait_on_page_bit_common",
        "__iomap_dio_rw",
        "submit_bio_wait",
        "io_schedule",
        "blk_mq_get_tag",
        "filemap_fault",
        "__filemap_get_folio",
        "jbd2_log_wait_commit",
    ];
    const KLOCK: [&str; 9] = [
        "rwsem_down_read_slowpath",
        "rwsem_down_write_slowpath",
        "lock_mm_and_find_vma",
        "do_mprotect_pkey",
        "vm_mmap_pgoff",
        "__vm_munmap",
        "fdget_pos",
        "__mutex_lock",
        "locks_lock_inode_wait",
    ];
    const IPC: [&str; 11] = [
        "pipe_read",
        "anon_pipe_read",
        "pipe_write",
        "unix_stream_read_generic",
        "sk_wait_data",
        "do_epoll_wait",
        "ep_poll",
        "do_select",
        "do_sys_poll",
        "inet_csk_accept",
        "wait_woken",
    ];
    const SLEEP: [&str; 2] = ["hrtimer_nanosleep", "do_nanosleep"];
    const FUTEX: [&str; 3] = ["futex_wait_queue_me", "futex_wait_queue", "futex_do_wait"];
    if IO.contains(&wchan) {
        Some(Class::Io)
    } else if KLOCK.contains(&wchan) {
        Some(Class::KernelLock)
    } else if IPC.contains(&wchan) {
        Some(Class::Ipc)
    } else if SLEEP.contains(&wchan) {
        Some(Class::Sleep)
    } else if FUTEX.contains(&wchan) {
        Some(Class::WaitForWork)
    } else if wchan == "do_wait" {
        Some(Class::Join)
    } else {
        None
    }
}

/// Classifies an off-CPU thread; `syscall` is `None` when /proc did not let us read it.
pub fn blocked(
    state: char,
    syscall: Option<Syscall>,
    wchan: &str,
    pid: i32,
    is_tid: impl Fn(u64) -> bool,
) -> (Class, Option<Site>) {
    let kernel = |name: String| Some(Site::Kernel { syscall: name, wchan: wchan.to_string() });
    let by_wchan = wchan_class(wchan);
    match syscall {
        Some(Syscall::In { nr: n, args }) => {
            let name = syscall_name(n);
            let class = if nr::FUTEX.contains(&n) {
                if n == nr::FUTEX[0] {
                    let class = futex(args[1], args[2], is_tid);
                    let site = match class {
                        Class::Join => Site::Join { pid },
                        _ => Site::Futex { pid, addr: condvar_word(args[0], args[1], class) },
                    };
                    return (class, Some(site));
                }
                Class::WaitForWork
            } else if nr::READ.contains(&n) || nr::WRITE.contains(&n) {
                match (state, by_wchan) {
                    (_, Some(Class::Ipc)) => Class::Ipc,
                    ('D', _) | (_, Some(Class::Io)) => Class::Io,
                    (_, Some(Class::KernelLock)) => Class::KernelLock,
                    _ => Class::Ipc,
                }
            } else if nr::SYNC.contains(&n) {
                Class::Io
            } else if nr::MM.contains(&n) {
                Class::KernelLock
            } else if nr::POLL.contains(&n) {
                Class::Ipc
            } else if nr::SLEEP.contains(&n) {
                Class::Sleep
            } else if nr::WAIT.contains(&n) {
                Class::Join
            } else if nr::FILE_LOCK.contains(&n) {
                Class::KernelLock
            } else {
                by_wchan.unwrap_or(if state == 'D' { Class::Io } else { Class::Other })
            };
            (class, kernel(name))
        }
        Some(Syscall::NotInSyscall) => {
            let class = by_wchan.unwrap_or(if state == 'D' { Class::Io } else { Class::Other });
            (class, kernel("page fault".into()))
        }
        Some(Syscall::Running) | None => {
            let class = by_wchan.unwrap_or(if state == 'D' { Class::Io } else { Class::Other });
            (class, if wchan.is_empty() { None } else { kernel("unknown".into()) })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_futex_waits_as_verified_on_linux_6_18() {
        let no_tid = |_| false;
        assert_eq!(futex(0x80, 2, no_tid), Class::Lock, "glibc mutex");
        assert_eq!(futex(0x89, 2, no_tid), Class::Lock, "Rust Mutex");
        assert_eq!(futex(0x189, 7, no_tid), Class::WaitForWork, "glibc condvar");
        assert_eq!(futex(0x89, 0xffff_ffff, no_tid), Class::WaitForWork, "Rust park");
        assert_eq!(futex(0x109, 4242, |t| t == 4242), Class::Join, "pthread_join on a TID");
        assert_eq!(futex(0x89, 0x4000_0001, no_tid), Class::Lock, "Rust RwLock with waiters");
        assert_eq!(futex(0x89, 5, no_tid), Class::WaitForWork, "Rust condvar sequence");
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn syscall_comes_first_then_wchan_then_state() {
        let no = |_| false;
        let sc = |nr| Some(Syscall::In { nr, args: [0; 6] });
        assert_eq!(blocked('D', sc(10), "rwsem_down_write_slowpath", 1, no).0, Class::KernelLock);
        assert_eq!(blocked('S', sc(0), "pipe_read", 1, no).0, Class::Ipc);
        assert_eq!(blocked('D', sc(17), "folio_wait_bit_common", 1, no).0, Class::Io);
        assert_eq!(blocked('S', sc(230), "hrtimer_nanosleep", 1, no).0, Class::Sleep);
        assert_eq!(
            blocked('D', Some(Syscall::NotInSyscall), "lock_mm_and_find_vma", 1, no).0,
            Class::KernelLock
        );
        assert_eq!(blocked('D', Some(Syscall::NotInSyscall), "0", 1, no).0, Class::Io);
        assert_eq!(blocked('S', None, "", 1, no).0, Class::Other);
        let (c, site) = blocked(
            'S',
            Some(Syscall::In { nr: 202, args: [0xabc, 0x80, 2, 0, 0, 0] }),
            "futex_do_wait",
            9,
            no,
        );
        assert_eq!((c, site), (Class::Lock, Some(Site::Futex { pid: 9, addr: 0xabc })));
    }

    #[test]
    fn a_condition_variables_two_signal_words_are_one_wait_and_two_mutexes_stay_two() {
        assert_eq!(condvar_word(0x1b4, 0x89, Class::WaitForWork), 0x1b0);
        assert_eq!(condvar_word(0x1b4, 0x189, Class::WaitForWork), 0x1b0);
        assert_eq!(condvar_word(0x1b0, 0x89, Class::WaitForWork), 0x1b0);
        assert_eq!(condvar_word(0x1b4, 0x89, Class::Lock), 0x1b4, "an array of Rust mutexes");
        assert_eq!(condvar_word(0x1b4, 0x80, Class::WaitForWork), 0x1b4, "FUTEX_WAIT");
    }
}
