//! The memory manager's detail, as node_exporter's opt-in collectors read
//! it: free blocks per order (`/proc/buddyinfo`), zones and watermarks
//! (`/proc/zoneinfo`), slab caches (`/proc/slabinfo`), same-page merging
//! (`/sys/kernel/mm/ksm/`), the hung-task detector's count
//! (`/proc/sys/kernel/hung_task_detect_count`), and the limits on tasks
//! (`/proc/sys/kernel/pid_max`, `threads-max`).
//!
//! KSM is gathered: one `<file> <value>` line per file of [`KSM_FILES`]
//! the directory has.

use serde::Serialize;

use crate::error::{ParseError, ParseErrorKind};
use crate::limits::MAX_ROWS;
use crate::records::{self, err, set, slot};

/// One zone's free blocks, by order (`free[k]` blocks of 2^k pages).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct BuddyZone {
    pub node: u32,
    pub zone: String,
    pub free: Vec<u64>,
}

/// Orders one zone may list (MAX_ORDER is 10 or 12 on today's kernels).
const MAX_ORDERS: usize = 64;

fn number<T: std::str::FromStr>(
    n: usize,
    v: &str,
    field: &'static str,
    expected: &'static str,
) -> Result<T, ParseError> {
    v.parse()
        .map_err(|_| err(n, field, ParseErrorKind::Invalid, expected))
}

/// `Node 0, zone   Normal` as (node, zone, the words after the zone's name).
fn node_zone<'a>(
    n: usize,
    text: &'a str,
) -> Result<(u32, &'a str, std::str::SplitWhitespace<'a>), ParseError> {
    let mut w = text.split_whitespace();
    let (Some("Node"), Some(node), Some("zone"), Some(zone)) =
        (w.next(), w.next(), w.next(), w.next())
    else {
        return Err(err(
            n,
            "zone",
            ParseErrorKind::Invalid,
            "`Node <n>, zone <name>`",
        ));
    };
    let node = node
        .strip_suffix(',')
        .ok_or_else(|| err(n, "node", ParseErrorKind::Invalid, "`<n>,`"))?;
    Ok((number(n, node, "node", "a node number")?, zone, w))
}

/// Parses /proc/buddyinfo: `Node 0, zone   Normal  11805  11684 ...`.
pub fn parse_buddyinfo(buf: &[u8], out: &mut Vec<BuddyZone>) -> Result<(), ParseError> {
    let mut used = 0;
    for l in records::lines(buf) {
        let (n, text) = l?;
        if used >= MAX_ROWS {
            return Err(err(
                n,
                "zone",
                ParseErrorKind::TooMany,
                "at most 2^20 zones",
            ));
        }
        let (node, zone, counts) = node_zone(n, text)?;
        let z = slot(out, used);
        used += 1;
        z.node = node;
        set(&mut z.zone, zone);
        z.free.clear();
        for c in counts {
            if z.free.len() >= MAX_ORDERS {
                return Err(err(n, "free", ParseErrorKind::TooMany, "at most 64 orders"));
            }
            z.free.push(number(n, c, "free", "a count of free blocks")?);
        }
    }
    out.truncate(used);
    Ok(())
}

/// One zone of /proc/zoneinfo.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Zone {
    pub node: u32,
    pub zone: String,
    /// Every `<key> <value>` line of the zone, as printed: its watermarks
    /// (`min`, `low`, `high`), sizes (`spanned`, `present`, `managed`),
    /// `nr_*` and `numa_*` counts. The first zone of a node also holds the
    /// node's `per-node stats`, as the file prints them there.
    pub values: Vec<(String, u64)>,
    /// `protection: (0, 3019, 12747, ...)`: pages kept back from
    /// allocations that could be served by a higher zone.
    pub protection: Vec<u64>,
}

impl Zone {
    pub fn get(&self, key: &str) -> Option<u64> {
        self.values.iter().find(|(k, _)| k == key).map(|(_, v)| *v)
    }
}

/// Keys one zone may have.
const MAX_ZONE_KEYS: usize = 4096;

