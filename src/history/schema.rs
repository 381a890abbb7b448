//! The history's tables and how a file moves from one layout to the next: `schema_version` holds
//! the version, and each migration in [`MIGRATIONS`] takes the file one version further inside
//! the transaction that records it. A file with a newer version is refused, never altered.

use rusqlite::{Connection, OptionalExtension, TransactionBehavior};

/// Marks a SQLite file as a scalescope history (`PRAGMA application_id`, "SSHI").
pub const APPLICATION_ID: i64 = 0x5353_4849;

/// Each migration's SQL; migration `i` takes a file from version `i` to `i + 1`.
pub const MIGRATIONS: [&str; 2] = [V1, V2];

/// The version this build writes.
pub fn current() -> i64 {
    MIGRATIONS.len() as i64
}

/// Version 1: one row per sweep, and its tags, points, runs, models and findings.
const V1: &str = "
CREATE TABLE sweeps (
    id INTEGER PRIMARY KEY,
    uid TEXT NOT NULL UNIQUE,
    series TEXT NOT NULL,
    kind TEXT NOT NULL,
    created TEXT NOT NULL,
    recorded TEXT NOT NULL,
    source TEXT NOT NULL,
    status TEXT NOT NULL,
    command TEXT NOT NULL,
    params TEXT NOT NULL,
    axis TEXT,
    basis TEXT,
    tool_version TEXT NOT NULL,
    host TEXT NOT NULL,
    cpu_model TEXT NOT NULL,
    logical_cpus INTEGER NOT NULL,
    physical_cores INTEGER NOT NULL,
    allowed_cpus INTEGER NOT NULL,
    memory_bytes INTEGER NOT NULL,
    os TEXT NOT NULL,
    kernel TEXT NOT NULL,
    arch TEXT NOT NULL,
    git_commit TEXT,
    git_dirty INTEGER,
    git_branch TEXT
);
CREATE INDEX sweeps_by_series ON sweeps (series, created);
CREATE TABLE tags (
    sweep INTEGER NOT NULL REFERENCES sweeps (id) ON DELETE CASCADE,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (sweep, key)
);
CREATE TABLE points (
    sweep INTEGER NOT NULL REFERENCES sweeps (id) ON DELETE CASCADE,
    idx INTEGER NOT NULL,
    label TEXT NOT NULL,
    params TEXT NOT NULL,
    series TEXT NOT NULL,
    count REAL,
    runs INTEGER NOT NULL,
    mean_s REAL,
    median_s REAL,
    stddev_s REAL,
    min_s REAL,
    max_s REAL,
    speedup REAL,
    efficiency REAL,
    karp_flatt REAL,
    PRIMARY KEY (sweep, idx)
);
CREATE TABLE runs (
    sweep INTEGER NOT NULL REFERENCES sweeps (id) ON DELETE CASCADE,
    point INTEGER NOT NULL,
    idx INTEGER NOT NULL,
    ok INTEGER NOT NULL,
    wall_s REAL,
    user_s REAL,
    sys_s REAL,
    cpu_pct REAL,
    throughput REAL,
    others_cpus REAL,
    PRIMARY KEY (sweep, point, idx)
);
CREATE TABLE models (
    sweep INTEGER NOT NULL REFERENCES sweeps (id) ON DELETE CASCADE,
    series TEXT NOT NULL,
    baseline REAL NOT NULL,
    largest REAL NOT NULL,
    efficiency_at_largest REAL,
    serial_fraction REAL,
    serial_fraction_low REAL,
    serial_fraction_high REAL,
    usl_sigma REAL,
    usl_kappa REAL,
    usl_peak REAL,
    best_count REAL,
    PRIMARY KEY (sweep, series)
);
CREATE TABLE findings (
    sweep INTEGER NOT NULL REFERENCES sweeps (id) ON DELETE CASCADE,
    rank INTEGER NOT NULL,
    kind TEXT NOT NULL,
    severity TEXT NOT NULL,
    summary TEXT NOT NULL,
    share_pct REAL,
    at REAL,
    PRIMARY KEY (sweep, rank)
);
";

