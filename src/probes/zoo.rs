//! Workloads with exactly one known scaling problem each, and a knob that removes it. They do a
//! fixed total amount of work (strong scaling) and print a `throughput` metric in ops/s.

use crate::pagecache;
use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::Instant;

/// One unit of CPU work: a few rounds of a 64-bit mixing function; returns the new state.
#[inline]
pub fn mix(mut x: u64, rounds: u32) -> u64 {
    for _ in 0..rounds {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    black_box(x)
}

/// Rounds of [`mix`] per operation.
const ROUNDS: u32 = 200;

/// Runs `f(thread index)` on `n` threads and returns (total ops, seconds).
fn parallel(n: usize, f: impl Fn(usize) -> u64 + Sync) -> (u64, f64) {
    let start = Instant::now();
    let ops = std::thread::scope(|s| {
        let f = &f;
        let handles: Vec<_> = (0..n)
            .map(|t| {
                std::thread::Builder::new()
                    .name(format!("worker-{t}"))
                    .spawn_scoped(s, move || f(t))
            })
            .collect();
        handles.into_iter().map(|h| h.ok().and_then(|h| h.join().ok()).unwrap_or(0)).sum()
    });
    (ops, start.elapsed().as_secs_f64())
}

/// The lock every thread of the `lock` probe contends for.
pub static GLOBAL_LOCK: Mutex<u64> = Mutex::new(0);

/// Operations of the `lock` probe are this many times bigger, so that a waiter blocks in the
/// kernel instead of spinning through a critical section of a few nanoseconds.
const LOCK_GRAIN: u64 = 100;

/// `lock`: each operation spends `critical` of its work inside one global mutex.
pub fn lock(threads: usize, ops: u64, critical: f64) -> (u64, f64) {
    let rounds = ROUNDS * LOCK_GRAIN as u32;
    let inside = (rounds as f64 * critical.clamp(0.0, 1.0)).round() as u32;
    let outside = rounds - inside;
    parallel(threads, |t| {
        let share = ops / LOCK_GRAIN / threads as u64;
        let mut x = t as u64 + 1;
        for _ in 0..share {
            x = mix(x, outside);
            if inside > 0 {
                let mut g = GLOBAL_LOCK.lock().unwrap_or_else(|e| e.into_inner());
                *g = mix(*g ^ x, inside);
            }
        }
        share * LOCK_GRAIN
    })
}

/// The lock the threads of the `setup` probe take to set up.
pub static SETUP_LOCK: Mutex<u64> = Mutex::new(0);

/// `setup`: each thread first does `setup` of its share holding [`SETUP_LOCK`] (`locked`) or
/// without it, then the rest of its share: holding it, the threads set up one after the other,
/// start their work late and finish late.
pub fn setup(threads: usize, ops: u64, setup: f64, locked: bool) -> (u64, f64) {
    parallel(threads, |t| {
        let share = ops / threads as u64;
        let first = (share as f64 * setup.clamp(0.0, 1.0)) as u64;
        let mut x = t as u64 + 1;
        let work = |mut x: u64, n: u64| {
            for _ in 0..n {
                x = mix(x, ROUNDS);
            }
            x
        };
        if locked {
            let mut g = SETUP_LOCK.lock().unwrap_or_else(|e| e.into_inner());
            x = work(x, first);
            *g ^= x;
        } else {
            x = work(x, first);
        }
        black_box(work(x, share - first));
        share
    })
}

/// Mutexes of the `yield` probe: threads take them in turn, as sysbench's `threads` test does.
static YIELD_LOCKS: [Mutex<u64>; 4] = [Mutex::new(0), Mutex::new(0), Mutex::new(0), Mutex::new(0)];

/// `yield`: every operation takes one of [`YIELD_LOCKS`] and yields the CPU while holding it.
/// With a CPU each, a yield returns at once; with more threads than CPUs it hands the CPU to a
/// thread that then blocks on the mutex still held, and every operation costs several switches.
pub fn yield_inside(threads: usize, ops: u64) -> (u64, f64) {
    parallel(threads, |t| {
        let share = ops / threads as u64;
        let mut x = t as u64 + 1;
        for i in 0..share {
            x = mix(x, ROUNDS);
            let mut g = YIELD_LOCKS[i as usize % YIELD_LOCKS.len()]
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            *g ^= x;
            // SAFETY: sched_yield takes no arguments and cannot fail on Linux.
            unsafe { libc::sched_yield() };
        }
        share
    })
}

/// `serial`: a single-threaded phase of `serial` × the work, then the rest in parallel.
pub fn serial(threads: usize, ops: u64, serial: f64) -> (u64, f64) {
    let start = Instant::now();
    let first = (ops as f64 * serial.clamp(0.0, 1.0)) as u64;
    let mut x = 1u64;
    for _ in 0..first {
        x = mix(x, ROUNDS);
    }
    black_box(x);
    let (rest, _) = parallel(threads, |t| {
        let share = (ops - first) / threads as u64;
        let mut x = t as u64 + 1;
        for _ in 0..share {
            x = mix(x, ROUNDS);
        }
        share
    });
    (first + rest, start.elapsed().as_secs_f64())
}

/// `imbalance`: thread 0 gets three times the share of the others; `balanced` hands out chunks
/// dynamically instead.
pub fn imbalance(threads: usize, ops: u64, balanced: bool) -> (u64, f64) {
    let next = AtomicU64::new(0);
    let chunk = 1000u64;
    parallel(threads, |t| {
        if balanced {
            let mut done = 0;
            loop {
                let start = next.fetch_add(chunk, Ordering::Relaxed);
                if start >= ops {
                    break done;
                }
                let n = chunk.min(ops - start);
                let mut x = start + 1;
                for _ in 0..n {
                    x = mix(x, ROUNDS);
                }
                done += n;
            }
        } else {
            // Weights: thread 0 has 3, every other 1.
            let weight = |i: usize| if i == 0 { 3 } else { 1 };
            let total: u64 = (0..threads).map(|i| weight(i) as u64).sum();
            let mine = ops * weight(t) as u64 / total;
            let mut x = t as u64 + 1;
            for _ in 0..mine {
                x = mix(x, ROUNDS);
            }
            mine
        }
    })
}

/// `starved`: `producers` threads make items and hand them, in batches, over a mutex-and-condvar
/// queue to `threads` consumers; making an item costs 1.5 times as much as consuming it, so one
/// producer keeps two thirds of a consumer busy and leaves the others waiting for work.
pub fn starved(threads: usize, ops: u64, producers: usize) -> (u64, f64) {
    const BATCH: u64 = 256;
    struct Queue {
        state: Mutex<(Vec<Vec<u64>>, usize)>,
        ready: Condvar,
    }
    let q = Queue { state: Mutex::new((Vec::new(), 0)), ready: Condvar::new() };
    let producers = producers.max(1);
    let next = AtomicU64::new(0);
    let start = Instant::now();
    let consumed: u64 = std::thread::scope(|s| {
        for p in 0..producers {
            let (q, next) = (&q, &next);
            let named = std::thread::Builder::new().name(format!("producer-{p}"));
            // Without every producer the consumers would wait for ever: failing to start one is fatal.
            named
                .spawn_scoped(s, move || {
                    let mut x = p as u64 + 1;
                    loop {
                        let first = next.fetch_add(BATCH, Ordering::Relaxed);
                        if first >= ops {
                            break;
                        }
                        let batch: Vec<u64> = (0..BATCH.min(ops - first))
                            .map(|_| {
                                x = mix(x, ROUNDS);
                                x
                            })
                            .collect();
                        q.state.lock().unwrap_or_else(|e| e.into_inner()).0.push(batch);
                        q.ready.notify_one();
                    }
                    q.state.lock().unwrap_or_else(|e| e.into_inner()).1 += 1;
                    q.ready.notify_all();
                })
                .expect("start a producer thread");
        }
        let consumers: Vec<_> = (0..threads)
            .map(|c| {
                let q = &q;
                let named = std::thread::Builder::new().name(format!("consumer-{c}"));
                named.spawn_scoped(s, move || {
                    let mut n = 0u64;
                    loop {
                        let batch = {
                            let mut g = q.state.lock().unwrap_or_else(|e| e.into_inner());
                            loop {
                                if let Some(b) = g.0.pop() {
                                    break Some(b);
                                }
                                if g.1 == producers {
                                    break None;
                                }
                                g = q.ready.wait(g).unwrap_or_else(|e| e.into_inner());
                            }
                        };
                        let Some(batch) = batch else { break n };
                        for item in batch {
                            black_box(mix(item, ROUNDS * 2 / 3));
                            n += 1;
                        }
                    }
                })
            })
            .collect();
        consumers.into_iter().map(|h| h.ok().and_then(|h| h.join().ok()).unwrap_or(0)).sum()
    });
    (consumed, start.elapsed().as_secs_f64())
}

/// `false-sharing`: every thread increments its own counter, all counters in one cache line;
/// `padded` gives each its own 128-byte line.
pub fn false_sharing(threads: usize, ops: u64, padded: bool) -> (u64, f64) {
    #[repr(align(128))]
    struct Padded(AtomicU64);
    let packed: Vec<AtomicU64> = (0..threads).map(|_| AtomicU64::new(0)).collect();
    let spaced: Vec<Padded> = (0..threads).map(|_| Padded(AtomicU64::new(0))).collect();
    parallel(threads, |t| {
        let share = ops * 100 / threads as u64;
        let counter = if padded { &spaced[t].0 } else { &packed[t] };
        for _ in 0..share {
            counter.fetch_add(1, Ordering::Relaxed);
        }
        share / 100
    })
}

/// `mmap-churn`: threads map memory, touch it, change its protection and unmap it, all of which
/// serialise on the process's mmap lock in the kernel. The rounds are handed out one at a time,
/// so the threads end together: a fixed share each left one thread alone for a tenth of a run
/// when the lock favoured the other, a second problem this probe is not about.
pub fn mmap_churn(threads: usize, ops: u64) -> (u64, f64) {
    const LEN: usize = 256 * 1024;
    let rounds = ops / 200 / threads as u64 * threads as u64;
    let next = std::sync::atomic::AtomicU64::new(0);
    parallel(threads, |_| {
        let mut done = 0;
        while next.fetch_add(1, std::sync::atomic::Ordering::Relaxed) < rounds {
            // SAFETY: a private anonymous mapping of LEN bytes, used only here and unmapped below.
            unsafe {
                let p = libc::mmap(
                    std::ptr::null_mut(),
                    LEN,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                    -1,
                    0,
                );
                if p == libc::MAP_FAILED {
                    break;
                }
                for off in (0..LEN).step_by(4096) {
                    *(p as *mut u8).add(off) = 1;
                }
                libc::mprotect(p, LEN, libc::PROT_READ);
                libc::mprotect(p, LEN, libc::PROT_READ | libc::PROT_WRITE);
                libc::munmap(p, LEN);
            }
            done += 1;
        }
        done * 200
    })
}

/// `mmap-churn --processes`: the same work split over `workers` copies of this probe at one
/// thread each, every one with its own memory map. Returns (operations, seconds).
pub fn mmap_churn_processes(workers: usize, ops: u64) -> std::io::Result<(u64, f64)> {
    let exe = std::env::current_exe()?;
    let share = ops / workers as u64;
    let start = Instant::now();
    let children: Vec<std::process::Child> = (0..workers)
        .map(|_| {
            std::process::Command::new(&exe)
                .args(["probe", "mmap-churn", "--threads", "1", "--ops", &share.to_string()])
                .stdout(std::process::Stdio::null())
                .spawn()
        })
        .collect::<std::io::Result<_>>()?;
    for mut c in children {
        let status = c.wait()?;
        if !status.success() {
            return Err(std::io::Error::other(format!("a worker process failed ({status})")));
        }
    }
    Ok((share / 200 * 200 * workers as u64, start.elapsed().as_secs_f64()))
}

/// `io`: threads read random 4 KiB blocks of files dropped from the page cache first (`warm`:
/// left cached, which removes the problem). Returns (bytes, seconds).
pub fn io(
    threads: usize,
    files: &[std::path::PathBuf],
    reads: u64,
    warm: bool,
) -> std::io::Result<(u64, f64)> {
    use std::os::unix::fs::FileExt;
    let files = pagecache::files_under(files)?;
    if files.is_empty() {
        return Err(std::io::Error::other(
            "no files to read (make some with: scalescope gen files --dir DIR)",
        ));
    }
    if !warm {
        pagecache::evict(&files).map_err(std::io::Error::other)?;
    }
    let opened: Vec<(std::fs::File, u64)> = files
        .iter()
        .map(|p| {
            let f = std::fs::File::open(p)?;
            let len = f.metadata()?.len();
            Ok((f, len))
        })
        .collect::<std::io::Result<_>>()?;
    if opened.iter().all(|(_, len)| *len < 4096) {
        return Err(std::io::Error::other("the input files are smaller than one 4 KiB block"));
    }
    let (bytes, secs) = parallel(threads, |t| {
        let mut buf = vec![0u8; 4096];
        let mut x = t as u64 * 7919 + 1;
        let mut bytes = 0;
        for _ in 0..reads / threads as u64 {
            x = mix(x, 3);
            let (f, len) = &opened[(x % opened.len() as u64) as usize];
            let blocks = len / 4096;
            if blocks == 0 {
                continue;
            }
            bytes += f.read_at(&mut buf, ((x >> 8) % blocks) * 4096).unwrap_or(0) as u64;
        }
        bytes
    });
    Ok((bytes, secs))
}

/// `membw`: every thread streams over its own array much larger than the caches.
pub fn membw(threads: usize, bytes_per_thread: usize, passes: u32) -> (u64, f64) {
    let words = bytes_per_thread / 8;
    parallel(threads, |t| {
        let data: Vec<u64> = (0..words as u64).map(|i| i ^ t as u64).collect();
        let mut sum = 0u64;
        for _ in 0..passes {
            for &v in &data {
                sum = sum.wrapping_add(v);
            }
            black_box(sum);
        }
        (words as u64) * 8 * passes as u64
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_probe_does_its_work() {
        assert_eq!(lock(3, 30000, 0.3).0, 30000);
        assert_eq!(serial(2, 1000, 0.2).0, 1000);
        assert_eq!(setup(2, 1000, 0.3, true).0, 1000);
        assert!((imbalance(3, 3000, false).0 as i64 - 3000).abs() <= 3);
        assert_eq!(imbalance(3, 3000, true).0, 3000);
        assert_eq!(starved(2, 500, 1).0, 500);
        assert_eq!(false_sharing(2, 1000, true).0, 1000);
        assert_eq!(mmap_churn(2, 800).0, 800);
        assert_eq!(membw(2, 1 << 16, 2).0, 2 * (1 << 16) * 2);
    }

    #[test]
    fn io_reads_whole_blocks_of_the_files() {
        let d = tempfile::tempdir().unwrap();
        let files = super::super::inputs::files(d.path(), 2, 1 << 20, 1).unwrap();
        assert_eq!(io(2, &files, 100, false).unwrap().0, 100 * 4096);
        assert_eq!(
            io(2, &[d.path().to_path_buf()], 100, true).unwrap().0,
            100 * 4096,
            "folders are read file by file"
        );
        let tiny = d.path().join("tiny");
        std::fs::write(&tiny, b"x").unwrap();
        assert!(io(1, &[tiny], 10, true).is_err());
    }
}