/// Parses /proc/zoneinfo. Lines other than a zone's header,
/// `<key> <number>` and `protection: (...)` (`pages free`, `pagesets`,
/// per-CPU `count:` lines, `vm stats threshold`) are skipped.
pub fn parse_zoneinfo(buf: &[u8], out: &mut Vec<Zone>) -> Result<(), ParseError> {
    // Zones and, in the current zone, keys in use.
    let (mut used, mut keys) = (0, 0);
    for l in records::lines(buf) {
        let (n, text) = l?;
        if text.starts_with("Node ") {
            if used >= MAX_ROWS {
                return Err(err(
                    n,
                    "zone",
                    ParseErrorKind::TooMany,
                    "at most 2^20 zones",
                ));
            }
            if let Some(z) = used.checked_sub(1).map(|i| &mut out[i]) {
                z.values.truncate(keys);
            }
            let (node, zone, _) = node_zone(n, text)?;
            let z = slot(out, used);
            used += 1;
            keys = 0;
            z.node = node;
            set(&mut z.zone, zone);
            z.protection.clear();
            continue;
        }
        let t = text.trim_start();
        if let Some(list) = t.strip_prefix("protection:") {
            let z = records::current(&mut out[..used], n, "zone")?;
            let list = list
                .trim()
                .strip_prefix('(')
                .and_then(|l| l.strip_suffix(')'))
                .ok_or_else(|| err(n, "protection", ParseErrorKind::Invalid, "`(a, b, ...)`"))?;
            z.protection.clear();
            for v in list.split(',') {
                if z.protection.len() >= MAX_ORDERS {
                    return Err(err(
                        n,
                        "protection",
                        ParseErrorKind::TooMany,
                        "at most 64 zones",
                    ));
                }
                z.protection
                    .push(number(n, v.trim(), "protection", "a page count")?);
            }
            continue;
        }
        let mut w = t.split_whitespace();
        let (Some(k), Some(v), None) = (w.next(), w.next(), w.next()) else {
            continue;
        };
        if k.ends_with(':') || k == "per-node" {
            continue;
        }
        let z = records::current(&mut out[..used], n, "zone")?;
        if keys >= MAX_ZONE_KEYS {
            return Err(err(
                n,
                "key",
                ParseErrorKind::TooMany,
                "at most 4096 keys a zone",
            ));
        }
        let v = number(n, v, "value", "a whole number")?;
        let e = slot(&mut z.values, keys);
        keys += 1;
        set(&mut e.0, k);
        e.1 = v;
    }
    if let Some(z) = used.checked_sub(1).map(|i| &mut out[i]) {
        z.values.truncate(keys);
    }
    out.truncate(used);
    Ok(())
}

/// One slab cache of /proc/slabinfo.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Slab {
    pub name: String,
    pub active_objects: u64,
    pub objects: u64,
    pub object_size_bytes: u64,
    pub objects_per_slab: u64,
    pub pages_per_slab: u64,
}

/// Parses /proc/slabinfo (version 2.x): the header lines, then `<name>
/// <active_objs> <num_objs> <objsize> <objperslab> <pagesperslab> :
/// tunables ... : slabdata ...` per cache.
pub fn parse_slabinfo(buf: &[u8], out: &mut Vec<Slab>) -> Result<(), ParseError> {
    let mut used = 0;
    for l in records::lines(buf) {
        let (n, text) = l?;
        if n == 1 {
            if !text.starts_with("slabinfo - version: 2.") {
                return Err(err(
                    n,
                    "version",
                    ParseErrorKind::Invalid,
                    "`slabinfo - version: 2.x`",
                ));
            }
            continue;
        }
        if text.starts_with('#') {
            continue;
        }
        if used >= MAX_ROWS {
            return Err(err(
                n,
                "slab",
                ParseErrorKind::TooMany,
                "at most 2^20 caches",
            ));
        }
        let mut w = text.split_whitespace();
        let name = w.next().unwrap_or_default();
        let mut f = [0u64; 5];
        for (i, x) in f.iter_mut().enumerate() {
            let v = w.next().ok_or_else(|| {
                err(
                    n,
                    "slab",
                    ParseErrorKind::Missing,
                    "`<name> <active_objs> <num_objs> <objsize> <objperslab> <pagesperslab>`",
                )
            })?;
            *x = number(n, v, SLAB_FIELDS[i], "a whole number")?;
        }
        let s = slot(out, used);
        used += 1;
        set(&mut s.name, name);
        [
            s.active_objects,
            s.objects,
            s.object_size_bytes,
            s.objects_per_slab,
            s.pages_per_slab,
        ] = f;
    }
    out.truncate(used);
    Ok(())
}

const SLAB_FIELDS: [&str; 5] = [
    "active_objs",
    "num_objs",
    "objsize",
    "objperslab",
    "pagesperslab",
];

/// The files read below `/sys/kernel/mm/ksm/`, in order (node_exporter's
/// ksmd set).
pub const KSM_FILES: [&str; 10] = [
    "full_scans",
    "general_profit",
    "merge_across_nodes",
    "pages_shared",
    "pages_sharing",
    "pages_to_scan",
    "pages_unshared",
    "pages_volatile",
    "run",
    "sleep_millisecs",
];

