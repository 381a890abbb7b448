//! Checking a plan before anything runs: every mistake is found here and said in one sentence,
//! and a parameter that appears nowhere is pointed out.

use super::error::{PlanError, invalid};
use super::grid::MAX_POINTS;
use super::launcher::{self, LauncherKind};
use super::{Plan, values};
use crate::pagecache;
use std::collections::BTreeSet;
use std::path::PathBuf;

impl Plan {
    /// Checks the definition and that every point can be made; the first problem is returned.
    pub fn check(&self) -> Result<(), PlanError> {
        if self.command.is_empty() || self.command[0].trim().is_empty() {
            return Err(invalid!(
                "no command given: put it after `--`, e.g. scalescope run --param threads=1,2 -- xz -T{{threads}} -k -c FILE"
            ));
        }
        let mut seen = Vec::new();
        for p in &self.params {
            values::check_name(&p.name)?;
            if seen.contains(&&p.name) {
                return Err(invalid!("the parameter '{}' is given twice", p.name));
            }
            if p.values.is_empty() {
                return Err(invalid!("the parameter '{}' has no values", p.name));
            }
            seen.push(&p.name);
        }
        if self.zip && self.params.iter().any(|p| p.values.len() != self.params[0].values.len()) {
            let lens: Vec<String> =
                self.params.iter().map(|p| format!("{} has {}", p.name, p.values.len())).collect();
            return Err(invalid!(
                "--zip pairs values position by position, so every parameter needs as many ({})",
                lens.join(", ")
            ));
        }
        if self.len() > MAX_POINTS {
            return Err(invalid!(
                "the grid has {} points; that is not a sweep anyone can wait for (at most {MAX_POINTS})",
                self.params
                    .iter()
                    .map(|p| p.values.len().to_string())
                    .collect::<Vec<_>>()
                    .join(" × ")
            ));
        }
        if let Some(hz) = self.sample_rate_hz
            && !(hz.is_finite() && (0.1..=10_000.0).contains(&hz))
        {
            return Err(invalid!("--sample-rate {hz}: give a rate between 0.1 and 10000 Hz"));
        }
        if self.runs.min == 0 || self.runs.min > self.runs.max {
            return Err(invalid!(
                "the number of runs must be at least 1 (and --min-runs at most --max-runs)"
            ));
        }
        for m in &self.metrics {
            values::check_name(&m.name).map_err(|_| {
                invalid!("'{}' is not a metric name: use letters, digits and _", m.name)
            })?;
            let re = regex::Regex::new(&m.regex).map_err(|e| {
                invalid!(
                    "the regex of metric '{}' does not compile: {}",
                    m.name,
                    last_line(&e.to_string())
                )
            })?;
            if re.captures_len() < 2 {
                return Err(invalid!(
                    "the regex of metric '{}' has no capture group: wrap the number in ( )",
                    m.name
                ));
            }
        }
        // Placeholders fail alike at every point; work amounts and launcher counts may fail at some.
        self.point(0)?;
        if self.work.is_some()
            || !self.launcher.is_local()
            || self.params.iter().any(|p| p.name == launcher::COPIES)
        {
            for p in self.points() {
                p?;
            }
        }
        Ok(())
    }

    /// Checks that the inputs exist and can be read: the `--evict` paths of every point (unless a
    /// setup or prepare hook may make them) and the `--ceiling` files.
    pub fn check_inputs(&self) -> Result<(), PlanError> {
        if !self.evict.is_empty() && self.hooks.setup.is_none() && self.hooks.prepare.is_none() {
            let mut checked = BTreeSet::new();
            for p in self.points() {
                for path in p?.evict {
                    if checked.insert(path.clone()) {
                        pagecache::check(&[path])?;
                    }
                }
            }
        }
        for f in &self.ceiling {
            std::fs::metadata(f)
                .map_err(|source| PlanError::Ceiling { path: PathBuf::from(f), source })?;
        }
        Ok(())
    }

    /// Parameters whose `{NAME}` appears nowhere: not in the command, `--env`, the hooks, `--work`
    /// or `--evict`, and that no launcher reads. Every point of such a parameter runs the same.
    pub fn unused_params(&self) -> Vec<&str> {
        let launched = self.launcher.kind != LauncherKind::Local;
        let read_by_launcher = |n: &str| {
            n == launcher::COPIES
                || (launched
                    && (n == launcher::NODES
                        || n == launcher::CPUS
                        || launcher::TASKS.contains(&n)))
        };
        let derived = |n: &str| self.zip && n == super::build::WORKERS;
        self.params
            .iter()
            .map(|p| p.name.as_str())
            .filter(|n| !self.mentions(n) && !read_by_launcher(n) && !derived(n))
            .collect()
    }
}

