//! CPU topology and isolation: /sys/devices/system/cpu/{online,possible,present,
//! isolated,nohz_full}, per-CPU package/die/core ids, NUMA nodes, and the
//! isolation parameters of /proc/cmdline (isolcpus=, nohz_full=, rcu_nocbs=,
//! irqaffinity=). Read once at start-up and on change, never on the hot path, so
//! this module allocates freely.

use serde::Serialize;
use std::fmt;

use crate::cursor::parse_u64_word;
use crate::error::{ParseError, ParseErrorKind};
use crate::limits::MAX_CPUS;

/// A set of CPU numbers, as the kernel's cpulist format writes it: `0-3,8,10-11`,
/// optionally with strides (`0-15:2/4`: two of every four). Sorted, no repeats.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(into = "String")]
pub struct CpuList(Vec<u32>);

impl From<CpuList> for String {
    fn from(l: CpuList) -> String {
        l.to_string()
    }
}

const CPULIST_FORMAT: &str = "a cpulist such as 0-3,8,10-11 (CPU numbers below 65536)";

/// The isolated CPUs' list, below the sys root: read for the topology
/// and as the `cpu_isolated` source.
pub(crate) const ISOLATED_FILE: &str = "devices/system/cpu/isolated";

/// Parses a sysfs cpulist file (`/sys/devices/system/cpu/isolated`) into
/// `out`.
pub fn parse_list_into(buf: &[u8], out: &mut CpuList) -> Result<(), ParseError> {
    let text = std::str::from_utf8(buf)
        .map_err(|_| ParseError::new(1, "cpulist", ParseErrorKind::Invalid, CPULIST_FORMAT))?;
    *out = CpuList::parse(text)?;
    Ok(())
}

impl CpuList {
    pub fn new(mut cpus: Vec<u32>) -> Self {
        cpus.sort_unstable();
        cpus.dedup();
        CpuList(cpus)
    }

    /// Parses a cpulist; the empty string (and sysfs's `(null)`) is the empty set.
    pub fn parse(s: &str) -> Result<CpuList, ParseError> {
        let s = s.trim();
        let bad = || ParseError::new(1, "cpulist", ParseErrorKind::Invalid, CPULIST_FORMAT);
        if s.is_empty() || s == "(null)" {
            return Ok(CpuList::default());
        }
        let num = |w: &str| {
            parse_u64_word(w.as_bytes())
                .filter(|&n| n < MAX_CPUS as u64)
                .map(|n| n as u32)
                .ok_or_else(bad)
        };
        let mut cpus = Vec::new();
        for part in s.split(',') {
            let (range, stride) = match part.split_once(':') {
                Some((r, st)) => {
                    let (used, group) = st.split_once('/').ok_or_else(bad)?;
                    (r, Some((num(used)?, num(group)?)))
                }
                None => (part, None),
            };
            let (lo, hi) = match range.split_once('-') {
                Some((a, b)) => (num(a)?, num(b)?),
                None => (num(range)?, num(range)?),
            };
            let (used, group) = stride.unwrap_or((1, 1));
            if lo > hi || used == 0 || group == 0 || used > group {
                return Err(bad());
            }
            let mut start = lo;
            while start <= hi {
                cpus.extend(start..=(start + used - 1).min(hi));
                start = match start.checked_add(group) {
                    Some(s) => s,
                    None => break,
                };
            }
            if cpus.len() > MAX_CPUS {
                return Err(ParseError::new(
                    1,
                    "cpulist",
                    ParseErrorKind::TooMany,
                    CPULIST_FORMAT,
                ));
            }
        }
        Ok(CpuList::new(cpus))
    }

    pub fn cpus(&self) -> &[u32] {
        &self.0
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.0.iter().copied()
    }

    pub fn contains(&self, cpu: u32) -> bool {
        self.0.binary_search(&cpu).is_ok()
    }

    /// CPUs in `self` and not in `other`.
    pub fn minus(&self, other: &CpuList) -> CpuList {
        CpuList(
            self.0
                .iter()
                .copied()
                .filter(|&c| !other.contains(c))
                .collect(),
        )
    }

    pub fn union(&self, other: &CpuList) -> CpuList {
        CpuList::new(self.0.iter().chain(&other.0).copied().collect())
    }
}

impl fmt::Display for CpuList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut i = 0;
        let mut first = true;
        while i < self.0.len() {
            let mut j = i;
            while j + 1 < self.0.len() && self.0[j + 1] == self.0[j] + 1 {
                j += 1;
            }
            if !first {
                f.write_str(",")?;
            }
            first = false;
            if i == j {
                write!(f, "{}", self.0[i])?;
            } else {
                write!(f, "{}-{}", self.0[i], self.0[j])?;
            }
            i = j + 1;
        }
        Ok(())
    }
}

/// `isolcpus=[flag,...,]cpulist` from the kernel command line.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Isolcpus {
    /// `nohz`, `domain`, `managed_irq` (none given means `domain`).
    pub flags: Vec<String>,
    pub cpus: CpuList,
}

/// CPU isolation parameters of /proc/cmdline.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct BootCpuParams {
    pub isolcpus: Option<Isolcpus>,
    pub nohz_full: Option<CpuList>,
    pub rcu_nocbs: Option<CpuList>,
    pub irqaffinity: Option<CpuList>,
}

