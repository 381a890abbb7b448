//! What a run leaves behind: scalescope is a child subreaper, so the daemons a run starts (double
//! fork, new session: out of reach of its process group) become scalescope's children when their
//! parent exits, and are found and killed after the run.

use crate::sample::procfs::{self, ProcFile};

/// Makes scalescope the reaper of orphans from its runs, so that a workload's daemons (double fork,
/// new session: out of reach of its process group) become scalescope's children when their parent
/// exits, and can be found and killed after the run.
pub fn become_subreaper() {
    // SAFETY: prctl with PR_SET_CHILD_SUBREAPER takes one integer argument.
    unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1 as libc::c_ulong, 0, 0, 0) };
}

/// Kills and reaps the children scalescope gained during a run (not those in `earlier`): orphans
/// of the run reparented to it. Killing one may orphan its own children, so it repeats until none
/// is left. Returns how many.
pub fn kill_strays(children: &mut Children, earlier: &[i32]) -> u32 {
    let mut killed = 0;
    for _ in 0..16 {
        let children: Vec<i32> =
            children.list().into_iter().filter(|c| !earlier.contains(c)).collect();
        if children.is_empty() {
            break;
        }
        for &c in &children {
            // An orphan that already exited (a launcher's short-lived helper) is only reaped.
            let zombie = std::fs::read_to_string(format!("/proc/{c}/stat"))
                .ok()
                .and_then(|s| procfs::stat(&s))
                .is_some_and(|s| s.state == 'Z');
            // SAFETY: kill and waitpid on our own children.
            unsafe {
                if !zombie {
                    libc::kill(c, libc::SIGKILL);
                }
                libc::waitpid(c, std::ptr::null_mut(), 0);
            }
            killed += u32::from(!zombie);
        }
    }
    killed
}

/// scalescope's children that orphans are handed to: those of its main thread. Linux gives a
/// subreaper's orphans to the first live thread of its thread group, the main thread while it
/// runs (`find_new_reaper`). The file is kept open: an open right after a run exits cost 50-70 µs
/// on the project's VM, a read of an open file a few.
pub(crate) struct Children(Option<ProcFile>);

impl Children {
    /// Opens the main thread's `children` file (none to read where /proc lacks it).
    pub fn open() -> Children {
        Children(ProcFile::open(std::path::Path::new(&format!(
            "/proc/self/task/{}/children",
            std::process::id()
        ))))
    }

    /// The children now.
    pub fn list(&mut self) -> Vec<i32> {
        let Some(text) = self.0.as_mut().and_then(ProcFile::read) else { return Vec::new() };
        text.split_ascii_whitespace().filter_map(|p| p.parse().ok()).collect()
    }
}
