//! Number formatting shared by every view: seconds with four significant digits, mean ± σ,
//! bytes in binary units, throughput with one prefix per column.

use crate::stats::Summary;

/// Decimals that give about four significant digits for `x`.
pub fn decimals(x: f64) -> usize {
    if !x.is_finite() || x == 0.0 {
        return 3;
    }
    (3 - x.abs().log10().floor() as i32).clamp(0, 4) as usize
}

/// A number with about four significant digits.
pub fn num(x: f64) -> String {
    format!("{:.*}", decimals(x), x)
}

/// `1.234 ± 0.012`: the mean and σ at the same precision.
pub fn mean_pm(s: &Summary) -> String {
    let d = decimals(s.mean);
    if s.n < 2 {
        format!("{:.*}", d, s.mean)
    } else {
        format!("{:.*} ± {:.*}", d, s.mean, d, s.stddev)
    }
}

/// `12.3 MiB`.
pub fn bytes(x: f64) -> String {
    match crate::fmt::binary(x) {
        (v, "B") => format!("{v:.0} B"),
        (v, unit) => format!("{v:.1} {unit}"),
    }
}

/// A scale for a throughput column: (divisor, unit label). Bytes are shown in MB/s (10⁶ B/s).
pub fn throughput_scale(unit: &str, largest: f64) -> (f64, String) {
    if unit == "B/s" {
        return (1e6, "MB/s".into());
    }
    scale(unit, largest)
}

/// A scale for a column of figures in `unit` whose largest is `largest`: (divisor, unit label),
/// with a decimal prefix (k, M, G) from 10⁴ on; `M ops/s`, but `MB` for bytes.
pub fn scale(unit: &str, largest: f64) -> (f64, String) {
    let (div, prefix) = match largest {
        x if x >= 1e10 => (1e9, "G"),
        x if x >= 1e7 => (1e6, "M"),
        x if x >= 1e4 => (1e3, "k"),
        _ => (1.0, ""),
    };
    let bytes = unit == "B" || unit.starts_with("B/");
    let label = match (prefix, bytes) {
        ("", _) => unit.to_string(),
        (_, true) => format!("{prefix}{unit}"),
        _ => format!("{prefix} {unit}").trim_end().to_string(),
    };
    (div, label)
}

/// A command line with each argument shell-quoted where needed, for showing and pasting;
/// `{name}` placeholders stay readable.
pub fn command_line(argv: &[String]) -> String {
    let shown = |a: &String| {
        let plain = a.chars().all(|c| c.is_ascii_alphanumeric() || "_-.,:/=+@%{}".contains(c));
        if plain && !a.is_empty() { a.clone() } else { crate::plan::shell_quote(a) }
    };
    argv.iter().map(shown).collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_with_sensible_precision() {
        assert_eq!(num(1.23456), "1.235");
        assert_eq!(num(123.456), "123.5");
        assert_eq!(num(0.0123456), "0.0123");
        assert_eq!(num(0.001331), "0.0013");
        assert_eq!(num(12345.6), "12346");
        assert_eq!(bytes(3.5 * 1024.0 * 1024.0), "3.5 MiB");
        assert_eq!(bytes(100.0), "100 B");
        assert_eq!(throughput_scale("ops/s", 6.1e8), (1e6, "M ops/s".to_string()));
        assert_eq!(throughput_scale("B/s", 1.0).1, "MB/s");
        assert_eq!(scale("B", 2e7), (1e6, "MB".to_string()));
        assert_eq!(scale("", 3e4), (1e3, "k".to_string()));
        assert_eq!(
            command_line(&["xz".into(), "-T{threads}".into(), "a b".into()]),
            "xz -T{threads} 'a b'"
        );
    }
}
