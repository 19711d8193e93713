//! Property-based fuzzing of every parser, run by the test suite: arbitrary
//! bytes, and valid files with bytes flipped, cut or spliced, must give `Ok` or
//! a `ParseError` whose line lies within the input, never a panic. (Coverage-
//! guided fuzz targets for the same parsers live in `fuzz/`.)

use proptest::prelude::*;

type Parser = fn(&[u8]) -> Result<(), procfs::ParseError>;

fn parsers() -> Vec<(&'static str, Parser)> {
    vec![
        ("stat", |b| procfs::stat::parse(b).map(drop)),
        ("interrupts", |b| procfs::interrupts::parse(b).map(drop)),
        ("softirqs", |b| procfs::softirqs::parse(b).map(drop)),
        ("meminfo", |b| procfs::meminfo::parse(b).map(drop)),
        ("vmstat", |b| procfs::vmstat::parse(b).map(drop)),
        ("loadavg", |b| procfs::loadavg::parse(b).map(drop)),
        ("pressure/cpu", |b| procfs::pressure::parse(b).map(drop)),
        ("diskstats", |b| procfs::diskstats::parse(b).map(drop)),
        ("net/dev", |b| procfs::net_dev::parse(b).map(drop)),
        ("schedstat", |b| procfs::schedstat::parse(b).map(drop)),
        ("sys/fs/file-nr", |b| procfs::filefd::parse(b).map(drop)),
        ("net/sockstat", |b| {
            procfs::sockstat::parse_into(b, &mut Default::default())
        }),
        ("net/softnet_stat", |b| {
            procfs::softnet::parse_into(b, &mut Vec::new())
        }),
        ("sys/kernel/random/entropy_avail", |b| {
            procfs::entropy::parse(b).map(drop)
        }),
        ("net/netstat", |b| {
            procfs::netstat::parse_into(b, &mut Default::default())
        }),
        ("net/snmp", |b| {
            procfs::netstat::parse_into(b, &mut Default::default())
        }),
        ("net/snmp6", |b| {
            procfs::netstat::parse_into(b, &mut Default::default())
        }),
        ("sys/kernel/ostype", |b| {
            procfs::uname::parse_into(b, &mut Default::default())
        }),
        ("mdstat", |b| procfs::mdstat::parse_into(b, &mut Vec::new())),
        ("net/rpc/nfs", |b| {
            procfs::rpc::parse_into(b, &mut Default::default())
        }),
        ("net/rpc/nfsd", |b| {
            procfs::rpc::parse_into(b, &mut Default::default())
        }),
        ("net/ip_vs", |b| procfs::ipvs::parse(b).map(drop)),
        ("@zfs", |b| {
            procfs::zfs::parse_into(b, &mut Default::default())
        }),
        ("cpuinfo", |b| {
            procfs::cpuinfo::parse_into(b, &mut Vec::new())
        }),
        ("buddyinfo", |b| {
            procfs::mm::parse_buddyinfo(b, &mut Vec::new())
        }),
        ("zoneinfo", |b| {
            procfs::mm::parse_zoneinfo(b, &mut Vec::new())
        }),
        ("slabinfo", |b| {
            procfs::mm::parse_slabinfo(b, &mut Vec::new())
        }),
        ("sys/kernel/hung_task_detect_count", |b| {
            procfs::mm::parse_hung_tasks(b).map(drop)
        }),
        ("@ksm", |b| procfs::mm::parse_ksm(b).map(drop)),
        ("cgroups", |b| {
            procfs::ktables::parse_cgroups(b, &mut Vec::new())
        }),
        ("net/xfrm_stat", |b| {
            procfs::ktables::parse_xfrm(b, &mut Vec::new())
        }),
        ("@lnstat", |b| {
            procfs::ktables::parse_lnstat(b, &mut Vec::new())
        }),
        ("drbd", |b| procfs::ktables::parse_drbd(b, &mut Vec::new())),
        ("swaps", |b| {
            procfs::ktables::parse_swaps(b, &mut Vec::new())
        }),
        ("@sysctl", |b| {
            procfs::ktables::parse_sysctl(b, &mut Vec::new())
        }),
        ("@mountstats", |b| {
            procfs::mountstats::parse_into(b, &mut Vec::new())
        }),
        ("@infiniband", |b| {
            procfs::class::parse_into(b, &mut Vec::new())
        }),
        ("@power_supply", |b| {
            procfs::class::parse_into(b, &mut Vec::new())
        }),
        ("@btrfs", |b| procfs::class::parse_into(b, &mut Vec::new())),
        ("@task_limits", |b| {
            procfs::mm::parse_task_limits(b).map(drop)
        }),
        ("net/arp", |b| {
            procfs::netmisc::parse_arp(b, &mut Default::default())
        }),
        ("net/udp", |b| {
            procfs::netmisc::parse_udp_queues(b).map(drop)
        }),
        ("net/stat/nf_conntrack", |b| {
            procfs::netmisc::parse_conntrack(b).map(drop)
        }),
        // Gathered sources: seeded from what the reader gathers on the
        // fixture trees (see `seeds`).
        ("@netclass", |b| {
            procfs::netclass::parse_into(b, &mut Vec::new())
        }),
        ("@filesystem", |b| {
            procfs::filesystem::parse_into(b, &mut Vec::new())
        }),
        ("@time", |b| {
            procfs::time::parse_time(b, &mut Default::default())
        }),
        ("@timex", |b| procfs::time::parse_timex(b).map(drop)),
        ("@os", |b| {
            procfs::os_release::parse_into(b, &mut Default::default())
        }),
        ("@selinux", |b| procfs::selinux::parse(b).map(drop)),
        ("@udp_queues", |b| {
            procfs::netmisc::parse_udp_queues(b).map(drop)
        }),
        ("@udev", |b| procfs::udev::parse_into(b, &mut Vec::new())),
        ("@cpufreq", |b| {
            procfs::hardware::parse_cpufreq(b, &mut Vec::new())
        }),
        ("@numa", |b| procfs::numa::parse_into(b, &mut Vec::new())),
        ("@hwmon", |b| procfs::hwmon::parse_into(b, &mut Vec::new())),
        ("@dmi", |b| {
            procfs::hardware::parse_dmi(b, &mut Default::default())
        }),
        ("@bonding", |b| {
            procfs::hardware::parse_bonding(b, &mut Vec::new())
        }),
        ("@thermal_zone", |b| {
            procfs::hardware::parse_thermal(b, &mut Default::default())
        }),
        ("@textfile", |b| {
            procfs::textfile::parse_into(b, &mut Default::default())
        }),
        ("@conntrack", |b| {
            procfs::netmisc::parse_conntrack(b).map(drop)
        }),
        ("@qdisc", |b| procfs::qdisc::parse_into(b, &mut Vec::new())),
        ("@ethtool", |b| {
            procfs::ethtool::parse_into(b, &mut Vec::new())
        }),
        ("@systemd", |b| {
            procfs::systemd::parse_into(b, &mut Default::default())
        }),
        ("@wifi", |b| procfs::wifi::parse_into(b, &mut Vec::new())),
        ("@thermal_throttle", |b| {
            procfs::hardware::parse_throttles(b, &mut Default::default())
        }),
        ("@cpu_isolated", |b| {
            procfs::cpu::parse_list_into(b, &mut Default::default())
        }),
        ("self/stat", |b| procfs::pid::parse_stat(b).map(drop)),
        ("self/status", |b| {
            procfs::pid::parse_status_ctxsw(b).map(drop)
        }),
        ("self/io", |b| procfs::pid::parse_io(b).map(drop)),
        ("self/schedstat", |b| {
            procfs::pid::parse_schedstat(b).map(drop)
        }),
        ("self/oom_score_adj", |b| {
            procfs::pid::parse_oom_score_adj(b).map(drop)
        }),
        ("self/cgroup", |b| procfs::pid::parse_cgroup_v2(b).map(drop)),
        ("cmdline", |b| {
            procfs::cpu::parse_cmdline(&String::from_utf8_lossy(b)).map(drop)
        }),
    ]
}

