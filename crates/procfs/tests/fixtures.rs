//! Every reader against the committed fixture trees: exact values, format
//! variants, and cross-file consistency of the generated big machines.

use procfs::meminfo::MemKey;
use procfs::pressure::Resource;
use procfs::stat::CpuMode;
use procfs::vmstat::VmKey;
use procfs::{GatherOptions, Reader, Source, SourceStatus, SystemSample};

fn sample_of(tree: &str) -> (Reader, SystemSample) {
    let (proc_root, sys_root) = fixtures::roots(tree);
    let mut r = Reader::new(proc_root, sys_root);
    let dir = fixtures::dir().join(tree);
    r.set_gather_options(GatherOptions {
        rootfs: dir.join("rootfs"),
        textfile_directory: Some(dir.join("textfile")),
        udev_data: dir.join("rootfs/run/udev/data"),
        // A bus is not a file a tree holds: none there, so the systemd
        // source is missing (crates/cli/tests/systemd.rs reads a real one).
        systemd: procfs::SystemdOptions {
            address: format!(
                "unix:path={}",
                dir.join("rootfs/run/dbus/system_bus_socket").display()
            ),
            ..Default::default()
        },
        ..GatherOptions::default()
    });
    let mut s = SystemSample::default();
    r.read_sample(&Source::ALL, &mut s);
    (r, s)
}

