//! A forward-only cursor over the bytes of one kernel file: the single pass every
//! parser in this crate is built on. It never allocates and never panics; every
//! failure is a [`ParseError`] naming the 1-based line and the field.

use crate::error::{ParseError, ParseErrorKind};

pub(crate) struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
    line: u32,
}

#[inline]
fn is_blank(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

impl<'a> Cursor<'a> {
    /// Starts a cursor. Kernel files end with a newline, but copies of
    /// them (trees copied by hand or by tools) often lose it: a last line
    /// without one is read as a line. A line cut short (fields missing) is
    /// found by the parser reading it, never guessed.
    pub(crate) fn new(buf: &'a [u8]) -> Result<Self, ParseError> {
        Ok(Self {
            buf,
            pos: 0,
            line: 1,
        })
    }

    /// Current 1-based line number.
    #[inline]
    pub(crate) fn line(&self) -> u32 {
        self.line
    }

    #[inline]
    pub(crate) fn at_end(&self) -> bool {
        self.pos >= self.buf.len()
    }

    #[inline]
    fn peek(&self) -> Option<u8> {
        self.buf.get(self.pos).copied()
    }

    #[inline(always)]
    pub(crate) fn skip_blanks(&mut self) {
        let buf = self.buf;
        let mut p = self.pos;
        while p < buf.len() && is_blank(buf[p]) {
            p += 1;
        }
        self.pos = p;
    }

    /// True when only blanks remain before the end of the line.
    #[inline]
    pub(crate) fn at_eol(&mut self) -> bool {
        self.skip_blanks();
        matches!(self.peek(), None | Some(b'\n'))
    }

    /// True when the line continues with a digit (after blanks).
    #[inline]
    pub(crate) fn at_digit(&mut self) -> bool {
        self.skip_blanks();
        matches!(self.peek(), Some(b'0'..=b'9'))
    }

    /// Moves past the next newline.
    #[inline]
    pub(crate) fn next_line(&mut self) {
        match self.buf[self.pos.min(self.buf.len())..]
            .iter()
            .position(|&b| b == b'\n')
        {
            Some(off) => {
                self.pos += off + 1;
                self.line += 1;
            }
            // The last line had no newline: there is no next one.
            None => self.pos = self.buf.len(),
        }
    }

    /// The rest of the current line without surrounding blanks; leaves the cursor
    /// at the newline.
    pub(crate) fn rest_of_line(&mut self) -> &'a [u8] {
        self.skip_blanks();
        let start = self.pos;
        let end = match self.buf[start..].iter().position(|&b| b == b'\n') {
            Some(off) => start + off,
            None => self.buf.len(),
        };
        self.pos = end;
        let mut s = &self.buf[start..end];
        while let Some((&b, head)) = s.split_last() {
            if !is_blank(b) {
                break;
            }
            s = head;
        }
        s
    }

    /// The next blank-separated word on this line (empty at end of line).
    #[inline]
    pub(crate) fn word(&mut self) -> &'a [u8] {
        self.skip_blanks();
        let start = self.pos;
        while let Some(&b) = self.buf.get(self.pos) {
            if is_blank(b) || b == b'\n' {
                break;
            }
            self.pos += 1;
        }
        &self.buf[start..self.pos]
    }

    /// Skips blanks, then takes the bytes up to `delim` on this line and moves
    /// past it; `None` (cursor unmoved past the blanks) if the line has no `delim`.
    pub(crate) fn take_until(&mut self, delim: u8) -> Option<&'a [u8]> {
        self.skip_blanks();
        let rest = &self.buf[self.pos..];
        let end = rest.iter().position(|&b| b == delim || b == b'\n')?;
        if rest[end] != delim {
            return None;
        }
        self.pos += end + 1;
        Some(&rest[..end])
    }

    /// Consumes `prefix` if the cursor is at it.
    #[inline]
    pub(crate) fn eat(&mut self, prefix: &[u8]) -> bool {
        if self.buf[self.pos.min(self.buf.len())..].starts_with(prefix) {
            self.pos += prefix.len();
            true
        } else {
            false
        }
    }

    pub(crate) fn err(
        &self,
        field: &'static str,
        kind: ParseErrorKind,
        expected: &'static str,
    ) -> ParseError {
        ParseError::new(self.line, field, kind, expected)
    }

    /// Parses an unsigned decimal that must end at a blank, a newline or the end.
    /// The hot path of every parser: locals instead of fields in the loops, and
    /// the error paths kept out of line.
    #[inline(always)]
    pub(crate) fn u64(&mut self, field: &'static str) -> Result<u64, ParseError> {
        let buf = self.buf;
        let mut p = self.pos;
        while p < buf.len() && is_blank(buf[p]) {
            p += 1;
        }
        let start = p;
        let mut v: u64 = 0;
        while p < buf.len() {
            let d = buf[p].wrapping_sub(b'0');
            if d > 9 {
                break;
            }
            v = v.wrapping_mul(10).wrapping_add(d as u64);
            p += 1;
        }
        self.pos = p;
        let n = p - start;
        let ends_well = p == buf.len() || is_blank(buf[p]) || buf[p] == b'\n';
        if n == 0 || n > 19 || !ends_well {
            return self.u64_slow(field, start);
        }
        Ok(v)
    }

    /// [`Cursor::u64`]'s rare cases: no digits, trailing garbage, 20+ digits.
    #[cold]
    #[inline(never)]
    fn u64_slow(&mut self, field: &'static str, start: usize) -> Result<u64, ParseError> {
        if self.pos == start {
            let kind = match self.peek() {
                None | Some(b'\n') => ParseErrorKind::Missing,
                _ => ParseErrorKind::Invalid,
            };
            return Err(self.err(field, kind, "an unsigned decimal integer"));
        }
        if let Some(b) = self.peek()
            && !is_blank(b)
            && b != b'\n'
        {
            return Err(self.err(
                field,
                ParseErrorKind::Invalid,
                "an unsigned decimal integer",
            ));
        }
        // Only numbers of 20 or more digits can overflow: redo them checked.
        checked_decimal(&self.buf[start..self.pos])
            .ok_or_else(|| self.err(field, ParseErrorKind::Overflow, "a value below 2^64"))
    }

    /// A signed decimal (`-` then digits), as /proc/PID/stat prints nice and
    /// priority.
    #[inline]
    pub(crate) fn i64(&mut self, field: &'static str) -> Result<i64, ParseError> {
        self.skip_blanks();
        let negative = self.eat(b"-");
        let v = self.u64(field)?;
        let v = i64::try_from(v)
            .map_err(|_| self.err(field, ParseErrorKind::Overflow, "a value within 2^63"))?;
        Ok(if negative { -v } else { v })
    }

    /// Skips one blank-separated word on this line, failing at the end of it.
    #[inline]
    pub(crate) fn skip_word(&mut self, field: &'static str) -> Result<(), ParseError> {
        if self.word().is_empty() {
            return Err(self.err(field, ParseErrorKind::Missing, "another field on the line"));
        }
        Ok(())
    }

    /// Like [`Cursor::u64`], but `None` at the end of the line.
    #[inline]
    pub(crate) fn opt_u64(&mut self, field: &'static str) -> Result<Option<u64>, ParseError> {
        if self.at_eol() {
            Ok(None)
        } else {
            self.u64(field).map(Some)
        }
    }

    /// A word that must be `NAME=value` with value a fixed-point decimal (as in
    /// /proc/pressure's `avg10=1.50`); returns the value.
    pub(crate) fn keyed_decimal(&mut self, key: &'static str) -> Result<f64, ParseError> {
        self.key(key, "KEY=DECIMAL")?;
        self.decimal(key)
    }

    /// A word that must be `NAME=integer`.
    pub(crate) fn keyed_u64(&mut self, key: &'static str) -> Result<u64, ParseError> {
        self.key(key, "KEY=INTEGER")?;
        self.u64(key)
    }

    /// `key=` at the next word, eaten; else the error (missing at the end
    /// of the line, invalid otherwise), the cursor where it was.
    fn key(&mut self, key: &'static str, expected: &'static str) -> Result<(), ParseError> {
        self.skip_blanks();
        let start = self.pos;
        if self.eat(key.as_bytes()) && self.eat(b"=") {
            return Ok(());
        }
        self.pos = start;
        let kind = if self.at_eol() {
            ParseErrorKind::Missing
        } else {
            ParseErrorKind::Invalid
        };
        Err(self.err(key, kind, expected))
    }

    /// A non-negative fixed-point decimal such as `0.44` or `12`.
    pub(crate) fn decimal(&mut self, field: &'static str) -> Result<f64, ParseError> {
        let word = self.word();
        parse_decimal(word).ok_or_else(|| {
            let kind = if word.is_empty() {
                ParseErrorKind::Missing
            } else {
                ParseErrorKind::Invalid
            };
            self.err(field, kind, "a non-negative decimal such as 0.44")
        })
    }
}

