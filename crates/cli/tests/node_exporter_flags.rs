//! node_exporter's command line given to the agent: every flag the
//! installed node_exporter lists is taken or refused naming itself, the
//! command line of node_exporter's own end-to-end test starts the agent,
//! and the options it takes have their effect.

mod common;

use std::collections::BTreeMap;
use std::process::Output;

use common::agent::{agent, get};
use common::exposition::{parse_exposition, which};
use common::run;

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures");

/// The flags `node_exporter --help` lists, each with a value when it takes
/// one: its default where the help shows one, else a placeholder that any
/// such flag accepts.
fn node_exporter_flags() -> Vec<(String, Option<String>)> {
    let help = std::process::Command::new(which("prometheus-node-exporter"))
        .arg("--help")
        .output()
        .expect("running node_exporter --help");
    // kingpin prints its help on stderr.
    let text =
        String::from_utf8_lossy(&help.stderr).to_string() + &String::from_utf8_lossy(&help.stdout);
    let mut flags = Vec::new();
    for line in text.lines() {
        let Some(rest) = line.trim_start().strip_prefix("--") else {
            continue;
        };
        let spec = rest.split_whitespace().next().unwrap_or_default();
        let (name, value) = match spec.split_once('=') {
            Some((n, v)) => (n, Some(v)),
            None => (spec, None),
        };
        if matches!(name, "help" | "help-long" | "help-man" | "version") {
            continue;
        }
        let value = value.map(|v| {
            let unquoted = v.trim_matches('"');
            // kingpin writes a flag without a default as its name in
            // capitals (COLLECTOR.ARP.DEVICE-INCLUDE).
            let placeholder = !v.starts_with('"')
                && v.bytes().any(|b| b.is_ascii_uppercase())
                && !v.bytes().any(|b| b.is_ascii_lowercase());
            if !placeholder {
                // The help's default (regular expressions doubly escaped).
                unquoted.replace("\\\\", "\\")
            } else {
                // A placeholder such as COLLECTOR.ARP.DEVICE-INCLUDE:
                // a regular expression, a path or a name alike.
                match name {
                    "web.max-requests" | "runtime.gomaxprocs" => "1".to_string(),
                    "web.listen-address" => "127.0.0.1:0".to_string(),
                    _ => "x".to_string(),
                }
            }
        });
        flags.push((format!("--{name}"), value));
    }
    flags
}

/// The exposition as `name{label="value",...}` (labels sorted) -> value.
fn flat(body: &str) -> BTreeMap<String, f64> {
    parse_exposition(body)
        .0
        .into_iter()
        .map(|((name, labels), v)| {
            if labels.is_empty() {
                return (name, v);
            }
            let l: Vec<String> = labels.iter().map(|(k, v)| format!("{k}=\"{v}\"")).collect();
            (format!("{name}{{{}}}", l.join(",")), v)
        })
        .collect()
}

fn print_config(args: &[String]) -> Output {
    let mut all = vec!["agent".to_string()];
    all.extend(args.iter().cloned());
    all.push("--print-config".into());
    let refs: Vec<&str> = all.iter().map(String::as_str).collect();
    run(&refs)
}

/// The newest node_exporter release's flags (a list read from its source,
/// fixtures/node-exporter-flags): each is taken, or refused naming itself
/// with its own reason (a collector that is not here and why, or why the
/// option is not taken); none falls to the answer for a flag the agent
/// has never heard of.
#[test]
fn every_flag_of_the_newest_release_is_taken_or_refused_with_its_reason() {
    let list =
        std::fs::read_to_string(format!("{FIXTURES}/node-exporter-flags/1.12.1.txt")).unwrap();
    let args: Vec<&str> = list.lines().filter(|l| l.starts_with("--")).collect();
    assert!(args.len() > 200, "{} flags listed", args.len());
    let (mut taken, mut refused, mut unheard) = (0, Vec::new(), Vec::new());
    for arg in args {
        let out = print_config(&[arg.to_string()]);
        if out.status.success() {
            taken += 1;
            continue;
        }
        let err = String::from_utf8_lossy(&out.stderr).to_string();
        let flag = arg.split('=').next().unwrap();
        let bare = flag.replacen("--no-", "--", 1);
        let why = [flag, bare.as_str()]
            .iter()
            .find_map(|f| {
                err.split(&format!("node_exporter's {f} is not taken here: "))
                    .nth(1)
            })
            .map(str::trim)
            .unwrap_or_default();
        if out.status.code() != Some(2) || why.len() <= 10 || why.contains("has no such option") {
            unheard.push(format!("{arg}: {}", err.trim()));
        } else {
            refused.push(format!("{flag}: {why}"));
        }
    }
    assert!(
        unheard.is_empty(),
        "flags neither taken nor refused with a reason: {unheard:#?}"
    );
    eprintln!(
        "{taken} taken; {} refused:\n{}",
        refused.len(),
        refused.join("\n")
    );
}

