//! node_exporter's bcachefs collector: /sys/fs/bcachefs.

use super::*;

use procfs::class::human_bytes;

use crate::metrics::out::Fam;

/// Per mounted filesystem: its btree cache, compression, errors, btree
/// writes and counters; per device (`dev-N`), its buckets, durability, I/O
/// done and I/O errors since the filesystem's creation. Read as
/// node_exporter reads them: sizes truncated to whole bytes, and a
/// device's `state` as the file has it (`[rw] ro evacuating spare`).
pub(super) fn encode(out: &mut Out<'_>, x: &Input<'_>) -> Fmt {
    let Some(fss) = class(x, Source::Bcachefs) else {
        return Ok(());
    };
    per_fs(out, fss, &NODE_BCACHEFS_INFO, |m, fs| {
        gauge_l(m, &[("uuid", fs.name.as_str())], 1.0)
    })?;
    per_fs(out, fss, &NODE_BCACHEFS_BTREE_CACHE_SIZE_BYTES, |m, fs| {
        let v = fs.get("btree_cache_size").and_then(human_bytes);
        gauge_l(m, &[("uuid", fs.name.as_str())], v.unwrap_or(0) as f64)
    })?;
    for (f, column) in [
        (&NODE_BCACHEFS_COMPRESSION_COMPRESSED_BYTES, 0),
        (&NODE_BCACHEFS_COMPRESSION_UNCOMPRESSED_BYTES, 1),
    ] {
        per_fs(out, fss, f, |m, fs| {
            for (algorithm, rest) in rows(fs, "compression_stats").skip(1) {
                let v: Vec<&str> = rest.split_whitespace().collect();
                if let (Some(c), true) = (v.get(column).and_then(|c| human_bytes(c)), v.len() >= 2)
                {
                    let labels = [
                        ("uuid", fs.name.as_str()),
                        ("algorithm", algorithm.trim_end_matches(':')),
                    ];
                    gauge_l(m, &labels, c as f64)?;
                }
            }
            Ok(())
        })?;
    }
    per_fs(out, fss, &NODE_BCACHEFS_ERRORS_TOTAL, |m, fs| {
        for (kind, rest) in rows(fs, "errors") {
            if let Some(n) = rest
                .split_whitespace()
                .next()
                .and_then(|n| n.parse::<u64>().ok())
            {
                counter_l(
                    m,
                    &[("uuid", fs.name.as_str()), ("error_type", kind)],
                    n as f64,
                )?;
            }
        }
        Ok(())
    })?;
    for (f, column) in [
        (&NODE_BCACHEFS_BTREE_WRITES_TOTAL, 0),
        (&NODE_BCACHEFS_BTREE_WRITE_AVERAGE_SIZE_BYTES, 1),
    ] {
        per_fs(out, fss, f, |m, fs| {
            for (kind, rest) in rows(fs, "btree_write_stats").skip(1) {
                let mut v = rest.split_whitespace();
                let (Some(Ok(n)), Some(Some(size))) =
                    (v.next().map(str::parse::<u64>), v.next().map(human_bytes))
                else {
                    continue;
                };
                let labels = [
                    ("uuid", fs.name.as_str()),
                    ("type", kind.trim_end_matches(':')),
                ];
                match column {
                    0 => counter_l(m, &labels, n as f64)?,
                    _ => gauge_l(m, &labels, size as f64)?,
                }
            }
            Ok(())
        })?;
    }
    counters(out, fss)?;
    devices(out, fss)
}

/// One family over every filesystem.
fn per_fs(
    out: &mut Out<'_>,
    fss: &[ClassDevice],
    f: &'static Family,
    mut each: impl FnMut(&mut Fam<'_>, &ClassDevice) -> Fmt,
) -> Fmt {
    let mut m = out.family(f)?;
    for fs in fss {
        each(&mut m, fs)?;
    }
    Ok(())
}

/// The lines of a table file below a filesystem, each as (its first word,
/// the rest): a file of one line gathers as the attribute itself, one of
/// several as an attribute a line (`path:<first word> <rest>`).
fn rows<'a>(d: &'a ClassDevice, path: &'a str) -> impl Iterator<Item = (&'a str, &'a str)> {
    d.attrs.iter().filter_map(move |(k, v)| {
        if k == path {
            let v = v.trim();
            return Some(v.split_once(char::is_whitespace).unwrap_or((v, "")));
        }
        let first = k.strip_prefix(path)?.strip_prefix(':')?;
        Some((first, v.as_str()))
    })
}

/// A `<name>: <value>` line given as its first word and the rest
/// (`sb`, `: 86016`; `read:`, `0`; `checksum:0`, ``).
fn colon_value<'a>(first: &'a str, rest: &str) -> Option<(&'a str, u64)> {
    let (name, value) = match first.split_once(':') {
        Some((name, "")) => (name, rest),
        Some((name, tail)) => (name, tail),
        None => (first, rest.trim_start().strip_prefix(':')?),
    };
    Some((name, value.trim().parse().ok()?))
}

