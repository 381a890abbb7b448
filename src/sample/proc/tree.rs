//! Finding the run's processes and threads: the children of every task of the processes known
//! (or, for a big tree, new PIDs in /proc whose parent is in the tree), and the tasks of every
//! process known.

use super::procfs::{self, ProcFile};
use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::Path;

/// The processes of the tree and those seen outside it.
#[derive(Default)]
pub(crate) struct Tree {
    /// Processes in the tree.
    pub pids: HashSet<i32>,
    /// PIDs seen in /proc that are not part of the tree.
    outside: HashSet<i32>,
    /// Each process's task directory, kept open and read again from its start at every walk.
    task_dirs: HashMap<i32, File>,
    /// Each task's `children` file, kept open and read again at every walk.
    children: HashMap<i32, ProcFile>,
}

impl Tree {
    /// A tree rooted at `root`.
    pub fn new(root: i32) -> Tree {
        Tree { pids: HashSet::from([root]), ..Tree::default() }
    }

    /// Adds the processes born since the last look whose parent is in the tree. A tree of fewer
    /// than `walk_below` tasks is walked through its tasks' `children` files, which costs in
    /// proportion to the tree: the first look at /proc reads the status of every process on the
    /// machine (thousands on a big node), at the very start of the run it measures. A walk
    /// returns the tasks it went through: every task of the tree.
    pub fn scan(&mut self, tasks: usize, walk_below: usize) -> Option<Vec<(i32, i32)>> {
        if tasks < walk_below && children_listed() {
            // Processes once found stay (an orphan reparented to scalescope is still the run's).
            let tasks = self.walk();
            self.pids.extend(tasks.iter().map(|&(pid, _)| pid));
            Some(tasks)
        } else {
            self.scan_proc();
            None
        }
    }

    /// Process `pid` ended: it leaves the tree, and its task directory and its main thread's
    /// `children` file are closed (its other threads' files at the next walk).
    pub fn leave(&mut self, pid: i32) {
        self.pids.remove(&pid);
        self.task_dirs.remove(&pid);
        self.children.remove(&pid);
    }

    /// (pid, tid) of every thread of the processes known and of their descendants (through each
    /// thread's `children` file), through handles kept open from one walk to the next: a walk at
    /// every sweep of a small tree opened a directory and a file per task each time, half of what
    /// the sampler cost beside three busy threads of `xz`.
    pub fn walk(&mut self) -> Vec<(i32, i32)> {
        let mut out = Vec::new();
        let mut pids: Vec<i32> = self.pids.iter().copied().collect();
        let mut seen = HashSet::new();
        // scalescope itself (and its helper) is never part of a tree it watches, unless asked for:
        // attached to a shell it was started from, it sampled its own threads.
        let own = std::process::id() as i32;
        if !pids.contains(&own) {
            seen.insert(own);
        }
        let mut live_dirs = HashSet::new();
        let mut live_tasks = HashSet::new();
        let mut gone = Vec::new();
        while let Some(pid) = pids.pop() {
            if !seen.insert(pid) {
                continue;
            }
            let Some(tids) = self.tids(pid) else {
                gone.push(pid);
                continue;
            };
            live_dirs.insert(pid);
            for tid in tids {
                out.push((pid, tid));
                live_tasks.insert(tid);
                self.children_of(pid, tid, &mut pids);
            }
        }
        // Processes that are gone leave the tree (each had cost a failed open at every walk: 840
        // in a 0.3 s run of `xargs -P 2 sha256sum`, and a PID reused would have joined it), and
        // the handles of tasks that are gone are closed.
        for pid in gone {
            self.pids.remove(&pid);
        }
        self.task_dirs.retain(|pid, _| live_dirs.contains(pid));
        self.children.retain(|tid, _| live_tasks.contains(tid));
        out
    }

    /// The task ids of `pid`, from its task directory read again from the start; `None` when the
    /// process is gone.
    fn tids(&mut self, pid: i32) -> Option<Vec<i32>> {
        if let Some(dir) = self.task_dirs.get(&pid) {
            if let Some(tids) = task_ids(dir) {
                return Some(tids);
            }
            // Gone, or its PID reused by another process: opened anew below.
            self.task_dirs.remove(&pid);
        }
        let dir = File::open(format!("/proc/{pid}/task")).ok()?;
        let tids = task_ids(&dir)?;
        self.task_dirs.insert(pid, dir);
        Some(tids)
    }

