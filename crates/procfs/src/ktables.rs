//! Small kernel tables node_exporter's opt-in collectors read: the cgroup
//! controllers (/proc/cgroups), the IPsec transform errors
//! (/proc/net/xfrm_stat), the network caches' per-CPU statistics
//! (/proc/net/stat/*, lnstat's), the configured sysctls (/proc/sys) and
//! DRBD's replicated devices (/proc/drbd) and the swap areas (/proc/swaps).

use serde::Serialize;

use crate::error::{ParseError, ParseErrorKind};
use crate::records::{self, err, set, slot};

/// Rows kept at most: a kernel has a few dozen of either.
const MAX_ROWS: usize = 1024;

/// One line of /proc/cgroups.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Controller {
    /// The controller (`subsys_name`: cpu, memory, pids...).
    pub name: String,
    /// Its cgroup-v1 hierarchy's id; 0 when it is on cgroup v2 or none.
    pub hierarchy: u32,
    /// Cgroups in its hierarchy.
    pub cgroups: u64,
    /// Whether it is enabled (`cgroup_disable=` turns one off).
    pub enabled: bool,
}

fn number<T: std::str::FromStr>(
    n: usize,
    v: Option<&str>,
    field: &'static str,
) -> Result<T, ParseError> {
    let v = v.ok_or_else(|| err(n, field, ParseErrorKind::Missing, "a whole number"))?;
    v.parse()
        .map_err(|_| err(n, field, ParseErrorKind::Invalid, "a whole number"))
}

fn row_limit(n: usize, rows: usize) -> Result<(), ParseError> {
    if rows >= MAX_ROWS {
        return Err(err(n, "row", ParseErrorKind::TooMany, "at most 1024 rows"));
    }
    Ok(())
}

/// Parses /proc/cgroups: `#subsys_name hierarchy num_cgroups enabled`,
/// then a line per controller.
pub fn parse_cgroups(buf: &[u8], out: &mut Vec<Controller>) -> Result<(), ParseError> {
    let mut rows = 0;
    for l in records::lines(buf) {
        let (n, text) = l?;
        if text.starts_with('#') {
            continue;
        }
        row_limit(n, rows)?;
        let mut w = text.split_whitespace();
        let name = w
            .next()
            .ok_or_else(|| err(n, "subsys_name", ParseErrorKind::Missing, "a name"))?;
        let c = slot(out, rows);
        set(&mut c.name, name);
        c.hierarchy = number(n, w.next(), "hierarchy")?;
        c.cgroups = number(n, w.next(), "num_cgroups")?;
        c.enabled = number::<u8>(n, w.next(), "enabled")? != 0;
        rows += 1;
    }
    out.truncate(rows);
    Ok(())
}

/// Parses /proc/net/xfrm_stat: `XfrmInError   1`, a counter a line.
pub fn parse_xfrm(buf: &[u8], out: &mut Vec<(String, u64)>) -> Result<(), ParseError> {
    let mut rows = 0;
    for l in records::lines(buf) {
        let (n, text) = l?;
        row_limit(n, rows)?;
        let mut w = text.split_whitespace();
        let name = w
            .next()
            .filter(|k| k.len() <= 64 && k.bytes().all(|b| b.is_ascii_alphanumeric()))
            .ok_or_else(|| err(n, "name", ParseErrorKind::Invalid, "a counter's name"))?;
        let v = number(n, w.next(), "value")?;
        let row = slot(out, rows);
        set(&mut row.0, name);
        row.1 = v;
        rows += 1;
    }
    out.truncate(rows);
    Ok(())
}

/// One file of /proc/net/stat: a network cache's counters per CPU.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct CacheStats {
    /// The file's name (`arp_cache`, `ndisc_cache`, `nf_conntrack`...).
    pub name: String,
    /// The columns, as its header names them.
    pub columns: Vec<String>,
    /// A row per CPU (in file order), a value per column.
    pub rows: Vec<Vec<u64>>,
}

/// Values kept at most, over all files: CPUs times columns.
const MAX_VALUES: usize = 1 << 22;