const WIFI_TEXT: &[u8] = b"@wlan0 2 2412\nbss 00:11:22:33:44:55 1 4578616d706c65\n\
station aa:bb:cc:dd:ee:ff 30000000000 400000000 128000000 164000000 -52 10 2 1 0 0 0 0\n@wlan1 3 0\n";

const SYSTEMD_TEXT: &[u8] = b"at 1795970945735703000\nversion 252.38-1~deb12u1\nvirtualization kvm\n\
system_state degraded\nunit dev-sda.device loaded active plugged\n\
unit+ cron.service loaded active running type=simple restarts=0 start_us=1795970945735703 tasks=1 tasks_max=4915\n\
unit+ echo.socket loaded active listening accepted=2 connections=0 refused=0\n\
unit+ tick.timer loaded active waiting last_trigger_us=1795970946735703\n";

/// A D-Bus reply as a bus sends one: header (reply serial, signature)
/// then `body`.
fn dbus_reply(sig: &[u8], body: &[u8]) -> Vec<u8> {
    let mut m = vec![b'l', 2, 1, 1];
    m.extend_from_slice(&(body.len() as u32).to_le_bytes());
    m.extend_from_slice(&9u32.to_le_bytes());
    let mut fields = vec![5, 1, b'u', 0];
    fields.extend_from_slice(&1u32.to_le_bytes());
    fields.extend_from_slice(&[8, 1, b'g', 0, sig.len() as u8]);
    fields.extend_from_slice(sig);
    fields.push(0);
    m.extend_from_slice(&(fields.len() as u32).to_le_bytes());
    m.extend_from_slice(&fields);
    while !m.len().is_multiple_of(8) {
        m.push(0);
    }
    m.extend_from_slice(body);
    m
}

