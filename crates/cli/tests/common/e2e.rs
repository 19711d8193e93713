//! node_exporter's end-to-end test: its command line's collectors and
//! flags, and its fixture trees (`fixtures/node-exporter-e2e`, taken from
//! node_exporter's repository; `sys` and `udev` are kept as its `ttar`
//! archives and extracted here).

use std::path::Path;

/// What the flags of node_exporter's end-to-end test script that have no
/// effect here are refused for, each alone: the collectors the agent
/// lacks, and options not taken yet. The script itself drops the flags of
/// collectors its build lacks; the agent names them instead.
pub const E2E_REFUSED: &[&str] = &["--collector.bcache.priorityStats"];

/// The collectors node_exporter's end-to-end script enables and disables.
pub const E2E_ENABLED: &[&str] = &[
    "arp",
    "bcache",
    "bcachefs",
    "bonding",
    "btrfs",
    "buddyinfo",
    "cgroups",
    "conntrack",
    "cpu",
    "cpufreq",
    "cpu_vulnerabilities",
    "diskstats",
    "dmi",
    "drbd",
    "edac",
    "entropy",
    "fibrechannel",
    "filefd",
    "hwmon",
    "infiniband",
    "interrupts",
    "ipvs",
    "kernel_hung",
    "ksmd",
    "lnstat",
    "loadavg",
    "mdadm",
    "meminfo",
    "meminfo_numa",
    "mountstats",
    "netdev",
    "netstat",
    "nfs",
    "nfsd",
    "pcidevice",
    "pressure",
    "processes",
    "qdisc",
    "rapl",
    "schedstat",
    "slabinfo",
    "sockstat",
    "softirqs",
    "stat",
    "sysctl",
    "textfile",
    "thermal_zone",
    "tls",
    "udp_queues",
    "vmstat",
    "watchdog",
    "wifi",
    "xfrm",
    "xfs",
    "zfs",
    "zoneinfo",
];
pub const E2E_DISABLED: &[&str] = &["selinux", "filesystem", "timex", "uname"];

/// Extracts a `ttar` archive (node_exporter's text archive of a tree:
/// `Directory:`, `Path:` with `Lines:` and the lines, or `SymlinkTo:`;
/// `NULLBYTE` is a zero byte and a line ending in `EOF` has no newline,
/// each escaped with a backslash when literal) under `into`.
pub fn extract_ttar(archive: &Path, into: &Path) {
    let text = std::fs::read_to_string(archive).unwrap();
    let mut lines = text.lines();
    let mut path: Option<std::path::PathBuf> = None;
    while let Some(line) = lines.next() {
        if let Some(d) = line.strip_prefix("Directory: ") {
            std::fs::create_dir_all(into.join(d)).unwrap();
        } else if let Some(p) = line.strip_prefix("Path: ") {
            path = Some(into.join(p));
        } else if let Some(target) = line.strip_prefix("SymlinkTo: ") {
            let p = path.take().expect("SymlinkTo: after Path:");
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::os::unix::fs::symlink(target, &p).unwrap();
        } else if let Some(n) = line.strip_prefix("Lines: ") {
            let p = path.take().expect("Lines: after Path:");
            let n: usize = n.parse().unwrap();
            let mut body = Vec::new();
            for _ in 0..n {
                body.extend(unescape(lines.next().expect("a file's line")));
            }
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, body).unwrap();
        }
    }
}

/// One archived line as bytes: NULLBYTE a zero byte, a trailing EOF no
/// newline, `\NULLBYTE` and `\EOF` literal.
fn unescape(line: &str) -> Vec<u8> {
    let (line, newline) = match line.strip_suffix("EOF") {
        Some(rest) if !rest.ends_with('\\') => (rest, false),
        _ => (line, true),
    };
    let mut out = Vec::new();
    let mut rest = line;
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix("\\NULLBYTE") {
            out.extend_from_slice(b"NULLBYTE");
            rest = r;
        } else if let Some(r) = rest.strip_prefix("\\EOF") {
            out.extend_from_slice(b"EOF");
            rest = r;
        } else if let Some(r) = rest.strip_prefix("NULLBYTE") {
            out.push(0);
            rest = r;
        } else {
            let c = rest.chars().next().unwrap();
            let mut buf = [0u8; 4];
            out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            rest = &rest[c.len_utf8()..];
        }
    }
    if newline {
        out.push(b'\n');
    }
    out
}
