//! How figures read in the sentences scalescope writes: shares as percentages, seconds, counts.
//! Below every module that prints, so that a figure reads alike in a finding, a report and a
//! comparison; each variant rounds in its own named way, so that no text changes by accident.

/// Writes a line to stderr like `eprintln!`, but drops it when stderr is gone (a closed pipe:
/// `scalescope run … 2>&1 | head`) instead of panicking mid-sweep: the sweep goes on and its
/// results and report are written.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}
pub(crate) use say;

/// `31%`: a share (0.31) in whole percent.
pub fn pct(share: f64) -> String {
    // A share that rounds to nothing reads `0%`, never `-0%`.
    let p = 100.0 * share;
    format!("{:.0}%", if p > -0.5 && p <= 0.0 { 0.0 } else { p })
}

/// `0.36 s`, or `12 ms` below a tenth of a second.
pub fn secs(s: f64) -> String {
    if s >= 0.1 { format!("{s:.2} s") } else { format!("{:.0} ms", 1e3 * s) }
}

/// `1.25 s`, or `360 ms` below a second.
pub fn secs_ms_below_1(s: f64) -> String {
    if s < 1.0 { format!("{:.0} ms", 1e3 * s) } else { format!("{s:.2} s") }
}

/// `2`, `2.5`, `0.125`: a count or a parameter's value, whole numbers without decimals, others
/// in full.
pub fn count(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 { format!("{x:.0}") } else { format!("{x}") }
}

/// `2`, `1.5`: whole numbers without decimals, others to a tenth (2.96 reads `3.0`), as CPUs
/// that a job may use.
pub fn count_tenths(x: f64) -> String {
    if x.fract() == 0.0 { format!("{x:.0}") } else { format!("{x:.1}") }
}

/// `3`, `1.5`: to a tenth, without the `.0` of a value that rounds to a whole number (2.96 reads
/// `3`), as a mean number of threads over runs.
pub fn tenths(x: f64) -> String {
    if (x - x.round()).abs() < 0.05 { format!("{x:.0}") } else { format!("{x:.1}") }
}

/// ` [1.72, 1.95]`: a speed-up's interval to two decimals, after its figure; nothing without one.
pub fn interval(ci: Option<[f64; 2]>) -> String {
    ci.map(|c| format!(" [{:.2}, {:.2}]", c[0], c[1])).unwrap_or_default()
}

/// A size in bytes scaled to its binary unit (`B`, `KiB`, … `PiB`): the value and the unit, for
/// each caller to round as it writes sizes (a table to a tenth, a finding to three digits).
pub fn binary(bytes: f64) -> (f64, &'static str) {
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let (mut v, mut u) = (bytes, 0);
    while v.abs() >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    (v, UNITS[u])
}

/// `1st`, `2nd`, `3rd`, `4th`…
pub fn ordinal(n: usize) -> String {
    let suffix = match (n % 10, n % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_share_that_rounds_to_nothing_has_no_sign() {
        assert_eq!(pct(-0.004), "0%");
        assert_eq!(pct(-0.0), "0%");
        assert_eq!(pct(-0.02), "-2%");
        assert_eq!(pct(0.31), "31%");
    }

    #[test]
    fn each_variant_rounds_its_own_way() {
        assert_eq!(pct(0.314), "31%");
        assert_eq!((secs(0.356), secs(0.012)), ("0.36 s".into(), "12 ms".into()));
        assert_eq!(
            (secs_ms_below_1(0.356), secs_ms_below_1(1.25)),
            ("356 ms".into(), "1.25 s".into())
        );
        assert_eq!((count(2.0), count(0.125)), ("2".into(), "0.125".into()));
        assert_eq!((count_tenths(2.0), count_tenths(2.96)), ("2".into(), "3.0".into()));
        assert_eq!((tenths(2.96), tenths(1.5)), ("3".into(), "1.5".into()));
    }
}
