//! POSIX extended regular expressions (what htslib compiles with `regcomp(REG_EXTENDED |
//! REG_NOSUB)` in the C locale) translated to the `regex` crate's syntax, matched on bytes.
//!
//! The differences that matter: in POSIX a backslash inside a bracket expression is a literal;
//! an unknown escape such as `\.` or `\d` is the literal character; `\<`, `\>`, `` \` `` and `\'`
//! are GNU anchors; `{,n}` means `{0,n}`; a `)` without its `(` is a literal; `.` matches a
//! newline too. Back-references (`\1`) have no equivalent and are refused.

use regex::bytes::{Regex, RegexBuilder};

/// Compiles a POSIX ERE; the error is a message for the user.
pub(crate) fn compile(pattern: &[u8]) -> Result<Regex, String> {
    let translated = translate(pattern)?;
    RegexBuilder::new(&translated)
        .unicode(false)
        .dot_matches_new_line(true)
        .build()
        .map_err(|e| {
            let text = e.to_string();
            let last = text.lines().rev().find(|l| !l.trim().is_empty());
            format!(
                "invalid regular expression \"{}\": {}",
                String::from_utf8_lossy(pattern),
                last.unwrap_or("cannot compile")
                    .trim_start_matches("error: ")
            )
        })
}

fn push_literal(out: &mut String, b: u8) {
    if b.is_ascii_alphanumeric() || b == b'_' || b == b' ' {
        out.push(b as char);
    } else {
        out.push_str(&format!("\\x{b:02x}"));
    }
}

fn translate(p: &[u8]) -> Result<String, String> {
    let bad = |what: &str| {
        Err(format!(
            "invalid regular expression \"{}\": {what}",
            String::from_utf8_lossy(p)
        ))
    };
    let mut out = String::with_capacity(p.len() * 2);
    let mut depth = 0usize;
    let mut i = 0;
    // True where a repetition has nothing to repeat: at the start, after `(`, `|` or `^`.
    let mut bare = true;
    while i < p.len() {
        let c = p[i];
        if bare && matches!(c, b'*' | b'+' | b'?' | b'{') {
            return bad("invalid preceding regular expression");
        }
        bare = matches!(c, b'(' | b'|' | b'^');
        match c {
            b'\\' => {
                let Some(&n) = p.get(i + 1) else {
                    return bad("trailing backslash");
                };
                match n {
                    b'w' | b'W' | b's' | b'S' | b'b' | b'B' => {
                        out.push('\\');
                        out.push(n as char);
                    }
                    b'<' => out.push_str(r"\b{start}"),
                    b'>' => out.push_str(r"\b{end}"),
                    b'`' => out.push_str(r"\A"),
                    b'\'' => out.push_str(r"\z"),
                    b'1'..=b'9' => return bad("back-references are not supported"),
                    _ => push_literal(&mut out, n),
                }
                i += 2;
            }
            b'[' => {
                let (class, next) = match bracket(p, i) {
                    Some(r) => r,
                    None => return bad("unmatched [ or [^"),
                };
                out.push_str(&class);
                i = next;
            }
            b'{' => match interval(p, i) {
                Some((text, next)) => {
                    out.push_str(&text);
                    i = next;
                }
                None if p[i..].contains(&b'}') => return bad("invalid content of \\{\\}"),
                None => return bad("unmatched \\{"),
            },
            b'(' => {
                depth += 1;
                out.push('(');
                i += 1;
            }
            b')' => {
                if depth == 0 {
                    push_literal(&mut out, c);
                } else {
                    depth -= 1;
                    out.push(')');
                }
                i += 1;
            }
            b'|' | b'*' | b'+' | b'?' | b'.' | b'^' | b'$' => {
                out.push(c as char);
                i += 1;
            }
            _ => {
                push_literal(&mut out, c);
                i += 1;
            }
        }
    }
    if depth > 0 {
        return bad("unmatched ( or \\(");
    }
    Ok(out)
}

