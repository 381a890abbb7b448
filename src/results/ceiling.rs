//! The I/O ceiling as stored in results.json (`ceiling`, from `run --ceiling FILES`): what the
//! job's input files delivered to readspeed at each thread count, and a job's read rate judged
//! against it.

use serde::{Deserialize, Serialize};

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
    /// The way of reading that delivered the most (e.g. `pread 128KiB blocks`).
    #[serde(default)]
    pub how: String,
    /// Bytes per second of each run that way, over readspeed's reading time (its start-up left
    /// out: the ceiling is an upper bound for the job, whose rate includes its own start-up).
    pub runs_bytes_per_s: Vec<f64>,
    /// The ceiling: the most any run delivered (a busy machine only ever lowers a rate), or the
    /// ceiling at fewer threads when that is more.
    #[serde(alias = "mean_bytes_per_s")]
    pub bytes_per_s: f64,
}

/// A job's read rate against the ceiling at its thread count.
#[derive(Clone, Copy, Debug)]
pub struct Reading<'a> {
    /// The ceiling's point used (at the count, or the nearest below it).
    pub point: &'a CeilingPoint,
    /// The job's rate over the ceiling's.
    pub share: f64,
}

impl Reading<'_> {
    /// Whether the job read more than the ceiling says the files deliver: the ceiling is then an
    /// underestimate (the job read less than all of the files, more at once, or from the cache).
    pub fn above(&self) -> bool {
        self.share > 1.0
    }
}

impl Ceiling {
    /// The point at `threads`, or at the nearest measured count below it.
    pub fn at(&self, threads: f64) -> Option<&CeilingPoint> {
        self.points.iter().filter(|p| f64::from(p.threads) <= threads).max_by_key(|p| p.threads)
    }

    /// Judges a job that read `rate` bytes per second at `threads`.
    pub fn judge(&self, threads: f64, rate: f64) -> Option<Reading<'_>> {
        let point = self.at(threads).filter(|p| p.bytes_per_s > 0.0)?;
        (rate > 0.0).then(|| Reading { point, share: rate / point.bytes_per_s })
    }
}
