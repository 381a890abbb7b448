//! Recording every run as a time series ([`RunSeries`]), as production monitors keep them: at each reading of the tree's
//! memory, its CPU time, memory, I/O bytes, processes and threads. A series holds at most
//! [`MAX_SAMPLES`]: when full, every other sample is dropped and samples are taken half as often,
//! so a run of any length keeps a few hundred evenly spread.

use super::memory::Reading;
use crate::results::{RunMemory, RunSeries};

/// Most samples kept per run.
pub const MAX_SAMPLES: usize = 240;

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
            push(&mut self.series, t_s, r, c);
            self.pending = None;
            if self.series.len() >= MAX_SAMPLES {
                halve(&mut self.series);
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
            push(&mut self.series, t, &r, c);
        }
        (!self.series.is_empty()).then_some(self.series)
    }
}

/// Adds a sample: `t_s` seconds into the run, its reading and counts.
fn push(series: &mut RunSeries, t_s: f64, r: &Reading, c: Counts) {
    let ms = |s: f64| ((s * 1000.0).round() / 1000.0) as f32;
    series.t_s.push(ms(t_s));
    series.utime_s.push(ms(c.utime_s));
    series.stime_s.push(ms(c.stime_s));
    series.pss_kb.push(r.mem.pss_kb);
    series.rss_kb.push(r.mem.rss_kb);
    series.swap_kb.push(r.mem.swap_kb);
    series.vmem_kb.push(r.vmem_kb);
    series.rchar.push(r.io[0]);
    series.wchar.push(r.io[1]);
    series.read_bytes.push(r.io[2]);
    series.write_bytes.push(r.io[3]);
    series.nprocs.push(r.processes);
    series.nthreads.push(c.threads);
}

/// Keeps every other sample, from the first.
fn halve(series: &mut RunSeries) {
    fn keep_even<T>(v: &mut Vec<T>) {
        let mut i = 0;
        v.retain(|_| {
            i += 1;
            i % 2 == 1
        });
    }
    keep_even(&mut series.t_s);
    keep_even(&mut series.utime_s);
    keep_even(&mut series.stime_s);
    keep_even(&mut series.pss_kb);
    keep_even(&mut series.rss_kb);
    keep_even(&mut series.swap_kb);
    keep_even(&mut series.vmem_kb);
    keep_even(&mut series.rchar);
    keep_even(&mut series.wchar);
    keep_even(&mut series.read_bytes);
    keep_even(&mut series.write_bytes);
    keep_even(&mut series.nprocs);
    keep_even(&mut series.nthreads);
}

/// One copy's or rank's part of a run, to be summed with the others: its series, its memory as
/// its own sampler tracked it (every reading, not only those the series kept), and when it ended.
pub struct Part<'a> {
    /// Its series, seconds since its own start.
    pub series: &'a RunSeries,
    /// When it started on the run's clock, seconds after the earliest part.
    pub start_s: f64,
    /// Its peaks and means.
    pub memory: RunMemory,
    /// Its wall time: its memory counts until then, and none after.
    pub end_s: f64,
}

impl Part<'_> {
    /// When it took its first and last readings and ended, on the run's clock.
    fn span(&self) -> (f64, f64, f64) {
        let s = self.series;
        let (first, last) = (f64::from(s.t_s[0]), f64::from(s.t_s[s.len() - 1]));
        (self.start_s + first, self.start_s + last, self.start_s + self.end_s.max(last))
    }
}

impl Part<'_> {
    /// Its sample in force at `t_s`: the last one taken by then. Before its first reading it
    /// holds nothing; after its end its memory and processes are gone while its counters (CPU
    /// time, bytes) keep their last values.
    fn at(&self, t_s: f64) -> Option<(usize, bool)> {
        let i = self
            .series
            .t_s
            .partition_point(|&t| self.start_s + f64::from(t) <= t_s)
            .checked_sub(1)?;
        let (_, last, end) = self.span();
        Some((i, t_s < end || t_s <= last))
    }
}