/// The flags this issue names must be taken; any other flag node_exporter
/// has is taken or refused with a message that names it and says why,
/// never reported as an unknown argument.
#[test]
fn every_node_exporter_flag_is_taken_or_refused_by_name() {
    let flags = node_exporter_flags();
    assert!(
        flags.len() > 100,
        "node_exporter listed {} flags",
        flags.len()
    );
    let must_take = [
        "--web.listen-address",
        "--web.telemetry-path",
        "--web.config.file",
        "--web.disable-exporter-metrics",
        "--log.level",
        "--log.format",
        "--path.procfs",
        "--path.sysfs",
        "--path.rootfs",
        "--path.udev.data",
        "--collector.disable-defaults",
        "--collector.diskstats.device-exclude",
        "--collector.diskstats.device-include",
        "--collector.netdev.device-exclude",
        "--collector.netdev.device-include",
        "--collector.netclass.ignored-devices",
        "--collector.netclass.ignore-invalid-speed",
        "--collector.filesystem.mount-points-exclude",
        "--collector.filesystem.fs-types-exclude",
        "--collector.cpu.info",
        "--collector.textfile.directory",
        "--collector.arp.device-exclude",
    ];
    let (mut taken, mut refused) = (Vec::new(), Vec::new());
    for (flag, value) in &flags {
        let arg = match value {
            Some(v) => format!("{flag}={v}"),
            None => flag.clone(),
        };
        let out = print_config(std::slice::from_ref(&arg));
        let err = String::from_utf8_lossy(&out.stderr);
        if out.status.success() {
            taken.push(flag.clone());
            continue;
        }
        assert!(
            !must_take.contains(&flag.as_str()),
            "{arg} must be taken; the agent said: {err}"
        );
        let named = format!("node_exporter's {flag} is not taken here: ");
        let why = err.split(&named).nth(1).map(str::trim).unwrap_or_default();
        assert!(
            out.status.code() == Some(2) && why.len() > 10,
            "{arg}: neither taken nor refused by name with a reason: {err}"
        );
        refused.push(flag.clone());
    }
    for f in must_take {
        assert!(
            taken.iter().any(|t| t == f),
            "{f} is not in node_exporter's --help"
        );
    }
    eprintln!(
        "{} of node_exporter's flags taken, {} refused by name: {refused:?}",
        taken.len(),
        refused.len()
    );
}

use common::e2e::{E2E_DISABLED, E2E_ENABLED, E2E_REFUSED};

