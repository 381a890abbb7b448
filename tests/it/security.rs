//! Security: values never reach a shell unless asked, files follow the user's umask and are never
//! written through a planted symlink, no socket is ever opened, and no privilege is needed.

use crate::common;

use common::{argv, bin, results, scalescope, stderr};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::process::Command;

#[test]
fn values_never_reach_a_shell_without_shell() {
    let d = tempfile::tempdir().unwrap();
    let evil = "$(touch pwned1);touch pwned2`touch pwned3`";
    let o = scalescope(
        d.path(),
        &argv(
            "run -o r -r 1 -w 0 --no-sample -L x",
            &[evil, "--prepare", "echo {x}", "--", "echo", "{x}"],
        ),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    for f in ["pwned1", "pwned2", "pwned3"] {
        assert!(!d.path().join(f).exists(), "{f} was created: a value reached a shell");
    }
    let out = std::fs::read_to_string(d.path().join("r/output/000-000.stdout")).unwrap();
    assert_eq!(out.trim(), evil, "the value arrives verbatim");
}

#[test]
fn files_follow_the_umask_and_planted_symlinks_are_refused() {
    let d = tempfile::tempdir().unwrap();
    let cmd =
        format!("umask 077; exec {} run -o r -r 1 -w 0 --no-sample -- echo hi", bin().display());
    let o = Command::new("sh")
        .arg("-c")
        .arg(&cmd)
        .current_dir(d.path())
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for f in ["results.json", "report.html", "summary.md", "output/000-000.stdout"] {
        let mode =
            std::fs::metadata(d.path().join("r").join(f)).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{f}: {mode:o}");
    }
    // A folder prepared with links where scalescope writes: the link targets stay untouched.
    let victim = d.path().join("victim");
    std::fs::write(&victim, "keep").unwrap();
    std::fs::create_dir_all(d.path().join("s/output")).unwrap();
    for name in ["s/output/000-000.stdout", "s/report.html", "s/results.journal"] {
        std::os::unix::fs::symlink(&victim, d.path().join(name)).unwrap();
    }
    let o = scalescope(
        d.path(),
        &["run", "-o", "s", "-r", "1", "-w", "0", "--no-sample", "--", "echo", "hi"],
    );
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("symbolic link"), "{}", stderr(&o));
    assert_eq!(results(&d.path().join("s")).points[0].runs.len(), 1, "the run is kept");
    let o = scalescope(d.path(), &["report", "r", "-o", "victim"]);
    assert!(o.status.success(), "a plain file is overwritten: {}", stderr(&o));
}

