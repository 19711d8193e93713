//! `/proc/PID/fdinfo/FD` of a DRM device file: the kernel's DRM client
//! usage stats (Documentation/gpu/drm-usage-stats.rst), one `drm-KEY:
//! VALUE` line each after the generic `pos:`, `flags:`, `mnt_id:` lines.
//!
//! What is taken:
//!
//! - `drm-driver` (mandatory: a file without it gives no client) and
//!   `drm-pdev`: which device;
//! - `drm-client-id`: which client, so that one client reached through
//!   several descriptors (dup'd, or inherited by a child) counts once;
//! - `drm-engine-<engine>: <n> ns`: the time each engine spent on the
//!   client, summed over the engines (`drm-engine-capacity-<engine>` is
//!   not an engine);
//! - memory, every region summed: `drm-resident-<region>` where the
//!   driver gives it, else the older `drm-memory-<region>` (amdgpu's, the
//!   same figure), else `drm-total-<region>`; values in bytes, `KiB`,
//!   `MiB` or `GiB`.
//!
//! Drivers that count engine time in cycles only (`drm-cycles-<engine>`
//! against `drm-total-cycles-<engine>`: xe) give their memory here and no
//! busy time. Other keys are the driver's own and are passed over.

use procfs::{ParseError, ParseErrorKind};

/// One DRM client as a descriptor's fdinfo shows it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Client {
    /// `drm-driver`, then ` ` and `drm-pdev` where given.
    pub device: String,
    /// `drm-client-id`, where given.
    pub id: Option<u64>,
    /// Nanoseconds its engines were busy, summed over engines.
    pub busy_ns: u64,
    /// Whether it gave any engine's time in nanoseconds.
    pub timed: bool,
    /// Bytes of memory it holds resident, every region summed.
    pub mem_bytes: u64,
}

/// Memory keys, from the most to the least preferred.
const MEMORY: [&str; 3] = ["drm-resident-", "drm-memory-", "drm-total-"];

/// Parses one fdinfo file; `Ok(None)` for a file that names no DRM driver
/// (not a DRM device's, or a driver that keeps no stats).
pub fn parse(buf: &[u8]) -> Result<Option<Client>, ParseError> {
    let mut c = Client::default();
    let mut driver = None;
    let mut pdev = None;
    // Per memory key kind: whether seen, and its sum.
    let mut memory = [(false, 0u64); 3];
    for (n, line) in buf.split(|&b| b == b'\n').enumerate() {
        let line_no = u32::try_from(n + 1).unwrap_or(u32::MAX);
        let Some(colon) = line.iter().position(|&b| b == b':') else {
            continue;
        };
        let (key, value) = (&line[..colon], line[colon + 1..].trim_ascii());
        if !key.starts_with(b"drm-") {
            continue;
        }
        let bad = |field, kind, expected| ParseError {
            line: line_no,
            field,
            kind,
            expected,
        };
        if key == b"drm-driver" {
            driver = Some(text(value));
        } else if key == b"drm-pdev" {
            pdev = Some(text(value));
        } else if key == b"drm-client-id" {
            c.id = Some(number(value).ok_or(bad(
                "drm-client-id",
                ParseErrorKind::Invalid,
                "an unsigned integer",
            ))?);
        } else if let Some(engine) = key.strip_prefix(b"drm-engine-") {
            if engine.starts_with(b"capacity-") {
                continue;
            }
            let ns = value
                .strip_suffix(b"ns")
                .and_then(|v| number(v.trim_ascii()))
                .ok_or(bad(
                    "drm-engine-",
                    ParseErrorKind::Invalid,
                    "an unsigned integer of nanoseconds, `<n> ns`",
                ))?;
            c.busy_ns = c.busy_ns.saturating_add(ns);
            c.timed = true;
        } else if key.starts_with(b"drm-total-cycles-") {
            // An engine's cycles (xe), not a memory region.
            continue;
        } else if let Some(kind) = MEMORY.iter().position(|p| key.starts_with(p.as_bytes())) {
            let bytes = size(value).ok_or(bad(
                MEMORY[kind],
                ParseErrorKind::Invalid,
                "an unsigned integer of bytes, KiB, MiB or GiB",
            ))?;
            memory[kind].0 = true;
            memory[kind].1 = memory[kind].1.saturating_add(bytes);
        }
    }
    let Some(driver) = driver else {
        return Ok(None);
    };
    c.device = match pdev {
        Some(p) => format!("{driver} {p}"),
        None => driver,
    };
    c.mem_bytes = memory
        .iter()
        .find(|(seen, _)| *seen)
        .map_or(0, |&(_, sum)| sum);
    Ok(Some(c))
}

