//! Storage faults: a results folder on a filesystem that fills up, on a read-only one, and deleted
//! under a running sweep. The first two need root to mount a small tmpfs: they are ignored unless
//! asked for (`cargo test -- --include-ignored`, as .ci/run does as root).

use crate::common;

use common::{results, scalescope, stderr};
use std::path::Path;
use std::process::Command;

/// Mounts a tmpfs of `size` at `dir`; the tests that need it are ignored unless asked for
/// (`--include-ignored`, as .ci/run does as root).
fn mount(dir: &Path, size: &str) {
    let ok = Command::new("mount")
        .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
        .arg(dir)
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "mounting a tmpfs needs root (and a kernel that allows it here)");
}

struct Unmount<'a>(&'a Path);

impl Drop for Unmount<'_> {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(self.0).status();
    }
}

#[test]
#[ignore = "needs root to mount a tmpfs; .ci/run runs it"]
fn a_full_disk_is_one_sentence_and_the_last_good_results_survive() {
    let d = tempfile::tempdir().unwrap();
    let fs = d.path().join("small");
    std::fs::create_dir(&fs).unwrap();
    mount(&fs, "400k");
    let _u = Unmount(&fs);
    // Each run keeps 128 KiB of output: the third or fourth cannot be stored.
    let o = scalescope(
        &fs,
        &[
            "run",
            "-o",
            "r",
            "-r",
            "10",
            "-w",
            "0",
            "--no-sample",
            "--",
            "head",
            "-c",
            "300000",
            "/dev/urandom",
        ],
    );
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("No space left on device") && !err.contains("panicked"), "{err}");
    // Read as show and --resume read it: results.json, then the runs journaled since its last
    // rewrite (which a full disk may have refused).
    let (_, doc) = scalescope::results::load(&fs.join("r")).expect("the results load");
    let kept = doc.points[0].runs.len();
    assert!((1..10).contains(&kept), "the runs saved before the disk filled are there: {kept}");
}

#[test]
#[ignore = "needs root to mount a tmpfs; .ci/run runs it"]
fn a_read_only_folder_is_one_sentence() {
    let d = tempfile::tempdir().unwrap();
    let fs = d.path().join("ro");
    std::fs::create_dir(&fs).unwrap();
    mount(&fs, "1m");
    let _u = Unmount(&fs);
    assert!(Command::new("mount").args(["-o", "remount,ro"]).arg(&fs).status().unwrap().success());
    let o = scalescope(&fs, &["run", "-o", "r", "-r", "1", "--", "true"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("Read-only file system") && stderr(&o).trim().lines().count() == 1,
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_folder_deleted_under_a_running_sweep_is_made_again_with_every_run() {
    let d = tempfile::tempdir().unwrap();
    let child = Command::new(common::bin())
        .args(["run", "-o", "r", "-r", "5", "-w", "0", "--no-sample", "--", "sleep", "0.3"])
        .current_dir(d.path())
        .env("NO_COLOR", "1")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(800));
    std::fs::remove_dir_all(d.path().join("r")).unwrap();
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("was deleted during the sweep; it was made again with every run"),
        "{err}"
    );
    assert_eq!(results(&d.path().join("r")).points[0].runs.len(), 5);
}
