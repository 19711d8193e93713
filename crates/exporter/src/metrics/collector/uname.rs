//! node_exporter's uname collector.

use super::*;

pub(super) fn encode(out: &mut Out<'_>, x: &Input<'_>) -> Fmt {
    let s = x.s;
    if s.ok(Source::Uname) {
        let u = &s.uname;
        info(
            out,
            &NODE_UNAME_INFO,
            &[
                ("sysname", u.sysname.as_str()),
                ("release", u.release.as_str()),
                ("version", u.version.as_str()),
                ("machine", u.machine.as_str()),
                ("nodename", u.nodename.as_str()),
                ("domainname", u.domainname.as_str()),
            ],
        )?;
    }
    Ok(())
}