fn seeds() -> Vec<(usize, Vec<u8>)> {
    let mut out = Vec::new();
    for (i, (name, _)) in parsers().iter().enumerate() {
        for tree in ["this-machine", "linux-2.6.32", "linux-future"] {
            let (proc_root, sys_root) = fixtures::roots(tree);
            if let Some(source) = name.strip_prefix('@') {
                let mut r = procfs::Reader::new(proc_root, sys_root);
                let dir = fixtures::dir().join(tree);
                r.set_gather_options(procfs::GatherOptions {
                    rootfs: dir.join("rootfs"),
                    textfile_directory: Some(dir.join("textfile")),
                    udev_data: dir.join("rootfs/run/udev/data"),
                    ..Default::default()
                });
                let source = procfs::Source::from_name(source).unwrap();
                if let Ok(b) = r.read_raw(source) {
                    out.push((i, b.to_vec()));
                }
            } else if let Ok(b) = std::fs::read(proc_root.join(name)) {
                out.push((i, b));
            }
        }
        // systemd's units come from a bus, not a tree: a text as the
        // gatherer writes it.
        if *name == "@systemd" {
            out.push((i, SYSTEMD_TEXT.to_vec()));
        }
        // Nor wifi's, from nl80211.
        if *name == "@wifi" {
            out.push((i, WIFI_TEXT.to_vec()));
        }
        // Per-process files: seeded from the live /proc.
        if name.starts_with("self/")
            && let Ok(b) = std::fs::read(std::path::Path::new("/proc").join(name))
        {
            out.push((i, b));
        }
    }
    out
}

fn check(parser: usize, bytes: &[u8]) {
    let (_, f) = parsers()[parser];
    if let Err(e) = f(bytes) {
        let lines = bytes.iter().filter(|&&b| b == b'\n').count() as u32 + 1;
        assert!(e.line >= 1 && e.line <= lines, "line {} of {lines}", e.line);
        assert!(!e.to_string().is_empty());
    }
}

#[derive(Debug, Clone)]
enum Mutation {
    Flip(usize, u8),
    Cut(usize),
    Insert(usize, Vec<u8>),
    Dup(usize, usize),
}

fn mutate(mut b: Vec<u8>, muts: &[Mutation]) -> Vec<u8> {
    for m in muts {
        if b.is_empty() {
            break;
        }
        match m {
            Mutation::Flip(i, v) => {
                let i = i % b.len();
                b[i] = *v;
            }
            Mutation::Cut(i) => b.truncate(i % b.len()),
            Mutation::Insert(i, bytes) => {
                let i = i % b.len();
                b.splice(i..i, bytes.iter().copied());
            }
            Mutation::Dup(i, n) => {
                let i = i % b.len();
                let end = (i + n).min(b.len());
                let chunk = b[i..end].to_vec();
                b.splice(i..i, chunk);
            }
        }
    }
    b
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let interesting = prop_oneof![
        Just(b'\n'),
        Just(b' '),
        Just(b'\0'),
        Just(b':'),
        Just(b'-'),
        Just(b'9'),
        Just(b'.'),
        Just(b'='),
        any::<u8>()
    ];
    prop_oneof![
        (any::<usize>(), interesting).prop_map(|(i, v)| Mutation::Flip(i, v)),
        any::<usize>().prop_map(Mutation::Cut),
        (any::<usize>(), prop::collection::vec(any::<u8>(), 0..40))
            .prop_map(|(i, b)| Mutation::Insert(i, b)),
        (any::<usize>(), 0usize..4096).prop_map(|(i, n)| Mutation::Dup(i, n)),
        (any::<usize>(), Just(b"99999999999999999999999".to_vec()))
            .prop_map(|(i, b)| Mutation::Insert(i, b)),
    ]
}

/// The fixture trees' files of the sources whose lines stand alone, with
/// each source's header count.
fn standalone_seeds() -> Vec<(procfs::Source, u32, Vec<u8>)> {
    let mut out = Vec::new();
    for tree in ["this-machine", "linux-2.6.32", "linux-future"] {
        let (proc_root, sys_root) = fixtures::roots(tree);
        let mut r = procfs::Reader::new(proc_root, sys_root);
        for source in procfs::Source::ALL {
            let Some(headers) = source.info().rows_after else {
                continue;
            };
            if let Ok(b) = r.read_raw(source) {
                out.push((source, headers, b.to_vec()));
            }
        }
    }
    out
}

