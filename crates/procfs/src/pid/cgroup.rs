//! The cgroup v2 line of /proc/PID/cgroup.

use crate::cursor::Cursor;
use crate::error::{ParseError, ParseErrorKind};

/// The cgroup v2 path of /proc/PID/cgroup (the `0::/path` line); `None` when
/// the task is only in v1 hierarchies.
pub fn parse_cgroup_v2(buf: &[u8]) -> Result<Option<&[u8]>, ParseError> {
    let mut c = Cursor::new(buf)?;
    while !c.at_end() {
        if c.eat(b"0::") {
            let path = c.rest_of_line();
            if path.first() != Some(&b'/') {
                return Err(c.err("cgroup path", ParseErrorKind::Invalid, "0::/PATH"));
            }
            return Ok(Some(path));
        }
        c.next_line();
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cgroup_v2_line() {
        let cg = b"12:cpu:/x\n0::/system.slice/a b.service\n";
        assert_eq!(
            parse_cgroup_v2(cg).unwrap(),
            Some(&b"/system.slice/a b.service"[..])
        );
        assert_eq!(parse_cgroup_v2(b"1:name=systemd:/\n").unwrap(), None);
    }
}
