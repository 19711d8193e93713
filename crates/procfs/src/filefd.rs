//! /proc/sys/fs/file-nr: `304\t0\t2466170` (allocated, unused since 2.6,
//! maximum).

use serde::Serialize;

use crate::cursor::Cursor;
use crate::error::ParseError;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Filefd {
    /// File handles allocated now.
    pub allocated: u64,
    /// Allocated but unused (0 since Linux 2.6).
    pub unused: u64,
    /// The limit, fs.file-max.
    pub maximum: u64,
}

pub fn parse(buf: &[u8]) -> Result<Filefd, ParseError> {
    let mut c = Cursor::new(buf)?;
    Ok(Filefd {
        allocated: c.u64("allocated")?,
        unused: c.u64("unused")?,
        maximum: c.u64("maximum")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ParseErrorKind;

    #[test]
    fn exact_values() {
        let f = parse(b"304\t0\t2466170\n").unwrap();
        assert_eq!((f.allocated, f.unused, f.maximum), (304, 0, 2466170));
        // fs.file-max may be 2^63-1.
        let f = parse(b"1\t0\t9223372036854775807\n").unwrap();
        assert_eq!(f.maximum, 9223372036854775807);
        let e = parse(b"304\t0\n").unwrap_err();
        assert_eq!((e.field, e.kind), ("maximum", ParseErrorKind::Missing));
    }
}
