//! node_exporter's rules, where its output is not the kernel's as printed:
//! which disks and vmstat keys it exports, its names for meminfo keys,
//! softirq vectors and CPU modes.

use agent::config::AgentSource;
use procfs::Source;
pub use procfs::diskstats::disk_excluded;

/// A node_exporter collector this agent stands in for: the sources it
/// needs (a missing one fails it, as node_exporter's does) and those it
/// reads when the kernel has them.
pub(super) struct Collector {
    pub name: &'static str,
    pub required: Vec<AgentSource>,
    pub optional: Vec<AgentSource>,
}

/// The collectors, from the source registry's `serves` and `helps`
/// columns, in the order the registry first names them; `processes` also
/// needs the process table. `node_scrape_collector_*{collector}` are
/// reported per entry.
pub(super) fn collectors() -> &'static [Collector] {
    static TABLE: std::sync::OnceLock<Vec<Collector>> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| {
        let mut out: Vec<Collector> = Vec::new();
        for s in Source::ALL {
            let info = s.info();
            for &name in info.serves {
                entry(&mut out, name).required.push(AgentSource::System(s));
            }
            for &name in info.helps {
                entry(&mut out, name).optional.push(AgentSource::System(s));
            }
        }
        out
    })
}

/// The collector named `name` in `out`, added (empty) if not yet there.
fn entry<'a>(out: &'a mut Vec<Collector>, name: &'static str) -> &'a mut Collector {
    let i = match out.iter().position(|c| c.name == name) {
        Some(i) => i,
        None => {
            out.push(Collector {
                name,
                required: if name == "processes" {
                    vec![AgentSource::Processes]
                } else {
                    Vec::new()
                },
                optional: Vec::new(),
            });
            out.len() - 1
        }
    };
    &mut out[i]
}

/// The sources behind node_exporter collector `name` (`--collector.NAME`),
/// or behind one of the agent's own source keys; `None` for neither.
pub fn collector_sources(name: &str) -> Option<Vec<AgentSource>> {
    if let Some(c) = collectors().iter().find(|c| c.name == name) {
        return Some(c.required.iter().chain(&c.optional).copied().collect());
    }
    AgentSource::from_key(name).map(|s| vec![s])
}

/// The node_exporter collectors the agent stands in for, comma-separated.
pub fn collector_names() -> String {
    collectors()
        .iter()
        .map(|c| c.name)
        .collect::<Vec<_>>()
        .join(", ")
}

/// node_exporter's Linux collectors the agent does not stand in for, each
/// with the reason (docs/metrics.md names each; a test checks it).
pub const NOT_HERE: &[(&str, &str)] = &[
    ("tcpstat", "needs netlink (inet_diag)"),
    (
        "logind",
        "not yet: its sessions come from systemd-logind over the system bus, which only a machine booted with systemd runs",
    ),
    ("netclass_rtnl", "needs netlink"),
    (
        "perf",
        "perf events per CPU: `quietstat noise` measures these on demand",
    ),
    ("ntp", "queries an NTP server over the network"),
    ("supervisord", "needs a daemon's XML-RPC"),
    ("runit", "reads a service supervisor's directory"),
    ("network_route", "needs netlink"),
    ("drm", "not yet: /sys/class/drm"),
    ("nvmesubsystem", "not yet: /sys/class/nvme-subsystem"),
    ("tls", "not yet: /proc/net/tls_stat"),
];

/// A configured pattern compiled; `None` for "" (none) and for one that
/// does not compile (the configuration checked it).
pub fn pattern(p: &str) -> Option<regex::Regex> {
    (!p.is_empty()).then(|| regex::Regex::new(p).ok()).flatten()
}

/// Whether a key of a source is served as a family, by the configured
/// `fields` pattern (node_exporter's `--collector.*.fields`): its default
/// is matched by hand (`by_hand`), any other by the regular expression
/// ("" serves every key, as node_exporter's empty pattern does). A
/// pattern that does not compile (the configuration checked it) serves
/// what the default does.
pub fn fields_filter(
    fields: &str,
    default: &str,
    by_hand: fn(&str) -> bool,
) -> impl Fn(&str) -> bool + use<> {
    let re = match fields {
        f if f == default => None,
        "" => Some(None),
        f => regex::Regex::new(f).ok().map(Some),
    };
    move |key: &str| match &re {
        None => by_hand(key),
        Some(None) => true,
        Some(Some(r)) => r.is_match(key),
    }
}

