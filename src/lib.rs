//! scalescope: sweep a parallel program over its parameters, measure every run soundly, fit
//! scaling models and say why it stops scaling.
//!
//! Modules follow the data flow, each depending only on those listed before it:
//! [`files`], [`fmt`], [`machine`], [`mapped`], [`metric_line`], [`pagecache`] and [`stats`]
//! (foundations) →
//! [`plan`] → [`results`] (the types of the results document, which the measuring modules after
//! it fill) → [`sample`] → [`exec`] → [`launch`] → [`analysis`] → [`diagnose`] → [`report`] → [`compare`] →
//! [`history`] (every sweep remembered, steps found); [`probes`] are built-in workloads beside the
//! flow; [`error`] gathers every layer's error and its exit code, and [`cli`] alone parses
//! arguments.

#![warn(missing_docs)]

pub mod files;
pub mod fmt;
pub mod machine;
pub mod mapped;
pub mod metric_line;
pub mod pagecache;
pub mod stats;

pub mod plan;

pub mod results;

pub mod sample;

pub mod exec;

pub mod launch;

pub mod analysis;

pub mod diagnose;

pub mod report;

pub mod probes;

pub mod compare;

pub mod history;

pub mod error;
pub use error::Error;

pub mod cli;
