//! `scalescope probe NAME`: runs a built-in workload.

use super::args::{ProbeArgs, ProbeCommand};
use super::{Exit, Usage};
use crate::plan::parse_seconds;
use crate::probes::{print_result, scalable};

/// Runs the chosen probe and prints its result lines.
pub fn probe(args: &ProbeArgs) -> anyhow::Result<Exit> {
    match &args.probe {
        ProbeCommand::Scalable { threads, seconds, ops } => {
            if *threads == 0 {
                return Err(Usage("--threads must be at least 1".into()).into());
            }
            let amount = match seconds {
                Some(s) => scalable::Amount::Seconds(parse_seconds(s)?),
                None if *ops == 0 => return Err(Usage("--ops must be at least 1".into()).into()),
                None => scalable::Amount::Ops(*ops),
            };
            let o = scalable::run(*threads, amount);
            print_result("scalable", *threads, o.seconds, o.ops as f64, "ops")?;
        }
    }
    Ok(Exit::Done)
}
