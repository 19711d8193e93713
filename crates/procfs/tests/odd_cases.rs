//! Odd inputs built in temp dirs: bad content must give a typed error naming
//! the file, line and field; a bad source never spoils the others.

use procfs::{Error, ParseErrorKind, Reader, Source, SourceStatus, SystemSample};

fn reader(t: &fixtures::Tree) -> Reader {
    Reader::new(t.proc_root(), t.sys_root())
}

fn parse_err(e: Error) -> (String, procfs::ParseError) {
    match e {
        Error::Parse { path, source } => (path.display().to_string(), source),
        other => panic!("expected a parse error, got {other}"),
    }
}

#[test]
fn missing_file_is_not_found() {
    let t = fixtures::Tree::empty();
    let e = reader(&t)
        .read_with(Source::Stat, procfs::stat::parse)
        .unwrap_err();
    assert!(e.is_not_found(), "{e}");
    assert!(e.to_string().contains("stat: not found"), "{e}");
}

#[test]
fn truncated_stat_names_file_and_line() {
    let t = fixtures::Tree::copy_of("this-machine");
    let full = std::fs::read(t.proc_root().join("stat")).unwrap();
    t.proc_file("stat", &full[..full.len() / 2]);
    let (path, e) = parse_err(
        reader(&t)
            .read_with(Source::Stat, procfs::stat::parse)
            .unwrap_err(),
    );
    assert!(path.ends_with("proc/stat"));
    // The cut line is short of fields (or of the lines after it): named,
    // never guessed.
    assert!(
        matches!(e.kind, ParseErrorKind::Missing | ParseErrorKind::Invalid),
        "{e}"
    );
    assert!(e.line >= 4);
}

/// A tree copied without each file's final newline reads as the kernel's.
#[test]
fn files_without_their_final_newline_read_whole() {
    let t = fixtures::Tree::copy_of("this-machine");
    let sources = [
        Source::Stat,
        Source::PressureCpu,
        Source::Softnet,
        Source::Meminfo,
        Source::Loadavg,
    ];
    let mut with = SystemSample::default();
    reader(&t).read_sample(&sources, &mut with);
    for f in [
        "stat",
        "pressure/cpu",
        "net/softnet_stat",
        "meminfo",
        "loadavg",
    ] {
        let p = t.proc_root().join(f);
        let Ok(b) = std::fs::read(&p) else { continue };
        if b.ends_with(b"\n") {
            t.proc_file(f, &b[..b.len() - 1]);
        }
    }
    let mut without = SystemSample::default();
    reader(&t).read_sample(&sources, &mut without);
    for s in sources {
        assert_eq!(with.ok(s), without.ok(s), "{s:?}");
    }
    assert!(without.ok(Source::Stat) && without.ok(Source::Meminfo));
    assert_eq!(with.stat, without.stat);
    assert_eq!(with.meminfo, without.meminfo);
}

#[test]
fn nul_bytes_are_invalid_not_a_panic() {
    let t = fixtures::Tree::empty();
    t.proc_file("meminfo", b"MemTotal: 1\0 kB\n");
    let (_, e) = parse_err(
        reader(&t)
            .read_with(Source::Meminfo, procfs::meminfo::parse)
            .unwrap_err(),
    );
    assert_eq!(
        (e.line, e.field, e.kind),
        (1, "value", ParseErrorKind::Invalid)
    );
}

#[test]
fn garbage_bytes_name_the_field() {
    let t = fixtures::Tree::empty();
    t.proc_file("loadavg", b"\xff\xfe garbage\n");
    let err = reader(&t)
        .read_with(Source::Loadavg, procfs::loadavg::parse)
        .unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("loadavg") && msg.contains("line 1") && msg.contains("load1"),
        "{msg}"
    );
}

#[test]
fn line_of_several_megabytes_is_bounded() {
    // A 4 MiB `intr` line holds 2^21 counts, twice the parser's bound.
    let t = fixtures::Tree::empty();
    let mut s = b"cpu  1 2 3 4\nintr 5".to_vec();
    s.extend(std::iter::repeat_n(b" 1".as_slice(), 2 << 20).flatten());
    s.extend_from_slice(b"\nctxt 1\nbtime 2\nprocesses 3\n");
    t.proc_file("stat", &s);
    let (_, e) = parse_err(
        reader(&t)
            .read_with(Source::Stat, procfs::stat::parse)
            .unwrap_err(),
    );
    assert_eq!(
        (e.line, e.field, e.kind),
        (2, "intr", ParseErrorKind::TooMany)
    );
}

