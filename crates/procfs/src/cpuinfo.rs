//! `/proc/cpuinfo` on x86: what each CPU is (vendor, family, model,
//! microcode, cache, package and core), for node_exporter's `node_cpu_info`.
//!
//! The file is one block of `key\t: value` lines per CPU, blocks separated
//! by an empty line. Keys other architectures print instead are kept out;
//! a block without `processor` is an error.

use serde::Serialize;

use crate::error::{ParseError, ParseErrorKind};
use crate::records::{err, set, slot};

/// What one CPU is; a field the block lacks is empty.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct CpuInfo {
    pub processor: u32,
    pub vendor_id: String,
    pub cpu_family: String,
    pub model: String,
    pub model_name: String,
    pub stepping: String,
    pub microcode: String,
    pub cache_size: String,
    pub physical_id: String,
    pub core_id: String,
    /// `cpu MHz`, in kHz (the kernel prints it to the kHz).
    pub khz: Option<u64>,
    /// The `flags` and `bugs` words: the first CPU's only (empty on the
    /// others, so 4,096 CPUs do not carry 4,096 copies of the same words),
    /// as node_exporter takes them.
    pub flags: String,
    pub bugs: String,
}

/// Parses /proc/cpuinfo into `out`, one entry per CPU.
pub fn parse_into(buf: &[u8], out: &mut Vec<CpuInfo>) -> Result<(), ParseError> {
    // CPUs parsed, and whether a block is open.
    let (mut used, mut open) = (0, false);
    for (i, l) in buf.split(|&b| b == b'\n').enumerate() {
        let n = i + 1;
        if l.is_empty() {
            open = false;
            continue;
        }
        let text = std::str::from_utf8(l)
            .map_err(|_| err(n, "line", ParseErrorKind::Invalid, "UTF-8 text"))?;
        let Some((k, v)) = text.split_once(':') else {
            return Err(err(n, "key", ParseErrorKind::Invalid, "`<key> : <value>`"));
        };
        let (k, v) = (k.trim(), v.trim());
        if k == "processor" {
            if used >= crate::limits::MAX_CPUS {
                return Err(err(
                    n,
                    "processor",
                    ParseErrorKind::TooMany,
                    "at most 65536 CPUs",
                ));
            }
            let processor = v
                .parse()
                .map_err(|_| err(n, "processor", ParseErrorKind::Invalid, "a CPU number"))?;
            let c = slot(out, used);
            used += 1;
            c.processor = processor;
            for f in c.fields() {
                f.clear();
            }
            c.khz = None;
            open = true;
            continue;
        }
        if !open {
            return Err(err(
                n,
                "processor",
                ParseErrorKind::Missing,
                "`processor : <n>` first in each block",
            ));
        }
        let c = &mut out[used - 1];
        if k == "cpu MHz" {
            c.khz =
                Some(khz(v).ok_or_else(|| {
                    err(n, "cpu MHz", ParseErrorKind::Invalid, "a frequency in MHz")
                })?);
            continue;
        }
        let first = used == 1;
        let [
            vendor,
            family,
            model,
            name,
            stepping,
            microcode,
            cache,
            package,
            core,
            flags,
            bugs,
        ] = c.fields();
        let dst = match k {
            "vendor_id" => vendor,
            "cpu family" => family,
            "model" => model,
            "model name" => name,
            "stepping" => stepping,
            "microcode" => microcode,
            "cache size" => cache,
            "physical id" => package,
            "core id" => core,
            "flags" if first => flags,
            "bugs" if first => bugs,
            _ => continue,
        };
        set(dst, v);
    }
    out.truncate(used);
    Ok(())
}

/// `2596.150` (MHz) as 2,596,150 kHz.
fn khz(v: &str) -> Option<u64> {
    let (whole, frac) = v.split_once('.').unwrap_or((v, ""));
    if frac.len() > 3 || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let thousandths = frac
        .bytes()
        .chain(std::iter::repeat(b'0'))
        .take(3)
        .fold(0, |t, d| t * 10 + u64::from(d - b'0'));
    whole
        .parse::<u64>()
        .ok()?
        .checked_mul(1000)?
        .checked_add(thousandths)
}

impl CpuInfo {
    fn fields(&mut self) -> [&mut String; 11] {
        [
            &mut self.vendor_id,
            &mut self.cpu_family,
            &mut self.model,
            &mut self.model_name,
            &mut self.stepping,
            &mut self.microcode,
            &mut self.cache_size,
            &mut self.physical_id,
            &mut self.core_id,
            &mut self.flags,
            &mut self.bugs,
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_values() {
        let mut v = crate::parsed(parse_into, b"processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 17\nmodel name\t: AMD EPYC\nstepping\t: 1\nmicrocode\t: 0x1000065\ncpu MHz\t\t: 2596.150\ncache size\t: 1024 KB\nphysical id\t: 0\ncore id\t\t: 0\nflags\t\t: fpu vme\nbugs\t\t: sysret_ss_attrs\npower management:\n\nprocessor\t: 1\nmodel name\t: AMD EPYC\nflags\t\t: fpu vme\n\n");
        assert_eq!(v.len(), 2);
        assert_eq!(
            v[0],
            CpuInfo {
                processor: 0,
                vendor_id: "AuthenticAMD".into(),
                cpu_family: "25".into(),
                model: "17".into(),
                model_name: "AMD EPYC".into(),
                stepping: "1".into(),
                microcode: "0x1000065".into(),
                cache_size: "1024 KB".into(),
                physical_id: "0".into(),
                core_id: "0".into(),
                khz: Some(2_596_150),
                flags: "fpu vme".into(),
                bugs: "sysret_ss_attrs".into(),
            }
        );
        assert_eq!((v[1].processor, v[1].vendor_id.as_str()), (1, ""));
        // The first CPU's words only.
        assert_eq!(v[1].flags, "");
        for (bad, field) in [
            (&b"vendor_id : x\n"[..], "processor"),
            (b"processor : x\n", "processor"),
            (b"processor : 0\nno colon\n", "key"),
            (b"processor : 0\n\nmodel : 1\n", "processor"),
            (b"processor : 0\ncpu MHz : 1.2345\n", "cpu MHz"),
            (b"processor : 0\ncpu MHz : -1\n", "cpu MHz"),
        ] {
            assert_eq!(parse_into(bad, &mut v).unwrap_err().field, field);
        }
    }
}
