//! SELinux state (node_exporter's selinux collector), gathered by the
//! reader: `enabled 0` when selinuxfs is not there (`<sys>/fs/selinux`);
//! otherwise `enabled 1`, `current <enforce>` (1 enforcing, 0 permissive)
//! and `config <mode>` from `SELINUX=` in /etc/selinux/config below the
//! root-filesystem prefix (1 enforcing, 0 permissive, -1 disabled; absent
//! when the file is).

use serde::Serialize;

use crate::error::{ParseError, ParseErrorKind};

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Selinux {
    pub enabled: bool,
    pub current_mode: Option<i64>,
    pub config_mode: Option<i64>,
}

/// The mode `SELINUX=` names in /etc/selinux/config.
pub fn config_mode(config: &str) -> Option<i64> {
    let v = config
        .lines()
        .rev()
        .find_map(|l| l.trim().strip_prefix("SELINUX="))?;
    match v.trim().trim_matches('"') {
        "enforcing" => Some(1),
        "permissive" => Some(0),
        "disabled" => Some(-1),
        _ => None,
    }
}

pub fn parse(buf: &[u8]) -> Result<Selinux, ParseError> {
    let mut s = Selinux::default();
    let mut seen = false;
    for (i, line) in buf.split(|&b| b == b'\n').enumerate() {
        let n = i as u32 + 1;
        if line.is_empty() {
            continue;
        }
        let text = std::str::from_utf8(line)
            .map_err(|_| ParseError::new(n, "key", ParseErrorKind::Invalid, "UTF-8 text"))?;
        let (k, v) = text.split_once(' ').unwrap_or((text, ""));
        let v: i64 = v
            .trim()
            .parse()
            .map_err(|_| ParseError::new(n, "value", ParseErrorKind::Invalid, "an integer"))?;
        match k {
            "enabled" => {
                s.enabled = v != 0;
                seen = true;
            }
            "current" => s.current_mode = Some(v),
            "config" => s.config_mode = Some(v),
            _ => {}
        }
    }
    if !seen {
        return Err(ParseError::new(
            1,
            "enabled",
            ParseErrorKind::Missing,
            "`enabled 0|1`",
        ));
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_values() {
        assert_eq!(parse(b"enabled 0\n").unwrap(), Selinux::default());
        let s = parse(b"enabled 1\ncurrent 0\nconfig 1\n").unwrap();
        assert_eq!(
            (s.enabled, s.current_mode, s.config_mode),
            (true, Some(0), Some(1))
        );
        assert_eq!(parse(b"current x\n").unwrap_err().field, "value");
        assert_eq!(parse(b"\n").unwrap_err().field, "enabled");
        assert_eq!(
            config_mode("# x\nSELINUX=enforcing\nSELINUXTYPE=targeted\n"),
            Some(1)
        );
        assert_eq!(config_mode("SELINUX=disabled"), Some(-1));
        assert_eq!(config_mode("nothing"), None);
    }
}
