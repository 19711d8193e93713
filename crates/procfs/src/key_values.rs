//! The `NAME VALUE` layout of /proc/meminfo (`Name: value kB`) and /proc/vmstat
//! (`name value`). Every line is kept (names in one reused arena), and the keys
//! a consumer names in code are also indexed by an enum for O(1) access.

use serde::Serialize;
use serde::ser::SerializeMap;
use std::ops::Range;

use crate::cursor::Cursor;
use crate::error::{ParseError, ParseErrorKind};
use crate::limits::MAX_ROWS;

/// Declares an enum of well-known keys with their kernel names.
macro_rules! known_keys {
    ($(#[$m:meta])* $name:ident { $( $(#[$doc:meta])* $var:ident = $key:literal, )* }) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name { $( $(#[$doc])* $var, )* }

        impl $name {
            pub const ALL: &'static [$name] = &[$( $name::$var, )*];
            pub const COUNT: usize = Self::ALL.len();

            /// The name as the kernel prints it.
            pub fn key(self) -> &'static str {
                match self { $( $name::$var => $key, )* }
            }

            pub fn from_key(k: &str) -> Option<Self> {
                match k { $( $key => Some($name::$var), )* _ => None }
            }
        }
    };
}
pub(crate) use known_keys;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct EntryIndex {
    name: Range<u32>,
    value: u64,
}

/// All `NAME VALUE` lines of one file, in file order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KeyValues {
    entries: Vec<EntryIndex>,
    names: String,
}

impl KeyValues {
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// `(name, value)` pairs in file order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&str, u64)> + '_ {
        self.entries.iter().map(|e| {
            (
                &self.names[e.name.start as usize..e.name.end as usize],
                e.value,
            )
        })
    }

    /// Linear lookup by name; use the typed accessors for hot paths.
    pub fn get(&self, name: &str) -> Option<u64> {
        self.iter().find(|(n, _)| *n == name).map(|(_, v)| v)
    }

    /// Appends one line's name and value (for samples built from values
    /// already read, such as the agent's shared-memory snapshot).
    pub(crate) fn push(&mut self, name: &str, value: u64) {
        let start = self.names.len() as u32;
        self.names.push_str(name);
        self.entries.push(EntryIndex {
            name: start..self.names.len() as u32,
            value,
        });
    }

    fn clear(&mut self) {
        self.entries.clear();
        self.names.clear();
    }
}

impl Serialize for KeyValues {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.len()))?;
        for (k, v) in self.iter() {
            m.serialize_entry(k, &v)?;
        }
        m.end()
    }
}

/// How a file writes one line.
#[derive(Clone, Copy)]
pub(crate) struct Layout {
    /// Names end with ':' (meminfo) or not (vmstat).
    pub colon: bool,
    /// A trailing `kB` multiplies the value by 1024 (meminfo).
    pub kb_suffix: bool,
}

/// Parses every line into `out`; calls `known(name, value)` for each, so the
/// caller can index the keys it knows.
pub(crate) fn parse_into(
    buf: &[u8],
    layout: Layout,
    out: &mut KeyValues,
    mut known: impl FnMut(&str, u64),
) -> Result<(), ParseError> {
    let mut c = Cursor::new(buf)?;
    out.clear();
    while !c.at_end() {
        let word = c.word();
        let name = if layout.colon {
            word.strip_suffix(b":")
        } else {
            Some(word)
        };
        let name = name
            .filter(|n| !n.is_empty() && n.iter().all(|&b| b.is_ascii_graphic()))
            .and_then(|n| std::str::from_utf8(n).ok())
            .ok_or_else(|| {
                c.err(
                    "name",
                    ParseErrorKind::Invalid,
                    if layout.colon {
                        "Name: VALUE [kB]"
                    } else {
                        "name VALUE"
                    },
                )
            })?;
        let mut value = c.u64("value")?;
        if layout.kb_suffix && !c.at_eol() {
            if c.word() != b"kB" {
                return Err(c.err("unit", ParseErrorKind::Invalid, "kB or nothing"));
            }
            value = value
                .checked_mul(1024)
                .ok_or_else(|| c.err("value", ParseErrorKind::Overflow, "a kB count below 2^54"))?;
        }
        if !c.at_eol() {
            return Err(c.err("value", ParseErrorKind::Invalid, "nothing after the value"));
        }
        if out.entries.len() >= MAX_ROWS {
            return Err(c.err("name", ParseErrorKind::TooMany, "at most 2^20 lines"));
        }
        out.push(name, value);
        known(name, value);
        c.next_line();
    }
    Ok(())
}
