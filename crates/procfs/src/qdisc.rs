//! The network devices' root queueing disciplines and their counters, as
//! the gatherer writes what the kernel's netlink dump of them gives
//! (`gather/qdisc.rs`), a line each:
//!
//! ```text
//! eth0 pfifo_fast 429013 4556 0 0 0 0 0
//! ```
//!
//! the device, the qdisc's kind, then bytes, packets, drops, requeues,
//! overlimits, queue length (packets) and backlog (bytes). Only root
//! qdiscs are written (node_exporter serves those alone).

use serde::Serialize;

use crate::error::{ParseError, ParseErrorKind};
use crate::records::{self, err, set, slot};

/// One root qdisc.
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize)]
pub struct Qdisc {
    pub device: String,
    pub kind: String,
    pub bytes: u64,
    pub packets: u64,
    pub drops: u64,
    pub requeues: u64,
    pub overlimits: u64,
    pub qlen: u64,
    pub backlog: u64,
}

const FIELDS: [&str; 7] = [
    "bytes",
    "packets",
    "drops",
    "requeues",
    "overlimits",
    "queue length",
    "backlog",
];

/// Parses the gathered text into `out`, reusing its rows.
pub fn parse_into(buf: &[u8], out: &mut Vec<Qdisc>) -> Result<(), ParseError> {
    let mut rows = 0;
    for l in records::lines(buf) {
        let (n, text) = l?;
        if rows >= crate::limits::MAX_ROWS {
            return Err(err(
                n,
                "qdisc",
                ParseErrorKind::TooMany,
                "at most 2^20 qdiscs",
            ));
        }
        let mut w = text.split(' ');
        let q = slot(out, rows);
        match (w.next(), w.next()) {
            (Some(d), Some(k)) if !d.is_empty() && !k.is_empty() => {
                set(&mut q.device, d);
                set(&mut q.kind, k);
            }
            _ => {
                return Err(err(
                    n,
                    "kind",
                    ParseErrorKind::Missing,
                    "`<device> <kind>` and seven counters",
                ));
            }
        }
        let mut v = [0u64; 7];
        for (slot, field) in v.iter_mut().zip(FIELDS) {
            let word = w
                .next()
                .ok_or_else(|| err(n, field, ParseErrorKind::Missing, "a whole number"))?;
            *slot = word
                .parse()
                .map_err(|_| err(n, field, ParseErrorKind::Invalid, "a whole number"))?;
        }
        [
            q.bytes,
            q.packets,
            q.drops,
            q.requeues,
            q.overlimits,
            q.qlen,
            q.backlog,
        ] = v;
        rows += 1;
    }
    out.truncate(rows);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_qdiscs() {
        let mut v = Vec::new();
        parse_into(
            b"eth0 pfifo_fast 429013 4556 0 0 0 0 0\nlo noqueue 0 0 0 0 0 0 0\n",
            &mut v,
        )
        .unwrap();
        assert_eq!(v.len(), 2);
        assert_eq!(
            (
                v[0].device.as_str(),
                v[0].kind.as_str(),
                v[0].bytes,
                v[0].packets
            ),
            ("eth0", "pfifo_fast", 429013, 4556)
        );
        let e = parse_into(b"eth0 fq 1 2 3\n", &mut v).unwrap_err();
        assert!(e.to_string().contains("requeues"), "{e}");
        parse_into(b"", &mut v).unwrap();
        assert!(v.is_empty());
    }
}
