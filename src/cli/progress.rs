//! Progress during a sweep, and the sink that stores every run. On a terminal: a bar with the
//! point, the run, the time left and the tree's PSS at its latest reading. Elsewhere (nohup, CI, a batch job's log): a line on stderr
//! per finished point (at most one a second; faster points are counted together), and a line a
//! minute while a long point runs, with the tree's PSS at its latest reading, so a log shows where
//! the sweep is.

use crate::exec::sweep::{Event, Sink};
use crate::files::WriteError;
use crate::results::{RunRecord, Store};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// At most one line per this long for finished points, without a terminal.
const LINE_EVERY: Duration = Duration::from_secs(1);
/// A line after this long without one, without a terminal.
const HEARTBEAT: Duration = Duration::from_secs(60);

/// Stores runs in the results folder and shows progress.
pub struct Session<'a> {
    store: &'a mut Store,
    bar: ProgressBar,
    log: Option<Log>,
    count: Count,
    /// What is running now, for the lines.
    now: Arc<Mutex<String>>,
    /// The bar's message without the memory, and the thread that adds the memory to it.
    shown: Arc<Mutex<String>>,
    ticker: Option<(Sender<()>, JoinHandle<()>)>,
}

/// When a command began measuring, and the runs stored then: the sweeps of runs added to decide a
/// verdict go on from it, so that their lines count the time from the start, and the time left is
/// judged by the runs this command took (a resumed sweep's earlier runs took no time of it).
#[derive(Clone, Copy, Debug)]
pub struct Clock {
    started: Instant,
    runs: u64,
}

/// Runs done and to do, kept up to date run by run (the sweep may have a million points).
struct Count {
    clock: Clock,
    points: usize,
    points_done: usize,
    runs_done: u64,
    /// Runs planned at points whose number of runs is known, and how many such points.
    planned: u64,
    known: usize,
    min_runs: u32,
    interleaved: bool,
    /// Per point, when there are at most [`PER_POINT_UP_TO`]: what its runs took, for a time left
    /// that knows the slow points from the fast ones.
    paces: Vec<Pace>,
    /// Wall seconds of the runs taken since the clock started.
    walled: f64,
}

/// Points up to which the time left is judged point by point (each look at it goes over them).
const PER_POINT_UP_TO: usize = 10_000;

/// A point's runs so far and its target, for the time left.
#[derive(Clone, Copy, Debug, Default)]
struct Pace {
    /// Wall seconds of its runs.
    wall_s: f64,
    /// Its runs.
    runs: u32,
    /// The runs it should have, when known.
    target: Option<u32>,
}

impl Count {
    /// Runs still to do, estimating unknown targets by the known ones.
    fn left(&self) -> u64 {
        let unknown = (self.points - self.known) as u64;
        let per_point = if self.known > 0 {
            self.planned as f64 / self.known as f64
        } else {
            self.min_runs as f64
        };
        (self.planned + (unknown as f64 * per_point).round() as u64).saturating_sub(self.runs_done)
    }

    /// The time left, once a point is done (or, interleaved, ten runs are): each point's runs
    /// still to do at its own mean time (a point not yet run at the mean of all), scaled by the
    /// time this command took over what its runs took (warm-ups, watching, writing). Tesseract at
    /// 1 and 4 threads, 22 s a run at 4, had read "about 0:25 left" with 0:27 to go by the mean
    /// of all runs.
    fn time_left(&self) -> Option<Duration> {
        let taken = self.runs_done.saturating_sub(self.clock.runs);
        let ready = self.points_done > 0 || (self.interleaved && taken >= 10);
        let elapsed = self.clock.started.elapsed().as_secs_f64();
        let left = if self.paces.is_empty() || self.walled <= 0.0 {
            elapsed / taken.max(1) as f64 * self.left() as f64
        } else {
            let mean = self.walled / taken.max(1) as f64;
            let per_point = if self.known > 0 {
                self.planned as f64 / self.known as f64
            } else {
                f64::from(self.min_runs)
            };
            let left: f64 = self
                .paces
                .iter()
                .map(|p| {
                    let to_do =
                        (p.target.map_or(per_point, f64::from) - f64::from(p.runs)).max(0.0);
                    let each = if p.runs > 0 { p.wall_s / f64::from(p.runs) } else { mean };
                    to_do * each
                })
                .sum();
            left * elapsed / self.walled
        };
        ready.then(|| Duration::from_secs_f64(left))
    }