/// Parses the gathered files of /proc/net/stat: `@<file>`, its header of
/// column names, then a row of hexadecimal values per CPU.
pub fn parse_lnstat(buf: &[u8], out: &mut Vec<CacheStats>) -> Result<(), ParseError> {
    out.clear();
    let mut values = 0;
    for l in records::lines(buf) {
        let (n, text) = l?;
        if let Some(name) = text.strip_prefix('@') {
            records::open(n, name, out.len(), "file")?;
            row_limit(n, out.len())?;
            out.push(CacheStats {
                name: name.to_string(),
                ..CacheStats::default()
            });
            continue;
        }
        let f = records::current(out, n, "file")?;
        if f.columns.is_empty() {
            for c in text.split_whitespace() {
                if c.len() > 64 || !c.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
                    return Err(err(n, "column", ParseErrorKind::Invalid, "a column's name"));
                }
                f.columns.push(c.to_string());
            }
            row_limit(n, f.columns.len())?;
            continue;
        }
        let row: Vec<u64> = text
            .split_whitespace()
            .map(|w| u64::from_str_radix(w, 16))
            .collect::<Result<_, _>>()
            .map_err(|_| err(n, "value", ParseErrorKind::Invalid, "hexadecimal values"))?;
        if row.len() != f.columns.len() {
            return Err(err(
                n,
                "value",
                ParseErrorKind::Invalid,
                "a value for each column of the header",
            ));
        }
        values += row.len();
        if values > MAX_VALUES {
            return Err(err(
                n,
                "value",
                ParseErrorKind::TooMany,
                "at most 2^22 values",
            ));
        }
        f.rows.push(row);
    }
    Ok(())
}

/// One DRBD device of /proc/drbd: its `key:value` fields as printed
/// (`cs:Connected`, `ro:Primary/Secondary`, `ns:17324442`...).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct DrbdDevice {
    /// `drbd<minor>`.
    pub name: String,
    pub fields: Vec<(String, String)>,
}

