//! Wireless interfaces from nl80211, the kernel's generic netlink family
//! for 802.11, asked as node_exporter's wifi collector asks it: the
//! interfaces (NL80211_CMD_GET_INTERFACE), then for each named one the
//! BSS it is associated with (the scan result that has a status,
//! NL80211_CMD_GET_SCAN) and its stations (NL80211_CMD_GET_STATION).
//! Messages are framed with `netlink-packet-core` and sent on a
//! `netlink-sys` socket, as the qdisc source's; the generic netlink
//! header and nl80211's attributes (their numbers from the kernel's
//! `linux/nl80211.h`) are written here, as few as the collector needs.
//! Written as `crate::wifi` documents. A kernel without nl80211 (no
//! cfg80211: no wireless device can be there) has the source missing.
//!
//! Or, for node_exporter's end-to-end test, from its fixture
//! (`--collector.wifi.fixtures`): `interfaces.json`, and for each
//! interface `<name>/bss.json` and `<name>/stationinfo.json` where they
//! are, in the JSON of node_exporter's wifi library.

use std::io::Write;
use std::path::Path;

use netlink_packet_core::{
    DecodeError, DefaultNla, Emitable, NLM_F_DUMP, NLM_F_REQUEST, NetlinkDeserializable,
    NetlinkHeader, NetlinkMessage, NetlinkPayload, NetlinkSerializable, NlasIterator,
};
use netlink_sys::{Socket, SocketAddr, protocols::NETLINK_GENERIC};

use super::Gatherer;
use crate::wifi::{hex, mac_string};

/// Generic netlink's controller: the family that names the others.
const GENL_ID_CTRL: u16 = 0x10;
const CTRL_CMD_GETFAMILY: u8 = 3;
const CTRL_ATTR_FAMILY_ID: u16 = 1;
const CTRL_ATTR_FAMILY_NAME: u16 = 2;
const CTRL_ATTR_VERSION: u16 = 3;

const NL80211_CMD_GET_INTERFACE: u8 = 5;
const NL80211_CMD_GET_STATION: u8 = 17;
const NL80211_CMD_GET_SCAN: u8 = 32;

const NL80211_ATTR_IFINDEX: u16 = 3;
const NL80211_ATTR_IFNAME: u16 = 4;
const NL80211_ATTR_IFTYPE: u16 = 5;
const NL80211_ATTR_MAC: u16 = 6;
const NL80211_ATTR_STA_INFO: u16 = 21;
const NL80211_ATTR_WIPHY_FREQ: u16 = 38;
const NL80211_ATTR_BSS: u16 = 47;

const NL80211_BSS_BSSID: u16 = 1;
const NL80211_BSS_INFORMATION_ELEMENTS: u16 = 6;
const NL80211_BSS_STATUS: u16 = 9;

const NL80211_STA_INFO_INACTIVE_TIME: u16 = 1;
const NL80211_STA_INFO_RX_BYTES: u16 = 2;
const NL80211_STA_INFO_TX_BYTES: u16 = 3;
const NL80211_STA_INFO_SIGNAL: u16 = 7;
const NL80211_STA_INFO_TX_BITRATE: u16 = 8;
const NL80211_STA_INFO_RX_PACKETS: u16 = 9;
const NL80211_STA_INFO_TX_PACKETS: u16 = 10;
const NL80211_STA_INFO_TX_RETRIES: u16 = 11;
const NL80211_STA_INFO_TX_FAILED: u16 = 12;
const NL80211_STA_INFO_RX_BITRATE: u16 = 14;
const NL80211_STA_INFO_CONNECTED_TIME: u16 = 16;
const NL80211_STA_INFO_BEACON_LOSS: u16 = 18;
const NL80211_STA_INFO_RX_BYTES64: u16 = 23;
const NL80211_STA_INFO_TX_BYTES64: u16 = 24;

/// In units of 100 kbit/s: u16, and u32 for rates beyond 6.5 Gbit/s.
const NL80211_RATE_INFO_BITRATE: u16 = 1;
const NL80211_RATE_INFO_BITRATE32: u16 = 5;

/// The SSID's information element.
const IE_SSID: u8 = 0;

/// Messages a dump may answer with here, at most.
const MAX_MESSAGES: usize = 1 << 16;

