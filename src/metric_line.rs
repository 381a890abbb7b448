//! The line any program may print to report a figure to scalescope without a `--metric` flag:
//! `scalescope-metric NAME VALUE [UNIT]`. The probes write it; the runs' output scanner reads it.

use std::io::Write;

/// The prefix of a metric line.
pub const PREFIX: &str = "scalescope-metric ";

/// Writes one metric line.
pub fn write(out: &mut impl Write, name: &str, value: f64, unit: &str) -> std::io::Result<()> {
    writeln!(out, "{PREFIX}{name} {value:.6e} {unit}")
}

/// The name, value and unit of a metric line (leading blanks allowed); `None` for any other line.
pub fn parse(line: &[u8]) -> Option<(String, f64, String)> {
    let rest = line.trim_ascii_start().strip_prefix(PREFIX.as_bytes())?;
    let rest = String::from_utf8_lossy(rest);
    let mut parts = rest.split_whitespace();
    let (name, value) =
        (parts.next()?, parts.next()?.parse::<f64>().ok().filter(|v| v.is_finite())?);
    Some((name.to_string(), value, parts.next().unwrap_or("").to_string()))
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_written_line_parses_back() {
        let mut out = Vec::new();
        super::write(&mut out, "throughput", 1.5e6, "B/s").unwrap();
        assert_eq!(super::parse(&out), Some(("throughput".into(), 1.5e6, "B/s".into())));
        assert_eq!(
            super::parse(b"  scalescope-metric n 3"),
            Some(("n".into(), 3.0, String::new()))
        );
        assert_eq!(super::parse(b"scalescope-metric n inf"), None);
        assert_eq!(super::parse(b"metric n 3"), None);
    }
}
