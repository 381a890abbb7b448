//! The history: a series of real lock-probe sweeps whose critical section grows at one commit
//! (`check` flags that sweep and no other; `history`, `trend`, `compare --history` read it),
//! concurrent writers, a corrupt file, unwritable and read-only locations, published tables, and
//! the user's mistakes.

use crate::common;

use common::{bin, scalescope, stderr, stdout};
use std::path::Path;
use std::process::{Command, Output};

fn git(dir: &Path, args: &[&str]) {
    let o = Command::new("git").args(args).current_dir(dir).output().expect("git runs");
    assert!(o.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&o.stderr));
}

/// Runs scalescope with `--history HISTORY` added before the command's `--`.
fn with_history(dir: &Path, history: &Path, args: &[&str]) -> Output {
    let mut all = args.to_vec();
    let at = all.iter().position(|a| *a == "--").unwrap_or(all.len());
    all.splice(at..at, ["--history", history.to_str().unwrap()]);
    scalescope(dir, &all)
}

/// A commit of a script that runs the lock probe with `critical` of each operation in the lock.
fn commit_workload(dir: &Path, critical: f64, i: usize) {
    let script = format!(
        "#!/bin/sh\nexec {} probe lock --threads \"$1\" --ops 1000000 --critical {critical}\n",
        bin().display()
    );
    let path = dir.join("work.sh");
    std::fs::write(&path, script).unwrap();
    Command::new("chmod").arg("+x").arg(&path).status().unwrap();
    git(dir, &["add", "work.sh"]);
    git(dir, &["commit", "-q", "--allow-empty", "-m", &format!("entry {i}: critical {critical}")]);
}

