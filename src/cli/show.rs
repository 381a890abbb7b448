//! `scalescope show RESULTS`: the table of a finished (or interrupted) sweep, again.

use super::args::ShowArgs;
use super::{Exit, view};

/// Loads the results and prints their table.
pub fn show(args: &ShowArgs) -> anyhow::Result<Exit> {
    let (_, doc) = crate::results::load(&args.results)?;
    view::print_and_export(&doc, None, &args.view)?;
    Ok(Exit::Done)
}