/// Version 2: each run's machine pace (nanoseconds per million steps of a fixed loop, timed just
/// before it), so that a step of the machine's speed is told from the program's.
const V2: &str = "ALTER TABLE runs ADD COLUMN pace_ns REAL;";

/// What a file holds before it is migrated.
#[derive(Debug, PartialEq, Eq)]
pub enum State {
    /// Nothing: a new file.
    Empty,
    /// A scalescope history at this version.
    Version(i64),
    /// Tables of something else.
    Foreign,
}

/// Reads the file's state; fails as SQLite does on a file that is not a database.
pub fn state(conn: &Connection) -> rusqlite::Result<State> {
    let tables: i64 =
        conn.query_row("SELECT count(*) FROM sqlite_master WHERE type = 'table'", [], |r| {
            r.get(0)
        })?;
    if tables == 0 {
        return Ok(State::Empty);
    }
    let has_version: bool = conn
        .query_row(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'",
            [],
            |_| Ok(true),
        )
        .optional()?
        .unwrap_or(false);
    if !has_version {
        return Ok(State::Foreign);
    }
    let v: Option<i64> =
        conn.query_row("SELECT max(version) FROM schema_version", [], |r| r.get(0))?;
    Ok(State::Version(v.unwrap_or(0)))
}

/// Brings the file from `from` to [`current`], all in one transaction (another writer that got
/// there first leaves nothing to do).
pub fn migrate(conn: &mut Connection) -> rusqlite::Result<()> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let from = match state(&tx)? {
        State::Empty => {
            tx.execute_batch("CREATE TABLE schema_version (version INTEGER NOT NULL);")?;
            tx.pragma_update(None, "application_id", APPLICATION_ID)?;
            0
        }
        State::Version(v) => v,
        State::Foreign => return Ok(()),
    };
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(from.max(0) as usize) {
        tx.execute_batch(sql)?;
        tx.execute("INSERT INTO schema_version (version) VALUES (?1)", [i as i64 + 1])?;
    }
    tx.commit()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_file_is_migrated_once_to_the_current_version() {
        let mut c = Connection::open_in_memory().unwrap();
        assert_eq!(state(&c).unwrap(), State::Empty);
        migrate(&mut c).unwrap();
        assert_eq!(state(&c).unwrap(), State::Version(current()));
        migrate(&mut c).unwrap();
        let rows: i64 =
            c.query_row("SELECT count(*) FROM schema_version", [], |r| r.get(0)).unwrap();
        assert_eq!(rows, current());
    }

    #[test]
    fn a_version_1_file_keeps_its_runs_and_gains_their_pace() {
        let mut c = Connection::open_in_memory().unwrap();
        c.execute_batch(
            "CREATE TABLE schema_version (version INTEGER NOT NULL); INSERT INTO schema_version VALUES (1);",
        )
        .unwrap();
        c.execute_batch(V1).unwrap();
        c.execute_batch(
            "INSERT INTO sweeps VALUES (1, 'u', 's', 'sweep', 'c', 'r', 'src', 'complete', 'cmd', '{}', NULL, NULL,
                'v', 'h', 'cpu', 2, 2, 2, 1, 'os', 'k', 'x86_64', NULL, NULL, NULL);
             INSERT INTO runs (sweep, point, idx, ok, wall_s) VALUES (1, 0, 0, 1, 1.5);",
        )
        .unwrap();
        assert_eq!(state(&c).unwrap(), State::Version(1));
        migrate(&mut c).unwrap();
        assert_eq!(state(&c).unwrap(), State::Version(current()));
        let (wall, pace): (f64, Option<f64>) = c
            .query_row("SELECT wall_s, pace_ns FROM runs", [], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap();
        assert_eq!((wall, pace), (1.5, None));
    }

    #[test]
    fn another_programs_tables_are_foreign_and_left_alone() {
        let mut c = Connection::open_in_memory().unwrap();
        c.execute_batch("CREATE TABLE t (x);").unwrap();
        migrate(&mut c).unwrap();
        assert_eq!(state(&c).unwrap(), State::Foreign);
    }
}