/// Kernel same-page merging: each of [`KSM_FILES`], `None` where the
/// kernel lacks the file. Signed: `general_profit` (bytes saved less the
/// bookkeeping) falls below zero when merging saves less than it costs.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Ksm {
    pub values: [Option<i64>; KSM_FILES.len()],
}

impl Ksm {
    pub fn get(&self, file: &str) -> Option<i64> {
        let i = KSM_FILES.iter().position(|f| *f == file)?;
        self.values[i]
    }
}

/// Parses the gathered `<file> <value>` lines; files not in [`KSM_FILES`]
/// are skipped.
pub fn parse_ksm(buf: &[u8]) -> Result<Ksm, ParseError> {
    let mut k = Ksm::default();
    for l in records::lines(buf) {
        let (n, text) = l?;
        let (f, v) = text
            .split_once(' ')
            .ok_or_else(|| err(n, "value", ParseErrorKind::Missing, "`<file> <value>`"))?;
        if let Some(i) = KSM_FILES.iter().position(|x| *x == f) {
            k.values[i] = Some(number(n, v.trim(), "value", "a whole number")?);
        }
    }
    Ok(k)
}

/// Parses /proc/sys/kernel/hung_task_detect_count: tasks the detector has
/// found hung since boot.
pub fn parse_hung_tasks(buf: &[u8]) -> Result<u64, ParseError> {
    let text = std::str::from_utf8(buf)
        .map_err(|_| err(1, "count", ParseErrorKind::Invalid, "UTF-8 text"))?;
    number(1, text.trim(), "count", "a whole number")
}

/// The files of the task limits source, in order.
pub const TASK_LIMIT_FILES: [&str; 2] = ["sys/kernel/pid_max", "sys/kernel/threads-max"];

/// The kernel's limits on tasks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct TaskLimits {
    /// The largest PID plus one (`kernel.pid_max`).
    pub pid_max: u64,
    /// Threads the system may hold (`kernel.threads-max`).
    pub threads_max: u64,
}

