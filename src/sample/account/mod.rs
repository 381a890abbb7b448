//! The end-of-run accounting: every thread's time bin by bin (the history, laid out on the
//! tracer's switch intervals), how threads behave around a wait, where the job's CPU capacity went,
//! and the run's thread report ([`crate::results::ThreadReport`]) made from what the sampler
//! recorded, or from the reports of a run's copies or ranks.

mod accounting;
mod behaviour;
mod joins;
mod parts;
mod recording;
mod switches;
mod thread_time;

pub use parts::report_of_parts;

pub(crate) use recording::{Recording, report};
pub(crate) use switches::Switches;
pub(crate) use thread_time::{History, Interval, Label};
