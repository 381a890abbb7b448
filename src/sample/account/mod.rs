//! The end-of-run accounting: every thread's time bin by bin (the history, laid out on the
//! tracer's switch intervals), how threads behave around a wait, where the job's CPU capacity went,
//! and the run's [`ThreadReport`] made from what the sampler recorded.

mod accounting;
mod behaviour;
mod capacity;
mod history;
mod recording;
mod switches;
mod thread_report;

pub use capacity::{Capacity, IdleKind};
pub use thread_report::{Around, Feeder, Hot, MachineCpu, ThreadReport, Wait};

pub(crate) use history::{History, Interval, Label};
pub(crate) use recording::{Recording, report};
pub(crate) use switches::Switches;