    fn status(&self) -> String {
        let left = self.time_left().map_or(String::new(), |t| format!(", about {} left", clock(t)));
        format!(
            "{}/{} points, {} runs, {} elapsed{left}",
            self.points_done,
            self.points,
            self.runs_done,
            clock(self.clock.started.elapsed())
        )
    }
}

/// The lines written when stderr is not a terminal.
struct Log {
    last: Arc<Mutex<Instant>>,
    /// Points finished since the last line.
    pending: Vec<String>,
    heartbeat: Option<(Sender<()>, JoinHandle<()>)>,
}

impl<'a> Session<'a> {
    /// A session over a store: a bar on a terminal (none while output is passed through), lines
    /// otherwise; its clock goes on from `since` (the first pass's, for runs added after it).
    pub fn new(store: &'a mut Store, show_output: bool, since: Option<Clock>) -> Session<'a> {
        let terminal = std::io::stderr().is_terminal();
        let bar = if terminal && !show_output {
            ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::stderr())
        } else {
            ProgressBar::hidden()
        };
        bar.set_style(
            ProgressStyle::with_template("{bar:30} {pos}/{len} runs · {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        let doc = &store.doc;
        let min = doc.plan.runs.min;
        let count = Count {
            clock: since.unwrap_or(Clock { started: Instant::now(), runs: doc.run_count() as u64 }),
            points: doc.points.len(),
            points_done: doc
                .points
                .iter()
                .filter(|p| p.target_runs.is_some_and(|t| p.runs.len() as u32 >= t))
                .count(),
            runs_done: doc.run_count() as u64,
            planned: doc.points.iter().filter_map(|p| p.target_runs).map(u64::from).sum(),
            known: doc.points.iter().filter(|p| p.target_runs.is_some()).count(),
            min_runs: min,
            interleaved: doc.plan.order != crate::plan::Order::Sequential,
            paces: if doc.points.len() <= PER_POINT_UP_TO {
                doc.points
                    .iter()
                    .map(|p| Pace {
                        wall_s: p.runs.iter().map(|r| r.wall_s).sum(),
                        runs: p.runs.len() as u32,
                        target: p.target_runs,
                    })
                    .collect()
            } else {
                Vec::new()
            },
            walled: 0.0,
        };
        let now = Arc::new(Mutex::new(String::new()));
        let log = (!terminal).then(|| {
            let last = Arc::new(Mutex::new(Instant::now()));
            Log { heartbeat: heartbeat(last.clone(), now.clone()), last, pending: Vec::new() }
        });
        let shown = Arc::new(Mutex::new(String::new()));
        let ticker =
            (terminal && !show_output).then(|| ticker(bar.clone(), shown.clone())).flatten();
        let s = Session { store, bar, log, count, now, shown, ticker };
        s.bar.set_length(s.count.runs_done + s.count.left());
        s.bar.set_position(s.count.runs_done);
        s
    }

    /// The clock its lines count from, for the sweeps of runs added after it.
    pub fn clock(&self) -> Clock {
        self.count.clock
    }

    /// Removes the bar, and writes the line of the last points finished.
    pub fn finish(&mut self) {
        if let Some((tx, handle)) = self.ticker.take() {
            drop(tx);
            let _ = handle.join();
        }
        self.bar.finish_and_clear();
        if let Some(log) = &mut self.log {
            if let Some((tx, handle)) = log.heartbeat.take() {
                drop(tx);
                let _ = handle.join();
            }
            flush(log, &self.count);
        }
    }

    /// A point has all its runs: a line (or, within a second of the last, a note for the next).
    fn point_done(&mut self, point: usize) {
        self.count.points_done += 1;
        let Some(log) = &mut self.log else { return };
        let p = &self.store.doc.points[point];
        let time =
            p.stats().wall_s.map_or(String::new(), |w| format!(", {}", seconds(w.mean, w.stddev)));
        let failed = p.runs.iter().filter(|r| !r.succeeded()).count();
        let failed = if failed > 0 { format!(", {failed} failed") } else { String::new() };
        log.pending.push(format!("{}: {} runs{failed}{time}", p.label(), p.runs.len()));
        if log.last.lock().map_or(true, |l| l.elapsed() >= LINE_EVERY) {
            flush(log, &self.count);
        }
    }
}

impl Session<'_> {
    /// Every point has had one more run (interleaved orders): a line, as for a point.
    fn round_done(&mut self) {
        let Some(log) = &mut self.log else { return };
        let round = self.count.runs_done / self.count.points as u64;
        log.pending.push(format!("round {round} done (a run of every point)"));
        if log.last.lock().map_or(true, |l| l.elapsed() >= LINE_EVERY) {
            flush(log, &self.count);
        }
    }
}

/// Writes the pending points' line.
fn flush(log: &mut Log, count: &Count) {
    let Some(latest) = log.pending.last() else { return };
    let others = match log.pending.len() {
        1 => String::new(),
        n => format!(" (and {} more finished since the last line)", n - 1),
    };
    crate::fmt::say!("scalescope: {latest}{others} · {}", count.status());
    log.pending.clear();
    if let Ok(mut l) = log.last.lock() {
        *l = Instant::now();
    }
}

/// A thread that writes what is running when nothing was written for a minute.
fn heartbeat(
    last: Arc<Mutex<Instant>>,
    now: Arc<Mutex<String>>,
) -> Option<(Sender<()>, JoinHandle<()>)> {
    let (tx, rx) = mpsc::channel::<()>();
    let handle = std::thread::Builder::new()
        .name("scalescope-progress".into())
        .spawn(move || {
            loop {
                let since = last.lock().map_or(Duration::ZERO, |l| l.elapsed());
                match rx
                    .recv_timeout(HEARTBEAT.saturating_sub(since).max(Duration::from_millis(100)))
                {
                    Err(RecvTimeoutError::Timeout) => {}
                    _ => return,
                }
                let Ok(mut l) = last.lock() else { return };
                if l.elapsed() >= HEARTBEAT {
                    // The tree's memory at the sampler's latest reading, when it reads it.
                    let memory = crate::sample::live_pss_bytes().map_or(String::new(), |b| {
                        format!(" · PSS {}", crate::report::bytes(b as f64))
                    });
                    crate::fmt::say!(
                        "scalescope: still running {}{memory}",
                        now.lock().map(|s| s.clone()).unwrap_or_default()
                    );
                    *l = Instant::now();
                }
            }
        })
        .ok()?;
    Some((tx, handle))
}

/// A thread that adds the tree's PSS at the sampler's latest reading to the bar's message once a
/// second, while a run goes on.
fn ticker(bar: ProgressBar, shown: Arc<Mutex<String>>) -> Option<(Sender<()>, JoinHandle<()>)> {
    let (tx, rx) = mpsc::channel::<()>();
    let handle = std::thread::Builder::new()
        .name("scalescope-ticker".into())
        .spawn(move || {
            while let Err(RecvTimeoutError::Timeout) = rx.recv_timeout(Duration::from_secs(1)) {
                let Some(b) = crate::sample::live_pss_bytes() else { continue };
                let Ok(message) = shown.lock().map(|s| s.clone()) else { return };
                bar.set_message(format!("{message} · PSS {}", crate::report::bytes(b as f64)));
            }
        })
        .ok()?;
    Some((tx, handle))
}

/// `1:05:03`, `4:02`, `0:09`.
fn clock(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 3600 {
        format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
    } else {
        format!("{}:{:02}", s / 60, s % 60)
    }
}

/// `1.234 s ± 2%`.
fn seconds(mean: f64, stddev: f64) -> String {
    let spread =
        if mean > 0.0 { format!(" ± {:.0}%", 100.0 * stddev / mean) } else { String::new() };
    format!("{mean:.4} s{spread}")
}

impl Sink for Session<'_> {
    fn record(
        &mut self,
        point: usize,
        run: RunRecord,
        units: &[(String, String)],
    ) -> Result<(), WriteError> {
        let wall_s = run.wall_s;
        self.store.record(point, run, units)?;
        self.count.runs_done += 1;
        self.count.walled += wall_s;
        if let Some(p) = self.count.paces.get_mut(point) {
            p.wall_s += wall_s;
            p.runs += 1;
        }
        self.bar.inc(1);
        let p = &self.store.doc.points[point];
        if p.target_runs.is_some_and(|t| p.runs.len() as u32 == t) {
            self.point_done(point);
        } else if self.count.interleaved
            && self.count.runs_done.is_multiple_of(self.count.points as u64)
        {
            self.round_done();
        }
        Ok(())
    }

