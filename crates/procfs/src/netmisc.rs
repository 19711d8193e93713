//! Small network tables node_exporter has a collector each for:
//! /proc/net/arp (entries per device), /proc/net/udp and udp6 (queued
//! bytes), and connection tracking (/proc/sys/net/netfilter/
//! nf_conntrack_count and _max, /proc/net/stat/nf_conntrack).

use serde::Serialize;

use crate::error::{ParseError, ParseErrorKind};
use crate::limits::MAX_ROWS;
use crate::records::err;

fn text(line: &[u8], n: usize) -> Result<&str, ParseError> {
    std::str::from_utf8(line).map_err(|_| err(n, "line", ParseErrorKind::Invalid, "UTF-8 text"))
}

/// ARP entries per device, in order of first appearance.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Arp {
    pub devices: Vec<(String, u64)>,
}

/// Parses /proc/net/arp (a header, then `IP HWtype Flags HWaddress Mask
/// Device` rows).
pub fn parse_arp(buf: &[u8], out: &mut Arp) -> Result<(), ParseError> {
    let mut lines = buf.split(|&b| b == b'\n').enumerate();
    let header = lines.next().map(|(_, l)| l).unwrap_or_default();
    if !header.starts_with(b"IP address") {
        out.devices.clear();
        return Err(err(
            1,
            "header",
            ParseErrorKind::Invalid,
            "`IP address  HW type ...`",
        ));
    }
    // Entries are reused in place: a warm parse allocates nothing.
    let mut used = 0;
    for (i, line) in lines {
        let n = i + 1;
        if line.is_empty() {
            continue;
        }
        let device = text(line, n)?
            .split_ascii_whitespace()
            .nth(5)
            .ok_or_else(|| err(n, "Device", ParseErrorKind::Missing, "six columns"))?;
        if let Some((_, c)) = out.devices[..used].iter_mut().find(|(d, _)| d == device) {
            *c += 1;
            continue;
        }
        if used >= MAX_ROWS {
            return Err(err(
                n,
                "Device",
                ParseErrorKind::TooMany,
                "at most 2^20 devices",
            ));
        }
        match out.devices.get_mut(used) {
            Some((d, c)) => {
                d.clear();
                d.push_str(device);
                *c = 1;
            }
            None => out.devices.push((device.to_string(), 1)),
        }
        used += 1;
    }
    out.devices.truncate(used);
    Ok(())
}

/// Bytes queued in UDP sockets, summed per family.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct UdpQueues {
    pub v4_tx: u64,
    pub v4_rx: u64,
    /// `None` without /proc/net/udp6.
    pub v6: Option<(u64, u64)>,
}

/// The files, below the proc root, read one after another.
pub const UDP_FILES: [&str; 2] = ["net/udp", "net/udp6"];

/// Parses /proc/net/udp then /proc/net/udp6 as read one after another: each
/// begins with its header line; a socket row has `tx_queue:rx_queue` in hex
/// as its fifth column.
pub fn parse_udp_queues(buf: &[u8]) -> Result<UdpQueues, ParseError> {
    let mut q = UdpQueues::default();
    let mut family = 0;
    for (i, line) in buf.split(|&b| b == b'\n').enumerate() {
        let n = i + 1;
        let t = text(line, n)?;
        let mut w = t.split_ascii_whitespace();
        let Some(first) = w.next() else { continue };
        if first == "sl" {
            family += 1;
            if family == 2 {
                q.v6 = Some((0, 0));
            } else if family > 2 {
                return Err(err(
                    n,
                    "header",
                    ParseErrorKind::TooMany,
                    "two tables (udp, udp6)",
                ));
            }
            continue;
        }
        if family == 0 {
            return Err(err(
                n,
                "header",
                ParseErrorKind::Missing,
                "`sl  local_address ...`",
            ));
        }
        let queues = w.nth(3).ok_or_else(|| {
            err(
                n,
                "tx_queue:rx_queue",
                ParseErrorKind::Missing,
                "five columns",
            )
        })?;
        let (tx, rx) = queues
            .split_once(':')
            .and_then(|(t, r)| {
                Some((
                    u64::from_str_radix(t, 16).ok()?,
                    u64::from_str_radix(r, 16).ok()?,
                ))
            })
            .ok_or_else(|| {
                err(
                    n,
                    "tx_queue:rx_queue",
                    ParseErrorKind::Invalid,
                    "hex `tx:rx`",
                )
            })?;
        let (st, sr) = match (family, q.v6.as_mut()) {
            (2, Some((t, r))) => (t, r),
            _ => (&mut q.v4_tx, &mut q.v4_rx),
        };
        *st = st.saturating_add(tx);
        *sr = sr.saturating_add(rx);
    }
    if family == 0 {
        return Err(err(
            1,
            "header",
            ParseErrorKind::Missing,
            "`sl  local_address ...`",
        ));
    }
    Ok(q)
}

