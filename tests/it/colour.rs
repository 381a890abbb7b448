//! Colour: on a terminal only, off with NO_COLOR or `--color never`, forced by `--color always`,
//! and never in results, exports or reports.

use crate::common;

use common::{bin, stderr, stdout};
use std::path::Path;
use std::process::{Command, Output};

const ESC: char = '\x1b';

/// scalescope with `args` in `dir`, output piped, colour variables as given (none inherited).
fn plain(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(bin());
    c.args(args)
        .current_dir(dir)
        .env_remove("NO_COLOR")
        .env_remove("CLICOLOR_FORCE")
        .env_remove("CLICOLOR");
    c.envs(env.iter().copied()).output().unwrap()
}

fn fixtures() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

#[test]
fn the_demo_prints_no_escape_codes_into_a_pipe() {
    let d = tempfile::tempdir().unwrap();
    // Into a pipe (NO_COLOR with a terminal is a_terminal_gets_colour_unless_no_color_is_set's).
    let o = plain(d.path(), &["demo", "-o", "piped"], &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("findings") || stdout(&o).contains("model"), "{}", stdout(&o));
    assert!(!stdout(&o).contains(ESC) && !stderr(&o).contains(ESC), "{}", stdout(&o));
    for file in ["results.json", "summary.md", "report.html"] {
        assert!(
            !std::fs::read_to_string(d.path().join("piped").join(file)).unwrap().contains(ESC),
            "{file}"
        );
    }
    // The same results with colour forced: the terminal text has colour, the exports none.
    let o = plain(
        d.path(),
        &argv_of(
            "show piped --color always --export-markdown t.md --export-csv t.csv --export-json t.json",
        ),
        &[("NO_COLOR", "1")],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("\x1b[1mthreads"), "a bold header: {}", stdout(&o));
    for file in ["t.md", "t.csv", "t.json"] {
        assert!(!std::fs::read_to_string(d.path().join(file)).unwrap().contains(ESC), "{file}");
    }
}

fn argv_of(s: &str) -> Vec<&str> {
    s.split_whitespace().collect()
}

#[test]
fn severities_and_verdicts_are_coloured_only_when_asked() {
    let here = fixtures();
    let show = ["report/results.json", "--color"];
    let always = plain(&here, &[&["show"][..], &show, &["always"]].concat(), &[]);
    let never =
        plain(&here, &[&["show"][..], &show, &["never"]].concat(), &[("CLICOLOR_FORCE", "1")]);
    assert!(always.status.success() && never.status.success(), "{}", stderr(&always));
    let (a, n) = (stdout(&always), stdout(&never));
    assert!(n.contains("  - [info] scales-well") && !n.contains(ESC), "{n}");
    assert!(
        a.contains("\x1b[1mfindings\x1b[0m") && a.contains("  - \x1b[2m[info]\x1b[0m scales-well"),
        "{a}"
    );
    let compare = |reference: &str, other: &str| {
        let o = plain(&here, &["compare", reference, other, "--color", "always"], &[]);
        assert!(o.status.success(), "{}", stderr(&o));
        stdout(&o)
    };
    assert!(
        compare("report/results.json", "compare/faster.json").contains("\x1b[32mfaster"),
        "green"
    );
    assert!(
        compare("compare/faster.json", "report/results.json").contains("\x1b[31mslower"),
        "red"
    );
    let forced = plain(
        &here,
        &["compare", "report/results.json", "compare/faster.json"],
        &[("CLICOLOR_FORCE", "1")],
    );
    assert!(stdout(&forced).contains("\x1b[32mfaster"), "CLICOLOR_FORCE colours a pipe");
}

#[test]
fn warnings_on_stderr_follow_the_same_rule() {
    let d = tempfile::tempdir().unwrap();
    let args = |colour: &'static str, out: &'static str| {
        argv_of("run -r 1 -w 0 --no-sample --metric x=nothing([0-9]+) --color")
            .into_iter()
            .chain([colour, "-o", out, "--", "true"])
            .collect::<Vec<_>>()
    };
    let o = plain(d.path(), &args("always", "a"), &[]);
    assert!(stderr(&o).contains("scalescope: \x1b[33mwarning:\x1b[0m"), "{}", stderr(&o));
    let o = plain(d.path(), &args("auto", "b"), &[]);
    assert!(
        stderr(&o).contains("scalescope: warning:") && !stderr(&o).contains(ESC),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_terminal_gets_colour_unless_no_color_is_set() {
    // `script` comes with bsdutils, which every Debian system has.
    let script = ["/usr/bin/script", "/bin/script"]
        .into_iter()
        .find(|p| Path::new(p).exists())
        .expect("`script` is not installed (apt-get install bsdutils)");
    let here = fixtures();
    let line = format!("{} show report/results.json", bin().display());
    let on_tty = |env: &[(&str, &str)]| {
        let o = Command::new(script)
            .args(["-qec", &line, "/dev/null"])
            .current_dir(&here)
            .env_remove("NO_COLOR")
            .env_remove("CLICOLOR_FORCE")
            .env_remove("CLICOLOR")
            // anstream colours a dumb terminal when CI is set (CI logs show colour)
            .env_remove("CI")
            .env("TERM", "xterm")
            .envs(env.iter().copied())
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        stdout(&o)
    };
    assert!(on_tty(&[]).contains("\x1b[1mthreads"), "colour on a terminal");
    assert!(!on_tty(&[("NO_COLOR", "1")]).contains(ESC), "NO_COLOR");
    assert!(!on_tty(&[("TERM", "dumb")]).contains(ESC), "a dumb terminal");
}

#[test]
fn an_unknown_colour_choice_is_a_usage_error() {
    let d = tempfile::tempdir().unwrap();
    let o = plain(d.path(), &["show", "x", "--color", "sometimes"], &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("invalid value 'sometimes' for '--color <WHEN>'"),
        "{}",
        stderr(&o)
    );
}
