//! Protocol counters: /proc/net/netstat and /proc/net/snmp (pairs of lines,
//! `Proto: Name1 Name2...` then `Proto: v1 v2...`) and /proc/net/snmp6
//! (`Ip6InReceives   2`, one per line), read one after another. Every
//! counter is kept, as `Proto_Name` (`Tcp_ActiveOpens`, `Ip6_InReceives`,
//! node_exporter's naming); which are exported is the exporter's choice.

use serde::Serialize;

use crate::error::{ParseError, ParseErrorKind};
use crate::records::err;

/// The files, below the proc root, in the order they are read.
pub const FILES: [&str; 3] = ["net/netstat", "net/snmp", "net/snmp6"];

/// Counters kept at most, and the longest name.
const MAX_VALUES: usize = 8192;
const MAX_NAME: usize = 96;

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Netstat {
    /// `(Proto_Name, value)` in file order; some are signed (`Tcp_MaxConn`
    /// is -1).
    pub values: Vec<(String, i64)>,
}

impl Netstat {
    pub fn get(&self, key: &str) -> Option<i64> {
        self.values.iter().find(|(k, _)| k == key).map(|(_, v)| *v)
    }
}

fn name_ok(b: &[u8]) -> bool {
    !b.is_empty()
        && b.len() <= MAX_NAME
        && b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_')
}

fn number(w: &[u8], line: usize) -> Result<i64, ParseError> {
    std::str::from_utf8(w)
        .ok()
        .and_then(|s| s.parse::<i64>().ok())
        .ok_or_else(|| err(line, "value", ParseErrorKind::Invalid, "a whole number"))
}

/// Parses into `out`, reusing its strings.
pub fn parse_into(buf: &[u8], out: &mut Netstat) -> Result<(), ParseError> {
    let mut n = 0;
    let mut push = |out: &mut Netstat, proto: &[u8], name: &[u8], v: i64, line: usize| {
        if n >= MAX_VALUES {
            return Err(err(
                line,
                "name",
                ParseErrorKind::TooMany,
                "at most 8192 counters",
            ));
        }
        if out.values.len() <= n {
            out.values.push((String::new(), 0));
        }
        let (k, val) = &mut out.values[n];
        k.clear();
        // Both halves were checked to be ASCII names.
        k.push_str(std::str::from_utf8(proto).unwrap_or_default());
        k.push('_');
        k.push_str(std::str::from_utf8(name).unwrap_or_default());
        *val = v;
        n += 1;
        Ok(())
    };
    let mut it = buf.split(|&b| b == b'\n').enumerate().peekable();
    while let Some((i, line)) = it.next() {
        let lineno = i + 1;
        let mut words = line
            .split(|&b| b == b' ' || b == b'\t')
            .filter(|w| !w.is_empty());
        let Some(first) = words.next() else { continue };
        if let Some(proto) = first.strip_suffix(b":") {
            // A header line; the next line holds its values.
            if !name_ok(proto) {
                return Err(err(
                    lineno,
                    "protocol",
                    ParseErrorKind::Invalid,
                    "Proto: names",
                ));
            }
            let Some((j, vline)) = it.next().filter(|(_, l)| !l.is_empty()) else {
                return Err(err(
                    lineno,
                    "values",
                    ParseErrorKind::Missing,
                    "a line of values after each header",
                ));
            };
            let mut values = vline
                .split(|&b| b == b' ' || b == b'\t')
                .filter(|w| !w.is_empty());
            if values.next() != Some(first) {
                return Err(err(
                    j + 1,
                    "values",
                    ParseErrorKind::Invalid,
                    "the header's protocol again",
                ));
            }
            for name in words {
                if !name_ok(name) {
                    return Err(err(
                        lineno,
                        "name",
                        ParseErrorKind::Invalid,
                        "letters, digits and _",
                    ));
                }
                let w = values.next().ok_or_else(|| {
                    err(
                        j + 1,
                        "value",
                        ParseErrorKind::Missing,
                        "one value per name",
                    )
                })?;
                push(out, proto, name, number(w, j + 1)?, j + 1)?;
            }
        } else {
            // snmp6: `Ip6InReceives 2`: the protocol ends at its first '6'.
            let six = first.iter().position(|&b| b == b'6');
            let (Some(six), true) = (six, name_ok(first)) else {
                return Err(err(
                    lineno,
                    "name",
                    ParseErrorKind::Invalid,
                    "Proto6Name value",
                ));
            };
            let w = words
                .next()
                .ok_or_else(|| err(lineno, "value", ParseErrorKind::Missing, "Proto6Name value"))?;
            let v = number(w, lineno)?;
            push(out, &first[..=six], &first[six + 1..], v, lineno)?;
        }
    }
    out.values.truncate(n);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_values() {
        let mut s = Netstat::default();
        parse_into(
            b"TcpExt: SyncookiesSent ListenDrops\nTcpExt: 0 7\n\
              Tcp: RtoAlgorithm MaxConn ActiveOpens\nTcp: 1 -1 42\n\
              Ip6InReceives                   \t2\nUdp6InDatagrams 5\n",
            &mut s,
        )
        .unwrap();
        assert_eq!(s.get("TcpExt_ListenDrops"), Some(7));
        assert_eq!(s.get("Tcp_MaxConn"), Some(-1));
        assert_eq!(s.get("Tcp_ActiveOpens"), Some(42));
        assert_eq!(s.get("Ip6_InReceives"), Some(2));
        assert_eq!(s.get("Udp6_InDatagrams"), Some(5));
        assert_eq!(s.values.len(), 7);
        // Missing files read as empty lines.
        parse_into(b"\n\nIp6InReceives 3\n", &mut s).unwrap();
        assert_eq!(s.values, vec![("Ip6_InReceives".to_string(), 3)]);
    }

    #[test]
    fn bad_input_is_named() {
        let mut s = Netstat::default();
        let e = parse_into(b"Tcp: A B\nTcp: 1\n", &mut s).unwrap_err();
        assert_eq!(
            (e.line, e.field, e.kind),
            (2, "value", ParseErrorKind::Missing)
        );
        let e = parse_into(b"Tcp: A\n", &mut s).unwrap_err();
        assert_eq!((e.field, e.kind), ("values", ParseErrorKind::Missing));
        let e = parse_into(b"Tcp: A\nUdp: 1\n", &mut s).unwrap_err();
        assert_eq!(e.field, "values");
        let e = parse_into(b"Tcp: A\nTcp: x\n", &mut s).unwrap_err();
        assert_eq!((e.field, e.kind), ("value", ParseErrorKind::Invalid));
        let e = parse_into(b"NoSix 3\n", &mut s).unwrap_err();
        assert_eq!(e.field, "name");
    }
}
