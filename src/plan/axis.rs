//! The sweep's axis: which parameter is *the* count that speed-up, efficiency and the models refer
//! to, what it counts, and whether the work stays fixed as it grows (strong scaling) or grows with
//! it (weak). Decided once, when the plan is built, and stored with it; `show`, `analyze` and a CSV
//! table that ask for another axis decide it with the same function.

use super::error::{PlanError, invalid};
use super::launcher::{COPIES, LauncherKind, NODES, TASKS};
use super::template::placeholders;
use super::values::is_number;
use super::{Param, Plan};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What the counted parameter counts.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Counts {
    /// Threads or processes of one job on this machine: counts above its CPUs are oversubscribed.
    Workers,
    /// Independent copies of the whole job run at once (`--copies`), each doing all the work.
    Copies,
    /// Ranks, tasks or nodes of a launched job (srun, mpirun), possibly on several machines.
    Ranks,
    /// Something else (files, block size, input size): speed-up only, no efficiency or models.
    Other,
}

/// Whether the work stays fixed as the count grows.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Scaling {
    /// The same work at every count: Amdahl and the USL.
    Strong,
    /// The work grows with the count: Gustafson.
    Weak,
}

/// The counted parameter, what it counts and how the work scales with it.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
pub struct Axis {
    /// Name of the counted parameter.
    pub param: String,
    /// What it counts.
    pub counts: Counts,
    /// Strong or weak scaling.
    pub scaling: Scaling,
}

/// What the user said about the axis (`--scale`, `--workers`, `--weak`, `--work`).
#[derive(Clone, Copy, Debug, Default)]
pub struct Ask<'a> {
    /// The counted parameter, by name.
    pub scale: Option<&'a str>,
    /// The count is a number of workers whatever its name.
    pub workers: bool,
    /// The work grows with the count.
    pub weak: bool,
    /// The work template: weak scaling when it uses the counted parameter.
    pub work: Option<&'a str>,
    /// The launcher, under which `copies` are ranks.
    pub launcher: LauncherKind,
}

/// Names that count ranks, besides those the launchers map (`nodes`, `ntasks`, `ranks`).
const RANKS: [&str; 2] = ["tasks", "np"];

/// Names that count threads or processes of one job.
const WORKERS: [&str; 16] = [
    "threads",
    "thread",
    "nthreads",
    "num_threads",
    "t",
    "j",
    "jobs",
    "cores",
    "cpus",
    "cpu",
    "procs",
    "processes",
    "n",
    "workers",
    "p",
    "w",
];

impl Axis {
    /// The axis of a sweep over `params`: the `--scale` parameter, else `copies` when it is one,
    /// else the first whose values are all numbers; `None` when no parameter is numeric.
    pub fn choose(params: &[Param], ask: &Ask) -> Result<Option<Axis>, PlanError> {
        let numeric = |p: &Param| p.values.iter().all(|v| is_number(v));
        let param = match ask.scale {
            Some(name) => {
                let p = params.iter().find(|p| p.name == name).ok_or_else(|| {
                    let names: Vec<&str> = params.iter().map(|p| p.name.as_str()).collect();
                    invalid!("--scale {name}: no such parameter (parameters: {})", names.join(", "))
                })?;
                if !numeric(p) {
                    return Err(invalid!(
                        "--scale {name}: its values are not all numbers, so there is nothing to count"
                    ));
                }
                p
            }
            None => match params.iter().find(|p| p.name == COPIES && numeric(p)) {
                Some(p) => p,
                None => match params.iter().find(|p| numeric(p)) {
                    Some(p) => p,
                    None => return Ok(None),
                },
            },
        };
        Ok(Some(Axis::along(&param.name, ask)))
    }

    /// The axis along the parameter (or table column) `name`.
    pub fn along(name: &str, ask: &Ask) -> Axis {
        let lower = name.to_ascii_lowercase();
        let counts = if lower == COPIES {
            if ask.launcher == LauncherKind::Local { Counts::Copies } else { Counts::Ranks }
        } else if lower == NODES
            || TASKS.contains(&lower.as_str())
            || RANKS.contains(&lower.as_str())
        {
            Counts::Ranks
        } else if ask.workers
            || WORKERS.contains(&lower.as_str())
            || lower.ends_with("threads")
            || lower.ends_with("workers")
        {
            Counts::Workers
        } else {
            Counts::Other
        };
        // Each copy does the whole work: K copies do K times as much.
        let grows = ask.weak
            || counts == Counts::Copies
            || ask.work.is_some_and(|w| placeholders(w).contains(&name));
        Axis {
            param: name.to_string(),
            counts,
            scaling: if grows { Scaling::Weak } else { Scaling::Strong },
        }
    }

