//! IP Virtual Server: `/proc/net/ip_vs_stats` (totals, in hexadecimal)
//! then `/proc/net/ip_vs` (each virtual service and its real servers), read
//! one after the other as one source.
//!
//! ```text
//!    Total Incoming Outgoing         Incoming         Outgoing
//!    Conns  Packets  Packets            Bytes            Bytes
//!  16AA370 E33656E5        0     51D8C8883AB3        0
//! ...
//! IP Virtual Server version 1.2.1 (size=4096)
//! Prot LocalAddress:Port Scheduler Flags
//!   -> RemoteAddress:Port Forward Weight ActiveConn InActConn
//! TCP  C0A80016:0CEA wlc
//!   -> C0A85216:0CEA      Tunnel  100    248        2
//! FWM  10001000 wlc
//!   -> C0A8321A:0CEA      Route   0      0          1
//! ```

use std::net::{Ipv4Addr, Ipv6Addr};

use serde::Serialize;

use crate::error::{ParseError, ParseErrorKind};
use crate::records::{self, err};

pub const FILES: [&str; 2] = ["net/ip_vs_stats", "net/ip_vs"];

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Ipvs {
    pub connections: u64,
    pub incoming_packets: u64,
    pub outgoing_packets: u64,
    pub incoming_bytes: u64,
    pub outgoing_bytes: u64,
    pub backends: Vec<Backend>,
}

/// A real server behind a virtual service.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Backend {
    /// Empty for a firewall-mark service.
    pub local_address: String,
    pub local_port: u16,
    /// The firewall mark (as printed) of an `FWM` service.
    pub local_mark: String,
    pub remote_address: String,
    pub remote_port: u16,
    /// TCP, UDP, SCTP or FWM.
    pub proto: String,
    pub weight: u64,
    pub active_connections: u64,
    pub inactive_connections: u64,
}

fn hex(n: usize, v: &str, field: &'static str) -> Result<u64, ParseError> {
    u64::from_str_radix(v, 16).map_err(|_| err(n, field, ParseErrorKind::Invalid, "hexadecimal"))
}

/// `C0A80016:0CEA` or `[2620:0000:...:0001]:0050` as (address, port).
fn address(n: usize, v: &str) -> Result<(String, u16), ParseError> {
    let bad = || {
        err(
            n,
            "address",
            ParseErrorKind::Invalid,
            "`<hex address>:<hex port>`",
        )
    };
    let (ip, port) = v.rsplit_once(':').ok_or_else(bad)?;
    let port = u16::from_str_radix(port, 16).map_err(|_| bad())?;
    let ip = if let Some(v6) = ip.strip_prefix('[').and_then(|i| i.strip_suffix(']')) {
        let mut groups = [0u16; 8];
        let mut parts = v6.split(':');
        for g in &mut groups {
            *g = u16::from_str_radix(parts.next().ok_or_else(bad)?, 16).map_err(|_| bad())?;
        }
        if parts.next().is_some() {
            return Err(bad());
        }
        Ipv6Addr::from(groups).to_string()
    } else {
        let v = u32::from_str_radix(ip, 16).map_err(|_| bad())?;
        if ip.len() != 8 {
            return Err(bad());
        }
        Ipv4Addr::from(v).to_string()
    };
    Ok((ip, port))
}