/// node_exporter's end-to-end command line on the this-machine tree: the
/// agent starts with every collector the script names and the options it
/// takes, and each option has its effect.
#[test]
fn node_exporters_end_to_end_command_line() {
    for flag in E2E_REFUSED {
        let out = print_config(&[flag.to_string()]);
        let name = flag.split('=').next().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.code() == Some(2)
                && err.contains(&format!("node_exporter's {name} is not taken here: ")),
            "{flag}: {err}"
        );
    }
    let textfiles = tempfile::tempdir().unwrap();
    std::fs::write(
        textfiles.path().join("metrics1.prom"),
        "# HELP testmetric1_1 Metric read from a file\n# TYPE testmetric1_1 untyped\ntestmetric1_1{foo=\"bar\"} 10\n",
    )
    .unwrap();
    std::fs::write(
        textfiles.path().join("metrics2.prom"),
        "# HELP testmetric2_1 Metric read from a file\n# TYPE testmetric2_1 untyped\ntestmetric2_1{foo=\"bar\"} 30\n",
    )
    .unwrap();
    let tree = format!("{FIXTURES}/this-machine");
    let mut args: Vec<String> = vec![
        format!("--path.rootfs={tree}/rootfs"),
        format!("--path.procfs={tree}/proc"),
        format!("--path.sysfs={tree}/sys"),
        format!("--path.udev.data={tree}/udev/data"),
    ];
    args.extend(E2E_ENABLED.iter().map(|c| format!("--collector.{c}")));
    args.extend(E2E_DISABLED.iter().map(|c| format!("--no-collector.{c}")));
    args.extend(
        [
            "--collector.cpu.info",
            "--collector.cpu.info.bugs-include=^(cpu_meltdown|spectre_.*|mds)$",
            "--collector.cpu.info.flags-include=^(aes|avx.?|constant_tsc)$",
            "--collector.arp.device-exclude=nope",
            "--collector.hwmon.chip-include=(applesmc|asus_nb_wmi|coretemp|hwmon4|ieee80211|nct6779)",
            "--collector.netclass.ignore-invalid-speed",
            "--collector.netclass.ignored-devices=(dmz|int)",
            "--collector.netdev.device-include=lo",
            "--collector.stat.softirq",
            "--no-collector.arp.netlink",
            "--log.level=debug",
        ]
        .map(String::from),
    );
    args.push(format!(
        "--collector.textfile.directory={}",
        textfiles.path().display()
    ));
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let a = agent("", &refs);
    // A collector the agent lacks is a warning, named once.
    assert!(
        a.early
            .iter()
            .any(|l| l.contains("collector \"tls\" is not available here")),
        "no warning for tls: {:#?}",
        a.early
    );
    let body = get(a.addr, "/metrics", None).body;
    let series = flat(&body);
    let names = |prefix: &str| -> Vec<&String> {
        series
            .keys()
            .filter(|k| k.starts_with(prefix))
            .collect::<Vec<_>>()
    };
    // netdev's include: lo only, though the tree has eth0 and ifb*.
    let rx = names("node_network_receive_bytes_total{");
    assert!(
        !rx.is_empty() && rx.iter().all(|k| k.contains("device=\"lo\"")),
        "{rx:?}"
    );
    // netclass: eth0's speed is -1 in the tree; ignore-invalid-speed
    // leaves it out, while eth0 itself is served.
    assert!(names("node_network_speed_bytes{").is_empty(), "{body}");
    assert!(
        series.contains_key("node_network_up{device=\"eth0\"}"),
        "eth0 not served"
    );
    // arp: "nope" excludes nothing.
    assert_eq!(series.get("node_arp_entries{device=\"eth0\"}"), Some(&1.0));
    // Collectors of node_exporter's later releases, enabled: taken
    // without a warning and reported (this tree has no NFS mount, PCI bus
    // or bcachefs, no DRBD and no vulnerabilities directory; the
    // end-to-end fixture's test checks their series).
    for c in [
        "mountstats",
        "pcidevice",
        "bcachefs",
        "sysctl",
        "drbd",
        "cpu_vulnerabilities",
    ] {
        assert!(
            !a.early
                .iter()
                .any(|l| l.contains(&format!("collector \"{c}\""))),
            "{c} warned of: {:#?}",
            a.early
        );
        let success = format!("node_scrape_collector_success{{collector=\"{c}\"}}");
        assert!(series.contains_key(&success), "{success} not served");
    }
    // The disabled collectors are not served.
    for f in [
        "node_uname_info",
        "node_filesystem_size_bytes",
        "node_timex_",
    ] {
        assert!(names(f).is_empty(), "{f} served");
    }
    // textfile: both files.
    assert_eq!(series.get("testmetric1_1{foo=\"bar\"}"), Some(&10.0));
    assert_eq!(series.get("testmetric2_1{foo=\"bar\"}"), Some(&30.0));
    // interrupts and softirqs, enabled: their per-CPU families.
    assert!(!names("node_interrupts_total{").is_empty());
    assert!(!names("node_softirqs_total{").is_empty());
    assert!(!names("node_cpu_info{").is_empty());
    // The first CPU's flags and bugs that match the expressions, as the
    // tree's cpuinfo has them.
    let cpuinfo = std::fs::read_to_string(format!("{tree}/proc/cpuinfo")).unwrap();
    let first = |key: &str| -> Vec<String> {
        let line = cpuinfo.lines().find(|l| l.starts_with(key)).unwrap();
        line.split_once(':')
            .unwrap()
            .1
            .split_whitespace()
            .map(String::from)
            .collect()
    };
    let expect = |key: &str, label: &str, keep: fn(&str) -> bool| -> Vec<String> {
        let mut v: Vec<String> = first(key)
            .iter()
            .filter(|w| keep(w))
            .map(|w| format!("node_cpu_{label}_info{{{label}=\"{w}\"}}"))
            .collect();
        v.sort();
        v
    };
    let served = |prefix: &str| -> Vec<String> { names(prefix).into_iter().cloned().collect() };
    let flags = expect("flags", "flag", |w| {
        w == "aes" || w == "constant_tsc" || (w.starts_with("avx") && w.len() <= 4)
    });
    assert!(flags.len() >= 2, "{flags:?}");
    assert_eq!(served("node_cpu_flag_info{"), flags);
    let bugs = expect("bugs", "bug", |w| {
        w == "cpu_meltdown" || w == "mds" || w.starts_with("spectre_")
    });
    assert!(!bugs.is_empty(), "{bugs:?}");
    assert_eq!(served("node_cpu_bug_info{"), bugs);
}

