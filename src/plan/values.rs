//! The grammar of parameter values: lists `1,2,4`, ranges `1..8`, stepped ranges `1..64:x2`
//! (doubling) or `0..100:+25`, and `nproc` (the CPUs this process may use).

use super::error::{PlanError, invalid};

/// Expands a value specification into its values, in order, without duplicates.
pub fn expand(spec: &str, nproc: usize) -> Result<Vec<String>, PlanError> {
    if spec.trim().is_empty() {
        return Err(invalid!("the value list is empty: give values like 1,2,4 or 1..64:x2"));
    }
    let mut out: Vec<String> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for item in spec.split(',') {
        let item = item.trim();
        if item.is_empty() {
            return Err(invalid!(
                "empty value in the list '{spec}' (two commas in a row, or a trailing comma?)"
            ));
        }
        for v in expand_item(item, nproc)? {
            if seen.insert(v.clone()) {
                out.push(v);
            }
        }
        if out.len() > MAX_VALUES {
            return Err(too_many(spec, out.len() as u64));
        }
    }
    Ok(out)
}

/// More values than this is not a sweep anyone can wait for.
const MAX_VALUES: usize = 100_000;

fn too_many(what: &str, n: u64) -> PlanError {
    invalid!(
        "'{what}' has {n} values; that is not a sweep anyone can wait for (at most {MAX_VALUES})"
    )
}

fn expand_item(item: &str, nproc: usize) -> Result<Vec<String>, PlanError> {
    if item == "nproc" {
        return Ok(vec![nproc.to_string()]);
    }
    let Some((from, rest)) = item.split_once("..") else {
        return Ok(vec![item.to_string()]);
    };
    let (to, step) = match rest.split_once(':') {
        Some((to, step)) => (to, Some(step)),
        None => (rest, None),
    };
    let bound = |s: &str| -> Result<u64, PlanError> {
        let s = s.trim();
        if s == "nproc" {
            return Ok(nproc as u64);
        }
        s.parse::<u64>().map_err(|_| {
            invalid!("'{s}' in the range '{item}' is not a whole number (ranges are like 1..8 or 1..64:x2)")
        })
    };
    let (a, b) = (bound(from)?, bound(to)?);
    if a > b {
        return Err(invalid!("the range '{item}' is empty: it starts above its end"));
    }
    let mut values = Vec::new();
    match step.map(str::trim) {
        None if b - a >= MAX_VALUES as u64 => {
            return Err(too_many(item, (b - a).saturating_add(1)));
        }
        None => values.extend(a..=b),
        Some(s) if s.starts_with(['x', '*']) => {
            let k: u64 = s[1..]
                .parse()
                .map_err(|_| invalid!("bad step '{s}' in '{item}': use :x2 to double"))?;
            if k < 2 || a == 0 {
                return Err(invalid!(
                    "the range '{item}' never grows: a multiplying range needs a start above 0 and a factor of 2 or more"
                ));
            }
            let mut v = Some(a);
            while let Some(x) = v.filter(|x| *x <= b) {
                values.push(x);
                v = x.checked_mul(k);
            }
        }
        Some(s) => {
            let k: u64 = s.trim_start_matches('+').parse().map_err(|_| {
                invalid!("bad step '{s}' in '{item}': use :+2 to add 2, or :x2 to double")
            })?;
            if k == 0 {
                return Err(invalid!("the step of '{item}' is 0"));
            }
            let n = ((b - a) / k).saturating_add(1);
            if n > MAX_VALUES as u64 {
                return Err(too_many(item, n));
            }
            values.extend((a..=b).step_by(usize::try_from(k).unwrap_or(usize::MAX)));
        }
    }
    Ok(values.into_iter().map(|v| v.to_string()).collect())
}

/// `1-4` as (1, 4): two whole numbers joined by a dash, the way ranges are written in prose.
pub fn dash_range(value: &str) -> Option<(u64, u64)> {
    let (a, b) = value.split_once('-')?;
    Some((a.trim().parse().ok()?, b.trim().parse().ok()?))
}

/// Whether a value reads as a number (and is stored as one in results.json): finite, and not
/// written with a leading `+`.
pub fn is_number(text: &str) -> bool {
    !text.starts_with('+') && text.parse::<f64>().is_ok_and(f64::is_finite)
}

/// Checks a parameter name: a letter or `_`, then letters, digits or `_`.
pub fn check_name(name: &str) -> Result<(), PlanError> {
    let mut chars = name.chars();
    let ok = chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    if ok {
        Ok(())
    } else {
        Err(invalid!("'{name}' is not a parameter name: use letters, digits and _ (e.g. threads)"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ex(s: &str) -> Vec<String> {
        expand(s, 8).unwrap()
    }

    #[test]
    fn expands_lists_ranges_and_nproc() {
        assert_eq!(ex("1,2,4"), ["1", "2", "4"]);
        assert_eq!(ex("1..4"), ["1", "2", "3", "4"]);
        assert_eq!(ex("1..64:x2"), ["1", "2", "4", "8", "16", "32", "64"]);
        assert_eq!(ex("1..48:x2"), ["1", "2", "4", "8", "16", "32"]);
        assert_eq!(ex("0..100:+25"), ["0", "25", "50", "75", "100"]);
        assert_eq!(ex("nproc"), ["8"]);
        assert_eq!(ex("1..nproc:x2,nproc,12"), ["1", "2", "4", "8", "12"]);
        assert_eq!(ex("gcc, clang"), ["gcc", "clang"]);
    }

    #[test]
    fn rejects_malformed_lists_in_one_sentence() {
        for bad in ["", "1,,2", "1,", "8..1", "1..x", "1..8:x1", "0..8:x2", "1..8:+0", "1..8:y"] {
            let e = expand(bad, 8).unwrap_err().to_string();
            assert!(!e.contains('\n') && !e.is_empty(), "{bad}: {e}");
        }
    }

    #[test]
    fn checks_names() {
        assert!(check_name("threads").is_ok() && check_name("_n2").is_ok());
        assert!(check_name("2x").is_err() && check_name("a-b").is_err() && check_name("").is_err());
    }
}
