//! Units, converted in one place. The kernel counts CPU time in clock ticks
//! (USER_HZ, defined once in `procfs`), disk transfers in 512-byte sectors
//! and memory in pages; outputs show seconds and bytes.

pub use procfs::diskstats::SECTOR_BYTES;
pub use procfs::stat::USER_HZ;

/// Seconds in `ticks` clock ticks.
#[inline]
pub fn ticks_to_secs(ticks: u64) -> f64 {
    ticks as f64 / USER_HZ as f64
}

/// Seconds in `ms` milliseconds (diskstats' time counters), multiplied by
/// 0.001 as node_exporter does (its `secondsPerTick`): the same counter
/// gives the same float (6536 ms is 6.5360000000000005 s, not 6.536).
#[inline]
pub fn ms_to_secs(ms: u64) -> f64 {
    ms as f64 * 0.001
}

/// Seconds in `us` microseconds (pressure's totals).
#[inline]
pub fn us_to_secs(us: u64) -> f64 {
    us as f64 / 1e6
}

/// Seconds in `us` microseconds divided as node_exporter divides pressure
/// totals, by 1000 twice: the same counter gives the same float
/// (14036781 us is 14.036781000000001 s).
#[inline]
pub fn pressure_us_to_secs(us: u64) -> f64 {
    us as f64 / 1000.0 / 1000.0
}

/// Seconds in `ns` nanoseconds.
#[inline]
pub fn ns_to_secs(ns: u64) -> f64 {
    ns as f64 / 1e9
}

/// `bytes` in MiB (2^20 bytes), as tables show memory.
#[inline]
pub fn bytes_to_mib(bytes: u64) -> f64 {
    bytes as f64 / (1u64 << 20) as f64
}

/// Bytes in `sectors` 512-byte sectors (diskstats counts in these whatever
/// the device's own sector size).
#[inline]
pub fn sectors_to_bytes(sectors: u64) -> u64 {
    sectors.saturating_mul(SECTOR_BYTES)
}

/// Unix time, seconds, of an instant `ticks` clock ticks after boot.
#[inline]
pub fn boot_ticks_to_unix_secs(btime_secs: u64, ticks: u64) -> f64 {
    btime_secs as f64 + ticks_to_secs(ticks)
}

/// Bytes for people: `512B`, `12K`, `3.4M`, `1.2G` (powers of 1024).
pub fn human_bytes(v: f64) -> String {
    const UNITS: [&str; 6] = ["B", "K", "M", "G", "T", "P"];
    let mut v = v.max(0.0);
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 || v >= 100.0 {
        format!("{v:.0}{}", UNITS[u])
    } else {
        format!("{v:.1}{}", UNITS[u])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_are_short() {
        assert_eq!(human_bytes(512.0), "512B");
        assert_eq!(human_bytes(1536.0), "1.5K");
        assert_eq!(human_bytes(900.0 * 1024.0 * 1024.0), "900M");
        assert_eq!(human_bytes(-1.0), "0B");
    }

    #[test]
    fn conversions() {
        assert_eq!(ticks_to_secs(250), 2.5);
        assert_eq!(sectors_to_bytes(3), 1536);
        assert_eq!(sectors_to_bytes(u64::MAX), u64::MAX);
        assert_eq!(boot_ticks_to_unix_secs(1000, 150), 1001.5);
        assert_eq!(ms_to_secs(1500), 1.5);
        assert_eq!(ms_to_secs(6536), 6.5360000000000005);
        assert_eq!(us_to_secs(2_000_000), 2.0);
    }
}
