//! Cold caches without privileges: write back and drop named files from the page cache with
//! `posix_fadvise(POSIX_FADV_DONTNEED)`, then measure with `mincore` how much stayed resident.
//! Since Linux 5.2 `mincore` reports every page of a file resident to a caller who neither owns
//! the file nor may write it; such files are evicted but not counted (`unchecked_bytes`).
//! Shared by the plan (checking `--evict` paths), the runs (evicting before each) and the probes.

use serde::{Deserialize, Serialize};
use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

/// How cold a run's input was: what was evicted and the fraction still cached afterwards.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema, PartialEq)]
pub struct Eviction {
    /// Regular files evicted.
    pub files: u64,
    /// Their total size.
    pub bytes: u64,
    /// Fraction of their pages still in the page cache right after eviction (0 = fully cold),
    /// over the files whose residency the kernel shows; `None` when it shows none of them.
    pub resident_fraction: Option<f64>,
    /// Bytes of files evicted but not checked: the kernel hides their page-cache state from a
    /// user who neither owns them nor may write them.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unchecked_bytes: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// A file or folder that could not be evicted (or read to check it).
#[derive(Debug, thiserror::Error)]
#[error("cannot evict '{}'", path.display())]
pub struct Error {
    /// The path.
    pub path: PathBuf,
    /// What the system said.
    #[source]
    pub source: std::io::Error,
}

impl Error {
    /// Whether the user can fix it by naming another path (a missing or unreadable file), rather
    /// than the system failing.
    pub fn is_user_mistake(&self) -> bool {
        matches!(
            self.source.kind(),
            std::io::ErrorKind::NotFound | std::io::ErrorKind::PermissionDenied
        )
    }
}

fn error(path: &Path) -> impl FnOnce(std::io::Error) -> Error + '_ {
    move |source| Error { path: path.to_path_buf(), source }
}

/// Evicts every file under `paths` (directories recursively, symlinks to files followed).
pub fn evict(paths: &[PathBuf]) -> Result<Eviction, Error> {
    let mut files = Vec::new();
    for p in paths {
        collect(p, &mut files).map_err(error(p))?;
    }
    let (mut bytes, mut pages, mut resident, mut unchecked_bytes) = (0u64, 0u64, 0u64, 0u64);
    let mut checked = false;
    for f in &files {
        let (size, seen) = evict_file(f).map_err(error(f))?;
        bytes += size;
        match seen {
            Some((total, res)) => {
                checked = true;
                pages += total;
                resident += res;
            }
            None => unchecked_bytes += size,
        }
    }
    let resident_fraction =
        checked.then(|| if pages == 0 { 0.0 } else { resident as f64 / pages as f64 });
    Ok(Eviction { files: files.len() as u64, bytes, resident_fraction, unchecked_bytes })
}

/// Checks that every path exists and can be read, without evicting anything.
pub fn check(paths: &[PathBuf]) -> Result<(), Error> {
    for p in paths {
        for f in files_under(std::slice::from_ref(p)).map_err(error(p))? {
            File::open(&f).map_err(error(&f))?;
        }
    }
    Ok(())
}

/// The regular files under `paths` (directories recursively, in name order).
pub fn files_under(paths: &[PathBuf]) -> std::io::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for p in paths {
        collect(p, &mut out)?;
    }
    Ok(out)
}

fn collect(path: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    let meta = std::fs::metadata(path)?;
    if meta.is_dir() {
        let mut entries: Vec<_> = std::fs::read_dir(path)?.collect::<Result<_, _>>()?;
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            if !e.file_type()?.is_symlink() {
                collect(&e.path(), out)?;
            }
        }
    } else if meta.is_file() {
        out.push(path.to_path_buf());
    }
    Ok(())
}

/// Returns the size in bytes and, where the kernel shows it, (pages, pages still resident).
fn evict_file(path: &Path) -> std::io::Result<(u64, Option<(u64, u64)>)> {
    let file = File::open(path)?;
    let meta = file.metadata()?;
    let size = meta.len();
    let fd = file.as_raw_fd();
    // SAFETY: fd is an open descriptor owned by `file` for the duration of these calls.
    unsafe {
        // Dirty pages cannot be dropped: write them back first (fails harmlessly on read-only mounts).
        libc::fdatasync(fd);
        let rc = libc::posix_fadvise(fd, 0, 0, libc::POSIX_FADV_DONTNEED);
        if rc != 0 {
            return Err(std::io::Error::from_raw_os_error(rc));
        }
    }
    if !residency_shown(path, &meta) {
        return Ok((size, None));
    }
    Ok((size, Some(residency(&file, size)?)))
}

/// Whether `mincore` tells this process the truth about the file's pages: Linux (since 5.2) shows
/// them only to the file's owner, to whoever may write it, and to a privileged user.
fn residency_shown(path: &Path, meta: &std::fs::Metadata) -> bool {
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::MetadataExt;
    // SAFETY: geteuid has no preconditions.
    let euid = unsafe { libc::geteuid() };
    if euid == 0 || meta.uid() == euid {
        return true;
    }
    let Ok(c) = std::ffi::CString::new(path.as_os_str().as_bytes()) else { return false };
    // SAFETY: c is a NUL-terminated path; AT_EACCESS checks with the effective ids, as the kernel does.
    unsafe { libc::faccessat(libc::AT_FDCWD, c.as_ptr(), libc::W_OK, libc::AT_EACCESS) == 0 }
}

/// Pages of the file and how many of them are in the page cache.
pub fn residency(file: &File, size: u64) -> std::io::Result<(u64, u64)> {
    if size == 0 {
        return Ok((0, 0));
    }
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(4096) as u64;
    let pages = size.div_ceil(page);
    let len = size as usize;
    // SAFETY: a read-only shared mapping of an open file; unmapped below. Mapping does not fault pages in.
    let addr = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ,
            libc::MAP_SHARED,
            file.as_raw_fd(),
            0,
        )
    };
    if addr == libc::MAP_FAILED {
        return Err(std::io::Error::last_os_error());
    }
    let mut vec = vec![0u8; pages as usize];
    // SAFETY: vec has one byte per page of the mapping.
    let rc = unsafe { libc::mincore(addr, len, vec.as_mut_ptr()) };
    let err = std::io::Error::last_os_error();
    unsafe { libc::munmap(addr, len) };
    if rc != 0 {
        return Err(err);
    }
    Ok((pages, vec.iter().filter(|&&b| b & 1 == 1).count() as u64))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    #[test]
    fn a_written_and_read_file_ends_up_cold() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("data.bin");
        let mut f = File::create(&path).unwrap();
        f.write_all(&vec![7u8; 8 << 20]).unwrap();
        drop(f);
        let mut buf = Vec::new();
        File::open(&path).unwrap().read_to_end(&mut buf).unwrap();
        let (_, before) = residency(&File::open(&path).unwrap(), 8 << 20).unwrap();
        assert!(before > 0, "the file should be cached after reading it");
        let e = evict(&[dir.path().to_path_buf()]).unwrap();
        assert_eq!((e.files, e.bytes), (1, 8 << 20));
        assert!(e.resident_fraction.unwrap() < 0.05, "{:?}", e.resident_fraction);
        assert_eq!(e.unchecked_bytes, 0);
    }

    #[test]
    fn missing_path_is_one_sentence() {
        let e = evict(&[PathBuf::from("/nonexistent/x")]).unwrap_err();
        assert_eq!(e.to_string(), "cannot evict '/nonexistent/x'");
        assert_eq!(e.source.kind(), std::io::ErrorKind::NotFound);
    }
}