#[test]
fn long_garbage_line_in_meminfo() {
    let t = fixtures::Tree::empty();
    let mut s = b"MemTotal: ".to_vec();
    s.extend(std::iter::repeat_n(b'9', 3 << 20));
    s.extend_from_slice(b" kB\n");
    t.proc_file("meminfo", &s);
    let (_, e) = parse_err(
        reader(&t)
            .read_with(Source::Meminfo, procfs::meminfo::parse)
            .unwrap_err(),
    );
    assert_eq!((e.field, e.kind), ("value", ParseErrorKind::Overflow));
}

#[test]
fn file_above_size_limit() {
    let t = fixtures::Tree::empty();
    t.proc_file("vmstat", vec![b'a'; 300 << 10]);
    let mut r = reader(&t);
    r.set_max_file_bytes(128 << 10);
    let e = r.read_raw(Source::Vmstat).unwrap_err();
    assert!(
        matches!(e, Error::TooLarge { limit, .. } if limit == 128 << 10),
        "{e}"
    );
}

#[test]
fn one_bad_source_does_not_spoil_the_sample() {
    let t = fixtures::Tree::copy_of("this-machine");
    t.proc_file("loadavg", b"nonsense\n");
    t.remove_proc("pressure");
    let mut s = SystemSample::default();
    reader(&t).read_sample(&Source::ALL, &mut s);
    assert!(s.ok(Source::Stat) && s.ok(Source::Meminfo) && s.ok(Source::Interrupts));
    assert!(
        matches!(&s.status[Source::Loadavg as usize], SourceStatus::Failed(m) if m.contains("loadavg") && m.contains("load1"))
    );
    assert_eq!(
        s.status[Source::PressureCpu as usize],
        SourceStatus::Missing
    );
}

#[test]
fn comm_like_text_in_interrupt_description() {
    let t = fixtures::Tree::empty();
    t.proc_file(
        "interrupts",
        b"     CPU0\n 30:    7  PCI-MSI 1-edge  dev ) (weird: name\n",
    );
    let ints = reader(&t)
        .read_with(Source::Interrupts, procfs::interrupts::parse)
        .unwrap();
    assert_eq!(
        ints.row(0).unwrap().description,
        "PCI-MSI 1-edge  dev ) (weird: name"
    );
}

#[test]
fn empty_sysfs_files_mean_no_cpus() {
    let t = fixtures::Tree::empty();
    t.sys_file("devices/system/cpu/online", "0-3\n")
        .sys_file("devices/system/cpu/possible", "0-7\n")
        .sys_file("devices/system/cpu/present", "0-3\n")
        .sys_file("devices/system/cpu/nohz_full", "(null)\n")
        .proc_file("cmdline", "nohz_full=3 isolcpus=2\n");
    let topo = reader(&t).read_topology();
    assert_eq!(topo.nohz_full.as_ref().map(|l| l.len()), Some(0));
    assert_eq!(topo.housekeeping().to_string(), "0-1");
    assert_eq!(topo.possible.len(), 8);
}

#[test]
fn bad_cpulist_is_noted_naming_the_sysfs_file_and_the_others_stand_in() {
    let t = fixtures::Tree::empty();
    t.sys_file("devices/system/cpu/online", "0-x\n")
        .sys_file("devices/system/cpu/present", "0-3\n");
    let topo = reader(&t).read_topology();
    let e = topo.notes.join("\n");
    assert!(
        e.contains("devices/system/cpu/online") && e.contains("cpulist"),
        "{e}"
    );
    assert_eq!(topo.online.to_string(), "0-3");
    assert_eq!(topo.possible.to_string(), "0-3");
}

