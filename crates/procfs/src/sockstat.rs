//! /proc/net/sockstat: `sockets: used 8`, then one line per protocol of
//! `key value` pairs (`TCP: inuse 1 orphan 0 tw 2014 alloc 1 mem 109`).
//! Kept as read, protocol by protocol, so a key a newer kernel adds shows
//! up without a change here. `mem` counts pages.

use serde::Serialize;

use crate::cursor::Cursor;
use crate::error::{ParseError, ParseErrorKind};

/// Protocol lines kept at most, and pairs per line.
const MAX_PROTOCOLS: usize = 64;
const MAX_PAIRS: usize = 64;
/// Longest protocol or key name kept.
const MAX_NAME: usize = 32;

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SockstatLine {
    /// `TCP`, `UDP`, `UDPLITE`, `RAW`, `FRAG`...
    pub protocol: String,
    pub values: Vec<(String, u64)>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Sockstat {
    /// `sockets: used`, when present.
    pub sockets_used: Option<u64>,
    pub lines: Vec<SockstatLine>,
}

fn name<'a>(c: &Cursor<'_>, w: &'a [u8], field: &'static str) -> Result<&'a str, ParseError> {
    if w.len() > MAX_NAME || w.is_empty() {
        return Err(c.err(field, ParseErrorKind::TooLong, "a name of 1 to 32 bytes"));
    }
    std::str::from_utf8(w)
        .ok()
        .filter(|s| s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'))
        .ok_or_else(|| c.err(field, ParseErrorKind::Invalid, "letters, digits and _"))
}

/// Parses into `out`, reusing its strings and vectors.
pub fn parse_into(buf: &[u8], out: &mut Sockstat) -> Result<(), ParseError> {
    let mut c = Cursor::new(buf)?;
    out.sockets_used = None;
    let mut n = 0;
    while !c.at_end() {
        let proto = c.take_until(b':').ok_or_else(|| {
            c.err(
                "protocol",
                ParseErrorKind::Invalid,
                "PROTOCOL: key value ...",
            )
        })?;
        if proto == b"sockets" {
            if !c.eat(b" used") && !c.eat(b"used") {
                return Err(c.err("sockets", ParseErrorKind::Invalid, "sockets: used N"));
            }
            out.sockets_used = Some(c.u64("sockets used")?);
            c.next_line();
            continue;
        }
        if n >= MAX_PROTOCOLS {
            return Err(c.err(
                "protocol",
                ParseErrorKind::TooMany,
                "at most 64 protocol lines",
            ));
        }
        let proto = name(&c, proto, "protocol")?;
        if out.lines.len() <= n {
            out.lines.push(SockstatLine::default());
        }
        let line = &mut out.lines[n];
        line.protocol.clear();
        line.protocol.push_str(proto);
        let mut k = 0;
        loop {
            let key = c.word();
            if key.is_empty() {
                break;
            }
            if k >= MAX_PAIRS {
                return Err(c.err("key", ParseErrorKind::TooMany, "at most 64 pairs per line"));
            }
            let key = name(&c, key, "key")?;
            let value = c.u64("value")?;
            if line.values.len() <= k {
                line.values.push((String::new(), 0));
            }
            let pair = &mut line.values[k];
            pair.0.clear();
            pair.0.push_str(key);
            pair.1 = value;
            k += 1;
        }
        line.values.truncate(k);
        n += 1;
        c.next_line();
    }
    out.lines.truncate(n);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &[u8] = b"sockets: used 8\n\
        TCP: inuse 1 orphan 0 tw 2014 alloc 1 mem 109\n\
        UDP: inuse 0 mem 0\n\
        UDPLITE: inuse 0\n\
        RAW: inuse 0\n\
        FRAG: inuse 0 memory 0\n";

    #[test]
    fn exact_values() {
        let mut s = Sockstat::default();
        parse_into(TEXT, &mut s).unwrap();
        assert_eq!(s.sockets_used, Some(8));
        assert_eq!(s.lines.len(), 5);
        assert_eq!(s.lines[0].protocol, "TCP");
        assert_eq!(
            s.lines[0].values,
            [
                ("inuse", 1),
                ("orphan", 0),
                ("tw", 2014),
                ("alloc", 1),
                ("mem", 109)
            ]
            .map(|(k, v)| (k.to_string(), v))
        );
        assert_eq!(s.lines[4].values[1], ("memory".to_string(), 0));
        // sockstat6 has no sockets line.
        parse_into(b"TCP6: inuse 2\nUDP6: inuse 1\n", &mut s).unwrap();
        assert_eq!((s.sockets_used, s.lines.len()), (None, 2));
    }

    #[test]
    fn bad_lines_are_named() {
        let mut s = Sockstat::default();
        let e = parse_into(b"TCP inuse 1\n", &mut s).unwrap_err();
        assert_eq!(e.field, "protocol");
        let e = parse_into(b"TCP: inuse x\n", &mut s).unwrap_err();
        assert_eq!((e.field, e.kind), ("value", ParseErrorKind::Invalid));
        let e = parse_into(b"TCP: inuse\n", &mut s).unwrap_err();
        assert_eq!((e.field, e.kind), ("value", ParseErrorKind::Missing));
    }
}