impl DrbdDevice {
    /// The value of field `key`.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

/// Parses /proc/drbd (DRBD 8): after the version lines, each device's
/// minor (`1:`) and then its `key:value` words, on its line and the
/// indented ones after it. Words of any other shape are passed over.
pub fn parse_drbd(buf: &[u8], out: &mut Vec<DrbdDevice>) -> Result<(), ParseError> {
    let mut rows = 0;
    let mut fields = 0;
    for l in records::lines(buf) {
        let (n, text) = l?;
        for word in text.split_whitespace() {
            let Some((k, v)) = word.split_once(':') else {
                continue;
            };
            let minor = k
                .parse::<u64>()
                .ok()
                .filter(|_| k.bytes().all(|b| b.is_ascii_digit()));
            if let (true, Some(minor)) = (v.is_empty(), minor) {
                row_limit(n, rows)?;
                if let Some(d) = rows.checked_sub(1).map(|i| &mut out[i]) {
                    d.fields.truncate(fields);
                }
                let d = slot(out, rows);
                d.name.clear();
                let _ = std::fmt::Write::write_fmt(&mut d.name, format_args!("drbd{minor}"));
                rows += 1;
                fields = 0;
                continue;
            }
            let Some(d) = rows.checked_sub(1).map(|i| &mut out[i]) else {
                // `version:` and `srcversion:` before the first device.
                continue;
            };
            if fields >= 64 {
                return Err(err(
                    n,
                    "field",
                    ParseErrorKind::TooMany,
                    "at most 64 fields a device",
                ));
            }
            let f = slot(&mut d.fields, fields);
            set(&mut f.0, k);
            set(&mut f.1, v);
            fields += 1;
        }
    }
    if let Some(d) = rows.checked_sub(1).map(|i| &mut out[i]) {
        d.fields.truncate(fields);
    }
    out.truncate(rows);
    Ok(())
}

/// Parses the gathered sysctls: `@<dotted name>`, then its file's text
/// (a file of several lines as one, its lines joined by spaces). A sysctl
/// the configuration named but the kernel lacks has no record.
pub fn parse_sysctl(buf: &[u8], out: &mut Vec<(String, String)>) -> Result<(), ParseError> {
    let mut rows = 0;
    for l in records::lines(buf) {
        let (n, text) = l?;
        if let Some(name) = text.strip_prefix('@') {
            records::open(n, name, rows, "sysctl")?;
            row_limit(n, rows)?;
            let row = slot(out, rows);
            set(&mut row.0, name);
            row.1.clear();
            rows += 1;
            continue;
        }
        let row = records::current(&mut out[..rows], n, "sysctl")?;
        if row.1.len() + text.len() > 1 << 16 {
            return Err(err(
                n,
                "value",
                ParseErrorKind::TooMany,
                "at most 64 KiB a sysctl",
            ));
        }
        if !row.1.is_empty() {
            row.1.push(' ');
        }
        row.1.push_str(text);
    }
    out.truncate(rows);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_with_their_fields() {
        let text = b"version: 8.4.3 (api:1/proto:86-101)\nsrcversion: 1A9F77B1CA5FF92235C2213\n\n 1: cs:Connected ro:Primary/Secondary ds:UpToDate/UpToDate C r-----\n    ns:17324442 nr:10961011 oos:12349\n 0: cs:StandAlone\n";
        let mut v = crate::parsed(parse_drbd, text);
        assert_eq!(v.len(), 2);
        assert_eq!(v[0].name, "drbd1");
        assert_eq!(v[0].get("ro"), Some("Primary/Secondary"));
        assert_eq!(v[0].get("oos"), Some("12349"));
        assert_eq!(v[0].get("api"), None);
        assert_eq!((v[1].name.as_str(), v[1].fields.len()), ("drbd0", 1));
        parse_drbd(b" 7: cs:WFConnection\n", &mut v).unwrap();
        assert_eq!(
            (v.len(), v[0].name.as_str(), v[0].fields.len()),
            (1, "drbd7", 1)
        );
    }

    #[test]
    fn sysctls_by_name_with_their_text() {
        let mut v = crate::parsed(
            parse_sysctl,
            b"@fs.file-nr\n1024\t0\t1631329\n@kernel.x\na\nb\n",
        );
        assert_eq!(
            v[0],
            ("fs.file-nr".to_string(), "1024\t0\t1631329".to_string())
        );
        assert_eq!(v[1].1, "a b");
        parse_sysctl(b"@kernel.threads-max\n7801\n", &mut v).unwrap();
        assert_eq!(v, [("kernel.threads-max".to_string(), "7801".to_string())]);
        assert_eq!(parse_sysctl(b"7801\n", &mut v).unwrap_err().field, "sysctl");
        assert_eq!(
            parse_sysctl(b"@a/b\n1\n", &mut v).unwrap_err().field,
            "sysctl"
        );
    }

    #[test]
    fn cgroup_controllers() {
        let mut v = Vec::new();
        parse_cgroups(
            b"#subsys_name\thierarchy\tnum_cgroups\tenabled\ncpuset\t5\t47\t1\nrdma\t0\t1\t0",
            &mut v,
        )
        .unwrap();
        assert_eq!(
            v,
            [
                Controller {
                    name: "cpuset".into(),
                    hierarchy: 5,
                    cgroups: 47,
                    enabled: true
                },
                Controller {
                    name: "rdma".into(),
                    hierarchy: 0,
                    cgroups: 1,
                    enabled: false
                }
            ]
        );
        let e = parse_cgroups(b"cpu 3 x 1\n", &mut v).unwrap_err();
        assert_eq!((e.field, e.kind), ("num_cgroups", ParseErrorKind::Invalid));
        let e = parse_cgroups(b"cpu 3 1\n", &mut v).unwrap_err();
        assert_eq!((e.field, e.kind), ("enabled", ParseErrorKind::Missing));
    }

    #[test]
    fn network_cache_statistics() {
        let mut v = Vec::new();
        parse_lnstat(
            b"@arp_cache\nentries  allocs destroys\n00000014  00000001 0000000a\n00000014 0000000d 0000000e\n@ndisc_cache\nentries allocs\n1 f0\n",
            &mut v,
        )
        .unwrap();
        assert_eq!(v.len(), 2);
        assert_eq!(v[0].name, "arp_cache");
        assert_eq!(v[0].columns, ["entries", "allocs", "destroys"]);
        assert_eq!(v[0].rows, [vec![20, 1, 10], vec![20, 13, 14]]);
        assert_eq!(v[1].rows, [vec![1, 240]]);
        let e = parse_lnstat(b"@a\nx y\n1\n", &mut v).unwrap_err();
        assert_eq!((e.field, e.kind), ("value", ParseErrorKind::Invalid));
        let e = parse_lnstat(b"x y\n", &mut v).unwrap_err();
        assert_eq!((e.field, e.kind), ("file", ParseErrorKind::Missing));
        let e = parse_lnstat(b"@a\nx\nzz\n", &mut v).unwrap_err();
        assert_eq!((e.field, e.kind), ("value", ParseErrorKind::Invalid));
    }

    #[test]
    fn xfrm_counters() {
        let mut v = Vec::new();
        parse_xfrm(
            b"XfrmInError                     1\nXfrmAcquireError 24532",
            &mut v,
        )
        .unwrap();
        assert_eq!(
            v,
            [
                ("XfrmInError".into(), 1),
                ("XfrmAcquireError".into(), 24532)
            ]
        );
        let e = parse_xfrm(b"XfrmInError -1\n", &mut v).unwrap_err();
        assert_eq!((e.field, e.kind), ("value", ParseErrorKind::Invalid));
        let many = "XfrmA 1\n".repeat(MAX_ROWS + 1);
        let e = parse_xfrm(many.as_bytes(), &mut v).unwrap_err();
        assert_eq!(e.kind, ParseErrorKind::TooMany);
    }
}

/// One line of /proc/swaps: a swap device or file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SwapArea {
    /// The device or file, as the kernel prints it (`\040` for a space).
    pub name: String,
    /// `partition` or `file`.
    pub kind: String,
    pub size_kib: u64,
    pub used_kib: u64,
    /// Its priority (negative when the kernel chose it).
    pub priority: i64,
}