/// A generic netlink message: its family (the netlink message type), its
/// command and version, and its attributes' bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Genl {
    pub family: u16,
    pub cmd: u8,
    pub version: u8,
    pub attrs: Vec<u8>,
}

impl NetlinkSerializable for Genl {
    fn message_type(&self) -> u16 {
        self.family
    }
    fn buffer_len(&self) -> usize {
        4 + self.attrs.len()
    }
    fn serialize(&self, buffer: &mut [u8]) {
        buffer[0] = self.cmd;
        buffer[1] = self.version;
        buffer[2..4].fill(0);
        buffer[4..4 + self.attrs.len()].copy_from_slice(&self.attrs);
    }
}

impl NetlinkDeserializable for Genl {
    type Error = DecodeError;
    fn deserialize(header: &NetlinkHeader, payload: &[u8]) -> Result<Self, DecodeError> {
        if payload.len() < 4 {
            return Err(DecodeError::from("a generic netlink message under 4 bytes"));
        }
        Ok(Genl {
            family: header.message_type,
            cmd: payload[0],
            version: payload[1],
            attrs: payload[4..].to_vec(),
        })
    }
}

impl From<Genl> for NetlinkPayload<Genl> {
    fn from(g: Genl) -> Self {
        NetlinkPayload::InnerMessage(g)
    }
}

/// Attributes' bytes: each as (type, value), in order.
pub(crate) fn attrs(bytes: &[u8]) -> std::io::Result<Vec<(u16, &[u8])>> {
    NlasIterator::new(bytes)
        .map(|a| {
            let a = a.map_err(|e| invalid(format!("an attribute: {e}")))?;
            let (kind, len) = (a.kind(), usize::from(a.length()));
            // The checked buffer holds `len` bytes, the header's 4 first.
            let value = a.into_inner().get(4..len).unwrap_or_default();
            Ok((kind, value))
        })
        .collect()
}

/// Attributes written: each (type, value).
pub(crate) fn encode(attrs: &[(u16, Vec<u8>)]) -> Vec<u8> {
    let nlas: Vec<DefaultNla> = attrs
        .iter()
        .map(|(k, v)| DefaultNla::new(*k, v.clone()))
        .collect();
    let mut out = vec![0; nlas.as_slice().buffer_len()];
    nlas.as_slice().emit(&mut out);
    out
}

fn invalid(what: impl std::fmt::Display) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, format!("netlink: {what}"))
}

fn uint(v: &[u8]) -> Option<u64> {
    Some(match v.len() {
        1 => u64::from(v[0]),
        2 => u64::from(u16::from_ne_bytes(v.try_into().ok()?)),
        4 => u64::from(u32::from_ne_bytes(v.try_into().ok()?)),
        8 => u64::from_ne_bytes(v.try_into().ok()?),
        _ => return None,
    })
}

/// A generic netlink socket, asked one request at a time.
pub(crate) struct GenlSocket {
    socket: Socket,
    seq: u32,
    buf: Vec<u8>,
}

impl GenlSocket {
    pub(crate) fn open() -> std::io::Result<Self> {
        let mut socket = Socket::new(NETLINK_GENERIC)?;
        socket.bind_auto()?;
        socket.connect(&SocketAddr::new(0, 0))?;
        Ok(GenlSocket {
            socket,
            seq: 0,
            buf: vec![0; 64 << 10],
        })
    }