#[test]
fn this_machine_exact_values() {
    let (mut r, s) = sample_of("this-machine");
    for source in Source::ALL {
        // This VM has no udev (no /run/udev/data), and no thermal zone (an
        // empty /sys/class/thermal, which the capture cannot keep).
        let expected = if matches!(
            source,
            Source::PressureIrq
                | Source::Schedstat
                | Source::Udev
                | Source::ThermalZone
                | Source::Dmi
                | Source::Bonding
                | Source::Mdstat
                | Source::Hwmon
                | Source::Numa
                | Source::PowerSupply
                | Source::Nvme
                | Source::Watchdog
                | Source::Rapl
                | Source::Tape
                | Source::FcHost
                | Source::Infiniband
                | Source::Nfs
                | Source::Nfsd
                | Source::Ipvs
                | Source::Zfs
                | Source::Bcachefs
                | Source::Mountstats
                | Source::Pcidevice
                | Source::Drbd
                | Source::Systemd
                | Source::Swaps
                | Source::ThermalThrottle
                | Source::Wifi
        ) {
            SourceStatus::Missing
        } else {
            SourceStatus::Ok
        };
        assert_eq!(s.status[source as usize], expected, "{}", source.name());
    }
    assert_eq!(s.stat.total.ticks(CpuMode::User), Some(2808));
    assert_eq!(s.stat.total.ticks(CpuMode::Idle), Some(71968));
    assert_eq!(s.stat.total.ticks(CpuMode::Steal), Some(23));
    assert_eq!(s.stat.cpus.len(), 2);
    assert_eq!(s.stat.cpus[1].times.ticks(CpuMode::System), Some(389));
    assert_eq!(s.stat.irq_counts.len(), 424);
    assert_eq!(
        (s.stat.ctxt, s.stat.btime_secs, s.stat.processes),
        (185342, 1795315880, 3140)
    );
    assert_eq!(
        (s.stat.procs_running, s.stat.procs_blocked),
        (Some(1), Some(0))
    );
    assert_eq!(s.stat.softirq_total, Some(48021));
    assert_eq!(s.stat.softirq_counts[7], 19790);
    assert_eq!(s.meminfo.get(MemKey::MemTotal), Some(24682416 * 1024));
    assert_eq!(s.meminfo.get(MemKey::MemAvailable), Some(24278092 * 1024));
    assert_eq!(s.vmstat.all().len(), 192);
    assert_eq!(s.vmstat.get(VmKey::Pgfault), Some(1355638));
    assert_eq!(
        (
            s.loadavg.load1,
            s.loadavg.runnable,
            s.loadavg.threads,
            s.loadavg.last_pid
        ),
        (0.35, 1, 75, 3139)
    );
    let cpu = s.pressure(Resource::Cpu).unwrap().some.unwrap();
    assert_eq!((cpu.avg10_pct, cpu.total_usec), (2.32, 2603376));
    assert!(s.pressure(Resource::Irq).is_none());
    let vda = s
        .diskstats
        .iter()
        .find(|d| d.name.as_str() == "vda")
        .unwrap();
    assert_eq!(
        (vda.reads_completed, vda.read_sectors, vda.flushes_completed),
        (4808, 1716330, Some(22))
    );
    let eth0 = s
        .net_dev
        .iter()
        .find(|d| d.name.as_str() == "eth0")
        .unwrap();
    assert_eq!((eth0.rx_bytes, eth0.tx_packets), (19522425, 1117));
    assert_eq!(s.interrupts.len(), 35);
    assert_eq!(s.interrupts.find("LOC").unwrap().counts, &[13402, 14210]);
    assert_eq!(
        s.interrupts.find("24").unwrap().description,
        "IO-APIC   5-edge      ACPI:Ged"
    );
    assert_eq!(s.softirqs.find("TIMER").unwrap().counts, &[3001, 3911]);
    assert_eq!((s.filefd.allocated, s.filefd.maximum), (305, 2466170));
    assert_eq!(s.sockstat.sockets_used, Some(8));
    assert_eq!(s.sockstat.lines[0].protocol, "TCP");
    assert_eq!(s.sockstat.lines[0].values[2], ("tw".to_string(), 0));
    assert_eq!(s.softnet.len(), 2);
    assert_eq!(s.softnet[0].processed, 0x002caa42);
    assert_eq!(
        (s.entropy.available_bits, s.entropy.pool_size_bits),
        (256, 256)
    );
    assert_eq!(
        (
            s.uname.sysname.as_str(),
            s.uname.release.as_str(),
            s.uname.machine.as_str()
        ),
        ("Linux", "6.18.44-fc-v669", "x86_64")
    );
    assert_eq!(s.uname.domainname, "(none)");
    assert_eq!(s.netstat.get("Tcp_ActiveOpens"), Some(162644));
    assert_eq!(s.netstat.get("Tcp_MaxConn"), Some(-1));
    assert_eq!(s.netstat.get("TcpExt_ListenDrops"), Some(44));
    assert_eq!(s.netstat.get("Ip6_InReceives"), Some(2));
    assert_eq!(s.netstat.values.len(), 402);
    assert_eq!(s.sockstat6.lines[0].protocol, "TCP6");

    // Gathered sources.
    let names: Vec<_> = s.netclass.iter().map(|d| d.device.as_str()).collect();
    assert_eq!(names, ["eth0", "lo"]);
    let eth0 = &s.netclass[0];
    assert_eq!(eth0.address, "02:fc:00:00:00:01");
    assert_eq!(
        (eth0.mtu, eth0.flags, eth0.speed_mbps),
        (Some(1400), Some(0x1003), Some(-1))
    );
    assert_eq!(
        (eth0.carrier_changes, eth0.rx_nohandler),
        (Some(2), Some(0))
    );
    assert_eq!(eth0.operstate, "up");
    let lo = &s.netclass[1];
    assert_eq!(
        (lo.duplex.as_str(), lo.speed_mbps, lo.protocol_type),
        ("", None, Some(772))
    );
    // Below the tree's rootfs only / is a directory; the rest is excluded.
    let points: Vec<_> = s.filesystem.iter().map(|m| m.mountpoint.as_str()).collect();
    assert_eq!(points, ["/"]);
    assert!(s.filesystem[0].size_bytes > 0 && s.filesystem[0].error.is_none());
    assert_eq!(s.filesystem[0].fstype, "ext4");
    assert_eq!(s.time.clocksources[0].available, ["tsc", "kvm-clock"]);
    assert_eq!(s.time.clocksources[0].current, "tsc");
    assert_eq!(s.os.get("ID"), "debian");
    assert_eq!(s.os.version(), Some(12.0));
    assert!(!s.selinux.enabled);
    assert_eq!(s.arp.devices, [("eth0".to_string(), 1)]);
    assert_eq!(
        (s.udp_queues.v4_tx, s.udp_queues.v4_rx, s.udp_queues.v6),
        (0, 0, Some((0, 0)))
    );
    assert_eq!((s.conntrack.entries, s.conntrack.limit), (0, 262144));
    assert_eq!(s.conntrack.stats.unwrap().found, 0);
    // The memory manager's detail.
    let b: Vec<_> = s
        .buddyinfo
        .iter()
        .map(|z| (z.node, z.zone.as_str(), z.free.len(), z.free[10]))
        .collect();
    assert_eq!(
        b,
        [
            (0, "DMA", 11, 3),
            (0, "DMA32", 11, 752),
            (0, "Normal", 11, 1354)
        ]
    );
    let zones: Vec<_> = s.zoneinfo.iter().map(|z| z.zone.as_str()).collect();
    assert_eq!(zones, ["DMA", "DMA32", "Normal", "Movable", "Device"]);
    let normal = &s.zoneinfo[2];
    assert_eq!(
        (normal.get("min"), normal.get("high"), normal.get("managed")),
        (Some(12878), Some(19316), Some(2490368))
    );
    assert_eq!(s.zoneinfo[0].get("nr_dirtied"), Some(69730219));
    assert_eq!(s.zoneinfo[0].protection, [0, 3019, 12747, 12747, 12747]);
    assert_eq!(s.zoneinfo[3].get("nr_free_pages"), None);
    assert_eq!(s.slabinfo.len(), 235);
    let dentry = s.slabinfo.iter().find(|x| x.name == "dentry").unwrap();
    assert_eq!(
        (
            dentry.active_objects,
            dentry.object_size_bytes,
            dentry.objects_per_slab
        ),
        (561225, 192, 21)
    );
    assert_eq!(
        (
            s.ksm.get("run"),
            s.ksm.get("sleep_millisecs"),
            s.ksm.get("pages_to_scan")
        ),
        (Some(0), Some(20), Some(100))
    );
    assert_eq!(s.hung_tasks, 0);
    // No EDAC directory: a machine without memory controllers to report.
    assert!(s.class[Source::Edac.class_index().unwrap()].is_empty());
    assert_eq!(
        (s.task_limits.pid_max, s.task_limits.threads_max),
        (32768, 192730)
    );
    assert_eq!(s.cpuinfo.len(), 2);
    assert_eq!(
        (
            s.cpuinfo[1].processor,
            s.cpuinfo[1].vendor_id.as_str(),
            s.cpuinfo[1].model_name.as_str(),
            s.cpuinfo[1].core_id.as_str(),
            s.cpuinfo[1].cache_size.as_str()
        ),
        (1, "AuthenticAMD", "AMD EPYC", "1", "1024 KB")
    );

    let t = r.read_topology();
    assert_eq!(t.online.cpus(), &[0, 1]);
    assert_eq!(t.isolated.as_ref().map(|l| l.len()), Some(0));
    assert_eq!(t.nohz_full, None);
    assert_eq!(t.housekeeping().cpus(), &[0, 1]);
    assert_eq!(t.cpus.len(), 2);
    assert_eq!(t.cpus[1].core_id, Some(1));
}