/// Parses /proc/swaps: a header, then `<name> <type> <size> <used>
/// <priority>` a line (sizes in KiB).
pub fn parse_swaps(buf: &[u8], out: &mut Vec<SwapArea>) -> Result<(), ParseError> {
    let mut rows = 0;
    for l in records::lines(buf) {
        let (n, text) = l?;
        if n == 1 && text.starts_with("Filename") {
            continue;
        }
        row_limit(n, rows)?;
        let mut w = text.split_whitespace();
        let a = slot(out, rows);
        match (w.next(), w.next()) {
            (Some(name), Some(kind)) => {
                set(&mut a.name, name);
                set(&mut a.kind, kind);
            }
            _ => {
                return Err(err(
                    n,
                    "type",
                    ParseErrorKind::Missing,
                    "`<name> <type> <size> <used> <priority>`",
                ));
            }
        }
        a.size_kib = number(n, w.next(), "size")?;
        a.used_kib = number(n, w.next(), "used")?;
        a.priority = number(n, w.next(), "priority")?;
        rows += 1;
    }
    out.truncate(rows);
    Ok(())
}

#[cfg(test)]
mod swap_tests {
    use super::*;

    #[test]
    fn swap_areas() {
        let text = b"Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n/dev/dm-1                               partition\t8388604\t\t1024\t\t-2\n/swap\\040file                           file\t\t1048572\t\t0\t\t10\n";
        let mut v = Vec::new();
        parse_swaps(text, &mut v).unwrap();
        assert_eq!(v.len(), 2);
        assert_eq!(
            (
                v[0].name.as_str(),
                v[0].kind.as_str(),
                v[0].size_kib,
                v[0].used_kib,
                v[0].priority
            ),
            ("/dev/dm-1", "partition", 8388604, 1024, -2)
        );
        assert_eq!((v[1].name.as_str(), v[1].priority), ("/swap\\040file", 10));
        parse_swaps(b"Filename Type Size Used Priority\n", &mut v).unwrap();
        assert!(v.is_empty());
        let e = parse_swaps(
            b"Filename Type Size Used Priority\n/dev/x partition 1 2\n",
            &mut v,
        )
        .unwrap_err();
        assert!(e.to_string().contains("priority"), "{e}");
    }
}