    /// Sends `req` (a dump with `dump`) and hands each answer to `each`;
    /// the kernel's error is the result's (`ENOENT`: no such family, or
    /// nothing of the kind).
    pub(crate) fn ask(
        &mut self,
        req: Genl,
        dump: bool,
        mut each: impl FnMut(Genl) -> std::io::Result<()>,
    ) -> std::io::Result<()> {
        self.seq = self.seq.wrapping_add(1);
        let mut msg = NetlinkMessage::new(NetlinkHeader::default(), NetlinkPayload::from(req));
        msg.header.flags = NLM_F_REQUEST | if dump { NLM_F_DUMP } else { 0 };
        msg.header.sequence_number = self.seq;
        msg.finalize();
        let mut out = vec![0; msg.buffer_len()];
        msg.serialize(&mut out);
        self.socket.send(&out, 0)?;
        let mut answers = 0usize;
        loop {
            let n = self.socket.recv(&mut &mut self.buf[..], 0)?;
            let mut at = 0;
            while at < n {
                let msg: NetlinkMessage<Genl> =
                    NetlinkMessage::deserialize(&self.buf[at..n]).map_err(invalid)?;
                let len = msg.header.length as usize;
                if msg.header.sequence_number == self.seq {
                    match msg.payload {
                        NetlinkPayload::Done(_) => return Ok(()),
                        NetlinkPayload::Error(e) => {
                            return match e.code {
                                Some(code) => Err(std::io::Error::from_raw_os_error(-code.get())),
                                // An acknowledgement.
                                None => Ok(()),
                            };
                        }
                        NetlinkPayload::InnerMessage(g) => {
                            answers += 1;
                            if answers > MAX_MESSAGES {
                                return Err(invalid("more than 65536 answers"));
                            }
                            each(g)?;
                            if !dump {
                                return Ok(());
                            }
                        }
                        _ => {}
                    }
                }
                if len == 0 {
                    break;
                }
                at += (len + 3) & !3;
            }
        }
    }

    /// A family's id and version by name (`nl80211`); `ENOENT` when the
    /// kernel has no such family.
    pub(crate) fn family(&mut self, name: &str) -> std::io::Result<(u16, u8)> {
        let mut name_z = name.as_bytes().to_vec();
        name_z.push(0);
        let req = Genl {
            family: GENL_ID_CTRL,
            cmd: CTRL_CMD_GETFAMILY,
            version: 1,
            attrs: encode(&[(CTRL_ATTR_FAMILY_NAME, name_z)]),
        };
        let mut found = None;
        self.ask(req, false, |g| {
            let (mut id, mut version) = (None, 0);
            for (k, v) in attrs(&g.attrs)? {
                match k {
                    CTRL_ATTR_FAMILY_ID => id = uint(v).and_then(|i| u16::try_from(i).ok()),
                    CTRL_ATTR_VERSION => version = uint(v).unwrap_or(0) as u8,
                    _ => {}
                }
            }
            found = id.map(|id| (id, version));
            Ok(())
        })?;
        found.ok_or_else(|| invalid(format!("no id for family {name}")))
    }
}

/// One interface as GET_INTERFACE gives it.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Interface {
    pub index: u32,
    pub name: String,
    pub iftype: u32,
    pub frequency_mhz: u64,
}

pub(crate) fn parse_interface(g: &Genl) -> std::io::Result<Interface> {
    let mut ifi = Interface::default();
    for (k, v) in attrs(&g.attrs)? {
        match k {
            NL80211_ATTR_IFINDEX => ifi.index = uint(v).unwrap_or(0) as u32,
            NL80211_ATTR_IFNAME => {
                let v = v.split(|&b| b == 0).next().unwrap_or_default();
                ifi.name = String::from_utf8_lossy(v).into_owned();
            }
            NL80211_ATTR_IFTYPE => ifi.iftype = uint(v).unwrap_or(0) as u32,
            NL80211_ATTR_WIPHY_FREQ => ifi.frequency_mhz = uint(v).unwrap_or(0),
            _ => {}
        }
    }
    Ok(ifi)
}

/// The BSS line of a scan result that has a status (the one the
/// interface is associated with), or `None`.
pub(crate) fn parse_bss(g: &Genl) -> std::io::Result<Option<String>> {
    for (k, v) in attrs(&g.attrs)? {
        if k != NL80211_ATTR_BSS {
            continue;
        }
        let bss = attrs(v)?;
        let Some(status) = bss
            .iter()
            .find(|(k, _)| *k == NL80211_BSS_STATUS)
            .and_then(|(_, v)| uint(v))
        else {
            continue;
        };
        let mut bssid = String::new();
        let mut ssid: &[u8] = &[];
        for (k, v) in &bss {
            match *k {
                NL80211_BSS_BSSID => bssid = mac_string(v),
                NL80211_BSS_INFORMATION_ELEMENTS => ssid = information_element(v, IE_SSID),
                _ => {}
            }
        }
        if bssid.len() != 17 {
            return Err(invalid("a BSS without a 6-byte BSSID"));
        }
        return Ok(Some(format!("bss {bssid} {status} {}", hex(ssid))));
    }
    Ok(None)
}