fn short_head(dir: &Path) -> String {
    let o = Command::new("git")
        .args(["rev-parse", "--short=7", "HEAD"])
        .current_dir(dir)
        .output()
        .unwrap();
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

/// One sweep of `work.sh` into the folder `out`, recorded in `h`: its number in the history.
fn lock_sweep(repo: &Path, h: &Path, out: &str) -> usize {
    let o = with_history(
        repo,
        h,
        &[
            "run",
            "-o",
            out,
            "--param",
            "threads=1,2",
            "-r",
            "3",
            "-w",
            "0",
            "--tag",
            "probe=lock",
            "--",
            "./work.sh",
            "{threads}",
        ],
    );
    assert!(o.status.success(), "{out}: {}", stderr(&o));
    let e = stderr(&o);
    let n = e
        .split("history: sweep #")
        .nth(1)
        .and_then(|t| t.split(' ').next())
        .and_then(|n| n.parse().ok());
    n.unwrap_or_else(|| panic!("{out} was not recorded: {e}"))
}

#[test]
fn check_flags_the_sweep_whose_critical_section_grew_and_no_other() {
    let _g = common::measuring();
    let d = tempfile::tempdir().unwrap();
    let repo = d.path();
    git(repo, &["init", "-q"]);
    git(repo, &["config", "user.email", "t@example.org"]);
    git(repo, &["config", "user.name", "t"]);
    std::fs::write(repo.join(".gitignore"), "r*/\n*.sqlite*\n*.html\n").unwrap();
    let h = repo.join("h.sqlite");
    const SWEEPS: usize = 20;
    const STEP: usize = 12;
    let mut commits = Vec::new();
    // The number in the history of each commit's sweep, and of every sweep recorded.
    let (mut ids, mut recorded) = (Vec::new(), 0);
    for i in 0..SWEEPS {
        commit_workload(repo, if i < STEP { 0.0 } else { 0.9 }, i);
        commits.push(short_head(repo));
        // As the verdict advises, a sweep that other processes disturbed is run again; and as a
        // user confirms a regression before bisecting, so is a sweep flagged off the step: a host
        // whose lock hand-offs slowed by 5% in a way the pace loop does not follow flagged one
        // of 20 in a fresh clone (+5%, p = 0.002), and a repeat minutes later is not.
        let mut attempt = 0;
        let (id, c) = loop {
            let id = lock_sweep(repo, &h, &format!("r{i:02}-{attempt}"));
            recorded += 1;
            assert_eq!(id, recorded);
            let c = with_history(repo, &h, &["check"]);
            attempt += 1;
            let again = stdout(&c).starts_with("cannot tell: ")
                || (i != STEP && stdout(&c).starts_with("regression: "));
            if !again || attempt == if i == STEP { 6 } else { 3 } {
                break (id, c);
            }
            eprintln!("note: sweep {i} again after: {}", stdout(&c));
        };
        ids.push(id);
        let verdict = stdout(&c);
        if i == STEP {
            assert_eq!(c.status.code(), Some(1), "the step is flagged: {verdict}{}", stderr(&c));
            assert!(verdict.starts_with("regression: "), "{verdict}");
            assert!(
                verdict.contains(&format!("between {} and {}", commits[i - 1], commits[i])),
                "{verdict}"
            );
            assert!(verdict.contains("efficiency at 2 threads fell from"), "{verdict}");
            assert!(
                verdict.contains("serial fraction") || verdict.contains("left out"),
                "{verdict}"
            );
        } else {
            assert_eq!(
                c.status.code(),
                Some(0),
                "sweep {i} is no regression: {verdict}{}",
                stderr(&c)
            );
        }
    }
    // Judged again after the fact, and every step of the whole history: only that sweep.
    let id = ids[STEP].to_string();
    assert_eq!(with_history(repo, &h, &["check", "--sweep", &id]).status.code(), Some(1));
    assert_eq!(
        with_history(repo, &h, &["check", "--sweep", &ids[STEP + 1].to_string()]).status.code(),
        Some(0)
    );
    let all = with_history(repo, &h, &["check", "--all"]);
    assert_eq!(all.status.code(), Some(1));
    let lines: Vec<String> = stdout(&all).lines().map(String::from).collect();
    // The step is flagged. A host whose speed moved by 7% in a way the loop timed before each
    // run did not follow may still show as a step of the time elsewhere, either way (an
    // improvement in one of six runs of this test; +7% at p = 0.003 in a fresh clone beside
    // other work; in another, +8% at 1 thread before the step and −7% at 2 threads after it, the
    // host's speed moving for minutes each time, which no test on the sweeps can tell from a
    // change of the program): at most two such lines, of the time alone and under 10%.
    let step = format!("#{id} ");
    assert!(lines.iter().any(|l| l.starts_with(&step) && l.ends_with("[regression]")), "{lines:?}");
    let others: Vec<&String> = lines.iter().filter(|l| !l.starts_with(&step)).collect();
    // `… rose from 0.3836 s to 0.4094 s (+7%, p = 0.003) …`: the change in percent.
    let change = |l: &str| {
        let head = &l[..l.find("%, p")?];
        head[head.rfind('(')? + 1..].replace('−', "-").parse::<f64>().ok()
    };
    let small = |l: &str| l.contains(": time at ") && change(l).is_some_and(|pct| pct.abs() < 10.0);
    assert!(others.len() <= 2 && others.iter().all(|l| small(l)), "{lines:?}");

    let listed = with_history(repo, &h, &["history", "--tag", "probe=lock"]);
    assert!(
        stdout(&listed).contains(&format!("{recorded} sweeps in")),
        "{}{}",
        stdout(&listed),
        stderr(&listed)
    );
    assert!(stdout(&listed).contains(&commits[STEP]), "{}", stdout(&listed));
    let json = stdout(&with_history(repo, &h, &["history", "--json", "--last", "2"]));
    assert_eq!(json.lines().count(), 2, "{json}");

    let html = repo.join("trend.html");
    let trend = with_history(repo, &h, &["history", "trend", "--html", html.to_str().unwrap()]);
    assert!(trend.status.success(), "{}", stderr(&trend));
    let row = stdout(&trend)
        .lines()
        .find(|l| l.trim_start().starts_with(&format!("#{id} ")))
        .unwrap_or("")
        .to_string();
    assert!(row.contains("regression"), "the trend marks the step: {}", stdout(&trend));
    assert_eq!(stdout(&trend).matches("regression").count(), 1, "{}", stdout(&trend));
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("<svg") && page.contains(&format!("step at #{id}")));
    let time = with_history(repo, &h, &["history", "trend", "time", "--at", "1"]);
    assert!(stdout(&time).contains("time at 1 thread"), "{}", stdout(&time));

    let last = std::fs::read_dir(repo)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.starts_with('r') && repo.join(n).is_dir())
        .max()
        .unwrap();
    // The trend shows the newest sweep's efficiency as the sweep printed it.
    let doc: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(repo.join(&last).join("results.json")).unwrap(),
    )
    .unwrap();
    let printed =
        doc["analysis"]["series"][0]["points"].as_array().unwrap().last().unwrap()["efficiency"]
            .as_f64()
            .unwrap();
    let newest =
        stdout(&trend).lines().rfind(|l| l.trim_start().starts_with('#')).unwrap_or("").to_string();
    // (Unless other processes disturbed some of its runs: then the figure is of the others.)
    let disturbed = stdout(&with_history(repo, &h, &["check", "--json"]));
    assert!(
        newest.contains(&format!("{:.1}%", 100.0 * printed))
            || !disturbed.contains("\"left_out_runs\":0"),
        "{printed}: {newest}"
    );
    let c = scalescope(repo, &["compare", &format!("--history={}", h.display()), &last]);
    assert!(c.status.success(), "{}", stderr(&c));
    assert!(
        stdout(&c).contains(&last) && stdout(&c).contains(&format!("#{}", recorded - 1)),
        "{}",
        stdout(&c)
    );
}

