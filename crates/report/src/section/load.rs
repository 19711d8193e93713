//! `load`: run queue, load averages, context switches and forks, as
//! `sar -q` and `sar -w` (/proc/loadavg, /proc/stat).

use model::system::SystemRates;
use sys::Error;

use super::*;

pub(super) struct Load;

impl Section for Load {
    fn name(&self) -> &'static str {
        "load"
    }
    fn sources(&self) -> &'static [Source] {
        &[Source::Loadavg, Source::Stat]
    }
    fn columns(&self) -> &'static [&'static str] {
        &[
            "runq", "blocked", "ldavg-1", "ldavg-5", "ldavg-15", "cswch/s", "forks/s",
        ]
    }
    fn report(&self, h: &History, w: &Window, _: &Options) -> Result<Report, Error> {
        system_pass(h, w, self, &mut |ts, a, b, rows| {
            let r = SystemRates::between(a, b);
            rows.push(vec![
                w.time(ts),
                num(r.procs_running.map(|v| v as f64)),
                num(r.procs_blocked.map(|v| v as f64)),
                num(r.load1),
                num(r.load5),
                num(r.load15),
                num(r.context_switches_per_sec),
                num(r.forks_per_sec),
            ]);
        })
    }
}
