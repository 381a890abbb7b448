//! `scalescope man`: one man page (roff) generated from the parser's own definitions — the
//! top-level command, then a section per subcommand with its synopsis, options and examples.

use super::Exit;
use super::args::Cli;
use crate::error::Error;
use clap::CommandFactory;
use clap_mangen::Man;
use clap_mangen::roff::{Roff, bold, roman};
use std::io::Write;

/// Prints the man page.
pub fn man() -> Result<Exit, Error> {
    let mut out = std::io::stdout().lock();
    out.write_all(&page()?)?;
    out.flush()?;
    Ok(Exit::Done)
}

/// The whole page as roff.
pub fn page() -> std::io::Result<Vec<u8>> {
    let mut cmd = Cli::command().disable_help_subcommand(true);
    cmd.build();
    let root = Man::new(cmd.clone());
    let mut out = Vec::new();
    root.render_title(&mut out)?;
    root.render_name_section(&mut out)?;
    root.render_synopsis_section(&mut out)?;
    root.render_description_section(&mut out)?;
    let mut roff = Roff::new();
    after_help(&cmd, &mut roff);
    roff.control("SH", ["SUBCOMMANDS"]);
    for sub in cmd.get_subcommands() {
        roff.control("TP", []).text([bold(sub.get_name())]);
        roff.text([roman(format!("{} (see {} below).", about(sub), heading(sub)))]);
    }
    roff.to_writer(&mut out)?;
    root.render_options_section(&mut out)?;
    for sub in cmd.get_subcommands() {
        subcommand(sub, &mut out)?;
    }
    let mut tail = Roff::new();
    tail.control("SH", ["EXIT STATUS"]).text([roman(EXIT_STATUS)]);
    tail.control("SH", ["ENVIRONMENT"]).text([roman(ENVIRONMENT)]);
    tail.to_writer(&mut out)?;
    root.render_version_section(&mut out)?;
    Ok(out)
}

const EXIT_STATUS: &str = "0: done. 1: a run or hook failed, or results could not be written. 2: a mistake in \
the command line or input (one sentence on stderr, nothing run). 128+N: stopped by signal N (130 for Ctrl-C); \
finished runs are saved.";

const ENVIRONMENT: &str = "NO_COLOR: when set and not empty, no colour (unless --color always). CLICOLOR_FORCE: \
colour even when the output is not a terminal (unless --color never).";

/// The section heading of a subcommand: its full name, e.g. "SCALESCOPE PROBE LOCK".
fn heading(cmd: &clap::Command) -> String {
    cmd.get_bin_name().unwrap_or(cmd.get_name()).to_uppercase()
}

fn about(cmd: &clap::Command) -> String {
    cmd.get_about().map(|a| a.to_string()).unwrap_or_default().trim_end_matches('.').to_string()
}

/// A section for the subcommand (global options left to the top-level OPTIONS), its parts as
/// subsections, then its own subcommands.
fn subcommand(cmd: &clap::Command, out: &mut Vec<u8>) -> std::io::Result<()> {
    Roff::new().control("SH", [heading(cmd).as_str()]).to_writer(&mut *out)?;
    let local = cmd.clone().mut_args(|a| if a.is_global_set() { a.hide(true) } else { a });
    let man = Man::new(local);
    let mut body = Vec::new();
    man.render_synopsis_section(&mut body)?;
    man.render_description_section(&mut body)?;
    man.render_options_section(&mut body)?;
    for line in String::from_utf8_lossy(&body).lines() {
        let line =
            line.strip_prefix(".SH ").map_or_else(|| line.to_string(), |h| format!(".SS {h}"));
        writeln!(out, "{line}")?;
    }
    let mut roff = Roff::new();
    if cmd.get_subcommands().next().is_some() {
        roff.control("SS", ["SUBCOMMANDS"]);
        for sub in cmd.get_subcommands() {
            roff.control("TP", []).text([bold(sub.get_name())]).text([roman(about(sub))]);
        }
    }
    after_help(cmd, &mut roff);
    roff.to_writer(&mut *out)?;
    for sub in cmd.get_subcommands() {
        subcommand(sub, out)?;
    }
    Ok(())
}

/// The text after the options in `--help` (examples, install lines), line by line.
fn after_help(cmd: &clap::Command, roff: &mut Roff) {
    if let Some(text) = cmd.get_after_help() {
        roff.control("PP", []).control("nf", []);
        for line in text.to_string().lines() {
            roff.text([roman(line)]);
        }
        roff.control("fi", []);
    }
}