/// Connection tracking: table size and the per-CPU statistics summed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Conntrack {
    pub entries: u64,
    pub limit: u64,
    /// `None` without /proc/net/stat/nf_conntrack.
    pub stats: Option<ConntrackStats>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct ConntrackStats {
    pub found: u64,
    pub invalid: u64,
    pub ignore: u64,
    pub insert: u64,
    pub insert_failed: u64,
    pub drop: u64,
    pub early_drop: u64,
    pub search_restart: u64,
}

/// The files, below the proc root, read one after another (the first is
/// required: without it conntrack is not loaded).
pub const CONNTRACK_FILES: [&str; 3] = [
    "sys/net/netfilter/nf_conntrack_count",
    "sys/net/netfilter/nf_conntrack_max",
    "net/stat/nf_conntrack",
];

/// Parses the count, the maximum and the statistics table (a header naming
/// the columns, then one row of hex numbers per CPU), read one after
/// another.
pub fn parse_conntrack(buf: &[u8]) -> Result<Conntrack, ParseError> {
    let mut lines = buf.split(|&b| b == b'\n').enumerate();
    let mut num = |field: &'static str| -> Result<u64, ParseError> {
        let (i, l) = lines
            .next()
            .ok_or_else(|| err(1, field, ParseErrorKind::Missing, "a number"))?;
        text(l, i + 1)?
            .trim()
            .parse()
            .map_err(|_| err(i + 1, field, ParseErrorKind::Invalid, "a whole number"))
    };
    let entries = num("nf_conntrack_count")?;
    let limit = num("nf_conntrack_max")?;
    let mut c = Conntrack {
        entries,
        limit,
        stats: None,
    };
    let Some((hi, header)) = lines.next().filter(|(_, l)| !l.is_empty()) else {
        return Ok(c);
    };
    // Which statistic each column holds (by the header's names; columns
    // past the first 64 are not read), without allocating.
    const FIELDS: [&str; 8] = [
        "found",
        "invalid",
        "ignore",
        "insert",
        "insert_failed",
        "drop",
        "early_drop",
        "search_restart",
    ];
    let mut slot_of = [None::<usize>; 64];
    let mut columns = 0;
    for (k, name) in text(header, hi + 1)?.split_ascii_whitespace().enumerate() {
        if k == 0 && name != "entries" {
            return Err(err(
                hi + 1,
                "header",
                ParseErrorKind::Invalid,
                "`entries ...` column names",
            ));
        }
        if k < slot_of.len() {
            slot_of[k] = FIELDS.iter().position(|f| *f == name);
        }
        columns = k + 1;
    }
    let mut sums = [0u64; 8];
    for (i, line) in lines {
        let n = i + 1;
        if line.is_empty() {
            continue;
        }
        for (k, v) in text(line, n)?.split_ascii_whitespace().enumerate() {
            if k >= columns {
                return Err(err(
                    n,
                    "value",
                    ParseErrorKind::TooMany,
                    "one per header column",
                ));
            }
            let v = u64::from_str_radix(v, 16)
                .map_err(|_| err(n, "value", ParseErrorKind::Invalid, "a hex number"))?;
            if let Some(Some(f)) = slot_of.get(k) {
                sums[*f] = sums[*f].saturating_add(v);
            }
        }
    }
    // In FIELDS' order.
    c.stats = Some(ConntrackStats {
        found: sums[0],
        invalid: sums[1],
        ignore: sums[2],
        insert: sums[3],
        insert_failed: sums[4],
        drop: sums[5],
        early_drop: sums[6],
        search_restart: sums[7],
    });
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arp_counts_per_device() {
        let mut a = Arp::default();
        parse_arp(
            b"IP address       HW type     Flags       HW address            Mask     Device\n\
192.0.2.1        0x1         0x2         02:fc:00:00:00:05     *        eth0\n\
192.0.2.2        0x1         0x2         02:fc:00:00:00:06     *        eth0\n\
10.0.0.1         0x1         0x2         02:fc:00:00:00:07     *        br0\n",
            &mut a,
        )
        .unwrap();
        assert_eq!(a.devices, [("eth0".into(), 2), ("br0".into(), 1)]);
        let e = parse_arp(b"IP address\n1.2.3.4 0x1\n", &mut a).unwrap_err();
        assert_eq!((e.line, e.field), (2, "Device"));
        assert!(parse_arp(b"garbage\n", &mut a).is_err());
    }

    #[test]
    fn udp_queues_sum_per_family() {
        let v4 = "   sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode ref pointer drops\n\
  1: 00000000:0044 00000000:0000 07 00000010:00000200 00:00000000 00000000     0        0 1 2 0 0\n\
  2: 00000000:0045 00000000:0000 07 00000001:00000001 00:00000000 00000000     0        0 1 2 0 0\n";
        let q = parse_udp_queues(format!("{v4}\n").as_bytes()).unwrap();
        assert_eq!((q.v4_tx, q.v4_rx, q.v6), (17, 513, None));
        let v6 = "  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode ref pointer drops\n\
  3: 00000000000000000000000000000000:0222 00000000000000000000000000000000:0000 07 00000000:00000100 00:00000000 00000000     0        0 1 2 0 0\n";
        let q = parse_udp_queues(format!("{v4}{v6}").as_bytes()).unwrap();
        assert_eq!((q.v4_tx, q.v4_rx, q.v6), (17, 513, Some((0, 256))));
        let e = parse_udp_queues(b"  sl x\n 1: a b 07 zz:1\n").unwrap_err();
        assert_eq!((e.line, e.field), (2, "tx_queue:rx_queue"));
    }

    #[test]
    fn conntrack_sums_cpus() {
        let c = parse_conntrack(
            b"12\n262144\nentries  clashres found new invalid ignore delete chainlength insert insert_failed drop early_drop icmp_error  expect_new expect_create expect_delete search_restart\n\
0000000c  00000000 00000002 00000000 00000001 0000000a 00000000 00000000 00000003 00000000 00000000 00000000 00000000  00000000 00000000 00000000 00000004\n\
0000000c  00000000 00000001 00000000 00000001 00000001 00000000 00000000 00000000 00000001 00000002 00000003 00000000  00000000 00000000 00000000 00000000\n",
        )
        .unwrap();
        assert_eq!((c.entries, c.limit), (12, 262144));
        let s = c.stats.unwrap();
        assert_eq!((s.found, s.invalid, s.ignore, s.insert), (3, 2, 11, 3));
        assert_eq!(
            (s.insert_failed, s.drop, s.early_drop, s.search_restart),
            (1, 2, 3, 4)
        );
        let c = parse_conntrack(b"1\n2\n\n").unwrap();
        assert_eq!((c.entries, c.limit, c.stats), (1, 2, None));
        let e = parse_conntrack(b"x\n").unwrap_err();
        assert_eq!(e.field, "nf_conntrack_count");
    }
}