#[test]
fn without_sysfs_cpu_lists_the_cpu_rows_of_proc_stat_give_the_topology() {
    let t = fixtures::Tree::copy_of("this-machine");
    for f in ["online", "possible", "present", "isolated"] {
        std::fs::remove_file(t.sys_root().join("devices/system/cpu").join(f)).unwrap();
    }
    let topo = reader(&t).read_topology();
    assert_eq!(topo.online.to_string(), "0-1");
    assert_eq!(topo.possible.to_string(), "0-1");
    assert!(
        topo.notes.iter().any(|n| n.contains("/proc/stat")),
        "{:?}",
        topo.notes
    );
    assert_eq!(topo.housekeeping().to_string(), "0-1");
    // Nothing at all: an empty topology, said so, no error.
    let topo = reader(&fixtures::Tree::empty()).read_topology();
    assert!(topo.online.is_empty());
    assert!(
        topo.notes.iter().any(|n| n.contains("unknown")),
        "{:?}",
        topo.notes
    );
}

/// Reads `sources` of `t`; the sample.
fn sample_of(t: &fixtures::Tree, sources: &[Source]) -> SystemSample {
    let mut s = SystemSample::default();
    reader(t).read_sample(sources, &mut s);
    s
}

/// Lines that stand alone: a bad one is left out, counted, and the rest
/// served with the values the file holds; the bad one's values are absent.
#[test]
fn a_bad_line_costs_that_line_where_lines_stand_alone() {
    use procfs::meminfo::MemKey;
    let t = fixtures::Tree::empty();
    t.proc_file(
        "meminfo",
        "MemTotal:       1000 kB\nMemFree:        x12 kB\nBuffers:          20 kB\n",
    );
    t.proc_file(
        "stat",
        "cpu  10 0 20 300 0 0 0 0 0 0\ncpu0 5 0 10 150 0 0 0 0 0 0\ncpu1 5 0 1O 150 0 0 0 0 0 0\n\
         intr 7\nctxt 42\nbtime 1700000000\nprocesses 9\n",
    );
    t.proc_file(
        "net/dev",
        "Inter-|   Receive\n face |bytes\n  eth0: 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16\n\
         \x20 eth1: 1 2 three\n",
    );
    t.proc_file(
        "pressure/io",
        "some avg10=0.00 avg60=0.00 avg300=0.00 total=-5\nfull avg10=1.50 avg60=0.00 avg300=0.00 total=77\n",
    );
    let s = sample_of(
        &t,
        &[
            Source::Meminfo,
            Source::Stat,
            Source::NetDev,
            Source::PressureIo,
        ],
    );
    for src in [
        Source::Meminfo,
        Source::Stat,
        Source::NetDev,
        Source::PressureIo,
    ] {
        assert!(s.ok(src), "{src:?}: {:?}", s.status[src as usize]);
        let k = s.skipped[src as usize];
        assert_eq!(k.lines, 1, "{src:?}");
        let w = s.warnings(src);
        assert!(
            w[0].contains(src.name()) && w[0].contains("left out"),
            "{w:?}"
        );
    }
    assert_eq!(s.meminfo.get(MemKey::MemTotal), Some(1000 * 1024));
    assert_eq!(s.meminfo.get(MemKey::Buffers), Some(20 * 1024));
    assert_eq!(s.meminfo.get(MemKey::MemFree), None);
    let first = s.skipped[Source::Meminfo as usize].first.unwrap();
    assert_eq!((first.line, first.field), (2, "value"));
    assert_eq!(
        s.stat.cpus.iter().map(|c| c.cpu).collect::<Vec<_>>(),
        [0],
        "cpu1's line left out"
    );
    assert_eq!(s.stat.ctxt, 42);
    assert_eq!(s.skipped[Source::Stat as usize].first.unwrap().line, 3);
    assert_eq!(
        s.net_dev
            .iter()
            .map(|d| d.name.as_str())
            .collect::<Vec<_>>(),
        ["eth0"]
    );
    assert_eq!(s.net_dev[0].rx_bytes, 1);
    let p = s.pressure[procfs::pressure::Resource::Io as usize];
    assert!(p.some.is_none());
    assert_eq!(p.full.unwrap().total_usec, 77);
    // A clean read says nothing.
    t.proc_file("meminfo", "MemTotal: 1000 kB\n");
    let s = sample_of(&t, &[Source::Meminfo]);
    assert_eq!(
        s.skipped[Source::Meminfo as usize],
        procfs::Skipped::default()
    );
    assert!(s.warnings(Source::Meminfo).is_empty());
}