#[test]
fn old_kernel_without_memavailable_or_pressure() {
    let (_, s) = sample_of("linux-2.6.32");
    assert!(s.ok(Source::Stat) && s.ok(Source::Meminfo) && s.ok(Source::Diskstats));
    assert_eq!(s.stat.total.columns(), 9);
    assert_eq!(s.stat.total.ticks(CpuMode::Guest), Some(0));
    assert_eq!(s.stat.total.ticks(CpuMode::GuestNice), None);
    assert_eq!(s.meminfo.get(MemKey::MemAvailable), None);
    assert_eq!(s.meminfo.get(MemKey::MemFree), Some(830868 * 1024));
    for r in Resource::ALL {
        assert_eq!(
            s.status[Source::pressure(r) as usize],
            SourceStatus::Missing
        );
    }
    assert_eq!(s.diskstats[0].io_weighted_time_ms, 1221512);
    assert_eq!(s.diskstats[0].discards_completed, None);
    assert_eq!(
        s.net_dev[1].rx_bytes, 68210868,
        "name glued to the first counter"
    );
    assert_eq!(s.softirqs.find("BLOCK_IOPOLL").unwrap().total, 0);
    assert_eq!(s.schedstat.cpus[1].running_ns, 98773431020);
    assert_eq!(s.vmstat.get(VmKey::OomKill), None);
    // Before Linux 6.1 there is no /proc/sys/kernel/arch: machine unknown.
    assert_eq!(
        (s.uname.release.as_str(), s.uname.machine.as_str()),
        ("2.6.32-754.el6.x86_64", "")
    );
    assert_eq!(s.softnet[0].processed, 0x1a2b3);
    assert_eq!(
        (s.entropy.available_bits, s.entropy.pool_size_bits),
        (3520, 4096)
    );
    // Before carrier_changes (4.x) and rx_nohandler: those are unknown.
    let eth0 = &s.netclass[0];
    assert_eq!(
        (eth0.speed_mbps, eth0.carrier_changes, eth0.rx_nohandler),
        (Some(1000), None, None)
    );
    // No conntrack module, no IPv6, no os-release.
    assert_eq!(s.status[Source::Conntrack as usize], SourceStatus::Missing);
    assert_eq!(s.status[Source::Os as usize], SourceStatus::Missing);
    assert_eq!(s.udp_queues.v6, None);
    assert_eq!(s.arp.devices, [("eth0".to_string(), 1)]);
    // rootfs and the real root are both mounted on /.
    let types: Vec<_> = s.filesystem.iter().map(|m| m.fstype.as_str()).collect();
    assert_eq!(types, ["rootfs", "ext4"]);
    assert_eq!(
        (
            s.selinux.enabled,
            s.selinux.current_mode,
            s.selinux.config_mode
        ),
        (true, Some(0), Some(0))
    );
}

