//! How each run is started: directly (the default), as K concurrent local copies, or through a
//! cluster launcher (`srun`, `mpirun`) with the sweep's `nodes`, `ntasks`/`ranks` and `cpus`
//! parameters mapped to the launcher's own flags. Every copy or rank runs under `scalescope agent`,
//! which measures and samples it and writes its part for the coordinator to merge.

use super::PlanError;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Which launcher starts the runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum LauncherKind {
    /// scalescope spawns the command itself.
    #[default]
    Local,
    /// SLURM's `srun` (inside an allocation, or allocating from a login node).
    Srun,
    /// OpenMPI's (or MPICH's) `mpirun`.
    Mpirun,
}

/// The launcher and the extra arguments passed to it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Launcher {
    /// Which one.
    pub kind: LauncherKind,
    /// Extra arguments, e.g. `--partition=debug --cpu-bind=cores`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
}

impl Launcher {
    /// Whether runs are started directly.
    pub fn is_local(&self) -> bool {
        self.kind == LauncherKind::Local && self.args.is_empty()
    }
}

/// How one point's runs are launched, when not directly.
#[derive(Clone, Debug, PartialEq)]
pub struct Launch {
    /// The launcher's argv up to (not including) `scalescope agent`; empty for local copies.
    pub prefix: Vec<String>,
    /// Processes expected to report a part (ranks or copies).
    pub ranks: u32,
    /// Concurrent local copies the agent starts itself (0 under a cluster launcher).
    pub copies: u32,
}

/// Names of the parameters a launcher reads.
pub const NODES: &str = "nodes";
/// Tasks (ranks), under either name.
pub const TASKS: [&str; 2] = ["ntasks", "ranks"];
/// CPUs per task.
pub const CPUS: &str = "cpus";
/// Concurrent copies.
pub const COPIES: &str = "copies";

/// The launch of the point with these parameter values, or `None` to run directly.
pub fn launch_for(
    l: &Launcher,
    params: &[(String, String)],
    root: bool,
) -> Result<Option<Launch>, PlanError> {
    let number = |names: &[&str]| -> Result<Option<u32>, PlanError> {
        match params.iter().find(|(n, _)| names.contains(&n.as_str())) {
            None => Ok(None),
            Some((n, v)) => v.parse::<u32>().ok().filter(|&x| x >= 1).map(Some).ok_or_else(|| {
                PlanError::Invalid(format!(
                    "{n}={v}: a launcher count must be a whole number from 1"
                ))
            }),
        }
    };
    let (nodes, tasks, cpus, copies) =
        (number(&[NODES])?, number(&TASKS)?, number(&[CPUS])?, number(&[COPIES])?);
    match l.kind {
        LauncherKind::Local => {
            if let Some(k) = copies {
                return Ok(Some(Launch { prefix: Vec::new(), ranks: k, copies: k }));
            }
            if !l.args.is_empty() {
                return Err(PlanError::Invalid(
                    "--launcher-args needs --launcher srun or mpirun".into(),
                ));
            }
            Ok(None)
        }
        LauncherKind::Srun => {
            let mut prefix = vec!["srun".to_string()];
            for (flag, v) in [("-N", nodes), ("-n", tasks.or(copies)), ("-c", cpus)] {
                if let Some(v) = v {
                    prefix.extend([flag.to_string(), v.to_string()]);
                }
            }
            prefix.extend(l.args.iter().cloned());
            Ok(Some(Launch { prefix, ranks: tasks.or(copies).or(nodes).unwrap_or(1), copies: 0 }))
        }
        LauncherKind::Mpirun => {
            if nodes.is_some() || cpus.is_some() {
                return Err(PlanError::Invalid(
                    "--launcher mpirun maps only ntasks/ranks (-np); give nodes and cpus through --launcher-args"
                        .into(),
                ));
            }
            let np = tasks.or(copies).unwrap_or(1);
            let mut prefix =
                vec!["mpirun".to_string(), "-np".into(), np.to_string(), "--oversubscribe".into()];
            if root {
                prefix.push("--allow-run-as-root".into());
            }
            prefix.extend(l.args.iter().cloned());
            Ok(Some(Launch { prefix, ranks: np, copies: 0 }))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect()
    }

    #[test]
    fn parameters_map_to_the_launchers_flags() {
        let srun = Launcher { kind: LauncherKind::Srun, args: vec!["--overcommit".into()] };
        let l = launch_for(
            &srun,
            &p(&[("nodes", "1"), ("ntasks", "4"), ("cpus", "2"), ("x", "y")]),
            false,
        )
        .unwrap()
        .unwrap();
        assert_eq!(l.prefix, ["srun", "-N", "1", "-n", "4", "-c", "2", "--overcommit"]);
        assert_eq!((l.ranks, l.copies), (4, 0));
        let mpi = Launcher { kind: LauncherKind::Mpirun, args: vec![] };
        let l = launch_for(&mpi, &p(&[("ranks", "2")]), true).unwrap().unwrap();
        assert_eq!(l.prefix, ["mpirun", "-np", "2", "--oversubscribe", "--allow-run-as-root"]);
        let local = Launcher::default();
        assert_eq!(launch_for(&local, &p(&[("threads", "2")]), false).unwrap(), None);
        assert_eq!(launch_for(&local, &p(&[("copies", "3")]), false).unwrap().unwrap().copies, 3);
        assert!(launch_for(&srun, &p(&[("ntasks", "0")]), false).is_err());
        assert!(launch_for(&mpi, &p(&[("nodes", "2")]), false).is_err());
    }
}
