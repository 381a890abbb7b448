//! The tree's memory over one run, as stored in results.json (`threads.memory`): peaks and
//! time-weighted means of PSS, RSS, USS, swap and virtual size summed over its processes.

use serde::{Deserialize, Serialize};

/// The tree's memory over one run (stored as `threads.memory` in each run of results.json): peaks
/// and time-weighted means of the sums over the tree's processes. Unlike `max_rss_bytes` (`wait4`:
/// the largest single process), these count every process at once, and PSS counts a page shared by
/// K processes as 1/K in each.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, schemars::JsonSchema, PartialEq)]
pub struct RunMemory {
    /// Largest PSS of the tree at a reading, bytes: its footprint in the machine's memory.
    pub peak_pss_bytes: u64,
    /// Time-weighted mean PSS of the tree, bytes.
    pub mean_pss_bytes: u64,
    /// The largest PSS the readings saw, bytes, when `peak_pss_bytes` was raised above it by
    /// [`RunMemory::at_least_resident`]: a process held more resident between two readings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_pss_read_bytes: Option<u64>,
    /// Largest RSS summed over the tree's processes, bytes (shared pages counted in each).
    pub peak_rss_bytes: u64,
    /// Time-weighted mean of the summed RSS, bytes.
    pub mean_rss_bytes: u64,
    /// Largest RSS summed over the tree's processes as the sampler's sweeps saw it (from each
    /// process's `stat`, every sweep, where the readings above come far fewer), bytes: above
    /// `peak_rss_bytes` when the readings missed a moment the tree held more. For ranks and copies,
    /// the largest part's. 0 in results written before the sweeps kept it.
    #[serde(default, skip_serializing_if = "super::is_zero")]
    pub peak_rss_swept_bytes: u64,
    /// Largest USS (private pages) summed over the tree, bytes.
    pub peak_uss_bytes: u64,
    /// Largest swap used by the tree, bytes.
    pub peak_swap_bytes: u64,
    /// Largest virtual size summed over the tree, bytes.
    pub peak_vmem_bytes: u64,
    /// Readings taken (the first as the run starts; then at most a few a second, fewer for a big
    /// tree, to keep their cost within the sampler's budget).
    pub readings: u32,
    /// CPU seconds the readings cost (part of `sampler_cpu_s`).
    pub cpu_s: f64,
}

/// A peak above the readings by this share of it, and by [`RAISED_BYTES`], raises the peak PSS.
pub const RAISED_SHARE: f64 = 0.05;
/// See [`RAISED_SHARE`].
pub const RAISED_BYTES: u64 = 4 << 20;

impl RunMemory {
    /// Raises the peak PSS to the resident peak of the run's largest process (`wait4`'s max RSS)
    /// less the pages the readings saw counted in RSS but not in PSS (shared with other
    /// processes), when that is above what the readings saw: a process that held 351 MiB for
    /// 0.1 s between two readings of 235 MiB had a footprint of at least 350 MiB then. Forked
    /// workers sharing their pages are left as read (their shared pages make the floor low).
    pub fn at_least_resident(&mut self, max_rss_bytes: u64) {
        let shared = self.peak_rss_bytes.saturating_sub(self.peak_pss_bytes);
        let floor = max_rss_bytes.saturating_sub(shared);
        let above = floor.saturating_sub(self.peak_pss_bytes);
        if self.readings > 0 && above >= RAISED_BYTES && above as f64 >= RAISED_SHARE * floor as f64
        {
            self.peak_pss_read_bytes.get_or_insert(self.peak_pss_bytes);
            self.peak_pss_bytes = floor;
        }
        // The mean follows the sweeps between readings: never above the peak as it now stands.
        self.mean_pss_bytes = self.mean_pss_bytes.min(self.peak_pss_bytes);
    }

    /// Adds another tree's memory (another rank or copy of the same run): the sum of the peaks
    /// bounds the peak of the sum.
    pub fn absorb(&mut self, o: &RunMemory) {
        self.peak_pss_bytes += o.peak_pss_bytes;
        self.mean_pss_bytes += o.mean_pss_bytes;
        self.peak_rss_bytes += o.peak_rss_bytes;
        self.mean_rss_bytes += o.mean_rss_bytes;
        self.peak_rss_swept_bytes = self.peak_rss_swept_bytes.max(o.peak_rss_swept_bytes);
        self.peak_uss_bytes += o.peak_uss_bytes;
        self.peak_swap_bytes += o.peak_swap_bytes;
        self.peak_vmem_bytes += o.peak_vmem_bytes;
        self.readings += o.readings;
        self.cpu_s += o.cpu_s;
    }
}