#[test]
fn newer_kernel_with_extra_columns_keys_and_lines() {
    let (_, s) = sample_of("linux-future");
    for source in Source::ALL {
        // Neither is under the tree: systemd is asked over its bus, wifi
        // of the kernel's nl80211, which this machine's kernel lacks.
        if matches!(source, Source::Systemd | Source::Wifi) {
            assert_eq!(s.status[source as usize], SourceStatus::Missing);
            continue;
        }
        assert!(
            s.ok(source),
            "{}: {:?}",
            source.name(),
            s.status[source as usize]
        );
    }
    assert_eq!(s.stat.total.columns(), 10, "an 11th column is ignored");
    // Each package's throttle count once, each core's once; a newer
    // kernel's other files in the directory are left.
    assert_eq!(s.thermal_throttle.packages, [(0, 7)]);
    assert_eq!(s.thermal_throttle.cores, [(0, 0, 2), (0, 1, 5)]);
    // New sockstat keys and protocols are kept; extra softnet columns ignored.
    assert_eq!(s.sockstat.lines[0].values[5], ("future_key".to_string(), 7));
    assert_eq!(s.sockstat.lines.last().unwrap().protocol, "MPTCP");
    assert_eq!(s.softnet[1].processed, 0x2e13af);
    assert_eq!(s.uname.machine, "aarch64");
    assert_eq!(s.netstat.get("MPTcpExt_FutureCounter"), Some(9));
    assert_eq!(s.stat.total.ticks(CpuMode::User), Some(2808));
    assert_eq!(s.meminfo.all().get("FutureMem"), Some(4096 * 1024));
    assert_eq!(s.vmstat.all().get("future_event"), Some(99));
    assert_eq!(
        s.diskstats
            .iter()
            .find(|d| d.name.as_str() == "vda")
            .unwrap()
            .flush_time_ms,
        Some(0)
    );
    assert_eq!(
        s.pressure(Resource::Irq).unwrap().full.unwrap().total_usec,
        123
    );
    assert_eq!(s.schedstat.version, 17);
    // A bond beside its slave; `bonding_masters` (a file) is not a device.
    let names: Vec<_> = s.netclass.iter().map(|d| d.device.as_str()).collect();
    assert_eq!(names, ["bond0", "enp1s0"]);
    let up = &s.netclass[1];
    assert_eq!(up.ifalias, "uplink to rack 7");
    assert_eq!(
        (up.speed_mbps, up.mtu, up.rx_nohandler),
        (Some(25000), Some(9000), Some(3))
    );
    assert_eq!(s.netclass[0].flags, Some(0x1403));
    // Read-only, duplicated, escaped and vanished mounts; excluded ones gone.
    let m: Vec<_> = s
        .filesystem
        .iter()
        .map(|m| (m.mountpoint.as_str(), m.readonly, m.error.as_deref()))
        .collect();
    assert_eq!(
        m,
        [
            ("/", false, None),
            ("/data", true, None),
            ("/srv/my disk", false, None),
            ("/mnt/gone", false, Some("ENOENT")),
        ]
    );
    assert_eq!(s.time.clocksources.len(), 2);
    assert_eq!(s.time.clocksources[1].current, "hpet");
    // Only /usr/lib/os-release: the fallback.
    assert_eq!(s.os.get("VARIANT"), "Server Edition");
    assert_eq!(s.os.get("NEW_KEY"), "kept");
    assert_eq!(s.os.version(), Some(26.10));
    assert_eq!(
        (
            s.selinux.enabled,
            s.selinux.current_mode,
            s.selinux.config_mode
        ),
        (true, Some(1), Some(1))
    );
    assert_eq!(
        s.arp.devices,
        [("bond0".to_string(), 2), ("enp1s0".to_string(), 1)]
    );
    assert_eq!(
        (s.udp_queues.v4_tx, s.udp_queues.v4_rx, s.udp_queues.v6),
        (0x100, 0xa00, Some((0, 0x200)))
    );
    let c = s.conntrack;
    assert_eq!((c.entries, c.limit), (1234, 262144));
    let st = c.stats.unwrap();
    assert_eq!(
        (st.found, st.invalid, st.ignore, st.insert_failed),
        (0x30, 3, 0x300, 1)
    );
    assert_eq!((st.drop, st.early_drop, st.search_restart), (4, 2, 5));
    // A good textfile and a half-written one.
    let t = &s.textfile;
    let files: Vec<_> = t
        .files
        .iter()
        .map(|f| (f.path.rsplit('/').next().unwrap(), f.error.is_some()))
        .collect();
    assert_eq!(files, [("backup.prom", false), ("broken.prom", true)]);
    let age = t
        .families
        .iter()
        .find(|f| f.name == "backup_age_seconds")
        .unwrap();
    assert_eq!(age.help, "Seconds since the last backup.");
    assert_eq!(age.series.len(), 2);
    let srv = age.series.iter().find(|s| s.value == 120.0).unwrap();
    assert!(
        srv.labels
            .contains(&("note".to_string(), "a \"quoted\" value".to_string()))
    );
    assert_eq!(t.families.len(), 2);
    // udev's database: block devices only, the kept properties only.
    let u: Vec<_> = s
        .udev
        .iter()
        .map(|d| (d.major, d.minor, d.properties.len()))
        .collect();
    assert_eq!(u, [(254, 0, 5), (254, 1, 1)]);
    assert_eq!(s.udev[1].get("ID_FS_TYPE"), "ext4");
    assert_eq!(
        (s.udev[0].get("ID_MODEL"), s.udev[0].serial()),
        ("QEMU_HARDDISK", "QM00001")
    );
    // Orders up to 12 (a larger MAX_ORDER), two nodes, a sixth zone.
    assert_eq!(s.buddyinfo.len(), 3);
    assert_eq!(s.buddyinfo[0].free.len(), 13);
    assert_eq!((s.buddyinfo[2].node, s.buddyinfo[2].free[12]), (1, 6));
    let z: Vec<_> = s
        .zoneinfo
        .iter()
        .map(|z| {
            (
                z.node,
                z.zone.as_str(),
                z.get("numa_miss"),
                z.protection.len(),
            )
        })
        .collect();
    assert_eq!(
        z,
        [
            (0, "DMA", None, 6),
            (0, "Normal", Some(12), 6),
            (1, "Normal", Some(3), 6),
            (1, "Movable", None, 6)
        ]
    );
    assert_eq!(s.zoneinfo[2].get("nr_inactive_anon"), Some(77));
    assert_eq!(s.slabinfo[2].name, "task_struct");
    assert_eq!(s.slabinfo[2].object_size_bytes, 10368);
    // A kernel without pages_volatile.
    assert_eq!(
        (
            s.ksm.get("run"),
            s.ksm.get("full_scans"),
            s.ksm.get("pages_volatile")
        ),
        (Some(1), Some(7), None)
    );
    assert_eq!(s.hung_tasks, 2);
    assert_eq!(
        (s.task_limits.pid_max, s.task_limits.threads_max),
        (4194304, 1545243)
    );
    // An arm64 cpuinfo: CPUs, none of x86's keys.
    let c: Vec<_> = s
        .cpuinfo
        .iter()
        .map(|c| (c.processor, c.vendor_id.as_str(), c.model_name.as_str()))
        .collect();
    assert_eq!(c, [(0, "", ""), (1, "", "")]);
    // The hardware classes, as gathered.
    let class = |src: Source| &s.class[src.class_index().unwrap()];
    let names = |src: Source| -> Vec<&str> { class(src).iter().map(|d| d.name.as_str()).collect() };
    assert_eq!(names(Source::PowerSupply), ["AC", "BAT0"]);
    assert_eq!(
        class(Source::PowerSupply)[1].int("voltage_now"),
        Some(12087000)
    );
    assert_eq!(
        class(Source::PowerSupply)[1].get("status"),
        Some("Discharging")
    );
    assert_eq!(names(Source::Nvme), ["nvme0"]);
    assert_eq!(names(Source::Watchdog), ["watchdog0"]);
    // `intel-rapl` is a control type without a name; kept, skipped later.
    assert_eq!(
        names(Source::Rapl),
        [
            "intel-rapl",
            "intel-rapl:0",
            "intel-rapl:0:0",
            "intel-rapl:0:1",
            "intel-rapl:1",
            "intel-rapl:1:0"
        ]
    );
    assert_eq!(class(Source::Edac)[0].uint("csrow0/ce_count"), Some(2));
    // st0a and nst0 are other views of the same drive.
    assert_eq!(names(Source::Tape), ["st0"]);
    assert_eq!(class(Source::Tape)[0].uint("stats/write_cnt"), Some(53772));
    assert_eq!(
        class(Source::FcHost)[0].uint("statistics/nos_count"),
        Some(0x12)
    );
    let ib = &class(Source::Infiniband)[0];
    assert_eq!(ib.children("ports"), ["1", "2"]);
    assert_eq!(ib.get("ports/1/rate"), Some("40 Gb/sec (4X QDR)"));
    assert_eq!(
        ib.get("ports/2/counters/multicast_rcv_packets"),
        Some("N/A (no PMA)")
    );
    // A file of `<name> <values>` lines: one attribute a line.
    assert_eq!(names(Source::Xfs), ["sda1"]);
    assert_eq!(class(Source::Xfs)[0].get("stats/stats:rw"), Some("40 120"));
    assert_eq!(
        names(Source::Btrfs),
        ["7f4b8a3c-1d2e-4f5a-9b6c-0d1e2f3a4b5c"]
    );
    let fs = &class(Source::Btrfs)[0];
    assert_eq!(fs.get("label"), Some("data"));
    assert_eq!(
        fs.uint("allocation/metadata/raid1/total_bytes"),
        Some(268435456)
    );
    assert_eq!(fs.children("devices"), ["sdb", "sdc"]);
    assert_eq!(fs.uint("commit_stats:commits"), Some(12));
    // IPVS: totals in hexadecimal, real servers by service.
    assert_eq!(s.ipvs.incoming_bytes, 0x51D8C8883AB3);
    assert_eq!(s.ipvs.backends.len(), 5);
    // ZFS: kstat files, a pool's io, a dataset, the state.
    assert_eq!(s.zfs.kstats.len(), 2);
    assert_eq!(s.zfs.kstats[0].1[0], ("hits".to_string(), 8772612));
    assert_eq!(s.zfs.pools[0].datasets[0].name, "tank/home");
    assert_eq!(s.zfs.pools[0].state.as_deref(), Some("online"));
    // bcache: a multi-line file with tabs as one attribute a line; not
    // the `register` file beside the sets.
    assert_eq!(
        names(Source::Bcache),
        ["deaddd54-c735-46d5-868e-f331c5fd7c74"]
    );
    let b = &class(Source::Bcache)[0];
    assert_eq!(b.get("bdev0/writeback_rate_debug:integral:"), Some("-2.0k"));
    assert_eq!(b.get("bdev0/writeback_rate_debug:next"), Some("io:\t-1ms"));
    // bcachefs: a one-line table as the attribute itself, a table of
    // several lines as one attribute a line (a section's one-word heading
    // without a value), a counter's two lines under one name.
    let fs = &class(Source::Bcachefs)[0];
    assert_eq!(fs.name, "3f2b9c1e-8a4d-4e6f-b1c2-5d6e7f8a9b0c");
    assert_eq!(
        fs.get("errors"),
        Some("bset_bad_csum                                   2       1767112063")
    );
    assert_eq!(
        fs.get("btree_write_stats:interior:"),
        Some("3035363   1.26k")
    );
    assert_eq!(fs.get("dev-0/io_done:write:"), Some(""));
    assert_eq!(fs.get("dev-0/io_errors:checksum:5"), Some(""));
    assert_eq!(fs.get("dev-0/state"), Some("rw [ro] evacuating spare"));
    let counter: Vec<&str> = fs.below("counters").into_iter().map(|(_, v)| v).collect();
    assert_eq!(
        counter[..2],
        [
            "mount:                   3070115",
            "filesystem creation:     62061408"
        ]
    );
    assert_eq!(procfs::class::human_bytes("2.25M"), Some(2_359_296));
    // An NFS mount's statistics (a transport line with more columns
    // than this parser knows), its server's address from mountinfo.
    let m = &s.mountstats[0];
    assert_eq!(s.mountstats.len(), 1);
    assert_eq!(
        (m.device.as_str(), m.addr.as_str()),
        ("10.1.2.3:/export/home", "10.1.2.3")
    );
    assert_eq!(
        (m.transports[0].counters[12], m.operations[2].counters[7]),
        (3000, 410)
    );
    // PCI functions: a bridge on a root bus has no parent; the function
    // behind it names it.
    assert_eq!(names(Source::Pcidevice), ["0000:00:02.1", "0000:01:00.0"]);
    let (bridge, nvme) = (&class(Source::Pcidevice)[0], &class(Source::Pcidevice)[1]);
    assert_eq!(
        (bridge.get("parent"), nvme.get("parent")),
        (None, Some("0000:00:02.1"))
    );
    assert_eq!(nvme.get("max_link_speed"), Some("16.0 GT/s PCIe"));
    // The vulnerabilities directory, one file an attribute.
    let v = &class(Source::CpuVulnerabilities)[0];
    assert_eq!(v.name, "vulnerabilities");
    assert_eq!(v.get("itlb_multihit"), Some("Not affected"));
    // Software RAID arrays in sysfs.
    assert_eq!(names(Source::Mdraid), ["md0", "md1"]);
    assert_eq!(class(Source::Mdraid)[0].get("md/raid_disks"), Some("4 (3)"));
    // DRBD: a device waiting for its peer.
    assert_eq!(s.drbd.len(), 2);
    assert_eq!(
        (s.drbd[1].get("cs"), s.drbd[1].get("oos")),
        (Some("WFConnection"), Some("4096"))
    );
    // A multipath device and its paths' states.
    let dm = &class(Source::DmMultipath)[0];
    assert_eq!(
        (dm.name.as_str(), dm.get("dm/name")),
        ("dm-0", Some("mpatha"))
    );
    let paths: Vec<&str> = dm
        .attrs
        .iter()
        .filter(|(k, _)| k == "path")
        .map(|(_, v)| v.as_str())
        .collect();
    assert_eq!(paths, ["sdb running", "sdc offline"]);
    // NFS client and server.
    assert_eq!(s.nfs.at("rpc", 0), 4329785);
    assert_eq!(s.nfs.procedures("proc3")[1], 4084749);
    assert_eq!(s.nfs.procedures("proc4").len(), 61);
    assert_eq!((s.nfsd.at("io", 0), s.nfsd.at("th", 0)), (157286400, 8));
    assert_eq!(s.nfsd.procedures("proc4ops")[9], 8179);
}

