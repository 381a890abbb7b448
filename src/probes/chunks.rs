//! Work cut into chunks that threads take as they become free, so a slow thread never idles the
//! others; and input files opened with their lengths. Shared by readspeed, wordcount and overlap.

use super::error::ProbeError;
use std::fs::File;
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Chunks `(input, offset)` of `size` bytes over inputs of the given lengths, handed out in order.
pub struct Chunks {
    list: Vec<(usize, u64)>,
    next: AtomicUsize,
}

impl Chunks {
    /// Cuts inputs of `lens` bytes into chunks of `size` bytes (the last of each input shorter).
    pub fn new(lens: impl IntoIterator<Item = u64>, size: u64) -> Chunks {
        let size = size.max(1);
        let list = lens
            .into_iter()
            .enumerate()
            .flat_map(|(i, len)| (0..len.div_ceil(size)).map(move |k| (i, k * size)))
            .collect();
        Chunks { list, next: AtomicUsize::new(0) }
    }

    /// The next chunk not taken yet, by any thread.
    pub fn take(&self) -> Option<(usize, u64)> {
        self.list.get(self.next.fetch_add(1, Ordering::Relaxed)).copied()
    }
}

/// Opens every file (with extra `open` flags) and reads its length; errors name the file.
pub fn open_all(files: &[PathBuf], flags: i32) -> Result<Vec<(File, u64)>, ProbeError> {
    files
        .iter()
        .map(|p| {
            let f = std::fs::OpenOptions::new().read(true).custom_flags(flags).open(p).map_err(
                |e| match e.raw_os_error() {
                    Some(libc::EINVAL) if flags & libc::O_DIRECT != 0 => {
                        ProbeError::NoDirect(p.clone())
                    }
                    _ => ProbeError::Open { what: "open", path: p.clone(), source: e },
                },
            )?;
            let len = f
                .metadata()
                .map_err(|e| ProbeError::Open { what: "measure", path: p.clone(), source: e })?
                .len();
            Ok((f, len))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn chunks_cover_every_byte_once_in_order() {
        let c = super::Chunks::new([10, 0, 4], 4);
        let all: Vec<_> = std::iter::from_fn(|| c.take()).collect();
        assert_eq!(all, [(0, 0), (0, 4), (0, 8), (2, 0)]);
        assert_eq!(c.take(), None);
    }
}
