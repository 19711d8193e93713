//! node_exporter's systemd collector: the manager's units over D-Bus
//! (`procfs::systemd`). A read that fails (the bus did not answer within
//! the read's deadline) leaves the last units read in place: they are
//! served as they were, and `quietstat_systemd_units_age_seconds` says how
//! old they are.

use super::*;

/// The active states node_exporter gives every unit a series of.
const STATES: [&str; 5] = ["active", "activating", "deactivating", "inactive", "failed"];

pub(super) fn encode(out: &mut Out<'_>, x: &Input<'_>) -> Fmt {
    let sd = &x.s.systemd;
    if !x.s.ok(Source::Systemd) && sd.at_unix_ns == 0 {
        return Ok(());
    }
    if let Some(v) = version_number(&sd.version) {
        let mut m = out.family(&NODE_SYSTEMD_VERSION)?;
        gauge_l(&mut m, &[("version", sd.version.as_str())], v)?;
    }
    let virt = if sd.virtualization.is_empty() {
        "none"
    } else {
        sd.virtualization.as_str()
    };
    info(
        out,
        &NODE_SYSTEMD_VIRTUALIZATION_INFO,
        &[("virtualization_type", virt)],
    )?;
    if !sd.system_state.is_empty() {
        one(
            out,
            &NODE_SYSTEMD_SYSTEM_RUNNING,
            f64::from(u8::from(sd.system_state == "running")),
        )?;
    }
    // Every unit listed, by active state: the five always, then others
    // a newer systemd has (`reloading`, `maintenance`), in order seen.
    let mut counts: Vec<(&str, u64)> = STATES.iter().map(|s| (*s, 0)).collect();
    for u in &sd.units {
        match counts.iter_mut().find(|(s, _)| *s == u.active) {
            Some(c) => c.1 += 1,
            None => counts.push((u.active.as_str(), 1)),
        }
    }
    let mut m = out.family(&NODE_SYSTEMD_UNITS)?;
    for (state, n) in counts {
        gauge_l(&mut m, &[("state", state)], n as f64)?;
    }
    let selected = || sd.units.iter().filter(|u| u.selected);
    let mut m = out.family(&NODE_SYSTEMD_UNIT_STATE)?;
    for u in selected() {
        for s in STATES {
            let labels = [
                ("name", u.name.as_str()),
                ("state", s),
                ("type", u.kind.as_str()),
            ];
            gauge_l(&mut m, &labels, f64::from(u8::from(u.active == s)))?;
        }
    }
    type Get = fn(&procfs::systemd::Unit) -> Option<u64>;
    let per_unit: [(&'static Family, Get, f64); 8] = [
        (&NODE_SYSTEMD_UNIT_START_TIME_SECONDS, |u| u.start_us, 1e-6),
        (
            &NODE_SYSTEMD_UNIT_TASKS_CURRENT,
            |u| u.tasks.filter(|v| *v != u64::MAX),
            1.0,
        ),
        (
            &NODE_SYSTEMD_UNIT_TASKS_MAX,
            |u| u.tasks_max.filter(|v| *v != u64::MAX),
            1.0,
        ),
        (&NODE_SYSTEMD_SERVICE_RESTART_TOTAL, |u| u.restarts, 1.0),
        (
            &NODE_SYSTEMD_TIMER_LAST_TRIGGER_SECONDS,
            |u| u.last_trigger_us,
            1e-6,
        ),
        (
            &NODE_SYSTEMD_SOCKET_ACCEPTED_CONNECTIONS_TOTAL,
            |u| u.accepted,
            1.0,
        ),
        (
            &NODE_SYSTEMD_SOCKET_CURRENT_CONNECTIONS,
            |u| u.connections,
            1.0,
        ),
        (
            &NODE_SYSTEMD_SOCKET_REFUSED_CONNECTIONS_TOTAL,
            |u| u.refused,
            1.0,
        ),
    ];
    for (f, get, scale) in per_unit {
        if !selected().any(|u| get(u).is_some()) {
            continue;
        }
        let mut m = out.family(f)?;
        for u in selected() {
            if let Some(v) = get(u) {
                sample_l(&mut m, &[("name", u.name.as_str())], v as f64 * scale)?;
            }
        }
    }
    let age = sys::unix_ns().saturating_sub(sd.at_unix_ns) as f64 * 1e-9;
    one(out, &QUIETSTAT_SYSTEMD_UNITS_AGE_SECONDS, age)
}

/// The number node_exporter makes of systemd's version: its first run of
/// three or more digits, with a fraction if one follows (`252.38` of
/// `252.38-1~deb12u1`).
fn version_number(v: &str) -> Option<f64> {
    let b = v.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if i - start >= 3 {
            let mut end = i;
            if b.get(i) == Some(&b'.') && b.get(i + 1).is_some_and(u8::is_ascii_digit) {
                end = i + 1;
                while end < b.len() && b[end].is_ascii_digit() {
                    end += 1;
                }
            }
            return v[start..end].parse().ok();
        }
        if i == start {
            i += 1;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::version_number;

    #[test]
    fn versions_as_node_exporter_reads_them() {
        assert_eq!(version_number("252.38-1~deb12u1"), Some(252.38));
        assert_eq!(version_number("v257"), Some(257.0));
        assert_eq!(version_number("systemd 12 and 245.4"), Some(245.4));
        assert_eq!(version_number("25"), None);
    }
}
