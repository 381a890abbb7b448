//! The I/O ceiling (`run --ceiling FILES`): scalescope's own `readspeed` probe reads the job's
//! input files at the sweep's thread counts, cold when the sweep evicts, so that the job's read
//! rate can be judged against what the files can deliver.

use super::child::{Executor, Processes, SpawnError, Spec};
use super::metrics::Scanner;
use super::signals;
use super::tail::{Printed, said};
use serde::{Deserialize, Serialize};
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
}

/// Runs of readspeed per thread count.
pub const RUNS: usize = 5;

/// What the files delivered.
#[derive(Clone, Debug, Default, Serialize, Deserialize, schemars::JsonSchema, PartialEq)]
pub struct Ceiling {
    /// The files or folders read.
    pub files: Vec<String>,
    /// Dropped from the page cache before every read.
    pub cold: bool,
    /// One entry per thread count.
    pub points: Vec<CeilingPoint>,
}

/// The read rate at one thread count.
#[derive(Clone, Debug, Default, Serialize, Deserialize, schemars::JsonSchema, PartialEq)]
pub struct CeilingPoint {
    /// Reader threads.
    pub threads: u32,
    /// Bytes per second of each run: bytes read over the process's wall time (start-up
    /// included, as for the job's own runs).
    pub runs_bytes_per_s: Vec<f64>,
    /// Their mean.
    pub mean_bytes_per_s: f64,
}

impl Ceiling {
    /// The mean rate at `threads`, or at the nearest measured count below it.
    pub fn at(&self, threads: f64) -> Option<&CeilingPoint> {
        self.points.iter().filter(|p| f64::from(p.threads) <= threads).max_by_key(|p| p.threads)
    }
}

/// Measures the ceiling at each of `counts` threads; `report` sees each point as it completes.
/// Returns what was measured before an interrupt, if one came.
pub fn measure(
    files: &[PathBuf],
    counts: &[u32],
    cold: bool,
    mut report: impl FnMut(&CeilingPoint),
) -> Result<Ceiling, CeilingError> {
    let exe = std::env::current_exe()
        .map_err(|source| SpawnError::System { program: "scalescope probe readspeed".into(), source })?;
    let mut exec = Processes::new();
    let scanner = Arc::new(Scanner::new(&[]).expect("no extractors"));
    let mut ceiling = Ceiling { files: files.iter().map(|f| f.display().to_string()).collect(), cold, points: vec![] };
    for &threads in counts {
        let mut argv = vec![exe.display().to_string(), "probe".into(), "readspeed".into()];
        argv.extend(["--threads".into(), threads.to_string(), "--files".into()]);
        argv.extend(ceiling.files.iter().cloned());
        if cold {
            argv.push("--evict".into());
        }
        let mut point = CeilingPoint { threads, ..Default::default() };
        for _ in 0..RUNS {
            let spec = Spec {
                argv: &argv,
                env: &[],
                timeout: None,
                scanner: scanner.clone(),
                show_output: false,
                sample: None,
                kill_leftovers: true,
            };
            let o = exec.run(&spec)?;
            if o.interrupted || signals::interrupted() {
                return Ok(ceiling);
            }
            // Bytes over the process's wall time, as the job's read rate is computed.
            let bytes = o.stdout.found.iter().rev().find(|f| f.name == "bytes").map(|f| f.value);
            match (o.exit_code, bytes) {
                (Some(0), Some(b)) if o.wall_s > 0.0 => point.runs_bytes_per_s.push(b / o.wall_s),
                _ => return Err(CeilingError::Failed { printed: Printed::of(&o.stdout, &o.stderr) }),
            }
        }
        point.mean_bytes_per_s = point.runs_bytes_per_s.iter().sum::<f64>() / point.runs_bytes_per_s.len() as f64;
        report(&point);
        ceiling.points.push(point);
    }
    Ok(ceiling)
}
