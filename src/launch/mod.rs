//! Beyond one process: the agent that runs on every rank or copy (`scalescope agent`), and where
//! it learns which rank it is. The coordinator's side (building the launcher's command line,
//! merging the parts) lives in [`crate::plan::Launcher`] and [`crate::exec::ranks`].

pub mod agent;

/// This process's rank as the launcher tells it: scalescope's own copy number, then SLURM,
/// OpenMPI, PMIx and MPICH variables.
pub fn rank_from_env() -> Option<u32> {
    ["SCALESCOPE_RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"]
        .iter()
        .find_map(|v| std::env::var(v).ok()?.trim().parse().ok())
}

/// The name of the node this process runs on.
pub fn node_name() -> String {
    if let Ok(n) = std::env::var("SLURMD_NODENAME")
        && !n.is_empty()
    {
        return n;
    }
    crate::machine::host_name()
}
