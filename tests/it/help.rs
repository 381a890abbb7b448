//! Shell completions and the man page know every subcommand and flag that `--help` lists: bash
//! completes them, and `man ./scalescope.1` renders a section for every subcommand.

use crate::common;

use common::{scalescope, stderr, stdout};
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

/// Every subcommand path (`[]`, `["run"]`, `["probe", "lock"]`…) with its long flags, as `--help` lists them.
fn commands() -> BTreeMap<Vec<String>, Vec<String>> {
    let d = tempfile::tempdir().unwrap();
    let mut all = BTreeMap::new();
    let mut todo = vec![Vec::<String>::new()];
    while let Some(path) = todo.pop() {
        let mut args: Vec<&str> = path.iter().map(String::as_str).collect();
        args.push("--help");
        let help = stdout(&scalescope(d.path(), &args));
        let mut section = "";
        let mut flags = Vec::new();
        for line in help.lines() {
            if line.is_empty() {
                continue;
            } else if !line.starts_with(' ') {
                section = line;
            } else if section == "Commands:" && line.starts_with("  ") && !line.starts_with("   ") {
                let name = line.split_whitespace().next().unwrap().to_string();
                if name != "help" {
                    todo.push(path.iter().cloned().chain([name]).collect());
                }
            } else if section == "Options:" {
                let item = line.trim_start();
                let rest = match line.len() - item.len() {
                    2 if item.get(2..4) == Some(", ") => &item[4..],
                    6 => item,
                    _ => "",
                };
                if let Some(flag) = rest.strip_prefix("--") {
                    flags.push(format!("--{}", flag.split([' ', '<', '=', '[']).next().unwrap()));
                }
            }
        }
        assert!(flags.contains(&"--help".to_string()), "{path:?}: no flags parsed from {help}");
        all.insert(path, flags);
    }
    assert!(all.len() > 25, "every subcommand, nested ones included: {:?}", all.keys());
    assert!(all[&vec!["run".to_string()]].contains(&"--param".to_string()));
    all
}

fn output(args: &[&str]) -> String {
    let o = scalescope(Path::new("."), args);
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    stdout(&o)
}

