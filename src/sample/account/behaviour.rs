//! How the threads behave around one wait: who waits on it, who runs while they wait. Threads that
//! take turns — while one of them runs the others wait on the object — are serialised on it, as on
//! a lock (a mutex, or a condition variable used as one). Threads that wait on it while a different
//! thread, which never waits on it, runs are starved: that thread is their feeder. The facts are
//! computed here; the diagnosis decides what they mean.

use super::thread_time::History;

/// A thread waits on an object when at least this share of the object's waiting is its own.
const MEMBER_SHARE: f64 = 0.02;

/// The behaviour around one wait label.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Behaviour {
    /// Tracks that wait on it.
    pub waiters: Vec<usize>,
    /// Thread-seconds spent waiting on it (by work threads and helpers alike).
    pub wait_s: f64,
    /// While they waited, the mean number of *other* waiters running: turn-taking.
    pub members_running: f64,
    /// While they waited, the mean number of threads that never wait on it running.
    pub others_running: f64,
    /// The thread that ran most while they waited, among those that never wait on it, and the
    /// share of the waiting time it ran.
    pub feeder: Option<(usize, f64)>,
    /// The waiters' concurrency: the 90th percentile over bins of how many of them ran at once.
    pub members_peak: f64,
    /// What the threads that never wait on it were waiting on while they waited, largest first:
    /// `(track, label, share of the waiting time)` (a feeder blocked on its own input).
    pub meanwhile: Vec<(usize, u32, f64)>,
    /// Share of the waiting done after the waiter last ran: threads done with their work waiting
    /// for the others (at a barrier, or for the end), rather than waiting between pieces of work.
    pub finished: f64,
}

/// The behaviour around `label`; `None` when nobody waited on it.
pub fn of(h: &History, label: u32) -> Option<Behaviour> {
    let bins = h.bins();
    let w = h.width();
    let n = h.tracks.len();
    let mut per_track = vec![0.0f64; n];
    let mut wait: Vec<Vec<(usize, f64)>> = vec![Vec::new(); bins];
    for (i, t) in h.tracks.iter().enumerate() {
        for &(bin, l, s) in &t.off {
            if l == Some(label) && s > 0.0 {
                per_track[i] += s as f64;
                wait[bin as usize].push((i, s as f64));
            }
        }
    }
    let wait_s: f64 = per_track.iter().sum();
    if wait_s <= 0.0 {
        return None;
    }
    let member: Vec<bool> = per_track.iter().map(|&s| s >= MEMBER_SHARE * wait_s).collect();
    let members: Vec<usize> = (0..n).filter(|&j| member[j]).collect();
    let on = |j: usize, b: usize| h.tracks[j].on_in(b) / w;
    let last_ran: Vec<Option<usize>> =
        h.tracks.iter().map(|t| t.on.iter().rposition(|&v| v > 0.0)).collect();
    let (mut members_running, mut finished) = (0.0, 0.0);
    let mut peaks: Vec<f64> = Vec::new();
    // Thread-seconds waited on it, per bin.
    let mut waiting = vec![0.0f64; bins];
    for (b, waits) in wait.iter().enumerate() {
        let set: f64 = members.iter().map(|&j| on(j, b)).sum();
        if set > 0.0 || !waits.is_empty() {
            peaks.push(set);
        }
        for &(i, s) in waits {
            // The waiter itself may have run in another part of the bin: not turn-taking.
            members_running += s * (set - if member[i] { on(i, b) } else { 0.0 }).max(0.0);
            if last_ran[i].is_none_or(|l| b > l) {
                finished += s;
            }
        }
        waiting[b] = waits.iter().map(|x| x.1).sum();
    }
    // The threads that never wait on it, one pass over each one's bins: how much it ran, and on
    // what it waited, while the members waited.
    let mut others_running = 0.0;
    let mut by_other = vec![0.0f64; n];
    let mut elsewhere: Vec<(usize, u32, f64)> = Vec::new();
    for j in (0..n).filter(|&j| !member[j]) {
        let t = &h.tracks[j];
        let ran: f64 = t.on.iter().zip(&waiting).map(|(&r, &x)| x * r as f64 / w).sum();
        others_running += ran;
        by_other[j] = ran;
        let mut own: Vec<(u32, f64)> = Vec::new();
        for &(b, l, off) in &t.off {
            let (Some(l), Some(&x)) = (l, waiting.get(b as usize)) else { continue };
            if x <= 0.0 {
                continue;
            }
            match own.iter_mut().find(|o| o.0 == l) {
                Some(o) => o.1 += x * off as f64 / w,
                None => own.push((l, x * off as f64 / w)),
            }
        }
        elsewhere.extend(own.into_iter().map(|(l, v)| (j, l, v)));
    }
    peaks.sort_by(f64::total_cmp);
    let members_peak = peaks
        .get((peaks.len() * 9 / 10).min(peaks.len().saturating_sub(1)))
        .copied()
        .unwrap_or(0.0);
    let feeder = (0..n)
        .filter(|&j| !member[j])
        .max_by(|&a, &b| by_other[a].total_cmp(&by_other[b]))
        .filter(|&j| by_other[j] > 0.0)
        .map(|j| (j, by_other[j] / wait_s));
    let mut meanwhile: Vec<(usize, u32, f64)> =
        elsewhere.into_iter().map(|(j, l, v)| (j, l, v / wait_s)).collect();
    meanwhile.sort_by(|a, b| b.2.total_cmp(&a.2));
    meanwhile.truncate(3);
    Some(Behaviour {
        waiters: members,
        wait_s,
        members_running: members_running / wait_s,
        others_running: others_running / wait_s,
        feeder,
        members_peak,
        meanwhile,
        finished: finished / wait_s,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sample::account::thread_time::from_rows as history;

    #[test]
    fn threads_taking_turns_on_one_object_are_serialised() {
        let h = history(&["r11r11r1", "1r11r11r", "11r11r11"]);
        let b = of(&h, 1).unwrap();
        assert_eq!(b.waiters, vec![0, 1, 2]);
        assert!(b.members_running > 0.9 && b.others_running == 0.0 && b.feeder.is_none(), "{b:?}");
        assert!(b.members_peak <= 1.0, "{b:?}");
    }

    #[test]
    fn workers_waiting_while_a_different_thread_runs_are_starved_and_it_is_the_feeder() {
        let h = history(&["r1111r1111", "11r1111r11", "rrrrrrrrrr", "9999999999"]);
        let b = of(&h, 1).unwrap();
        assert_eq!(b.waiters, vec![0, 1]);
        let (feeder, share) = b.feeder.unwrap();
        assert_eq!(feeder, 2);
        assert!(share > 0.99 && b.members_running < 0.3, "{b:?}");
        assert_eq!(
            (b.meanwhile[0].0, b.meanwhile[0].1),
            (3, 9),
            "what the idle helper waited on: {b:?}"
        );
        assert!(
            b.finished < 0.5,
            "they wait between pieces of work, and a while at the end: {b:?}"
        );
    }

    #[test]
    fn a_thread_done_with_its_share_waits_finished() {
        let h = history(&["rrrrrrrrrr", "rrrr111111"]);
        let b = of(&h, 1).unwrap();
        assert!(b.finished > 0.99, "{b:?}");
    }
}
