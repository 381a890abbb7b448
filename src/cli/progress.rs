//! The progress bar during a sweep (point, run, ETA; hidden when stderr is not a terminal), and
//! the sink that stores every run and keeps the bar in step.

use crate::exec::RunRecord;
use crate::exec::sweep::{Event, Sink};
use crate::results::Store;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::path::PathBuf;

/// Stores runs in the results folder and shows progress.
pub struct Session<'a> {
    store: &'a mut Store,
    bar: ProgressBar,
    warmup: u64,
}

impl<'a> Session<'a> {
    /// A session over a store; no bar when output is passed through or stderr is not a terminal.
    pub fn new(store: &'a mut Store, show_output: bool) -> Session<'a> {
        let visible = std::io::stderr().is_terminal() && !show_output;
        let bar = if visible {
            ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::stderr())
        } else {
            ProgressBar::hidden()
        };
        bar.set_style(
            ProgressStyle::with_template("{bar:30} {pos}/{len} runs · {msg} · ETA {eta}")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        let mut s = Session { warmup: store.doc.plan.warmup as u64, store, bar };
        s.update_length();
        s.bar.set_position(s.done());
        s
    }

    /// Removes the bar.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }

    fn done(&self) -> u64 {
        self.store.doc.points.iter().map(|p| p.runs.len() as u64).sum()
    }

    fn update_length(&mut self) {
        let min = self.store.doc.plan.runs.min;
        let total: u64 =
            self.store.doc.points.iter().map(|p| p.target_runs.unwrap_or(min).max(p.runs.len() as u32) as u64).sum();
        self.bar.set_length(total);
    }
}

impl Sink for Session<'_> {
    fn record(&mut self, point: usize, run: RunRecord, units: &[(String, String)]) -> anyhow::Result<()> {
        self.store.record(point, run, units)?;
        self.bar.inc(1);
        Ok(())
    }

    fn target(&mut self, point: usize, runs: u32) {
        self.store.target(point, runs);
        self.update_length();
    }

    fn event(&mut self, event: Event) {
        match event {
            Event::Starting { point, warmup, progress } => {
                let p = &self.store.doc.points[point];
                let what = if warmup {
                    format!("warm-up of {}", self.warmup)
                } else {
                    let target = progress[point].target.map_or("?".into(), |t| t.to_string());
                    format!("run {}/{target}", progress[point].done + 1)
                };
                self.bar.set_message(format!("{} · {what}", p.label()));
            }
            Event::Warning(w) => self.bar.suspend(|| crate::report::terminal::warn(&w)),
        }
    }

    fn folder(&self) -> Option<PathBuf> {
        self.store.folder()
    }

    fn runs_recorded(&self, point: usize) -> usize {
        self.store.runs_recorded(point)
    }
}