/// `{m}`, `{m,}`, `{m,n}` or `{,n}` at `i`; `None` when it is not an interval.
fn interval(p: &[u8], i: usize) -> Option<(String, usize)> {
    let close = i + p[i..].iter().position(|&b| b == b'}')?;
    let body = std::str::from_utf8(&p[i + 1..close]).ok()?;
    let (lo, hi) = match body.split_once(',') {
        Some((lo, hi)) => (lo, Some(hi)),
        None => (body, None),
    };
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    let hi_ok = match hi {
        None => true,
        Some(h) => digits(h),
    };
    let hi_empty = match hi {
        None => true,
        Some(h) => h.is_empty(),
    };
    if !digits(lo) || !hi_ok || (lo.is_empty() && hi_empty) {
        return None;
    }
    let lo = if lo.is_empty() { "0" } else { lo };
    let text = match hi {
        None => format!("{{{lo}}}"),
        Some(hi) => format!("{{{lo},{hi}}}"),
    };
    Some((text, close + 1))
}

/// A bracket expression starting at `[`: the translated class and the index after its `]`.
fn bracket(p: &[u8], i: usize) -> Option<(String, usize)> {
    let mut out = String::from("[");
    let mut j = i + 1;
    if p.get(j) == Some(&b'^') {
        out.push('^');
        j += 1;
    }
    let mut first = true;
    loop {
        let c = *p.get(j)?;
        if c == b']' && !first {
            out.push(']');
            return Some((out, j + 1));
        }
        first = false;
        if c == b'[' && matches!(p.get(j + 1), Some(b':' | b'=' | b'.')) {
            let kind = p[j + 1];
            let end =
                (j + 2..p.len().saturating_sub(1)).find(|&k| p[k] == kind && p[k + 1] == b']')?;
            let name = &p[j + 2..end];
            if kind == b':' {
                out.push_str("[:");
                out.push_str(std::str::from_utf8(name).ok()?);
                out.push_str(":]");
            } else {
                for &b in name {
                    push_class_literal(&mut out, b);
                }
            }
            j = end + 2;
            continue;
        }
        push_class_literal(&mut out, c);
        if p.get(j + 1) == Some(&b'-') && p.get(j + 2).is_some_and(|&b| b != b']') {
            out.push('-');
            push_class_literal(&mut out, p[j + 2]);
            j += 3;
        } else {
            j += 1;
        }
    }
}

fn push_class_literal(out: &mut String, b: u8) {
    if b.is_ascii_alphanumeric() {
        out.push(b as char);
    } else {
        out.push_str(&format!("\\x{b:02x}"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(p: &str, s: &str) -> bool {
        compile(p.as_bytes()).unwrap().is_match(s.as_bytes())
    }

    #[test]
    fn posix_rules() {
        assert!(m(r"^SRR\.1", "SRR.123"));
        assert!(!m(r"^SRR\.1", "SRRx123"));
        assert!(m(r"[\.]", "\\"));
        assert!(m(r"[\.]", "."));
        assert!(!m(r"[\.]", "x"));
        assert!(m(r"\d", "d"));
        assert!(!m(r"\d", "1"));
        assert!(m("a{,2}b", "b"));
        assert!(m("a)", "a)"));
        assert!(m("[]a]", "]"));
        assert!(m("[^]a]", "b"));
        assert!(!m("[^]a]", "]"));
        assert!(m("[[:digit:]]+$", "abc123"));
        assert!(m("[a-c-]", "-"));
        assert!(m(r"\<ab\>", "x ab y"));
        assert!(!m(r"\<ab\>", "xab"));
        assert!(m("a.b", "a\nb"));
        assert!(m("(ab|cd)+", "xcdab"));
        assert!(m("", "anything"));
        assert!(m("\u{e9}", "caf\u{e9}"));
    }

    #[test]
    fn refused() {
        assert!(compile(br"(a)\1").is_err());
        assert!(compile(b"[abc").is_err());
        assert!(compile(b"(ab").is_err());
        assert!(compile(b"ab\\").is_err());
        assert!(compile(b"*a").is_err());
        assert!(compile(b"^*a").is_err());
        assert!(compile(b"a|*").is_err());
        assert!(compile(b"x{").is_err());
        assert!(compile(b"a{x}").is_err());
        assert!(compile(b"a{2,1}").is_err());
        assert!(compile(b"{a").is_err());
        assert!(compile(b"[]").is_err());
    }
}
