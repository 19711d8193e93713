//! Wireless interfaces, the BSS each is associated with and its stations,
//! as the gatherer writes what nl80211 answers (`gather/wifi.rs`):
//!
//! ```text
//! @wlan0 2 2412
//! bss 00:11:22:33:44:55 1 4578616d706c65
//! station aa:bb:cc:dd:ee:ff 30000000000 400000000 128000000 164000000 -52 10 2 1 0 0 0 0
//! ```
//!
//! `@` opens an interface: its name, its nl80211 type (2: station, 3:
//! access point) and its frequency in MHz (0 when it has none). `bss`:
//! the BSSID, nl80211's status (1: associated, 2: joined an IBSS) and
//! the SSID's bytes in hex (an SSID is any 32 bytes). `station`: its MAC,
//! connected and inactive time (ns), receive and transmit bitrate
//! (bit/s), signal (dBm), transmit retries, transmit failures, beacon
//! losses, bytes received and sent, packets received and sent.

use serde::Serialize;

use crate::error::{ParseError, ParseErrorKind};
use crate::records::{self, err};

/// One wireless interface.
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize)]
pub struct WifiInterface {
    pub device: String,
    /// nl80211's interface type (`enum nl80211_iftype`).
    pub iftype: u32,
    pub frequency_mhz: u64,
    pub bss: Option<Bss>,
    pub stations: Vec<Station>,
}

/// The BSS an interface is associated with.
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize)]
pub struct Bss {
    pub bssid: String,
    /// `enum nl80211_bss_status`: 0 authenticated, 1 associated, 2 IBSS joined.
    pub status: u32,
    /// The SSID, invalid UTF-8 replaced.
    pub ssid: String,
}

/// A station: the access point a client is associated with, or a client
/// of an access point.
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize)]
pub struct Station {
    pub mac: String,
    pub connected_ns: u64,
    pub inactive_ns: u64,
    pub receive_bitrate: u64,
    pub transmit_bitrate: u64,
    pub signal_dbm: i64,
    pub transmit_retries: u64,
    pub transmit_failed: u64,
    pub beacon_loss: u64,
    pub receive_bytes: u64,
    pub transmit_bytes: u64,
    pub receive_packets: u64,
    pub transmit_packets: u64,
}

/// Stations an interface may list here (an access point has at most a
/// few thousand clients).
pub const MAX_STATIONS: usize = 1 << 16;

/// Parses the gathered text into `out`.
pub fn parse_into(buf: &[u8], out: &mut Vec<WifiInterface>) -> Result<(), ParseError> {
    out.clear();
    for l in records::lines(buf) {
        let (n, text) = l?;
        let mut w = text.split(' ');
        let kind = w.next().unwrap_or_default();
        let invalid = |field: &'static str, accepted: &'static str| {
            err(n, field, ParseErrorKind::Invalid, accepted)
        };
        if let Some(device) = kind.strip_prefix('@') {
            records::open(n, device, out.len(), "interface")?;
            let iftype = w
                .next()
                .and_then(|v| v.parse().ok())
                .ok_or_else(|| invalid("type", "nl80211's interface type"))?;
            let frequency_mhz = w
                .next()
                .and_then(|v| v.parse().ok())
                .ok_or_else(|| invalid("frequency", "MHz"))?;
            out.push(WifiInterface {
                device: device.to_string(),
                iftype,
                frequency_mhz,
                ..Default::default()
            });
            continue;
        }
        let ifi = records::current(out, n, "interface")?;
        match kind {
            "bss" => {
                let bssid = mac(w.next()).ok_or_else(|| invalid("bssid", "a MAC address"))?;
                let status = w
                    .next()
                    .and_then(|v| v.parse().ok())
                    .ok_or_else(|| invalid("status", "nl80211's BSS status"))?;
                let ssid = w
                    .next()
                    .and_then(unhex)
                    .ok_or_else(|| invalid("ssid", "the SSID's bytes in hex"))?;
                ifi.bss = Some(Bss {
                    bssid,
                    status,
                    ssid: String::from_utf8_lossy(&ssid).into_owned(),
                });
            }
            "station" => {
                if ifi.stations.len() >= MAX_STATIONS {
                    return Err(err(
                        n,
                        "station",
                        ParseErrorKind::TooMany,
                        "at most 65536 stations an interface",
                    ));
                }
                let mac = mac(w.next()).ok_or_else(|| invalid("station", "a MAC address"))?;
                let mut v = [0u64; 11];
                let mut signal = 0i64;
                for (i, name) in STATION_FIELDS.iter().enumerate() {
                    let word = w.next();
                    if i == 4 {
                        signal = word
                            .and_then(|s| s.parse().ok())
                            .ok_or_else(|| invalid(name, "dBm"))?;
                        continue;
                    }
                    let at = if i > 4 { i - 1 } else { i };
                    v[at] = word
                        .and_then(|s| s.parse().ok())
                        .ok_or_else(|| invalid(name, "a whole number"))?;
                }
                let [
                    connected_ns,
                    inactive_ns,
                    receive_bitrate,
                    transmit_bitrate,
                    transmit_retries,
                    transmit_failed,
                    beacon_loss,
                    receive_bytes,
                    transmit_bytes,
                    receive_packets,
                    transmit_packets,
                ] = v;
                ifi.stations.push(Station {
                    mac,
                    connected_ns,
                    inactive_ns,
                    receive_bitrate,
                    transmit_bitrate,
                    signal_dbm: signal,
                    transmit_retries,
                    transmit_failed,
                    beacon_loss,
                    receive_bytes,
                    transmit_bytes,
                    receive_packets,
                    transmit_packets,
                });
            }
            _ => return Err(invalid("line", "`@<device>`, `bss` or `station`")),
        }
    }
    Ok(())
}

