//! `disk`: per-device transfers, as `sar -d` (/proc/diskstats).

use model::system::SystemRates;
use sys::Error;

use super::*;

pub(super) struct Disk;

impl Section for Disk {
    fn name(&self) -> &'static str {
        "disk"
    }
    fn sources(&self) -> &'static [Source] {
        &[Source::Diskstats]
    }
    fn columns(&self) -> &'static [&'static str] {
        &["device", "tps", "rkB/s", "wkB/s", "await_ms", "%util"]
    }
    fn report(&self, h: &History, w: &Window, _: &Options) -> Result<Report, Error> {
        system_pass(h, w, self, &mut |ts, a, b, rows| {
            for d in SystemRates::between(a, b).disks {
                let tps = d.reads_per_sec.zip(d.writes_per_sec).map(|(r, w)| r + w);
                rows.push(vec![
                    w.time(ts),
                    text(d.name.as_str()),
                    num(tps),
                    num(d.read_bytes_per_sec.map(|v| v / 1024.0)),
                    num(d.write_bytes_per_sec.map(|v| v / 1024.0)),
                    num(d.await_ms),
                    num(d.util_pct),
                ]);
            }
        })
    }
}
