//! Measuring the I/O ceiling (`run --ceiling FILES`, stored as results' [`Ceiling`]): scalescope's
//! own `readspeed` probe reads the job's input files at the sweep's thread counts, cold when the
//! sweep evicts, in several ways (buffered small and large blocks, mapped, `O_DIRECT`), keeping the
//! best, so that the job's read rate can be judged against what the files can deliver.

use super::child::{Executor, Processes, SpawnError, Spec};
use super::metrics::Scanner;
use super::signals;
use super::tail::{Printed, said};
use crate::pagecache;
use crate::results::ceiling::{Ceiling, CeilingPoint};
use std::path::PathBuf;
use std::sync::Arc;

/// Why the ceiling could not be measured.
#[derive(Debug, thiserror::Error)]
pub enum CeilingError {
    /// readspeed could not be started.
    #[error(transparent)]
    Spawn(#[from] SpawnError),
    /// readspeed failed over the files.
    #[error("--ceiling: readspeed over the files failed{}", said(printed))]
    Failed {
        /// What it printed.
        printed: Printed,
    },
    /// The files could not be evicted before a cold read.
    #[error(transparent)]
    Evict(#[from] pagecache::Error),
}

impl CeilingError {
    /// Whether the user can fix it by naming other files (exit code 2), rather than the read
    /// failing (exit code 1).
    pub fn is_user_mistake(&self) -> bool {
        match self {
            CeilingError::Spawn(e) => e.is_user_mistake(),
            CeilingError::Evict(e) => e.is_user_mistake(),
            CeilingError::Failed { .. } => false,
        }
    }
}

/// Rounds over the ways of reading at each thread count.
pub const ROUNDS: usize = 3;

/// A way of reading that readspeed tries: its mode, block and chunk sizes.
struct Way {
    args: [&'static str; 6],
    /// Only for cold reads: mapping touches one byte a page (for cached files that is no read at
    /// all) and `O_DIRECT` bypasses the cache that a warm read is about.
    cold_only: bool,
    /// At least this many reads in flight (reader threads), whatever the count: what the device
    /// delivers to deep queues, as fio's asynchronous engines get it.
    in_flight: u32,
}

/// Buffered reads of small blocks ride the kernel's read-ahead; large ones make fewer calls;
/// mapping copies nothing; `O_DIRECT` goes to the device without the cache, in large blocks or
/// many at once.
const WAYS: [Way; 5] = [
    Way {
        args: ["--mode", "pread", "--block", "128KiB", "--chunk", "1MiB"],
        cold_only: false,
        in_flight: 1,
    },
    Way {
        args: ["--mode", "pread", "--block", "1MiB", "--chunk", "8MiB"],
        cold_only: false,
        in_flight: 1,
    },
    Way {
        args: ["--mode", "mmap", "--block", "1MiB", "--chunk", "8MiB"],
        cold_only: true,
        in_flight: 1,
    },
    Way {
        args: ["--mode", "direct", "--block", "4MiB", "--chunk", "8MiB"],
        cold_only: true,
        in_flight: 1,
    },
    Way {
        args: ["--mode", "direct", "--block", "1MiB", "--chunk", "1MiB"],
        cold_only: true,
        in_flight: 16,
    },
];

impl Way {
    fn describe(&self, threads: u32) -> String {
        let what = match self.args[1] {
            "mmap" => "mmap".to_string(),
            mode => format!("{mode} {} blocks", self.args[3]),
        };
        if self.in_flight > threads {
            format!("{what}, {} in flight", self.in_flight)
        } else {
            what
        }
    }
}

/// Measures the ceiling at each of `counts` threads: every way of reading, [`ROUNDS`] times
/// (evicted before each run when `cold`, after one warm-up read otherwise), keeping the way that
/// delivered the most. `report` sees each point as it completes. Returns what was measured before
/// an interrupt, if one came.
pub fn measure(
    files: &[PathBuf],
    counts: &[u32],
    cold: bool,
    mut report: impl FnMut(&CeilingPoint),
) -> Result<Ceiling, CeilingError> {
    let exe = std::env::current_exe().map_err(|source| SpawnError::System {
        program: "scalescope probe readspeed".into(),
        source,
    })?;
    let mut exec = Processes::new();
    let scanner = Arc::new(Scanner::new(&[]).expect("no extractors"));
    let mut ceiling = Ceiling {
        files: files.iter().map(|f| f.display().to_string()).collect(),
        cold,
        points: vec![],
    };
    let ways: Vec<&Way> = WAYS.iter().filter(|w| cold || !w.cold_only).collect();
    let mut refused = vec![false; ways.len()];
    for &threads in counts {
        let argv = |way: &Way| {
            let mut argv = vec![exe.display().to_string(), "probe".into(), "readspeed".into()];
            argv.extend(["--threads".into(), threads.max(way.in_flight).to_string()]);
            argv.extend(way.args.iter().map(|a| a.to_string()));
            argv.push("--files".into());
            argv.extend(ceiling.files.iter().cloned());
            argv
        };
        let mut rates = vec![Vec::new(); ways.len()];
        // (way, recorded): a warm read first when the files are to be read as cached.
        let warm_up = (!cold).then_some((0, false));
        let rounds = (0..ROUNDS).flat_map(|_| (0..ways.len()).map(|w| (w, true)));
        for (w, recorded) in warm_up.into_iter().chain(rounds) {
            if refused[w] {
                continue;
            }
            if cold {
                pagecache::evict(files)?;
            }
            let argv = argv(ways[w]);
            let spec = Spec {
                argv: &argv,
                env: &[],
                timeout: None,
                scanner: scanner.clone(),
                show_output: false,
                sample: None,
                kill_leftovers: true,
                again: false,
            };
            let o = exec.run(&spec)?;
            if o.interrupted || signals::interrupted() {
                return Ok(ceiling);
            }
            // The rate over readspeed's reading time: what the files deliver, its start-up left out.
            let rate =
                o.stdout.found.iter().rev().find(|f| f.name == "throughput").map(|f| f.value);
            match (o.exit_code, rate) {
                (Some(0), Some(r)) if r > 0.0 => {
                    if recorded {
                        rates[w].push(r);
                    }
                }
                // A file system without O_DIRECT (tmpfs): the other ways remain.
                _ if ways[w].cold_only => refused[w] = true,
                _ => {
                    return Err(CeilingError::Failed {
                        printed: Printed::of(&o.stdout, &o.stderr),
                    });
                }
            }
        }
        let most = |r: &Vec<f64>| r.iter().copied().fold(0.0, f64::max);
        let best = (0..ways.len())
            .max_by(|&a, &b| most(&rates[a]).total_cmp(&most(&rates[b])))
            .unwrap_or(0);
        let mut point = CeilingPoint {
            threads,
            how: ways[best].describe(threads),
            bytes_per_s: most(&rates[best]),
            runs_bytes_per_s: std::mem::take(&mut rates[best]),
        };
        // A job with more threads can always read as a job with fewer would.
        if let Some(fewer) = ceiling.points.last().filter(|p| p.bytes_per_s > point.bytes_per_s) {
            point.bytes_per_s = fewer.bytes_per_s;
            point.how = format!(
                "{} with {} thread{}",
                fewer.how,
                fewer.threads,
                if fewer.threads == 1 { "" } else { "s" }
            );
        }
        report(&point);
        ceiling.points.push(point);
    }
    Ok(ceiling)
}