    /// Whether the count is a number of parallel workers of some kind (threads, copies, ranks),
    /// so that efficiency, Karp–Flatt and the models mean something.
    pub fn parallel(&self) -> bool {
        self.counts != Counts::Other
    }

    /// Whether the work grows with the count.
    pub fn weak(&self) -> bool {
        self.scaling == Scaling::Weak
    }

    /// Whether counts above this machine's CPUs are oversubscribed (workers of one local job).
    pub fn local(&self) -> bool {
        self.counts == Counts::Workers
    }
}

impl Plan {
    /// The axis this plan's flags give, with `scale`, `workers` and `weak` asked on top of them
    /// (as `show` and `analyze` may).
    pub fn axis_with(
        &self,
        scale: Option<&str>,
        workers: bool,
        weak: bool,
    ) -> Result<Option<Axis>, PlanError> {
        let ask = Ask {
            scale: scale.or(self.scale.as_deref()),
            workers: workers || self.workers,
            weak: weak || self.weak,
            work: self.work.as_deref(),
            launcher: self.launcher.kind,
        };
        Axis::choose(&self.params, &ask)
    }

    /// Decides the axis from the plan's own flags and stores it.
    pub fn decide_axis(&mut self) -> Result<(), PlanError> {
        self.axis = self.axis_with(None, false, false)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(pairs: &[(&str, &[&str])]) -> Vec<Param> {
        pairs
            .iter()
            .map(|(n, v)| Param {
                name: n.to_string(),
                values: v.iter().map(|s| s.to_string()).collect(),
            })
            .collect()
    }

    fn axis(pairs: &[(&str, &[&str])], ask: Ask) -> Option<Axis> {
        Axis::choose(&params(pairs), &ask).unwrap()
    }

    #[test]
    fn the_first_numeric_parameter_counts_unless_scale_or_copies_say_otherwise() {
        let a = axis(
            &[("size", &["big"]), ("threads", &["1", "2"]), ("files", &["1", "4"])],
            Ask::default(),
        )
        .unwrap();
        assert_eq!(
            a,
            Axis { param: "threads".into(), counts: Counts::Workers, scaling: Scaling::Strong }
        );
        let a = axis(&[("files", &["1", "4"])], Ask { scale: None, ..Ask::default() }).unwrap();
        assert_eq!((a.counts, a.parallel(), a.local()), (Counts::Other, false, false));
        let ask = Ask { scale: Some("files"), workers: true, ..Ask::default() };
        let a = axis(&[("threads", &["1", "2"]), ("files", &["1", "4"])], ask).unwrap();
        assert_eq!((a.param.as_str(), a.counts), ("files", Counts::Workers));
        let a = axis(&[("threads", &["1", "2"]), ("copies", &["1", "4"])], Ask::default()).unwrap();
        assert_eq!(
            (a.param.as_str(), a.counts, a.scaling),
            ("copies", Counts::Copies, Scaling::Weak)
        );
        assert_eq!(axis(&[("cc", &["gcc", "clang"])], Ask::default()), None);
    }

    #[test]
    fn ranks_are_launcher_counts_and_copies_under_a_launcher_are_ranks() {
        for name in ["ranks", "ntasks", "tasks", "nodes", "np"] {
            assert_eq!(Axis::along(name, &Ask::default()).counts, Counts::Ranks, "{name}");
        }
        let srun = Ask { launcher: LauncherKind::Srun, ..Ask::default() };
        assert_eq!(
            Axis::along("copies", &srun),
            Axis { param: "copies".into(), counts: Counts::Ranks, scaling: Scaling::Strong }
        );
    }

    #[test]
    fn work_that_uses_the_count_or_weak_makes_it_weak_scaling() {
        let work = Ask { work: Some("1GB*{threads}"), ..Ask::default() };
        assert!(Axis::along("threads", &work).weak());
        assert!(!Axis::along("size", &work).weak());
        assert!(Axis::along("threads", &Ask { weak: true, ..Ask::default() }).weak());
    }

    #[test]
    fn a_scale_that_cannot_count_is_one_sentence() {
        let p = params(&[("threads", &["1", "2"]), ("cc", &["gcc", "clang"])]);
        let e = Axis::choose(&p, &Ask { scale: Some("nope"), ..Ask::default() })
            .unwrap_err()
            .to_string();
        assert_eq!(e, "--scale nope: no such parameter (parameters: threads, cc)");
        let e =
            Axis::choose(&p, &Ask { scale: Some("cc"), ..Ask::default() }).unwrap_err().to_string();
        assert!(e.contains("not all numbers"), "{e}");
    }
}
