//! NFS client statistics per mount: /proc/self/mountstats, with
//! /proc/self/mountinfo after it for each mount's server address (the
//! `addr=` of its superblock options; both files list the mounts in the
//! same order). node_exporter's mountstats collector reads the same two.
//!
//! mountstats gives a `device D mounted on M with fstype T [statvers=V]`
//! line per mount (`no device mounted on ...` for one without a device
//! name); an NFS mount's statistics follow it, indented: `age:`, `bytes:`,
//! `events:`, one `xprt:` line per transport, then `per-op statistics` and
//! a line per RPC operation. mountinfo's lines begin with the mount's id,
//! a number, which no mountstats line does.

use serde::Serialize;

use crate::error::{ParseError, ParseErrorKind};
use crate::records::{self, err, set, slot};

/// Mounts at most (a container host has thousands).
const MAX_MOUNTS: usize = 1 << 16;
/// Transports and operations of one mount at most (NFSv4.2 has about 70
/// operations).
const MAX_OPS: usize = 256;

/// The counters of an `xprt:` line, in the layout of a TCP transport
/// (statvers 1.1); a UDP transport has no connection counters (0 here),
/// and RDMA's own counters after these are not kept.
pub const TRANSPORT_FIELDS: [&str; 13] = [
    "port",
    "bind",
    "connect",
    "connect_idle_time",
    "idle_time_seconds",
    "sends",
    "receives",
    "bad_transaction_ids",
    "cumulative_active_requests",
    "cumulative_backlog",
    "maximum_rpc_slots_used",
    "cumulative_sending_queue",
    "cumulative_pending_queue",
];

/// The counters of a per-operation line: requests, transmissions, major
/// timeouts, bytes sent, bytes received, and cumulative queue, response
/// and request times in milliseconds.
pub const OPERATION_FIELDS: usize = 8;

/// The `bytes:` counters: read and written through read() and write(),
/// O_DIRECT reads and writes, from and to the server, and pages read and
/// written.
pub const BYTES_FIELDS: usize = 8;

/// The `events:` counters (the kernel's `nfs_stat_eventcounters`, in its
/// order: inode and dentry revalidations, data and attribute
/// invalidations, the VFS calls, truncations, extensions, silly renames,
/// short reads and writes, jukebox delays, pNFS reads and writes).
pub const EVENT_FIELDS: usize = 27;

/// One transport of a mount.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct NfsTransport {
    /// `tcp`, `udp` or `rdma`.
    pub protocol: String,
    /// [`TRANSPORT_FIELDS`], in order.
    pub counters: [u64; 13],
}

/// One RPC operation of a mount.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct NfsOperation {
    pub name: String,
    /// [`OPERATION_FIELDS`] counters, in order.
    pub counters: [u64; OPERATION_FIELDS],
}

/// One NFS mount's statistics.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NfsMount {
    /// The export (`server:/path`).
    pub device: String,
    pub mount_point: String,
    /// `nfs` or `nfs4`.
    pub fstype: String,
    /// The server's address from mountinfo (`addr=`); empty when absent.
    pub addr: String,
    pub age_seconds: u64,
    pub bytes: [u64; BYTES_FIELDS],
    /// [`EVENT_FIELDS`] counters (a kernel that prints fewer leaves the
    /// rest 0).
    pub events: [u64; EVENT_FIELDS],
    pub transports: Vec<NfsTransport>,
    pub operations: Vec<NfsOperation>,
    /// The mount's place among all mounts (mountinfo's line).
    #[serde(skip)]
    ordinal: usize,
}

impl Default for NfsMount {
    fn default() -> Self {
        NfsMount {
            device: String::new(),
            mount_point: String::new(),
            fstype: String::new(),
            addr: String::new(),
            age_seconds: 0,
            bytes: [0; BYTES_FIELDS],
            events: [0; EVENT_FIELDS],
            transports: Vec::new(),
            operations: Vec::new(),
            ordinal: 0,
        }
    }
}

/// Whole numbers into `out` (missing ones left 0; more than it holds is
/// an error).
fn numbers<'a>(
    n: usize,
    words: impl Iterator<Item = &'a str>,
    out: &mut [u64],
    field: &'static str,
) -> Result<usize, ParseError> {
    out.fill(0);
    let mut used = 0;
    for w in words {
        let slot = out.get_mut(used).ok_or_else(|| {
            err(
                n,
                field,
                ParseErrorKind::TooMany,
                "the kernel's count of numbers",
            )
        })?;
        *slot = w
            .parse()
            .map_err(|_| err(n, field, ParseErrorKind::Invalid, "whole numbers"))?;
        used += 1;
    }
    Ok(used)
}

