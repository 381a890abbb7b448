//! `readspeed`: the ceiling of what the I/O layer delivers. Threads read a set of files in
//! chunks handed out as threads become free (so a slow thread never idles the others), with
//! buffered `pread`, through `mmap`, or with `O_DIRECT`; optional work per KiB turns it into a
//! model of an event loop.

use super::chunks::{Chunks, open_all};
use super::error::ProbeError;
use super::spin::Spin;
use crate::mapped::Mapped;
use std::fs::File;
use std::hint::black_box;
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::PathBuf;
use std::time::Instant;

/// How the bytes are read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// `pread` into a buffer of the block size, through the page cache.
    Pread,
    /// Map the files and touch every page (or every byte with a checksum).
    Mmap,
    /// `pread` with `O_DIRECT`, bypassing the page cache (aligned buffer).
    Direct,
}

/// What to read and how.
#[derive(Clone, Debug)]
pub struct Options {
    /// Reader threads.
    pub threads: usize,
    /// How to read.
    pub mode: Mode,
    /// Bytes per read call (a multiple of 4096).
    pub block: usize,
    /// Bytes per chunk handed to a thread (a multiple of the block).
    pub chunk: u64,
    /// CPU work per KiB read, in nanoseconds.
    pub compute_ns_per_kib: f64,
    /// Checksum every byte (see [`checksum`]).
    pub checksum: bool,
}

/// What a read found.
#[derive(Clone, Copy, Debug)]
pub struct Outcome {
    /// Bytes read.
    pub bytes: u64,
    /// Wall time of the reading (files already opened).
    pub seconds: f64,
    /// The checksum of all files, when asked for.
    pub checksum: Option<u64>,
}

/// Reads every byte of `files` once.
pub fn run(files: &[PathBuf], o: &Options) -> Result<Outcome, ProbeError> {
    if o.block == 0 || !o.block.is_multiple_of(4096) {
        return Err(ProbeError::Block(o.block));
    }
    if o.chunk == 0 || !o.chunk.is_multiple_of(o.block as u64) {
        return Err(ProbeError::Chunk {
            chunk: o.chunk,
            unit: format!("the block size ({})", super::binary_size(o.block as u64)),
        });
    }
    let opened = open_all(files, if o.mode == Mode::Direct { libc::O_DIRECT } else { 0 })?;
    let maps = match o.mode {
        Mode::Mmap => files
            .iter()
            .map(|p| {
                Mapped::open(p).map(Mapped::sequential).map_err(|e| ProbeError::Open {
                    what: "map",
                    path: p.clone(),
                    source: e,
                })
            })
            .collect::<Result<Vec<_>, _>>()?,
        _ => Vec::new(),
    };
    let chunks = Chunks::new(opened.iter().map(|(_, len)| *len), o.chunk);
    let spin = (o.compute_ns_per_kib > 0.0).then(Spin::calibrate);
    let start = Instant::now();
    let results: Vec<Result<(u64, u64), ProbeError>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..o.threads.max(1))
            .map(|_| {
                s.spawn(|| {
                    let mut buf = AlignedBuf::new(if o.mode == Mode::Mmap { 0 } else { o.block });
                    let (mut bytes, mut sum) = (0u64, 0u64);
                    while let Some((i, at)) = chunks.take() {
                        let end = (at + o.chunk).min(opened[i].1);
                        let (b, c) = match o.mode {
                            Mode::Mmap => {
                                touch(&maps[i].bytes()[at as usize..end as usize], i, at, o, spin)
                            }
                            _ => read_range(&opened[i].0, buf.as_mut(), i, at, end, o, spin)
                                .map_err(|e| ProbeError::Read {
                                    path: files[i].clone(),
                                    source: e,
                                })?,
                        };
                        bytes += b;
                        sum = sum.wrapping_add(c);
                    }
                    Ok((bytes, sum))
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or(Err(ProbeError::Panicked("reader"))))
            .collect()
    });
    let seconds = start.elapsed().as_secs_f64();
    let (mut bytes, mut sum) = (0u64, 0u64);
    for r in results {
        let (b, c) = r?;
        bytes += b;
        sum = sum.wrapping_add(c);
    }
    Ok(Outcome { bytes, seconds, checksum: o.checksum.then_some(sum) })
}

