//! /proc/net/dev: per-interface receive and transmit counters of the reader's
//! network namespace. Two header lines, then
//! `iface: 8 receive counters 8 transmit counters`.

use serde::Serialize;

use crate::cursor::Cursor;
use crate::error::{ParseError, ParseErrorKind};
use crate::limits::MAX_ROWS;
use crate::name::Name;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct NetDev {
    pub name: Name,
    pub rx_bytes: u64,
    pub rx_packets: u64,
    pub rx_errs: u64,
    pub rx_drop: u64,
    pub rx_fifo: u64,
    pub rx_frame: u64,
    pub rx_compressed: u64,
    pub rx_multicast: u64,
    pub tx_bytes: u64,
    pub tx_packets: u64,
    pub tx_errs: u64,
    pub tx_drop: u64,
    pub tx_fifo: u64,
    pub tx_colls: u64,
    pub tx_carrier: u64,
    pub tx_compressed: u64,
}

pub fn parse(buf: &[u8]) -> Result<Vec<NetDev>, ParseError> {
    let mut v = Vec::new();
    parse_into(buf, &mut v)?;
    Ok(v)
}

pub fn parse_into(buf: &[u8], out: &mut Vec<NetDev>) -> Result<(), ParseError> {
    let mut c = Cursor::new(buf)?;
    out.clear();
    for _ in 0..2 {
        if c.at_end() {
            return Err(c.err("header", ParseErrorKind::Missing, "two header lines"));
        }
        c.next_line();
    }
    while !c.at_end() {
        if out.len() >= MAX_ROWS {
            return Err(c.err(
                "interface",
                ParseErrorKind::TooMany,
                "at most 2^20 interfaces",
            ));
        }
        // Old kernels print `eth0:123` with no blank when the first count is wide.
        let name = c.take_until(b':').and_then(Name::new).ok_or_else(|| {
            c.err(
                "interface",
                ParseErrorKind::Invalid,
                "NAME: followed by 16 counters",
            )
        })?;
        out.push(NetDev {
            name,
            rx_bytes: c.u64("rx_bytes")?,
            rx_packets: c.u64("rx_packets")?,
            rx_errs: c.u64("rx_errs")?,
            rx_drop: c.u64("rx_drop")?,
            rx_fifo: c.u64("rx_fifo")?,
            rx_frame: c.u64("rx_frame")?,
            rx_compressed: c.u64("rx_compressed")?,
            rx_multicast: c.u64("rx_multicast")?,
            tx_bytes: c.u64("tx_bytes")?,
            tx_packets: c.u64("tx_packets")?,
            tx_errs: c.u64("tx_errs")?,
            tx_drop: c.u64("tx_drop")?,
            tx_fifo: c.u64("tx_fifo")?,
            tx_colls: c.u64("tx_colls")?,
            tx_carrier: c.u64("tx_carrier")?,
            tx_compressed: c.u64("tx_compressed")?,
        });
        c.next_line();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEAD: &str = "Inter-|   Receive                                                |  Transmit\n face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed\n";

    #[test]
    fn exact_values() {
        let s = format!(
            "{HEAD}    lo:    3193      29    0    0    0     0          0         0     3193      29    0    0    0     0       0          0\n  eth0: 9022969     376    0    1    0     0          0         0    23741     308    0    0    0     0       0          0\n"
        );
        let v = parse(s.as_bytes()).unwrap();
        assert_eq!(v.len(), 2);
        assert_eq!(
            (
                v[1].name.as_str(),
                v[1].rx_bytes,
                v[1].rx_drop,
                v[1].tx_packets
            ),
            ("eth0", 9022969, 1, 308)
        );
    }

    #[test]
    fn name_glued_to_first_counter() {
        let s = format!("{HEAD}eth0:12345 1 0 0 0 0 0 0 9 2 0 0 0 0 0 0\n");
        let v = parse(s.as_bytes()).unwrap();
        assert_eq!(
            (v[0].name.as_str(), v[0].rx_bytes, v[0].tx_bytes),
            ("eth0", 12345, 9)
        );
    }

    #[test]
    fn missing_counter() {
        let s = format!("{HEAD}eth0: 1 2 3\n");
        let e = parse(s.as_bytes()).unwrap_err();
        assert_eq!(
            (e.line, e.field, e.kind),
            (3, "rx_drop", ParseErrorKind::Missing)
        );
    }
}