/// The disks' queues read are those diskstats serves: by default not a
/// loop device or a partition; an include pattern alone.
#[test]
fn block_queue_reads_the_disks_diskstats_serves() {
    use procfs::diskstats::DiskFilter;
    let (mut r, mut s) = sample_of("linux-future");
    let names = |s: &SystemSample| -> Vec<String> {
        s.class[Source::BlockQueue.class_index().unwrap()]
            .iter()
            .map(|d| d.name.clone())
            .collect()
    };
    assert_eq!(names(&s), ["dm-0", "md0", "md1", "sda", "sdb", "sdc"]);
    assert_eq!(
        s.class[Source::BlockQueue.class_index().unwrap()][3].get("queue/rotational"),
        Some("1")
    );
    let dir = fixtures::dir().join("linux-future");
    r.set_gather_options(GatherOptions {
        rootfs: dir.join("rootfs"),
        disks: DiskFilter::Include(regex::Regex::new("^sd[ab]$").unwrap()),
        ..GatherOptions::default()
    });
    r.read_sample(&[Source::BlockQueue], &mut s);
    assert_eq!(names(&s), ["sda", "sdb"]);
    assert!(DiskFilter::Default.keeps("sda") && !DiskFilter::Default.keeps("loop0"));
    assert!(!DiskFilter::Default.keeps("sda1") && DiskFilter::All.keeps("loop0"));
}

