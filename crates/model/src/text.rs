//! Text that other users choose (command names and lines, cgroup and unit
//! names, textfile label values), made safe to print: a process may name
//! itself `"\e]2;...\a\e[2J"` to retitle or clear the terminal of whoever
//! lists it, or write the clipboard (OSC 52). Every printer of such text
//! (`ps`, `report`, `top`) goes through [`printable`]; JSON escapes by its
//! own rules.

use std::borrow::Cow;

/// `s` with every control character (C0 including tab and newline, DEL,
/// and C1) written as `\xNN`; unchanged (not copied) when it has none.
pub fn printable(s: &str) -> Cow<'_, str> {
    let bad = |c: char| c.is_control();
    if !s.contains(bad) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if bad(c) {
            out.push_str(&format!("\\x{:02x}", c as u32));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// One CSV field (RFC 4180): [`printable`], then quoted when it holds a
/// comma, a quote or starts or ends with a space.
pub fn csv_field(s: &str) -> Cow<'_, str> {
    let p = printable(s);
    if p.contains([',', '"']) || p.starts_with(' ') || p.ends_with(' ') {
        Cow::Owned(format!("\"{}\"", p.replace('"', "\"\"")))
    } else {
        p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_leave_no_control_byte_and_plain_text_is_not_copied() {
        let hostile = "\u{1b}]2;PWNED\u{7}\u{1b}[2J x\ty\nz\u{7f}\u{9b}31m";
        let p = printable(hostile);
        assert_eq!(p, "\\x1b]2;PWNED\\x07\\x1b[2J x\\x09y\\x0az\\x7f\\x9b31m");
        assert!(p.bytes().all(|b| b >= 0x20 && b != 0x7f));
        assert!(matches!(printable("postgres: writer"), Cow::Borrowed(_)));
        assert_eq!(printable("naïve ✓"), "naïve ✓");
    }

    #[test]
    fn csv_fields_are_quoted_only_when_needed() {
        assert_eq!(csv_field("sleep"), "sleep");
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(csv_field(" lead"), "\" lead\"");
        assert_eq!(csv_field("two\nlines"), "two\\x0alines");
    }
}
