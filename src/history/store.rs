//! Opening the history file: made (with its folder) when a sweep is first recorded, in WAL mode
//! so that readers never block the writer, with a busy timeout and retries so that two sweeps
//! finishing at once both get in; a file that is not ours, damaged, newer, locked, read-only or on
//! a full disk becomes one [`HistoryError`]. On a network file system WAL cannot work and locks
//! are not to be trusted: the file keeps a rollback journal and the writer is warned.

use super::schema::{self, State};
use super::{HistoryError, fsinfo};
use rusqlite::{Connection, ErrorCode, OpenFlags, Transaction, TransactionBehavior};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How long one statement waits for another writer's lock before SQLite gives up.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);
/// How long a write is retried in all.
const RETRY_FOR: Duration = Duration::from_secs(60);

/// An open history.
pub struct History {
    conn: Connection,
    path: PathBuf,
}

impl std::fmt::Debug for History {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("History").field("path", &self.path).finish()
    }
}

impl History {
    /// Opens the history at `path` to record into it, making the file and its folder when they do
    /// not exist. Warns on stderr when the folder is on a network file system.
    pub fn create(path: &Path) -> Result<History, HistoryError> {
        let shown = path.display().to_string();
        if path.is_dir() {
            return Err(HistoryError::Folder { path: shown });
        }
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| match e.kind() {
                std::io::ErrorKind::ReadOnlyFilesystem | std::io::ErrorKind::PermissionDenied => {
                    HistoryError::ReadOnly { path: shown.clone(), reason: e.to_string() }
                }
                _ => HistoryError::CannotOpen { path: shown.clone(), reason: e.to_string() },
            })?;
        }
        let network =
            path.parent().map(|d| if d.as_os_str().is_empty() { Path::new(".") } else { d });
        let network = network.and_then(fsinfo::network_fs);
        if let Some(fs) = network {
            crate::fmt::say!(
                "scalescope: warning: the history {shown} is on a network file system ({fs}): SQLite's locks are not safe there when several machines write at once; point --history or {} at a local disk",
                super::ENV
            );
        }
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        Self::open_with(path, flags, network.is_none())
    }

    /// Opens an existing history to read it (and bring its layout up to date when it can be written).
    pub fn open(path: &Path) -> Result<History, HistoryError> {
        if !path.exists() {
            return Err(HistoryError::NotFound { path: path.display().to_string() });
        }
        if path.is_dir() {
            return Err(HistoryError::Folder { path: path.display().to_string() });
        }
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let read_only = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        match Self::open_with(path, flags, false) {
            Err(HistoryError::ReadOnly { .. } | HistoryError::CannotOpen { .. }) => {
                match Self::open_with(path, read_only, false) {
                    // A WAL file on a read-only file system, its shared memory gone: read as it
                    // stands (nobody can be writing to it there).
                    Err(HistoryError::ReadOnly { .. } | HistoryError::CannotOpen { .. }) => {
                        let mut h = Self::open_with(
                            Path::new(&immutable_uri(path)),
                            read_only | OpenFlags::SQLITE_OPEN_URI,
                            false,
                        )?;
                        h.path = path.to_path_buf();
                        Ok(h)
                    }
                    other => other,
                }
            }
            other => other,
        }
    }

    fn open_with(path: &Path, flags: OpenFlags, wal: bool) -> Result<History, HistoryError> {
        let shown = path.display().to_string();
        let fail = |e: rusqlite::Error| error(&shown, e);
        let conn = Connection::open_with_flags(path, flags).map_err(fail)?;
        conn.busy_timeout(BUSY_TIMEOUT).map_err(fail)?;
        conn.pragma_update(None, "foreign_keys", true).map_err(fail)?;
        let mut h = History { conn, path: path.to_path_buf() };
        let state = h.retry(|c| schema::state(c))?;
        match state {
            State::Foreign => {
                return Err(HistoryError::Corrupt {
                    path: shown,
                    reason: "it holds another program's tables".into(),
                });
            }
            State::Version(v) if v > schema::current() => {
                return Err(HistoryError::TooNew {
                    path: shown,
                    found: v,
                    ours: schema::current(),
                });
            }
            State::Version(v) if v == schema::current() => {}
            _ if flags.contains(OpenFlags::SQLITE_OPEN_READ_ONLY) => {
                return Err(HistoryError::ReadOnly {
                    path: shown,
                    reason:
                        "its layout is older than this scalescope's and the file cannot be written"
                            .into(),
                });
            }
            _ => {
                if wal {
                    // WAL: readers and the writer do not block each other. Kept by the file.
                    h.retry(|c| {
                        c.pragma_update_and_check(None, "journal_mode", "wal", |r| {
                            r.get::<_, String>(0)
                        })
                    })?;
                }
                h.retry(schema::migrate)?;
            }
        }
        h.conn.pragma_update(None, "synchronous", "normal").map_err(fail)?;
        Ok(h)
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The connection, for reading.
    pub fn conn(&self) -> &Connection {
        &self.conn
    }

    /// Runs `f` in a write transaction (taken at once, so that two writers queue rather than
    /// deadlock), committed when it returns; retried while another writer holds the file.
    pub fn write<T>(
        &mut self,
        mut f: impl FnMut(&Transaction) -> rusqlite::Result<T>,
    ) -> Result<T, HistoryError> {
        self.retry(|c| {
            let tx = c.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let out = f(&tx)?;
            tx.commit()?;
            Ok(out)
        })
    }

    /// Runs `f` again, after a growing pause, while it fails because the file is locked.
    fn retry<T>(
        &mut self,
        mut f: impl FnMut(&mut Connection) -> rusqlite::Result<T>,
    ) -> Result<T, HistoryError> {
        let start = Instant::now();
        let mut pause = Duration::from_millis(20);
        loop {
            match f(&mut self.conn) {
                Ok(v) => return Ok(v),
                Err(e) if locked(&e) => {
                    if start.elapsed() >= RETRY_FOR {
                        return Err(HistoryError::Busy {
                            path: self.path.display().to_string(),
                            seconds: start.elapsed().as_secs(),
                        });
                    }
                    std::thread::sleep(pause);
                    pause = (pause * 2).min(Duration::from_secs(1));
                }
                Err(e) => return Err(error(&self.path.display().to_string(), e)),
            }
        }
    }
}

