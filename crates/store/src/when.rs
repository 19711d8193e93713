//! Times as `report` and replay take them, and local-time formatting.

use crate::Error;

/// Parses `s` as an instant (ms since the epoch), `now` being the present:
/// RFC 3339 (`2026-11-24T03:10:00Z`, `...+01:00`), `YYYY-MM-DD HH:MM[:SS]`
/// or `HH:MM[:SS]` (local time; the latter today), `now`, or relative to
/// now (`-1h`, `-30m`, `-90s`, `-2d`).
pub fn parse(s: &str, now_ms: u64) -> Result<u64, Error> {
    let s = s.trim();
    let bad = || {
        Error::invalid(format!(
            "{s:?} is not a time; write RFC 3339 (2026-11-24T03:10:00Z), HH:MM[:SS] (today, local time), \"YYYY-MM-DD HH:MM\", now, or relative (-1h, -30m, -90s, -2d)"
        ))
    };
    if s == "now" {
        return Ok(now_ms);
    }
    if let Some(rel) = s.strip_prefix('-') {
        let split = rel.find(|c: char| !c.is_ascii_digit()).ok_or_else(bad)?;
        let n: u64 = rel[..split].parse().map_err(|_| bad())?;
        let unit = match &rel[split..] {
            "s" => 1000,
            "m" => 60_000,
            "h" => 3_600_000,
            "d" => 86_400_000,
            _ => return Err(bad()),
        };
        return Ok(now_ms.saturating_sub(n.saturating_mul(unit)));
    }
    if let Some((date, rest)) = s.split_once(['T', 't']) {
        return rfc3339(date, rest).ok_or_else(bad);
    }
    let (date, time) = match s.split_once(' ') {
        Some((d, t)) => (Some(d), t),
        None => (None, s),
    };
    let hms: Vec<&str> = time.split(':').collect();
    if !(2..=3).contains(&hms.len()) {
        return Err(bad());
    }
    let num = |x: &str, max: u32| x.parse::<u32>().ok().filter(|v| *v <= max && x.len() == 2);
    let h = num(hms[0], 23).ok_or_else(bad)?;
    let m = num(hms[1], 59).ok_or_else(bad)?;
    let sec = hms.get(2).map_or(Some(0), |x| num(x, 60)).ok_or_else(bad)?;
    let (y, mo, d) = match date {
        Some(d) => ymd(d).ok_or_else(bad)?,
        None => {
            let t = local(now_ms);
            (t.tm_year + 1900, t.tm_mon as u32 + 1, t.tm_mday as u32)
        }
    };
    local_to_ms(y, mo, d, h, m, sec).ok_or_else(bad)
}

/// A calendar date; a day past its month's end (February 31st) is refused,
/// not carried into the next month.
fn ymd(d: &str) -> Option<(i32, u32, u32)> {
    let mut it = d.split('-');
    let y: i32 = it
        .next()?
        .parse()
        .ok()
        .filter(|y| (1970..=9999).contains(y))?;
    let m = it.next()?.parse().ok().filter(|m| (1..=12).contains(m))?;
    let leap = y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
    let last = match m {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    };
    let day = it.next()?.parse().ok().filter(|d| (1..=last).contains(d))?;
    it.next().is_none().then_some((y, m, day))
}

fn rfc3339(date: &str, rest: &str) -> Option<u64> {
    let (y, mo, d) = ymd(date)?;
    let day_ms = crate::db::day_start_ms(&format!("{y:04}-{mo:02}-{d:02}"))?;
    let (time, offset_ms): (&str, i64) = if let Some(t) = rest.strip_suffix(['Z', 'z']) {
        (t, 0)
    } else {
        let i = rest.rfind(['+', '-'])?;
        let (t, off) = rest.split_at(i);
        let sign = if off.starts_with('-') { -1 } else { 1 };
        // RFC 3339: two digits each, at most 23:59.
        let (oh, om) = off[1..].split_once(':')?;
        let two = |x: &str, max: i64| {
            (x.len() == 2)
                .then(|| x.parse::<i64>().ok())
                .flatten()
                .filter(|v| *v <= max)
        };
        let oh = two(oh, 23)?;
        let om = two(om, 59)?;
        (t, sign * (oh * 3600 + om * 60) * 1000)
    };
    let (hms, frac) = time.split_once('.').unwrap_or((time, ""));
    let mut p = hms.split(':');
    let h: u64 = p.next()?.parse().ok().filter(|h| *h < 24)?;
    let m: u64 = p.next()?.parse().ok().filter(|m| *m < 60)?;
    let s: u64 = p.next()?.parse().ok().filter(|s| *s <= 60)?;
    if p.next().is_some() {
        return None;
    }
    let ms: u64 = if frac.is_empty() {
        0
    } else {
        let digits: String = frac.chars().take(3).collect();
        digits.parse::<u64>().ok()? * 10u64.pow(3 - digits.len() as u32)
    };
    let t = day_ms + (h * 3600 + m * 60 + s) * 1000 + ms;
    u64::try_from(t as i64 - offset_ms).ok()
}

