//! The results folder on disk: results.json rewritten atomically (temporary file + rename), so a
//! crash, a kill or Ctrl-C never leaves a torn file. Every finished run is also appended at once to
//! results.journal; while a sweep is small the whole file is rewritten after every run, beyond that
//! at most once a second, and loading replays the journal: no finished run is ever lost, and the
//! cost per run stays flat however long the sweep.

use super::{Results, SCHEMA_VERSION, Status, time};
use crate::exec::RunRecord;
use crate::exec::sweep::{Event, Sink};
use anyhow::Context;
use serde::{Deserialize, Serialize};
use std::fs::OpenOptions;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// File name of the document inside a results folder.
pub const FILE_NAME: &str = "results.json";
/// File name of the journal of runs not yet in results.json.
pub const JOURNAL: &str = "results.journal";
/// Up to this many runs, results.json is rewritten after every run.
const ALWAYS_REWRITE_RUNS: usize = 200;
/// Beyond that, at most this often.
const REWRITE_EVERY: Duration = Duration::from_secs(1);

/// A results folder and the document it holds.
pub struct Store {
    dir: PathBuf,
    /// The document, with every recorded run.
    pub doc: Results,
    last_save: Instant,
    /// Set when the folder vanished during the sweep and was made again (with every run).
    pub recreated: std::cell::Cell<bool>,
}

/// One line of the journal.
#[derive(Serialize, Deserialize)]
struct Entry {
    point: usize,
    run: RunRecord,
    units: Vec<(String, String)>,
}

/// Adds the journal's runs that results.json does not hold yet; a torn last line is ignored.
fn replay(dir: &Path, doc: &mut Results) {
    let Ok(text) = std::fs::read_to_string(dir.join(JOURNAL)) else { return };
    for line in text.lines() {
        let Ok(e) = serde_json::from_str::<Entry>(line) else { continue };
        if let Some(p) = doc.points.get(e.point)
            && e.run.index as usize == p.runs.len()
        {
            doc.add_run(e.point, e.run, &e.units);
        }
    }
}

/// Why a results file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The file or folder is missing or unreadable.
    #[error("cannot read {path}: {reason}")]
    Unreadable {
        /// What was asked for.
        path: String,
        /// Why it failed.
        reason: String,
    },
    /// The file is not a scalescope results document.
    #[error("{path} is not a scalescope results file: {reason}")]
    Invalid {
        /// What was asked for.
        path: String,
        /// What is wrong with it.
        reason: String,
    },
    /// Written by a newer scalescope.
    #[error(
        "{path} has results schema version {found}; this scalescope ({ours}) reads up to version {SCHEMA_VERSION}: install a newer scalescope to read it"
    )]
    TooNew {
        /// What was asked for.
        path: String,
        /// Its schema version.
        found: u64,
        /// This build's version.
        ours: &'static str,
    },
    /// Older than any layout this build reads.
    #[error(
        "{path} has results schema version {found}, older than this scalescope reads (versions {OLDEST_SCHEMA} to {SCHEMA_VERSION}): open it with the scalescope that wrote it (its scalescope_version), or run the sweep again"
    )]
    TooOld {
        /// What was asked for.
        path: String,
        /// Its schema version.
        found: u64,
    },
}

/// The oldest results layout this build reads.
pub const OLDEST_SCHEMA: u64 = 1;

/// Reads a results document from a file or from the results.json in a folder.
pub fn load(path: &Path) -> Result<(PathBuf, Results), LoadError> {
    let file = if path.is_dir() { path.join(FILE_NAME) } else { path.to_path_buf() };
    let shown = file.display().to_string();
    let bytes =
        std::fs::read(&file).map_err(|e| LoadError::Unreadable { path: shown.clone(), reason: e.to_string() })?;
    let mut value: serde_json::Value = serde_json::from_slice(&bytes)
        .map_err(|e| LoadError::Invalid { path: shown.clone(), reason: e.to_string() })?;
    let version = value.get("schema_version").and_then(|v| v.as_u64());
    match version {
        None => return Err(LoadError::Invalid { path: shown, reason: "it has no schema_version".into() }),
        Some(v) if v > SCHEMA_VERSION as u64 => {
            return Err(LoadError::TooNew { path: shown, found: v, ours: env!("CARGO_PKG_VERSION") });
        }
        Some(v) if v < OLDEST_SCHEMA => return Err(LoadError::TooOld { path: shown, found: v }),
        Some(1) => {
            // Version 1 stored the analysis and findings untyped, and no axis: they are made again.
            if let Some(doc) = value.as_object_mut() {
                doc.remove("analysis");
                doc.remove("findings");
            }
        }
        _ => {}
    }
    let mut doc: Results =
        serde_json::from_value(value).map_err(|e| LoadError::Invalid { path: shown, reason: e.to_string() })?;
    // Read in this build's layout, it is written back in it.
    doc.schema_version = SCHEMA_VERSION;
    if doc.plan.axis.is_none() {
        // Written before the axis was stored: decided now by the same rules (none if they no longer hold).
        doc.plan.axis = doc.plan.axis_with(None, false, false).unwrap_or_default();
    }
    // The runs are the record: statistics and warnings are recomputed by this version's rules.
    for p in &mut doc.points {
        p.refresh();
    }
    let dir = file.parent().map_or_else(|| PathBuf::from("."), Path::to_path_buf);
    replay(&dir, &mut doc);
    Ok((dir, doc))
}

