//! Built-in workloads with known behaviour (`scalescope probe NAME`). Each prints a human line and
//! a `scalescope-metric throughput …` line that the harness reads without any flag.

mod chunks;
pub mod error;
mod events;
pub mod inputs;
pub mod overlap;
pub mod pingpong;
pub mod readspeed;
mod ring;
pub mod scalable;
mod spin;
pub mod textgen;
pub mod wordcount;
mod wordtable;
pub mod zoo;

use crate::metric_line;
use std::io::Write;

/// Prints a probe's result: one line for people, one for the harness.
pub fn print_result(
    name: &str,
    threads: usize,
    seconds: f64,
    work: f64,
    unit: &str,
) -> std::io::Result<()> {
    let throughput = if seconds > 0.0 { work / seconds } else { 0.0 };
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "{name}: {threads} threads, {seconds:.3} s, {work:.4e} {unit}, {throughput:.4e} {unit}/s"
    )?;
    metric_line::write(&mut out, "throughput", throughput, &format!("{unit}/s"))?;
    out.flush()
}

/// Writes `scalescope-metric NAME VALUE UNIT` lines for the harness.
pub fn print_metrics(out: &mut impl Write, metrics: &[(&str, f64, &str)]) -> std::io::Result<()> {
    for (name, value, unit) in metrics {
        metric_line::write(out, name, *value, unit)?;
    }
    Ok(())
}

/// Bytes as people read them: `256 KiB`, `8 MiB`, `1.5 GiB`.
pub fn binary_size(bytes: u64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = bytes as f64;
    let mut i = 0;
    while v >= 1024.0 && i + 1 < units.len() {
        v /= 1024.0;
        i += 1;
    }
    if v.fract() == 0.0 { format!("{v} {}", units[i]) } else { format!("{v:.1} {}", units[i]) }
}