fn check_big_machine(tree: &str, cpus: usize, device_irqs: usize) {
    let (mut r, s) = sample_of(tree);
    // Every source, but the platform's optional ones (no DMI, no bond).
    for source in Source::ALL {
        let missing_optional = (matches!(
            source,
            Source::Dmi
                | Source::Bonding
                | Source::Mdstat
                | Source::Hwmon
                | Source::Nfs
                | Source::Nfsd
                | Source::Ipvs
                | Source::Zfs
                | Source::CgroupControllers
                | Source::Xfrm
                | Source::Lnstat
                | Source::Mountstats
                | Source::Drbd
                | Source::Systemd
                | Source::Swaps
                | Source::ThermalThrottle
                | Source::Wifi
        ) || source.class_spec().is_some())
            && s.status[source as usize] == SourceStatus::Missing;
        assert!(
            s.ok(source) || missing_optional,
            "{tree} {}: {:?}",
            source.name(),
            s.status[source as usize]
        );
    }
    assert_eq!(s.stat.cpus.len(), cpus);
    assert_eq!(s.interrupts.cpus().len(), cpus);
    assert_eq!(s.interrupts.len(), device_irqs + 12 + 2);
    // The total row is the sum of the per-CPU rows, mode by mode.
    for mode in CpuMode::ALL {
        let sum: u64 = s
            .stat
            .cpus
            .iter()
            .map(|c| c.times.ticks(mode).unwrap())
            .sum();
        assert_eq!(s.stat.total.ticks(mode), Some(sum), "{mode:?}");
    }
    // intr total = every row of /proc/interrupts; per-IRQ counts match rows.
    assert_eq!(s.stat.intr_total, s.interrupts.grand_total());
    for row in s
        .interrupts
        .rows()
        .filter(|r| r.label.parse::<usize>().is_ok())
    {
        let irq: usize = row.label.parse().unwrap();
        assert_eq!(s.stat.irq_counts[irq], row.total, "irq {irq}");
    }
    // softirq line = per-vector totals of /proc/softirqs.
    assert_eq!(s.stat.softirq_total, Some(s.softirqs.grand_total()));
    for (i, row) in s.softirqs.rows().enumerate() {
        assert_eq!(s.stat.softirq_counts[i], row.total, "{}", row.label);
    }
    assert_eq!(s.schedstat.cpus.len(), cpus);
    assert_eq!(s.cpuinfo.len(), cpus);
    assert!(
        s.cpuinfo
            .iter()
            .enumerate()
            .all(|(i, c)| c.processor as usize == i)
    );
    let t = r.read_topology();
    assert_eq!(t.online.len(), cpus);
    assert!(t.cpus.iter().all(|c| c.numa_node.is_some()));
}

