//! Every thread's time, bin by bin: seconds on a CPU, waiting for one, and off-CPU under the label
//! of the wait the sampler saw. The capacity accounting, the behaviour of wait objects and the
//! timeline are computed from it when the run ends. Bins double their width instead of growing past
//! a bound, so a long run costs no more memory than a short one.

use std::collections::HashMap;

/// The wait an off-CPU stretch is attributed to: an index into the sampler's table of waits, or
/// `None` when no sample caught the thread waiting (waits shorter than the sampling period).
pub type Label = Option<u32>;

/// Most bins kept; beyond, neighbours merge and the width doubles.
const MAX_BINS: usize = 512;
/// Width of a bin at the start, seconds.
const FIRST_WIDTH_S: f64 = 0.01;

/// One thread's bins.
#[derive(Clone, Debug, Default)]
pub struct Track {
    /// Seconds on a CPU, per bin.
    pub on: Vec<f32>,
    /// Seconds runnable but waiting for a CPU, per bin.
    pub runq: Vec<f32>,
    /// Seconds off-CPU: `(bin, label, seconds)`, bins in increasing order.
    pub off: Vec<(u32, Label, f32)>,
}

impl Track {
    /// Seconds on a CPU in all.
    pub fn on_s(&self) -> f64 {
        self.on.iter().map(|&v| v as f64).sum()
    }

    /// Seconds waiting for a CPU in all.
    pub fn runq_s(&self) -> f64 {
        self.runq.iter().map(|&v| v as f64).sum()
    }

    /// Seconds off-CPU in all.
    pub fn off_s(&self) -> f64 {
        self.off.iter().map(|o| o.2 as f64).sum()
    }

    /// Seconds on a CPU in one bin (none past the track's end).
    pub fn on_in(&self, bin: usize) -> f64 {
        self.on.get(bin).copied().unwrap_or(0.0) as f64
    }

    /// Seconds wanting a CPU in one bin: running or runnable.
    pub fn wanting_in(&self, bin: usize) -> f64 {
        self.on_in(bin) + self.runq.get(bin).copied().unwrap_or(0.0) as f64
    }

    fn grow(&mut self, bins: usize) {
        if self.on.len() < bins {
            self.on.resize(bins, 0.0);
            self.runq.resize(bins, 0.0);
        }
    }

    fn add_off(&mut self, bin: u32, label: Label, s: f32) {
        match self.off.iter_mut().rev().take_while(|o| o.0 == bin).find(|o| o.1 == label) {
            Some(o) => o.2 += s,
            None => self.off.push((bin, label, s)),
        }
    }

    fn halve(&mut self) {
        let pairs = |v: &[f32]| v.chunks(2).map(|c| c.iter().sum()).collect();
        self.on = pairs(&self.on);
        self.runq = pairs(&self.runq);
        let old = std::mem::take(&mut self.off);
        for (bin, label, s) in old {
            self.add_off(bin / 2, label, s);
        }
    }
}

/// The bins of every thread seen, indexed by the sampler's thread index.
#[derive(Clone, Debug)]
pub struct History {
    width: f64,
    /// One track per thread.
    pub tracks: Vec<Track>,
}

impl Default for History {
    fn default() -> History {
        History { width: FIRST_WIDTH_S, tracks: Vec::new() }
    }
}

/// What one thread did during one interval between sweeps.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Interval {
    /// Start, seconds since sampling began.
    pub from: f64,
    /// End, seconds since sampling began.
    pub to: f64,
    /// Seconds on a CPU.
    pub on: f64,
    /// Seconds waiting for a CPU.
    pub runq: f64,
    /// Seconds off-CPU.
    pub off: f64,
    /// The wait the off-CPU time is attributed to.
    pub label: Label,
}

/// One thread's waits on one label: first and last bin, and the seconds in them.
#[derive(Clone, Debug, PartialEq)]
pub struct Stretch {
    /// The thread's track.
    pub track: usize,
    /// First bin it waited on the label in.
    pub first: usize,
    /// Last bin it waited on the label in.
    pub last: usize,
    /// Seconds it waited on the label.
    pub waited: f64,
}

impl History {
    /// Width of a bin in seconds.
    pub fn width(&self) -> f64 {
        self.width
    }

    /// Number of bins.
    pub fn bins(&self) -> usize {
        self.tracks.iter().map(|t| t.on.len()).max().unwrap_or(0)
    }

    /// A new thread's track; returns its index.
    pub fn add_thread(&mut self) -> usize {
        self.tracks.push(Track::default());
        self.tracks.len() - 1
    }

