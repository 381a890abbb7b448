//! Input data for the probes, deterministic for a seed. `scalescope gen files` writes event files
//! (see [`super::events`]) whose payloads are pseudo-random bytes, incompressible so that no layer
//! can shortcut reading them; `scalescope gen text` writes text for `wordcount`.

use super::events;
use crate::stats::Rng;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Writes `count` event files of `size` bytes named `data-000.bin`… into `dir`; returns their paths.
pub fn files(dir: &Path, count: usize, size: u64, seed: u64) -> std::io::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir)?;
    let mut rng = Rng::new(seed);
    let mut paths = Vec::with_capacity(count);
    let mut block = vec![0u8; events::BLOCK];
    let mut id = 0u64;
    for i in 0..count {
        let path = dir.join(format!("data-{i:03}.bin"));
        let mut f = std::io::BufWriter::new(std::fs::File::create(&path)?);
        let mut left = size;
        while left > 0 {
            let n = left.min(block.len() as u64) as usize;
            events::fill_block(&mut block[..n], &mut id, || rng.next_u64());
            f.write_all(&block[..n])?;
            left -= n as u64;
        }
        f.flush()?;
        paths.push(path);
    }
    Ok(paths)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_same_seed_gives_the_same_bytes() {
        let d = tempfile::tempdir().unwrap();
        let a = super::files(&d.path().join("a"), 2, 3000, 7).unwrap();
        let b = super::files(&d.path().join("b"), 2, 3000, 7).unwrap();
        let c = super::files(&d.path().join("c"), 1, 3000, 8).unwrap();
        assert_eq!(std::fs::read(&a[1]).unwrap(), std::fs::read(&b[1]).unwrap());
        assert_ne!(std::fs::read(&a[0]).unwrap(), std::fs::read(&c[0]).unwrap());
        assert_eq!(std::fs::metadata(&a[0]).unwrap().len(), 3000);
        let events =
            super::super::events::for_each(&std::fs::read(&a[0]).unwrap(), |_| ()).unwrap();
        assert!(events >= 1, "{events}");
    }
}
