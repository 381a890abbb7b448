//! `scalescope completions SHELL`: the completion script, generated from the parser's own
//! definitions so that it knows every subcommand and flag.

use super::Exit;
use super::args::Cli;
use crate::error::Error;
use clap::CommandFactory;
use std::io::Write;

/// Prints the completion script for `shell`.
pub fn completions(shell: clap_complete::Shell) -> Result<Exit, Error> {
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "scalescope", &mut script);
    let mut out = std::io::stdout().lock();
    out.write_all(&script)?;
    out.flush()?;
    Ok(Exit::Done)
}