    /// Spreads an interval of thread `track` evenly over the bins it covers.
    pub fn record(&mut self, track: usize, iv: &Interval) {
        let span = iv.to - iv.from;
        if span <= 0.0 || !span.is_finite() {
            return;
        }
        while (iv.to / self.width) as usize >= MAX_BINS {
            self.width *= 2.0;
            self.tracks.iter_mut().for_each(Track::halve);
        }
        let last = (iv.to / self.width) as usize;
        let t = &mut self.tracks[track];
        t.grow(last + 1);
        let mut from = iv.from.max(0.0);
        let mut bin = ((from / self.width) as usize).min(last);
        while from < iv.to && bin <= last {
            let end = if bin == last { iv.to } else { ((bin + 1) as f64 * self.width).min(iv.to) };
            if end > from {
                let part = (end - from) / span;
                t.on[bin] += (iv.on * part) as f32;
                t.runq[bin] += (iv.runq * part) as f32;
                if iv.off > 0.0 {
                    t.add_off(bin as u32, iv.label, (iv.off * part) as f32);
                }
                from = end;
            }
            bin += 1;
        }
    }

    /// Gives back time that counters reported late. The kernel updates a thread's CPU time at ticks
    /// and its run-queue delay only when it gets a CPU, so an interval can look partly off-CPU and
    /// the next one hold more than its length: up to `on + runq` seconds of the thread's latest
    /// unlabelled off-CPU time become on-CPU and runnable time again (in that proportion). Returns
    /// the seconds given back.
    pub fn settle(&mut self, track: usize, on: f64, runq: f64) -> f64 {
        let total = on + runq;
        if total <= 0.0 {
            return 0.0;
        }
        let t = &mut self.tracks[track];
        let mut left = total;
        for k in (0..t.off.len()).rev() {
            if left <= 0.0 {
                break;
            }
            let (bin, label, s) = t.off[k];
            if label.is_some() || s <= 0.0 {
                continue;
            }
            let take = (s as f64).min(left);
            t.off[k].2 -= take as f32;
            t.on[bin as usize] += (take * on / total) as f32;
            t.runq[bin as usize] += (take * runq / total) as f32;
            left -= take;
        }
        t.off.retain(|o| o.2 > 0.0);
        total - left
    }

    /// Replaces unlabelled off-CPU time by labelled waits in proportion: a wait too short for any
    /// sample is most likely of the kinds the thread was caught in, or, for a work thread never
    /// caught waiting, of the kinds the other work threads were (threads doing the same work wait
    /// on the same things; `joins` are the labels of joins, which are not shared). Other threads
    /// never caught waiting keep it unlabelled.
    pub fn spread_unlabelled(&mut self, work: &[bool], joins: &[u32]) {
        let mix = |t: &Track, by: &mut Vec<(u32, f64)>| {
            for &(_, label, s) in &t.off {
                if let Some(l) = label {
                    match by.iter_mut().find(|b| b.0 == l) {
                        Some(b) => b.1 += s as f64,
                        None => by.push((l, s as f64)),
                    }
                }
            }
        };
        let mut shared: Vec<(u32, f64)> = Vec::new();
        for (i, t) in self.tracks.iter().enumerate() {
            if work.get(i).copied().unwrap_or(false) {
                mix(t, &mut shared);
            }
        }
        // Joining is what one thread does at its end, not how the others wait.
        shared.retain(|(l, _)| !joins.contains(l));
        for (i, t) in self.tracks.iter_mut().enumerate() {
            if t.off.iter().all(|o| o.1.is_some()) {
                continue;
            }
            let mut by: Vec<(u32, f64)> = Vec::new();
            mix(t, &mut by);
            if by.is_empty() && work.get(i).copied().unwrap_or(false) {
                by = shared.clone();
            }
            let total: f64 = by.iter().map(|b| b.1).sum();
            if total <= 0.0 {
                continue;
            }
            let old = std::mem::take(&mut t.off);
            for (bin, label, s) in old {
                match label {
                    Some(_) => t.add_off(bin, label, s),
                    None => {
                        for &(l, w) in &by {
                            t.add_off(bin, Some(l), (s as f64 * w / total) as f32);
                        }
                    }
                }
            }
        }
    }

    /// Seconds a thread was alive in one bin: running, runnable or off-CPU.
    pub fn alive_in(&self, track: usize, bin: usize) -> f64 {
        self.tracks[track].wanting_in(bin) + self.off_in(track, bin).map(|o| o.1).sum::<f64>()
    }

    /// Per label, each thread that waited on it (among those `keep` accepts, by track and label):
    /// the first and last bin it waited in and its seconds in all.
    pub fn waiters(&self, keep: impl Fn(usize, u32) -> bool) -> HashMap<u32, Vec<Stretch>> {
        let mut by_label: HashMap<u32, Vec<Stretch>> = HashMap::new();
        for (i, t) in self.tracks.iter().enumerate() {
            for &(bin, label, s) in &t.off {
                let Some(l) = label.filter(|&l| keep(i, l)) else { continue };
                let (bin, stretches) = (bin as usize, by_label.entry(l).or_default());
                match stretches.iter_mut().find(|x| x.track == i) {
                    Some(x) => {
                        x.last = bin;
                        x.waited += s as f64;
                    }
                    None => stretches.push(Stretch {
                        track: i,
                        first: bin,
                        last: bin,
                        waited: s as f64,
                    }),
                }
            }
        }
        by_label
    }

