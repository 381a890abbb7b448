//! `scalescope sbatch`: a batch script that runs a whole sweep inside one SLURM allocation, for
//! clusters where interactive `srun` from a login node is not allowed.

use super::args::SbatchArgs;
use super::{Exit, Usage, view};
use crate::error::Error;
use crate::plan::shell_quote;

/// Writes the script to the file or stdout.
pub fn sbatch(a: &SbatchArgs) -> Result<Exit, Error> {
    if !a.run.iter().any(|x| x == "--") && !a.run.iter().any(|x| x == "--resume") {
        return Err(Usage(
            "give the run's options, then -- and the command, after a first --: scalescope sbatch --nodes 2 -- --launcher srun --param ntasks=2,4 -- ./prog".into(),
        )
        .into());
    }
    let exe = std::env::current_exe()
        .map_err(|e| Usage(format!("cannot find scalescope itself: {e}")))?;
    let mut s = String::from(
        "#!/bin/bash\n#SBATCH --job-name=scalescope\n#SBATCH --output=scalescope-%j.out\n",
    );
    for (flag, v) in [("nodes", a.nodes), ("ntasks", a.ntasks), ("cpus-per-task", a.cpus_per_task)]
    {
        if let Some(v) = v {
            s.push_str(&format!("#SBATCH --{flag}={v}\n"));
        }
    }
    for (flag, v) in [("time", &a.time), ("partition", &a.partition)] {
        if let Some(v) = v {
            s.push_str(&format!("#SBATCH --{flag}={}\n", shell_quote(v)));
        }
    }
    for extra in a.sbatch_args.as_deref().unwrap_or("").split_whitespace() {
        s.push_str(&format!("#SBATCH {}\n", shell_quote(extra)));
    }
    s.push_str(
        "# Written by scalescope sbatch: the whole sweep runs inside this one allocation; each\n",
    );
    s.push_str(
        "# srun of --launcher srun is a job step. Results go to scalescope-results/<job id>.\n",
    );
    s.push_str("set -euo pipefail\n");
    let has_out = a
        .run
        .iter()
        .take_while(|x| *x != "--")
        .any(|x| x == "-o" || x == "--out" || x == "--resume");
    let mut line = vec![shell_quote(&exe.display().to_string()), "run".into()];
    if !has_out {
        line.push("-o \"scalescope-results/${SLURM_JOB_ID}\"".into());
    }
    line.extend(a.run.iter().map(|x| shell_quote(x)));
    s.push_str(&format!("exec {}\n", line.join(" ")));
    match &a.out {
        Some(p) => {
            view::write(p, &s)?;
            crate::fmt::say!("wrote {}; submit it with: sbatch {}", p.display(), p.display());
        }
        None => view::print(&s)?,
    }
    Ok(Exit::Done)
}
