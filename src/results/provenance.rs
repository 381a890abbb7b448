//! Where a sweep came from, beyond the machine: the git commit of the working directory's
//! repository (when there is one) and the user's tags (`--tag kernel=6.6`). Stored in
//! results.json so that the history can be rebuilt from results folders alone.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};

/// What a sweep was measured from.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct Provenance {
    /// The repository the sweep was started in, when it was started inside one and git runs.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub git: Option<Git>,
    /// The user's labels (`--tag key=value`), by key.
    #[serde(skip_serializing_if = "BTreeMap::is_empty", default)]
    pub tags: BTreeMap<String, String>,
}

/// The state of a git working tree when the sweep started.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct Git {
    /// The commit checked out (full hash).
    pub commit: String,
    /// Tracked files differed from the commit.
    pub dirty: bool,
    /// The branch checked out; absent on a detached head.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub branch: Option<String>,
}

impl Git {
    /// The commit's first seven characters, with `+` when the tree was dirty.
    pub fn short(&self) -> String {
        let c: String = self.commit.chars().take(7).collect();
        if self.dirty { format!("{c}+") } else { c }
    }
}

/// The git state of the repository holding `dir`; `None` outside a repository or without git.
pub fn git_state(dir: &Path) -> Option<Git> {
    let run = |args: &[&str]| {
        let o = Command::new("git")
            .args(args)
            .current_dir(dir)
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .env("GIT_OPTIONAL_LOCKS", "0")
            .output()
            .ok()?;
        o.status.success().then(|| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    let commit = run(&["rev-parse", "--verify", "-q", "HEAD"]).filter(|c| !c.is_empty())?;
    let dirty =
        run(&["status", "--porcelain", "--untracked-files=no"]).is_some_and(|s| !s.is_empty());
    let branch = run(&["symbolic-ref", "-q", "--short", "HEAD"]).filter(|b| !b.is_empty());
    Some(Git { commit, dirty, branch })
}

/// Parses `key=value` tags; the message names the first that is not of that form.
pub fn parse_tags(items: &[String]) -> Result<BTreeMap<String, String>, String> {
    let mut tags = BTreeMap::new();
    for t in items {
        match t.split_once('=') {
            Some((k, v)) if !k.trim().is_empty() => {
                if let Some(old) = tags.insert(k.trim().to_string(), v.trim().to_string()) {
                    return Err(format!(
                        "--tag {t}: the tag {} was given twice (first {old}): keep one",
                        k.trim()
                    ));
                }
            }
            _ => return Err(format!("--tag {t}: write a tag as KEY=VALUE, e.g. --tag kernel=6.6")),
        }
    }
    Ok(tags)
}

#[cfg(test)]
mod tests {
    #[test]
    fn tags_need_a_key_and_an_equals_sign() {
        let t = super::parse_tags(&["kernel=6.6".into(), "branch = main".into()]).unwrap();
        assert_eq!(t["kernel"], "6.6");
        assert_eq!(t["branch"], "main");
        assert!(super::parse_tags(&["kernel".into()]).unwrap_err().contains("KEY=VALUE"));
        assert!(
            super::parse_tags(&["a=b".into(), "a=c".into()]).unwrap_err().contains("given twice")
        );
        assert!(super::parse_tags(&["=x".into()]).is_err());
    }

    #[test]
    fn outside_a_repository_there_is_no_git_state() {
        assert!(super::git_state(std::path::Path::new("/")).is_none());
    }
}