/// `file:PATH?immutable=1`, the path's `?`, `#` and `%` escaped.
fn immutable_uri(path: &Path) -> String {
    let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let text =
        abs.display().to_string().replace('%', "%25").replace('?', "%3f").replace('#', "%23");
    format!("file:{text}?immutable=1")
}

/// Whether SQLite failed because another connection holds the lock.
fn locked(e: &rusqlite::Error) -> bool {
    matches!(e.sqlite_error_code(), Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked))
}

/// A SQLite failure as one sentence about the file.
pub fn error(path: &str, e: rusqlite::Error) -> HistoryError {
    let path = path.to_string();
    let reason = match &e {
        rusqlite::Error::SqliteFailure(_, Some(m)) => m.clone(),
        other => other.to_string(),
    };
    match e.sqlite_error_code() {
        Some(ErrorCode::NotADatabase | ErrorCode::DatabaseCorrupt) => {
            HistoryError::Corrupt { path, reason }
        }
        Some(ErrorCode::ReadOnly | ErrorCode::PermissionDenied) => {
            HistoryError::ReadOnly { path, reason }
        }
        Some(ErrorCode::CannotOpen) => HistoryError::CannotOpen { path, reason },
        Some(ErrorCode::DiskFull) => HistoryError::Full { path },
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => {
            HistoryError::Busy { path, seconds: 0 }
        }
        _ => HistoryError::Failed { path, reason },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_that_is_not_a_database_is_refused_and_left_as_it_was() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("h.sqlite");
        std::fs::write(
            &p,
            "not a database, not at all, but long enough to be read as a header....",
        )
        .unwrap();
        let before = std::fs::read(&p).unwrap();
        let e = History::create(&p).unwrap_err();
        assert!(matches!(e, HistoryError::Corrupt { .. }), "{e}");
        assert_eq!(std::fs::read(&p).unwrap(), before);
    }

    #[test]
    fn a_missing_file_is_not_found_when_reading_and_made_when_recording() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("sub/h.sqlite");
        assert!(matches!(History::open(&p).unwrap_err(), HistoryError::NotFound { .. }));
        History::create(&p).unwrap();
        History::open(&p).unwrap();
    }
}
