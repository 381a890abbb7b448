//! The results folder on disk. results.json is rewritten atomically and durably (a new temporary
//! file, `fsync`, rename over results.json, `fsync` of the folder), so a crash, a kill, Ctrl-C or a
//! power cut never leaves a torn file. A rewrite happens whenever it costs at most 0.1% of the time
//! since the last one; in between, each finished run is appended at once to results.journal in one
//! write, made durable by a background `fsync` while the next run goes on ([`super::sync`]).
//! Loading replays the journal: no finished run is ever lost, and the cost per run stays flat
//! however long the sweep.

use super::sync::Syncer;
use super::{Results, Status, load, time};
use crate::exec::RunRecord;
use crate::exec::sweep::{Event, Sink};
use anyhow::Context;
use serde::{Deserialize, Serialize};
use std::cell::Cell;
use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// File name of the document inside a results folder.
pub const FILE_NAME: &str = "results.json";
/// File name of the journal of runs not yet in results.json.
pub const JOURNAL: &str = "results.journal";
/// The share of a sweep's time that rewriting results.json may take.
const SAVE_SHARE: f64 = 0.001;

/// A results folder and the document it holds.
pub struct Store {
    dir: PathBuf,
    /// The document, with every recorded run.
    pub doc: Results,
    last_save: Instant,
    save_cost: Duration,
    journal: Option<Arc<File>>,
    /// The folder, held open to tell cheaply that it is still there.
    folder: Option<File>,
    syncer: Syncer,
    /// Set when the folder vanished during the sweep and was made again (with every run).
    pub recreated: Cell<bool>,
}

/// One line of the journal.
#[derive(Serialize, Deserialize)]
pub(crate) struct Entry {
    /// The point's index.
    pub point: usize,
    /// The run.
    pub run: RunRecord,
    /// Units of its metrics.
    pub units: Vec<(String, String)>,
}

/// An [`Entry`] to write, borrowed from the run (a run with its thread report is not copied).
#[derive(Serialize)]
struct EntryOut<'a> {
    point: usize,
    run: &'a RunRecord,
    units: &'a [(String, String)],
}

impl Store {
    /// Creates the folder and writes the initial document; refuses a folder that already holds results.
    pub fn create(dir: &Path, doc: Results) -> anyhow::Result<Store> {
        if dir.exists() && !dir.is_dir() {
            anyhow::bail!(
                "cannot create the results folder {}: a file of that name exists (choose another --out)",
                dir.display()
            );
        }
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create the results folder {}", dir.display()))?;
        if dir.join(FILE_NAME).exists() {
            anyhow::bail!(
                "{} already holds results: continue that sweep with --resume {0}, or choose another --out",
                dir.display()
            );
        }
        Store::over(dir.to_path_buf(), doc)
    }

    /// Opens an existing folder to continue its sweep.
    pub fn open(dir: &Path) -> anyhow::Result<Store> {
        let (dir, doc) = load(dir)?;
        Store::over(dir, doc)
    }

    fn over(dir: PathBuf, doc: Results) -> anyhow::Result<Store> {
        let mut store = Store {
            dir,
            doc,
            last_save: Instant::now(),
            save_cost: Duration::ZERO,
            journal: None,
            folder: None,
            syncer: Syncer::new(),
            recreated: Cell::default(),
        };
        store.save()?;
        Ok(store)
    }

    /// The results folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Path of results.json.
    pub fn file(&self) -> PathBuf {
        self.dir.join(FILE_NAME)
    }

    /// Sets the status and saves.
    pub fn finish(&mut self, status: Status) -> anyhow::Result<()> {
        self.doc.status = status;
        self.save()
    }

    /// Removes what the store wrote, and the folder when that leaves it empty: for a sweep that
    /// stopped before its first run, so the same `--out` can be used again once the command is
    /// fixed. Keeps everything when a run was recorded.
    pub fn discard(self) {
        if self.doc.run_count() > 0 {
            return;
        }
        drop(self.journal);
        for name in [FILE_NAME, JOURNAL] {
            let _ = std::fs::remove_file(self.dir.join(name));
        }
        let _ = std::fs::remove_dir(&self.dir);
    }

