//! Where thread time goes, without privileges: a sampler thread follows the run's process tree
//! through /proc, takes exact on-CPU and run-queue time from counters, splits off-CPU time by the
//! waits it sees (system call, futex operation, wait channel, state), and names the locks.
//!
//! Four parts below the sampler, each using only those listed before it: `proc` reads /proc,
//! `unwind` unwinds and names user stacks, `trace` runs the perf_event tracer and gathers the
//! stack evidence, and `account` turns the recording into the run's thread report
//! ([`crate::results::ThreadReport`]).

mod account;
mod proc;
mod sampler;
mod trace;
mod unwind;

pub use account::report_of_parts;
pub use proc::procfs;
pub use sampler::{Config, Sampler};
pub use trace::{Evidence, Findings, TracerConfig, monotonic_ns};

pub(crate) use proc::live_pss_bytes;