#[test]
fn cpu256_irq3000_is_consistent() {
    check_big_machine("cpu256-irq3000", 256, 3000);
    let (proc_root, sys_root) = fixtures::roots("cpu256-irq3000");
    let t = Reader::new(proc_root, sys_root).read_topology();
    assert_eq!(t.isolated.as_ref().unwrap().to_string(), "8-15");
    assert_eq!(
        t.boot.isolcpus.as_ref().unwrap().flags,
        vec!["managed_irq", "domain"]
    );
    assert_eq!(t.housekeeping().to_string(), "0-7,16-255");
}

#[test]
fn cpu4096_is_consistent() {
    check_big_machine("cpu4096", 4096, 200);
}

#[test]
fn generated_trees_match_the_generator() {
    for (name, m) in fixtures::generate::committed() {
        for (rel, bytes) in fixtures::generate::big_machine(m) {
            let path = fixtures::dir().join(name).join(&rel);
            let committed =
                std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            assert!(
                committed == bytes,
                "{} is stale: run `cargo run -p fixtures --bin write-fixtures -- generate`",
                path.display()
            );
        }
    }
}

#[test]
fn keep_open_pread_reads_the_same() {
    let (proc_root, sys_root) = fixtures::roots("cpu256-irq3000");
    let mut a = Reader::new(&proc_root, &sys_root);
    let mut b = Reader::new(&proc_root, &sys_root);
    b.set_keep_open(true);
    for _ in 0..2 {
        // Gathered sources are not kept open; the clock moves between reads.
        for source in Source::ALL.into_iter().filter(|s| !s.gathered()) {
            let x = match a.read_raw(source) {
                Ok(x) => x.to_vec(),
                // No software RAID on this machine: absent both ways.
                Err(e) if e.is_not_found() && source.optional() => {
                    assert!(b.read_raw(source).unwrap_err().is_not_found());
                    continue;
                }
                Err(e) => panic!("{e}"),
            };
            assert_eq!(b.read_raw(source).unwrap(), &x[..], "{}", source.name());
        }
    }
}