/// Parses the kernel command line (arguments after `--` belong to init and are
/// ignored).
pub fn parse_cmdline(cmdline: &str) -> Result<BootCpuParams, ParseError> {
    let mut p = BootCpuParams::default();
    let field = |name: &'static str, e: ParseError| ParseError { field: name, ..e };
    for arg in cmdline.split_ascii_whitespace() {
        if arg == "--" {
            break;
        }
        let Some((key, value)) = arg.split_once('=') else {
            continue;
        };
        match key {
            "isolcpus" => {
                let mut flags = Vec::new();
                let mut rest = value;
                while let Some((head, tail)) = rest.split_once(',') {
                    if head.bytes().all(|b| b.is_ascii_alphabetic() || b == b'_')
                        && !head.is_empty()
                    {
                        flags.push(head.to_string());
                        rest = tail;
                    } else {
                        break;
                    }
                }
                let cpus = CpuList::parse(rest).map_err(|e| field("isolcpus", e))?;
                p.isolcpus = Some(Isolcpus { flags, cpus });
            }
            "nohz_full" => {
                p.nohz_full = Some(CpuList::parse(value).map_err(|e| field("nohz_full", e))?)
            }
            "rcu_nocbs" => {
                p.rcu_nocbs = Some(CpuList::parse(value).map_err(|e| field("rcu_nocbs", e))?)
            }
            "irqaffinity" => {
                p.irqaffinity = Some(CpuList::parse(value).map_err(|e| field("irqaffinity", e))?)
            }
            _ => {}
        }
    }
    Ok(p)
}

/// One CPU's place in the machine (from cpuN/topology; absent for offline CPUs
/// on some kernels).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct CpuPlace {
    pub cpu: u32,
    pub online: bool,
    pub package_id: Option<u32>,
    /// Since Linux 5.2.
    pub die_id: Option<u32>,
    pub core_id: Option<u32>,
    pub numa_node: Option<u32>,
}

/// CPU topology and isolation.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Topology {
    pub online: CpuList,
    pub possible: CpuList,
    pub present: CpuList,
    /// /sys/devices/system/cpu/isolated: CPUs isolated from scheduler domains
    /// (isolcpus=domain). `None` when the file is absent.
    pub isolated: Option<CpuList>,
    /// /sys/devices/system/cpu/nohz_full: exists only with CONFIG_NO_HZ_FULL.
    pub nohz_full: Option<CpuList>,
    pub boot: BootCpuParams,
    pub cpus: Vec<CpuPlace>,
    /// What was missing or malformed, and what stands in for it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

impl Topology {
    /// CPUs that latency-sensitive work has not been promised: online CPUs
    /// outside isolated, nohz_full and isolcpus= sets. Never empty while a CPU
    /// is online: if everything is isolated, CPU `online[0]` is returned, as the
    /// kernel keeps its housekeeping there.
    pub fn housekeeping(&self) -> CpuList {
        let mut reserved = CpuList::default();
        for l in [&self.isolated, &self.nohz_full, &self.boot.nohz_full]
            .into_iter()
            .flatten()
        {
            reserved = reserved.union(l);
        }
        if let Some(iso) = &self.boot.isolcpus {
            reserved = reserved.union(&iso.cpus);
        }
        let hk = self.online.minus(&reserved);
        match (hk.is_empty(), self.online.cpus().first()) {
            (true, Some(&first)) => CpuList(vec![first]),
            _ => hk,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpulists() {
        assert_eq!(
            CpuList::parse("0-3,8,10-11\n").unwrap().cpus(),
            &[0, 1, 2, 3, 8, 10, 11]
        );
        assert_eq!(CpuList::parse("").unwrap().len(), 0);
        assert_eq!(CpuList::parse("(null)\n").unwrap().len(), 0);
        assert_eq!(
            CpuList::parse("0-15:2/4").unwrap().cpus(),
            &[0, 1, 4, 5, 8, 9, 12, 13]
        );
        assert_eq!(
            CpuList::parse("0-3,8,10-11").unwrap().to_string(),
            "0-3,8,10-11"
        );
        assert!(CpuList::parse("3-1").is_err());
        assert!(CpuList::parse("1,a").is_err());
        assert!(CpuList::parse("0-99999").is_err());
        assert!(CpuList::parse("0-7:0/4").is_err());
    }

    #[test]
    fn cmdline_isolation() {
        let p = parse_cmdline(
            "quiet isolcpus=nohz,domain,2-3 nohz_full=2-3 rcu_nocbs=2-3 -- isolcpus=9",
        )
        .unwrap();
        let iso = p.isolcpus.unwrap();
        assert_eq!(iso.flags, vec!["nohz", "domain"]);
        assert_eq!(iso.cpus.cpus(), &[2, 3]);
        assert_eq!(p.nohz_full.unwrap().cpus(), &[2, 3]);
        let e = parse_cmdline("nohz_full=x").unwrap_err();
        assert_eq!(e.field, "nohz_full");
    }

    #[test]
    fn housekeeping_excludes_isolated() {
        let t = Topology {
            online: CpuList::parse("0-3").unwrap(),
            isolated: Some(CpuList::parse("2").unwrap()),
            boot: parse_cmdline("nohz_full=3").unwrap(),
            ..Default::default()
        };
        assert_eq!(t.housekeeping().cpus(), &[0, 1]);
    }

    #[test]
    fn all_isolated_keeps_first_online() {
        let t = Topology {
            online: CpuList::parse("0-1").unwrap(),
            isolated: Some(CpuList::parse("0-1").unwrap()),
            ..Default::default()
        };
        assert_eq!(t.housekeeping().cpus(), &[0]);
    }
}
