//! The operating system's identity from os-release(5): `/etc/os-release`,
//! else `/usr/lib/os-release`, below the root-filesystem prefix
//! (node_exporter's os collector).
//!
//! `KEY=value` lines; a value may be in double or single quotes, with
//! `\"`, `\\`, `` \` `` and `\$` escapes inside double quotes. Comments and
//! blank lines are skipped.

use serde::Serialize;

use crate::error::{ParseError, ParseErrorKind};
use crate::records::err;

/// The files, below the root-filesystem prefix, in order of preference.
pub const FILES: [&str; 2] = ["etc/os-release", "usr/lib/os-release"];

const MAX_KEYS: usize = 1024;
const MAX_LINE: usize = 4096;

/// The keys node_exporter labels `node_os_info` with, and the rest.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct OsRelease {
    /// `(KEY, value)` in file order.
    pub values: Vec<(String, String)>,
}

impl OsRelease {
    /// The value of `key` (`ID`, `VERSION_ID`), empty when absent.
    pub fn get(&self, key: &str) -> &str {
        self.values
            .iter()
            .find(|(k, _)| k == key)
            .map_or("", |(_, v)| v.as_str())
    }

    /// `VERSION_ID`'s leading `major[.minor]` as a number (`12`, `22.04`);
    /// `None` when it does not start with digits.
    pub fn version(&self) -> Option<f64> {
        let v = self.get("VERSION_ID");
        let major = v.bytes().take_while(u8::is_ascii_digit).count();
        if major == 0 {
            return None;
        }
        let rest = &v[major..];
        let minor = rest
            .strip_prefix('.')
            .map_or(0, |r| r.bytes().take_while(u8::is_ascii_digit).count());
        let end = if minor > 0 { major + 1 + minor } else { major };
        v[..end].parse().ok()
    }
}

fn unquote(v: &str, n: usize) -> Result<String, ParseError> {
    let unterminated = || err(n, "value", ParseErrorKind::Invalid, "a closing quote");
    if let Some(inner) = v.strip_prefix('\'') {
        return Ok(inner
            .strip_suffix('\'')
            .ok_or_else(unterminated)?
            .to_string());
    }
    let Some(inner) = v.strip_prefix('"') else {
        return Ok(v.to_string());
    };
    let inner = inner.strip_suffix('"').ok_or_else(unterminated)?;
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c == '\\'
            && let Some(e) = chars.clone().next()
            && matches!(e, '"' | '\\' | '`' | '$')
        {
            out.push(e);
            chars.next();
            continue;
        }
        out.push(c);
    }
    Ok(out)
}

/// Parses os-release text into `out`.
pub fn parse_into(buf: &[u8], out: &mut OsRelease) -> Result<(), ParseError> {
    out.values.clear();
    for (i, line) in buf.split(|&b| b == b'\n').enumerate() {
        let n = i + 1;
        if line.len() > MAX_LINE {
            return Err(err(
                n,
                "value",
                ParseErrorKind::TooLong,
                "at most 4096 bytes a line",
            ));
        }
        let text = std::str::from_utf8(line)
            .map_err(|_| err(n, "value", ParseErrorKind::Invalid, "UTF-8 text"))?
            .trim();
        if text.is_empty() || text.starts_with('#') {
            continue;
        }
        let (k, v) = text
            .split_once('=')
            .ok_or_else(|| err(n, "key", ParseErrorKind::Invalid, "`KEY=value`"))?;
        if k.is_empty() || !k.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_') {
            return Err(err(
                n,
                "key",
                ParseErrorKind::Invalid,
                "letters, digits and `_`",
            ));
        }
        if out.values.len() >= MAX_KEYS {
            return Err(err(n, "key", ParseErrorKind::TooMany, "at most 1024 keys"));
        }
        out.values.push((k.to_string(), unquote(v, n)?));
    }
    if out.values.is_empty() {
        return Err(err(
            1,
            "key",
            ParseErrorKind::Missing,
            "at least one `KEY=value`",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_values() {
        let mut o = OsRelease::default();
        parse_into(
            b"PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nNAME=\"Debian GNU/Linux\"\nVERSION_ID=\"12\"\nVERSION_CODENAME=bookworm\n# c\n\nID=debian\nX='a b'\nY=\"q\\\"x\\$\"\n",
            &mut o,
        )
        .unwrap();
        assert_eq!(o.get("PRETTY_NAME"), "Debian GNU/Linux 12 (bookworm)");
        assert_eq!(o.get("VERSION_CODENAME"), "bookworm");
        assert_eq!(o.get("ID"), "debian");
        assert_eq!(o.get("X"), "a b");
        assert_eq!(o.get("Y"), "q\"x$");
        assert_eq!(o.get("ID_LIKE"), "");
        assert_eq!(o.version(), Some(12.0));
    }

    #[test]
    fn versions_and_errors() {
        let mut o = OsRelease::default();
        for (v, want) in [
            ("22.04", Some(22.04)),
            ("8.6.2", Some(8.6)),
            ("3.18.4", Some(3.18)),
            ("rolling", None),
            ("7", Some(7.0)),
        ] {
            parse_into(format!("VERSION_ID={v}\n").as_bytes(), &mut o).unwrap();
            assert_eq!(o.version(), want, "{v}");
        }
        let e = parse_into(b"ID=x\nnot a pair\n", &mut o).unwrap_err();
        assert_eq!((e.line, e.field), (2, "key"));
        let e = parse_into(b"NAME=\"open\n", &mut o).unwrap_err();
        assert_eq!((e.line, e.field), (1, "value"));
        assert!(parse_into(b"\n# only\n", &mut o).is_err());
    }
}
