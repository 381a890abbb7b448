//! Making appended runs durable without waiting for the disk: a thread calls `fsync` on the
//! journal after an append, while the next run goes on, at most once every [`GAP`]: appends that
//! arrive meanwhile share the next `fsync`. A run during which an `fsync` commits the file
//! system's journal is slowed by it (`true`: 7% slower when one ran during every run, on ext4 on
//! the project's VM), so fast runs share one in a hundred milliseconds, and a power cut loses at
//! most the runs that ended in the last [`GAP`]. A failed `fsync` is reported at the next append.

use std::fs::File;
use std::io;
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The least time from one `fsync` to the next.
pub(crate) const GAP: Duration = Duration::from_millis(100);

/// The background `fsync` of appended files.
pub(crate) struct Syncer {
    tx: Option<Sender<Arc<File>>>,
    failed: Arc<Mutex<Option<io::Error>>>,
    thread: Option<JoinHandle<()>>,
}

impl Syncer {
    /// Starts the thread (lazily: a sweep that never appends never starts it).
    pub fn new() -> Syncer {
        Syncer { tx: None, failed: Arc::default(), thread: None }
    }

    /// Asks for `file` to be made durable; returns the error of an earlier `fsync`, if one failed.
    pub fn sync(&mut self, file: Arc<File>) -> io::Result<()> {
        if let Some(e) = self.failed.lock().map_or(None, |mut f| f.take()) {
            return Err(e);
        }
        if self.tx.is_none() {
            let (tx, rx) = channel();
            let failed = self.failed.clone();
            self.thread =
                Some(std::thread::Builder::new().name("scalescope-fsync".into()).spawn(move || run(&rx, &failed))?);
            self.tx = Some(tx);
        }
        if let Some(tx) = &self.tx {
            let _ = tx.send(file);
        }
        Ok(())
    }

    /// Waits until every file asked for is durable; returns the first error.
    pub fn wait(&mut self) -> io::Result<()> {
        drop(self.tx.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        match self.failed.lock().map_or(None, |mut f| f.take()) {
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

fn run(rx: &Receiver<Arc<File>>, failed: &Mutex<Option<io::Error>>) {
    let mut last: Option<Instant> = None;
    while let Ok(mut file) = rx.recv() {
        // Everything queued until the gap has passed is covered by one fsync of the latest file;
        // the end of the queue (the sweep is over) syncs at once.
        let due = last.map_or_else(Instant::now, |t| t + GAP);
        while let Ok(later) = rx.recv_timeout(due.saturating_duration_since(Instant::now())) {
            if !Arc::ptr_eq(&later, &file) {
                sync_one(&file, failed);
            }
            file = later;
        }
        last = Some(Instant::now());
        sync_one(&file, failed);
    }
}

fn sync_one(file: &File, failed: &Mutex<Option<io::Error>>) {
    if let Err(e) = file.sync_data()
        && let Ok(mut f) = failed.lock()
    {
        f.get_or_insert(e);
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
