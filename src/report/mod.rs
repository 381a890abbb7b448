//! Presenting results: the terminal table, Markdown for posts, CSV for spreadsheets.

pub mod charts;
pub mod csv;
pub mod figure;
pub mod findings;
pub mod flame;
pub mod format;
pub mod html;
pub mod lines;
pub mod markdown;
pub mod memory;
pub mod model;
pub mod prediction;
pub mod prmon;
pub mod rates;
pub mod sections;
pub mod summary;
pub mod svg;
pub mod table;
pub mod terminal;
pub mod threads;
