//! /proc/vmstat: virtual-memory counters and gauges, `name value` per line.
//! The set of names changes with every kernel; all are kept.

use serde::Serialize;

use crate::error::ParseError;
use crate::key_values::{self, KeyValues, Layout, known_keys};

known_keys! {
    /// The vmstat keys with typed access (node_exporter's default set and the
    /// paging figures `sar -B` shows).
    VmKey {
        NrFreePages = "nr_free_pages",
        NrDirty = "nr_dirty",
        NrWriteback = "nr_writeback",
        /// KiB paged in from disk since boot.
        Pgpgin = "pgpgin",
        /// KiB paged out to disk since boot.
        Pgpgout = "pgpgout",
        Pswpin = "pswpin",
        Pswpout = "pswpout",
        Pgfault = "pgfault",
        Pgmajfault = "pgmajfault",
        Pgfree = "pgfree",
        /// Since Linux 4.13.
        OomKill = "oom_kill",
    }
}

/// Parsed /proc/vmstat.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Vmstat {
    all: KeyValues,
    known: [Option<u64>; VmKey::COUNT],
}

impl Vmstat {
    #[inline]
    pub fn get(&self, key: VmKey) -> Option<u64> {
        self.known[key as usize]
    }

    pub fn all(&self) -> &KeyValues {
        &self.all
    }
}

impl Serialize for Vmstat {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.all.serialize(s)
    }
}

pub fn parse(buf: &[u8]) -> Result<Vmstat, ParseError> {
    let mut v = Vmstat::default();
    parse_into(buf, &mut v)?;
    Ok(v)
}

pub fn parse_into(buf: &[u8], out: &mut Vmstat) -> Result<(), ParseError> {
    out.known = [None; VmKey::COUNT];
    let known = &mut out.known;
    key_values::parse_into(
        buf,
        Layout {
            colon: false,
            kb_suffix: false,
        },
        &mut out.all,
        |name, value| {
            if let Some(k) = VmKey::from_key(name) {
                known[k as usize] = Some(value);
            }
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ParseErrorKind;

    #[test]
    fn exact_values() {
        let v =
            parse(b"nr_free_pages 814857\npgfault 123\npgmajfault 4\nsomething_new 9\n").unwrap();
        assert_eq!(v.get(VmKey::NrFreePages), Some(814857));
        assert_eq!(v.get(VmKey::Pgfault), Some(123));
        assert_eq!(v.get(VmKey::OomKill), None);
        assert_eq!(v.all().get("something_new"), Some(9));
    }

    #[test]
    fn trailing_garbage() {
        let e = parse(b"pgfault 1 2\n").unwrap_err();
        assert_eq!((e.field, e.kind), ("value", ParseErrorKind::Invalid));
    }
}
