//! The integration tests: one binary, so that the suite links once and tests of different areas
//! run side by side. Each module holds one area's end-to-end checks against the built
//! `scalescope`; `common` holds the helpers and the lock that gives the tests which measure the
//! machine to themselves.

mod common;

mod analysis;
mod cluster;
mod colour;
mod compare;
mod cpu;
mod demo;
mod docs;
mod faults;
mod findings;
mod guide;
mod help;
mod history;
mod interrupt;
mod load;
mod memory;
mod probes;
mod properties;
mod python;
mod report;
mod schema;
mod security;
mod speedup_stacks;
mod stacks;
mod storage;
mod sweep;
mod threads;
mod usage;
