//! Writing files without ever following a symbolic link planted at their name (a results folder
//! may be shared, or prepared by someone else): a link there is an error, not a redirection.
//! Files get the user's umask like any other.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// A file that could not be written: its path, with the system's error as the source.
#[derive(Debug, thiserror::Error)]
#[error("cannot write {}", path.display())]
pub struct WriteError {
    /// The file.
    pub path: PathBuf,
    /// What the system said.
    pub source: std::io::Error,
}

/// Creates or truncates `path` and writes `bytes`; refuses when `path` is a symbolic link.
pub fn write(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ELOOP) => std::io::Error::other(
                "it is a symbolic link, which scalescope does not write through",
            ),
            _ => e,
        })?;
    f.write_all(bytes)
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_planted_symlink_is_refused_and_its_target_untouched() {
        let d = tempfile::tempdir().unwrap();
        let victim = d.path().join("victim");
        std::fs::write(&victim, "keep").unwrap();
        std::os::unix::fs::symlink(&victim, d.path().join("link")).unwrap();
        let e = super::write(&d.path().join("link"), b"overwritten").unwrap_err();
        assert!(e.to_string().contains("symbolic link"), "{e}");
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
        super::write(&d.path().join("plain"), b"x").unwrap();
        assert_eq!(std::fs::read(d.path().join("plain")).unwrap(), b"x");
    }
}