/// Prints the result: a line for people (MB = 10^6 bytes) and metric lines for the harness.
pub fn print(o: &Options, r: &Outcome) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    let rate = if r.seconds > 0.0 { r.bytes as f64 / r.seconds } else { 0.0 };
    let how = match o.mode {
        Mode::Pread => format!("pread {} blocks", super::binary_size(o.block as u64)),
        Mode::Mmap => "mmap".to_string(),
        Mode::Direct => format!("O_DIRECT {} blocks", super::binary_size(o.block as u64)),
    };
    let work = if o.compute_ns_per_kib > 0.0 {
        format!(", {} ns of work per KiB", o.compute_ns_per_kib)
    } else {
        String::new()
    };
    writeln!(
        out,
        "readspeed: {} threads, {how}{work}: {} bytes in {:.3} s = {:.1} MB/s (1 MB = 10^6 bytes)",
        o.threads,
        r.bytes,
        r.seconds,
        rate / 1e6
    )?;
    if let Some(c) = r.checksum {
        writeln!(out, "checksum {c:#018x}")?;
    }
    super::print_metrics(&mut out, &[("throughput", rate, "B/s"), ("bytes", r.bytes as f64, "B")])?;
    out.flush()
}

/// Reads `[at, end)` of file number `file` block by block; returns (bytes, checksum part).
fn read_range(
    f: &File,
    buf: &mut [u8],
    file: usize,
    mut at: u64,
    end: u64,
    o: &Options,
    spin: Option<Spin>,
) -> std::io::Result<(u64, u64)> {
    let (mut bytes, mut sum) = (0u64, 0u64);
    while at < end {
        let want = buf.len().min((end - at) as usize);
        let want = if o.mode == Mode::Direct { buf.len() } else { want };
        let n = f.read_at(&mut buf[..want], at)?;
        if n == 0 {
            break;
        }
        let n = n.min((end - at) as usize);
        if o.checksum {
            sum = sum.wrapping_add(checksum(&buf[..n], file, at));
        }
        if let Some(s) = spin {
            black_box(s.burn(o.compute_ns_per_kib * n as f64 / 1024.0, at));
        }
        bytes += n as u64;
        at += n as u64;
    }
    Ok((bytes, sum))
}

/// "Reads" mapped bytes: every byte with a checksum, else one byte per page.
fn touch(data: &[u8], file: usize, at: u64, o: &Options, spin: Option<Spin>) -> (u64, u64) {
    let sum = if o.checksum {
        checksum(data, file, at)
    } else {
        data.iter().step_by(4096).fold(0u64, |a, &b| a.wrapping_add(u64::from(b)))
    };
    if let Some(s) = spin {
        black_box(s.burn(o.compute_ns_per_kib * data.len() as f64 / 1024.0, at));
    }
    (data.len() as u64, black_box(sum))
}

/// The checksum of `data` found at byte `at` of file number `file`: the wrapping sum over the
/// files' little-endian 64-bit words of word × (2k + 1), k the word's index (file number in the
/// top bits). Parts add up, so chunks can be summed in any order and compared with a plain read.
pub fn checksum(data: &[u8], file: usize, at: u64) -> u64 {
    let base = (file as u64) << 40;
    let weight = |pos: u64| 2 * (base + pos / 8) + 1;
    let mut sum = 0u64;
    let head = ((8 - at % 8) % 8).min(data.len() as u64) as usize;
    for (j, &b) in data[..head].iter().enumerate() {
        let pos = at + j as u64;
        sum = sum.wrapping_add((u64::from(b) << (8 * (pos % 8))).wrapping_mul(weight(pos)));
    }
    let body = &data[head..];
    let words = body.chunks_exact(8);
    let tail = words.remainder();
    let mut k = weight(at + head as u64);
    for w in words {
        sum =
            sum.wrapping_add(u64::from_le_bytes(w.try_into().unwrap_or_default()).wrapping_mul(k));
        k = k.wrapping_add(2);
    }
    let tail_at = at + (data.len() - tail.len()) as u64;
    for (j, &b) in tail.iter().enumerate() {
        let pos = tail_at + j as u64;
        sum = sum.wrapping_add((u64::from(b) << (8 * (pos % 8))).wrapping_mul(weight(pos)));
    }
    sum
}

