//! Presenting results: the terminal table, Markdown for posts, CSV for spreadsheets.

pub mod csv;
pub mod findings;
pub mod format;
pub mod markdown;
pub mod model;
pub mod table;
pub mod terminal;
pub mod threads;
