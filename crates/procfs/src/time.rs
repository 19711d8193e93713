//! The clock: system time, time zone and clocksources (node_exporter's
//! time collector), and the kernel's NTP state from adjtimex(2) (timex).
//!
//! Both come from system calls and sysfs, which the reader gathers into
//! text. Time:
//!
//! ```text
//! now_ns 1795484173198911000
//! zone UTC 0
//! clocksource 0 available tsc kvm-clock
//! clocksource 0 current tsc
//! ```
//!
//! Timex: `state <adjtimex return value>` then one `<field> <value>` per
//! `struct timex` field named as in the struct (`tai` included).

use serde::Serialize;

use crate::error::{ParseError, ParseErrorKind};
use crate::records::{self, err};

/// One clocksource device (`/sys/devices/system/clocksource/clocksourceN`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Clocksource {
    pub device: String,
    pub available: Vec<String>,
    pub current: String,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Time {
    /// Wall clock when read, nanoseconds since the Unix epoch.
    pub now_ns: u64,
    /// The local time zone's abbreviation (`UTC`, `CET`).
    pub zone: String,
    /// Seconds east of UTC.
    pub zone_offset_secs: i64,
    pub clocksources: Vec<Clocksource>,
}

const MAX_CLOCKSOURCES: usize = 4096;

/// Parses the gathered time text into `out`.
pub fn parse_time(buf: &[u8], out: &mut Time) -> Result<(), ParseError> {
    out.clocksources.clear();
    let mut seen_now = false;
    for l in records::lines(buf) {
        let (n, text) = l?;
        let mut w = text.split_ascii_whitespace();
        match w.next() {
            Some("now_ns") => {
                out.now_ns = w
                    .next()
                    .and_then(|v| v.parse().ok())
                    .ok_or_else(|| err(n, "now_ns", ParseErrorKind::Invalid, "nanoseconds"))?;
                seen_now = true;
            }
            Some("zone") => {
                out.zone = w
                    .next()
                    .ok_or_else(|| err(n, "zone", ParseErrorKind::Missing, "a zone name"))?
                    .to_string();
                out.zone_offset_secs = w
                    .next()
                    .and_then(|v| v.parse().ok())
                    .ok_or_else(|| err(n, "zone offset", ParseErrorKind::Invalid, "seconds"))?;
            }
            Some("clocksource") => {
                let device = w
                    .next()
                    .filter(|d| d.bytes().all(|c| c.is_ascii_digit()))
                    .ok_or_else(|| err(n, "clocksource", ParseErrorKind::Invalid, "a number"))?;
                let what = w.next();
                let at = match out.clocksources.iter().position(|c| c.device == device) {
                    Some(at) => at,
                    None => {
                        if out.clocksources.len() >= MAX_CLOCKSOURCES {
                            return Err(err(
                                n,
                                "clocksource",
                                ParseErrorKind::TooMany,
                                "at most 4096 devices",
                            ));
                        }
                        out.clocksources.push(Clocksource {
                            device: device.to_string(),
                            ..Clocksource::default()
                        });
                        out.clocksources.len() - 1
                    }
                };
                let c = &mut out.clocksources[at];
                match what {
                    Some("available") => {
                        c.available = w.take(256).map(str::to_string).collect();
                    }
                    Some("current") => c.current = w.next().unwrap_or("").to_string(),
                    _ => {
                        return Err(err(
                            n,
                            "clocksource",
                            ParseErrorKind::Invalid,
                            "`available` or `current`",
                        ));
                    }
                }
            }
            _ => {}
        }
    }
    if !seen_now {
        return Err(err(1, "now_ns", ParseErrorKind::Missing, "the wall clock"));
    }
    Ok(())
}