/// Parses `pid_max` then `threads-max`, one number a line.
pub fn parse_task_limits(buf: &[u8]) -> Result<TaskLimits, ParseError> {
    let mut v = [0u64; 2];
    let mut lines = buf.split(|&b| b == b'\n');
    for (i, (x, field)) in v.iter_mut().zip(["pid_max", "threads-max"]).enumerate() {
        // `split` gives the first line always; a later one may be absent
        // (the error is then at the last line there is).
        let Some(l) = lines.next() else {
            return Err(err(i, field, ParseErrorKind::Missing, "a whole number"));
        };
        let t = std::str::from_utf8(l)
            .map_err(|_| err(i + 1, field, ParseErrorKind::Invalid, "UTF-8 text"))?
            .trim();
        if t.is_empty() {
            return Err(err(i + 1, field, ParseErrorKind::Missing, "a whole number"));
        }
        *x = number(i + 1, t, field, "a whole number")?;
    }
    Ok(TaskLimits {
        pid_max: v[0],
        threads_max: v[1],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn task_limits_exact_values() {
        assert_eq!(
            parse_task_limits(b"32768\n192730\n").unwrap(),
            TaskLimits {
                pid_max: 32768,
                threads_max: 192730
            }
        );
        let e = parse_task_limits(b"32768\n\n").unwrap_err();
        assert_eq!((e.line, e.field), (2, "threads-max"));
        assert_eq!(parse_task_limits(b"x\n1\n").unwrap_err().field, "pid_max");
    }

    #[test]
    fn buddyinfo_exact_values() {
        let mut v = Vec::new();
        parse_buddyinfo(
            b"Node 0, zone      DMA      0      0      0      0      0      0      0      0      1      1      3 \nNode 1, zone   Normal  11805  11684   8355   5926   4294   2631   1859   1151    699    527   1280 \n",
            &mut v,
        )
        .unwrap();
        assert_eq!(v.len(), 2);
        assert_eq!((v[0].node, v[0].zone.as_str()), (0, "DMA"));
        assert_eq!(v[0].free, [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 3]);
        assert_eq!((v[1].node, v[1].free[0], v[1].free[10]), (1, 11805, 1280));
        for (bad, field) in [
            (&b"Node 0 zone DMA 1\n"[..], "node"),
            (b"Node x, zone DMA 1\n", "node"),
            (b"Nodes 0, zone DMA 1\n", "zone"),
            (b"Node 0, zone DMA 1 -2\n", "free"),
        ] {
            assert_eq!(parse_buddyinfo(bad, &mut v).unwrap_err().field, field);
        }
    }

    const ZONEINFO: &[u8] = b"Node 0, zone      DMA
  per-node stats
      nr_inactive_anon 460
      nr_dirtied   69283495
  pages free     3840
        boost    0
        min      19
        low      23
        high     27
        spanned  4095
        present  3998
        managed  3840
        protection: (0, 3019, 12747, 12747, 12747)
      nr_free_pages 3840
      numa_hit     0
  pagesets
    cpu: 0
              count:    0
              high:     0
  vm stats threshold: 4
  node_unreclaimable:  0
  start_pfn:           1
Node 0, zone  Movable
  pages free     0
        min      32
        protection: (0, 0, 0, 0, 0)
";

    #[test]
    fn zoneinfo_exact_values() {
        let mut v = Vec::new();
        parse_zoneinfo(ZONEINFO, &mut v).unwrap();
        assert_eq!(v.len(), 2);
        let z = &v[0];
        assert_eq!((z.node, z.zone.as_str()), (0, "DMA"));
        assert_eq!(z.get("nr_inactive_anon"), Some(460));
        assert_eq!(z.get("nr_dirtied"), Some(69283495));
        assert_eq!(z.get("min"), Some(19));
        assert_eq!(
            z.get("high"),
            Some(27),
            "the per-CPU `high:` is not the watermark"
        );
        assert_eq!(z.get("managed"), Some(3840));
        assert_eq!(z.get("nr_free_pages"), Some(3840));
        assert_eq!(z.get("numa_hit"), Some(0));
        assert_eq!(z.get("pages"), None);
        assert_eq!(z.get("count"), None);
        assert_eq!(z.protection, [0, 3019, 12747, 12747, 12747]);
        assert_eq!(z.values.len(), 11);
        assert_eq!((v[1].zone.as_str(), v[1].get("min")), ("Movable", Some(32)));
        assert_eq!(v[1].get("nr_free_pages"), None);
        for (bad, field) in [
            (&b"      nr_dirty 1\n"[..], "zone"),
            (b"Node 0, zone DMA\n  min x\n", "value"),
            (b"Node 0, zone DMA\n  protection: 0, 1\n", "protection"),
            (b"Node 0, zone DMA\n  protection: (0, -1)\n", "protection"),
        ] {
            assert_eq!(parse_zoneinfo(bad, &mut v).unwrap_err().field, field);
        }
    }

    #[test]
    fn slabinfo_exact_values() {
        let mut v = Vec::new();
        parse_slabinfo(
            b"slabinfo - version: 2.1\n# name            <active_objs> <num_objs> <objsize> <objperslab> <pagesperslab> : tunables <limit> <batchcount> <sharedfactor> : slabdata <active_slabs> <num_slabs> <sharedavail>\nbtrfs_delayed_node      0      0    312   13    1 : tunables    0    0    0 : slabdata      0      0      0\nkmalloc-8k           164    172   8192    4    8 : tunables    0    0    0 : slabdata     43     43      0\n",
            &mut v,
        )
        .unwrap();
        assert_eq!(v.len(), 2);
        assert_eq!(
            v[1],
            Slab {
                name: "kmalloc-8k".into(),
                active_objects: 164,
                objects: 172,
                object_size_bytes: 8192,
                objects_per_slab: 4,
                pages_per_slab: 8,
            }
        );
        assert_eq!(
            parse_slabinfo(b"slabinfo - version: 1.1\n", &mut v)
                .unwrap_err()
                .field,
            "version"
        );
        assert_eq!(
            parse_slabinfo(b"slabinfo - version: 2.1\nx 1 2 3\n", &mut v)
                .unwrap_err()
                .field,
            "slab"
        );
        assert_eq!(
            parse_slabinfo(b"slabinfo - version: 2.1\nx 1 2 y 4 5\n", &mut v)
                .unwrap_err()
                .field,
            "objsize"
        );
    }

    #[test]
    fn ksm_and_hung_tasks_exact_values() {
        let k = parse_ksm(b"full_scans 12\nrun 1\nsleep_millisecs 20\nsmart_scan 1\n").unwrap();
        assert_eq!(k.get("full_scans"), Some(12));
        assert_eq!(k.get("run"), Some(1));
        assert_eq!(k.get("sleep_millisecs"), Some(20));
        assert_eq!(k.get("pages_shared"), None);
        assert_eq!(parse_ksm(b"run x\n").unwrap_err().field, "value");
        assert_eq!(parse_ksm(b"run\n").unwrap_err().field, "value");
        assert_eq!(parse_hung_tasks(b"3\n").unwrap(), 3);
        assert_eq!(parse_hung_tasks(b"-1\n").unwrap_err().field, "count");
    }
}
