//! Making appended runs durable without waiting for the disk: a thread calls `fsync` on the
//! journal after an append, while the next run goes on, at most once every [`GAP`]: appends that
//! arrive meanwhile share the next `fsync`. A run during which an `fsync` commits the file
//! system's journal is slowed by it (`true`: 7% slower when one ran during every run, on ext4 on
//! the project's VM), so fast runs share one in a hundred milliseconds, and a power cut loses at
//! most the runs that ended in the last [`GAP`]. A failed `fsync` is reported at the next append.

use std::fs::File;
use std::io;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The least time from one `fsync` to the next.
pub(crate) const GAP: Duration = Duration::from_millis(100);

/// The background `fsync` of appended files.
pub(crate) struct Syncer {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

/// What the appender and the thread share.
#[derive(Default)]
struct Shared {
    state: Mutex<State>,
    /// Wakes the thread: something to sync while it was idle, or the end.
    wake: Condvar,
}

#[derive(Default)]
struct State {
    /// Files appended to since the last `fsync` (one, but for the moment a save replaces the
    /// journal).
    pending: Vec<Arc<File>>,
    /// The thread waits for an append (not for the end of a gap): only then does an append wake
    /// it. Waking it at every run cost the sweep a wake-up between two runs.
    idle: bool,
    /// No more appends: sync what is pending and end.
    closed: bool,
    /// The first failed `fsync`, said at the next append.
    failed: Option<io::Error>,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Syncer {
    /// Starts the thread (lazily: a sweep that never appends never starts it).
    pub fn new() -> Syncer {
        Syncer { shared: Arc::default(), thread: None }
    }

    /// Asks for `file` to be made durable; returns the error of an earlier `fsync`, if one failed.
    pub fn sync(&mut self, file: Arc<File>) -> io::Result<()> {
        if self.thread.is_none() {
            let shared = self.shared.clone();
            self.thread = Some(
                std::thread::Builder::new()
                    .name("scalescope-fsync".into())
                    .spawn(move || run(&shared))?,
            );
        }
        let mut st = self.shared.lock();
        if let Some(e) = st.failed.take() {
            return Err(e);
        }
        if !st.pending.iter().any(|f| Arc::ptr_eq(f, &file)) {
            st.pending.push(file);
        }
        if std::mem::replace(&mut st.idle, false) {
            self.shared.wake.notify_one();
        }
        Ok(())
    }

    /// Waits until everything asked for is durable; returns the error of a failed `fsync`.
    pub fn wait(&mut self) -> io::Result<()> {
        if let Some(t) = self.thread.take() {
            self.shared.lock().closed = true;
            self.shared.wake.notify_one();
            let _ = t.join();
        }
        match self.shared.lock().failed.take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

impl Drop for Syncer {
    fn drop(&mut self) {
        let _ = self.wait();
    }
}

/// The thread: syncs what is pending, then lets [`GAP`] pass (cut short by the end) before it
/// looks again; waits for an append when nothing is pending.
fn run(shared: &Shared) {
    let mut st = shared.lock();
    loop {
        while st.pending.is_empty() && !st.closed {
            st.idle = true;
            st = shared.wake.wait(st).unwrap_or_else(PoisonError::into_inner);
        }
        st.idle = false;
        let files = std::mem::take(&mut st.pending);
        if files.is_empty() {
            return;
        }
        drop(st);
        let failed = files.iter().find_map(|f| f.sync_data().err());
        let due = Instant::now() + GAP;
        st = shared.lock();
        if let Some(e) = failed {
            st.failed.get_or_insert(e);
        }
        while !st.closed {
            let left = due.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            st = shared.wake.wait_timeout(st, left).unwrap_or_else(PoisonError::into_inner).0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn appends_are_synced_and_waited_for() {
        let d = tempfile::tempdir().unwrap();
        let f = Arc::new(File::create(d.path().join("j")).unwrap());
        let mut s = Syncer::new();
        for _ in 0..50 {
            (&*f).write_all(b"line\n").unwrap();
            s.sync(f.clone()).unwrap();
        }
        s.wait().unwrap();
        assert_eq!(std::fs::read(d.path().join("j")).unwrap().len(), 250);
    }
}