fn checked_decimal(digits: &[u8]) -> Option<u64> {
    digits.iter().try_fold(0u64, |v, &b| {
        v.checked_mul(10)?.checked_add((b - b'0') as u64)
    })
}

/// Parses `INT[.FRAC]` with at most 18 digits on either side.
pub(crate) fn parse_decimal(word: &[u8]) -> Option<f64> {
    let (int, frac) = match word.iter().position(|&b| b == b'.') {
        Some(i) => (&word[..i], &word[i + 1..]),
        None => (word, &word[..0]),
    };
    if int.is_empty() || int.len() > 18 || frac.len() > 18 {
        return None;
    }
    if !int.iter().chain(frac).all(u8::is_ascii_digit) {
        return None;
    }
    let i = checked_decimal(int)? as f64;
    let f = if frac.is_empty() {
        0.0
    } else {
        checked_decimal(frac)? as f64 / 10f64.powi(frac.len() as i32)
    };
    Some(i + f)
}

/// Parses a whole word as an unsigned decimal.
pub(crate) fn parse_u64_word(word: &[u8]) -> Option<u64> {
    if word.is_empty() || !word.iter().all(u8::is_ascii_digit) {
        return None;
    }
    checked_decimal(word)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_end_at_blank_or_newline() {
        let mut c = Cursor::new(b"  12\t34\n5\n").unwrap();
        assert_eq!(c.u64("a").unwrap(), 12);
        assert_eq!(c.u64("b").unwrap(), 34);
        assert_eq!(c.opt_u64("c").unwrap(), None);
        c.next_line();
        assert_eq!(c.line(), 2);
        assert_eq!(c.u64("d").unwrap(), 5);
    }

    #[test]
    fn u64_max_parses_and_one_more_overflows() {
        let mut c = Cursor::new(b"18446744073709551615 18446744073709551616\n").unwrap();
        assert_eq!(c.u64("a").unwrap(), u64::MAX);
        assert_eq!(c.u64("b").unwrap_err().kind, ParseErrorKind::Overflow);
    }

    #[test]
    fn digits_followed_by_garbage_are_invalid() {
        let mut c = Cursor::new(b"12a\n").unwrap();
        assert_eq!(c.u64("x").unwrap_err().kind, ParseErrorKind::Invalid);
        let mut c = Cursor::new(b"1\0\n").unwrap();
        assert_eq!(c.u64("x").unwrap_err().kind, ParseErrorKind::Invalid);
    }

    #[test]
    fn missing_at_end_of_line() {
        let mut c = Cursor::new(b"   \n").unwrap();
        let e = c.u64("x").unwrap_err();
        assert_eq!((e.line, e.field, e.kind), (1, "x", ParseErrorKind::Missing));
    }

    /// A copy that lost its final newline: the last line is still a line.
    #[test]
    fn a_last_line_without_its_newline_is_read() {
        let mut c = Cursor::new(b"1\n2 3").unwrap();
        assert_eq!(c.u64("a").unwrap(), 1);
        c.next_line();
        assert_eq!(
            (c.line(), c.u64("b").unwrap(), c.u64("c").unwrap()),
            (2, 2, 3)
        );
        assert!(c.at_eol());
        let e = c.u64("d").unwrap_err();
        assert_eq!((e.line, e.field, e.kind), (2, "d", ParseErrorKind::Missing));
    }

    #[test]
    fn decimals() {
        assert_eq!(parse_decimal(b"0.44"), Some(0.44));
        assert_eq!(parse_decimal(b"12"), Some(12.0));
        assert_eq!(parse_decimal(b"1."), Some(1.0));
        assert_eq!(parse_decimal(b".5"), None);
        assert_eq!(parse_decimal(b"-1"), None);
        assert_eq!(parse_decimal(b"1.2.3"), None);
    }
}
