//! A smallest count unlike the rest, left out of the forecast's fit. One that does more per core:
//! one busy core runs at a higher clock, one thread's data fit its caches; its sign is a
//! Karp–Flatt serial fraction that falls as the count grows (measured against that count, every
//! speed-up looks short, the more so the fewer workers), which models read as an overhead that
//! grows. One that does less per core: the second count is faster than perfect scaling from it
//! (a negative fraction: its data did not fit the memory or caches the larger counts share, or it
//! waited), a step no model of costs can follow.

use super::point::Point;

/// Fewer counts than this after the smallest leave too little to fit without it.
const MIN_REST: usize = 3;
/// The Karp–Flatt fraction at the largest count must be at most this share of the second's.
const FALL: f64 = 0.6;
/// … and lower by at least this much.
const MIN_DROP: f64 = 0.005;
/// A fraction at the second count below this is a superlinear step: the smallest did less per core.
const SUPERLINEAR: f64 = -0.05;

/// What gave the smallest count away.
#[derive(Clone, Debug, PartialEq)]
pub struct Sign {
    /// The smallest count.
    pub count: f64,
    /// The second count and its Karp–Flatt fraction against the smallest.
    pub second: (f64, f64),
    /// The largest count and its fraction.
    pub largest: (f64, f64),
}

/// Karp–Flatt of `pt` against `base`: (1/S − 1/p) / (1 − 1/p), p the ratio of the counts.
fn karp_flatt(base: &Point, pt: &Point) -> f64 {
    let s = base.time / pt.time;
    let p = pt.count / base.count;
    (1.0 / s - 1.0 / p) / (1.0 - 1.0 / p)
}

/// The sign, when the fraction at the second count is the highest of all and the one at the
/// largest count has fallen well below it (more per core), or when the fraction at the second
/// count is well below zero (less per core).
pub fn detect(pts: &[Point]) -> Option<Sign> {
    if pts.len() < MIN_REST + 1 {
        return None;
    }
    let e: Vec<f64> = pts[1..].iter().map(|p| karp_flatt(&pts[0], p)).collect();
    let (first, last) = (e[0], e[e.len() - 1]);
    let highest = e.iter().all(|&x| x <= first);
    let faster = highest && last <= FALL * first && first - last >= MIN_DROP;
    (faster || first < SUPERLINEAR).then(|| Sign {
        count: pts[0].count,
        second: (pts[1].count, first),
        largest: (pts[pts.len() - 1].count, last),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pts(counts: &[f64], f: impl Fn(f64) -> f64) -> Vec<Point> {
        counts.iter().map(|&count| Point { count, time: f(count), runs: vec![f(count)] }).collect()
    }

    #[test]
    fn a_one_thread_run_a_tenth_faster_is_caught_and_a_plain_law_is_not() {
        let law = |p: f64| 0.02 + 0.98 / p;
        let counts = [1.0, 2.0, 4.0, 8.0, 16.0];
        assert_eq!(detect(&pts(&counts, law)), None);
        let boosted = pts(&counts, |p| if p == 1.0 { 0.9 * law(p) } else { law(p) });
        let s = detect(&boosted).unwrap();
        assert_eq!((s.count, s.second.0, s.largest.0), (1.0, 2.0, 16.0));
        assert!(s.largest.1 < 0.6 * s.second.1, "{s:?}");
    }

    #[test]
    fn a_superlinear_first_step_is_caught_and_a_slight_one_is_not() {
        // Jaguar's LiH: 1024 cores took 4.8 times as long as 2048.
        let t = [(1024.0, 6569.07), (2048.0, 1369.92), (4096.0, 722.24), (8192.0, 402.18)];
        let table: Vec<Point> =
            t.iter().map(|&(count, time)| Point { count, time, runs: vec![time] }).collect();
        let s = detect(&table).unwrap();
        assert!(s.second.1 < -0.5 && s.count == 1024.0, "{s:?}");
        let slight = pts(&[1.0, 2.0, 4.0, 8.0], |p| if p == 2.0 { 0.49 } else { 1.0 / p });
        assert_eq!(detect(&slight), None);
    }

    #[test]
    fn contention_that_grows_is_no_fast_baseline() {
        let usl = |p: f64| (1.0 + 0.02 * (p - 1.0) + 0.001 * p * (p - 1.0)) / p;
        assert_eq!(detect(&pts(&[1.0, 2.0, 4.0, 8.0, 16.0], usl)), None);
        assert_eq!(detect(&pts(&[1.0, 2.0, 4.0], |p| if p == 1.0 { 0.5 } else { 1.0 / p })), None);
    }
}
