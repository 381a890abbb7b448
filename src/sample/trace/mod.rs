//! The perf_event tracer, where the kernel allows it: the ABI by hand, its records decoded, the
//! clock they carry, its buffers emptied by a thread of their own, short waits caught as they
//! begin, the kernel's switch cost; and what it yields for a run with the stacks of blocked
//! threads: the stack evidence and the stack profile by phase.

mod catch;
mod clock;
mod collector;
mod perf;
mod profile;
mod records;
mod stack_evidence;
mod switch_cost;
mod tracer;

pub use clock::monotonic_ns;
pub use stack_evidence::{Evidence, Findings};
pub use tracer::{SETTLE_NS, TracerConfig};

pub(crate) use catch::Catch;
pub(crate) use profile::{Code, same_code};
pub(crate) use tracer::{
    Buffers, Drained, Interval, JUDGE_AFTER_S, MAX_SWITCHES_PER_CPU_S, too_many_switches,
};
