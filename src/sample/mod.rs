//! Where thread time goes, without privileges: a sampler thread follows the run's process tree
//! through /proc, takes exact on-CPU and run-queue time from counters, splits off-CPU time by the
//! waits it sees (system call, futex operation, wait channel, state), and names the locks.

pub mod accounting;
pub mod behaviour;
pub mod capacity;
pub mod catch;
pub mod classify;
pub mod clock;
mod collector;
pub mod cpu;
pub mod elf;
pub mod evidence;
pub mod history;
pub mod memory;
mod pause;
pub mod perf;
pub mod procfs;
pub mod profile;
pub mod records;
pub mod report;
pub mod sampler;
pub mod series;
pub mod stacks;
mod summary;
mod switch_cost;
mod switches;
pub mod symbols;
mod thread;
pub mod tracer;
mod tree;

pub use classify::Class;
pub use profile::Phase;
pub use report::{ThreadReport, Wait};
pub use sampler::{Config, Sampler};
