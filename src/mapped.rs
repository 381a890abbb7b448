//! Read-only memory maps of files: the probes read inputs through them without copying, and the
//! sampler reads ELF symbol tables without making them resident.

use std::fs::File;
use std::path::Path;

/// A file mapped read-only into memory; an empty file maps to an empty slice.
pub struct Mapped {
    ptr: *mut libc::c_void,
    len: usize,
}

// SAFETY: the mapping is read-only and private to this value; sharing `&[u8]` views is sound.
unsafe impl Send for Mapped {}
// SAFETY: as above: nothing writes through the mapping.
unsafe impl Sync for Mapped {}

impl Mapped {
    /// Maps the whole file at `path`.
    pub fn open(path: &Path) -> std::io::Result<Mapped> {
        let file = File::open(path)?;
        let len = usize::try_from(file.metadata()?.len()).map_err(std::io::Error::other)?;
        if len == 0 {
            return Ok(Mapped { ptr: std::ptr::null_mut(), len: 0 });
        }
        // SAFETY: a fresh private read-only mapping of an open file; checked for failure below.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_PRIVATE,
                std::os::fd::AsRawFd::as_raw_fd(&file),
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        Ok(Mapped { ptr, len })
    }

    /// Advises the kernel that the bytes will be read in order (more read-ahead).
    pub fn sequential(self) -> Mapped {
        if self.len > 0 {
            // SAFETY: advice on this value's own mapping; failure only loses a hint.
            unsafe { libc::madvise(self.ptr, self.len, libc::MADV_SEQUENTIAL) };
        }
        self
    }

    /// The file's bytes.
    pub fn bytes(&self) -> &[u8] {
        if self.len == 0 {
            return &[];
        }
        // SAFETY: `ptr` maps `len` readable bytes for as long as `self` lives.
        unsafe { std::slice::from_raw_parts(self.ptr as *const u8, self.len) }
    }
}

impl Drop for Mapped {
    fn drop(&mut self) {
        if self.len > 0 {
            // SAFETY: unmaps exactly the mapping made in `open`, once.
            unsafe { libc::munmap(self.ptr, self.len) };
        }
    }
}
