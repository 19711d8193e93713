//! `pressure`: the share of time tasks stalled on each resource
//! (/proc/pressure/*).

use model::system::SystemRates;
use sys::Error;

use super::*;

pub(super) struct Pressure;

impl Section for Pressure {
    fn name(&self) -> &'static str {
        "pressure"
    }
    fn sources(&self) -> &'static [Source] {
        &[
            Source::PressureCpu,
            Source::PressureMemory,
            Source::PressureIo,
            Source::PressureIrq,
        ]
    }
    fn columns(&self) -> &'static [&'static str] {
        &["resource", "%some", "%full"]
    }
    fn report(&self, h: &History, w: &Window, _: &Options) -> Result<Report, Error> {
        system_pass(h, w, self, &mut |ts, a, b, rows| {
            for p in SystemRates::between(a, b).pressure {
                rows.push(vec![
                    w.time(ts),
                    text(format!("{:?}", p.resource).to_lowercase()),
                    num(p.some_pct),
                    num(p.full_pct),
                ]);
            }
        })
    }
}