/// The run of several copies or ranks, each read by a sampler of its own: their series summed at
/// common instants, and the run's memory from that sum.
///
/// Alignment: each part's series counts seconds from its own start; the parts are laid on one
/// clock by when each started (`start_s`, from the wall clock of the node the copies share; 0 for
/// all where the starts are unknown or on nodes whose clocks may differ). At every instant where
/// any part took a reading or ended, the parts are added: each by its reading at that instant, or
/// between two of its readings the lower of them (nothing before its first, its last held until
/// its end, nothing after). Not simply the last reading held: the samplers read milliseconds
/// apart while the copies map the same pages, and a reading taken before the others had mapped
/// them counts them whole beside the others' shares of them (four copies of a 64 MiB mapping
/// summed to 76 MiB as they started). The peak is the largest level the sum held for 50 ms
/// ([`SUSTAINED_S`]), kept between the largest single part's peak and
/// the sum of the peaks (each part's tracker saw every reading, its series only some); the
/// time-weighted mean is the parts' means weighted by how long each ran (the mean of their sum,
/// each reading held to the next). USS, which the series do not carry, stays the sum of the
/// parts' peaks. `None` without parts.
pub fn sum_parts(parts: &[Part]) -> Option<(RunSeries, RunMemory)> {
    let parts: Vec<&Part> = parts.iter().filter(|p| !p.series.is_empty()).collect();
    let first = parts.iter().map(|p| p.span().0).reduce(f64::min)?;
    let end = parts.iter().map(|p| p.span().2).fold(first, f64::max);
    let mut times: Vec<f64> = parts
        .iter()
        .flat_map(|p| {
            let ends = [p.span().2].into_iter().filter(|&e| e < end);
            p.series.t_s.iter().map(|&t| p.start_s + f64::from(t)).chain(ends)
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times.dedup();
    let mut sum = Recorder::default();
    let mut sums: Vec<[u64; 4]> = Vec::with_capacity(times.len());
    for &t in &times {
        let mut r = Reading::default();
        let mut c = Counts::default();
        for p in &parts {
            let Some((i, alive)) = p.at(t) else { continue };
            let s = p.series;
            c.utime_s += f64::from(s.utime_s[i]);
            c.stime_s += f64::from(s.stime_s[i]);
            for (total, v) in
                r.io.iter_mut().zip([s.rchar[i], s.wchar[i], s.read_bytes[i], s.write_bytes[i]])
            {
                *total += v;
            }
            if alive {
                r.processes += s.nprocs[i];
                c.threads += s.nthreads[i];
            }
        }
        // Between two readings, the lower of them (see above).
        [r.mem.pss_kb, r.mem.rss_kb, r.mem.swap_kb, r.vmem_kb] = memory_at(&parts, t);
        // A reading is one part's instant: just after it, that part too is between two readings,
        // and a sum that a reading taken before the others mapped their pages lifted (four copies
        // starting: 69 MiB for 64) is not held until the next instant of the series.
        let after = memory_at(&parts, t + JUST_AFTER_S);
        let now = [r.mem.pss_kb, r.mem.rss_kb, r.mem.swap_kb, r.vmem_kb];
        sums.push(std::array::from_fn(|c| now[c].min(after[c])));
        sum.offer(t, &r, c);
    }
    let most = sustained_peaks(&times, &sums, end);
    let peak = |seen_kb: u64, each: fn(&RunMemory) -> u64| {
        let seen = seen_kb * 1024;
        let (one, all) =
            parts.iter().fold((0, 0), |(m, s), p| (m.max(each(&p.memory)), s + each(&p.memory)));
        seen.clamp(one, all.max(one))
    };
    let span = end - first;
    let mean = |each: fn(&RunMemory) -> u64| {
        let weighted = |p: &&Part| {
            let (from, _, to) = p.span();
            let own = to - from;
            each(&p.memory) as f64 * if span > 0.0 { own / span } else { 1.0 }
        };
        parts.iter().map(weighted).sum::<f64>().round() as u64
    };
    let (peak_pss_bytes, peak_rss_bytes) =
        (peak(most[0], |m| m.peak_pss_bytes), peak(most[1], |m| m.peak_rss_bytes));
    // The parts' means add up what each read at its own moments: copies sharing pages read more
    // each before the others map them, so the sum can pass the tree's peak, which no mean can.
    let memory = RunMemory {
        peak_pss_bytes,
        peak_pss_read_bytes: None,
        mean_pss_bytes: mean(|m| m.mean_pss_bytes).min(peak_pss_bytes),
        peak_rss_bytes,
        mean_rss_bytes: mean(|m| m.mean_rss_bytes).min(peak_rss_bytes),
        peak_rss_swept_bytes: parts
            .iter()
            .map(|p| p.memory.peak_rss_swept_bytes)
            .max()
            .unwrap_or(0),
        peak_uss_bytes: parts.iter().map(|p| p.memory.peak_uss_bytes).sum(),
        peak_swap_bytes: peak(most[2], |m| m.peak_swap_bytes),
        peak_vmem_bytes: peak(most[3], |m| m.peak_vmem_bytes),
        readings: parts.iter().map(|p| p.memory.readings).sum(),
        cpu_s: parts.iter().map(|p| p.memory.cpu_s).sum(),
    };
    Some((sum.finish()?, memory))
}

/// An instant after a reading, before any other: the parts' series count milliseconds.
const JUST_AFTER_S: f64 = 1e-6;

/// The parts' PSS, RSS, swap and virtual size summed at `t_s`, each alive part between two of its
/// readings at the lower of them.
fn memory_at(parts: &[&Part], t_s: f64) -> [u64; 4] {
    let mut sum = [0u64; 4];
    for p in parts {
        let Some((i, true)) = p.at(t_s) else { continue };
        let s = p.series;
        let between = i + 1 < s.len() && p.start_s + f64::from(s.t_s[i]) < t_s;
        let mem = |col: &[u64]| if between { col[i].min(col[i + 1]) } else { col[i] };
        for (total, v) in
            sum.iter_mut().zip([mem(&s.pss_kb), mem(&s.rss_kb), mem(&s.swap_kb), mem(&s.vmem_kb)])
        {
            *total += v;
        }
    }
    sum
}

/// How long a sum of the parts must hold to be a peak: the shortest pause between one sampler's
/// paced readings, more than the milliseconds by which the parts' readings and ends disagree
/// where pages change hands (20 ms let 69.9 MiB through for 64.5 on a loaded machine, once the
/// readings taken for growth came closer together).
const SUSTAINED_S: f64 = 0.05;

/// The largest level of each column that the sum stayed at or above for [`SUSTAINED_S`] (or until
/// the run's end, `end_s`), from the sums at `times`.
fn sustained_peaks(times: &[f64], sums: &[[u64; 4]], end_s: f64) -> [u64; 4] {
    let mut most = [0u64; 4];
    for (j, &t) in times.iter().enumerate() {
        let until = (t + SUSTAINED_S).min(end_s);
        let held = sums[j..].iter().zip(&times[j..]).take_while(|&(_, &u)| u == t || u < until);
        let lowest =
            held.fold([u64::MAX; 4], |low, (s, _)| std::array::from_fn(|c| low[c].min(s[c])));
        for (m, l) in most.iter_mut().zip(lowest) {
            *m = (*m).max(l);
        }
    }
    most
}

#[cfg(test)]
mod tests {
    use super::super::memory::Rollup;
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
        let (lo, hi) =
            gaps[..gaps.len() - 1].iter().fold((f32::MAX, 0f32), |(a, b), &g| (a.min(g), b.max(g)));
        assert!(hi - lo < 0.01, "evenly spread: {lo}..{hi}");
        assert!(Recorder::default().finish().is_none());
    }

    /// Copies that share a read-only mapping each peak when the others have gone: their peaks add
    /// up to far more than they ever held at once.
    #[test]
    fn copies_sharing_pages_are_summed_at_common_instants_not_peak_on_peak() {
        const MB: u64 = 1024;
        // 4 copies map 64 MiB; copy i ends at 1 + i seconds, read every 0.25 s.
        let series: Vec<(RunSeries, RunMemory, f64)> = (0..4u32)
            .map(|i| {
                let end = 1.0 + f64::from(i);
                let mut rec = Recorder::default();
                let mut t = 0.0;
                let mut peak = 0;
                while t < end {
                    let alive = (0..4u32).filter(|&j| t < 1.0 + f64::from(j)).count() as u64;
                    let pss = 64 * MB / alive;
                    peak = peak.max(pss);
                    let r = Reading {
                        mem: Rollup { pss_kb: pss, rss_kb: 64 * MB, ..Rollup::default() },
                        processes: 1,
                        ..Reading::default()
                    };
                    rec.offer(t, &r, Counts { utime_s: t, threads: 1, ..Counts::default() });
                    t += 0.25;
                }
                let m = RunMemory {
                    peak_pss_bytes: peak * 1024,
                    mean_pss_bytes: 8 * MB * 1024,
                    peak_rss_bytes: 64 * MB * 1024,
                    readings: 4,
                    ..RunMemory::default()
                };
                (rec.finish().unwrap(), m, end)
            })
            .collect();
        let parts: Vec<Part> = series
            .iter()
            .map(|(s, m, e)| Part { series: s, start_s: 0.0, memory: *m, end_s: *e })
            .collect();
        let sum_of_peaks: u64 = parts.iter().map(|p| p.memory.peak_pss_bytes).sum();
        assert_eq!(sum_of_peaks / 1024 / MB, 64 + 32 + 21 + 16, "the old figure");
        let (s, m) = sum_parts(&parts).unwrap();
        assert_eq!(m.peak_pss_bytes, 64 * MB * 1024, "never more than the one mapping at once");
        assert_eq!(m.peak_rss_bytes, 4 * 64 * MB * 1024, "RSS counts the shared pages in each");
        let mean_kb = m.mean_pss_bytes / 1024;
        assert_eq!(mean_kb, 8 * MB * (1 + 2 + 3 + 4) / 4, "means weighted by how long each ran");
        // Means read at each copy's own moments can add up past the tree's peak: held at it.
        let high: Vec<Part> = parts
            .iter()
            .map(|p| Part {
                memory: RunMemory { mean_pss_bytes: 32 * MB * 1024, ..p.memory },
                ..*p
            })
            .collect();
        assert_eq!(
            sum_parts(&high).unwrap().1.mean_pss_bytes,
            m.peak_pss_bytes,
            "no mean above the peak"
        );
        assert_eq!(*s.pss_kb.last().unwrap(), 64 * MB, "the last copy alone");
        assert_eq!(s.nprocs[0], 4);
        let at = |t: f32| s.t_s.iter().position(|&x| x == t).unwrap();
        assert_eq!(
            (s.nprocs[at(1.0)], s.pss_kb[at(1.0)]),
            (3, 3 * (64 * MB / 3)),
            "the first copy gone at its end"
        );
        assert_eq!(s.utime_s[at(1.0)], 0.75 + 3.0, "its CPU time kept after it ended");
        assert!(sum_parts(&[]).is_none());
    }

    #[test]
    fn a_copys_first_reading_taken_before_the_other_mapped_its_pages_is_no_peak() {
        const MB: u64 = 1024;
        // Copy a reads its 64 MiB mapping whole at 0 s and half at 0.2 s; copy b's first reading,
        // at 0.05 s, still counts it whole too, and its next half. Held from 0.05 s to the next
        // instant, a's half and b's whole made 96 MiB "for" 150 ms.
        let part = |readings: [(f64, u64); 2]| {
            let mut rec = Recorder::default();
            for (t, pss) in readings {
                let mem = Rollup { pss_kb: pss * MB, rss_kb: 64 * MB, ..Rollup::default() };
                let r = Reading { mem, processes: 1, ..Reading::default() };
                rec.offer(t, &r, Counts { threads: 1, ..Counts::default() });
            }
            let memory = RunMemory { peak_pss_bytes: 64 * MB * 1024, ..RunMemory::default() };
            (rec.finish().unwrap(), memory)
        };
        let (a, b) = (part([(0.0, 64), (0.2, 32)]), part([(0.05, 64), (0.2, 32)]));
        let parts = [
            Part { series: &a.0, start_s: 0.0, memory: a.1, end_s: 0.4 },
            Part { series: &b.0, start_s: 0.0, memory: b.1, end_s: 0.4 },
        ];
        assert_eq!(sum_parts(&parts).unwrap().1.peak_pss_bytes, 64 * MB * 1024);
    }
}