/// `counters/<name>`: a family each, `node_bcachefs_<name>_total`, its
/// value since the filesystem's creation (a name that would be one of the
/// collector's own families is left out).
fn counters(out: &mut Out<'_>, fss: &[ClassDevice]) -> Fmt {
    let mut names: Vec<&str> = fss
        .iter()
        .flat_map(|fs| &fs.attrs)
        .filter_map(|(k, _)| k.strip_prefix("counters/")?.split(':').next())
        .collect();
    names.sort_unstable();
    names.dedup();
    let (pre, post) = NODE_BCACHEFS_COUNTER_TOTAL
        .name
        .split_once('*')
        .unwrap_or_default();
    let (mut name, mut help, mut path) = (String::new(), String::new(), String::new());
    for counter in names {
        name.clear();
        name.push_str(pre);
        name.extend(
            counter
                .chars()
                .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }),
        );
        name.push_str(post);
        if FAMILIES
            .iter()
            .any(|f| f.source == "bcachefs" && f.name == name)
        {
            continue;
        }
        help.clear();
        help.push_str("Bcachefs counter ");
        help.push_str(counter);
        help.push_str(" since filesystem creation.");
        path.clear();
        path.push_str("counters/");
        path.push_str(counter);
        let mut m = out.family_named(&NODE_BCACHEFS_COUNTER_TOTAL, &name, &help)?;
        for fs in fss {
            let since_creation = rows(fs, &path).find_map(|(first, rest)| {
                let v = rest
                    .strip_prefix("filesystem creation:")
                    .filter(|_| first == "since");
                human_bytes(v?)
            });
            if let Some(v) = since_creation {
                counter_l(&mut m, &[("uuid", fs.name.as_str())], v as f64)?;
            }
        }
    }
    Ok(())
}

/// The devices of every filesystem, `dev-N` as device `N`.
fn devices(out: &mut Out<'_>, fss: &[ClassDevice]) -> Fmt {
    let devs: Vec<(&ClassDevice, &str)> = fss
        .iter()
        .flat_map(|fs| {
            fs.children("")
                .into_iter()
                .filter_map(move |c| Some((fs, c.strip_prefix("dev-")?)))
        })
        .collect();
    let attr = |fs: &ClassDevice, dev: &str, name: &str| {
        fs.get(&format!("dev-{dev}/{name}")).map(str::to_owned)
    };
    let mut m = out.family(&NODE_BCACHEFS_DEVICE_INFO)?;
    for &(fs, dev) in &devs {
        let label = attr(fs, dev, "label").unwrap_or_default();
        let state = attr(fs, dev, "state").unwrap_or_default();
        let labels = [
            ("uuid", fs.name.as_str()),
            ("device", dev),
            ("label", label.trim()),
            ("state", state.trim()),
        ];
        gauge_l(&mut m, &labels, 1.0)?;
    }
    for (f, name, human) in [
        (&NODE_BCACHEFS_DEVICE_BUCKET_SIZE_BYTES, "bucket_size", true),
        (&NODE_BCACHEFS_DEVICE_BUCKETS, "nbuckets", false),
        (&NODE_BCACHEFS_DEVICE_DURABILITY, "durability", false),
    ] {
        let mut m = out.family(f)?;
        for &(fs, dev) in &devs {
            let v = attr(fs, dev, name).and_then(|v| match human {
                true => human_bytes(&v),
                false => v.trim().parse().ok(),
            });
            gauge_l(
                &mut m,
                &[("uuid", fs.name.as_str()), ("device", dev)],
                v.unwrap_or(0) as f64,
            )?;
        }
    }
    let mut m = out.family(&NODE_BCACHEFS_DEVICE_IO_DONE_BYTES_TOTAL)?;
    for &(fs, dev) in &devs {
        let path = format!("dev-{dev}/io_done");
        let mut op = None;
        for (first, rest) in rows(fs, &path) {
            match (first, rest.trim()) {
                ("read:" | "write:", "") => op = first.strip_suffix(':'),
                _ => {
                    let (Some(op), Some((kind, v))) = (op, colon_value(first, rest)) else {
                        continue;
                    };
                    let labels = [
                        ("uuid", fs.name.as_str()),
                        ("device", dev),
                        ("operation", op),
                        ("data_type", kind),
                    ];
                    counter_l(&mut m, &labels, v as f64)?;
                }
            }
        }
    }
    let mut m = out.family(&NODE_BCACHEFS_DEVICE_IO_ERRORS_TOTAL)?;
    for &(fs, dev) in &devs {
        let path = format!("dev-{dev}/io_errors");
        let mut since_creation = false;
        for (first, rest) in rows(fs, &path) {
            if first == "IO" {
                if since_creation {
                    break;
                }
                since_creation = rest.starts_with("errors since filesystem creation");
                continue;
            }
            let Some((kind, v)) = colon_value(first, rest).filter(|_| since_creation) else {
                continue;
            };
            counter_l(
                &mut m,
                &[("uuid", fs.name.as_str()), ("device", dev), ("type", kind)],
                v as f64,
            )?;
        }
    }
    Ok(())
}