/// Where a line's place carries meaning, where a header is bad, where
/// nothing would be left or too much is bad, or where a required line is
/// bad, the read fails with its first error.
#[test]
fn a_bad_line_fails_the_read_where_it_cannot_be_left_out() {
    let t = fixtures::Tree::empty();
    // softnet_stat: the line's place is its CPU.
    t.proc_file(
        "net/softnet_stat",
        "00000001 00000000 00000000\nzz 00000000 00000000\n00000003 00000000 00000000\n",
    );
    // interrupts' header (its columns name the CPUs).
    t.proc_file("interrupts", "  CPU0 CPUx\n  0: 1 2 IO-APIC timer\n");
    // Every line bad.
    t.proc_file("vmstat", "a\nb\n");
    // stat's cpu line is required.
    t.proc_file(
        "stat",
        "cpu  1O 0 20 300 0 0 0 0 0 0\nintr 7\nctxt 42\nbtime 1700000000\nprocesses 9\n",
    );
    let srcs = [
        Source::Softnet,
        Source::Interrupts,
        Source::Vmstat,
        Source::Stat,
    ];
    let s = sample_of(&t, &srcs);
    for (src, line) in [
        (Source::Softnet, 2),
        (Source::Interrupts, 1),
        (Source::Vmstat, 1),
        (Source::Stat, 1),
    ] {
        let SourceStatus::Failed(m) = &s.status[src as usize] else {
            panic!("{src:?}: {:?}", s.status[src as usize]);
        };
        assert!(m.contains(&format!("line {line}:")), "{src:?}: {m}");
        assert_eq!(s.skipped[src as usize].lines, 0, "{src:?}");
    }
    // MAX_SKIPPED bad lines are left out; one more fails the read.
    for bad in [procfs::MAX_SKIPPED, procfs::MAX_SKIPPED + 1] {
        let mut v = String::from("nr_free_pages 5\n");
        for i in 0..bad {
            v.push_str(&format!("nr_bad{i} -1\n"));
        }
        v.push_str("pgfault 9\n");
        t.proc_file("vmstat", v);
        let s = sample_of(&t, &[Source::Vmstat]);
        assert_eq!(s.ok(Source::Vmstat), bad == procfs::MAX_SKIPPED, "{bad}");
        if s.ok(Source::Vmstat) {
            assert_eq!(s.skipped[Source::Vmstat as usize].lines, bad);
            assert_eq!(s.vmstat.all().get("pgfault"), Some(9));
        }
    }
}

/// The current frequency of an isolated or nohz_full CPU is asked of that
/// CPU (an IPI): those files are never opened unless the option says so;
/// the CPU's other cpufreq figures are read.
#[test]
fn the_current_frequency_of_quiet_cpus_is_not_asked_for() {
    let t = fixtures::Tree::empty();
    t.sys_file("devices/system/cpu/online", "0-3\n")
        .sys_file("devices/system/cpu/isolated", "2\n")
        .sys_file("devices/system/cpu/nohz_full", "3\n");
    for cpu in 0..4 {
        for (file, v) in [
            ("cpuinfo_cur_freq", "1000000"),
            ("scaling_cur_freq", "1100000"),
            ("scaling_min_freq", "800000"),
            ("scaling_max_freq", "3600000"),
            ("scaling_governor", "powersave"),
        ] {
            t.sys_file(
                &format!("devices/system/cpu/cpu{cpu}/cpufreq/{file}"),
                format!("{v}\n"),
            );
        }
    }
    let read = |all: bool| {
        let mut r = reader(&t);
        r.set_gather_options(procfs::GatherOptions {
            cur_freq_on_quiet_cpus: all,
            sensors_on_quiet_cpus: all,
            ..Default::default()
        });
        r.trace_opens(true);
        let mut s = SystemSample::default();
        r.read_sample(&[Source::Cpufreq], &mut s);
        assert!(
            s.ok(Source::Cpufreq),
            "{:?}",
            s.status[Source::Cpufreq as usize]
        );
        let opened: Vec<String> = r
            .opened()
            .iter()
            .filter_map(|p| {
                p.to_str()?
                    .split("devices/system/cpu/")
                    .nth(1)
                    .map(String::from)
            })
            .filter(|p| p.ends_with("cur_freq"))
            .collect();
        (s.cpufreq, opened)
    };
    let (freqs, opened) = read(false);
    let cur = |cpu: u32| {
        let c = freqs.iter().find(|c| c.cpu == cpu).unwrap();
        (c.cpuinfo_cur_khz, c.scaling_cur_khz, c.scaling_max_khz)
    };
    assert_eq!(cur(0), (Some(1000000), Some(1100000), Some(3600000)));
    assert_eq!(cur(1), (Some(1000000), Some(1100000), Some(3600000)));
    assert_eq!(cur(2), (None, None, Some(3600000)));
    assert_eq!(cur(3), (None, None, Some(3600000)));
    assert_eq!(
        opened,
        [
            "cpu0/cpufreq/cpuinfo_cur_freq",
            "cpu0/cpufreq/scaling_cur_freq",
            "cpu1/cpufreq/cpuinfo_cur_freq",
            "cpu1/cpufreq/scaling_cur_freq",
        ]
    );
    let (freqs, opened) = read(true);
    assert_eq!(opened.len(), 8, "{opened:?}");
    assert!(freqs.iter().all(|c| c.scaling_cur_khz == Some(1100000)));
}

