//! Source bytes kept as read, for a history: a run of entries, each
//! `source (u8) | length (u32, little-endian) | bytes`.

use crate::Source;

pub(crate) fn push(out: &mut Vec<u8>, source: Source, bytes: &[u8]) {
    out.push(source as u8);
    out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
    out.extend_from_slice(bytes);
}

/// Appends one entry: what the reader keeps, for a caller that has the
/// bytes some other way (tests, a replayed journal).
pub fn append(out: &mut Vec<u8>, source: Source, bytes: &[u8]) {
    push(out, source, bytes);
}

/// The entries of `kept`, in order; stops at the first malformed one.
pub fn entries(mut kept: &[u8]) -> impl Iterator<Item = (Source, &[u8])> {
    std::iter::from_fn(move || {
        let (&s, rest) = kept.split_first()?;
        let source = *Source::ALL.get(s as usize)?;
        let len = u32::from_le_bytes(rest.get(..4)?.try_into().ok()?) as usize;
        let bytes = rest.get(4..4 + len)?;
        kept = &rest[4 + len..];
        Some((source, bytes))
    })
}
