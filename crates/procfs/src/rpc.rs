//! The kernel's NFS statistics: `/proc/net/rpc/nfs` (the client) and
//! `/proc/net/rpc/nfsd` (the server). Each line is a key and numbers:
//! `net 18628 0 18628 6`, `rpc 4329785 0 4338291`, `proc3 22 1 4084749 ...`
//! (a `procN` line starts with the count of the numbers after it).
//!
//! Each line is kept as its key and its whole numbers, up to the first
//! that is not one (`th 8 0 0.000 ...` keeps 8 and 0).

use serde::Serialize;

use crate::error::{ParseError, ParseErrorKind};
use crate::records::{self, err, set, slot};

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct RpcStats {
    /// `(key, numbers)` per line, in file order.
    pub rows: Vec<(String, Vec<u64>)>,
}

impl RpcStats {
    /// The numbers of line `key`.
    pub fn get(&self, key: &str) -> Option<&[u64]> {
        self.rows
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_slice())
    }

    /// Number `i` of line `key`; 0 where the line or the number is absent
    /// (as node_exporter reports a line a kernel no longer prints).
    pub fn at(&self, key: &str, i: usize) -> u64 {
        self.get(key).and_then(|v| v.get(i)).copied().unwrap_or(0)
    }

    /// The per-procedure counts of a `procN` line (after its count).
    pub fn procedures(&self, key: &str) -> &[u64] {
        self.get(key).and_then(|v| v.get(1..)).unwrap_or(&[])
    }
}

/// Numbers one line may hold (proc4ops has about 80).
const MAX_NUMBERS: usize = 4096;

pub fn parse_into(buf: &[u8], out: &mut RpcStats) -> Result<(), ParseError> {
    let mut used = 0;
    for l in records::lines(buf) {
        let (n, text) = l?;
        let mut w = text.split_whitespace();
        let Some(key) = w.next() else { continue };
        if used >= crate::limits::MAX_ROWS {
            return Err(err(
                n,
                "line",
                ParseErrorKind::TooMany,
                "at most 2^20 lines",
            ));
        }
        let row = slot(&mut out.rows, used);
        used += 1;
        set(&mut row.0, key);
        row.1.clear();
        for v in w.map_while(|v| v.parse::<u64>().ok()) {
            if row.1.len() >= MAX_NUMBERS {
                return Err(err(
                    n,
                    "value",
                    ParseErrorKind::TooMany,
                    "at most 4096 numbers a line",
                ));
            }
            row.1.push(v);
        }
        if row.1.is_empty() {
            return Err(err(
                n,
                "value",
                ParseErrorKind::Missing,
                "`<key> <number> ...`",
            ));
        }
    }
    out.rows.truncate(used);
    Ok(())
}

/// node_exporter's names of the NFSv2 procedures, in the file's order.
pub const V2: [&str; 18] = [
    "Null", "GetAttr", "SetAttr", "Root", "Lookup", "ReadLink", "Read", "WrCache", "Write",
    "Create", "Remove", "Rename", "Link", "SymLink", "MkDir", "RmDir", "ReadDir", "FsStat",
];

/// NFSv3's procedures.
pub const V3: [&str; 22] = [
    "Null",
    "GetAttr",
    "SetAttr",
    "Lookup",
    "Access",
    "ReadLink",
    "Read",
    "Write",
    "Create",
    "MkDir",
    "SymLink",
    "MkNod",
    "Remove",
    "RmDir",
    "Rename",
    "Link",
    "ReadDir",
    "ReadDirPlus",
    "FsStat",
    "FsInfo",
    "PathConf",
    "Commit",
];

/// The client's NFSv4 procedures (`proc4` of /proc/net/rpc/nfs), by
/// position: the kernel counts each call at its procedure's `p_statidx`,
/// the `NFSPROC4_CLNT_*` enum of include/linux/nfs4.h (`fs/nfs/nfs4xdr.c`'s
/// `PROC` macro sets `[NFSPROC4_CLNT_##proc] = { .p_statidx =
/// NFSPROC4_CLNT_##proc }`), so the enum's order is the line's, whatever
/// the order `nfs4_procedures[]` lists them in: `..., RECLAIM_COMPLETE,
/// LAYOUTGET, GETDEVICEINFO, LAYOUTCOMMIT, ...` (44, 45). Names as
/// node_exporter gives them.
pub const CLIENT_V4: [&str; 59] = [
    "Null",
    "Read",
    "Write",
    "Commit",
    "Open",
    "OpenConfirm",
    "OpenNoattr",
    "OpenDowngrade",
    "Close",
    "Setattr",
    "FsInfo",
    "Renew",
    "SetClientID",
    "SetClientIDConfirm",
    "Lock",
    "Lockt",
    "Locku",
    "Access",
    "Getattr",
    "Lookup",
    "LookupRoot",
    "Remove",
    "Rename",
    "Link",
    "Symlink",
    "Create",
    "Pathconf",
    "StatFs",
    "ReadLink",
    "ReadDir",
    "ServerCaps",
    "DelegReturn",
    "GetACL",
    "SetACL",
    "FsLocations",
    "ReleaseLockowner",
    "Secinfo",
    "FsidPresent",
    "ExchangeID",
    "CreateSession",
    "DestroySession",
    "Sequence",
    "GetLeaseTime",
    "ReclaimComplete",
    "LayoutGet",
    "GetDeviceInfo",
    "LayoutCommit",
    "LayoutReturn",
    "SecinfoNoName",
    "TestStateID",
    "FreeStateID",
    "GetDeviceList",
    "BindConnToSession",
    "DestroyClientID",
    "Seek",
    "Allocate",
    "DeAllocate",
    "LayoutStats",
    "Clone",
];

