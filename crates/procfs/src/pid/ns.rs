//! /proc/PID/ns/net: the link naming a process's network namespace,
//! `net:[INODE]`; the inode tells one namespace from another.

/// The namespace inode of a `/proc/PID/ns/net` link's target, or `None`
/// for a target of another form.
pub fn parse_net_ns(target: &[u8]) -> Option<u64> {
    let inner = target.strip_prefix(b"net:[")?.strip_suffix(b"]")?;
    if inner.is_empty() || inner.len() > 20 || !inner.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(inner).ok()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_namespace_link_gives_its_inode_and_anything_else_none() {
        assert_eq!(parse_net_ns(b"net:[4026531840]"), Some(4026531840));
        for bad in [
            &b"net:[]"[..],
            b"mnt:[4026531840]",
            b"net:[40265x1840]",
            b"net:[4026531840",
            b"net:[99999999999999999999999]",
            b"",
        ] {
            assert_eq!(parse_net_ns(bad), None, "{bad:?}");
        }
    }
}
