//! /proc/PID/io.

use serde::Serialize;

use crate::cursor::Cursor;
use crate::error::{ParseError, ParseErrorKind};

/// /proc/PID/io (CONFIG_TASK_IO_ACCOUNTING): process-wide, dead threads
/// included.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct PidIo {
    /// Bytes passed to read-like syscalls (page cache hits included).
    pub rchar: u64,
    pub wchar: u64,
    /// Read-like and write-like syscalls.
    pub syscr: u64,
    pub syscw: u64,
    /// Bytes fetched from storage.
    pub read_bytes: u64,
    /// Bytes sent (or to be sent) to storage.
    pub write_bytes: u64,
    /// Bytes of write_bytes that truncation cancelled.
    pub cancelled_write_bytes: u64,
}

pub fn parse_io(buf: &[u8]) -> Result<PidIo, ParseError> {
    let mut c = Cursor::new(buf)?;
    let mut io = PidIo::default();
    let fields: [(&[u8], &'static str, &mut u64); 7] = [
        (b"rchar:", "rchar", &mut io.rchar),
        (b"wchar:", "wchar", &mut io.wchar),
        (b"syscr:", "syscr", &mut io.syscr),
        (b"syscw:", "syscw", &mut io.syscw),
        (b"read_bytes:", "read_bytes", &mut io.read_bytes),
        (b"write_bytes:", "write_bytes", &mut io.write_bytes),
        (
            b"cancelled_write_bytes:",
            "cancelled_write_bytes",
            &mut io.cancelled_write_bytes,
        ),
    ];
    for (key, name, slot) in fields {
        if !c.eat(key) {
            let kind = if c.at_end() {
                ParseErrorKind::Missing
            } else {
                ParseErrorKind::Invalid
            };
            return Err(c.err(
                name,
                kind,
                "the seven lines rchar: .. cancelled_write_bytes:",
            ));
        }
        *slot = c.u64(name)?;
        c.next_line();
    }
    Ok(io)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn io_counters() {
        let io = b"rchar: 1\nwchar: 2\nsyscr: 3\nsyscw: 4\nread_bytes: 5\nwrite_bytes: 6\ncancelled_write_bytes: 7\n";
        let io = parse_io(io).unwrap();
        assert_eq!((io.rchar, io.syscw, io.cancelled_write_bytes), (1, 4, 7));
        assert_eq!(parse_io(b"rchar: 1\n").unwrap_err().field, "wchar");
    }
}
