//! Presenting results: the terminal table, Markdown for posts, CSV for spreadsheets.

pub mod charts;
pub mod csv;
mod figure;
mod findings;
pub mod flame;
mod format;
pub mod html;
mod lines;
pub mod markdown;
mod memory;
pub mod model;
mod prediction;
mod prmon;
mod rates;
mod sections;
mod summary;
pub mod svg;
mod table;
pub mod terminal;
mod threads;

pub use findings::lines as finding_lines;
pub use format::{bytes, command_line, decimals, num, throughput_scale};
pub use prmon::exports as prmon_exports;
pub use sections::Sections;
pub use summary::summary;
pub use table::{Column, NONE, Table};
pub use threads::{thread_time, wait_lines};
