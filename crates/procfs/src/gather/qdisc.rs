//! The root qdiscs from the kernel's netlink dump (RTM_GETQDISC), written
//! as `crate::qdisc` documents. Messages are built and decoded with
//! `netlink-packet-route` and sent on a `netlink-sys` socket: the
//! rust-netlink project's crates, kept current with the kernel's
//! attributes, with nothing asynchronous underneath. Or, for
//! node_exporter's end-to-end test, from its fixture (`results.json`,
//! the `ema/qdisc` library's records, with `--collector.qdisc.fixtures`).

use std::io::Write;
use std::path::Path;

use netlink_packet_core::{
    NLM_F_DUMP, NLM_F_REQUEST, NetlinkHeader, NetlinkMessage, NetlinkPayload,
};
use netlink_packet_route::RouteNetlinkMessage;
use netlink_packet_route::tc::{TcAttribute, TcHandle, TcMessage, TcStats2};
use netlink_sys::{Socket, SocketAddr, protocols::NETLINK_ROUTE};

use super::Gatherer;

/// A qdisc's counters, in the text's order.
#[derive(Default)]
struct Counts {
    kind: String,
    v: [u64; 7],
}

fn other(e: impl std::fmt::Display) -> std::io::Error {
    std::io::Error::other(format!("netlink: {e}"))
}

impl Gatherer {
    pub(super) fn qdisc(&mut self) -> std::io::Result<()> {
        if let Some(dir) = self.options.qdisc_fixtures.clone() {
            return self.qdisc_fixture(&dir);
        }
        let mut socket = Socket::new(NETLINK_ROUTE)?;
        socket.bind_auto()?;
        socket.connect(&SocketAddr::new(0, 0))?;
        let mut req = NetlinkMessage::new(
            NetlinkHeader::default(),
            NetlinkPayload::from(RouteNetlinkMessage::GetQueueDiscipline(TcMessage::default())),
        );
        req.header.flags = NLM_F_DUMP | NLM_F_REQUEST;
        req.header.sequence_number = 1;
        req.finalize();
        let mut out = vec![0; req.buffer_len()];
        req.serialize(&mut out);
        socket.send(&out, 0)?;
        let mut buf = vec![0u8; 64 << 10];
        let mut qdiscs = 0usize;
        loop {
            let n = socket.recv(&mut &mut buf[..], 0)?;
            let mut at = 0;
            while at < n {
                let msg: NetlinkMessage<RouteNetlinkMessage> =
                    NetlinkMessage::deserialize(&buf[at..n]).map_err(other)?;
                let len = msg.header.length as usize;
                match msg.payload {
                    NetlinkPayload::Done(_) => return Ok(()),
                    NetlinkPayload::Error(e) => return Err(other(format!("{e:?}"))),
                    NetlinkPayload::InnerMessage(RouteNetlinkMessage::NewQueueDiscipline(m))
                        if m.header.parent == TcHandle::ROOT =>
                    {
                        qdiscs += 1;
                        if qdiscs > crate::limits::MAX_ROWS {
                            return Err(other("more than 2^20 qdiscs"));
                        }
                        self.qdisc_line(m);
                    }
                    _ => {}
                }
                if len == 0 {
                    break;
                }
                at += len;
            }
        }
    }

    /// One root qdisc's line: its device's name (a device gone since
    /// the dump is left out), kind and counters. TCA_STATS2's queue
    /// counters, as node_exporter's library reads them; its basic ones
    /// and the legacy TCA_STATS agree.
    fn qdisc_line(&mut self, m: TcMessage) {
        let Some(device) = if_name(m.header.index) else {
            return;
        };
        let mut c = Counts::default();
        for a in m.attributes {
            match a {
                TcAttribute::Kind(k) => c.kind = k,
                TcAttribute::Stats2(s) => {
                    for s in s {
                        match s {
                            TcStats2::Basic(b) => {
                                c.v[0] = b.bytes;
                                c.v[1] = u64::from(b.packets);
                            }
                            TcStats2::Queue(q) => {
                                c.v[2] = u64::from(q.drops);
                                c.v[3] = u64::from(q.requeues);
                                c.v[4] = u64::from(q.overlimits);
                                c.v[5] = u64::from(q.qlen);
                                c.v[6] = u64::from(q.backlog);
                            }
                            _ => {}
                        }
                    }
                }
                _ => {}
            }
        }
        if c.kind.is_empty() || c.kind.contains(char::is_whitespace) {
            return;
        }
        self.qdisc_write(&device, &c.kind, c.v);
    }

    /// One qdisc's line of the text.
    fn qdisc_write(&mut self, device: &str, kind: &str, v: [u64; 7]) {
        let _ = write!(self.scratch, "{device} {kind}");
        for v in v {
            let _ = write!(self.scratch, " {v}");
        }
        self.scratch.push(b'\n');
    }

    /// node_exporter's fixture: `results.json` in `dir`.
    fn qdisc_fixture(&mut self, dir: &Path) -> std::io::Result<()> {
        #[derive(serde::Deserialize, Default)]
        #[serde(rename_all = "PascalCase", default)]
        struct Info {
            iface_name: String,
            parent: u32,
            kind: String,
            bytes: u64,
            packets: u64,
            drops: u64,
            requeues: u64,
            overlimits: u64,
            qlen: u64,
            backlog: u64,
        }
        let path = dir.join("results.json");
        let text = std::fs::read(&path)?;
        let all: Vec<Info> = serde_json::from_slice(&text).map_err(|e| {
            std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("{}: {e}", path.display()),
            )
        })?;
        for q in all.iter().filter(|q| q.parent == 0) {
            if q.iface_name.contains(char::is_whitespace) || q.kind.contains(char::is_whitespace) {
                continue;
            }
            let v = [
                q.bytes,
                q.packets,
                q.drops,
                q.requeues,
                q.overlimits,
                q.qlen,
                q.backlog,
            ];
            self.qdisc_write(&q.iface_name, &q.kind, v);
        }
        Ok(())
    }
}

/// A network device's name by index (SIOCGIFNAME).
fn if_name(index: i32) -> Option<String> {
    let index = u32::try_from(index).ok()?;
    let mut name = [0 as libc::c_char; libc::IF_NAMESIZE];
    // SAFETY: `name` has IF_NAMESIZE bytes, as the call requires.
    let p = unsafe { libc::if_indextoname(index, name.as_mut_ptr()) };
    if p.is_null() {
        return None;
    }
    // SAFETY: on success the kernel's name, nul-terminated, is in `name`.
    let s = unsafe { std::ffi::CStr::from_ptr(name.as_ptr()) };
    let s = s.to_str().ok()?;
    (!s.is_empty() && !s.contains(char::is_whitespace)).then(|| s.to_string())
}
