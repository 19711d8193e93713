//! /proc/diskstats: I/O counters per block device and partition
//! (Documentation/admin-guide/iostats.rst). Sectors are always 512 bytes here,
//! whatever the device's sector size.

use serde::Serialize;

use crate::cursor::Cursor;
use crate::error::{ParseError, ParseErrorKind};
use crate::limits::MAX_ROWS;
use crate::name::Name;

/// Bytes per diskstats sector.
pub const SECTOR_BYTES: u64 = 512;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct DiskStat {
    pub major: u32,
    pub minor: u32,
    pub name: Name,
    pub reads_completed: u64,
    pub reads_merged: u64,
    pub read_sectors: u64,
    pub read_time_ms: u64,
    pub writes_completed: u64,
    pub writes_merged: u64,
    pub write_sectors: u64,
    pub write_time_ms: u64,
    /// I/Os in flight now (a gauge).
    pub io_in_progress: u64,
    pub io_time_ms: u64,
    pub io_weighted_time_ms: u64,
    /// Since Linux 4.18.
    pub discards_completed: Option<u64>,
    /// Since Linux 4.18.
    pub discards_merged: Option<u64>,
    /// Since Linux 4.18.
    pub discard_sectors: Option<u64>,
    /// Since Linux 4.18.
    pub discard_time_ms: Option<u64>,
    /// Since Linux 5.5.
    pub flushes_completed: Option<u64>,
    /// Since Linux 5.5.
    pub flush_time_ms: Option<u64>,
}

pub fn parse(buf: &[u8]) -> Result<Vec<DiskStat>, ParseError> {
    let mut v = Vec::new();
    parse_into(buf, &mut v)?;
    Ok(v)
}

fn small(c: &Cursor<'_>, v: u64, field: &'static str) -> Result<u32, ParseError> {
    u32::try_from(v).map_err(|_| {
        c.err(
            field,
            ParseErrorKind::Overflow,
            "a device number below 2^32",
        )
    })
}

