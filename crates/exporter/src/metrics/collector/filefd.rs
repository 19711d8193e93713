//! node_exporter's filefd collector: /proc/sys/fs/file-nr.

use super::*;

pub(super) fn encode(out: &mut Out<'_>, x: &Input<'_>) -> Fmt {
    let s = x.s;
    if s.ok(Source::Filefd) {
        one(out, &NODE_FILEFD_ALLOCATED, s.filefd.allocated as f64)?;
        one(out, &NODE_FILEFD_MAXIMUM, s.filefd.maximum as f64)?;
    }
    Ok(())
}
