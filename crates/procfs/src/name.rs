//! A short name stored inline (device and interface names), so that tables of
//! them parse without allocating.

use serde::Serialize;
use std::fmt;

/// Up to 32 bytes of printable ASCII: the kernel's DISK_NAME_LEN is 32 and
/// IFNAMSIZ is 16, both including the terminating NUL.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Name {
    len: u8,
    bytes: [u8; Name::CAPACITY],
}

impl Name {
    pub const CAPACITY: usize = 32;

    /// `None` when `s` is empty, too long, or not printable ASCII.
    pub fn new(s: &[u8]) -> Option<Name> {
        if s.is_empty() || s.len() > Self::CAPACITY || !s.iter().all(|b| b.is_ascii_graphic()) {
            return None;
        }
        let mut bytes = [0u8; Self::CAPACITY];
        bytes[..s.len()].copy_from_slice(s);
        Some(Name {
            len: s.len() as u8,
            bytes,
        })
    }

    pub fn as_str(&self) -> &str {
        // Only printable ASCII is ever stored.
        std::str::from_utf8(&self.bytes[..self.len as usize]).unwrap_or("")
    }
}

impl Default for Name {
    fn default() -> Self {
        Name {
            len: 0,
            bytes: [0; Self::CAPACITY],
        }
    }
}

impl fmt::Debug for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}

impl Serialize for Name {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}