/// A zeroed buffer aligned to 4096 bytes, as `O_DIRECT` needs.
struct AlignedBuf {
    ptr: *mut u8,
    len: usize,
}

impl AlignedBuf {
    fn new(len: usize) -> AlignedBuf {
        if len == 0 {
            return AlignedBuf { ptr: std::ptr::null_mut(), len: 0 };
        }
        let layout = std::alloc::Layout::from_size_align(len, 4096)
            .unwrap_or_else(|_| std::process::abort());
        // SAFETY: a non-zero-sized layout; a null result is handled by `handle_alloc_error`.
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
        if ptr.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        AlignedBuf { ptr, len }
    }

    fn as_mut(&mut self) -> &mut [u8] {
        if self.len == 0 {
            return &mut [];
        }
        // SAFETY: `ptr` owns `len` initialised bytes for as long as `self` lives.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        if self.len > 0 {
            // SAFETY: frees the allocation made in `new` with the same layout.
            unsafe {
                std::alloc::dealloc(
                    self.ptr,
                    std::alloc::Layout::from_size_align_unchecked(self.len, 4096),
                )
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(mode: Mode, threads: usize) -> Options {
        Options {
            threads,
            mode,
            block: 8192,
            chunk: 16384,
            compute_ns_per_kib: 0.0,
            checksum: true,
        }
    }

    #[test]
    fn every_mode_reads_exactly_the_files_bytes() {
        let d = tempfile::tempdir_in(concat!(env!("CARGO_MANIFEST_DIR"), "/target")).unwrap();
        let mut files = super::super::inputs::files(d.path(), 3, 100_003, 9).unwrap();
        std::fs::write(d.path().join("empty"), b"").unwrap();
        files.push(d.path().join("empty"));
        let want: u64 = files
            .iter()
            .enumerate()
            .map(|(i, p)| checksum(&std::fs::read(p).unwrap(), i, 0))
            .fold(0, u64::wrapping_add);
        for mode in [Mode::Pread, Mode::Mmap, Mode::Direct] {
            for threads in [1, 3] {
                match run(&files, &options(mode, threads)) {
                    Ok(o) => assert_eq!(
                        (o.bytes, o.checksum),
                        (300_009, Some(want)),
                        "{mode:?} {threads}"
                    ),
                    Err(ProbeError::NoDirect(_)) if mode == Mode::Direct => {}
                    Err(e) => panic!("{mode:?}: {e}"),
                }
            }
        }
    }

    #[test]
    fn checksum_parts_add_up_whatever_the_split() {
        let data: Vec<u8> = (0..1000u32).map(|i| (i * 7 + 3) as u8).collect();
        let whole = checksum(&data, 2, 0);
        for cut in [1, 7, 8, 9, 500, 999] {
            assert_eq!(
                checksum(&data[..cut], 2, 0).wrapping_add(checksum(&data[cut..], 2, cut as u64)),
                whole
            );
        }
        assert_ne!(checksum(&data, 1, 0), whole);
    }

    #[test]
    fn bad_sizes_are_refused_with_a_reason() {
        let mut o = options(Mode::Pread, 1);
        o.block = 1000;
        assert!(matches!(run(&[], &o), Err(ProbeError::Block(1000))));
        o.block = 8192;
        o.chunk = 10_000;
        assert!(matches!(run(&[], &o), Err(ProbeError::Chunk { chunk: 10_000, .. })));
    }
}