/// Whether a device named `name` is served, by the configuration's
/// include (when set, only those it matches) and exclude pattern ("" for
/// none): network devices, ARP devices, hwmon chips and sensors,
/// interrupts, InfiniBand devices, slab caches (the disks have their
/// own, [`procfs::diskstats::DiskFilter`], which the gatherer shares). A
/// pattern that does not compile (the configuration checked it) excludes
/// nothing.
pub fn device_filter(exclude: &str, include: &str) -> impl Fn(&str) -> bool + use<> {
    let (exclude, include) = (pattern(exclude), pattern(include));
    // node_exporter's deviceFilter: kept when the include (if any) matches
    // and the exclude (if any) does not.
    move |name: &str| {
        include.as_ref().is_none_or(|i| i.is_match(name))
            && exclude.as_ref().is_none_or(|e| !e.is_match(name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::collector::{meminfo_family, netstat_exported, vmstat_exported};

    #[test]
    fn netstat_fields_follow_node_exporter_s_default_filter() {
        for yes in [
            "Tcp_ActiveOpens",
            "Tcp_CurrEstab",
            "TcpExt_ListenDrops",
            "TcpExt_SyncookiesSent",
            "TcpExt_TCPTimeouts",
            "Ip_Forwarding",
            "IpExt_InOctets",
            "Ip6_OutOctets",
            "Icmp6_InMsgs",
            "Udp_NoPorts",
            "Udp6_RcvbufErrors",
            "Udp_InErrors",
            "Icmp_InErrors",
            "UdpLite_InErrors",
        ] {
            assert!(netstat_exported(yes), "{yes}");
        }
        for no in [
            "Tcp_MaxConn",
            "TcpExt_TW",
            "Ip_InReceives",
            "Udp_InCsumErrors",
            "IpExt_InMcastPkts",
            "Ip6_InHdrErrors",
        ] {
            assert!(!netstat_exported(no), "{no}");
        }
    }
    use crate::metrics::families::family;

    #[test]
    fn node_exporter_disk_exclusions() {
        for d in [
            "loop0",
            "ram12",
            "sda1",
            "vda2",
            "xvdb3",
            "nvme0n1p2",
            "fd0",
        ] {
            assert!(disk_excluded(d), "{d}");
        }
        for d in ["sda", "vda", "nvme0n1", "zram0", "dm-0", "md127", "mmcblk0"] {
            assert!(!disk_excluded(d), "{d}");
        }
    }

    #[test]
    fn the_hand_matchers_agree_with_node_exporter_s_default_patterns() {
        let net = regex::Regex::new(agent::config::DEFAULT_NETSTAT_FIELDS).unwrap();
        let vm = regex::Regex::new(agent::config::DEFAULT_VMSTAT_FIELDS).unwrap();
        let tree = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures");
        let mut keys = 0;
        for dir in std::fs::read_dir(tree).unwrap().flatten() {
            for f in ["net/netstat", "net/snmp", "net/snmp6", "vmstat"] {
                let Ok(text) = std::fs::read_to_string(dir.path().join("proc").join(f)) else {
                    continue;
                };
                let names: Vec<String> = if f == "vmstat" {
                    match procfs::vmstat::parse(text.as_bytes()) {
                        Ok(v) => v.all().iter().map(|(k, _)| k.to_string()).collect(),
                        Err(_) => continue,
                    }
                } else {
                    let mut n = procfs::netstat::Netstat::default();
                    if procfs::netstat::parse_into(text.as_bytes(), &mut n).is_err() {
                        continue;
                    }
                    n.values.into_iter().map(|(k, _)| k).collect()
                };
                for k in names {
                    keys += 1;
                    let hand = if f == "vmstat" {
                        vmstat_exported(&k)
                    } else {
                        netstat_exported(&k)
                    };
                    let re = if f == "vmstat" { &vm } else { &net };
                    assert_eq!(hand, re.is_match(&k), "{k} in {}", dir.path().display());
                }
            }
        }
        assert!(keys > 500, "{keys} keys read");
    }

    #[test]
    fn a_configured_fields_pattern_replaces_the_default() {
        let d = agent::config::DEFAULT_VMSTAT_FIELDS;
        let default = fields_filter(d, d, vmstat_exported);
        assert!(default("pgfault") && !default("nr_free_pages"));
        let mine = fields_filter("^nr_free", d, vmstat_exported);
        assert!(mine("nr_free_pages") && !mine("pgfault"));
        let all = fields_filter("", d, vmstat_exported);
        assert!(all("nr_free_pages") && all("pgfault"));
    }

    #[test]
    fn node_exporter_vmstat_fields() {
        for f in ["oom_kill", "pgpgin", "pswpout", "pgfault", "pgmajfault"] {
            assert!(vmstat_exported(f), "{f}");
        }
        for f in ["nr_free_pages", "pgfree", "workingset_refault_anon"] {
            assert!(!vmstat_exported(f), "{f}");
        }
    }

    #[test]
    fn meminfo_names_match_node_exporter() {
        let name = |key: &str| {
            let mut part = String::new();
            let f = meminfo_family(key, &mut part);
            f.name.replace('*', &part)
        };
        assert_eq!(name("Active(anon)"), "node_memory_Active_anon_bytes");
        assert_eq!(name("HugePages_Total"), "node_memory_HugePages_Total");
        assert_eq!(name("Hugepagesize"), "node_memory_Hugepagesize_bytes");
        assert!(family("node_memory_Active_anon_bytes").is_some());
        assert!(family("node_memory_HugePages_Total").is_some());
        assert!(family("node_vmstat_pgfault").is_some());
        assert!(family("node_bogus").is_none());
    }
}

#[cfg(test)]
mod collectors_doc {
    use super::{NOT_HERE, collector_sources, collectors};

    /// docs/metrics.md names every node_exporter collector the agent lacks.
    #[test]
    fn docs_name_every_collector_not_here() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/metrics.md");
        let doc = std::fs::read_to_string(path).unwrap();
        let section = doc
            .split("## node_exporter's families not here")
            .nth(1)
            .expect("the section");
        for (name, why) in NOT_HERE {
            assert!(section.contains(name), "{name} ({why}) not named");
            assert!(
                collectors().iter().all(|c| c.name != *name),
                "{name} is both here and not"
            );
        }
    }

    #[test]
    fn every_collector_has_sources() {
        for c in collectors() {
            assert!(!collector_sources(c.name).unwrap().is_empty(), "{}", c.name);
        }
        assert_eq!(collector_sources("net_dev").unwrap().len(), 1);
        assert!(collector_sources("drm").is_none());
    }
}
