//! /proc/meminfo. Values with a `kB` unit are converted to bytes; the few
//! without a unit (HugePages_*) are counts.

use serde::Serialize;

use crate::error::ParseError;
use crate::key_values::{self, KeyValues, Layout, known_keys};

known_keys! {
    /// The meminfo keys with typed access. Every other line is still kept in
    /// [`Meminfo::all`].
    MemKey {
        MemTotal = "MemTotal",
        MemFree = "MemFree",
        /// Since Linux 3.14.
        MemAvailable = "MemAvailable",
        Buffers = "Buffers",
        Cached = "Cached",
        SwapCached = "SwapCached",
        Active = "Active",
        Inactive = "Inactive",
        /// Since Linux 2.6.28.
        ActiveAnon = "Active(anon)",
        /// Since Linux 2.6.28.
        InactiveAnon = "Inactive(anon)",
        /// Since Linux 2.6.28.
        ActiveFile = "Active(file)",
        /// Since Linux 2.6.28.
        InactiveFile = "Inactive(file)",
        /// Since Linux 2.6.28.
        Unevictable = "Unevictable",
        /// Since Linux 2.6.28.
        Mlocked = "Mlocked",
        SwapTotal = "SwapTotal",
        SwapFree = "SwapFree",
        Dirty = "Dirty",
        Writeback = "Writeback",
        /// Since Linux 2.6.18.
        AnonPages = "AnonPages",
        Mapped = "Mapped",
        /// Since Linux 2.6.32.
        Shmem = "Shmem",
        /// Since Linux 4.20.
        KReclaimable = "KReclaimable",
        Slab = "Slab",
        /// Since Linux 2.6.19.
        SReclaimable = "SReclaimable",
        /// Since Linux 2.6.19.
        SUnreclaim = "SUnreclaim",
        /// Since Linux 2.6.32.
        KernelStack = "KernelStack",
        /// Since Linux 2.6.18.
        PageTables = "PageTables",
        /// Since Linux 2.6.10.
        CommitLimit = "CommitLimit",
        CommittedAs = "Committed_AS",
        /// Since Linux 2.6.38.
        AnonHugePages = "AnonHugePages",
        /// A count of pages, not bytes.
        HugePagesTotal = "HugePages_Total",
        /// A count of pages, not bytes.
        HugePagesFree = "HugePages_Free",
        Hugepagesize = "Hugepagesize",
    }
}

/// Parsed /proc/meminfo.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Meminfo {
    all: KeyValues,
    known: [Option<u64>; MemKey::COUNT],
}

impl Default for Meminfo {
    fn default() -> Self {
        Meminfo {
            all: KeyValues::default(),
            known: [None; MemKey::COUNT],
        }
    }
}

impl Meminfo {
    /// The value of `key` (bytes, except HugePages_* counts), or `None` when
    /// this kernel does not print it.
    #[inline]
    pub fn get(&self, key: MemKey) -> Option<u64> {
        self.known[key as usize]
    }

    /// Every line, in file order, values in bytes where the kernel says kB.
    pub fn all(&self) -> &KeyValues {
        &self.all
    }

    /// A meminfo holding only these keys (values in bytes, as [`Meminfo::get`]
    /// returns them), in the order given: for samples built from figures
    /// already read elsewhere, such as the agent's shared-memory snapshot.
    pub fn from_values(values: impl IntoIterator<Item = (MemKey, u64)>) -> Meminfo {
        let mut m = Meminfo::default();
        for (k, v) in values {
            m.all.push(k.key(), v);
            m.known[k as usize] = Some(v);
        }
        m
    }
}

impl Serialize for Meminfo {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.all.serialize(s)
    }
}

pub fn parse(buf: &[u8]) -> Result<Meminfo, ParseError> {
    let mut m = Meminfo::default();
    parse_into(buf, &mut m)?;
    Ok(m)
}

pub fn parse_into(buf: &[u8], out: &mut Meminfo) -> Result<(), ParseError> {
    out.known = [None; MemKey::COUNT];
    let known = &mut out.known;
    key_values::parse_into(
        buf,
        Layout {
            colon: true,
            kb_suffix: true,
        },
        &mut out.all,
        |name, value| {
            if let Some(k) = MemKey::from_key(name) {
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
    fn exact_values_in_bytes() {
        let m = parse(b"MemTotal:       24682416 kB\nMemAvailable:   24391880 kB\nHugePages_Total:       0\nActive(anon):       1504 kB\nNewThing:  7 kB\n").unwrap();
        assert_eq!(m.get(MemKey::MemTotal), Some(24682416 * 1024));
        assert_eq!(m.get(MemKey::MemAvailable), Some(24391880 * 1024));
        assert_eq!(m.get(MemKey::HugePagesTotal), Some(0));
        assert_eq!(m.get(MemKey::ActiveAnon), Some(1504 * 1024));
        assert_eq!(m.get(MemKey::SwapTotal), None);
        assert_eq!(m.all().get("NewThing"), Some(7 * 1024));
        assert_eq!(m.all().len(), 5);
    }

    #[test]
    fn meminfo_without_memavailable() {
        let m = parse(b"MemTotal: 100 kB\nMemFree: 50 kB\n").unwrap();
        assert_eq!(m.get(MemKey::MemAvailable), None);
    }

    #[test]
    fn bad_unit() {
        let e = parse(b"MemTotal: 100 MB\n").unwrap_err();
        assert_eq!(
            (e.line, e.field, e.kind),
            (1, "unit", ParseErrorKind::Invalid)
        );
    }

    #[test]
    fn missing_colon() {
        let e = parse(b"MemTotal 100 kB\n").unwrap_err();
        assert_eq!(e.field, "name");
    }

    #[test]
    fn kb_overflow() {
        let e = parse(b"MemTotal: 18446744073709551 kB\n").unwrap_err();
        assert_eq!(e.kind, ParseErrorKind::Overflow);
    }
}
