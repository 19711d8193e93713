//! /proc/sys/kernel/random/entropy_avail and poolsize, one line each, read
//! in that order.

use serde::Serialize;

use crate::cursor::Cursor;
use crate::error::ParseError;

/// The files, below the proc root, in the order the reader concatenates
/// them.
pub const FILES: [&str; 2] = [
    "sys/kernel/random/entropy_avail",
    "sys/kernel/random/poolsize",
];

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Entropy {
    pub available_bits: u64,
    pub pool_size_bits: u64,
}

pub fn parse(buf: &[u8]) -> Result<Entropy, ParseError> {
    let mut c = Cursor::new(buf)?;
    let available_bits = c.u64("entropy_avail")?;
    c.next_line();
    Ok(Entropy {
        available_bits,
        pool_size_bits: c.u64("poolsize")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ParseErrorKind;

    #[test]
    fn exact_values() {
        assert_eq!(
            parse(b"256\n256\n").unwrap(),
            Entropy {
                available_bits: 256,
                pool_size_bits: 256
            }
        );
        let e = parse(b"256\n\n").unwrap_err();
        assert_eq!((e.field, e.kind), ("poolsize", ParseErrorKind::Missing));
    }
}