    fn target(&mut self, point: usize, runs: u32) {
        let before = self.store.doc.points[point].target_runs;
        self.store.target(point, runs);
        match before {
            Some(b) => self.count.planned = self.count.planned - u64::from(b) + u64::from(runs),
            None => {
                self.count.planned += u64::from(runs);
                self.count.known += 1;
            }
        }
        if let Some(p) = self.count.paces.get_mut(point) {
            p.target = Some(runs);
        }
        self.bar.set_length(self.count.runs_done + self.count.left());
    }

    fn event(&mut self, event: Event) {
        match event {
            Event::Starting { point, warmup, progress } => {
                let p = &self.store.doc.points[point];
                let what = if warmup {
                    "warm-up".to_string()
                } else {
                    let target = progress[point].target.map_or("?".into(), |t| t.to_string());
                    format!("run {}/{target}", progress[point].done + 1)
                };
                let left = self
                    .count
                    .time_left()
                    .map_or(String::new(), |t| format!(" · about {} left", clock(t)));
                let message = format!("{} · {what}{left}", p.label());
                self.bar.set_message(message.clone());
                if let Ok(mut shown) = self.shown.lock() {
                    *shown = message;
                }
                if let Ok(mut now) = self.now.lock() {
                    *now = format!("{} ({what}) · {}", p.label(), self.count.status());
                }
            }
            Event::Warning(w) => self.bar.suspend(|| crate::report::terminal::warn(&w)),
        }
    }

