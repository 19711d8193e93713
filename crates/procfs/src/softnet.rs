//! /proc/net/softnet_stat: one line per CPU with packet work, hexadecimal
//! columns: processed, dropped, time_squeezed, then (newer kernels)
//! zeros, cpu_collision, received_rps, flow_limit_count, backlog length
//! and the CPU number.

use serde::Serialize;

use crate::cursor::Cursor;
use crate::error::{ParseError, ParseErrorKind};
use crate::limits::MAX_CPUS;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct SoftnetCpu {
    /// Packets processed by the CPU's backlog and NAPI.
    pub processed: u64,
    /// Packets dropped: the backlog was full.
    pub dropped: u64,
    /// Times net_rx_action ran out of budget or time with work left.
    pub time_squeezed: u64,
}

fn hex(c: &mut Cursor<'_>, field: &'static str) -> Result<u64, ParseError> {
    let w = c.word();
    if w.is_empty() {
        return Err(c.err(field, ParseErrorKind::Missing, "a hexadecimal counter"));
    }
    if w.len() > 16 {
        return Err(c.err(field, ParseErrorKind::Overflow, "at most 16 hex digits"));
    }
    let mut v = 0u64;
    for &b in w {
        let d = (b as char)
            .to_digit(16)
            .ok_or_else(|| c.err(field, ParseErrorKind::Invalid, "a hexadecimal counter"))?;
        v = v << 4 | d as u64;
    }
    Ok(v)
}

/// Rows in file order (node_exporter numbers them from 0 as `cpu`).
pub fn parse_into(buf: &[u8], out: &mut Vec<SoftnetCpu>) -> Result<(), ParseError> {
    let mut c = Cursor::new(buf)?;
    out.clear();
    while !c.at_end() {
        if out.len() >= MAX_CPUS {
            return Err(c.err("row", ParseErrorKind::TooMany, "at most 65536 rows"));
        }
        out.push(SoftnetCpu {
            processed: hex(&mut c, "processed")?,
            dropped: hex(&mut c, "dropped")?,
            time_squeezed: hex(&mut c, "time_squeezed")?,
        });
        c.next_line();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_values() {
        let mut v = crate::parsed(parse_into, b"002caa42 00000000 00000003 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000\n\
              002e13af 0000000a 00000001 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000001 00000000 00000001\n");
        assert_eq!(v.len(), 2);
        assert_eq!(
            (v[0].processed, v[0].dropped, v[0].time_squeezed),
            (0x2caa42, 0, 3)
        );
        assert_eq!(
            (v[1].processed, v[1].dropped, v[1].time_squeezed),
            (0x2e13af, 10, 1)
        );
        // Old kernels: only the first columns.
        parse_into(b"0000000f 00000001 00000002\n", &mut v).unwrap();
        assert_eq!(
            v,
            vec![SoftnetCpu {
                processed: 15,
                dropped: 1,
                time_squeezed: 2
            }]
        );
        let e = parse_into(b"0000000g 0 0\n", &mut v).unwrap_err();
        assert_eq!((e.field, e.kind), ("processed", ParseErrorKind::Invalid));
        let e = parse_into(b"00000001\n", &mut v).unwrap_err();
        assert_eq!((e.field, e.kind), ("dropped", ParseErrorKind::Missing));
        let e = parse_into(b"11112222333344445 0 0\n", &mut v).unwrap_err();
        assert_eq!(e.kind, ParseErrorKind::Overflow);
    }
}