#[test]
fn bash_completes_every_subcommand_and_flag() {
    let script = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(script.path(), output(&["completions", "bash"])).unwrap();
    let cmds = commands();
    // Completes the last word of each line of stdin as bash would on TAB, one line of results per line.
    let driver = format!(
        r#"source {}
complete -p scalescope || exit 3
while read -r -a words; do
    [ "${{words[-1]}}" = . ] && words[-1]=""
    COMP_WORDS=("${{words[@]}}"); COMP_CWORD=$(( ${{#words[@]}} - 1 )); COMPREPLY=()
    _scalescope scalescope "${{COMP_WORDS[COMP_CWORD]}}" "${{COMP_WORDS[COMP_CWORD-1]}}"
    echo "${{COMPREPLY[*]}}"
done"#,
        script.path().display()
    );
    let mut input = String::new();
    for path in cmds.keys() {
        input.push_str(&format!(
            "scalescope {} -\nscalescope {} .\n",
            path.join(" "),
            path.join(" ")
        ));
    }
    let o = Command::new("bash")
        .args(["--norc", "-c", &driver])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            use std::io::Write;
            c.stdin.take().unwrap().write_all(input.as_bytes())?;
            c.wait_with_output()
        })
        .unwrap();
    assert!(o.status.success(), "bash refused the script: {}", stderr(&o));
    let text = stdout(&o);
    let mut lines = text.lines();
    let registered = lines.next().unwrap();
    assert!(
        registered.contains(" -F _scalescope ") && registered.ends_with(" scalescope"),
        "{text}"
    );
    for (path, flags) in &cmds {
        let (dashes, words) = (lines.next().unwrap(), lines.next().unwrap());
        let offered: Vec<&str> = dashes.split(' ').collect();
        for f in flags {
            assert!(
                offered.contains(&f.as_str()),
                "scalescope {} -<TAB> lacks {f}: {dashes}",
                path.join(" ")
            );
        }
        for (sub, _) in
            cmds.iter().filter(|(p, _)| p.len() == path.len() + 1 && p.starts_with(path))
        {
            let name = sub.last().unwrap().as_str();
            assert!(
                words.split(' ').any(|w| w == name),
                "scalescope {} <TAB> lacks {name}: {words}",
                path.join(" ")
            );
        }
    }
}

#[test]
fn every_shell_gets_a_script_naming_every_subcommand_and_flag() {
    let cmds = commands();
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let script = output(&["completions", shell]);
        for (path, flags) in &cmds {
            for word in flags
                .iter()
                .map(|f| f.trim_start_matches('-'))
                .chain(path.last().map(String::as_str))
            {
                assert!(
                    script.contains(word),
                    "{shell}: no {word} (scalescope {})",
                    path.join(" ")
                );
            }
        }
    }
    let o = scalescope(Path::new("."), &["completions", "tcsh"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

#[test]
#[ignore = "needs zsh and fish (apt-get install zsh fish); .ci/run runs it"]
fn zsh_and_fish_accept_their_scripts() {
    for (shell, check) in [("zsh", &["-n"][..]), ("fish", &["--no-execute"][..])] {
        let file = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(file.path(), output(&["completions", shell])).unwrap();
        let o = Command::new(shell).args(check).arg(file.path()).output();
        let o =
            o.unwrap_or_else(|e| panic!("{shell} is not installed (apt-get install {shell}): {e}"));
        assert!(o.status.success(), "{shell} rejects its script: {}", stderr(&o));
    }
}

/// The page split into top-level sections (heading → text), from roff source or rendered text.
fn sections(text: &str, heading: impl Fn(&str) -> Option<String>) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut current = String::new();
    for line in text.lines() {
        match heading(line) {
            Some(h) => current = h,
            None => out
                .entry(current.clone())
                .or_insert_with(String::new)
                .push_str(&format!("{line}\n")),
        }
    }
    out
}

fn check_page(
    what: &str,
    page: &BTreeMap<String, String>,
    cmds: &BTreeMap<Vec<String>, Vec<String>>,
) {
    for (path, flags) in cmds {
        let heading = if path.is_empty() {
            "OPTIONS".to_string()
        } else {
            format!("SCALESCOPE {}", path.join(" ")).to_uppercase()
        };
        let body = page
            .get(&heading)
            .unwrap_or_else(|| panic!("{what}: no section {heading}: {:?}", page.keys()));
        for f in flags.iter().filter(|f| *f != "--color" || path.is_empty()) {
            assert!(body.contains(f.as_str()), "{what}: {heading} lacks {f}");
        }
    }
}

#[test]
fn the_man_page_has_a_section_with_the_flags_of_every_subcommand() {
    let cmds = commands();
    let roff = output(&["man"]);
    assert!(roff.lines().any(|l| l.starts_with(".TH scalescope 1 ")), "no title: {roff}");
    let plain =
        roff.replace("\\-", "-").replace("\\fB", "").replace("\\fR", "").replace("\\fI", "");
    let page =
        sections(&plain, |l| l.strip_prefix(".SH ").map(|h| h.trim_matches('"').to_string()));
    check_page("roff", &page, &cmds);
    for h in ["NAME", "SYNOPSIS", "SUBCOMMANDS", "EXIT STATUS", "ENVIRONMENT"] {
        assert!(page.contains_key(h), "no {h}");
    }
}

#[test]
#[ignore = "needs man (apt-get install man-db); .ci/run runs it"]
fn man_renders_the_page_with_every_section() {
    let cmds = commands();
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("scalescope.1"), output(&["man"])).unwrap();
    let o = Command::new("man")
        .arg("./scalescope.1")
        .current_dir(d.path())
        .env("MANWIDTH", "250")
        .env("MANPAGER", "cat")
        .env("PAGER", "cat")
        .output()
        .expect("man is not installed (apt-get install man-db)");
    assert!(o.status.success() && stderr(&o).trim().is_empty(), "man: {}", stderr(&o));
    let text: String = stdout(&o)
        .split('\x08')
        .enumerate()
        .map(|(i, s)| if i == 0 { s } else { &s[1..] })
        .collect();
    let page =
        sections(&text, |l| (!l.is_empty() && !l.starts_with(' ')).then(|| l.trim().to_string()));
    check_page("man", &page, &cmds);
}

#[test]
fn a_negative_count_is_a_bad_value_not_an_unknown_flag() {
    for (flag, value) in [("--runs", "-3"), ("-w", "-1"), ("--sample-rate", "-5")] {
        let d = tempfile::tempdir().unwrap();
        let o = scalescope(d.path(), &["run", flag, value, "--", "true"]);
        assert_eq!(o.status.code(), Some(2), "{flag} {value}");
        let err = stderr(&o);
        // clap's "invalid value" or scalescope's own sentence on the range; not "unexpected
        // argument '-3' found" with a tip to put it after `--`.
        assert!(
            err.contains(value) && !err.contains("unexpected argument") && !err.contains("tip:"),
            "{flag} {value}: {err}"
        );
    }
}

#[test]
fn a_memory_limit_without_its_unit_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let o = scalescope(d.path(), &["run", "--memory-limit", "300", "--", "true"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("needs its unit: 300MB, 300GB or 300GiB?"), "{}", stderr(&o));
    let o = scalescope(d.path(), &["run", "--memory-limit", "300B", "--help"]);
    assert!(o.status.success(), "bytes said as bytes are taken: {}", stderr(&o));
}

#[test]
fn a_count_to_predict_at_must_be_above_zero() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("t.csv"), "threads,time_s\n1,4.0\n2,2.1\n4,1.2\n").unwrap();
    for bad in ["0", "-8", "many", "inf"] {
        let o = scalescope(
            d.path(),
            &[
                "analyze",
                "--csv",
                "t.csv",
                "--count",
                "threads",
                "--time",
                "time_s",
                "--predict",
                bad,
            ],
        );
        assert_eq!(o.status.code(), Some(2), "--predict {bad}");
        assert!(
            stderr(&o).contains("a count to predict at is a number above 0"),
            "--predict {bad}: {}",
            stderr(&o)
        );
    }
}

/// `--budget`'s default as `run --help` says it is what the plan uses (`--dry-run`, results.json).
#[test]
fn the_budget_default_in_the_help_is_the_one_the_plan_uses() {
    let help = output(&["run", "--help"]);
    let budget = help.split("--budget <TIME>").nth(1).expect("--budget in run --help");
    let said =
        budget.split("[default: ").nth(1).and_then(|d| d.split(']').next()).expect("a default");
    assert_eq!(said, "1x", "{budget}");
    let auto = scalescope::plan::Runs::AUTO.budget;
    assert_eq!(auto, Some(scalescope::plan::Budget::Multiple(1.0)), "the plan's default");
    let dry = output(&["run", "--dry-run", "--param", "threads=1,2", "--", "true"]);
    assert!(dry.contains("for up to the first pass's time again"), "{dry}");
}