/// The filters' effects where the end-to-end values match nothing: a
/// netclass device ignored, an ARP device excluded, a hwmon chip included.
#[test]
fn netclass_arp_and_hwmon_filters_leave_out_what_they_name() {
    let series = served_from(
        "this-machine",
        &[
            "--collector.netclass.ignored-devices=^eth",
            "--collector.arp.device-include=^lo$",
        ],
    );
    assert!(series.contains_key("node_network_up{device=\"lo\"}"));
    assert!(!series.contains_key("node_network_up{device=\"eth0\"}"));
    // The ignored device keeps its netdev counters: netclass only.
    assert!(series.contains_key("node_network_receive_bytes_total{device=\"eth0\"}"));
    assert!(!series.keys().any(|k| k.starts_with("node_arp_entries{")));

    let chips = |extra: &str| -> Vec<String> {
        served_from("linux-future", &[extra])
            .into_keys()
            .filter(|k| k.starts_with("node_hwmon_chip_names{"))
            .collect()
    };
    let all = chips("--log.level=info");
    let core = chips("--collector.hwmon.chip-include=coretemp");
    assert!(
        all.len() > core.len() && !core.is_empty(),
        "{all:?} {core:?}"
    );
    assert!(core.iter().all(|k| k.contains("coretemp")), "{core:?}");
    let rest = chips("--collector.hwmon.chip-exclude=coretemp");
    assert_eq!(rest.len() + core.len(), all.len(), "{rest:?}");
}

