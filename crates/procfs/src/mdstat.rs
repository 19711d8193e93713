//! Software RAID state: /proc/mdstat (node_exporter's mdadm collector).
//!
//! ```text
//! Personalities : [raid1] [raid6] [raid5] [raid4]
//! md1 : active raid1 sdb2[2] sda2[0](F)
//!       1046528 blocks super 1.2 [2/1] [U_]
//!       [=>...................]  recovery =  8.5% (89600/1046528) finish=0.1min speed=89600K/sec
//!
//! unused devices: <none>
//! ```
//!
//! Per device: its name and state (`active`, `inactive`, or `recovering`,
//! `resyncing`, `checking` while the sync line says so), disks required,
//! active, failed `(F)` and spare `(S)`, blocks, and blocks synced (all of
//! them unless a sync is running; 0 while one is PENDING or DELAYED).

use serde::Serialize;

use crate::error::{ParseError, ParseErrorKind};
use crate::limits::MAX_ROWS;
use crate::records::err;

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct MdDevice {
    pub name: String,
    pub state: String,
    pub disks_required: u64,
    pub disks_active: u64,
    pub disks_failed: u64,
    pub disks_spare: u64,
    pub blocks: u64,
    pub blocks_synced: u64,
}

fn num(s: &str, line: usize, field: &'static str) -> Result<u64, ParseError> {
    s.parse()
        .map_err(|_| err(line, field, ParseErrorKind::Invalid, "a whole number"))
}

/// `[total/active] [UU_]` in a status line: (total, active).
fn counts(status: &str, line: usize) -> Result<(u64, u64), ParseError> {
    let bad = || {
        err(
            line,
            "disks",
            ParseErrorKind::Invalid,
            "`[total/active] [U_]`",
        )
    };
    let open = status
        .match_indices('[')
        .find(|(i, _)| {
            status[i + 1..]
                .split(']')
                .next()
                .is_some_and(|s| s.contains('/'))
        })
        .ok_or_else(bad)?
        .0;
    let inner = status[open + 1..].split(']').next().ok_or_else(bad)?;
    let (t, a) = inner.split_once('/').ok_or_else(bad)?;
    Ok((num(t, line, "disks")?, num(a, line, "disks")?))
}

/// `(synced/total)` in a sync line.
fn synced(sync: &str, line: usize) -> Result<u64, ParseError> {
    let bad = || {
        err(
            line,
            "sync",
            ParseErrorKind::Invalid,
            "`(synced/total)` blocks",
        )
    };
    let inner = sync
        .split('(')
        .skip(1)
        .filter_map(|s| s.split(')').next())
        .find(|s| s.contains('/'))
        .ok_or_else(bad)?;
    num(inner.split('/').next().ok_or_else(bad)?, line, "sync")
}