/// Parses mountstats then mountinfo into `out`: the NFS mounts, each with
/// its statistics and server address.
pub fn parse_into(buf: &[u8], out: &mut Vec<NfsMount>) -> Result<(), ParseError> {
    // NFS mounts so far; mounts of any kind so far; whether the lines now
    // belong to the last NFS mount, and are its operations.
    let (mut used, mut mounts) = (0usize, 0usize);
    let (mut open, mut in_ops) = (false, false);
    // mountinfo: lines seen, and the next NFS mount to give an address.
    let (mut infos, mut next_addr) = (0usize, 0usize);
    for l in records::lines(buf) {
        let (n, text) = l?;
        if text.starts_with(|c: char| c.is_ascii_digit()) {
            // A mountinfo line: `... - <fstype> <source> <super options>`.
            if let Some(m) = out[..used]
                .get_mut(next_addr)
                .filter(|m| m.ordinal == infos)
            {
                let opts = text
                    .split_once(" - ")
                    .and_then(|(_, r)| r.split_whitespace().nth(2))
                    .unwrap_or("");
                let addr = opts.split(',').find_map(|o| o.strip_prefix("addr="));
                set(&mut m.addr, addr.unwrap_or(""));
                next_addr += 1;
            }
            infos += 1;
            continue;
        }
        if let Some(rest) = text
            .strip_prefix("device ")
            .or_else(|| text.strip_prefix("no device "))
        {
            if mounts >= MAX_MOUNTS {
                return Err(err(
                    n,
                    "device",
                    ParseErrorKind::TooMany,
                    "at most 65536 mounts",
                ));
            }
            mounts += 1;
            in_ops = false;
            // `D mounted on M with fstype T statvers=V` (D absent after
            // `no device`).
            let rest = if text.starts_with("no ") {
                rest.strip_prefix("mounted on ").map(|r| ("", r))
            } else {
                rest.split_once(" mounted on ")
            };
            let Some((device, rest)) = rest else {
                return Err(err(
                    n,
                    "device",
                    ParseErrorKind::Invalid,
                    "`device D mounted on M with fstype T`",
                ));
            };
            let Some((mount_point, rest)) = rest.rsplit_once(" with fstype ") else {
                return Err(err(
                    n,
                    "device",
                    ParseErrorKind::Invalid,
                    "`device D mounted on M with fstype T`",
                ));
            };
            let mut w = rest.split_whitespace();
            let fstype = w.next().unwrap_or("");
            let stats = w.next().is_some_and(|v| v.starts_with("statvers="));
            open = stats && (fstype == "nfs" || fstype == "nfs4");
            if open {
                let m = slot(out, used);
                used += 1;
                set(&mut m.device, device);
                set(&mut m.mount_point, mount_point);
                set(&mut m.fstype, fstype);
                m.addr.clear();
                m.age_seconds = 0;
                m.bytes = [0; BYTES_FIELDS];
                m.events = [0; EVENT_FIELDS];
                m.transports.clear();
                m.operations.clear();
                m.ordinal = mounts - 1;
            }
            continue;
        }
        if !open {
            continue;
        }
        let m = &mut out[used - 1];
        let mut w = text.split_whitespace();
        let Some(first) = w.next() else { continue };
        match first {
            "age:" => {
                let mut age = [0];
                numbers(n, w.take(1), &mut age, "age")?;
                m.age_seconds = age[0];
            }
            "bytes:" => {
                numbers(n, w, &mut m.bytes, "bytes")?;
            }
            "events:" => {
                numbers(n, w.take(EVENT_FIELDS), &mut m.events, "events")?;
            }
            "xprt:" => {
                if m.transports.len() >= MAX_OPS {
                    return Err(err(
                        n,
                        "xprt",
                        ParseErrorKind::TooMany,
                        "at most 256 transports",
                    ));
                }
                let protocol = w.next().unwrap_or("");
                let mut raw = [0u64; 13];
                numbers(n, w.take(13), &mut raw, "xprt")?;
                let counters = match protocol {
                    // port, bind, then sends... (no connection counters).
                    "udp" => {
                        let mut c = [0u64; 13];
                        c[..2].copy_from_slice(&raw[..2]);
                        c[5..].copy_from_slice(&raw[2..10]);
                        c
                    }
                    // tcp's 1.1 layout; rdma's first ten are tcp's 1.0.
                    "rdma" => {
                        let mut c = [0u64; 13];
                        c[..10].copy_from_slice(&raw[..10]);
                        c
                    }
                    _ => raw,
                };
                m.transports.push(NfsTransport {
                    protocol: protocol.to_string(),
                    counters,
                });
            }
            "per-op" => in_ops = true,
            op if in_ops && op.ends_with(':') => {
                if m.operations.len() >= MAX_OPS {
                    return Err(err(
                        n,
                        "operation",
                        ParseErrorKind::TooMany,
                        "at most 256 operations",
                    ));
                }
                let mut counters = [0u64; OPERATION_FIELDS];
                let got = numbers(n, w.take(OPERATION_FIELDS), &mut counters, "operation")?;
                if got < OPERATION_FIELDS {
                    return Err(err(
                        n,
                        "operation",
                        ParseErrorKind::Missing,
                        "8 counters an operation",
                    ));
                }
                m.operations.push(NfsOperation {
                    name: op.trim_end_matches(':').to_string(),
                    counters,
                });
            }
            _ => {}
        }
    }
    out.truncate(used);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &[u8] = b"device rootfs mounted on / with fstype rootfs
device 10.0.0.1:/srv mounted on /mnt/a b with fstype nfs4 statvers=1.1
\topts:\trw,vers=4.0
\tage:\t13968
\tbytes:\t1 2 3 4 5 6 7 8
\tevents:\t52 226 0 0 1 13 398 0 0 331 0 47 0 0 77 0 0 77 0 0 0 0 0 0 0 0 9
\tRPC iostats version: 1.0  p/v: 100003/4 (nfs)
\txprt:\ttcp 832 0 1 0 11 6428 6428 0 12154 0 24 26 5726
\tper-op statistics
\t        NULL: 0 0 0 0 0 0 0 0
\t        READ: 1298 1298 0 207680 1210292152 6 79386 79407 3

no device mounted on /x with fstype tmpfs
device 10.0.0.1:/srv mounted on /mnt/b with fstype nfs statvers=1.1
\txprt:\tudp 832 0 6428 6428 0 12154 0 24 26 5726
1 1 0:5 / /root rw - rootfs rootfs rw
2 1 0:42 / /mnt/a\\040b rw - nfs4 10.0.0.1:/srv rw,vers=4.0,addr=10.0.0.1,local_lock=none
3 1 0:43 / /x rw - tmpfs none rw
4 1 0:44 / /mnt/b rw - nfs 10.0.0.1:/srv rw,vers=3,mountaddr=10.0.0.9,addr=10.0.0.2
";

    #[test]
    fn nfs_mounts_with_their_servers_addresses() {
        let mut v = crate::parsed(parse_into, TEXT);
        assert_eq!(v.len(), 2);
        let a = &v[0];
        assert_eq!(
            (a.device.as_str(), a.mount_point.as_str()),
            ("10.0.0.1:/srv", "/mnt/a b")
        );
        assert_eq!((a.fstype.as_str(), a.addr.as_str()), ("nfs4", "10.0.0.1"));
        assert_eq!(a.age_seconds, 13968);
        assert_eq!(a.bytes, [1, 2, 3, 4, 5, 6, 7, 8]);
        assert_eq!((a.events[0], a.events[26]), (52, 9));
        assert_eq!(a.transports[0].protocol, "tcp");
        assert_eq!(a.transports[0].counters[12], 5726);
        assert_eq!(a.operations.len(), 2);
        assert_eq!(a.operations[1].name, "READ");
        assert_eq!(a.operations[1].counters[7], 79407);
        // UDP has no connection counters: they read 0, sends are sends.
        let b = &v[1];
        assert_eq!(b.addr, "10.0.0.2");
        assert_eq!(b.transports[0].counters[..6], [832, 0, 0, 0, 0, 6428]);
        assert_eq!(b.transports[0].counters[12], 5726);
        // A warm parse of fewer mounts drops the rest.
        parse_into(
            b"device s:/e mounted on /m with fstype nfs statvers=1.1\n",
            &mut v,
        )
        .unwrap();
        assert_eq!(v.len(), 1);
        assert!(v[0].transports.is_empty() && v[0].addr.is_empty());
    }

    #[test]
    fn bad_lines_name_what_was_wrong() {
        let mut v = Vec::new();
        let e = parse_into(
            b"device s:/e mounted on /m with fstype nfs statvers=1.1\n\tbytes:\t1 x\n",
            &mut v,
        )
        .unwrap_err();
        assert_eq!(e.field, "bytes");
        let e = parse_into(b"device s:/e mounted on /m with fstype nfs statvers=1.1\n\tbytes:\t1 2 3 4 5 6 7 8 9\n", &mut v)
            .unwrap_err();
        assert_eq!(e.field, "bytes");
        let e = parse_into(b"device nowhere\n", &mut v).unwrap_err();
        assert_eq!(e.field, "device");
        let e = parse_into(b"device s:/e mounted on /m with fstype nfs statvers=1.1\n\tper-op statistics\n\tNULL: 1 2\n", &mut v)
            .unwrap_err();
        assert_eq!(e.field, "operation");
        // Statistics of a mount that is not NFS are not read.
        parse_into(
            b"device a mounted on /a with fstype ext4\n\tbytes:\tx\n",
            &mut v,
        )
        .unwrap();
        assert!(v.is_empty());
    }
}