/// `bytes` parsed as `source` by the reader's rule: the data as JSON, the
/// lines left out, or the error.
fn read_as(
    source: procfs::Source,
    bytes: &[u8],
) -> Result<(String, procfs::Skipped), procfs::ParseError> {
    let mut s = procfs::SystemSample::default();
    s.parse_source_skipping(source, bytes, &mut Vec::new())?;
    let data = serde_json::to_string(&procfs::SourceData(&s, source)).unwrap();
    Ok((data, s.skipped[source as usize]))
}

/// A line of `line` bytes starting with a control byte (no format here
/// takes one) inserted after line `after` of `bytes`.
fn with_line(bytes: &[u8], after: usize, line: &[u8]) -> Vec<u8> {
    let mut at = 0;
    for _ in 0..after {
        match bytes[at..].iter().position(|&b| b == b'\n') {
            Some(off) => at += off + 1,
            None => break,
        }
    }
    let mut out = bytes[..at].to_vec();
    out.push(0x01);
    out.extend(line.iter().map(|&b| if b == b'\n' { b' ' } else { b }));
    out.push(b'\n');
    out.extend_from_slice(&bytes[at..]);
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

    /// A bad line inserted past a file's headers, where lines stand alone:
    /// the read still succeeds; when the line was left out, at the line it
    /// was put, the data is the clean file's. Without its final newline the
    /// file reads as the clean one.
    #[test]
    fn a_bad_line_where_lines_stand_alone_leaves_the_rest_as_it_was(
        seed in any::<prop::sample::Index>(),
        after in any::<prop::sample::Index>(),
        line in prop::collection::vec(any::<u8>(), 0..60),
    ) {
        static SEEDS: std::sync::OnceLock<Vec<(procfs::Source, u32, Vec<u8>)>> =
            std::sync::OnceLock::new();
        let seeds = SEEDS.get_or_init(standalone_seeds);
        let (source, headers, clean) = &seeds[seed.index(seeds.len())];
        let want = read_as(*source, clean).expect("a fixture parses");
        let lines = clean.iter().filter(|&&b| b == b'\n').count();
        let after = *headers as usize + after.index(lines - *headers as usize + 1);
        let bad = with_line(clean, after, &line);
        let got = read_as(*source, &bad);
        prop_assert!(got.is_ok(), "{:?} after line {}: {:?}", source, after, got);
        let (data, skipped) = got.unwrap();
        if skipped.lines == 1 {
            prop_assert_eq!(skipped.first.unwrap().line as usize, after + 1);
            prop_assert_eq!(&data, &want.0, "{:?}", source);
        }
        let cut = clean.strip_suffix(b"\n").unwrap_or(clean);
        prop_assert_eq!(read_as(*source, cut).map(|r| r.0), Ok(want.0));
    }

    #[test]
    fn arbitrary_bytes_never_panic(parser in any::<prop::sample::Index>(), bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        check(parser.index(parsers().len()), &bytes);
    }

    /// D-Bus messages of any signature and body (the systemd source's
    /// replies): an error or values, never a panic.
    #[test]
    fn dbus_replies_never_panic(
        sig in prop::collection::vec(prop::sample::select(b"ybnqiuxtdsogvah(){}".to_vec()), 0..12),
        body in prop::collection::vec(any::<u8>(), 0..256),
        cut in any::<prop::sample::Index>(),
    ) {
        let m = dbus_reply(&sig, &body);
        let _ = sys::dbus::decode_whole(&m);
        let _ = sys::dbus::decode_whole(&m[..cut.index(m.len() + 1)]);
        let _ = sys::dbus::decode(&sig, &body, false);
        let _ = sys::dbus::decode(&sig, &body, true);
    }

    /// The word-at-a-time name decoder agrees with the byte loop, for any
    /// 16 bytes (NULs anywhere, old bytes after the first NUL).
    #[test]
    fn task_comm_decoder_matches_the_byte_loop(raw in any::<[u8; 16]>(), nul in 0usize..20) {
        let mut raw = raw;
        if nul < 16 {
            raw[nul] = 0;
        }
        prop_assert_eq!(procfs::pid::Comm::from_task_comm(&raw), procfs::pid::Comm::new(&raw));
    }

    #[test]
    fn mutated_real_files_never_panic(seed in any::<prop::sample::Index>(), muts in prop::collection::vec(mutation(), 1..6)) {
        static SEEDS: std::sync::OnceLock<Vec<(usize, Vec<u8>)>> = std::sync::OnceLock::new();
        let seeds = SEEDS.get_or_init(seeds);
        let (parser, bytes) = &seeds[seed.index(seeds.len())];
        check(*parser, &mutate(bytes.clone(), &muts));
    }
}
