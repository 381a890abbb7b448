//! Whether a results folder may say what `--resume` runs: the command and hooks recorded in it
//! are code, and on a shared file system someone else may have chosen them.

use super::FILE_NAME;
use super::journal::JOURNAL;
use std::ffi::CStr;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// Why `--resume` will not run what a results folder records without `--trust`: the command
/// and hooks in it are code, and on a shared file system someone else may have chosen them.
#[derive(Debug, thiserror::Error)]
pub enum Untrusted {
    /// Owned by another user.
    #[error(
        "{} belongs to another user (uid {owner}); --resume would run the command and hooks recorded in it: read them (scalescope show), then add --trust",
        path.display()
    )]
    Owner {
        /// The folder or file.
        path: PathBuf,
        /// Its owner.
        owner: u32,
    },
    /// Writable by its group or by anyone.
    #[error(
        "{} can be written by {who}; --resume would run the command and hooks recorded in it: read them (scalescope show), then add --trust, or chmod go-w it",
        path.display()
    )]
    Writable {
        /// The folder or file.
        path: PathBuf,
        /// `its group`, `anyone`.
        who: &'static str,
    },
    /// A symbolic link where the results file should be.
    #[error("{} is a symbolic link; --resume reads only a plain results file (add --trust to follow it)", path.display())]
    Link {
        /// The link.
        path: PathBuf,
    },
}

/// Checks that the folder and its results files belong to this user and that only this user may
/// write them.
pub fn check_owned(dir: &Path) -> Result<(), Untrusted> {
    // SAFETY: geteuid has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    let folder = std::fs::metadata(dir).ok().map(|m| (dir.to_path_buf(), m));
    let files = [FILE_NAME, JOURNAL].into_iter().filter_map(|name| {
        let path = dir.join(name);
        std::fs::symlink_metadata(&path).ok().map(|m| (path, m))
    });
    for (path, m) in folder.into_iter().chain(files) {
        if m.file_type().is_symlink() {
            return Err(Untrusted::Link { path });
        }
        if m.uid() != me {
            return Err(Untrusted::Owner { path, owner: m.uid() });
        }
        let group_writes = m.mode() & 0o020 != 0 && !private_group(m.gid());
        let who = match (group_writes, m.mode() & 0o002 != 0) {
            (_, true) => "anyone",
            (true, false) => "its group",
            (false, false) => continue,
        };
        return Err(Untrusted::Writable { path, who });
    }
    Ok(())
}

/// Whether `gid` is this user's own group (named after the user, no other member): where each
/// user has one (the umask 002 of many distributions), group-writable means the user alone.
fn private_group(gid: u32) -> bool {
    let mut buf = vec![0 as libc::c_char; 16 * 1024];
    // SAFETY: the _r lookups fill the structs and `buf`; the pointers are read only while `buf` lives.
    unsafe {
        let mut pw: libc::passwd = std::mem::zeroed();
        let mut gr: libc::group = std::mem::zeroed();
        let (mut pwp, mut grp) = (std::ptr::null_mut(), std::ptr::null_mut());
        let half = buf.len() / 2;
        let (user_buf, group_buf) = buf.split_at_mut(half);
        if libc::getpwuid_r(libc::geteuid(), &mut pw, user_buf.as_mut_ptr(), half, &mut pwp) != 0
            || pwp.is_null()
        {
            return false;
        }
        if libc::getgrgid_r(gid, &mut gr, group_buf.as_mut_ptr(), half, &mut grp) != 0
            || grp.is_null()
        {
            return false;
        }
        let no_members = gr.gr_mem.is_null() || (*gr.gr_mem).is_null();
        pw.pw_gid == gid && no_members && CStr::from_ptr(pw.pw_name) == CStr::from_ptr(gr.gr_name)
    }
}
