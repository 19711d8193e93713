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
    /// Collisions taking a device's transmit lock (0 since 4.x kernels;
    /// 0 when the row has no such column, as for those below).
    pub cpu_collision: u64,
    /// Times the CPU was woken to process packets steered to it (RPS).
    pub received_rps: u64,
    /// Times the flow limit was reached.
    pub flow_limit_count: u64,
    /// Packets waiting in the CPU's backlog queues (a gauge).
    pub backlog_len: u64,
    /// The CPU's number: the row's own column where the kernel writes one
    /// (13 columns and more), else the row's place (older kernels list
    /// every possible CPU in order).
    pub cpu: u32,
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
        let mut row = SoftnetCpu {
            processed: hex(&mut c, "processed")?,
            dropped: hex(&mut c, "dropped")?,
            time_squeezed: hex(&mut c, "time_squeezed")?,
            cpu: out.len() as u32,
            ..SoftnetCpu::default()
        };
        // The later columns, as many as the kernel writes: 3-7 unused,
        // then cpu_collision, received_rps, flow_limit_count, the backlog
        // and the CPU's number (then the two queues the backlog sums).
        let mut col = 3;
        while !c.at_eol() {
            let v = hex(&mut c, "column")?;
            match col {
                8 => row.cpu_collision = v,
                9 => row.received_rps = v,
                10 => row.flow_limit_count = v,
                11 => row.backlog_len = v,
                12 => {
                    row.cpu = u32::try_from(v)
                        .ok()
                        .filter(|&n| (n as usize) < MAX_CPUS)
                        .ok_or_else(|| {
                            c.err("cpu", ParseErrorKind::Overflow, "a CPU number below 65536")
                        })?
                }
                _ => {}
            }
            col += 1;
        }
        out.push(row);
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
        // The later columns: collisions, RPS, flow limit, backlog, CPU.
        assert_eq!(
            (
                v[1].cpu_collision,
                v[1].received_rps,
                v[1].flow_limit_count,
                v[1].backlog_len,
                v[1].cpu
            ),
            (0, 0, 0, 0, 1)
        );
        // A row numbering its CPU (others offline): that number, not the
        // row's place.
        parse_into(b"1 2 3 0 0 0 0 0 9 a b c 7 5 7\n", &mut v).unwrap();
        assert_eq!(
            v,
            vec![SoftnetCpu {
                processed: 1,
                dropped: 2,
                time_squeezed: 3,
                cpu_collision: 9,
                received_rps: 10,
                flow_limit_count: 11,
                backlog_len: 12,
                cpu: 7,
            }]
        );
        // Old kernels: only the first columns, numbered by place.
        parse_into(b"0000000f 00000001 00000002\n0 0 0\n", &mut v).unwrap();
        assert_eq!(
            v[0],
            SoftnetCpu {
                processed: 15,
                dropped: 1,
                time_squeezed: 2,
                ..SoftnetCpu::default()
            }
        );
        assert_eq!(v[1].cpu, 1);
        let e = parse_into(b"0 0 0 0 0 0 0 0 0 0 0 0 fffffffff\n", &mut v).unwrap_err();
        assert_eq!((e.field, e.kind), ("cpu", ParseErrorKind::Overflow));
        let e = parse_into(b"0000000g 0 0\n", &mut v).unwrap_err();
        assert_eq!((e.field, e.kind), ("processed", ParseErrorKind::Invalid));
        let e = parse_into(b"00000001\n", &mut v).unwrap_err();
        assert_eq!((e.field, e.kind), ("dropped", ParseErrorKind::Missing));
        let e = parse_into(b"11112222333344445 0 0\n", &mut v).unwrap_err();
        assert_eq!(e.kind, ParseErrorKind::Overflow);
    }
}
