//! Network devices' properties from `/sys/class/net/<iface>/`: link state,
//! addresses, MTU, speed, carrier changes (node_exporter's netclass).
//!
//! The reader gathers the attribute files of every device into one text,
//! a record per device: `@<iface>` then `<attribute> <value>` for each file
//! it could read (a device that is down answers `speed` with EINVAL; the
//! line is then absent, as the value is unknown). [`parse_into`] parses that
//! text; [`ATTRIBUTES`] lists the files.

use serde::Serialize;

use crate::error::{ParseError, ParseErrorKind};
use crate::records::{self, err};

/// The files read per device, below `/sys/class/net/<iface>/`, in order.
pub const ATTRIBUTES: [&str; 24] = [
    "addr_assign_type",
    "address",
    "broadcast",
    "carrier",
    "carrier_changes",
    "carrier_up_count",
    "carrier_down_count",
    "dev_id",
    "dormant",
    "duplex",
    "flags",
    "ifalias",
    "ifindex",
    "iflink",
    "link_mode",
    "mtu",
    "name_assign_type",
    "netdev_group",
    "operstate",
    "speed",
    "tx_queue_len",
    "type",
    "statistics/rx_nohandler",
    "addr_len",
];

/// Longest value kept (an `ifalias` is at most 255 bytes).
const MAX_VALUE: usize = 1024;

/// One device. Numbers are `None` when the file was absent or unreadable.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct NetClass {
    pub device: String,
    pub address: String,
    pub broadcast: String,
    pub duplex: String,
    pub ifalias: String,
    pub operstate: String,
    pub addr_assign_type: Option<i64>,
    pub carrier: Option<i64>,
    pub carrier_changes: Option<i64>,
    pub carrier_up_count: Option<i64>,
    pub carrier_down_count: Option<i64>,
    pub dev_id: Option<i64>,
    pub dormant: Option<i64>,
    /// `flags` (printed in hex, `0x1003`).
    pub flags: Option<i64>,
    pub ifindex: Option<i64>,
    pub iflink: Option<i64>,
    pub link_mode: Option<i64>,
    pub mtu: Option<i64>,
    pub name_assign_type: Option<i64>,
    pub netdev_group: Option<i64>,
    /// Mbit/s; -1 when the driver does not know.
    pub speed_mbps: Option<i64>,
    pub tx_queue_len: Option<i64>,
    /// ARPHRD_* (1 Ethernet, 772 loopback).
    pub protocol_type: Option<i64>,
    /// `statistics/rx_nohandler`: packets dropped for want of a protocol handler.
    pub rx_nohandler: Option<i64>,
}

/// A sysfs integer: decimal, or hex with `0x` (`flags`).
fn int(v: &str) -> Option<i64> {
    match v.strip_prefix("0x") {
        Some(h) => i64::from_str_radix(h, 16).ok(),
        None => v.parse().ok(),
    }
}

/// Parses the gathered text (see the module doc) into `out`, one entry per
/// device in the order given.
pub fn parse_into(buf: &[u8], out: &mut Vec<NetClass>) -> Result<(), ParseError> {
    out.clear();
    for l in records::lines(buf) {
        let (n, text) = l?;
        if text.len() > MAX_VALUE {
            return Err(err(
                n,
                "value",
                ParseErrorKind::TooLong,
                "at most 1024 bytes",
            ));
        }
        if let Some(name) = text.strip_prefix('@') {
            records::open(n, name, out.len(), "device")?;
            out.push(NetClass {
                device: name.to_string(),
                ..NetClass::default()
            });
            continue;
        }
        let dev = records::current(out, n, "device")?;
        let (key, value) = text.split_once(' ').unwrap_or((text, ""));
        let value = value.trim();
        let num = |slot: &mut Option<i64>| -> Result<(), ParseError> {
            *slot = Some(int(value).ok_or_else(|| {
                err(
                    n,
                    "value",
                    ParseErrorKind::Invalid,
                    "an integer (0x for hex)",
                )
            })?);
            Ok(())
        };
        match key {
            "address" => dev.address = value.to_string(),
            "broadcast" => dev.broadcast = value.to_string(),
            "duplex" => dev.duplex = value.to_string(),
            "ifalias" => dev.ifalias = value.to_string(),
            "operstate" => dev.operstate = value.to_string(),
            "addr_assign_type" => num(&mut dev.addr_assign_type)?,
            "carrier" => num(&mut dev.carrier)?,
            "carrier_changes" => num(&mut dev.carrier_changes)?,
            "carrier_up_count" => num(&mut dev.carrier_up_count)?,
            "carrier_down_count" => num(&mut dev.carrier_down_count)?,
            "dev_id" => num(&mut dev.dev_id)?,
            "dormant" => num(&mut dev.dormant)?,
            "flags" => num(&mut dev.flags)?,
            "ifindex" => num(&mut dev.ifindex)?,
            "iflink" => num(&mut dev.iflink)?,
            "link_mode" => num(&mut dev.link_mode)?,
            "mtu" => num(&mut dev.mtu)?,
            "name_assign_type" => num(&mut dev.name_assign_type)?,
            "netdev_group" => num(&mut dev.netdev_group)?,
            "speed" => num(&mut dev.speed_mbps)?,
            "tx_queue_len" => num(&mut dev.tx_queue_len)?,
            "type" => num(&mut dev.protocol_type)?,
            "statistics/rx_nohandler" => num(&mut dev.rx_nohandler)?,
            // Files a newer kernel adds are read past.
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_values() {
        let text = b"@eth0\naddress 02:fc:00:00:00:01\nflags 0x1003\nspeed -1\nmtu 1400\n\
operstate up\nifalias \ntype 1\nstatistics/rx_nohandler 7\n@lo\noperstate unknown\ncarrier 1\n";
        let v = crate::parsed(parse_into, text);
        assert_eq!(v.len(), 2);
        let e = &v[0];
        assert_eq!(e.device, "eth0");
        assert_eq!(e.address, "02:fc:00:00:00:01");
        assert_eq!(e.flags, Some(4099));
        assert_eq!(e.speed_mbps, Some(-1));
        assert_eq!(e.mtu, Some(1400));
        assert_eq!(e.protocol_type, Some(1));
        assert_eq!(e.rx_nohandler, Some(7));
        assert_eq!(e.ifalias, "");
        assert_eq!(e.carrier, None);
        assert_eq!((v[1].device.as_str(), v[1].carrier), ("lo", Some(1)));
    }

    #[test]
    fn bad_input_names_line_and_field() {
        let mut v = Vec::new();
        let e = parse_into(b"mtu 1\n", &mut v).unwrap_err();
        assert_eq!(
            (e.line, e.field, e.kind),
            (1, "device", ParseErrorKind::Missing)
        );
        let e = parse_into(b"@eth0\nmtu x\n", &mut v).unwrap_err();
        assert_eq!(
            (e.line, e.field, e.kind),
            (2, "value", ParseErrorKind::Invalid)
        );
        let e = parse_into(b"@a/b\n", &mut v).unwrap_err();
        assert_eq!((e.line, e.field), (1, "device"));
    }
}
