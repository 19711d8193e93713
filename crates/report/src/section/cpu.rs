//! `cpu`: where the CPUs' time went, as `sar -u` (/proc/stat).

use model::system::SystemRates;
use sys::Error;

use super::*;

pub(super) struct Cpu;

impl Section for Cpu {
    fn name(&self) -> &'static str {
        "cpu"
    }
    fn sources(&self) -> &'static [Source] {
        &[Source::Stat]
    }
    fn columns(&self) -> &'static [&'static str] {
        &[
            "%user", "%nice", "%system", "%iowait", "%irq", "%softirq", "%steal", "%idle",
        ]
    }
    fn report(&self, h: &History, w: &Window, _: &Options) -> Result<Report, Error> {
        system_pass(h, w, self, &mut |ts, a, b, rows| {
            if let Some(p) = SystemRates::between(a, b).cpu_all {
                rows.push(vec![
                    w.time(ts),
                    num(p.user),
                    num(p.nice),
                    num(p.system),
                    num(p.iowait),
                    num(p.irq),
                    num(p.softirq),
                    num(p.steal),
                    num(p.idle),
                ]);
            }
        })
    }
}