/// The filters of node_exporter's later releases: hwmon sensors by
/// `chip;sensor`, interrupts by `name;info;devices`, slab caches, and
/// the filesystem's includes; each leaves out what it names, no more.
#[test]
fn later_releases_filters_leave_out_what_they_name() {
    let keys = |extra: &[&str], prefix: &str| -> Vec<String> {
        let mut all = vec!["--collector.slabinfo", "--collector.interrupts"];
        all.extend_from_slice(extra);
        served_from("linux-future", &all)
            .into_keys()
            .filter(|k| k.starts_with(prefix))
            .collect()
    };
    let sensors = |f: &str| keys(&[f], "node_hwmon_temp_celsius{");
    let all = sensors("--log.level=info");
    let no_temp1 = sensors("--collector.hwmon.sensor-exclude=.*;temp1");
    assert!(
        !no_temp1.is_empty() && no_temp1.len() < all.len(),
        "{all:?}"
    );
    assert!(no_temp1.iter().all(|k| !k.contains("sensor=\"temp1\"")));
    assert!(all.iter().any(|k| k.contains("sensor=\"temp1\"")));

    let irqs = |f: &str| keys(&[f], "node_interrupts_total{");
    let all = irqs("--log.level=info");
    let loc = irqs("--collector.interrupts.name-include=^LOC;");
    assert!(!loc.is_empty() && loc.len() < all.len());
    assert!(loc.iter().all(|k| k.contains("type=\"LOC\"")), "{loc:?}");
    let rest = irqs("--collector.interrupts.name-exclude=^LOC;");
    assert_eq!(rest.len() + loc.len(), all.len());

    let slabs = |f: &[&str]| keys(f, "node_slabinfo_objects{");
    let all = slabs(&[]);
    let some = slabs(&["--collector.slabinfo.slabs-include=^(dentry|task_struct)$"]);
    assert_eq!(some.len(), 2, "{all:?}");
    assert!(all.len() > 2);
    // Both apply, as node_exporter's: those included less those excluded.
    let both = slabs(&[
        "--collector.slabinfo.slabs-include=^(dentry|task_struct)$",
        "--collector.slabinfo.slabs-exclude=^dentry$",
    ]);
    assert_eq!(both.len(), 1, "{both:?}");
    assert!(both[0].contains("task_struct"));

    let points = |f: &str| keys(&[f], "node_filesystem_size_bytes{");
    let root = points("--collector.filesystem.mount-points-include=^/$");
    assert!(!root.is_empty());
    assert!(
        root.iter().all(|k| k.contains("mountpoint=\"/\"")),
        "{root:?}"
    );
}

/// One scrape of an agent started on the fixture tree `name` with `extra`.
fn served_from(name: &str, extra: &[&str]) -> BTreeMap<String, f64> {
    let tree = format!("{FIXTURES}/{name}");
    let (proc_root, sys_root) = (format!("{tree}/proc"), format!("{tree}/sys"));
    let mut args = vec!["--proc-root", &proc_root, "--sys-root", &sys_root];
    args.extend_from_slice(extra);
    let a = agent("", &args);
    flat(&get(a.addr, "/metrics", None).body)
}