impl Store {
    /// Creates the folder and writes the initial document; refuses a folder that already holds results.
    pub fn create(dir: &Path, doc: Results) -> anyhow::Result<Store> {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create the results folder {}", dir.display()))?;
        if dir.join(FILE_NAME).exists() {
            anyhow::bail!(
                "{} already holds results: continue that sweep with --resume {0}, or choose another --out",
                dir.display()
            );
        }
        let store = Store { dir: dir.to_path_buf(), doc, last_save: Instant::now(), recreated: Default::default() };
        store.save()?;
        Ok(store)
    }

    /// Opens an existing folder to continue its sweep.
    pub fn open(dir: &Path) -> anyhow::Result<Store> {
        let (dir, doc) = load(dir)?;
        let store = Store { dir, doc, last_save: Instant::now(), recreated: Default::default() };
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

    /// Makes the folder again if it was deleted under the sweep: the document in memory holds
    /// every run, so the next save loses nothing. Returns whether it had to.
    fn ensure_dir(&self) -> bool {
        if self.dir.is_dir() || std::fs::create_dir_all(&self.dir).is_err() {
            return false;
        }
        self.recreated.set(true);
        true
    }

    /// Appends a run to the journal with one write.
    fn journal(&self, point: usize, run: &RunRecord, units: &[(String, String)]) -> anyhow::Result<()> {
        let entry = Entry { point, run: run.clone(), units: units.to_vec() };
        let mut line = serde_json::to_vec(&entry)?;
        line.push(b'\n');
        let path = self.dir.join(JOURNAL);
        OpenOptions::new()
            .create(true)
            .append(true)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&path)
            .and_then(|mut f| f.write_all(&line))
            .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))
    }

    /// Writes the document atomically: a new temporary file in the folder, then a rename over results.json.
    pub fn save(&self) -> anyhow::Result<()> {
        self.ensure_dir();
        let tmp = self.dir.join(format!(".{FILE_NAME}.{}.tmp", std::process::id()));
        let _ = std::fs::remove_file(&tmp);
        let write = || -> std::io::Result<()> {
            // create_new refuses to follow a symlink planted at the temporary name.
            let mut f = OpenOptions::new().write(true).create_new(true).open(&tmp)?;
            let mut buf = Vec::with_capacity(64 * 1024);
            serde_json::to_writer_pretty(&mut buf, &self.doc)?;
            buf.push(b'\n');
            f.write_all(&buf)?;
            std::fs::rename(&tmp, self.file())?;
            // Everything journaled is now in results.json.
            match std::fs::remove_file(self.dir.join(JOURNAL)) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
                _ => Ok(()),
            }
        };
        write().map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            anyhow::anyhow!("cannot write {}: {e}", self.file().display())
        })
    }
}

impl Sink for Store {
    fn record(&mut self, point: usize, mut run: RunRecord, units: &[(String, String)]) -> anyhow::Result<()> {
        run.index = self.doc.points[point].runs.len() as u32;
        if self.doc.run_count() >= ALWAYS_REWRITE_RUNS && self.last_save.elapsed() < REWRITE_EVERY && !self.ensure_dir()
        {
            self.journal(point, &run, units)?;
            self.doc.add_run(point, run, units);
            return Ok(());
        }
        self.doc.add_run(point, run, units);
        self.doc.updated = time::iso_utc(time::unix_now());
        self.save()?;
        self.last_save = Instant::now();
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
