//! `overlap`: an event loop over files. Threads read chunks of event files (see [`super::events`])
//! and build the events in them (parse each header, checksum the payload, spend a fixed CPU cost).
//! With overlap off each thread reads a chunk, then builds it, in turn; with overlap on each
//! builder has a reader thread filling one buffer while it builds from the other (double
//! buffering), so reading hides behind building.

use super::chunks::{Chunks, open_all};
use super::error::ProbeError;
use super::events;
use super::spin::Spin;
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::PathBuf;
use std::sync::mpsc::sync_channel;
use std::time::Instant;

/// What to read and build.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// Builder threads (with overlap on, each also has a reader thread).
    pub threads: usize,
    /// Bytes per chunk (a multiple of the 1 MiB event block).
    pub chunk: usize,
    /// CPU cost of building one event, in nanoseconds.
    pub cost_ns: f64,
    /// Read the next chunk while building the current one.
    pub overlap: bool,
}

/// What a run built.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Outcome {
    /// Events built.
    pub events: u64,
    /// Bytes read.
    pub bytes: u64,
    /// Order-independent checksum of the events (ids and payloads): equal in both modes.
    pub checksum: u64,
    /// Wall time.
    pub seconds: f64,
}

type Chunk = (usize, u64);

/// Reads and builds every event of `files`.
pub fn run(files: &[PathBuf], o: &Options) -> Result<Outcome, ProbeError> {
    if o.chunk == 0 || !o.chunk.is_multiple_of(events::BLOCK) {
        return Err(ProbeError::Chunk {
            chunk: o.chunk as u64,
            unit: "the 1 MiB event block, e.g. 4MiB".into(),
        });
    }
    let opened = open_all(files, 0)?;
    let chunks = Chunks::new(opened.iter().map(|(_, len)| *len), o.chunk as u64);
    let spin = Spin::calibrate();
    let take = || chunks.take();
    let read = |(i, at): Chunk, buf: &mut Vec<u8>| -> Result<(), ProbeError> {
        let len = (opened[i].1 - at).min(o.chunk as u64) as usize;
        buf.resize(len, 0);
        opened[i]
            .0
            .read_exact_at(buf, at)
            .map_err(|e| ProbeError::Read { path: files[i].clone(), source: e })
    };
    let build = |(i, at): Chunk, buf: &[u8], acc: &mut Outcome| -> Result<(), ProbeError> {
        let mut sum = 0u64;
        let n = events::for_each(buf, |e| {
            let payload = e.payload.chunks(8).fold(0u64, |a, w| {
                let mut v = [0u8; 8];
                v[..w.len()].copy_from_slice(w);
                a.rotate_left(1) ^ u64::from_le_bytes(v)
            });
            std::hint::black_box(spin.burn(o.cost_ns, payload));
            sum = sum.wrapping_add(e.id.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ payload);
        })
        .map_err(|off| ProbeError::NotEvents { path: files[i].clone(), at: at + off as u64 })?;
        acc.events += n;
        acc.bytes += buf.len() as u64;
        acc.checksum = acc.checksum.wrapping_add(sum);
        Ok(())
    };
    let start = Instant::now();
    let parts: Vec<Result<Outcome, ProbeError>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..o.threads.max(1))
            .map(|_| {
                s.spawn(|| {
                    let mut acc = Outcome { events: 0, bytes: 0, checksum: 0, seconds: 0.0 };
                    if !o.overlap {
                        let mut buf = Vec::new();
                        while let Some(c) = take() {
                            read(c, &mut buf)?;
                            build(c, &buf, &mut acc)?;
                        }
                        return Ok(acc);
                    }
                    let (full_tx, full_rx) =
                        sync_channel::<Result<(Chunk, Vec<u8>), ProbeError>>(1);
                    let (free_tx, free_rx) = sync_channel::<Vec<u8>>(2);
                    let (take, read) = (&take, &read);
                    free_tx.send(Vec::new()).ok();
                    free_tx.send(Vec::new()).ok();
                    std::thread::scope(|inner| {
                        inner.spawn(move || {
                            while let Ok(mut buf) = free_rx.recv() {
                                let Some(c) = take() else { break };
                                let r = read(c, &mut buf).map(|()| (c, buf));
                                if full_tx.send(r).is_err() {
                                    break;
                                }
                            }
                        });
                        // Owns both channel ends, so that an error drops them and the reader stops.
                        let mut builder = move || {
                            while let Ok(r) = full_rx.recv() {
                                let (c, buf) = r?;
                                build(c, &buf, &mut acc)?;
                                free_tx.send(buf).ok();
                            }
                            Ok(acc)
                        };
                        builder()
                    })
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or(Err(ProbeError::Panicked("builder"))))
            .collect()
    });
    let mut total =
        Outcome { events: 0, bytes: 0, checksum: 0, seconds: start.elapsed().as_secs_f64() };
    for p in parts {
        let p = p?;
        total.events += p.events;
        total.bytes += p.bytes;
        total.checksum = total.checksum.wrapping_add(p.checksum);
    }
    Ok(total)
}

/// Prints the result: a line for people and metric lines for the harness.
pub fn print(o: &Options, r: &Outcome) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    let rate = |n: u64| if r.seconds > 0.0 { n as f64 / r.seconds } else { 0.0 };
    writeln!(
        out,
        "overlap: {} threads, overlap {}, {} chunks, {} ns per event: {} events in {:.3} s = {:.0} events/s, {:.3} GB/s (10^9 bytes); checksum {:#018x}",
        o.threads,
        if o.overlap { "on" } else { "off" },
        super::binary_size(o.chunk as u64),
        o.cost_ns,
        r.events,
        r.seconds,
        rate(r.events),
        rate(r.bytes) / 1e9,
        r.checksum
    )?;
    super::print_metrics(
        &mut out,
        &[("throughput", rate(r.events), "events/s"), ("bytes_per_s", rate(r.bytes), "B/s")],
    )?;
    out.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_modes_build_the_same_events() {
        let d = tempfile::tempdir().unwrap();
        let files =
            super::super::inputs::files(d.path(), 3, 3 * events::BLOCK as u64 + 777, 4).unwrap();
        let mut seen = Vec::new();
        for (threads, overlap) in [(1, false), (1, true), (3, false), (2, true)] {
            let o =
                run(&files, &Options { threads, chunk: 2 * events::BLOCK, cost_ns: 10.0, overlap })
                    .unwrap();
            seen.push((o.events, o.bytes, o.checksum));
        }
        assert!(seen[0].0 > 1000 && seen[0].1 == 3 * (3 * events::BLOCK as u64 + 777));
        assert!(seen.iter().all(|s| *s == seen[0]), "{seen:?}");
    }

    #[test]
    fn a_file_that_is_not_events_is_named() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("text");
        std::fs::write(&p, "hello world, this is not an event file at all ".repeat(100_000))
            .unwrap();
        for overlap in [false, true] {
            let e = run(
                std::slice::from_ref(&p),
                &Options { threads: 1, chunk: events::BLOCK, cost_ns: 0.0, overlap },
            )
            .unwrap_err();
            assert!(matches!(&e, ProbeError::NotEvents { path, at: 0 } if *path == p), "{e}");
        }
    }
}
