//! One run as a time series, as stored in results.json (`threads.series`): at each reading of the
//! tree's memory, its CPU time, memory, I/O bytes, processes and threads, column by column.

use serde::{Deserialize, Serialize};

/// One run's time series (stored as `threads.series` in each run of results.json), column by
/// column; counters (CPU, I/O) are totals since the run started, memory is as read then.
#[derive(Clone, Debug, Default, Serialize, Deserialize, schemars::JsonSchema, PartialEq)]
pub struct RunSeries {
    /// Seconds since the run started.
    pub t_s: Vec<f32>,
    /// User CPU seconds of the tree's threads so far.
    pub utime_s: Vec<f32>,
    /// System CPU seconds of the tree's threads so far.
    pub stime_s: Vec<f32>,
    /// PSS of the tree, KiB.
    pub pss_kb: Vec<u64>,
    /// RSS summed over the tree's processes, KiB.
    pub rss_kb: Vec<u64>,
    /// Swap used by the tree, KiB.
    pub swap_kb: Vec<u64>,
    /// Virtual size summed over the tree's processes, KiB.
    pub vmem_kb: Vec<u64>,
    /// Bytes passed to read-like system calls so far (`rchar`).
    pub rchar: Vec<u64>,
    /// Bytes passed to write-like system calls so far (`wchar`).
    pub wchar: Vec<u64>,
    /// Bytes read from storage so far.
    pub read_bytes: Vec<u64>,
    /// Bytes written to storage so far.
    pub write_bytes: Vec<u64>,
    /// Processes alive in the tree.
    pub nprocs: Vec<u32>,
    /// Threads alive in the tree.
    pub nthreads: Vec<u32>,
}

impl RunSeries {
    /// Samples held.
    pub fn len(&self) -> usize {
        self.t_s.len()
    }

    /// Whether it holds no sample.
    pub fn is_empty(&self) -> bool {
        self.t_s.is_empty()
    }
}
