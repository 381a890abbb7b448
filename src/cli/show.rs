//! `scalescope show RESULTS`: the table and model of a finished (or interrupted) sweep, again.

use super::args::ShowArgs;
use super::{Exit, view};

/// Loads the results and prints their table and model.
pub fn show(args: &ShowArgs) -> anyhow::Result<Exit> {
    let (_, mut doc) = crate::results::load(&args.results)?;
    view::analyse(&mut doc, &args.view)?;
    let sections = crate::report::sections::Sections::of(&doc);
    view::print_and_export(&doc, &sections, None, &args.view)?;
    Ok(Exit::Done)
}