    fn folder(&self) -> Option<PathBuf> {
        Some(self.store.dir().to_path_buf())
    }

    fn runs_recorded(&self, point: usize) -> usize {
        self.store.runs_recorded(point)
    }

    fn lean(&self, point: usize) -> Option<f64> {
        self.store.doc.points[point].runs.iter().find_map(RunRecord::lean)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_time_left_is_judged_by_the_runs_this_command_took() {
        // 20 runs stored before (a resumed sweep, or the first pass before added runs); 10 more
        // taken in the 10 s since the clock started: 6 runs left take about 6 s, not 2.
        let count = Count {
            clock: Clock { started: Instant::now() - Duration::from_secs(10), runs: 20 },
            points: 3,
            points_done: 1,
            runs_done: 30,
            planned: 36,
            known: 3,
            min_runs: 3,
            interleaved: true,
            paces: Vec::new(),
            walled: 0.0,
        };
        let left = count.time_left().unwrap().as_secs_f64();
        assert!((5.9..6.5).contains(&left), "{left}");
        assert!(count.status().contains("0:10 elapsed"), "{}", count.status());
    }

    #[test]
    fn the_time_left_knows_the_slow_points_from_the_fast_ones() {
        // 1 thread at 2 s a run, 4 threads at 22 s; 10 s of watching and writing beside the 50 s
        // of runs. Left: one run at 4 threads, 22 s × 60/50 = 26.4 s (by the mean of all runs,
        // 10 s × 60/50 = 12 s).
        let count = Count {
            clock: Clock { started: Instant::now() - Duration::from_secs(60), runs: 0 },
            points: 2,
            points_done: 1,
            runs_done: 5,
            planned: 6,
            known: 2,
            min_runs: 3,
            interleaved: true,
            paces: vec![
                Pace { wall_s: 6.0, runs: 3, target: Some(3) },
                Pace { wall_s: 44.0, runs: 2, target: Some(3) },
            ],
            walled: 50.0,
        };
        let left = count.time_left().unwrap().as_secs_f64();
        assert!((26.0..28.0).contains(&left), "{left}");
    }
}
