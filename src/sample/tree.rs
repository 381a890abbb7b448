//! Finding the run's processes and threads: the children of every task of the processes known
//! (or, for a big tree, new PIDs in /proc whose parent is in the tree), and the tasks of every
//! process known.

use super::procfs;
use std::collections::HashSet;

/// The processes of the tree and those seen outside it.
#[derive(Default)]
pub(crate) struct Tree {
    /// Processes in the tree.
    pub pids: HashSet<i32>,
    /// PIDs seen in /proc that are not part of the tree.
    outside: HashSet<i32>,
}

impl Tree {
    /// A tree rooted at `root`.
    pub fn new(root: i32) -> Tree {
        Tree { pids: HashSet::from([root]), outside: HashSet::new() }
    }

    /// Adds the processes born since the last look whose parent is in the tree. A tree of fewer
    /// than `walk_below` tasks is walked through its tasks' `children` files, which costs in
    /// proportion to the tree: the first look at /proc reads the status of every process on the
    /// machine (thousands on a big node), at the very start of the run it measures. A walk
    /// returns the tasks it went through: every task of the tree.
    pub fn scan(&mut self, tasks: usize, walk_below: usize) -> Option<Vec<(i32, i32)>> {
        if tasks < walk_below && children_listed() {
            // Processes once found stay (an orphan reparented to scalescope is still the run's).
            let tasks = procfs::tree_tasks(self.pids.iter().copied());
            self.pids.extend(tasks.iter().map(|&(pid, _)| pid));
            Some(tasks)
        } else {
            self.scan_proc();
            None
        }
    }

    /// Adds the new PIDs in /proc whose parent is in the tree.
    fn scan_proc(&mut self) {
        let Ok(dir) = std::fs::read_dir("/proc") else { return };
        // scalescope itself stays out, as in [`procfs::tree_tasks`].
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

    /// Every (pid, tid) of the processes known.
    pub fn tasks(&self) -> Vec<(i32, i32)> {
        let mut out = Vec::new();
        for &pid in &self.pids {
            let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else { continue };
            out.extend(
                tasks
                    .flatten()
                    .filter_map(|t| t.file_name().to_str().and_then(|s| s.parse::<i32>().ok()))
                    .map(|tid| (pid, tid)),
            );
        }
        out
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
    fn walking_the_children_finds_what_scanning_proc_finds() {
        // sh starts a child that starts a grandchild; both sleep while the tree is looked at.
        let mut sh =
            std::process::Command::new("sh").args(["-c", "sleep 5 & sh -c 'sleep 5 & wait' & wait"]).spawn().unwrap();
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
