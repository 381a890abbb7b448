//! A share given to a flag (`--noise 2%`, `--threshold 0.05`): a percentage or a fraction.

use super::Usage;
use crate::error::Error;

/// `2%` or `0.02` given to `flag`, as a fraction.
pub fn fraction(flag: &str, text: &str) -> Result<f64, Error> {
    let t = text.trim();
    let v = match t.strip_suffix('%') {
        Some(p) => p.trim().parse::<f64>().map(|v| v / 100.0),
        None => t.parse::<f64>(),
    };
    match v {
        Ok(v) if (0.0..1.0).contains(&v) => Ok(v),
        _ => Err(Usage(format!("{flag} {text}: give a share like 2% or 0.02")).into()),
    }
}