/// coretemp reads a core's sensors on that core and a package's on the
/// package's first CPU (`rdmsr_on_cpu`, an IPI); x86_pkg_temp zones read
/// on one of the package's CPUs too. On a two-package machine with CPU 2
/// (package 0, core 2) isolated and CPU 4 (package 1's first CPU)
/// nohz_full: package 0's core 2 is left unread while package 1's core 2
/// is read (the zone mapping), package 1's package sensor and the
/// x86_pkg_temp zone are left unread, and every label is read. With the
/// option, everything is.
#[test]
fn sensors_read_on_quiet_cpus_are_not_opened() {
    let t = fixtures::Tree::empty();
    t.sys_file("devices/system/cpu/online", "0-7\n")
        .sys_file("devices/system/cpu/isolated", "2\n")
        .sys_file("devices/system/cpu/nohz_full", "4\n");
    for cpu in 0..8u32 {
        let topo = format!("devices/system/cpu/cpu{cpu}/topology");
        t.sys_file(
            &format!("{topo}/physical_package_id"),
            format!("{}\n", cpu / 4),
        )
        .sys_file(&format!("{topo}/die_id"), "0\n")
        .sys_file(&format!("{topo}/core_id"), format!("{}\n", cpu % 4));
    }
    for zone in 0..2u32 {
        let dev = format!("devices/platform/coretemp.{zone}");
        let hw = format!("{dev}/hwmon/hwmon{zone}");
        t.sys_file(&format!("{hw}/name"), "coretemp\n")
            .sys_file(&format!("{hw}/temp1_label"), format!("Package id {zone}\n"))
            .sys_file(&format!("{hw}/temp1_input"), "50000\n")
            .sys_file(&format!("{hw}/temp1_crit"), "100000\n");
        // The driver's indices need not follow the core ids.
        for (index, core) in [(2, 0), (3, 1), (4, 3), (5, 2)] {
            t.sys_file(&format!("{hw}/temp{index}_label"), format!("Core {core}\n"))
                .sys_file(&format!("{hw}/temp{index}_input"), "40000\n")
                .sys_file(&format!("{hw}/temp{index}_crit_alarm"), "0\n");
        }
        let class = t.sys_root().join("class/hwmon");
        std::fs::create_dir_all(&class).unwrap();
        std::os::unix::fs::symlink(t.sys_root().join(&hw), class.join(format!("hwmon{zone}")))
            .unwrap();
        std::os::unix::fs::symlink(
            t.sys_root().join(&dev),
            t.sys_root().join(&hw).join("device"),
        )
        .unwrap();
    }
    t.sys_file("class/thermal/thermal_zone0/type", "x86_pkg_temp\n")
        .sys_file("class/thermal/thermal_zone0/temp", "51000\n")
        .sys_file("class/thermal/thermal_zone1/type", "acpitz\n")
        .sys_file("class/thermal/thermal_zone1/temp", "30000\n");
    let read = |all: bool| {
        let mut r = reader(&t);
        r.set_gather_options(procfs::GatherOptions {
            sensors_on_quiet_cpus: all,
            ..Default::default()
        });
        r.trace_opens(true);
        let mut s = SystemSample::default();
        r.read_sample(&[Source::Hwmon, Source::ThermalZone], &mut s);
        assert!(s.ok(Source::Hwmon) && s.ok(Source::ThermalZone));
        let mut opened: Vec<String> = r
            .opened()
            .iter()
            .filter_map(|p| {
                let p = p.to_str()?;
                let zone = p
                    .split("hwmon/hwmon")
                    .nth(1)
                    .or(p.split("thermal/").nth(1))?;
                (!zone.ends_with("/name") && !zone.ends_with("/type")).then(|| zone.to_string())
            })
            .collect();
        opened.sort();
        // Each file is opened once (the labels read to decide are not
        // read again).
        let all = opened.len();
        opened.dedup();
        assert_eq!(all, opened.len(), "a file opened twice: {opened:?}");
        opened
    };
    let quiet = read(false);
    let unread = [
        "0/temp5_input", // package 0, core 2: CPU 2
        "0/temp5_crit_alarm",
        "1/temp1_input", // package 1's sensor: CPU 4
        "1/temp1_crit",
        "1/temp2_input", // package 1, core 0: CPU 4
        "1/temp2_crit_alarm",
        "thermal_zone0/temp", // x86_pkg_temp
    ];
    for f in unread {
        assert!(!quiet.contains(&f.to_string()), "{f} opened: {quiet:?}");
    }
    for f in [
        "0/temp1_input", // package 0's sensor: CPU 0
        "0/temp2_input", // package 0, core 0
        "1/temp5_input", // package 1, core 2: CPU 6
        "0/temp5_label",
        "1/temp1_label",
        "1/temp2_label",
        "thermal_zone1/temp",
    ] {
        assert!(quiet.contains(&f.to_string()), "{f} not opened: {quiet:?}");
    }
    let all = read(true);
    for f in unread {
        assert!(
            all.contains(&f.to_string()),
            "{f} not opened with the option: {all:?}"
        );
    }
    assert_eq!(all.len(), quiet.len() + unread.len(), "{all:?}\n{quiet:?}");
}

