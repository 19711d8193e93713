//! /proc/pressure/{cpu,memory,io,irq}: pressure stall information (since
//! Linux 4.20, with CONFIG_PSI; `irq` since 6.1 with CONFIG_IRQ_TIME_ACCOUNTING).
//!
//! ```text
//! some avg10=2.45 avg60=1.50 avg300=0.39 total=1419654
//! full avg10=0.00 avg60=0.00 avg300=0.00 total=0
//! ```

use serde::Serialize;

use crate::cursor::Cursor;
use crate::error::{ParseError, ParseErrorKind};

/// The four pressure files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Resource {
    Cpu,
    Memory,
    Io,
    Irq,
}

impl Resource {
    pub const ALL: [Resource; 4] = [Resource::Cpu, Resource::Memory, Resource::Io, Resource::Irq];

    pub fn name(self) -> &'static str {
        match self {
            Resource::Cpu => "cpu",
            Resource::Memory => "memory",
            Resource::Io => "io",
            Resource::Irq => "irq",
        }
    }
}

/// One `some` or `full` line.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct PressureLine {
    /// Share of wall time stalled, percent, averaged over 10, 60 and 300 s.
    pub avg10_pct: f64,
    pub avg60_pct: f64,
    pub avg300_pct: f64,
    /// Total stall time since boot, microseconds.
    pub total_usec: u64,
}

/// One pressure file. `cpu` has `full` since Linux 5.13; `irq` has only `full`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Pressure {
    pub some: Option<PressureLine>,
    pub full: Option<PressureLine>,
}

pub fn parse(buf: &[u8]) -> Result<Pressure, ParseError> {
    let mut c = Cursor::new(buf)?;
    let mut p = Pressure::default();
    while !c.at_end() {
        let slot = match c.word() {
            b"some" => &mut p.some,
            b"full" => &mut p.full,
            _ => return Err(c.err("kind", ParseErrorKind::Invalid, "some or full")),
        };
        *slot = Some(PressureLine {
            avg10_pct: c.keyed_decimal("avg10")?,
            avg60_pct: c.keyed_decimal("avg60")?,
            avg300_pct: c.keyed_decimal("avg300")?,
            total_usec: c.keyed_u64("total")?,
        });
        c.next_line();
    }
    if p.some.is_none() && p.full.is_none() {
        return Err(c.err("some", ParseErrorKind::Missing, "a some or full line"));
    }
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_values() {
        let p = parse(b"some avg10=2.45 avg60=1.50 avg300=0.39 total=1419654\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n").unwrap();
        let s = p.some.unwrap();
        assert_eq!(
            (s.avg10_pct, s.avg60_pct, s.avg300_pct, s.total_usec),
            (2.45, 1.5, 0.39, 1419654)
        );
        assert_eq!(p.full.unwrap().total_usec, 0);
    }

    #[test]
    fn cpu_before_5_13_has_no_full() {
        let p = parse(b"some avg10=0.00 avg60=0.00 avg300=0.00 total=5\n").unwrap();
        assert!(p.full.is_none());
    }

    #[test]
    fn irq_has_only_full() {
        let p = parse(b"full avg10=0.00 avg60=0.00 avg300=0.00 total=7\n").unwrap();
        assert_eq!((p.some, p.full.unwrap().total_usec), (None, 7));
    }

    #[test]
    fn wrong_key() {
        let e = parse(b"some avg10=0.00 avg61=0.00 avg300=0.00 total=5\n").unwrap_err();
        assert_eq!((e.field, e.kind), ("avg60", ParseErrorKind::Invalid));
        let e = parse(b"some avg10=0.00 avg60=0.00 avg300=0.00\n").unwrap_err();
        assert_eq!((e.field, e.kind), ("total", ParseErrorKind::Missing));
    }
}