/// adjtimex(2)'s answer, as the kernel gives it (units per field as in
/// `man adjtimex`; `offset` and `jitter` are in nanoseconds when `status`
/// has STA_NANO, else microseconds).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Timex {
    /// adjtimex's return value: the clock state (5, TIME_ERROR: not synchronised).
    pub state: i64,
    pub status: i64,
    pub offset: i64,
    /// Frequency offset, ppm with a 16-bit fraction.
    pub freq: i64,
    pub maxerror_us: i64,
    pub esterror_us: i64,
    pub constant: i64,
    pub precision_us: i64,
    pub tolerance: i64,
    pub tick_us: i64,
    pub ppsfreq: i64,
    pub jitter: i64,
    pub shift: i64,
    pub stabil: i64,
    pub jitcnt: i64,
    pub calcnt: i64,
    pub errcnt: i64,
    pub stbcnt: i64,
    pub tai: i64,
}

/// STA_NANO: `offset` and `jitter` in nanoseconds.
pub const STA_NANO: i64 = 0x2000;
/// adjtimex's TIME_ERROR.
pub const TIME_ERROR: i64 = 5;

/// Parses the gathered timex text.
pub fn parse_timex(buf: &[u8]) -> Result<Timex, ParseError> {
    let mut t = Timex::default();
    let mut seen = 0u32;
    for l in records::lines(buf) {
        let (n, text) = l?;
        let (k, v) = text
            .split_once(' ')
            .ok_or_else(|| err(n, "value", ParseErrorKind::Missing, "`<field> <value>`"))?;
        let v: i64 = v
            .trim()
            .parse()
            .map_err(|_| err(n, "value", ParseErrorKind::Invalid, "a signed integer"))?;
        let slot = match k {
            "state" => &mut t.state,
            "status" => &mut t.status,
            "offset" => &mut t.offset,
            "freq" => &mut t.freq,
            "maxerror" => &mut t.maxerror_us,
            "esterror" => &mut t.esterror_us,
            "constant" => &mut t.constant,
            "precision" => &mut t.precision_us,
            "tolerance" => &mut t.tolerance,
            "tick" => &mut t.tick_us,
            "ppsfreq" => &mut t.ppsfreq,
            "jitter" => &mut t.jitter,
            "shift" => &mut t.shift,
            "stabil" => &mut t.stabil,
            "jitcnt" => &mut t.jitcnt,
            "calcnt" => &mut t.calcnt,
            "errcnt" => &mut t.errcnt,
            "stbcnt" => &mut t.stbcnt,
            "tai" => &mut t.tai,
            _ => continue,
        };
        *slot = v;
        seen += 1;
    }
    if seen == 0 {
        return Err(err(
            1,
            "state",
            ParseErrorKind::Missing,
            "adjtimex's fields",
        ));
    }
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_exact_values() {
        let mut t = Time::default();
        parse_time(
            b"now_ns 1795484173198911000\nzone CET 3600\nclocksource 0 available tsc kvm-clock\nclocksource 0 current tsc\n",
            &mut t,
        )
        .unwrap();
        assert_eq!(t.now_ns, 1795484173198911000);
        assert_eq!((t.zone.as_str(), t.zone_offset_secs), ("CET", 3600));
        assert_eq!(t.clocksources.len(), 1);
        assert_eq!(t.clocksources[0].available, ["tsc", "kvm-clock"]);
        assert_eq!(t.clocksources[0].current, "tsc");
        let e = parse_time(b"zone UTC 0\n", &mut t).unwrap_err();
        assert_eq!((e.field, e.kind), ("now_ns", ParseErrorKind::Missing));
        let e = parse_time(b"now_ns 1\nclocksource x current tsc\n", &mut t).unwrap_err();
        assert_eq!((e.line, e.field), (2, "clocksource"));
    }

    #[test]
    fn timex_exact_values() {
        let t = parse_timex(
            b"state 5\nstatus 64\nmaxerror 16000000\ntick 10000\nfreq -65536\ntai 37\n",
        )
        .unwrap();
        assert_eq!(t.state, TIME_ERROR);
        assert_eq!(t.status, 64);
        assert_eq!(t.maxerror_us, 16_000_000);
        assert_eq!(t.tick_us, 10_000);
        assert_eq!(t.freq, -65536);
        assert_eq!(t.tai, 37);
        let e = parse_timex(b"status x\n").unwrap_err();
        assert_eq!((e.line, e.field), (1, "value"));
        assert!(parse_timex(b"\n").is_err());
    }
}