/// Chips named as node_exporter names them: by their device's bus and
/// name; two chips of one device told apart by their `name` files, and by
/// their directories where those are the same too; a chip without a
/// device by its `name` file.
#[test]
fn hwmon_chips_sharing_a_device_get_names_of_their_own() {
    let t = fixtures::Tree::empty();
    let chips = [
        ("hwmon0", Some("devices/platform/asus-nb-wmi"), "asus"),
        (
            "hwmon1",
            Some("devices/platform/asus-nb-wmi"),
            "asus_wmi_sensors",
        ),
        ("hwmon2", Some("devices/platform/nct6775.656"), "nct6779"),
        ("hwmon3", Some("devices/platform/nct6775.656"), "nct6779"),
        ("hwmon4", None, "amdgpu"),
    ];
    let class = t.sys_root().join("class/hwmon");
    std::fs::create_dir_all(&class).unwrap();
    for (dir, device, name) in chips {
        let hw = match device {
            Some(d) => format!("{d}/hwmon/{dir}"),
            None => format!("devices/virtual/hwmon/{dir}"),
        };
        t.sys_file(&format!("{hw}/name"), format!("{name}\n"))
            .sys_file(&format!("{hw}/temp1_input"), "40000\n");
        if let Some(d) = device {
            std::os::unix::fs::symlink(t.sys_root().join(d), t.sys_root().join(&hw).join("device"))
                .unwrap();
        }
        std::os::unix::fs::symlink(t.sys_root().join(&hw), class.join(dir)).unwrap();
    }
    let mut s = SystemSample::default();
    reader(&t).read_sample(&[Source::Hwmon], &mut s);
    assert!(s.ok(Source::Hwmon));
    let names: Vec<(&str, &str)> = s
        .hwmon
        .iter()
        .map(|c| (c.chip.as_str(), c.chip_name.as_str()))
        .collect();
    assert_eq!(
        names,
        [
            ("platform_asus_nb_wmi_asus", "asus"),
            ("platform_asus_nb_wmi_asus_wmi_sensors", "asus_wmi_sensors"),
            ("platform_nct6775_656_hwmon2", "nct6779"),
            ("platform_nct6775_656_hwmon3", "nct6779"),
            ("amdgpu", "amdgpu"),
        ]
    );
}