#[test]
fn sample_serializes_to_json_with_units_in_names() {
    let (_, s) = sample_of("this-machine");
    let v: serde_json::Value = serde_json::to_value(&s).unwrap();
    assert_eq!(v["stat"]["total"]["user_ticks"], 2808);
    assert_eq!(v["meminfo"]["MemTotal"], 24682416u64 * 1024);
    assert_eq!(v["pressure_cpu"]["some"]["total_usec"], 2603376);
    assert_eq!(v["interrupts"]["rows"][0]["label"], "24");
    assert_eq!(v["status"]["schedstat"]["status"], "missing");
    assert!(v.get("schedstat").is_none());
}

/// A lowered cap on the textfile directory's bytes refuses the files past
/// it by name (counted), in line and on the background thread alike, and
/// lifting it serves them again.
#[test]
fn a_lowered_textfile_cap_refuses_the_files_past_it_and_counts_them() {
    let dir = tempfile::tempdir().unwrap();
    // 448,000 bytes a file: two within 1 MiB, three past it.
    let body: String = (0..14_000)
        .map(|i| format!("big_series{{n=\"{i:08}\"}} {i:08}\n"))
        .collect();
    for name in ["a", "b", "c"] {
        let text = body.replace("big_series", &format!("{name}_series"));
        assert_eq!(text.len(), 448_000);
        std::fs::write(dir.path().join(format!("{name}.prom")), text).unwrap();
    }
    for background in [false, true] {
        let (proc_root, sys_root) = fixtures::roots("this-machine");
        let mut r = Reader::new(proc_root, sys_root);
        r.set_gather_options(GatherOptions {
            textfile_directory: Some(dir.path().to_path_buf()),
            ..GatherOptions::default()
        });
        r.set_textfile_background(background);
        let mut s = SystemSample::default();
        let names = |s: &SystemSample| -> Vec<String> {
            s.textfile.families.iter().map(|f| f.name.clone()).collect()
        };
        // The background thread serves its last finished parse and starts
        // the next: read until a parse made under the setting is served.
        let read_until = |r: &mut Reader, s: &mut SystemSample, n: usize| {
            for _ in 0..1000 {
                r.read_source(Source::Textfile, s);
                if s.textfile.families.len() == n {
                    return;
                }
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
        };
        r.set_textfile_max_dir_bytes(Some(1 << 20));
        read_until(&mut r, &mut s, 2);
        assert_eq!(
            names(&s),
            ["a_series", "b_series"],
            "background {background}"
        );
        assert_eq!(s.textfile.refused, 1);
        let refused = s
            .textfile
            .files
            .iter()
            .find(|f| f.path.ends_with("c.prom"))
            .unwrap();
        assert!(
            refused
                .error
                .as_deref()
                .is_some_and(|e| e.contains("more than 1024 KiB")),
            "{refused:?}"
        );
        r.set_textfile_max_dir_bytes(None);
        read_until(&mut r, &mut s, 3);
        assert_eq!(names(&s), ["a_series", "b_series", "c_series"]);
        assert_eq!(s.textfile.refused, 0);
    }
}