/// The server's NFSv4 operations (`proc4ops` of /proc/net/rpc/nfsd), by
/// position: fs/nfsd/stats.c prints one count per operation number, `enum
/// nfs_opnum4` of include/linux/nfs4.h (`OP_ACCESS = 3` ... `OP_SETATTR =
/// 34`, `OP_SETCLIENTID = 35`, `OP_SETCLIENTID_CONFIRM = 36`, `OP_VERIFY =
/// 37`, `OP_WRITE = 38`, `OP_RELEASE_LOCKOWNER = 39`); `None` for those
/// node_exporter does not report (0-2 are not operations; PUTPUBFH and
/// PUTROOTFH). node_exporter 1.5 (Debian 12) leaves SetClientID and
/// SetClientIDConfirm out and reports Verify, Write and RelLockOwner from
/// positions 35-37, two places early; later releases name all five as
/// here.
pub const SERVER_V4_OPS: [Option<&str>; 40] = [
    None,
    None,
    None,
    Some("Access"),
    Some("Close"),
    Some("Commit"),
    Some("Create"),
    Some("DelegPurge"),
    Some("DelegReturn"),
    Some("GetAttr"),
    Some("GetFH"),
    Some("Link"),
    Some("Lock"),
    Some("Lockt"),
    Some("Locku"),
    Some("Lookup"),
    Some("LookupRoot"),
    Some("Nverify"),
    Some("Open"),
    Some("OpenAttr"),
    Some("OpenConfirm"),
    Some("OpenDgrd"),
    Some("PutFH"),
    None,
    None,
    Some("Read"),
    Some("ReadDir"),
    Some("ReadLink"),
    Some("Remove"),
    Some("Rename"),
    Some("Renew"),
    Some("RestoreFH"),
    Some("SaveFH"),
    Some("SecInfo"),
    Some("SetAttr"),
    Some("SetClientID"),
    Some("SetClientIDConfirm"),
    Some("Verify"),
    Some("Write"),
    Some("RelLockOwner"),
];

#[cfg(test)]
mod tests {
    use super::*;

    /// Positions from the kernel's tables (include/linux/nfs4.h: the
    /// client's `NFSPROC4_CLNT_*` enum and the server's `nfs_opnum4`).
    #[test]
    fn operation_names_sit_where_the_kernel_counts_them() {
        let at = |t: &[&str], name: &str| t.iter().position(|n| *n == name);
        assert_eq!(at(&CLIENT_V4, "SetClientID"), Some(12));
        assert_eq!(at(&CLIENT_V4, "Secinfo"), Some(36));
        assert_eq!(at(&CLIENT_V4, "FsidPresent"), Some(37));
        assert_eq!(at(&CLIENT_V4, "ReclaimComplete"), Some(43));
        assert_eq!(at(&CLIENT_V4, "LayoutGet"), Some(44));
        assert_eq!(at(&CLIENT_V4, "GetDeviceInfo"), Some(45));
        assert_eq!(at(&CLIENT_V4, "Clone"), Some(58));
        let server: Vec<&str> = SERVER_V4_OPS.iter().map(|n| n.unwrap_or("")).collect();
        for (name, op) in [
            ("Access", 3),
            ("PutFH", 22),
            ("Read", 25),
            ("SetAttr", 34),
            ("SetClientID", 35),
            ("SetClientIDConfirm", 36),
            ("Verify", 37),
            ("Write", 38),
            ("RelLockOwner", 39),
        ] {
            assert_eq!(at(&server, name), Some(op), "{name}");
        }
    }

    #[test]
    fn exact_values() {
        let mut s = RpcStats::default();
        parse_into(
            b"rc 0 6 18622\nth 8 0 0.000 0.000\nnet 18628 0 18628 6\nproc3 22 1 4084749 29200\n",
            &mut s,
        )
        .unwrap();
        assert_eq!(s.get("rc"), Some(&[0, 6, 18622][..]));
        assert_eq!(s.get("th"), Some(&[8, 0][..]));
        assert_eq!(s.at("net", 3), 6);
        assert_eq!(s.at("ra", 0), 0);
        assert_eq!(s.procedures("proc3"), [1, 4084749, 29200]);
        assert_eq!(s.procedures("proc2"), [0u64; 0]);
        assert_eq!(parse_into(b"rc x\n", &mut s).unwrap_err().field, "value");
        // A warm parse of fewer lines drops the rest.
        parse_into(b"rc 1\n", &mut s).unwrap();
        assert_eq!(s.rows.len(), 1);
    }
}