    /// Makes the folder again if it was deleted under the sweep: the document in memory holds
    /// every run, so the next save loses nothing. Returns whether it had to.
    fn ensure_dir(&mut self) -> bool {
        // The folder is there while the one held open still has a name (an fstat, no path to
        // walk: a path looked up right after a run exits cost 20-40 µs on the project's VM).
        if self.folder.as_ref().is_some_and(|f| f.metadata().is_ok_and(|m| m.nlink() > 0)) {
            return false;
        }
        if self.dir.is_dir() {
            self.folder = File::open(&self.dir).ok();
            return false;
        }
        if std::fs::create_dir_all(&self.dir).is_err() {
            return false;
        }
        self.folder = File::open(&self.dir).ok();
        self.recreated.set(true);
        self.journal = None;
        true
    }

    /// Appends a run to the journal with one write, and has it made durable in the background.
    fn append(&mut self, point: usize, run: &RunRecord, units: &[(String, String)]) -> anyhow::Result<()> {
        let path = self.dir.join(JOURNAL);
        let fail = |e: std::io::Error| anyhow::anyhow!("cannot write {}: {e}", path.display());
        let entry = EntryOut { point, run, units };
        let mut line = serde_json::to_vec(&entry)?;
        line.push(b'\n');
        let file = match &self.journal {
            Some(f) => f.clone(),
            None => {
                let f = OpenOptions::new()
                    .create(true)
                    .append(true)
                    .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
                    .open(&path)
                    .map_err(fail)?;
                self.journal.insert(Arc::new(f)).clone()
            }
        };
        (&*file).write_all(&line).map_err(fail)?;
        self.syncer.sync(file).map_err(fail)
    }

    /// Writes the document atomically and durably: a new temporary file in the folder, `fsync`,
    /// a rename over results.json, `fsync` of the folder; then the journal is no longer needed.
    pub fn save(&mut self) -> anyhow::Result<()> {
        let start = Instant::now();
        self.ensure_dir();
        let tmp = self.dir.join(format!(".{FILE_NAME}.{}.tmp", std::process::id()));
        let _ = std::fs::remove_file(&tmp);
        let write = || -> std::io::Result<()> {
            // create_new refuses to follow a symlink planted at the temporary name.
            let f = OpenOptions::new().write(true).create_new(true).open(&tmp)?;
            let mut w = BufWriter::with_capacity(256 * 1024, f);
            serde_json::to_writer_pretty(&mut w, &self.doc)?;
            w.write_all(b"\n")?;
            w.into_inner().map_err(|e| e.into_error())?.sync_data()?;
            std::fs::rename(&tmp, self.file())?;
            File::open(&self.dir)?.sync_all()?;
            // Everything journaled is now in results.json.
            match std::fs::remove_file(self.dir.join(JOURNAL)) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
                _ => Ok(()),
            }
        };
        write().map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            anyhow::anyhow!("cannot write {}: {e}", self.file().display())
        })?;
        self.journal = None;
        self.last_save = Instant::now();
        self.save_cost = self.last_save - start;
        Ok(())
    }
}

impl Sink for Store {
    fn record(&mut self, point: usize, mut run: RunRecord, units: &[(String, String)]) -> anyhow::Result<()> {
        run.index = self.doc.points[point].runs.len() as u32;
        let due = self.save_cost.as_secs_f64() <= SAVE_SHARE * self.last_save.elapsed().as_secs_f64();
        if due || self.ensure_dir() {
            self.doc.add_run(point, run, units);
            self.doc.updated = time::iso_utc(time::unix_now());
            return self.save();
        }
        self.append(point, &run, units)?;
        self.doc.add_run(point, run, units);
        Ok(())
    }

    fn target(&mut self, point: usize, runs: u32) {
        self.doc.points[point].target_runs = Some(runs);
    }

    fn event(&mut self, _event: Event) {}

    fn folder(&self) -> Option<PathBuf> {
        Some(self.dir.clone())
    }

    fn runs_recorded(&self, point: usize) -> usize {
        self.doc.points[point].runs.len()
    }
}
