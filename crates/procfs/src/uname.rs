//! The uname fields, from /proc/sys/kernel (so a fixture tree or another
//! machine's copy gives its own): `ostype` (sysname), `hostname`
//! (nodename), `osrelease`, `version`, `arch` (machine; Linux 6.1+; the
//! running kernel's uname(2) stands in when reading the live /proc of an
//! older one) and `domainname`, one file each, read in that order.

use serde::Serialize;

use crate::error::{ParseError, ParseErrorKind};

/// The files, below the proc root, in the order the reader concatenates
/// them (one line each).
pub const FILES: [&str; 6] = [
    "sys/kernel/ostype",
    "sys/kernel/hostname",
    "sys/kernel/osrelease",
    "sys/kernel/version",
    "sys/kernel/arch",
    "sys/kernel/domainname",
];

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Uname {
    pub sysname: String,
    pub nodename: String,
    pub release: String,
    pub version: String,
    /// Empty when the tree has no `arch` file.
    pub machine: String,
    pub domainname: String,
}

/// Parses the concatenation of [`FILES`] (a missing optional file is an
/// empty line), reusing `out`'s strings.
pub fn parse_into(buf: &[u8], out: &mut Uname) -> Result<(), ParseError> {
    let mut lines = buf.split(|&b| b == b'\n');
    let fields: [(&mut String, &'static str); 6] = [
        (&mut out.sysname, "ostype"),
        (&mut out.nodename, "hostname"),
        (&mut out.release, "osrelease"),
        (&mut out.version, "version"),
        (&mut out.machine, "arch"),
        (&mut out.domainname, "domainname"),
    ];
    for (i, (dst, field)) in fields.into_iter().enumerate() {
        let line = lines.next().ok_or_else(|| {
            // Reported at the last line there is.
            ParseError::new(
                (i as u32).max(1),
                field,
                ParseErrorKind::Missing,
                "one line per uname file",
            )
        })?;
        if line.len() > 1024 {
            return Err(ParseError::new(
                i as u32 + 1,
                field,
                ParseErrorKind::TooLong,
                "at most 1024 bytes",
            ));
        }
        let text = std::str::from_utf8(line).map_err(|_| {
            ParseError::new(i as u32 + 1, field, ParseErrorKind::Invalid, "UTF-8 text")
        })?;
        dst.clear();
        dst.push_str(text.trim());
    }
    if out.sysname.is_empty() {
        return Err(ParseError::new(
            1,
            "ostype",
            ParseErrorKind::Missing,
            "the kernel's name",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_values() {
        let mut u = Uname::default();
        parse_into(
            b"Linux\nbox\n6.18.44\n#1 SMP PREEMPT_DYNAMIC Debian 6.18.44-1\nx86_64\n(none)\n",
            &mut u,
        )
        .unwrap();
        assert_eq!(u.sysname, "Linux");
        assert_eq!(u.nodename, "box");
        assert_eq!(u.release, "6.18.44");
        assert_eq!(u.version, "#1 SMP PREEMPT_DYNAMIC Debian 6.18.44-1");
        assert_eq!(u.machine, "x86_64");
        assert_eq!(u.domainname, "(none)");
        let e = parse_into(b"Linux\nbox\n", &mut u).unwrap_err();
        assert_eq!((e.field, e.kind), ("version", ParseErrorKind::Missing));
        let e = parse_into(b"\nbox\n1\n2\n\n\n", &mut u).unwrap_err();
        assert_eq!(e.field, "ostype");
    }
}
