//! ZFS's kernel statistics (`/proc/spl/kstat/zfs/`): the module's kstat
//! files (`arcstats`, `zil`, ...) and, per pool, `io`, each dataset's
//! `objset-*` and `state`.
//!
//! The reader gathers each file as a record: `@<file>` or
//! `@<pool>/<file>`, then the file's lines as they are. A kstat file has a
//! header, then `name type data` and one `<name> <type> <value>` line per
//! statistic; `io` has a line of names (`nread nwritten ...`) and a line
//! of values; `state` is one word.

use serde::Serialize;

use crate::error::{ParseError, ParseErrorKind};
use crate::records::{self, err};

/// The module's kstat files node_exporter reads, with the name each gets
/// in metric names (`node_zfs_arc_hits` from `arcstats`).
pub const FILES: [(&str, &str); 11] = [
    ("abdstats", "abd"),
    ("arcstats", "arc"),
    ("dbufstats", "dbuf"),
    ("dmu_tx", "dmu_tx"),
    ("dnodestats", "dnode"),
    ("fm", "fm"),
    ("vdev_cache_stats", "vdev_cache"),
    ("vdev_mirror_stats", "vdev_mirror"),
    ("xuio_stats", "xuio"),
    ("zfetchstats", "zfetch"),
    ("zil", "zil"),
];

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Zfs {
    /// `(file, [(statistic, value)])` for each kstat file of [`FILES`]:
    /// type 3 statistics are signed (`arcstats`' `memory_available_bytes`
    /// goes negative under memory pressure), type 4 unsigned; both fit.
    pub kstats: Vec<(String, Vec<(String, i128)>)>,
    pub pools: Vec<Pool>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Pool {
    pub name: String,
    /// `io`'s `(name, value)` pairs.
    pub io: Vec<(String, u64)>,
    pub datasets: Vec<Dataset>,
    /// `state`, lowercase (`online`, `degraded`, ...).
    pub state: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Dataset {
    pub name: String,
    pub values: Vec<(String, u64)>,
}

/// What the record being parsed is.
enum At {
    None,
    Kstat { header_seen: bool },
    Io { names: Option<Vec<String>> },
    Objset { header_seen: bool },
    State,
}

const MAX_VALUES: usize = 1 << 16;

fn whole(n: usize, v: &str) -> Result<u64, ParseError> {
    v.parse()
        .map_err(|_| err(n, "value", ParseErrorKind::Invalid, "a whole number"))
}

/// A kstat value of type 3 (KSTAT_DATA_INT64, signed) or 4 (UINT64).
fn kstat_value(n: usize, kind: &str, v: &str) -> Result<i128, ParseError> {
    if kind == "3" {
        v.parse::<i64>().map(i128::from).map_err(|_| {
            err(
                n,
                "value",
                ParseErrorKind::Invalid,
                "a signed 64-bit number",
            )
        })
    } else {
        whole(n, v).map(i128::from)
    }
}

pub fn parse_into(buf: &[u8], out: &mut Zfs) -> Result<(), ParseError> {
    out.kstats.clear();
    out.pools.clear();
    let mut at = At::None;
    for l in records::lines(buf) {
        let (n, text) = l?;
        if let Some(name) = text.strip_prefix('@') {
            if out.kstats.len() + out.pools.len() >= crate::limits::MAX_ROWS {
                return Err(err(
                    n,
                    "file",
                    ParseErrorKind::TooMany,
                    "at most 2^20 files",
                ));
            }
            match name.split_once('/') {
                None => {
                    out.kstats.push((name.to_string(), Vec::new()));
                    at = At::Kstat { header_seen: false };
                }
                Some((pool, file)) => {
                    if out.pools.last().is_none_or(|p| p.name != pool) {
                        out.pools.push(Pool {
                            name: pool.to_string(),
                            ..Pool::default()
                        });
                    }
                    let p = out.pools.last_mut().expect("pushed above");
                    at = match file {
                        "io" => At::Io { names: None },
                        "state" => At::State,
                        f if f.starts_with("objset-") => {
                            p.datasets.push(Dataset::default());
                            At::Objset { header_seen: false }
                        }
                        _ => {
                            return Err(err(
                                n,
                                "file",
                                ParseErrorKind::Invalid,
                                "io, state or objset-<id>",
                            ));
                        }
                    };
                }
            }
            continue;
        }
        let parts: Vec<&str> = text.split_whitespace().take(16).collect();
        match &mut at {
            At::None => {
                return Err(err(n, "file", ParseErrorKind::Missing, "`@<file>` first"));
            }
            At::Kstat { header_seen } | At::Objset { header_seen } if !*header_seen => {
                *header_seen = parts == ["name", "type", "data"];
            }
            At::Kstat { .. } => {
                // Only 64-bit integers (types 3 and 4), as node_exporter.
                if let [name, kind @ ("3" | "4"), value, ..] = parts[..] {
                    let values = &mut out.kstats.last_mut().expect("opened").1;
                    if values.len() >= MAX_VALUES {
                        return Err(err(
                            n,
                            "value",
                            ParseErrorKind::TooMany,
                            "at most 65536 statistics a file",
                        ));
                    }
                    values.push((name.to_string(), kstat_value(n, kind, value)?));
                }
            }
            At::Objset { .. } => {
                let d = out
                    .pools
                    .last_mut()
                    .and_then(|p| p.datasets.last_mut())
                    .expect("opened");
                match parts[..] {
                    // The name is the rest of the line: a dataset's name
                    // may hold spaces, runs of them too.
                    ["dataset_name", kind, ..] => {
                        let after_kind = text
                            .trim_start()
                            .strip_prefix("dataset_name")
                            .map(str::trim_start)
                            .and_then(|r| r.strip_prefix(kind))
                            .unwrap_or_default();
                        d.name = after_kind.trim().to_string();
                    }
                    [name, "4", value, ..] => {
                        if d.values.len() >= MAX_VALUES {
                            return Err(err(
                                n,
                                "value",
                                ParseErrorKind::TooMany,
                                "at most 65536 statistics a file",
                            ));
                        }
                        d.values.push((name.to_string(), whole(n, value)?));
                    }
                    _ => {}
                }
            }
            At::Io { names } => match names {
                None if parts.first() == Some(&"nread") => {
                    *names = Some(
                        text.split_whitespace()
                            .take(MAX_VALUES)
                            .map(str::to_string)
                            .collect(),
                    );
                }
                None => {}
                Some(names) => {
                    let p = out.pools.last_mut().expect("opened");
                    if p.io.is_empty() {
                        for (name, v) in names.iter().zip(text.split_whitespace()) {
                            p.io.push((name.clone(), whole(n, v)?));
                        }
                    }
                }
            },
            At::State => {
                let p = out.pools.last_mut().expect("opened");
                p.state.get_or_insert_with(|| text.trim().to_lowercase());
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_values() {
        let mut z = Zfs::default();
        parse_into(
            b"@arcstats\n6 1 0x01 91 4368 5266997922 97951859082746\nname                            type data\nhits                            4    8772612\nmisses                          4    604635\nc_min                           4    33554432\nstate_name                      7    x\n@tank/io\n12 3 0x00 1 80 2225326830828 32953476980628\nnread    nwritten reads    writes   wtime    wlentime wupdate  rtime    rlentime rupdate  wcnt     rcnt\n1884160  3206144  22       132      7155162  104112268 5745476183 42307306 1158738024 5745476183 0 0\n@tank/objset-0x36\n31 1 0x01 7 2160 221578688875 221578688875\nname                            type data\ndataset_name                    7    tank/home  and away\nwrites                          4    4\nnwritten                        4    33\n@tank/state\nONLINE\n",
            &mut z,
        )
        .unwrap();
        assert_eq!(z.kstats.len(), 1);
        assert_eq!(
            z.kstats[0].1,
            [
                ("hits".into(), 8772612),
                ("misses".into(), 604635),
                ("c_min".into(), 33554432)
            ]
        );
        let p = &z.pools[0];
        assert_eq!(p.name, "tank");
        assert_eq!(p.io[1], ("nwritten".into(), 3206144));
        assert_eq!(p.io.len(), 12);
        assert_eq!(p.datasets[0].name, "tank/home  and away");
        assert_eq!(
            p.datasets[0].values,
            [("writes".into(), 4), ("nwritten".into(), 33)]
        );
        assert_eq!(p.state.as_deref(), Some("online"));
        assert_eq!(parse_into(b"hits 4 1\n", &mut z).unwrap_err().field, "file");
        // A signed statistic (type 3) under memory pressure: read as signed.
        parse_into(
            b"@arcstats\nname type data\nmemory_available_bytes 3 -922337203685477580\nhits 4 18446744073709551615\n",
            &mut z,
        )
        .unwrap();
        assert_eq!(
            z.kstats[0].1,
            [
                ("memory_available_bytes".into(), -922337203685477580),
                ("hits".into(), u64::MAX as i128)
            ]
        );
        assert_eq!(
            parse_into(b"@zil\nname type data\nx 4 y\n", &mut z)
                .unwrap_err()
                .field,
            "value"
        );
        assert_eq!(
            parse_into(b"@tank/bogus\n", &mut z).unwrap_err().field,
            "file"
        );
    }
}
