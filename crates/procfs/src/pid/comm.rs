//! A task's name, inline.

use serde::{Serialize, Serializer};

/// The longest name /proc/PID/stat prints: 15 bytes for a task, up to 63 for a
/// workqueue worker (`kworker/u8:1-events_unbound`).
pub const COMM_CAPACITY: usize = 64;

/// A task's name as /proc shows it, inline (no allocation).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Comm {
    len: u8,
    bytes: [u8; COMM_CAPACITY],
}

impl Default for Comm {
    fn default() -> Self {
        Self {
            len: 0,
            bytes: [0; COMM_CAPACITY],
        }
    }
}

impl Comm {
    /// Takes at most [`COMM_CAPACITY`] bytes, stopping at the first NUL (a
    /// fixed-size kernel `comm[16]` is NUL-padded).
    pub fn new(s: &[u8]) -> Comm {
        let s = match s.iter().position(|&b| b == 0) {
            Some(nul) => &s[..nul],
            None => s,
        };
        let len = s.len().min(COMM_CAPACITY);
        let mut c = Comm::default();
        c.bytes[..len].copy_from_slice(&s[..len]);
        c.len = len as u8;
        c
    }

    /// From a kernel `comm[16]` as a BPF program copies it: up to the
    /// first NUL, with every byte after it cleared (the kernel pads with
    /// NULs, but a copy taken during a rename may hold old bytes there).
    /// Word operations, no byte loop: this runs once per task per snapshot.
    pub fn from_task_comm(raw: &[u8; 16]) -> Comm {
        const ONES: u128 = u128::from_le_bytes([0x01; 16]);
        const HIGHS: u128 = u128::from_le_bytes([0x80; 16]);
        let v = u128::from_le_bytes(*raw);
        // The lowest set high bit marks the first zero byte (bytes above it
        // may be marked wrongly by the borrow; they are ignored).
        let zeros = v.wrapping_sub(ONES) & !v & HIGHS;
        let len = (zeros.trailing_zeros() / 8).min(16) as usize;
        let kept = if len == 16 {
            v
        } else {
            v & ((1u128 << (len * 8)) - 1)
        };
        // Built whole from four words: a zeroed array written in part and
        // then copied into its row costs a stack round trip per task.
        let words = [kept, 0, 0, 0];
        // SAFETY: [u128; 4] and [u8; 64] have the same size, and any bits
        // are valid bytes.
        let bytes: [u8; COMM_CAPACITY] = unsafe { std::mem::transmute(words) };
        Comm {
            len: len as u8,
            bytes,
        }
    }

    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.len as usize]
    }

    /// The name with any byte that is not UTF-8 replaced.
    pub fn to_string_lossy(&self) -> std::borrow::Cow<'_, str> {
        String::from_utf8_lossy(self.as_bytes())
    }
}

impl std::fmt::Debug for Comm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}", self.to_string_lossy())
    }
}

impl Serialize for Comm {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string_lossy())
    }
}
