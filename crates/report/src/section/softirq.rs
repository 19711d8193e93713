//! `softirq`: every softirq vector's rate (/proc/softirqs).

use model::system::SystemRates;
use sys::Error;

use super::*;

pub(super) struct Softirq;

impl Section for Softirq {
    fn name(&self) -> &'static str {
        "softirq"
    }
    fn sources(&self) -> &'static [Source] {
        &[Source::Softirqs]
    }
    fn columns(&self) -> &'static [&'static str] {
        irq::COLUMNS
    }
    fn report(&self, h: &History, w: &Window, _: &Options) -> Result<Report, Error> {
        system_pass(h, w, self, &mut |ts, a, b, rows| {
            irq::push(w, ts, SystemRates::between(a, b).softirq_vectors, rows);
        })
    }
}
