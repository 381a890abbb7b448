//! What a run leaves behind: scalescope is a child subreaper, so the daemons a run starts (double
//! fork, new session: out of reach of its process group) become scalescope's children when their
//! parent exits, and are found and killed after the run.

use crate::sample::procfs;

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
pub fn kill_strays(earlier: &[i32]) -> u32 {
    let mut killed = 0;
    for _ in 0..16 {
        let children: Vec<i32> = own_children().into_iter().filter(|c| !earlier.contains(c)).collect();
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

/// The children of every thread of this process.
pub(crate) fn own_children() -> Vec<i32> {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else { return Vec::new() };
    tasks
        .flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("children")).ok())
        .flat_map(|c| c.split_ascii_whitespace().filter_map(|p| p.parse().ok()).collect::<Vec<i32>>())
        .collect()
}
