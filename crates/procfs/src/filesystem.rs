//! Mounted filesystems' space and inodes (node_exporter's filesystem
//! collector): the mount table (/proc/1/mounts, else /proc/mounts), then
//! statfs(2) of each mount point the exclusions leave.
//!
//! The reader gathers one line per mount, its first four fields as the
//! mount table prints them (octal escapes kept) and the outcome of statfs:
//!
//! ```text
//! /dev/vda / ext4 rw,relatime ok 4096 66053021 55750516 55750516 16777216 16279531
//! server:/x /mnt/x nfs rw error timeout
//! ```
//!
//! `ok` is followed by block size, blocks, free blocks, blocks available
//! to unprivileged users, inodes and free inodes; `error` by a reason
//! (`timeout`: no answer within the wait, `stuck`: a previous call has not
//! returned, or an errno name).

use serde::Serialize;

use crate::error::{ParseError, ParseErrorKind};
use crate::limits::MAX_ROWS;
use crate::records::{self, err};

/// One mount, as exported.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Mount {
    pub device: String,
    /// With the mount table's escapes (`\040` for a space) undone.
    pub mountpoint: String,
    pub fstype: String,
    /// Mounted read-only (`ro` among the options).
    pub readonly: bool,
    /// Why statfs gave nothing: `None` when it answered.
    pub error: Option<String>,
    pub size_bytes: u64,
    pub free_bytes: u64,
    pub avail_bytes: u64,
    pub files: u64,
    pub files_free: u64,
}

/// The mount table's escapes undone: `\040` space, `\011` tab, `\012`
/// newline, `\134` backslash.
pub fn unescape(field: &str) -> String {
    let b = field.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && i + 3 < b.len()
            && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c))
        {
            let v = (b[i + 1] - b'0') as u32 * 64
                + (b[i + 2] - b'0') as u32 * 8
                + (b[i + 3] - b'0') as u32;
            if v <= 255 {
                out.push(v as u8);
                i += 4;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Parses the gathered text (see the module doc) into `out`.
pub fn parse_into(buf: &[u8], out: &mut Vec<Mount>) -> Result<(), ParseError> {
    out.clear();
    for l in records::lines(buf) {
        let (n, text) = l?;
        let mut w = text.split(' ');
        let mut next = |field: &'static str, expected: &'static str| {
            w.next()
                .filter(|s| !s.is_empty())
                .ok_or_else(|| err(n, field, ParseErrorKind::Missing, expected))
        };
        let device = next("device", "the mounted device")?;
        let mountpoint = next("mountpoint", "an absolute path")?;
        let fstype = next("fstype", "a filesystem type")?;
        let options = next("options", "mount options")?;
        let outcome = next("outcome", "`ok` or `error`")?;
        if out.len() >= MAX_ROWS {
            return Err(err(
                n,
                "device",
                ParseErrorKind::TooMany,
                "at most 2^20 mounts",
            ));
        }
        let mut m = Mount {
            device: unescape(device),
            mountpoint: unescape(mountpoint),
            fstype: fstype.to_string(),
            readonly: options.split(',').any(|o| o == "ro"),
            ..Mount::default()
        };
        if !m.mountpoint.starts_with('/') {
            return Err(err(
                n,
                "mountpoint",
                ParseErrorKind::Invalid,
                "an absolute path",
            ));
        }
        match outcome {
            "ok" => {
                let mut num = |field: &'static str| -> Result<u64, ParseError> {
                    let s = next(field, "a whole number")?;
                    s.parse::<u64>()
                        .map_err(|_| err(n, field, ParseErrorKind::Invalid, "a whole number"))
                };
                let bsize = num("bsize")?;
                let blocks = num("blocks")?;
                let bfree = num("bfree")?;
                let bavail = num("bavail")?;
                m.files = num("files")?;
                m.files_free = num("ffree")?;
                m.size_bytes = blocks.saturating_mul(bsize);
                m.free_bytes = bfree.saturating_mul(bsize);
                m.avail_bytes = bavail.saturating_mul(bsize);
            }
            "error" => m.error = Some(next("reason", "why statfs failed")?.to_string()),
            _ => {
                return Err(err(
                    n,
                    "outcome",
                    ParseErrorKind::Invalid,
                    "`ok` or `error`",
                ));
            }
        }
        out.push(m);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_values() {
        let text = b"/dev/vda / ext4 rw,relatime ok 4096 10 4 3 100 90\n\
/dev/sdb1 /mnt/my\\040disk vfat ro,noatime ok 512 8 0 0 0 0\n\
srv:/x /net nfs rw error timeout\n";
        let v = crate::parsed(parse_into, text);
        assert_eq!(v.len(), 3);
        assert_eq!(v[0].size_bytes, 40960);
        assert_eq!(v[0].free_bytes, 16384);
        assert_eq!(v[0].avail_bytes, 12288);
        assert_eq!((v[0].files, v[0].files_free), (100, 90));
        assert!(!v[0].readonly && v[0].error.is_none());
        assert_eq!(v[1].mountpoint, "/mnt/my disk");
        assert!(v[1].readonly);
        assert_eq!(v[2].error.as_deref(), Some("timeout"));
    }

    #[test]
    fn escapes_and_bad_lines() {
        assert_eq!(unescape("a\\011b\\134c\\0"), "a\tb\\c\\0");
        let mut v = Vec::new();
        let e = parse_into(b"/dev/x / ext4 rw ok 1 2\n", &mut v).unwrap_err();
        assert_eq!(
            (e.line, e.field, e.kind),
            (1, "bfree", ParseErrorKind::Missing)
        );
        let e = parse_into(b"x rel ext4 rw error EIO\n", &mut v).unwrap_err();
        assert_eq!(e.field, "mountpoint");
        let e = parse_into(b"x / ext4 rw maybe\n", &mut v).unwrap_err();
        assert_eq!(e.field, "outcome");
    }
}
