//! Every run as a time series, as production monitors keep them: at each reading of the tree's
//! memory, its CPU time, memory, I/O bytes, processes and threads. A series holds at most
//! [`MAX_SAMPLES`]: when full, every other sample is dropped and samples are taken half as often,
//! so a run of any length keeps a few hundred evenly spread.

use super::memory::Reading;
use serde::{Deserialize, Serialize};

/// Most samples kept per run.
pub const MAX_SAMPLES: usize = 240;

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

/// What the sampler knows at a reading besides the memory: CPU seconds so far and threads alive.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Counts {
    /// User CPU seconds of the tree so far.
    pub utime_s: f64,
    /// System CPU seconds of the tree so far.
    pub stime_s: f64,
    /// Threads alive.
    pub threads: u32,
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

    fn push(&mut self, t_s: f64, r: &Reading, c: Counts) {
        let ms = |s: f64| ((s * 1000.0).round() / 1000.0) as f32;
        self.t_s.push(ms(t_s));
        self.utime_s.push(ms(c.utime_s));
        self.stime_s.push(ms(c.stime_s));
        self.pss_kb.push(r.mem.pss_kb);
        self.rss_kb.push(r.mem.rss_kb);
        self.swap_kb.push(r.mem.swap_kb);
        self.vmem_kb.push(r.vmem_kb);
        self.rchar.push(r.io[0]);
        self.wchar.push(r.io[1]);
        self.read_bytes.push(r.io[2]);
        self.write_bytes.push(r.io[3]);
        self.nprocs.push(r.processes);
        self.nthreads.push(c.threads);
    }

    /// Keeps every other sample, from the first.
    fn halve(&mut self) {
        fn keep_even<T>(v: &mut Vec<T>) {
            let mut i = 0;
            v.retain(|_| {
                i += 1;
                i % 2 == 1
            });
        }
        keep_even(&mut self.t_s);
        keep_even(&mut self.utime_s);
        keep_even(&mut self.stime_s);
        keep_even(&mut self.pss_kb);
        keep_even(&mut self.rss_kb);
        keep_even(&mut self.swap_kb);
        keep_even(&mut self.vmem_kb);
        keep_even(&mut self.rchar);
        keep_even(&mut self.wchar);
        keep_even(&mut self.read_bytes);
        keep_even(&mut self.write_bytes);
        keep_even(&mut self.nprocs);
        keep_even(&mut self.nthreads);
    }
}

/// Builds a run's series reading by reading, thinning it as it grows.
#[derive(Default)]
pub struct Recorder {
    series: RunSeries,
    /// Readings offered so far, and how many of them make one sample.
    offered: u64,
    stride: u64,
    /// The latest reading not kept, so that the series ends at the run's last one.
    pending: Option<(f64, Reading, Counts)>,
}

impl Recorder {
    /// Offers a reading taken `t_s` seconds into the run.
    pub fn offer(&mut self, t_s: f64, r: &Reading, c: Counts) {
        let stride = self.stride.max(1);
        if self.offered.is_multiple_of(stride) {
            self.series.push(t_s, r, c);
            self.pending = None;
            if self.series.len() >= MAX_SAMPLES {
                self.series.halve();
                self.stride = stride * 2;
            }
        } else {
            self.pending = Some((t_s, *r, c));
        }
        self.offered += 1;
    }

    /// The series, ending at the last reading; `None` without any.
    pub fn finish(mut self) -> Option<RunSeries> {
        if let Some((t, r, c)) = self.pending.take() {
            self.series.push(t, &r, c);
        }
        (!self.series.is_empty()).then_some(self.series)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_run_keeps_a_bounded_evenly_spread_series_that_ends_at_its_last_reading() {
        let mut rec = Recorder::default();
        let n = 10_000;
        for i in 0..n {
            let r = Reading { processes: 1, ..Reading::default() };
            rec.offer(i as f64 * 0.1, &r, Counts { threads: i, ..Counts::default() });
        }
        let s = rec.finish().unwrap();
        assert!(s.len() <= MAX_SAMPLES && s.len() >= MAX_SAMPLES / 2, "{}", s.len());
        assert_eq!(s.t_s[0], 0.0);
        assert_eq!(*s.nthreads.last().unwrap(), n - 1, "the last reading ends it");
        let gaps: Vec<f32> = s.t_s.windows(2).map(|w| w[1] - w[0]).collect();
        let (lo, hi) = gaps[..gaps.len() - 1].iter().fold((f32::MAX, 0f32), |(a, b), &g| (a.min(g), b.max(g)));
        assert!(hi - lo < 0.01, "evenly spread: {lo}..{hi}");
        assert!(Recorder::default().finish().is_none());
    }
}