/// Element `id`'s bytes among 802.11 information elements (id, length,
/// bytes; each), empty when it is not there.
fn information_element(mut ies: &[u8], id: u8) -> &[u8] {
    while ies.len() >= 2 {
        let len = usize::from(ies[1]);
        let Some(data) = ies.get(2..2 + len) else {
            break;
        };
        if ies[0] == id {
            return &data[..len.min(32)];
        }
        ies = &ies[2 + len..];
    }
    &[]
}

/// A station's line, or `None` for a message without station info.
pub(crate) fn parse_station(g: &Genl) -> std::io::Result<Option<String>> {
    let top = attrs(&g.attrs)?;
    let Some(mac) = top
        .iter()
        .find(|(k, _)| *k == NL80211_ATTR_MAC)
        .map(|(_, v)| mac_string(v))
    else {
        return Ok(None);
    };
    let Some((_, info)) = top.iter().find(|(k, _)| *k == NL80211_ATTR_STA_INFO) else {
        return Ok(None);
    };
    if mac.len() != 17 {
        return Err(invalid("a station without a 6-byte MAC"));
    }
    // connected s, inactive ms, rx and tx bitrate, retries, failed, beacon
    // loss, rx and tx bytes (32 and 64 bits), rx and tx packets.
    let (mut connected, mut inactive, mut rx_rate, mut tx_rate) = (0u64, 0u64, 0u64, 0u64);
    let mut signal = 0i64;
    let (mut retries, mut failed, mut loss) = (0u64, 0u64, 0u64);
    let (mut rx32, mut tx32, mut rx64, mut tx64) = (None, None, None, None);
    let (mut rx_packets, mut tx_packets) = (0u64, 0u64);
    for (k, v) in attrs(info)? {
        let n = uint(v);
        match k {
            NL80211_STA_INFO_CONNECTED_TIME => connected = n.unwrap_or(0),
            NL80211_STA_INFO_INACTIVE_TIME => inactive = n.unwrap_or(0),
            NL80211_STA_INFO_SIGNAL => signal = v.first().map_or(0, |&b| i64::from(b as i8)),
            NL80211_STA_INFO_RX_BITRATE => rx_rate = bitrate(v)?,
            NL80211_STA_INFO_TX_BITRATE => tx_rate = bitrate(v)?,
            NL80211_STA_INFO_TX_RETRIES => retries = n.unwrap_or(0),
            NL80211_STA_INFO_TX_FAILED => failed = n.unwrap_or(0),
            NL80211_STA_INFO_BEACON_LOSS => loss = n.unwrap_or(0),
            NL80211_STA_INFO_RX_BYTES => rx32 = n,
            NL80211_STA_INFO_TX_BYTES => tx32 = n,
            NL80211_STA_INFO_RX_BYTES64 => rx64 = n,
            NL80211_STA_INFO_TX_BYTES64 => tx64 = n,
            NL80211_STA_INFO_RX_PACKETS => rx_packets = n.unwrap_or(0),
            NL80211_STA_INFO_TX_PACKETS => tx_packets = n.unwrap_or(0),
            _ => {}
        }
    }
    let rx = rx64.or(rx32).unwrap_or(0);
    let tx = tx64.or(tx32).unwrap_or(0);
    Ok(Some(format!(
        "station {mac} {} {} {rx_rate} {tx_rate} {signal} {retries} {failed} {loss} {rx} {tx} {rx_packets} {tx_packets}",
        connected.saturating_mul(1_000_000_000),
        inactive.saturating_mul(1_000_000),
    )))
}

/// A rate's bits per second: its 32-bit figure, else its 16-bit one (both
/// in 100 kbit/s).
fn bitrate(nested: &[u8]) -> std::io::Result<u64> {
    let (mut b16, mut b32) = (None, None);
    for (k, v) in attrs(nested)? {
        match k {
            NL80211_RATE_INFO_BITRATE => b16 = uint(v),
            NL80211_RATE_INFO_BITRATE32 => b32 = uint(v),
            _ => {}
        }
    }
    Ok(b32.or(b16).unwrap_or(0) * 100_000)
}

/// What a request about one interface may be refused with and still
/// leave the rest to read: the interface has no such thing, or is gone.
fn absent(e: &std::io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::ENOENT | libc::EOPNOTSUPP | libc::ENODEV | libc::ENOLINK | libc::EINVAL)
    )
}

