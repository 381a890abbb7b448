//! `--work` amounts: `[UNIT=]EXPR`, where EXPR is arithmetic (+ − × ÷, parentheses) over numbers
//! with prefixes, e.g. `1.7GB*4` or `events=10000403`. A `B` suffix makes the unit bytes.

use super::error::{PlanError, invalid};

/// The amount of work one run does, in its unit; throughput is this divided by wall time.
#[derive(Clone, Debug, PartialEq)]
pub struct Work {
    /// How much work.
    pub amount: f64,
    /// Its unit: `bytes`, or the name given before `=`, or `items`.
    pub unit: String,
}

/// Evaluates a work expression whose placeholders have already been substituted.
pub fn evaluate(text: &str) -> Result<Work, PlanError> {
    let (named, expr) = match text.split_once('=') {
        Some((unit, expr))
            if !unit.trim().is_empty()
                && unit.trim().chars().all(|c| c.is_alphanumeric() || c == '_') =>
        {
            (Some(unit.trim().to_string()), expr)
        }
        _ => (None, text),
    };
    let mut p = Parser { s: expr.as_bytes(), i: 0, bytes: false, text };
    let amount = p.sum()?;
    p.skip_ws();
    if p.i != p.s.len() {
        return Err(invalid!("cannot read the work amount '{text}' past '{}'", &expr[p.i..]));
    }
    if !amount.is_finite() || amount <= 0.0 {
        return Err(invalid!("the work amount '{text}' is {amount}; it must be a positive number"));
    }
    let unit = named.unwrap_or_else(|| if p.bytes { "bytes".into() } else { "items".into() });
    Ok(Work { amount, unit })
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
    bytes: bool,
    text: &'a str,
}

impl Parser<'_> {
    fn skip_ws(&mut self) {
        while self.i < self.s.len() && self.s[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.skip_ws();
        self.s.get(self.i).copied()
    }

    fn sum(&mut self) -> Result<f64, PlanError> {
        let mut v = self.product()?;
        while let Some(op @ (b'+' | b'-')) = self.peek() {
            self.i += 1;
            let r = self.product()?;
            v = if op == b'+' { v + r } else { v - r };
        }
        Ok(v)
    }

    fn product(&mut self) -> Result<f64, PlanError> {
        let mut v = self.atom()?;
        while let Some(op @ (b'*' | b'/' | b'x')) = self.peek() {
            self.i += 1;
            let r = self.atom()?;
            v = if op == b'/' { v / r } else { v * r };
        }
        Ok(v)
    }

    fn atom(&mut self) -> Result<f64, PlanError> {
        match self.peek() {
            Some(b'(') => {
                self.i += 1;
                let v = self.sum()?;
                if self.peek() != Some(b')') {
                    return Err(invalid!(
                        "unbalanced parenthesis in the work amount '{}'",
                        self.text
                    ));
                }
                self.i += 1;
                Ok(v)
            }
            Some(c) if c.is_ascii_digit() || c == b'.' => self.number(),
            _ => Err(invalid!("expected a number in the work amount '{}'", self.text)),
        }
    }

    fn number(&mut self) -> Result<f64, PlanError> {
        let start = self.i;
        while self.i < self.s.len()
            && (self.s[self.i].is_ascii_alphanumeric() || self.s[self.i] == b'.')
        {
            let c = self.s[self.i];
            // An `x` right after a digit is multiplication (`2x3`), not part of the number.
            if c == b'x' {
                break;
            }
            if (c == b'e' || c == b'E')
                && self.s.get(self.i + 1).is_some_and(|d| matches!(d, b'+' | b'-'))
            {
                self.i += 1;
            }
            self.i += 1;
        }
        let word = std::str::from_utf8(&self.s[start..self.i]).unwrap_or_default();
        let (value, unit) = super::quantity::parse(word).ok_or_else(|| {
            invalid!("'{word}' in the work amount '{}' is not a number", self.text)
        })?;
        match unit {
            "" => {}
            "B" => self.bytes = true,
            other => {
                return Err(invalid!(
                    "unknown unit '{other}' in the work amount '{}' (use k, M, G, Ki, Mi, Gi, optionally with B for bytes, or name the unit: events=1e6)",
                    self.text
                ));
            }
        }
        Ok(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evaluates_arithmetic_with_units() {
        assert_eq!(evaluate("1.7GB*4").unwrap(), Work { amount: 6.8e9, unit: "bytes".into() });
        assert_eq!(
            evaluate("events=10000403").unwrap(),
            Work { amount: 10000403.0, unit: "events".into() }
        );
        assert_eq!(evaluate("(1+3) * 2k / 4").unwrap().amount, 2000.0);
        assert_eq!(evaluate("2x3").unwrap().amount, 6.0);
        assert_eq!(evaluate("1MiB").unwrap(), Work { amount: 1048576.0, unit: "bytes".into() });
        assert_eq!(evaluate("1.5e6").unwrap().amount, 1.5e6);
    }

    #[test]
    fn rejects_nonsense() {
        for bad in ["", "abc", "1+", "(1+2", "1 2", "0", "1-1", "3 apples", "1/0"] {
            assert!(evaluate(bad).is_err(), "{bad}");
        }
    }
}