fn text(v: &[u8]) -> String {
    String::from_utf8_lossy(v).into_owned()
}

fn number(v: &[u8]) -> Option<u64> {
    if v.is_empty() || !v.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(v).ok()?.parse().ok()
}

/// `<n>`, `<n> KiB`, `<n> MiB` or `<n> GiB`, in bytes.
fn size(v: &[u8]) -> Option<u64> {
    let end = v
        .iter()
        .position(|b| !b.is_ascii_digit())
        .unwrap_or(v.len());
    let n = number(&v[..end])?;
    let shift = match v[end..].trim_ascii() {
        b"" => 0,
        b"KiB" => 10,
        b"MiB" => 20,
        b"GiB" => 30,
        _ => return None,
    };
    n.checked_mul(1 << shift)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amdgpu() {
        let f = b"pos:\t0\nflags:\t02100002\nmnt_id:\t24\nino:\t1045\n\
drm-driver:\tamdgpu\ndrm-client-id:\t14\ndrm-pdev:\t0000:03:00.0\npasid:\t32771\n\
drm-memory-vram:\t9732 KiB\ndrm-memory-gtt:\t 2068 KiB\ndrm-memory-cpu:\t0 KiB\n\
amd-memory-visible-vram:\t9732 KiB\ndrm-engine-gfx:\t10956440 ns\ndrm-engine-compute:\t0 ns\n\
drm-engine-dec:\t1000 ns\n";
        let c = parse(f).unwrap().unwrap();
        assert_eq!(c.device, "amdgpu 0000:03:00.0");
        assert_eq!(c.id, Some(14));
        assert_eq!(c.busy_ns, 10_957_440);
        assert!(c.timed);
        assert_eq!(c.mem_bytes, (9732 + 2068) * 1024);
    }

    #[test]
    fn resident_preferred_to_total() {
        let f = b"drm-driver: i915\ndrm-total-system0: 4 MiB\ndrm-resident-system0: 3 MiB\n\
drm-total-local0: 1 GiB\ndrm-resident-local0: 512\ndrm-engine-render: 5 ns\n\
drm-engine-capacity-video: 2\ndrm-engine-video: 7 ns\n";
        let c = parse(f).unwrap().unwrap();
        assert_eq!(c.device, "i915");
        assert_eq!(c.id, None);
        assert_eq!(c.busy_ns, 12);
        assert_eq!(c.mem_bytes, 3 * 1024 * 1024 + 512);
    }

    #[test]
    fn cycles_only_driver_gives_memory_not_time() {
        let f = b"drm-driver:\txe\ndrm-client-id:\t3\ndrm-cycles-rcs:\t28257900\n\
drm-total-cycles-rcs:\t7655183225\ndrm-total-gtt:\t8 KiB\n";
        let c = parse(f).unwrap().unwrap();
        assert!(!c.timed);
        assert_eq!(c.busy_ns, 0);
        assert_eq!(c.mem_bytes, 8192);
    }

    #[test]
    fn not_drm() {
        assert_eq!(
            parse(b"pos:\t0\nflags:\t02\nmnt_id:\t20\nino:\t5\n"),
            Ok(None)
        );
        assert_eq!(parse(b""), Ok(None));
    }

    #[test]
    fn malformed_values_name_the_key_and_line() {
        let e = parse(b"drm-driver: x\ndrm-engine-gfx: 12 us\n").unwrap_err();
        assert_eq!((e.line, e.field), (2, "drm-engine-"));
        let e = parse(b"drm-driver: x\ndrm-memory-vram: 1 TiB\n").unwrap_err();
        assert_eq!((e.line, e.field), (2, "drm-memory-"));
        let e = parse(b"drm-client-id: -1\n").unwrap_err();
        assert_eq!(e.field, "drm-client-id");
        // Past u64, not wrapped.
        assert!(parse(b"drm-driver: x\ndrm-total-a: 99999999999999999999 KiB\n").is_err());
        assert!(parse(b"drm-driver: x\ndrm-total-a: 18446744073709551615 GiB\n").is_err());
    }
}
