//! `{name}` placeholders in commands, environment values, hooks, paths and work amounts.
//! `{{` and `}}` write literal braces; `${NAME}` is left to the shell. Values substituted into shell text are quoted, so no
//! value can inject shell syntax.

use super::error::{PlanError, invalid};

/// How a substituted value is written.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Quote {
    /// As is: the text becomes one argv element or an environment value, never seen by a shell.
    None,
    /// Single-quoted for `sh -c` unless it consists only of characters a shell does not interpret.
    Shell,
}

/// Substitutes every `{name}` in `text` with its value from `values`.
pub fn substitute(
    text: &str,
    values: &[(String, String)],
    quote: Quote,
) -> Result<String, PlanError> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find(['{', '}']) {
        out.push_str(&rest[..i]);
        let tail = &rest[i..];
        if tail.starts_with("{{") || tail.starts_with("}}") {
            out.push_str(&tail[..1]);
            rest = &tail[2..];
            continue;
        }
        if let Some(after) = tail.strip_prefix('}') {
            out.push('}');
            rest = after;
            continue;
        }
        match placeholder(tail).filter(|_| !out.ends_with('$')) {
            Some(name) => {
                let value = values.iter().find(|(n, _)| n == name).map(|(_, v)| v).ok_or_else(|| {
                    let known: Vec<&str> = values.iter().map(|(n, _)| n.as_str()).collect();
                    let known = if known.is_empty() { "none".to_string() } else { known.join(", ") };
                    invalid!("unknown placeholder {{{name}}} in '{text}' (parameters: {known}; write {{{{ and }}}} for literal braces)")
                })?;
                match quote {
                    Quote::None => out.push_str(value),
                    Quote::Shell => out.push_str(&shell_quote(value)),
                }
                rest = &tail[name.len() + 2..];
            }
            None => {
                out.push('{');
                rest = &tail[1..];
            }
        }
    }
    out.push_str(rest);
    Ok(out)
}

/// The placeholder names used in `text`, in order of appearance.
pub fn placeholders(text: &str) -> Vec<&str> {
    let mut names = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find('{') {
        let tail = &rest[i..];
        if let Some(after) = tail.strip_prefix("{{") {
            rest = after;
        } else if let Some(name) = placeholder(tail).filter(|_| !rest[..i].ends_with('$')) {
            names.push(name);
            rest = &tail[name.len() + 2..];
        } else {
            rest = &tail[1..];
        }
    }
    names
}

/// The identifier of a `{ident}` at the start of `s`, if it is one.
fn placeholder(s: &str) -> Option<&str> {
    let body = s.strip_prefix('{')?;
    let end = body.find('}')?;
    let name = &body[..end];
    super::values::check_name(name).ok().map(|_| name)
}

/// Quotes a value for `sh`: safe words stay bare, everything else goes in single quotes.
pub fn shell_quote(value: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "_-.,:/=+@%".contains(c);
    if !value.is_empty() && value.chars().all(safe) {
        value.to_string()
    } else {
        format!("'{}'", value.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vals() -> Vec<(String, String)> {
        vec![("threads".into(), "4".into()), ("name".into(), "a b;$(rm -rf x)'".into())]
    }

    #[test]
    fn substitutes_known_placeholders_and_keeps_other_braces() {
        let v = vals();
        assert_eq!(substitute("-T{threads}", &v, Quote::None).unwrap(), "-T4");
        assert_eq!(
            substitute("awk '{print $1}' {{threads}}", &v, Quote::None).unwrap(),
            "awk '{print $1}' {threads}"
        );
        assert_eq!(substitute("${HOME} {} }", &v, Quote::None).unwrap(), "${HOME} {} }");
        assert_eq!(placeholders("x{threads}{{y}}{name}{ }${HOME}"), ["threads", "name"]);
    }

    #[test]
    fn unknown_placeholder_is_an_error_naming_the_parameters() {
        let e = substitute("-T{thread}", &vals(), Quote::None).unwrap_err().to_string();
        assert!(e.contains("{thread}") && e.contains("threads, name"), "{e}");
    }

    #[test]
    fn shell_values_cannot_inject_syntax() {
        let s = substitute("echo {name}", &vals(), Quote::Shell).unwrap();
        assert_eq!(s, r#"echo 'a b;$(rm -rf x)'\'''"#);
        let out = std::process::Command::new("sh").arg("-c").arg(&s).output().unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout), "a b;$(rm -rf x)'\n");
        assert_eq!(shell_quote("4"), "4");
        assert_eq!(shell_quote(""), "''");
    }
}
