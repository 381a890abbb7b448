//! What a failed run or hook printed, made safe to show on a terminal: the last lines of text
//! without control characters (no escape sequence reaches the terminal), or, when the output is
//! binary (`xz -c`), only how many bytes it was.

use super::capture::Captured;
use std::fmt;

/// Lines of a failed run's output shown with its failure.
const LINES: usize = 5;

/// The end of a failed process's output, as it is safe to show.
#[derive(Clone, Debug, PartialEq)]
pub enum Printed {
    /// Nothing at all.
    Nothing,
    /// The last lines, control characters removed.
    Text {
        /// `stdout` or `stderr`.
        stream: &'static str,
        /// The lines.
        lines: String,
    },
    /// Output that is not text.
    Binary {
        /// `stdout` or `stderr`.
        stream: &'static str,
        /// Bytes printed in all.
        total: u64,
        /// Bytes of it kept (the first and last 64 KiB).
        kept: u64,
    },
}

impl Printed {
    /// The end of stderr, or of stdout when stderr is empty.
    pub fn of(stdout: &Captured, stderr: &Captured) -> Printed {
        let (stream, cap) = if stderr.total > 0 { ("stderr", stderr) } else { ("stdout", stdout) };
        if cap.total == 0 {
            return Printed::Nothing;
        }
        let bytes = cap.bytes();
        match text_tail(&bytes, LINES) {
            Some(lines) if lines.trim().is_empty() => Printed::Nothing,
            Some(lines) => Printed::Text { stream, lines },
            None => Printed::Binary { stream, total: cap.total, kept: bytes.len() as u64 },
        }
    }

    /// The stream it comes from, when there is anything.
    pub fn stream(&self) -> Option<&'static str> {
        match self {
            Printed::Nothing => None,
            Printed::Text { stream, .. } | Printed::Binary { stream, .. } => Some(stream),
        }
    }
}

impl fmt::Display for Printed {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            Printed::Nothing => Ok(()),
            Printed::Text { lines, .. } => write!(f, "it printed, at the end:\n{lines}"),
            Printed::Binary { stream, total, kept } => {
                write!(
                    f,
                    "it printed {total} bytes of binary output on {stream} ({kept} of them kept)"
                )
            }
        }
    }
}

/// `; it printed…` after a hook's failure, or nothing.
pub(crate) fn said(p: &Printed) -> String {
    match p {
        Printed::Nothing => String::new(),
        other => format!("; {other}"),
    }
}

/// The last `n` lines of `bytes` without terminal escape sequences and control characters, or
/// `None` when the bytes are not text (a NUL, or more than one character in ten undecodable or a
/// control character other than the escapes of coloured output).
pub fn text_tail(bytes: &[u8], n: usize) -> Option<String> {
    let text = String::from_utf8_lossy(bytes);
    let odd = |c: char| {
        c == char::REPLACEMENT_CHARACTER
            || (c.is_control() && !matches!(c, '\n' | '\t' | '\r' | '\x1b'))
    };
    let (chars, odd_chars) =
        text.chars().fold((0usize, 0usize), |(a, b), c| (a + 1, b + usize::from(odd(c))));
    if bytes.contains(&0) || odd_chars * 10 > chars {
        return None;
    }
    let lines: Vec<String> = text.lines().map(plain).collect();
    Some(lines[lines.len().saturating_sub(n)..].join("\n"))
}

/// A line without escape sequences (`ESC [ … letter`, `ESC ] … BEL`, `ESC x`) and control characters.
fn plain(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\x1b' => match chars.next() {
                Some('[') => {
                    for d in chars.by_ref() {
                        if ('@'..='~').contains(&d) {
                            break;
                        }
                    }
                }
                Some(']') => {
                    for d in chars.by_ref() {
                        if d == '\x07' || d == '\x1b' {
                            break;
                        }
                    }
                }
                _ => {}
            },
            '\t' => out.push(c),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_keeps_its_last_lines_without_escape_sequences() {
        let t =
            text_tail(b"a\nb\n\x1b[31merror\x1b[0m: \x1b]0;owned\x07bad\x08\nd\ne\n", 3).unwrap();
        assert_eq!(t, "error: bad\nd\ne");
    }

    #[test]
    fn binary_output_is_not_text() {
        let xz: Vec<u8> = (0..4096u32).map(|i| (i.wrapping_mul(2654435761) >> 13) as u8).collect();
        assert_eq!(text_tail(&xz, 5), None);
        assert_eq!(text_tail(b"ok\0", 5), None);
        assert_eq!(text_tail("déjà vu\n".as_bytes(), 5).as_deref(), Some("déjà vu"));
    }

    #[test]
    fn a_binary_tail_says_how_much_and_on_which_stream() {
        let scanner = std::sync::Arc::new(super::super::metrics::Scanner::new(&[]).unwrap());
        let cap =
            super::super::capture::drain(&[0xfdu8, 0x37, 0x7a, 0x58, 0x5a, 0][..], scanner, None);
        let p = Printed::of(&cap, &Captured::default());
        assert_eq!(p, Printed::Binary { stream: "stdout", total: 6, kept: 6 });
        assert_eq!(p.to_string(), "it printed 6 bytes of binary output on stdout (6 of them kept)");
    }
}
