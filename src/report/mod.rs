//! Presenting results: the terminal table, Markdown for posts, CSV for spreadsheets.

pub mod charts;
pub mod csv;
mod figure;
pub mod findings;
pub mod flame;
pub mod format;
pub mod html;
mod lines;
pub mod markdown;
mod memory;
pub mod model;
mod prediction;
pub mod prmon;
mod rates;
pub mod sections;
pub mod summary;
pub mod svg;
pub mod table;
pub mod terminal;
pub mod threads;
