//! The encodings inside a block: varints, zigzag deltas, and the text
//! codec that stores a /proc file as a template (its text without the
//! numbers) and its numbers, each as a delta from the same file's previous
//! read. Decoding gives back the file byte for byte, so the readers' own
//! parsers and `model` derive the figures from it as they do live.

/// Appends `v` as a LEB128 varint.
pub fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Reads a varint at `*pos`, advancing it; `None` at the end or if malformed.
pub fn get_varint(b: &[u8], pos: &mut usize) -> Option<u64> {
    let mut v: u64 = 0;
    for shift in (0..64).step_by(7) {
        let byte = *b.get(*pos)?;
        *pos += 1;
        v |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Some(v);
        }
    }
    None
}

pub fn zigzag(d: i64) -> u64 {
    ((d << 1) ^ (d >> 63)) as u64
}

pub fn unzigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

/// `cur - prev` as a zigzag varint (wrapping: counters that wrap or reset
/// come back exactly).
pub fn put_delta(out: &mut Vec<u8>, prev: u64, cur: u64) {
    put_varint(out, zigzag(cur.wrapping_sub(prev) as i64));
}

pub fn get_delta(b: &[u8], pos: &mut usize, prev: u64) -> Option<u64> {
    Some(prev.wrapping_add(unzigzag(get_varint(b, pos)?) as u64))
}

/// Appends a length-prefixed byte string.
pub fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    put_varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

pub fn get_bytes<'a>(b: &'a [u8], pos: &mut usize) -> Option<&'a [u8]> {
    let len = usize::try_from(get_varint(b, pos)?).ok()?;
    let s = b.get(*pos..pos.checked_add(len)?)?;
    *pos += len;
    Some(s)
}

/// Escape byte in a template: followed by [`HOLE`] it marks a number's
/// place, followed by [`NUL`] a NUL byte of the text.
const ESC: u8 = 0;
const HOLE: u8 = 0;
const NUL: u8 = 1;

/// Splits `text` into a template and its numbers: every run of ASCII
/// digits that reads as a u64 without a leading zero (or is "0") becomes a
/// hole. Anything else, NUL bytes included, stays in the template.
pub fn split_numbers(text: &[u8], template: &mut Vec<u8>, numbers: &mut Vec<u64>) {
    template.clear();
    numbers.clear();
    let mut i = 0;
    while i < text.len() {
        let c = text[i];
        if c.is_ascii_digit() {
            let start = i;
            while i < text.len() && text[i].is_ascii_digit() {
                i += 1;
            }
            let run = &text[start..i];
            let plain = run.len() == 1 || run[0] != b'0';
            match (plain && run.len() <= 19)
                .then(|| std::str::from_utf8(run).ok()?.parse::<u64>().ok())
                .flatten()
            {
                Some(v) => {
                    template.extend_from_slice(&[ESC, HOLE]);
                    numbers.push(v);
                }
                None => template.extend_from_slice(run),
            }
            continue;
        }
        if c == ESC {
            template.extend_from_slice(&[ESC, NUL]);
        } else {
            template.push(c);
        }
        i += 1;
    }
}

/// Rebuilds the text from a template and its numbers; `None` if they do
/// not fit together.
pub fn join_numbers(template: &[u8], numbers: &[u64], out: &mut Vec<u8>) -> Option<()> {
    out.clear();
    let mut n = numbers.iter();
    let mut i = 0;
    while i < template.len() {
        let c = template[i];
        if c == ESC {
            match *template.get(i + 1)? {
                HOLE => {
                    let v = n.next()?;
                    let mut digits = [0u8; 20];
                    let mut k = digits.len();
                    let mut v = *v;
                    loop {
                        k -= 1;
                        digits[k] = b'0' + (v % 10) as u8;
                        v /= 10;
                        if v == 0 {
                            break;
                        }
                    }
                    out.extend_from_slice(&digits[k..]);
                }
                NUL => out.push(0),
                _ => return None,
            }
            i += 2;
        } else {
            out.push(c);
            i += 1;
        }
    }
    n.next().is_none().then_some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(text: &[u8]) {
        let (mut t, mut n, mut back) = (Vec::new(), Vec::new(), Vec::new());
        split_numbers(text, &mut t, &mut n);
        join_numbers(&t, &n, &mut back).unwrap();
        assert_eq!(back, text, "{}", String::from_utf8_lossy(text));
    }

    #[test]
    fn a_proc_file_comes_back_byte_for_byte() {
        round_trip(b"cpu  4705 356 584 3699176 23060 0 277 0 0 0\nintr 1 0 0\n");
        round_trip(b"0.52 0.61 0.70 2/345 12345\n");
        round_trip(b"some avg10=0.00 avg60=0.05 avg300=0.10 total=007 x\n");
        round_trip(b"99999999999999999999 18446744073709551615 18446744073709551616\n");
        round_trip(b"nul\0in\0\0the middle 12\0\x01 7\0");
        round_trip(b"");
        round_trip(b"0 00 000 0x10 10");
    }

    #[test]
    fn numbers_are_holes_and_the_rest_is_the_template() {
        let (mut t, mut n) = (Vec::new(), Vec::new());
        split_numbers(b"MemTotal: 2048 kB\n", &mut t, &mut n);
        assert_eq!(t, b"MemTotal: \0\0 kB\n");
        assert_eq!(n, [2048]);
    }

    #[test]
    fn deltas_wrap_both_ways() {
        let mut b = Vec::new();
        put_delta(&mut b, 10, 3);
        put_delta(&mut b, u64::MAX, 1);
        put_delta(&mut b, 5, 5);
        let mut p = 0;
        assert_eq!(get_delta(&b, &mut p, 10), Some(3));
        assert_eq!(get_delta(&b, &mut p, u64::MAX), Some(1));
        assert_eq!(get_delta(&b, &mut p, 5), Some(5));
        assert_eq!(b.len(), 3);
        assert_eq!(get_varint(&[0x80], &mut 0), None);
    }
}
