//! systemd's units, as the gatherer writes what the manager answers over
//! D-Bus (`gather/systemd.rs`). The text, a line each:
//!
//! ```text
//! at 1795970945735703000
//! version 252.38-1~deb12u1
//! virtualization kvm
//! system_state running
//! unit dev-sda.device loaded active plugged
//! unit+ cron.service loaded active running type=simple restarts=0 start_us=1700000000000000
//! ```
//!
//! `at` is when the read was made (ns since the epoch): a failed read
//! leaves the last units in place, served with their age. `unit` is a unit the manager lists; `unit+` one the configuration
//! selects (its include and exclude patterns, loaded), followed by the
//! properties read for it, each `key=value`: `type` (a service's or a
//! mount's Type), and unsigned numbers `restarts`, `start_us`, `tasks`,
//! `tasks_max`, `accepted`, `connections`, `refused`, `last_trigger_us`.
//! A property the manager did not give is left out. Other keys are passed
//! over, so a later gatherer may add some.

use serde::Serialize;

use crate::error::{ParseError, ParseErrorKind};
use crate::limits::MAX_ROWS;
use crate::records::{self, err, set, slot};

/// The manager and its units.
#[derive(Debug, Default, Clone, PartialEq, Serialize)]
pub struct Systemd {
    /// When the manager was read, ns since the epoch (0: never).
    pub at_unix_ns: u64,
    pub version: String,
    pub virtualization: String,
    pub system_state: String,
    pub units: Vec<Unit>,
}

/// One unit: its states, and for a selected one its properties.
#[derive(Debug, Default, Clone, PartialEq, Serialize)]
pub struct Unit {
    pub name: String,
    pub load: String,
    pub active: String,
    pub sub: String,
    /// Selected by the configuration's patterns (and loaded).
    pub selected: bool,
    /// A service's or a mount's Type (`simple`, `nfs`); empty for others.
    pub kind: String,
    pub restarts: Option<u64>,
    /// When it last entered the active state, µs since the epoch.
    pub start_us: Option<u64>,
    pub tasks: Option<u64>,
    pub tasks_max: Option<u64>,
    pub accepted: Option<u64>,
    pub connections: Option<u64>,
    pub refused: Option<u64>,
    pub last_trigger_us: Option<u64>,
}

impl Unit {
    fn reset(&mut self) {
        self.kind.clear();
        self.restarts = None;
        self.start_us = None;
        self.tasks = None;
        self.tasks_max = None;
        self.accepted = None;
        self.connections = None;
        self.refused = None;
        self.last_trigger_us = None;
    }

    /// The unit's type: the suffix of its name (`service`, `socket`).
    pub fn unit_type(&self) -> &str {
        self.name.rsplit_once('.').map_or("", |(_, t)| t)
    }
}

/// Parses the gathered text into `out`, reusing its units' buffers.
pub fn parse_into(buf: &[u8], out: &mut Systemd) -> Result<(), ParseError> {
    out.at_unix_ns = 0;
    out.version.clear();
    out.virtualization.clear();
    out.system_state.clear();
    let mut units = 0;
    for l in records::lines(buf) {
        let (n, text) = l?;
        let (key, rest) = text.split_once(' ').unwrap_or((text, ""));
        match key {
            "at" => {
                out.at_unix_ns = rest.parse().map_err(|_| {
                    err(
                        n,
                        "at",
                        ParseErrorKind::Invalid,
                        "`at <ns since the epoch>`",
                    )
                })?;
            }
            "version" => set(&mut out.version, rest),
            "virtualization" => set(&mut out.virtualization, rest),
            "system_state" => set(&mut out.system_state, rest),
            "unit" | "unit+" => {
                if units >= MAX_ROWS {
                    return Err(err(
                        n,
                        "unit",
                        ParseErrorKind::TooMany,
                        "at most 2^20 units",
                    ));
                }
                let mut words = rest.split(' ');
                let u = slot(&mut out.units, units);
                u.reset();
                u.selected = key == "unit+";
                for (dst, field) in [
                    (&mut u.name, "name"),
                    (&mut u.load, "load state"),
                    (&mut u.active, "active state"),
                    (&mut u.sub, "sub-state"),
                ] {
                    match words.next() {
                        Some(w) if !w.is_empty() => set(dst, w),
                        _ => {
                            return Err(err(
                                n,
                                field,
                                ParseErrorKind::Missing,
                                "`unit <name> <load> <active> <sub>`",
                            ));
                        }
                    }
                }
                for w in words {
                    let Some((k, v)) = w.split_once('=') else {
                        return Err(err(n, "property", ParseErrorKind::Invalid, "`key=value`"));
                    };
                    let num = || {
                        v.parse::<u64>().map(Some).map_err(|_| {
                            err(n, "property", ParseErrorKind::Invalid, "a whole number")
                        })
                    };
                    match k {
                        "type" => set(&mut u.kind, v),
                        "restarts" => u.restarts = num()?,
                        "start_us" => u.start_us = num()?,
                        "tasks" => u.tasks = num()?,
                        "tasks_max" => u.tasks_max = num()?,
                        "accepted" => u.accepted = num()?,
                        "connections" => u.connections = num()?,
                        "refused" => u.refused = num()?,
                        "last_trigger_us" => u.last_trigger_us = num()?,
                        _ => {}
                    }
                }
                units += 1;
            }
            _ => {}
        }
    }
    out.units.truncate(units);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_and_their_properties() {
        let mut s = Systemd::default();
        let text = b"at 5\nversion 252.38-1~deb12u1\nvirtualization \nsystem_state degraded\n\
unit dev-sda.device loaded active plugged\n\
unit+ cron.service loaded active running type=simple restarts=2 start_us=17 tasks=1 tasks_max=4915 future=x\n\
unit+ x.socket loaded active listening accepted=3 connections=1 refused=0\n";
        parse_into(text, &mut s).unwrap();
        assert_eq!((s.at_unix_ns, s.version.as_str()), (5, "252.38-1~deb12u1"));
        assert_eq!(s.virtualization, "");
        assert_eq!(s.system_state, "degraded");
        assert_eq!(s.units.len(), 3);
        assert!(!s.units[0].selected);
        let cron = &s.units[1];
        assert_eq!(
            (cron.kind.as_str(), cron.restarts, cron.tasks_max),
            ("simple", Some(2), Some(4915))
        );
        assert_eq!(cron.unit_type(), "service");
        assert_eq!(s.units[2].accepted, Some(3));
        // A second parse reuses the rows and forgets what is gone.
        parse_into(b"unit+ x.socket loaded failed failed\n", &mut s).unwrap();
        assert_eq!(s.units.len(), 1);
        assert_eq!((s.units[0].accepted, s.version.as_str()), (None, ""));
    }

    #[test]
    fn bad_lines_name_what_is_wrong() {
        let mut s = Systemd::default();
        let e = parse_into(b"unit a.service loaded\n", &mut s).unwrap_err();
        assert!(e.to_string().contains("active state"), "{e}");
        let e = parse_into(
            b"unit+ a.service loaded active running restarts=x\n",
            &mut s,
        )
        .unwrap_err();
        assert!(e.to_string().contains("whole number"), "{e}");
        let e = parse_into(b"unit+ a.service loaded active running junk\n", &mut s).unwrap_err();
        assert!(e.to_string().contains("key=value"), "{e}");
    }
}
