//! results.journal: every finished run not yet in results.json, appended at once in one write
//! and made durable by a background `fsync` ([`super::sync`]); loading replays it, so no finished
//! run is lost between two rewrites of results.json.

use super::sync::Syncer;
use super::{Results, RunRecord};
use serde::{Deserialize, Serialize};
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::sync::Arc;

/// File name of the journal of runs not yet in results.json.
pub const JOURNAL: &str = "results.journal";

/// One line of the journal.
#[derive(Deserialize)]
struct Entry {
    /// The point's index.
    point: usize,
    /// The run.
    run: RunRecord,
    /// Units of its metrics.
    units: Vec<(String, String)>,
}

/// An [`Entry`] to write, borrowed from the run (a run with its thread report is not copied).
#[derive(Serialize)]
struct EntryOut<'a> {
    point: usize,
    run: &'a RunRecord,
    units: &'a [(String, String)],
}

/// The journal of a results folder: opened at the first append after each rewrite of
/// results.json, which makes it no longer needed.
pub(super) struct Journal {
    file: Option<Arc<File>>,
    syncer: Syncer,
}

impl Journal {
    /// A journal not opened yet.
    pub fn new() -> Journal {
        Journal { file: None, syncer: Syncer::new() }
    }

    /// Appends a run to the journal in `dir` with one write, and has it made durable in the
    /// background; the error of an earlier `fsync` is returned here.
    pub fn append(
        &mut self,
        dir: &Path,
        point: usize,
        run: &RunRecord,
        units: &[(String, String)],
    ) -> io::Result<()> {
        let mut line = serde_json::to_vec(&EntryOut { point, run, units })?;
        line.push(b'\n');
        let file = match &self.file {
            Some(f) => f.clone(),
            None => {
                let f = OpenOptions::new()
                    .create(true)
                    .append(true)
                    .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
                    .open(dir.join(JOURNAL))?;
                self.file.insert(Arc::new(f)).clone()
            }
        };
        (&*file).write_all(&line)?;
        self.syncer.sync(file)
    }

    /// Forgets the open file: results.json holds its runs now, or the folder was made again.
    pub fn close(&mut self) {
        self.file = None;
    }
}

/// Adds the journal's runs that results.json does not hold yet; a torn last line is ignored.
pub(super) fn replay(dir: &Path, doc: &mut Results) {
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