#[test]
fn a_sweep_beside_other_work_is_not_judged_and_says_why() {
    let _g = common::measuring();
    let d = tempfile::tempdir().unwrap();
    let h = d.path().join("h.sqlite");
    let exe = bin().to_string_lossy().into_owned();
    let sweep = |out: &str| {
        let args = [
            "run",
            "-o",
            out,
            "--param",
            "threads=1,2",
            "-r",
            "3",
            "-w",
            "0",
            "--",
            &exe,
            "probe",
            "scalable",
        ];
        let mut args: Vec<&str> = args.to_vec();
        args.extend(["--threads", "{threads}", "--ops", "150000000"]);
        let o = with_history(d.path(), &h, &args);
        assert!(o.status.success(), "{}", stderr(&o));
    };
    for i in 0..3 {
        sweep(&format!("quiet{i}"));
    }
    // Other work: one busy process per CPU for the whole sweep.
    let cpus = std::thread::available_parallelism().unwrap().get();
    let mut others: Vec<std::process::Child> = (0..cpus)
        .map(|_| Command::new("sh").args(["-c", "while :; do :; done"]).spawn().unwrap())
        .collect();
    sweep("busy");
    for c in &mut others {
        let _ = c.kill();
        let _ = c.wait();
    }
    let c = with_history(d.path(), &h, &["check"]);
    let verdict = stdout(&c);
    assert_eq!(c.status.code(), Some(0), "{verdict}{}", stderr(&c));
    assert!(verdict.starts_with("cannot tell: #4 "), "{verdict}");
    // The busy loops may start a moment late or yield once: most runs, not
    // necessarily all six, are left out.
    let held = |n: usize| verdict.contains(&format!("during {n} of its 6 runs"));
    assert!((4..=6).any(held) && verdict.contains("efficiency at 2 threads"), "{verdict}");
    let json = stdout(&with_history(d.path(), &h, &["check", "--json"]));
    let left = |n: usize| json.contains(&format!("\"left_out_runs\":{n}"));
    assert!(json.contains("\"undecided\":true") && (4..=6).any(left), "{json}");
}

