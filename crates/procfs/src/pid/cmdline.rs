//! /proc/PID/cmdline.

/// /proc/PID/cmdline as `ps` shows it: the arguments (NUL-terminated in the
/// file) joined by single spaces, bytes that are not UTF-8 replaced. A
/// process that rewrote its argument area keeps whatever text it wrote.
/// `None` when empty: kernel threads, zombies, and processes whose memory
/// is gone.
pub fn cmdline_text(buf: &[u8]) -> Option<String> {
    let args = buf.strip_suffix(b"\0").unwrap_or(buf);
    if args.is_empty() {
        return None;
    }
    let joined: Vec<u8> = args
        .iter()
        .map(|&b| if b == 0 { b' ' } else { b })
        .collect();
    // Valid UTF-8 (the usual case) becomes the string without a second copy.
    Some(
        String::from_utf8(joined)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_lines_as_ps_shows_them() {
        assert_eq!(cmdline_text(b"sleep\0x\0").as_deref(), Some("sleep x"));
        assert_eq!(cmdline_text(b"a b\0\0c\0").as_deref(), Some("a b  c"));
        // Rewritten by the process itself: no terminating NUL.
        assert_eq!(
            cmdline_text(b"postgres: writer").as_deref(),
            Some("postgres: writer")
        );
        assert_eq!(cmdline_text(b"\xff\0").as_deref(), Some("\u{fffd}"));
        assert_eq!(cmdline_text(b""), None);
        assert_eq!(cmdline_text(b"\0"), None);
    }
}