    /// Adds the child processes task `tid` lists in its `children` file (opened the first time,
    /// read again after) to `into`.
    fn children_of(&mut self, pid: i32, tid: i32, into: &mut Vec<i32>) {
        let parse = |text: &str, into: &mut Vec<i32>| {
            into.extend(text.split_ascii_whitespace().filter_map(|c| c.parse::<i32>().ok()));
        };
        if let Some(text) = self.children.get_mut(&tid).and_then(ProcFile::read) {
            parse(text, into);
            return;
        }
        // First seen, or its file no longer reads (the task is gone, or its id reused).
        self.children.remove(&tid);
        let Some(mut f) = ProcFile::open(Path::new(&format!("/proc/{pid}/task/{tid}/children")))
        else {
            return;
        };
        if let Some(text) = f.read() {
            parse(text, into);
            self.children.insert(tid, f);
        }
    }

    /// Adds the new PIDs in /proc whose parent is in the tree.
    fn scan_proc(&mut self) {
        let Ok(dir) = std::fs::read_dir("/proc") else { return };
        // scalescope itself stays out, as in [`Tree::walk`].
        self.outside.insert(std::process::id() as i32);
        let mut fresh: Vec<(i32, i32)> = dir
            .flatten()
            .filter_map(|e| e.file_name().to_str().and_then(|s| s.parse::<i32>().ok()))
            .filter(|pid| !self.pids.contains(pid) && !self.outside.contains(pid))
            .filter_map(|pid| {
                let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
                Some((pid, procfs::stat(&stat)?.ppid))
            })
            .collect();
        // Parents first, so a child and its own child found in one scan both join the tree.
        loop {
            let before = fresh.len();
            fresh.retain(|&(pid, ppid)| {
                let joins = self.pids.contains(&ppid);
                if joins {
                    self.pids.insert(pid);
                }
                !joins
            });
            if fresh.len() == before {
                break;
            }
        }
        self.outside.extend(fresh.into_iter().map(|(pid, _)| pid));
    }

    /// Every (pid, tid) of the processes known; those that are gone leave the tree.
    pub fn tasks(&mut self) -> Vec<(i32, i32)> {
        let mut out = Vec::new();
        let mut gone = Vec::new();
        for &pid in &self.pids {
            let tasks = match std::fs::read_dir(format!("/proc/{pid}/task")) {
                Ok(t) => t,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    gone.push(pid);
                    continue;
                }
                Err(_) => continue,
            };
            out.extend(
                tasks
                    .flatten()
                    .filter_map(|t| t.file_name().to_str().and_then(|s| s.parse::<i32>().ok()))
                    .map(|tid| (pid, tid)),
            );
        }
        for pid in gone {
            self.pids.remove(&pid);
        }
        out
    }
}

/// The numeric entries of an open /proc task directory, read from its start with getdents64;
/// `None` when it cannot be read (the process is gone).
fn task_ids(dir: &File) -> Option<Vec<i32>> {
    let fd = dir.as_raw_fd();
    // SAFETY: lseek on a descriptor this function borrows.
    if unsafe { libc::lseek(fd, 0, libc::SEEK_SET) } != 0 {
        return None;
    }
    let mut buf = [0u8; 4096];
    let mut tids = Vec::new();
    loop {
        // SAFETY: getdents64 writes at most buf.len() bytes into buf.
        let n = unsafe { libc::syscall(libc::SYS_getdents64, fd, buf.as_mut_ptr(), buf.len()) };
        if n < 0 {
            return None;
        }
        if n == 0 {
            return Some(tids);
        }
        // Each record: d_ino (8), d_off (8), d_reclen (2), d_type (1), then the NUL-ended name.
        let mut at = 0;
        while at + 19 < n as usize {
            let reclen = u16::from_ne_bytes([buf[at + 16], buf[at + 17]]) as usize;
            if reclen == 0 {
                break;
            }
            let name = &buf[at + 19..(at + reclen).min(n as usize)];
            let name = &name[..memchr::memchr(0, name).unwrap_or(name.len())];
            if let Some(tid) = std::str::from_utf8(name).ok().and_then(|s| s.parse::<i32>().ok()) {
                tids.push(tid);
            }
            at += reclen;
        }
    }
}