impl Plan {
    /// Parameters named as counts of workers, copies or ranks (`threads`, `np`, …) whose values are
    /// not all numbers, with those values: nothing is counted along them, so no speed-up is.
    pub fn uncounted_params(&self) -> Vec<(&str, Vec<&str>)> {
        let ask = super::axis::Ask::default();
        self.params
            .iter()
            .filter(|p| super::axis::Axis::along(&p.name, &ask).parallel())
            .filter(|p| self.axis.as_ref().is_none_or(|a| a.param != p.name))
            .filter(|p| !p.values.iter().all(|v| values::is_number(v)))
            .map(|p| {
                (
                    p.name.as_str(),
                    p.values.iter().filter(|v| !values::is_number(v)).map(String::as_str).collect(),
                )
            })
            .collect()
    }
}

/// The last non-empty line of a message (the regex crate's says why on its last line).
pub(crate) fn last_line(s: &str) -> String {
    s.lines().rfind(|l| !l.trim().is_empty()).unwrap_or(s).trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::super::build::{build, request};
    use super::*;

    #[test]
    fn a_count_of_workers_whose_values_are_not_numbers_is_pointed_out() {
        let plan =
            build(&request(&["threads=a,2", "mode=x,y"], &["prog", "{threads}", "{mode}"]), 4)
                .unwrap();
        assert_eq!(plan.uncounted_params(), [("threads", vec!["a"])]);
        let plan =
            build(&request(&["threads=1,2", "mode=x,y"], &["prog", "{threads}", "{mode}"]), 4)
                .unwrap();
        assert!(plan.uncounted_params().is_empty());
    }

    #[test]
    fn bad_plans_are_refused_with_one_sentence() {
        let e = build(&request(&["t=1"], &["prog", "{nope}"]), 4).unwrap_err().to_string();
        assert!(e.contains("{nope}"), "{e}");
        let e = build(&request(&["t=1"], &[]), 4).unwrap_err().to_string();
        assert!(e.contains("no command"), "{e}");
        let mut r = request(&["t=1"], &["prog"]);
        r.metrics = vec!["x=([0-9".into()];
        assert!(build(&r, 4).unwrap_err().to_string().contains("does not compile"));
        r.metrics = vec!["x=[0-9]+".into()];
        assert!(build(&r, 4).unwrap_err().to_string().contains("capture group"));
        let e = build(&request(&["a=1..1000", "b=1..1000", "c=1,2"], &["prog"]), 4)
            .unwrap_err()
            .to_string();
        assert!(e.contains("1000 × 1000 × 2"), "{e}");
    }

    #[test]
    fn a_work_amount_failing_at_one_point_is_found_before_running() {
        let mut r = request(&["n=1,x"], &["prog", "{n}"]);
        r.work = Some("{n}GB".into());
        assert!(build(&r, 4).is_err());
    }

    #[test]
    fn missing_inputs_are_refused_unless_a_hook_may_make_them() {
        let mut r = request(&["t=1"], &["prog"]);
        r.evict = vec!["/nonexistent/{t}".into()];
        let e = build(&r, 4).unwrap_err();
        assert!(matches!(e, PlanError::Evict(_)), "{e}");
        r.hooks.setup = Some("make".into());
        assert!(build(&r, 4).is_ok());
        r.ceiling = vec!["/nonexistent/c".into()];
        assert!(matches!(build(&r, 4).unwrap_err(), PlanError::Ceiling { .. }));
    }

    #[test]
    fn a_parameter_used_nowhere_is_named() {
        let mut r = request(&["threads=1,2", "size=a,b", "n=1,2"], &["prog", "{size}"]);
        r.env = vec!["N={n}".into()];
        assert_eq!(build(&r, 4).unwrap().unused_params(), ["threads"]);
        let mut r = request(&["ranks=1,2", "threads=2,1"], &["prog"]);
        r.zip = true;
        r.launcher.kind = LauncherKind::Srun;
        assert_eq!(build(&r, 4).unwrap().unused_params(), ["threads"]);
    }
}
