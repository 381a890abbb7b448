//! Cold caches without privileges: write back and drop named files from the page cache with
//! `posix_fadvise(POSIX_FADV_DONTNEED)`, then measure with `mincore` how much stayed resident.
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
    /// Fraction of their pages still in the page cache right after eviction (0 = fully cold).
    pub resident_fraction: f64,
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
        matches!(self.source.kind(), std::io::ErrorKind::NotFound | std::io::ErrorKind::PermissionDenied)
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
    let (mut bytes, mut pages, mut resident) = (0u64, 0u64, 0u64);
    for f in &files {
        let (size, total, res) = evict_file(f).map_err(error(f))?;
        bytes += size;
        pages += total;
        resident += res;
    }
    let resident_fraction = if pages == 0 { 0.0 } else { resident as f64 / pages as f64 };
    Ok(Eviction { files: files.len() as u64, bytes, resident_fraction })
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

/// Returns (size in bytes, pages, pages still resident).
fn evict_file(path: &Path) -> std::io::Result<(u64, u64, u64)> {
    let file = File::open(path)?;
    let size = file.metadata()?.len();
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
    let (pages, resident) = residency(&file, size)?;
    Ok((size, pages, resident))
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
    let addr = unsafe { libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ, libc::MAP_SHARED, file.as_raw_fd(), 0) };
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
        assert!(e.resident_fraction < 0.05, "{}", e.resident_fraction);
    }

    #[test]
    fn missing_path_is_one_sentence() {
        let e = evict(&[PathBuf::from("/nonexistent/x")]).unwrap_err();
        assert_eq!(e.to_string(), "cannot evict '/nonexistent/x'");
        assert_eq!(e.source.kind(), std::io::ErrorKind::NotFound);
    }
}
