//! Beyond one process: the agent that runs on every rank or copy (`scalescope agent`), and where
//! it learns which rank it is. The coordinator's side (building the launcher's command line,
//! merging the parts) lives in [`crate::plan::launcher`] and [`crate::exec::ranks`].

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
    let mut buf = [0u8; 256];
    // SAFETY: the buffer is writable for its whole length; gethostname NUL-terminates within it.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr() as *mut libc::c_char, buf.len()) };
    if rc != 0 {
        return "unknown".into();
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}
