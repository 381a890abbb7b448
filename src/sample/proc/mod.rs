//! Reading the run from /proc: our own parsing of its files, the process tree and its threads,
//! the wait taxonomy, the per-thread on-CPU sampling event, the tree's memory and the run as a
//! time series, and the sampler's pause between sweeps.

mod classify;
mod cpu;
mod memory;
mod pause;
pub mod procfs;
mod thread;
mod time_series;
mod tree;

pub(crate) use classify::{Site, blocked};
pub(crate) use cpu::{CpuSampler, MAX_THREADS as MAX_CPU_EVENTS, refusal as cpu_refusal};
pub(crate) use memory::{Tracker, TreeMemory, live_pss_bytes, page_kb, set_live_pss_kb};
pub(crate) use pause::{Pause, Woken};
pub(crate) use thread::Thread;
pub(crate) use time_series::{Counts, Part, Recorder, sum_parts};
pub(crate) use tree::{Tree, children_listed};
