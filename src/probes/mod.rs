//! Built-in workloads with known behaviour (`scalescope probe NAME`). Each prints a human line and
//! a `scalescope-metric throughput …` line that the harness reads without any flag.

pub mod inputs;
pub mod scalable;
pub mod zoo;

use std::io::Write;

/// Prints a probe's result: one line for people, one for the harness.
pub fn print_result(name: &str, threads: usize, seconds: f64, work: f64, unit: &str) -> std::io::Result<()> {
    let throughput = if seconds > 0.0 { work / seconds } else { 0.0 };
    let mut out = std::io::stdout().lock();
    writeln!(out, "{name}: {threads} threads, {seconds:.3} s, {work:.4e} {unit}, {throughput:.4e} {unit}/s")?;
    writeln!(out, "{}throughput {throughput:.6e} {unit}/s", crate::exec::metrics::LINE_PREFIX)?;
    out.flush()
}