pub fn parse_into(buf: &[u8], out: &mut Vec<DiskStat>) -> Result<(), ParseError> {
    let mut c = Cursor::new(buf)?;
    out.clear();
    while !c.at_end() {
        if out.len() >= MAX_ROWS {
            return Err(c.err("name", ParseErrorKind::TooMany, "at most 2^20 devices"));
        }
        let major = c.u64("major")?;
        let major = small(&c, major, "major")?;
        let minor = c.u64("minor")?;
        let minor = small(&c, minor, "minor")?;
        let name = c.word();
        let name = Name::new(name).ok_or_else(|| {
            let kind = if name.is_empty() {
                ParseErrorKind::Missing
            } else {
                ParseErrorKind::TooLong
            };
            c.err(
                "name",
                kind,
                "a device name of 1 to 32 printable characters",
            )
        })?;
        let d = DiskStat {
            major,
            minor,
            name,
            reads_completed: c.u64("reads_completed")?,
            reads_merged: c.u64("reads_merged")?,
            read_sectors: c.u64("read_sectors")?,
            read_time_ms: c.u64("read_time_ms")?,
            writes_completed: c.u64("writes_completed")?,
            writes_merged: c.u64("writes_merged")?,
            write_sectors: c.u64("write_sectors")?,
            write_time_ms: c.u64("write_time_ms")?,
            io_in_progress: c.u64("io_in_progress")?,
            io_time_ms: c.u64("io_time_ms")?,
            io_weighted_time_ms: c.u64("io_weighted_time_ms")?,
            discards_completed: c.opt_u64("discards_completed")?,
            discards_merged: c.opt_u64("discards_merged")?,
            discard_sectors: c.opt_u64("discard_sectors")?,
            discard_time_ms: c.opt_u64("discard_time_ms")?,
            flushes_completed: c.opt_u64("flushes_completed")?,
            flush_time_ms: c.opt_u64("flush_time_ms")?,
        };
        out.push(d);
        c.next_line();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_values_with_flush_columns() {
        let d = parse(b" 254       0 vda 4469 2255 1076386 2633 273 1125 11592 117 0 1096 2827 2966 70 37464 75 6 0\n").unwrap();
        let d = &d[0];
        assert_eq!((d.major, d.minor, d.name.as_str()), (254, 0, "vda"));
        assert_eq!(
            (d.reads_completed, d.read_sectors, d.write_sectors),
            (4469, 1076386, 11592)
        );
        assert_eq!((d.io_time_ms, d.io_weighted_time_ms), (1096, 2827));
        assert_eq!(
            (d.discards_completed, d.discard_sectors),
            (Some(2966), Some(37464))
        );
        assert_eq!((d.flushes_completed, d.flush_time_ms), (Some(6), Some(0)));
    }

    #[test]
    fn kernel_before_4_18_has_eleven_fields() {
        let d = parse(b"   8       0 sda 1 2 3 4 5 6 7 8 9 10 11\n").unwrap();
        assert_eq!(
            (
                d[0].io_weighted_time_ms,
                d[0].discards_completed,
                d[0].flushes_completed
            ),
            (11, None, None)
        );
    }

    #[test]
    fn short_line() {
        let e = parse(b"   8       0 sda 1 2 3\n").unwrap_err();
        assert_eq!((e.field, e.kind), ("read_time_ms", ParseErrorKind::Missing));
    }

    #[test]
    fn overlong_name() {
        let long = format!("8 0 {} 1 2 3 4 5 6 7 8 9 10 11\n", "x".repeat(40));
        let e = parse(long.as_bytes()).unwrap_err();
        assert_eq!((e.field, e.kind), ("name", ParseErrorKind::TooLong));
    }
}

/// node_exporter's default `--collector.diskstats.device-exclude`:
/// `^(ram|loop|fd|(h|s|v|xv)d[a-z]|nvme\d+n\d+p)\d+$` (partitions and
/// pseudo-devices), matched by hand.
pub fn disk_excluded(name: &str) -> bool {
    let Some(digits_at) = name.rfind(|c: char| !c.is_ascii_digit()).map(|i| i + 1) else {
        return false;
    };
    if digits_at == name.len() {
        return false;
    }
    let stem = &name[..digits_at];
    if matches!(stem, "ram" | "loop" | "fd") {
        return true;
    }
    let b = stem.as_bytes();
    let letter_disk = |prefix: &str| {
        stem.len() == prefix.len() + 1
            && stem.starts_with(prefix)
            && b[b.len() - 1].is_ascii_lowercase()
    };
    if ["hd", "sd", "vd", "xvd"].into_iter().any(letter_disk) {
        return true;
    }
    // nvme<digits>n<digits>p
    if let Some(rest) = stem.strip_prefix("nvme").and_then(|r| r.strip_suffix('p'))
        && let Some((a, b)) = rest.split_once('n')
    {
        return !a.is_empty()
            && !b.is_empty()
            && a.bytes().all(|c| c.is_ascii_digit())
            && b.bytes().all(|c| c.is_ascii_digit());
    }
    false
}

/// Which block devices node_exporter's diskstats serves, by its
/// `--collector.diskstats.device-exclude` or `device-include`: the disks
/// whose queue attributes the block_queue source reads.
#[derive(Debug, Clone, Default)]
pub enum DiskFilter {
    /// node_exporter's default exclusion ([`disk_excluded`]).
    #[default]
    Default,
    /// Every device but those matching.
    Exclude(regex::Regex),
    /// Only the devices matching.
    Include(regex::Regex),
    /// Every device.
    All,
}

impl DiskFilter {
    /// Whether device `name` is served.
    pub fn keeps(&self, name: &str) -> bool {
        match self {
            DiskFilter::Default => !disk_excluded(name),
            DiskFilter::Exclude(e) => !e.is_match(name),
            DiskFilter::Include(i) => i.is_match(name),
            DiskFilter::All => true,
        }
    }
}