/// A station line's fields after its MAC, in order.
const STATION_FIELDS: [&str; 12] = [
    "connected",
    "inactive",
    "receive bitrate",
    "transmit bitrate",
    "signal",
    "transmit retries",
    "transmit failed",
    "beacon loss",
    "receive bytes",
    "transmit bytes",
    "receive packets",
    "transmit packets",
];

/// `aa:bb:cc:dd:ee:ff`, six lower-case hex pairs.
fn mac(w: Option<&str>) -> Option<String> {
    let w = w?;
    let ok = w.len() == 17
        && w.split(':').all(|p| {
            p.len() == 2
                && p.bytes()
                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        });
    ok.then(|| w.to_string())
}

/// Hex pairs to bytes; `-` for none.
fn unhex(w: &str) -> Option<Vec<u8>> {
    if w == "-" {
        return Some(Vec::new());
    }
    if !w.len().is_multiple_of(2) || w.len() > 64 {
        return None;
    }
    (0..w.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(w.get(i..i + 2)?, 16).ok())
        .collect()
}

/// `bytes` as `aa:bb:..`, the way a MAC address is written.
pub fn mac_string(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() * 3);
    for (i, b) in bytes.iter().enumerate() {
        if i > 0 {
            s.push(':');
        }
        s.push_str(&format!("{b:02x}"));
    }
    s
}

/// `bytes` in hex, `-` for none (the text's SSID).
pub fn hex(bytes: &[u8]) -> String {
    if bytes.is_empty() {
        return "-".into();
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interfaces_bss_and_stations() {
        let text = b"@wlan0 2 2412\nbss 00:11:22:33:44:55 1 4578616d706c65\n\
station aa:bb:cc:dd:ee:ff 30000000000 400000000 128000000 164000000 -52 10 2 1 5 6 7 8\n\
@wlan1 3 0\n";
        let v = crate::parsed(parse_into, text);
        assert_eq!(v.len(), 2);
        assert_eq!((v[0].iftype, v[0].frequency_mhz), (2, 2412));
        let bss = v[0].bss.as_ref().unwrap();
        assert_eq!(
            (bss.bssid.as_str(), bss.status, bss.ssid.as_str()),
            ("00:11:22:33:44:55", 1, "Example")
        );
        let s = &v[0].stations[0];
        assert_eq!(
            (s.connected_ns, s.inactive_ns, s.signal_dbm, s.beacon_loss),
            (30_000_000_000, 400_000_000, -52, 1)
        );
        assert_eq!(
            (
                s.receive_bytes,
                s.transmit_bytes,
                s.receive_packets,
                s.transmit_packets
            ),
            (5, 6, 7, 8)
        );
        assert_eq!((v[1].bss.as_ref(), v[1].stations.len()), (None, 0));
        let mut out = Vec::new();
        for (bad, field) in [
            (&b"bss 00:11:22:33:44:55 1 -\n"[..], "interface"),
            (b"@wlan0 x 1\n", "type"),
            (b"@wlan0 2 1\nbss 00:11:22:33:44 1 -\n", "bssid"),
            (b"@wlan0 2 1\nbss 00:11:22:33:44:55 1 4g\n", "ssid"),
            (
                b"@wlan0 2 1\nstation aa:bb:cc:dd:ee:ff 1 2 3 4 x\n",
                "signal",
            ),
            (
                b"@wlan0 2 1\nstation aa:bb:cc:dd:ee:ff 1 2 3 4 5 6\n",
                "transmit failed",
            ),
            (b"@wlan0 2 1\nnoise 1\n", "line"),
        ] {
            assert_eq!(
                parse_into(bad, &mut out).unwrap_err().field,
                field,
                "{bad:?}"
            );
        }
    }
}