impl Gatherer {
    pub(super) fn wifi(&mut self) -> std::io::Result<()> {
        if let Some(dir) = self.options.wifi_fixtures.clone() {
            return self.wifi_fixture(&dir);
        }
        let mut s = GenlSocket::open()?;
        let (family, version) = s.family("nl80211")?;
        let req = |cmd, attrs| Genl {
            family,
            cmd,
            version,
            attrs,
        };
        let mut ifis = Vec::new();
        s.ask(req(NL80211_CMD_GET_INTERFACE, Vec::new()), true, |g| {
            ifis.push(parse_interface(&g)?);
            Ok(())
        })?;
        for ifi in &ifis {
            if !self.wifi_interface(&ifi.name, ifi.iftype, ifi.frequency_mhz) {
                continue;
            }
            let index = encode(&[(NL80211_ATTR_IFINDEX, ifi.index.to_ne_bytes().to_vec())]);
            let mut lines: Vec<String> = Vec::new();
            let mut bss_found = false;
            let r = s.ask(req(NL80211_CMD_GET_SCAN, index.clone()), true, |g| {
                if !bss_found && let Some(l) = parse_bss(&g)? {
                    bss_found = true;
                    lines.push(l);
                }
                Ok(())
            });
            match r {
                Err(e) if !absent(&e) => return Err(e),
                _ => {}
            }
            let r = s.ask(req(NL80211_CMD_GET_STATION, index), true, |g| {
                if lines.len() > crate::wifi::MAX_STATIONS {
                    return Err(invalid("more than 65536 stations"));
                }
                if let Some(l) = parse_station(&g)? {
                    lines.push(l);
                }
                Ok(())
            });
            match r {
                Err(e) if !absent(&e) => return Err(e),
                _ => {}
            }
            for l in lines {
                let _ = writeln!(self.scratch, "{l}");
            }
        }
        Ok(())
    }

    /// An interface's line, unless its name is one to leave out: none
    /// (node_exporter skips those too), or one the text cannot hold.
    fn wifi_interface(&mut self, name: &str, iftype: u32, frequency_mhz: u64) -> bool {
        if name.is_empty() || name.contains(char::is_whitespace) || name.contains('/') {
            return false;
        }
        let _ = writeln!(self.scratch, "@{name} {iftype} {frequency_mhz}");
        true
    }

