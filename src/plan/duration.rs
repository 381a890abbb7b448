//! Durations as users write them: `30s`, `5m`, `1.5h`, `500ms`, or a bare number of seconds.

use super::error::{PlanError, invalid};

/// Parses a duration into seconds.
pub fn parse_seconds(text: &str) -> Result<f64, PlanError> {
    let t = text.trim();
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let scale = match unit.trim() {
        "" | "s" | "sec" => 1.0,
        "ms" => 1e-3,
        "us" | "µs" => 1e-6,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        _ => f64::NAN,
    };
    match num.parse::<f64>() {
        Ok(v) if scale.is_finite() && v > 0.0 => Ok(v * scale),
        _ => Err(invalid!("bad duration '{text}': use e.g. 30s, 5m, 1.5h or 500ms")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_common_forms() {
        assert_eq!(parse_seconds("30s").unwrap(), 30.0);
        assert_eq!(parse_seconds("1.5m").unwrap(), 90.0);
        assert_eq!(parse_seconds("2h").unwrap(), 7200.0);
        assert_eq!(parse_seconds("500ms").unwrap(), 0.5);
        assert_eq!(parse_seconds("2").unwrap(), 2.0);
        for bad in ["", "s", "10x", "-1s", "0", "1..2s"] {
            assert!(parse_seconds(bad).is_err(), "{bad}");
        }
    }
}