pub fn parse(buf: &[u8]) -> Result<Ipvs, ParseError> {
    let mut out = Ipvs::default();
    let mut totals = false;
    let mut service: Option<(String, u16, String, String)> = None;
    for l in records::lines(buf) {
        let (n, text) = l?;
        let w: Vec<&str> = text.split_whitespace().take(8).collect();
        if w.is_empty() {
            continue;
        }
        if w[0] == "->" {
            if w.len() < 6 || w[1] == "RemoteAddress:Port" {
                continue;
            }
            let Some((local_address, local_port, local_mark, proto)) = &service else {
                return Err(err(
                    n,
                    "service",
                    ParseErrorKind::Missing,
                    "a service before its servers",
                ));
            };
            if out.backends.len() >= crate::limits::MAX_ROWS {
                return Err(err(
                    n,
                    "backend",
                    ParseErrorKind::TooMany,
                    "at most 2^20 servers",
                ));
            }
            let (remote_address, remote_port) = address(n, w[1])?;
            let num = |v: &str, f| {
                v.parse::<u64>()
                    .map_err(|_| err(n, f, ParseErrorKind::Invalid, "a whole number"))
            };
            out.backends.push(Backend {
                local_address: local_address.clone(),
                local_port: *local_port,
                local_mark: local_mark.clone(),
                remote_address,
                remote_port,
                proto: proto.clone(),
                weight: num(w[3], "weight")?,
                active_connections: num(w[4], "active")?,
                inactive_connections: num(w[5], "inactive")?,
            });
            continue;
        }
        match w[0] {
            "TCP" | "UDP" | "SCTP" if w.len() >= 2 => {
                let (a, p) = address(n, w[1])?;
                service = Some((a, p, String::new(), w[0].to_string()));
            }
            "FWM" if w.len() >= 2 => {
                service = Some((String::new(), 0, w[1].to_string(), w[0].to_string()));
            }
            _ if !totals
                && w.len() == 5
                && w.iter().all(|v| v.bytes().all(|b| b.is_ascii_hexdigit())) =>
            {
                totals = true;
                out.connections = hex(n, w[0], "connections")?;
                out.incoming_packets = hex(n, w[1], "incoming_packets")?;
                out.outgoing_packets = hex(n, w[2], "outgoing_packets")?;
                out.incoming_bytes = hex(n, w[3], "incoming_bytes")?;
                out.outgoing_bytes = hex(n, w[4], "outgoing_bytes")?;
            }
            _ => {}
        }
    }
    if !totals {
        return Err(err(
            1,
            "totals",
            ParseErrorKind::Missing,
            "ip_vs_stats' line of totals",
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_values() {
        let s = parse(b"   Total Incoming Outgoing         Incoming         Outgoing\n   Conns  Packets  Packets            Bytes            Bytes\n 16AA370 E33656E5        0     51D8C8883AB3        0\n\n Conns/s   Pkts/s   Pkts/s          Bytes/s          Bytes/s\n       4    1FB3C        0          1282A8F        0\nIP Virtual Server version 1.2.1 (size=4096)\nProt LocalAddress:Port Scheduler Flags\n  -> RemoteAddress:Port Forward Weight ActiveConn InActConn\nTCP  C0A80016:0CEA wlc\n  -> C0A85216:0CEA      Tunnel  100    248        2\nTCP  [2620:0000:0000:0000:0000:0000:0000:0001]:0050 sed\n  -> [2620:0000:0000:0000:0000:0000:0000:0002]:0050      Route   1      0          0\nFWM  10001000 wlc\n  -> C0A8321A:0CEA      Route   0      0          1\n").unwrap();
        assert_eq!(
            (
                s.connections,
                s.incoming_packets,
                s.outgoing_packets,
                s.incoming_bytes
            ),
            (0x16AA370, 0xE33656E5, 0, 0x51D8C8883AB3)
        );
        assert_eq!(s.backends.len(), 3);
        let b = &s.backends[0];
        assert_eq!(
            (
                b.local_address.as_str(),
                b.local_port,
                b.remote_address.as_str(),
                b.remote_port,
                b.proto.as_str()
            ),
            ("192.168.0.22", 3306, "192.168.82.22", 3306, "TCP")
        );
        assert_eq!(
            (b.weight, b.active_connections, b.inactive_connections),
            (100, 248, 2)
        );
        assert_eq!(
            (
                s.backends[1].local_address.as_str(),
                s.backends[1].remote_address.as_str()
            ),
            ("2620::1", "2620::2")
        );
        let f = &s.backends[2];
        assert_eq!(
            (
                f.local_address.as_str(),
                f.local_mark.as_str(),
                f.proto.as_str()
            ),
            ("", "10001000", "FWM")
        );
        // Stats without a service table (no services configured).
        assert!(
            parse(b"   Total\n   Conns\n 1 2 3 4 5\n\n")
                .unwrap()
                .backends
                .is_empty()
        );
        assert_eq!(parse(b"IP Virtual Server\n").unwrap_err().field, "totals");
        assert_eq!(
            parse(b" 1 2 3 4 5\n  -> C0A85216:0CEA Tunnel 1 2 3\n")
                .unwrap_err()
                .field,
            "service"
        );
        assert_eq!(
            parse(b" 1 2 3 4 5\nTCP  C0A8:0CEA wlc\n")
                .unwrap_err()
                .field,
            "address"
        );
    }
}
