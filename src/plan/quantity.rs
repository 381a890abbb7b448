//! Numbers with unit prefixes as programs print them and users write them: `1.5k`, `3.2 GB/s`,
//! `512KiB`, `10 Mbit/s`. Decimal prefixes k K M G T P, binary Ki Mi Gi Ti Pi.

/// Splits a leading number and its prefix multiplier off `text`; returns (value, rest-of-unit).
///
/// A prefix letter counts only when a unit-like tail follows it (end, space, `/`, `B`, `b`, `i`),
/// so `12 Threads` stays 12 with unit `Threads`.
pub fn parse(text: &str) -> Option<(f64, &str)> {
    let t = text.trim();
    let (value, end) = match grouped(t) {
        Some(found) => found,
        None => {
            let end = number_end(t);
            // `12,5`: a decimal comma, or a thousands separator misplaced; either way not a
            // number to guess at.
            if t[end..]
                .strip_prefix(',')
                .is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit()))
            {
                return None;
            }
            (t[..end].parse().ok()?, end)
        }
    };
    let rest = t[end..].trim_start();
    let (mult, unit) = prefix(rest);
    let v = value * mult;
    v.is_finite().then_some((v, unit.trim()))
}

/// A leading number with thousands separators (`1,234,567.5`): its value and byte length.
fn grouped(t: &str) -> Option<(f64, usize)> {
    let b = t.as_bytes();
    let mut i = usize::from(b.first().is_some_and(|&c| c == b'+' || c == b'-'));
    let lead = b[i..].iter().take_while(|c| c.is_ascii_digit()).count();
    if !(1..=3).contains(&lead) {
        return None;
    }
    i += lead;
    let mut groups = 0;
    while b.get(i) == Some(&b',')
        && b.len() >= i + 4
        && b[i + 1..i + 4].iter().all(u8::is_ascii_digit)
    {
        i += 4;
        groups += 1;
    }
    if groups == 0 || b.get(i).is_some_and(|c| c.is_ascii_digit() || *c == b',') {
        return None;
    }
    if b.get(i) == Some(&b'.') {
        i += 1 + b[i + 1..].iter().take_while(|c| c.is_ascii_digit()).count();
    }
    let value: f64 = t[..i].replace(',', "").parse().ok()?;
    Some((value, i))
}

/// The byte length of the leading decimal number (sign, digits, point, exponent).
fn number_end(t: &str) -> usize {
    let b = t.as_bytes();
    let mut i = 0;
    if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
        i += 1;
    }
    while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'.') {
        i += 1;
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        let mut j = i + 1;
        if j < b.len() && (b[j] == b'+' || b[j] == b'-') {
            j += 1;
        }
        if j < b.len() && b[j].is_ascii_digit() {
            while j < b.len() && b[j].is_ascii_digit() {
                j += 1;
            }
            i = j;
        }
    }
    i
}

fn prefix(rest: &str) -> (f64, &str) {
    let mut chars = rest.chars();
    let Some(p) = chars.next() else { return (1.0, rest) };
    let (decimal, binary) = match p {
        'k' | 'K' => (1e3, 1024f64),
        'M' => (1e6, 1024f64.powi(2)),
        'G' => (1e9, 1024f64.powi(3)),
        'T' => (1e12, 1024f64.powi(4)),
        'P' => (1e15, 1024f64.powi(5)),
        _ => return (1.0, rest),
    };
    let after = &rest[1..];
    let unit_like = |s: &str| s.is_empty() || s.starts_with([' ', '\t', '/', 'B', 'b']);
    if let Some(bin_rest) = after.strip_prefix('i')
        && unit_like(bin_rest)
    {
        return (binary, bin_rest);
    }
    if unit_like(after) { (decimal, after) } else { (1.0, rest) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_prefixes_and_keeps_units() {
        assert_eq!(parse("1.5k"), Some((1500.0, "")));
        assert_eq!(parse(" 3.2 GB/s"), Some((3.2e9, "B/s")));
        assert_eq!(parse("512KiB"), Some((524288.0, "B")));
        assert_eq!(parse("2Mi"), Some((2097152.0, "")));
        assert_eq!(parse("10 Mbit/s"), Some((1e7, "bit/s")));
        assert_eq!(parse("12 Threads"), Some((12.0, "Threads")));
        assert_eq!(parse("1e6 events"), Some((1e6, "events")));
        assert_eq!(parse("-2.5"), Some((-2.5, "")));
        assert_eq!(parse("abc"), None);
        assert_eq!(parse(""), None);
    }

    #[test]
    fn reads_thousands_separators_and_refuses_decimal_commas() {
        assert_eq!(parse("1,234.5"), Some((1234.5, "")));
        assert_eq!(parse("1,234,567 events/s"), Some((1234567.0, "events/s")));
        assert_eq!(parse("-12,000k"), Some((-12e6, "")));
        assert_eq!(parse("12,5"), None);
        assert_eq!(parse("1,2345"), None);
        assert_eq!(parse("1234,567"), None);
        assert_eq!(parse("12, then 5"), Some((12.0, ", then 5")));
    }
}