/// Debian's /etc/default/prometheus-node-exporter: every `ARGS=` line in
/// it, set or commented out, is taken as it stands.
#[test]
fn debians_args_examples_are_taken() {
    let text = std::fs::read_to_string("/etc/default/prometheus-node-exporter")
        .expect("Debian's prometheus-node-exporter package (installed by .ci/run)");
    let mut seen = 0;
    for line in text.lines() {
        let line = line.trim_start_matches(['#', ' ']);
        let Some(v) = line.strip_prefix("ARGS=") else {
            continue;
        };
        seen += 1;
        // The shell's word splitting of the unit's `$ARGS`.
        let v = v.trim_matches('"');
        let args: Vec<String> = v.split_whitespace().map(String::from).collect();
        let out = print_config(&args);
        assert!(
            out.status.success(),
            "ARGS={v}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    assert!(seen > 0, "no ARGS= line in {text}");
}

/// `--web.max-requests=1`: while one scrape's answer is held by a client
/// that stopped reading, another scrape is answered 503 naming the flag;
/// the JSON API is not counted; once the first client is gone, scrapes
/// are answered again.
#[test]
fn max_requests_refuses_scrapes_beyond_the_limit() {
    use std::io::Write;
    // An answer larger than the kernel can buffer between the two ends, so
    // the first answer stays in progress while its client does not read:
    // the sender's buffer grows to tcp_wmem's maximum at most, and the
    // receiver's is held at RCVBUF below.
    const RCVBUF: libc::c_int = 64 << 10;
    let wmem = std::fs::read_to_string("/proc/sys/net/ipv4/tcp_wmem").unwrap();
    let wmem_max: usize = wmem.split_whitespace().nth(2).unwrap().parse().unwrap();
    let held_bytes = wmem_max + 4 * RCVBUF as usize;
    let dir = tempfile::tempdir().unwrap();
    let pad = "p".repeat(1000);
    let mut text = String::from("# TYPE big gauge\n");
    let mut i = 0;
    while text.len() < held_bytes + (2 << 20) {
        text += &format!("big{{i=\"{i}\",pad=\"{pad}\"}} 1\n");
        i += 1;
    }
    std::fs::write(dir.path().join("big.prom"), text).unwrap();
    let tdir = format!("--collector.textfile.directory={}", dir.path().display());
    let a = agent("", &["--web.max-requests=1", &tdir]);
    assert!(
        common::wait_for(std::time::Duration::from_secs(30), || {
            get(a.addr, "/metrics", None).body.contains("big{i=\"0\"")
        }),
        "the textfile was never served"
    );
    let mut held = std::net::TcpStream::connect(a.addr).unwrap();
    // SAFETY: a valid socket and a c_int option value. Setting it locks
    // the buffer's size, so it does not grow.
    let r = unsafe {
        libc::setsockopt(
            std::os::fd::AsRawFd::as_raw_fd(&held),
            libc::SOL_SOCKET,
            libc::SO_RCVBUF,
            (&RCVBUF as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    assert_eq!(r, 0);
    write!(held, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    // Its answer has begun (so it holds the one place) before another
    // scrape is sent; a few bytes read leave the rest held.
    held.set_read_timeout(Some(std::time::Duration::from_secs(30)))
        .unwrap();
    let mut head = [0u8; 12];
    std::io::Read::read_exact(&mut held, &mut head).unwrap();
    assert_eq!(&head, b"HTTP/1.1 200");
    let refused = common::wait_for(std::time::Duration::from_secs(20), || {
        let r = get(a.addr, "/metrics", None);
        r.status == 503 && r.body.contains("--web.max-requests")
    });
    assert!(refused, "a second scrape was never refused");
    assert_eq!(
        get(a.addr, "/api/v1/snapshot?sources=stat", None).status,
        200
    );
    drop(held);
    assert!(
        common::wait_for(std::time::Duration::from_secs(20), || {
            get(a.addr, "/metrics", None).status == 200
        }),
        "scrapes were not answered again once the held one was gone"
    );
}

/// The answer to a plain GET of /metrics on `addr`, read to the end
/// within 60 s.
fn scrape(addr: &str) -> String {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(addr).unwrap_or_else(|e| panic!("{addr}: {e}"));
    s.set_read_timeout(Some(std::time::Duration::from_secs(60)))
        .unwrap();
    write!(s, "GET /metrics HTTP/1.0\r\nHost: x\r\n\r\n").unwrap();
    let mut raw = String::new();
    s.read_to_string(&mut raw).unwrap();
    raw
}

/// `--web.listen-address` given twice: both addresses are served alike.
#[test]
fn repeated_listen_addresses_are_each_served() {
    let a = agent(
        "",
        &[
            "--web.listen-address",
            "127.0.0.1:0",
            "--web.listen-address",
            "127.0.0.2:0",
        ],
    );
    let second = a
        .log
        .recv_timeout(std::time::Duration::from_secs(30))
        .expect("a second serving line");
    let addr = second
        .strip_prefix("quietstat agent: serving http://")
        .and_then(|r| r.split('/').next())
        .unwrap_or_else(|| panic!("{second}"));
    assert!(addr.starts_with("127.0.0.2:"), "{second}");
    assert!(a.addr.to_string().starts_with("127.0.0.1:"), "{:?}", a.addr);
    for addr in [a.addr.to_string(), addr.to_string()] {
        let r = scrape(&addr);
        assert!(
            r.starts_with("HTTP/1.0 200") && r.contains("node_load1 "),
            "{addr}: {r:.300}"
        );
    }
}

/// `--web.systemd-socket` under systemd's own socket activator: the
/// activator listens on two sockets and starts the agent at the first
/// connection, which the agent then answers; both sockets are served. A
/// descriptor that is not a listening socket is refused by name.
#[test]
fn systemd_socket_activation_serves_the_handed_over_sockets() {
    use common::agent::{Proc, free_port};
    use sys::child::Guard;
    let activate = which("systemd-socket-activate");
    let (p1, p2) = (free_port(), free_port());
    let (a1, a2) = (format!("127.0.0.1:{p1}"), format!("127.0.0.2:{p2}"));
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    let shm = dir.path().join("snapshot");
    let child = std::process::Command::new(&activate)
        .args([
            "-l",
            &a1,
            "-l",
            &a2,
            common::BIN,
            "agent",
            "--web.systemd-socket",
        ])
        .args(["--no-store", "--shm-path"])
        .arg(&shm)
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let _agent = Proc(Guard(child));
    // The activator binds at once; wait until it does, then connect.
    assert!(
        common::wait_for(std::time::Duration::from_secs(10), || {
            std::net::TcpStream::connect(&a2).is_ok()
        }),
        "the activator never listened on {a2}"
    );
    for addr in [&a1, &a2] {
        let r = scrape(addr);
        assert!(
            r.starts_with("HTTP/1.0 200") && r.contains("node_load1 "),
            "{addr}: {r:.300}"
        );
    }

    // Not handed over: refused, naming the flag and what it needs.
    let out = run(&[
        "agent",
        "--web.systemd-socket",
        "--no-store",
        "--shm-path",
        "",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("LISTEN_FDS"), "{err}");
    // A descriptor that is not a listening socket: a file as descriptor 3,
    // handed over by a shell that then becomes the agent (so $$ is its
    // pid).
    let file = tempfile::NamedTempFile::new().unwrap();
    let mut cmd = std::process::Command::new("sh");
    cmd.arg("-c")
        .arg(format!(
            "exec 3<'{}'; LISTEN_PID=$$ LISTEN_FDS=1 exec '{}' agent --web.systemd-socket --no-store --shm-path ''",
            file.path().display(),
            common::BIN
        ));
    let out = cmd.output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("descriptor 3 is not a listening TCP socket"),
        "{err}"
    );
}

/// `--collector.vmstat.fields` and `--collector.netstat.fields` choose
/// the keys served, as node_exporter's do: the same series with the same
/// values as Debian's node_exporter given the same patterns, on a fixture
/// tree.
#[test]
fn vmstat_and_netstat_fields_serve_what_node_exporter_serves() {
    let tree = format!("{FIXTURES}/this-machine");
    let (proc_root, sys_root) = (format!("{tree}/proc"), format!("{tree}/sys"));
    for (vm, net) in [
        (r"^(nr_|pg).*", r"^(Tcp|Udp)_.*"),
        (r"^workingset_.*", r"^(TcpExt_TCP.*|Ip6_.*)"),
    ] {
        let patterns = [
            format!("--collector.vmstat.fields={vm}"),
            format!("--collector.netstat.fields={net}"),
        ];
        let ours: BTreeMap<String, f64> =
            served_from("this-machine", &[&patterns[0], &patterns[1]])
                .into_iter()
                .filter(|(k, _)| k.starts_with("node_vmstat_") || k.starts_with("node_netstat_"))
                .collect();
        let (_ne, addr) = common::exposition::node_exporter(&[
            format!("--path.procfs={proc_root}"),
            format!("--path.sysfs={sys_root}"),
            "--collector.disable-defaults".into(),
            "--collector.vmstat".into(),
            "--collector.netstat".into(),
            patterns[0].clone(),
            patterns[1].clone(),
        ]);
        let theirs: BTreeMap<String, f64> = flat(&get(addr, "/metrics", None).body)
            .into_iter()
            .filter(|(k, _)| k.starts_with("node_vmstat_") || k.starts_with("node_netstat_"))
            .collect();
        assert!(theirs.len() > 20, "{vm} {net}: {theirs:?}");
        assert_eq!(ours, theirs, "{vm} {net}");
    }
}

/// softnet's families of node_exporter's current release: the columns
/// after the third, each CPU named by the number its row gives.
#[test]
fn softnet_serves_every_column_by_the_row_s_cpu_number() {
    let series = served_from("this-machine", &[]);
    for family in [
        "node_softnet_processed_total",
        "node_softnet_dropped_total",
        "node_softnet_times_squeezed_total",
        "node_softnet_cpu_collision_total",
        "node_softnet_received_rps_total",
        "node_softnet_flow_limit_count_total",
        "node_softnet_backlog_len",
    ] {
        for cpu in ["0", "1"] {
            let key = format!("{family}{{cpu=\"{cpu}\"}}");
            assert!(series.contains_key(&key), "{key} not served");
        }
    }
    assert_eq!(
        series["node_softnet_processed_total{cpu=\"1\"}"],
        3_019_695.0
    );
    assert_eq!(series["node_softnet_times_squeezed_total{cpu=\"0\"}"], 3.0);
}