fn local(ms: u64) -> libc::tm {
    let t = (ms / 1000) as libc::time_t;
    // SAFETY: a zeroed tm is a valid value.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    // SAFETY: valid pointers; localtime_r fills tm.
    unsafe { libc::localtime_r(&t, &mut tm) };
    tm
}

fn local_to_ms(y: i32, mo: u32, d: u32, h: u32, m: u32, s: u32) -> Option<u64> {
    // SAFETY: a zeroed tm is a valid value.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    tm.tm_year = y - 1900;
    tm.tm_mon = mo as i32 - 1;
    tm.tm_mday = d as i32;
    tm.tm_hour = h as i32;
    tm.tm_min = m as i32;
    tm.tm_sec = s as i32;
    tm.tm_isdst = -1;
    // SAFETY: a valid tm; mktime reads and normalizes it.
    let t = unsafe { libc::mktime(&mut tm) };
    u64::try_from(t).ok().map(|t| t * 1000)
}

/// `HH:MM:SS`, local time (with the date before it when `date`).
pub fn format(ms: u64, date: bool) -> String {
    let t = local(ms);
    if date {
        format!(
            "{:04}-{:02}-{:02} {:02}:{:02}:{:02}",
            t.tm_year + 1900,
            t.tm_mon + 1,
            t.tm_mday,
            t.tm_hour,
            t.tm_min,
            t.tm_sec
        )
    } else {
        format!("{:02}:{:02}:{:02}", t.tm_hour, t.tm_min, t.tm_sec)
    }
}

/// A duration for people: `3d02h`, `4h05m`, `12m30s`, `45s`, `850ms`.
pub fn span(ms: u64) -> String {
    let s = ms / 1000;
    match s {
        0 => format!("{ms}ms"),
        1..60 => format!("{s}s"),
        60..3600 => format!("{}m{:02}s", s / 60, s % 60),
        3600..86_400 => format!("{}h{:02}m", s / 3600, s % 3600 / 60),
        _ => format!("{}d{:02}h", s / 86_400, s % 86_400 / 3600),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: u64 = 1_795_996_800_000 + 12 * 3_600_000; // 2026-11-30T12:00Z

    #[test]
    fn every_accepted_form_parses() {
        assert_eq!(parse("now", NOW), Ok(NOW));
        assert_eq!(parse("-1h", NOW), Ok(NOW - 3_600_000));
        assert_eq!(parse("-30m", NOW), Ok(NOW - 1_800_000));
        assert_eq!(parse("-2d", NOW), Ok(NOW - 2 * 86_400_000));
        assert_eq!(parse("2026-11-30T12:00:00Z", 0), Ok(NOW));
        assert_eq!(parse("2026-11-30T13:00:00+01:00", 0), Ok(NOW));
        assert_eq!(parse("2026-11-30T11:30:00.250-00:30", 0), Ok(NOW + 250));
        assert!(parse("2028-02-29 10:00", NOW).is_ok(), "a leap day");
        // Local forms: through the same conversion both ways.
        let today = parse("12:34", NOW).unwrap();
        assert_eq!(format(today, false), "12:34:00");
        let t = parse("2026-11-29 08:05:09", NOW).unwrap();
        assert_eq!(format(t, true), "2026-11-29 08:05:09");
    }

    #[test]
    fn bad_times_say_what_is_accepted() {
        for bad in [
            "",
            "yesterday",
            "25:00",
            "12:5",
            "-1y",
            "2026-13-01T00:00:00Z",
            "12:00:00:00",
            // No carrying into the next month, no wrapping offsets.
            "2026-02-31 10:00",
            "2026-02-29T10:00:00Z",
            "2026-04-31T10:00:00Z",
            "2026-11-30T10:00:00+99999999999999:00",
            "2026-11-30T10:00:00+24:00",
            "2026-11-30T10:00:00+1:00",
        ] {
            let e = parse(bad, NOW).unwrap_err().to_string();
            assert!(e.contains("RFC 3339"), "{bad}: {e}");
        }
    }

    #[test]
    fn spans_read_well() {
        assert_eq!(span(850), "850ms");
        assert_eq!(span(45_000), "45s");
        assert_eq!(span(750_000), "12m30s");
        assert_eq!(span(3 * 86_400_000 + 2 * 3_600_000), "3d02h");
    }
}