/// A quick sweep's folder `name` in `dir`, not recorded anywhere.
fn quick_folder(dir: &Path, name: &str) {
    let o = scalescope(
        dir,
        &[
            "run",
            "-o",
            name,
            "--param",
            "n=1,2",
            "-r",
            "2",
            "-w",
            "0",
            "--no-sample",
            "--no-history",
            "--",
            "true",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
}

/// `n` copies of the results folder `from`, each a sweep of its own (another start).
fn copies(dir: &Path, from: &str, n: usize) -> Vec<String> {
    let text = std::fs::read_to_string(dir.join(from).join("results.json")).unwrap();
    (0..n)
        .map(|i| {
            let mut doc: serde_json::Value = serde_json::from_str(&text).unwrap();
            doc["created"] = format!("2026-01-{:02}T10:00:00Z", i + 1).into();
            let name = format!("copy{i:02}");
            std::fs::create_dir_all(dir.join(&name)).unwrap();
            std::fs::write(dir.join(&name).join("results.json"), doc.to_string()).unwrap();
            name
        })
        .collect()
}

#[test]
fn two_writers_at_once_lose_nothing() {
    let d = tempfile::tempdir().unwrap();
    quick_folder(d.path(), "base");
    let names = copies(d.path(), "base", 24);
    let h = d.path().join("h.sqlite");
    let spawn = |names: &[String]| {
        let mut c = Command::new(bin());
        c.arg("history").arg("import").args(names).arg("--history").arg(&h).current_dir(d.path());
        c.stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped()).spawn().unwrap()
    };
    let (a, b) = (spawn(&names[..12]), spawn(&names[12..]));
    // And two sweeps that finish at the same time, recording into the same file.
    let sweep = |out: &str| {
        Command::new(bin())
            .args(["run", "-o", out, "-r", "2", "-w", "0", "--no-sample", "--history"])
            .arg(&h)
            .args(["--", "sleep", "0.2"])
            .current_dir(d.path())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (c, e) = (sweep("s1"), sweep("s2"));
    for child in [a, b, c, e] {
        let o = child.wait_with_output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert!(
            !String::from_utf8_lossy(&o.stderr).contains("not recorded"),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    let listed = stdout(&with_history(d.path(), &h, &["history", "--json"]));
    assert_eq!(listed.lines().count(), 26, "{listed}");
    // Imported again: the same 26 entries.
    let again = with_history(d.path(), &h, &["history", "import", "."]);
    assert!(
        stdout(&again).contains("26 replacing the same sweep imported before; 27 in all)"),
        "{}",
        stdout(&again)
    );
    let listed = stdout(&with_history(d.path(), &h, &["history", "--json"]));
    // `base` itself is a 27th sweep of its own, never recorded before.
    assert_eq!(listed.lines().count(), 27, "{listed}");
}

#[test]
fn a_corrupt_history_is_one_sentence_and_the_sweep_is_kept() {
    let d = tempfile::tempdir().unwrap();
    let h = d.path().join("h.sqlite");
    let junk = "this is not a SQLite database but a file someone put here by mistake\n".repeat(20);
    std::fs::write(&h, &junk).unwrap();
    let o = with_history(
        d.path(),
        &h,
        &["run", "-o", "r", "-r", "1", "-w", "0", "--no-sample", "--", "true"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let err = stderr(&o);
    let said: Vec<&str> = err.lines().filter(|l| l.contains("history")).collect();
    assert_eq!(said.len(), 1, "{err}");
    assert!(
        said[0].contains("not a readable scalescope history") && said[0].contains("history import"),
        "{err}"
    );
    assert!(d.path().join("r/results.json").exists());
    assert_eq!(std::fs::read_to_string(&h).unwrap(), junk, "the file is left as it was");
    let l = with_history(d.path(), &h, &["history"]);
    assert_eq!(l.status.code(), Some(2));
    assert_eq!(stderr(&l).trim().lines().count(), 1, "{}", stderr(&l));
}

#[test]
fn an_unwritable_history_location_is_one_sentence_and_the_sweep_is_kept() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("file"), "").unwrap();
    let h = d.path().join("file/h.sqlite");
    let o = with_history(
        d.path(),
        &h,
        &["run", "-o", "r", "-r", "1", "-w", "0", "--no-sample", "--", "false"],
    );
    assert_eq!(o.status.code(), Some(1), "the sweep's own status: {}", stderr(&o));
    let o = with_history(
        d.path(),
        &h,
        &["run", "-o", "r2", "-r", "1", "-w", "0", "--no-sample", "--", "true"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("the sweep was not recorded in the history") && err.contains("r2"),
        "{err}"
    );
    assert_eq!(err.lines().filter(|l| l.contains("history")).count(), 1, "{err}");
    assert!(d.path().join("r2/results.json").exists());
}

#[test]
#[ignore = "needs root to mount a tmpfs; .ci/run runs it"]
fn a_read_only_history_is_one_sentence_and_still_reads() {
    let d = tempfile::tempdir().unwrap();
    let fs = d.path().join("ro");
    std::fs::create_dir(&fs).unwrap();
    let ok =
        Command::new("mount").args(["-t", "tmpfs", "-o", "size=4m", "tmpfs"]).arg(&fs).status();
    assert!(ok.is_ok_and(|s| s.success()), "mounting a tmpfs needs root");
    struct Unmount<'a>(&'a Path);
    impl Drop for Unmount<'_> {
        fn drop(&mut self) {
            let _ = Command::new("umount").arg("-l").arg(self.0).status();
        }
    }
    let _u = Unmount(&fs);
    let h = fs.join("h.sqlite");
    let o = with_history(
        d.path(),
        &h,
        &["run", "-o", "r1", "-r", "1", "-w", "0", "--no-sample", "--", "true"],
    );
    assert!(stderr(&o).contains("history: sweep #1 recorded"), "{}", stderr(&o));
    assert!(Command::new("mount").args(["-o", "remount,ro"]).arg(&fs).status().unwrap().success());
    let o = with_history(
        d.path(),
        &h,
        &["run", "-o", "r2", "-r", "1", "-w", "0", "--no-sample", "--", "true"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("the sweep was not recorded in the history"), "{err}");
    assert_eq!(err.lines().filter(|l| l.contains("history")).count(), 1, "{err}");
    assert!(d.path().join("r2/results.json").exists());
    let l = with_history(d.path(), &h, &["history"]);
    assert!(stdout(&l).contains("1 sweep in"), "{}{}", stdout(&l), stderr(&l));
}

#[test]
fn published_tables_are_imported_one_sweep_per_label_and_only_once() {
    let d = tempfile::tempdir().unwrap();
    let mut csv = String::from("kernel,threads,time_s\n");
    for (k, slow) in [("6.1", 1.0), ("6.6", 1.0), ("6.8", 1.3), ("6.9", 1.3)] {
        for (t, s) in [(1, 10.0), (2, 5.2), (4, 2.8), (8, 1.6)] {
            csv.push_str(&format!("{k},{t},{}\n", if t == 8 { s * slow } else { s }));
        }
    }
    std::fs::write(d.path().join("kernels.csv"), csv).unwrap();
    let h = d.path().join("h.sqlite");
    let args = [
        "history",
        "import",
        "--csv",
        "kernels.csv",
        "--label",
        "kernel",
        "--count",
        "threads",
        "--time",
        "time_s",
    ];
    for _ in 0..2 {
        let o = with_history(d.path(), &h, &args);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let l = stdout(&with_history(d.path(), &h, &["history"]));
    assert!(l.contains("4 sweeps in") && l.contains("kernel=6.8"), "{l}");
    let t =
        stdout(&with_history(d.path(), &h, &["history", "trend", "time", "--threshold", "10%"]));
    assert!(t.contains("time at 8 threads") && t.contains("6.8"), "{t}");
}

#[test]
fn mistakes_are_one_sentence_and_exit_code_2() {
    let d = tempfile::tempdir().unwrap();
    let h = d.path().join("h.sqlite");
    for args in [
        &["run", "--tag", "kernel", "-r", "1", "--", "true"][..],
        &["history", "import", "no-such-folder"],
        &["check", "--sweep", "twelve"],
        &["history", "--since", "yesterday"],
        &["history", "trend", "speed"],
        &["check", "--threshold", "lots"],
    ] {
        let o = with_history(d.path(), &h, args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert_eq!(stderr(&o).trim().lines().count(), 1, "{args:?}: {}", stderr(&o));
        assert!(!stderr(&o).contains("panicked"), "{}", stderr(&o));
    }
    assert!(!d.path().join("scalescope-results").exists(), "a bad --tag runs nothing");
    // A CI cache that missed: nothing to judge against, as with one sweep.
    let c = with_history(d.path(), &h, &["check"]);
    assert_eq!(c.status.code(), Some(0), "{}", stderr(&c));
    assert!(stdout(&c).contains("no history at") && !h.exists(), "{}", stdout(&c));
    let o = with_history(d.path(), d.path(), &["history"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("is a folder"), "{}", stderr(&o));
}