    /// node_exporter's fixture: `interfaces.json`, then each named
    /// interface's `bss.json` and `stationinfo.json` where they are.
    fn wifi_fixture(&mut self, dir: &Path) -> std::io::Result<()> {
        #[derive(serde::Deserialize, Default)]
        #[serde(default)]
        struct Ifi {
            name: String,
            #[serde(rename = "type")]
            iftype: u32,
            frequency: u64,
        }
        #[derive(serde::Deserialize, Default)]
        #[serde(default)]
        struct Bss {
            ssid: String,
            bssid: String,
            status: u32,
        }
        #[derive(serde::Deserialize, Default)]
        #[serde(default)]
        struct Sta {
            hardwareaddr: String,
            connected: u64,
            inactive: u64,
            receivebitrate: u64,
            transmitbitrate: u64,
            signal: i64,
            transmitretries: u64,
            transmitfailed: u64,
            beaconloss: u64,
            receivedbytes: u64,
            transmittedbytes: u64,
            receivedpackets: u64,
            transmittedpackets: u64,
        }
        fn read<T: serde::de::DeserializeOwned>(path: &Path) -> std::io::Result<T> {
            let text = std::fs::read(path)?;
            serde_json::from_slice(&text).map_err(|e| {
                std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    format!("{}: {e}", path.display()),
                )
            })
        }
        // Go's JSON writes a byte slice (a MAC address) in base64.
        fn mac(path: &Path, b64: &str) -> std::io::Result<String> {
            use base64::Engine;
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(b64)
                .ok()
                .filter(|b| b.len() == 6)
                .ok_or_else(|| {
                    std::io::Error::new(
                        std::io::ErrorKind::InvalidData,
                        format!("{}: {b64:?} is not 6 bytes in base64", path.display()),
                    )
                })?;
            Ok(mac_string(&bytes))
        }
        let ifis: Vec<Ifi> = read(&dir.join("interfaces.json"))?;
        for ifi in &ifis {
            if !self.wifi_interface(&ifi.name, ifi.iftype, ifi.frequency) {
                continue;
            }
            let path = dir.join(&ifi.name).join("bss.json");
            match read::<Bss>(&path) {
                Ok(b) => {
                    let bssid = mac(&path, &b.bssid)?;
                    let ssid = hex(&b.ssid.as_bytes()[..b.ssid.len().min(32)]);
                    let _ = writeln!(self.scratch, "bss {bssid} {} {ssid}", b.status);
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(e),
            }
            let path = dir.join(&ifi.name).join("stationinfo.json");
            match read::<Vec<Sta>>(&path) {
                Ok(stations) => {
                    for s in stations.iter().take(crate::wifi::MAX_STATIONS) {
                        let m = mac(&path, &s.hardwareaddr)?;
                        let _ = writeln!(
                            self.scratch,
                            "station {m} {} {} {} {} {} {} {} {} {} {} {} {}",
                            s.connected,
                            s.inactive,
                            s.receivebitrate,
                            s.transmitbitrate,
                            s.signal,
                            s.transmitretries,
                            s.transmitfailed,
                            s.beaconloss,
                            s.receivedbytes,
                            s.transmittedbytes,
                            s.receivedpackets,
                            s.transmittedpackets,
                        );
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A nested attribute: its members written, the kernel's nested flag set.
    fn nested(kind: u16, members: &[(u16, Vec<u8>)]) -> (u16, Vec<u8>) {
        (kind | netlink_packet_core::NLA_F_NESTED, encode(members))
    }

    fn msg(cmd: u8, attrs: &[(u16, Vec<u8>)]) -> Genl {
        Genl {
            family: 0x1c,
            cmd,
            version: 1,
            attrs: encode(attrs),
        }
    }

    /// The generic netlink plumbing against the kernel: the controller
    /// names its own family and answers a dump of every family, in as
    /// many messages as it takes; a family this kernel lacks is ENOENT,
    /// which the source reports as missing.
    #[test]
    fn the_kernels_generic_netlink_controller_answers() {
        let mut s = GenlSocket::open().unwrap();
        assert_eq!(s.family("nlctrl").unwrap().0, GENL_ID_CTRL);
        let mut names = Vec::new();
        let all = Genl {
            family: GENL_ID_CTRL,
            cmd: CTRL_CMD_GETFAMILY,
            version: 1,
            attrs: Vec::new(),
        };
        s.ask(all, true, |g| {
            for (k, v) in attrs(&g.attrs)? {
                if k == CTRL_ATTR_FAMILY_NAME {
                    names.push(
                        String::from_utf8_lossy(v)
                            .trim_end_matches('\0')
                            .to_string(),
                    );
                }
            }
            Ok(())
        })
        .unwrap();
        assert!(names.iter().any(|n| n == "nlctrl"), "{names:?}");
        let e = s.family("nosuchfamily").unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::ENOENT));
        // The socket still answers after an error.
        assert_eq!(s.family("nlctrl").unwrap().0, GENL_ID_CTRL);
    }

    /// nl80211's answers as `linux/nl80211.h` lays them out (written
    /// here: no wireless device can be asked on this machine), read
    /// into the text's lines.
    #[test]
    fn nl80211_interfaces_bss_and_stations() {
        let ifi = msg(
            NL80211_CMD_GET_INTERFACE,
            &[
                (NL80211_ATTR_IFINDEX, 7u32.to_ne_bytes().to_vec()),
                (NL80211_ATTR_IFNAME, b"wlan0\0".to_vec()),
                (NL80211_ATTR_IFTYPE, 2u32.to_ne_bytes().to_vec()),
                (NL80211_ATTR_WIPHY_FREQ, 5180u32.to_ne_bytes().to_vec()),
            ],
        );
        assert_eq!(
            parse_interface(&ifi).unwrap(),
            Interface {
                index: 7,
                name: "wlan0".into(),
                iftype: 2,
                frequency_mhz: 5180,
            }
        );
        // Two scan results: one seen, one associated (it has a status).
        let seen = msg(
            NL80211_CMD_GET_SCAN,
            &[nested(
                NL80211_ATTR_BSS,
                &[(NL80211_BSS_BSSID, vec![2, 0, 0, 0, 0, 1])],
            )],
        );
        assert_eq!(parse_bss(&seen).unwrap(), None);
        let ies = [&[0u8, 4][..], b"h\xc3\xa9 ", &[1, 2, 0x82, 0x84]].concat();
        let ours = msg(
            NL80211_CMD_GET_SCAN,
            &[nested(
                NL80211_ATTR_BSS,
                &[
                    (NL80211_BSS_BSSID, vec![0, 0x11, 0x22, 0x33, 0x44, 0x55]),
                    (NL80211_BSS_INFORMATION_ELEMENTS, ies),
                    (NL80211_BSS_STATUS, 1u32.to_ne_bytes().to_vec()),
                ],
            )],
        );
        assert_eq!(
            parse_bss(&ours).unwrap().unwrap(),
            "bss 00:11:22:33:44:55 1 68c3a920"
        );
        let rate16 = nested(
            NL80211_STA_INFO_RX_BITRATE,
            &[(NL80211_RATE_INFO_BITRATE, 1200u16.to_ne_bytes().to_vec())],
        );
        let rate32 = nested(
            NL80211_STA_INFO_TX_BITRATE,
            &[
                (NL80211_RATE_INFO_BITRATE, 0u16.to_ne_bytes().to_vec()),
                (
                    NL80211_RATE_INFO_BITRATE32,
                    72_060u32.to_ne_bytes().to_vec(),
                ),
            ],
        );
        let station = msg(
            NL80211_CMD_GET_STATION,
            &[
                (NL80211_ATTR_IFINDEX, 7u32.to_ne_bytes().to_vec()),
                (NL80211_ATTR_MAC, vec![0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff]),
                nested(
                    NL80211_ATTR_STA_INFO,
                    &[
                        (
                            NL80211_STA_INFO_INACTIVE_TIME,
                            400u32.to_ne_bytes().to_vec(),
                        ),
                        (NL80211_STA_INFO_RX_BYTES, 10u32.to_ne_bytes().to_vec()),
                        (NL80211_STA_INFO_TX_BYTES, 20u32.to_ne_bytes().to_vec()),
                        (
                            NL80211_STA_INFO_RX_BYTES64,
                            5_000_000_000u64.to_ne_bytes().to_vec(),
                        ),
                        (NL80211_STA_INFO_SIGNAL, vec![(-52i8) as u8]),
                        rate16,
                        rate32,
                        (NL80211_STA_INFO_RX_PACKETS, 3u32.to_ne_bytes().to_vec()),
                        (NL80211_STA_INFO_TX_PACKETS, 4u32.to_ne_bytes().to_vec()),
                        (NL80211_STA_INFO_TX_RETRIES, 5u32.to_ne_bytes().to_vec()),
                        (NL80211_STA_INFO_TX_FAILED, 6u32.to_ne_bytes().to_vec()),
                        (
                            NL80211_STA_INFO_CONNECTED_TIME,
                            30u32.to_ne_bytes().to_vec(),
                        ),
                        (NL80211_STA_INFO_BEACON_LOSS, 1u32.to_ne_bytes().to_vec()),
                    ],
                ),
            ],
        );
        // 64-bit bytes where given, else 32-bit; the 32-bit rate field
        // over the 16-bit one; seconds and milliseconds in ns.
        assert_eq!(
            parse_station(&station).unwrap().unwrap(),
            "station aa:bb:cc:dd:ee:ff 30000000000 400000000 120000000 7206000000 -52 5 6 1 5000000000 20 3 4"
        );
        let text = format!(
            "@wlan0 2 5180\n{}\n{}\n",
            parse_bss(&ours).unwrap().unwrap(),
            parse_station(&station).unwrap().unwrap()
        );
        let v = crate::parsed(crate::wifi::parse_into, text.as_bytes());
        assert_eq!(v[0].bss.as_ref().unwrap().ssid, "hé ");
        assert_eq!(v[0].stations[0].transmit_bitrate, 7_206_000_000);
        // A truncated attribute is an error, not a panic.
        let mut bad = station.clone();
        bad.attrs.truncate(bad.attrs.len() - 3);
        assert!(parse_station(&bad).is_err());
    }
}