pub fn parse_into(buf: &[u8], out: &mut Vec<MdDevice>) -> Result<(), ParseError> {
    out.clear();
    let text = std::str::from_utf8(buf)
        .map_err(|_| err(1, "line", ParseErrorKind::Invalid, "UTF-8 text"))?;
    let lines: Vec<&str> = text.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        let n = i + 1;
        if line.trim().is_empty()
            || line.starts_with([' ', '\t'])
            || line.starts_with("Personalities")
            || line.starts_with("unused")
        {
            continue;
        }
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.len() < 3 || fields[1] != ":" {
            return Err(err(
                n,
                "device",
                ParseErrorKind::Invalid,
                "`mdN : <state> ...`",
            ));
        }
        let status = lines.get(i + 1).ok_or_else(|| {
            err(
                n,
                "blocks",
                ParseErrorKind::Missing,
                "a status line after the device",
            )
        })?;
        if out.len() >= MAX_ROWS {
            return Err(err(
                n,
                "device",
                ParseErrorKind::TooMany,
                "at most 2^20 devices",
            ));
        }
        let blocks = num(
            status.split_whitespace().next().unwrap_or(""),
            n + 1,
            "blocks",
        )?;
        let mut d = MdDevice {
            name: fields[0].to_string(),
            state: fields[2].to_string(),
            disks_failed: line.matches("(F)").count() as u64,
            disks_spare: line.matches("(S)").count() as u64,
            blocks,
            blocks_synced: blocks,
            ..MdDevice::default()
        };
        if line.contains("raid0") || line.contains("linear") {
            let total = line.matches('[').count() as u64;
            (d.disks_required, d.disks_active) = (total, total);
        } else if !line.contains("inactive") {
            (d.disks_required, d.disks_active) = counts(status, n + 1)?;
        }
        let mut j = i + 2;
        if lines.get(j).is_some_and(|l| l.contains("bitmap")) {
            j += 1;
        }
        let sync = lines.get(j).copied().unwrap_or("");
        let (recovering, resyncing, checking) = (
            sync.contains("recovery"),
            sync.contains("resync"),
            sync.contains("check"),
        );
        if recovering || resyncing || checking {
            d.state = if recovering {
                "recovering"
            } else if checking {
                "checking"
            } else {
                "resyncing"
            }
            .to_string();
            d.blocks_synced = if sync.contains("PENDING") || sync.contains("DELAYED") {
                0
            } else {
                synced(sync, j + 1)?
            };
        }
        out.push(d);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const MDSTAT: &str = "Personalities : [raid1] [raid6] [raid5] [raid4] [raid0] [linear]
md3 : active raid6 sda1[8] sdh1[7] sdg1[6] sdf1[5] sde1[11] sdd1[3] sdc1[10] sdb1[9]
      5853468288 blocks super 1.2 level 6, 64k chunk, algorithm 2 [8/8] [UUUUUUUU]

md127 : active raid1 sdi2[0] sdj2[1](F) sdk2[2](S)
      312319552 blocks [2/1] [U_]
      bitmap: 0/3 pages [0KB], 65536KB chunk
      [=>...................]  recovery =  8.5% (26547712/312319552) finish=10.1min speed=89600K/sec

md0 : active raid0 sdb[1] sda[0]
      781156352 blocks super 1.2 512k chunks

md4 : inactive sdc[0](S)
      4883770384 blocks super 1.2

md6 : active raid1 sdb2[2] sda2[0]
      195310144 blocks [2/2] [UU]
      \tresync=DELAYED

unused devices: <none>
";

    #[test]
    fn exact_values() {
        let v = crate::parsed(parse_into, MDSTAT.as_bytes());
        let names: Vec<_> = v.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(names, ["md3", "md127", "md0", "md4", "md6"]);
        assert_eq!(
            (v[0].disks_required, v[0].disks_active, v[0].blocks),
            (8, 8, 5853468288)
        );
        assert_eq!(v[0].blocks_synced, 5853468288);
        let r = &v[1];
        assert_eq!(r.state, "recovering");
        assert_eq!(
            (
                r.disks_required,
                r.disks_active,
                r.disks_failed,
                r.disks_spare
            ),
            (2, 1, 1, 1)
        );
        assert_eq!(r.blocks_synced, 26547712);
        assert_eq!(
            (v[2].disks_required, v[2].disks_active, v[2].state.as_str()),
            (2, 2, "active")
        );
        assert_eq!(
            (v[3].state.as_str(), v[3].disks_active, v[3].disks_spare),
            ("inactive", 0, 1)
        );
        assert_eq!((v[4].state.as_str(), v[4].blocks_synced), ("resyncing", 0));
    }

    #[test]
    fn bad_lines_are_named() {
        let mut v = Vec::new();
        let e = parse_into(b"md0 active\n", &mut v).unwrap_err();
        assert_eq!((e.line, e.field), (1, "device"));
        let e = parse_into(
            b"md0 : active raid1 sda[0]\n      lots of blocks [2/2] [UU]\n",
            &mut v,
        )
        .unwrap_err();
        assert_eq!((e.line, e.field), (2, "blocks"));
        let e = parse_into(
            b"md0 : active raid1 sda[0]\n      10 blocks [x/2] [UU]\n",
            &mut v,
        )
        .unwrap_err();
        assert_eq!((e.line, e.field), (2, "disks"));
        parse_into(b"Personalities : \nunused devices: <none>\n", &mut v).unwrap();
        assert!(v.is_empty());
    }
}
