//! Helpers the parsers of small tables and gathered texts share: the error
//! at a line, UTF-8 lines with their numbers, and records (`@<name>` opens
//! one; the lines after it belong to it).

use crate::error::{ParseError, ParseErrorKind};
use crate::limits::MAX_ROWS;

/// A parse error at 1-based line `line`.
pub(crate) fn err(
    line: usize,
    field: &'static str,
    kind: ParseErrorKind,
    expected: &'static str,
) -> ParseError {
    ParseError::new(line as u32, field, kind, expected)
}

/// The non-empty lines of `buf`, each with its 1-based number, as UTF-8.
pub(crate) fn lines(buf: &[u8]) -> impl Iterator<Item = Result<(usize, &str), ParseError>> {
    buf.split(|&b| b == b'\n')
        .enumerate()
        .filter(|(_, l)| !l.is_empty())
        .map(|(i, l)| {
            std::str::from_utf8(l)
                .map(|t| (i + 1, t))
                .map_err(|_| err(i + 1, "line", ParseErrorKind::Invalid, "UTF-8 text"))
        })
}

/// Checks the name of a record opened at line `n` (non-empty, no space or
/// `/`) and that `open` records leave room for one more.
pub(crate) fn open(
    n: usize,
    name: &str,
    open: usize,
    field: &'static str,
) -> Result<(), ParseError> {
    if name.is_empty() || name.len() > 255 || name.contains(['/', ' ']) {
        return Err(err(n, field, ParseErrorKind::Invalid, "`@<name>`"));
    }
    if open >= MAX_ROWS {
        return Err(err(
            n,
            field,
            ParseErrorKind::TooMany,
            "at most 2^20 records",
        ));
    }
    Ok(())
}

/// The record line `n` belongs to: the last one opened.
pub(crate) fn current<'a, T>(
    records: &'a mut [T],
    n: usize,
    field: &'static str,
) -> Result<&'a mut T, ParseError> {
    records
        .last_mut()
        .ok_or_else(|| err(n, field, ParseErrorKind::Missing, "`@<name>` first"))
}

/// Entry `i` of `out`, reused when a previous parse left one there (so a
/// warm parse allocates nothing), else a new default one.
pub(crate) fn slot<T: Default>(out: &mut Vec<T>, i: usize) -> &mut T {
    if i == out.len() {
        out.push(T::default());
    }
    &mut out[i]
}

/// `dst` set to `src`, in its own buffer when it fits.
pub(crate) fn set(dst: &mut String, src: &str) {
    dst.clear();
    dst.push_str(src);
}