/// Whether the kernel lists a task's children in /proc (CONFIG_PROC_CHILDREN).
pub(crate) fn children_listed() -> bool {
    static LISTED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *LISTED.get_or_init(|| std::path::Path::new("/proc/thread-self/children").exists())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn descendants(tree: &Tree, root: i32) -> Vec<i32> {
        let mut pids: Vec<i32> = tree.pids.iter().copied().filter(|&p| p != root).collect();
        pids.sort();
        pids
    }

    #[test]
    fn a_task_directory_kept_open_lists_threads_started_after_it_was_opened() {
        let own = std::process::id() as i32;
        let dir = File::open(format!("/proc/{own}/task")).unwrap();
        let before = task_ids(&dir).unwrap();
        assert!(before.contains(&own), "{before:?}");
        let (tx, rx) = std::sync::mpsc::channel();
        let (stop_tx, stop_rx) = std::sync::mpsc::channel::<()>();
        let t = std::thread::spawn(move || {
            // SAFETY: gettid has no preconditions.
            tx.send(unsafe { libc::gettid() }).unwrap();
            let _ = stop_rx.recv();
        });
        let tid = rx.recv().unwrap();
        let after = task_ids(&dir).unwrap();
        stop_tx.send(()).unwrap();
        t.join().unwrap();
        assert!(
            !before.contains(&tid) && after.contains(&tid),
            "{tid} in {after:?}, not in {before:?}"
        );
        assert!(!task_ids(&dir).unwrap().contains(&tid), "a thread that ended is no longer listed");
    }

    #[test]
    fn a_process_started_between_two_walks_is_found_by_the_second() {
        let mut sh = std::process::Command::new("sh")
            .args(["-c", "read x; sleep 5 & wait"])
            .stdin(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let root = sh.id() as i32;
        let mut tree = Tree::new(root);
        let first = tree.walk();
        assert_eq!(
            first.iter().map(|&(p, _)| p).collect::<HashSet<_>>(),
            HashSet::from([root]),
            "{first:?}"
        );
        use std::io::Write;
        sh.stdin.take().unwrap().write_all(b"go\n").unwrap();
        let mut found = false;
        for _ in 0..200 {
            if tree.walk().iter().any(|&(p, _)| p != root) {
                found = true;
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        // SAFETY: kill on the processes this test started.
        for &(pid, _) in &tree.walk() {
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
        let _ = sh.wait();
        assert!(found, "the sleep started after the first walk");
        assert_eq!(
            tree.task_dirs.len() + tree.children.len(),
            4,
            "handles kept for sh and its sleep"
        );
    }

    #[test]
    fn a_process_that_ended_leaves_the_tree() {
        let mut sh = std::process::Command::new("sh")
            .args(["-c", "read x; exec sleep 5"])
            .stdin(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let root = sh.id() as i32;
        let mut tree = Tree::new(root);
        tree.scan(0, usize::MAX);
        assert!(tree.pids.contains(&root));
        // SAFETY: kill on the process this test started.
        unsafe { libc::kill(root, libc::SIGKILL) };
        let _ = sh.wait();
        tree.scan(0, usize::MAX);
        assert!(tree.pids.is_empty() && tree.task_dirs.is_empty(), "{:?}", tree.pids);
        tree.pids.insert(root);
        tree.tasks();
        assert!(tree.pids.is_empty(), "{:?}", tree.pids);
    }

    #[test]
    fn walking_the_children_finds_what_scanning_proc_finds() {
        // sh starts a child that starts a grandchild; both sleep while the tree is looked at.
        let mut sh = std::process::Command::new("sh")
            .args(["-c", "sleep 5 & sh -c 'sleep 5 & wait' & wait"])
            .spawn()
            .unwrap();
        let root = sh.id() as i32;
        let (mut walked, mut scanned) = (Tree::new(root), Tree::new(root));
        for _ in 0..200 {
            walked.scan(0, usize::MAX);
            if walked.pids.len() >= 4 {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        scanned.scan(0, 0);
        // SAFETY: kill on the processes this test started.
        for &pid in &walked.pids {
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
        let _ = sh.wait();
        assert_eq!(walked.pids.len(), 4, "sh, a sleep, a sh and its sleep: {:?}", walked.pids);
        assert_eq!(descendants(&walked, root), descendants(&scanned, root));
    }
}