    /// Per bin, a thread's off-CPU seconds by label (for one track).
    pub fn off_in<'a>(
        &'a self,
        track: usize,
        bin: usize,
    ) -> impl Iterator<Item = (Label, f64)> + 'a {
        let t = &self.tracks[track];
        let start = t.off.partition_point(|o| (o.0 as usize) < bin);
        t.off[start..].iter().take_while(move |o| o.0 as usize == bin).map(|o| (o.1, o.2 as f64))
    }
}

/// A history from per-thread patterns, for tests: each character a 10 ms bin, `r` running, `q`
/// runnable, a digit waiting on that label, `-` not alive.
#[cfg(test)]
pub fn from_rows(rows: &[&str]) -> History {
    let mut h = History::default();
    for row in rows {
        let t = h.add_thread();
        for (b, c) in row.chars().enumerate() {
            let from = b as f64 * 0.01;
            let mut iv = Interval { from, to: from + 0.01, ..Default::default() };
            match c {
                'r' => iv.on = 0.01,
                'q' => iv.runq = 0.01,
                '-' => continue,
                d => {
                    iv.off = 0.01;
                    iv.label = d.to_digit(10);
                }
            }
            h.record(t, &iv);
        }
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    fn iv(from: f64, to: f64, on: f64, runq: f64, label: Label) -> Interval {
        Interval { from, to, on, runq, off: (to - from - on - runq).max(0.0), label }
    }

    #[test]
    fn spreads_intervals_over_bins_and_keeps_totals_when_bins_merge() {
        let mut h = History::default();
        let a = h.add_thread();
        h.record(a, &iv(0.0, 0.02, 0.01, 0.0, Some(3)));
        assert_eq!(h.bins(), 3);
        assert!(
            (h.tracks[a].on[0] - 0.005).abs() < 1e-6 && (h.tracks[a].on[1] - 0.005).abs() < 1e-6
        );
        let mut t = 0.02;
        while t < 20.0 {
            h.record(a, &iv(t, t + 0.01, 0.004, 0.001, if t < 10.0 { Some(3) } else { None }));
            t += 0.01;
        }
        assert!(h.bins() <= MAX_BINS && h.width() > FIRST_WIDTH_S);
        let tr = &h.tracks[a];
        assert!((tr.on_s() - (0.01 + 0.004 * 1998.0)).abs() < 1e-3, "{}", tr.on_s());
        assert!((tr.on_s() + tr.runq_s() + tr.off_s() - 20.0).abs() < 2e-2);
        h.spread_unlabelled(&[true], &[]);
        assert!(h.tracks[a].off.iter().all(|o| o.1 == Some(3)));
        assert!(
            (h.tracks[a].off_s() + h.tracks[a].on_s() + h.tracks[a].runq_s() - 20.0).abs() < 2e-2
        );
    }

    #[test]
    fn time_reported_late_goes_back_to_the_interval_it_belongs_to() {
        let mut h = History::default();
        let a = h.add_thread();
        // A busy thread whose counters lagged: 4 ms of 10 ms look off-CPU, then the next read
        // holds 14 ms of CPU for 10 ms.
        h.record(a, &iv(0.0, 0.01, 0.006, 0.0, None));
        let back = h.settle(a, 0.004, 0.0);
        assert!((back - 0.004).abs() < 1e-6);
        h.record(a, &iv(0.01, 0.02, 0.01, 0.0, None));
        assert!(h.tracks[a].off_s() < 1e-6 && (h.tracks[a].on_s() - 0.02).abs() < 1e-6);
    }

    #[test]
    fn a_work_thread_never_caught_waiting_waits_like_the_others_and_a_helper_stays_unlabelled() {
        let mut h = History::default();
        let (a, b, helper) = (h.add_thread(), h.add_thread(), h.add_thread());
        h.record(a, &iv(0.0, 0.01, 0.002, 0.0, Some(4)));
        h.record(b, &iv(0.0, 0.01, 0.002, 0.0, None));
        h.record(helper, &iv(0.0, 0.01, 0.0, 0.0, None));
        h.spread_unlabelled(&[true, true, false], &[]);
        let b_off: Vec<_> = h.off_in(b, 0).collect();
        assert!(
            b_off.len() == 1 && b_off[0].0 == Some(4) && (b_off[0].1 - 0.008).abs() < 1e-6,
            "{b_off:?}"
        );
        assert_eq!(h.off_in(helper, 0).next().unwrap().0, None);
    }
}
