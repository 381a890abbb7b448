//! Finding the run's processes and threads: new PIDs in /proc whose parent is in the tree, and the
//! tasks of every process known.

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

    /// Adds the processes born since the last scan whose parent is in the tree.
    pub fn scan(&mut self) {
        let Ok(dir) = std::fs::read_dir("/proc") else { return };
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
