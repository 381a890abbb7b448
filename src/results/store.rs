//! The results folder on disk. results.json is rewritten atomically and durably (a new temporary
//! file, `fsync`, rename over results.json, `fsync` of the folder), so a crash, a kill, Ctrl-C or a
//! power cut never leaves a torn file. A rewrite happens whenever it costs at most 0.1% of the time
//! since the last one; in between, each finished run is appended at once to results.journal in one
//! write, made durable by a background `fsync` while the next run goes on ([`super::journal`]).
//! Loading replays the journal: no finished run is ever lost, and the cost per run stays flat
//! however long the sweep.

use super::journal::{JOURNAL, Journal};
use super::{FILE_NAME, LoadError, Results, RunRecord, Status, load, time};
use crate::files::WriteError;
use std::cell::Cell;
use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The share of a sweep's time that rewriting results.json may take.
const SAVE_SHARE: f64 = 0.001;

/// A results folder and the document it holds.
pub struct Store {
    dir: PathBuf,
    /// The document, with every recorded run.
    pub doc: Results,
    last_save: Instant,
    save_cost: Duration,
    journal: Journal,
    /// The folder, held open to tell cheaply that it is still there.
    folder: Option<File>,
    /// Set when the folder vanished during the sweep and was made again (with every run).
    pub recreated: Cell<bool>,
}

/// Why a results folder could not be made, opened or written. Each names the path; the
/// system's error is kept as the source.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// A file stands where the folder should be made.
    #[error("cannot create the results folder {}: a file of that name exists (choose another --out)", path.display())]
    NotAFolder {
        /// The path asked for.
        path: PathBuf,
    },
    /// The folder could not be made.
    #[error("cannot create the results folder {}", path.display())]
    Create {
        /// The folder.
        path: PathBuf,
        /// What the system said.
        source: io::Error,
    },
    /// The folder holds the results of another sweep already.
    #[error(
        "{} already holds results: continue that sweep with --resume {}, or choose another --out",
        path.display(),
        path.display()
    )]
    HoldsResults {
        /// The folder.
        path: PathBuf,
    },
    /// The folder's results could not be read back to continue its sweep.
    #[error(transparent)]
    Load(#[from] LoadError),
    /// results.json or the journal could not be written.
    #[error(transparent)]
    Write(#[from] WriteError),
}

impl StoreError {
    /// Whether the user can fix it by naming another folder or file (exit code 2), rather than the
    /// disk failing under a sweep (exit code 1).
    pub fn is_user_mistake(&self) -> bool {
        match self {
            StoreError::NotAFolder { .. }
            | StoreError::HoldsResults { .. }
            | StoreError::Load(_) => true,
            StoreError::Create { .. } | StoreError::Write(_) => false,
        }
    }
}

impl Store {
    /// Creates the folder and writes the initial document; refuses a folder that already holds results.
    pub fn create(dir: &Path, doc: Results) -> Result<Store, StoreError> {
        if dir.exists() && !dir.is_dir() {
            return Err(StoreError::NotAFolder { path: dir.to_path_buf() });
        }
        std::fs::create_dir_all(dir)
            .map_err(|source| StoreError::Create { path: dir.to_path_buf(), source })?;
        if dir.join(FILE_NAME).exists() {
            return Err(StoreError::HoldsResults { path: dir.to_path_buf() });
        }
        Store::over(dir.to_path_buf(), doc)
    }

    /// Opens an existing folder to continue its sweep.
    pub fn open(dir: &Path) -> Result<Store, StoreError> {
        let (dir, doc) = load(dir)?;
        Store::over(dir, doc)
    }

    fn over(dir: PathBuf, doc: Results) -> Result<Store, StoreError> {
        let mut store = Store {
            dir,
            doc,
            last_save: Instant::now(),
            save_cost: Duration::ZERO,
            journal: Journal::new(),
            folder: None,
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
    pub fn finish(&mut self, status: Status) -> Result<(), WriteError> {
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
        self.journal.close();
        true
    }

    /// Writes the document atomically and durably: a new temporary file in the folder, `fsync`,
    /// a rename over results.json, `fsync` of the folder; then the journal is no longer needed.
    pub fn save(&mut self) -> Result<(), WriteError> {
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
        write().map_err(|source| {
            let _ = std::fs::remove_file(&tmp);
            WriteError { path: self.file(), source }
        })?;
        self.journal.close();
        self.last_save = Instant::now();
        self.save_cost = self.last_save - start;
        Ok(())
    }
}

impl Store {
    /// Keeps a measured run of `point`, numbered after the runs it already has: into results.json
    /// when a rewrite is due (or the folder had to be made again), else appended to the journal.
    /// `units` gives the unit of each metric it carries.
    pub fn record(
        &mut self,
        point: usize,
        mut run: RunRecord,
        units: &[(String, String)],
    ) -> Result<(), WriteError> {
        run.index = self.doc.points[point].runs.len() as u32;
        let due =
            self.save_cost.as_secs_f64() <= SAVE_SHARE * self.last_save.elapsed().as_secs_f64();
        if due || self.ensure_dir() {
            self.doc.add_run(point, run, units);
            self.doc.updated = time::iso_utc(time::unix_now());
            return self.save();
        }
        self.journal
            .append(&self.dir, point, &run, units)
            .map_err(|source| WriteError { path: self.dir.join(JOURNAL), source })?;
        self.doc.add_run(point, run, units);
        Ok(())
    }

    /// Sets how many measured runs `point` needs, once that is known.
    pub fn target(&mut self, point: usize, runs: u32) {
        self.doc.points[point].target_runs = Some(runs);
    }

    /// Runs already stored for `point`, failed ones included.
    pub fn runs_recorded(&self, point: usize) -> usize {
        self.doc.points[point].runs.len()
    }
}
