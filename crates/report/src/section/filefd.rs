//! `filefd`: file handles allocated against the limit, as `sar -v`'s
//! file-nr (/proc/sys/fs/file-nr).

use model::system::SystemRates;
use sys::Error;

use super::*;

pub(super) struct Filefd;

impl Section for Filefd {
    fn name(&self) -> &'static str {
        "filefd"
    }
    fn sources(&self) -> &'static [Source] {
        &[Source::Filefd]
    }
    fn columns(&self) -> &'static [&'static str] {
        &["file-nr", "file-max", "%used"]
    }
    fn report(&self, h: &History, w: &Window, _: &Options) -> Result<Report, Error> {
        system_pass(h, w, self, &mut |ts, a, b, rows| {
            if let Some(f) = SystemRates::between(a, b).files {
                rows.push(vec![
                    w.time(ts),
                    num(Some(f.allocated as f64)),
                    num(Some(f.maximum as f64)),
                    num(Some(f.used_pct)),
                ]);
            }
        })
    }
}
