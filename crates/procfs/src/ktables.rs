//! Small kernel tables node_exporter's opt-in collectors read: the cgroup
//! controllers (/proc/cgroups) and the IPsec transform errors
//! (/proc/net/xfrm_stat).

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

#[cfg(test)]
mod tests {
    use super::*;

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
