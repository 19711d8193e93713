//! `net`: per-interface traffic, as `sar -n DEV` (/proc/net/dev).

use model::system::SystemRates;
use sys::Error;

use super::*;

pub(super) struct Net;

impl Section for Net {
    fn name(&self) -> &'static str {
        "net"
    }
    fn sources(&self) -> &'static [Source] {
        &[Source::NetDev]
    }
    fn columns(&self) -> &'static [&'static str] {
        &[
            "iface", "rxpck/s", "txpck/s", "rxkB/s", "txkB/s", "rxdrop/s", "txdrop/s",
        ]
    }
    fn report(&self, h: &History, w: &Window, _: &Options) -> Result<Report, Error> {
        system_pass(h, w, self, &mut |ts, a, b, rows| {
            for n in SystemRates::between(a, b).nets {
                rows.push(vec![
                    w.time(ts),
                    text(n.name.as_str()),
                    num(n.rx_packets_per_sec),
                    num(n.tx_packets_per_sec),
                    num(n.rx_bytes_per_sec.map(|v| v / 1024.0)),
                    num(n.tx_bytes_per_sec.map(|v| v / 1024.0)),
                    num(n.rx_drop_per_sec),
                    num(n.tx_drop_per_sec),
                ]);
            }
        })
    }
}