#[test]
fn no_socket_is_ever_opened() {
    let d = tempfile::tempdir().unwrap();
    let mut child = Command::new(bin())
        .args(["run", "-o", "r", "-r", "2", "-w", "0", "--", "sleep", "0.6"])
        .current_dir(d.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut seen = Vec::new();
    for _ in 0..10 {
        std::thread::sleep(std::time::Duration::from_millis(100));
        for fd in
            std::fs::read_dir(format!("/proc/{}/fd", child.id())).into_iter().flatten().flatten()
        {
            if let Ok(target) = std::fs::read_link(fd.path()) {
                seen.push(target.display().to_string());
            }
        }
    }
    assert!(child.wait().unwrap().success());
    assert!(!seen.is_empty(), "the fds were readable");
    assert!(seen.iter().all(|t| !t.starts_with("socket:")), "{seen:?}");
}

#[test]
fn an_unprivileged_user_can_sweep_sample_and_report() {
    let d = tempfile::tempdir().unwrap();
    std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    // A copy of the binary that every user can run, wherever the checkout is.
    let exe = d.path().join("scalescope");
    std::fs::copy(bin(), &exe).unwrap();
    std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
    let exe = exe.display().to_string();
    // An input that belongs to the test's user: to `nobody`, another user's file it cannot write.
    let input = d.path().join("input.bin");
    std::fs::write(&input, vec![3u8; 4 << 20]).unwrap();
    std::fs::set_permissions(&input, std::fs::Permissions::from_mode(0o644)).unwrap();
    let mut cmd = if root {
        let mut c = Command::new("runuser");
        c.args(["-u", "nobody", "--", &exe]);
        c
    } else {
        Command::new(&exe)
    };
    let o = cmd
        .args(argv(
            "run -o r -r 1 -w 0 --param threads=1,2 --evict input.bin --",
            &[&exe, "probe", "lock", "-t", "{threads}", "--ops", "500000"],
        ))
        .current_dir(d.path())
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let doc = results(&d.path().join("r"));
    assert!(doc.points[1].runs[0].threads.is_some(), "sampled without privileges");
    assert!(d.path().join("r/report.html").exists());
    // Linux hides another user's file's page-cache state (mincore says "all resident"): not read
    // as a warm input, said once.
    let evicted = doc.points[0].runs[0].evict.as_ref().expect("evicted");
    let err = String::from_utf8_lossy(&o.stderr);
    if root {
        assert_eq!(
            (evicted.resident_fraction, evicted.unchecked_bytes),
            (None, 4 << 20),
            "{evicted:?}"
        );
        assert_eq!(err.matches("belong to another user").count(), 1, "{err}");
    } else {
        assert!(evicted.resident_fraction.is_some_and(|f| f < 0.05), "{evicted:?}");
    }
    let owner = std::fs::metadata(d.path().join("r/results.json")).unwrap().uid();
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    assert!(owner != 0 && (root || owner == me), "written by the unprivileged user, uid {owner}");
    if root {
        // Attached to another user's process (this test's, root's), it would see nothing worth
        // reading: one sentence and exit code 2.
        let me = std::process::id().to_string();
        let o = Command::new("runuser")
            .args(["-u", "nobody", "--", &exe, "attach", &me])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(
            err.contains(&format!("process {me} (")) && err.contains("belongs to another user"),
            "{err}"
        );
    }
}

/// `--resume` runs the command and hooks a results folder records: a folder others may write, or
/// that belongs to another user, is refused unless `--trust`, and what will run is printed first.
#[test]
fn resume_runs_only_what_a_folder_of_ones_own_records_unless_trusted() {
    let d = tempfile::tempdir().unwrap();
    let o = scalescope(
        d.path(),
        &argv("run -o r -r 2 -w 0 --prepare", &["echo x >> ran", "--", "sh", "-c", "exit 1"]),
    );
    assert_eq!(o.status.code(), Some(1), "a failed sweep, to resume: {}", stderr(&o));
    let ran = || std::fs::read_to_string(d.path().join("ran")).unwrap_or_default().lines().count();
    let before = ran();
    let dir = d.path().join("r");
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    let o = scalescope(d.path(), &["run", "--resume", "r"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("can be written by anyone") && stderr(&o).contains("--trust"),
        "{}",
        stderr(&o)
    );
    assert_eq!(ran(), before, "nothing ran");
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!(
            "note: not root; a folder of another user cannot be made here (the writable case was checked)"
        );
        return;
    }
    let nobody = 65534;
    // Writable by a group others belong to: refused; by root's own group (named after it, no other
    // member), as a umask of 002 makes folders: root's alone.
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o770)).unwrap();
    std::os::unix::fs::chown(&dir, None, Some(nobody)).unwrap();
    let o = scalescope(d.path(), &["run", "--resume", "r"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("can be written by its group"), "{}", stderr(&o));
    assert_eq!(ran(), before, "nothing ran");
    std::os::unix::fs::chown(&dir, None, Some(0)).unwrap();
    let root_alone =
        std::fs::read_to_string("/etc/group").unwrap().lines().any(|l| l == "root:x:0:");
    if root_alone {
        let o = scalescope(d.path(), &["run", "--resume", "r"]);
        assert_eq!(o.status.code(), Some(1), "resumed, the command still fails: {}", stderr(&o));
        assert!(ran() > before, "root's own group: it ran");
    }
    let before = ran();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    std::os::unix::fs::chown(&dir, Some(nobody), Some(nobody)).unwrap();
    std::os::unix::fs::chown(dir.join("results.json"), Some(nobody), Some(nobody)).unwrap();
    let o = scalescope(d.path(), &["run", "--resume", "r"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("belongs to another user (uid 65534)"), "{}", stderr(&o));
    assert_eq!(ran(), before, "nothing ran");
    let o = scalescope(d.path(), &["run", "--resume", "r", "--trust"]);
    assert_eq!(o.status.code(), Some(1), "the command still fails: {}", stderr(&o));
    let said = stderr(&o);
    let shown = said.find("with the command it recorded: sh -c 'exit 1'").expect(&said);
    assert!(said[shown..].contains("prepare: echo x >> ran"), "{said}");
    assert!(ran() > before, "trusted, it ran");
}
