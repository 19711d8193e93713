//! `stat` and the agent on incomplete proc/sys trees (containers, chroots,
//! copies of another machine): every file of a captured tree removed in
//! turn, and an empty tree. Nothing may stop them; what is missing is said.

use std::io::{Read, Write};
use std::time::Duration;

mod common;

use common::agent::*;
use common::*;

/// Every file of the `this-machine` fixture, relative to the tree.
fn files() -> Vec<String> {
    fn walk(dir: &std::path::Path, base: &std::path::Path, out: &mut Vec<String>) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, base, out);
            } else {
                out.push(p.strip_prefix(base).unwrap().display().to_string());
            }
        }
    }
    let base = fixtures::dir().join("this-machine");
    let mut out = Vec::new();
    walk(&base, &base, &mut out);
    // Per-process directories belong to the process table's own tests.
    out.retain(|f| {
        !f.split('/')
            .nth(1)
            .is_some_and(|c| c.chars().all(|c| c.is_ascii_digit()))
    });
    out.sort();
    out
}

fn roots(t: &fixtures::Tree) -> (String, String) {
    (
        t.proc_root().display().to_string(),
        t.sys_root().display().to_string(),
    )
}

/// Runs `quietstat` with the tree's roots and then `args`.
fn run_on(t: &fixtures::Tree, args: &[&str]) -> std::process::Output {
    let (p, s) = roots(t);
    quietstat()
        .args(["--proc-root", &p, "--sys-root", &s])
        .args(args)
        .output()
        .expect("running quietstat")
}

/// The source and node_exporter collector a removed file belongs to.
fn source_of(file: &str) -> Option<(&'static str, &'static str)> {
    Some(match file {
        "proc/stat" => ("stat", "cpu"),
        "proc/interrupts" => ("interrupts", "interrupts"),
        "proc/softirqs" => ("softirqs", "softirqs"),
        "proc/meminfo" => ("meminfo", "meminfo"),
        "proc/vmstat" => ("vmstat", "vmstat"),
        "proc/loadavg" => ("loadavg", "loadavg"),
        "proc/diskstats" => ("diskstats", "diskstats"),
        "proc/net/dev" => ("net_dev", "netdev"),
        "proc/pressure/cpu" => ("pressure_cpu", "pressure"),
        "proc/pressure/memory" => ("pressure_memory", "pressure"),
        "proc/pressure/io" => ("pressure_io", "pressure"),
        "proc/net/arp" => ("arp", "arp"),
        "proc/net/udp" => ("udp_queues", "udp_queues"),
        "proc/sys/net/netfilter/nf_conntrack_count" => ("conntrack", "conntrack"),
        // No /proc/mounts beside it in the tree either.
        "proc/1/mounts" => ("filesystem", "filesystem"),
        "rootfs/etc/os-release" => ("os", "os"),
        _ => return None,
    })
}

/// The agent on `t`: it must start serving, answer a scrape and stop on
/// SIGTERM with success; what it logged. With `down`, that source reports
/// `quietstat_source_up` 0 and its collector `node_scrape_collector_success` 0.
fn agent_runs_on(t: &fixtures::Tree, what: &str, down: Option<(&str, &str)>) -> Vec<String> {
    let (p, s) = roots(t);
    let rootfs = t.proc_root().parent().unwrap().join("rootfs");
    let rootfs = rootfs.to_str().unwrap();
    let mut a = agent(
        "",
        &[
            "--backend",
            "procfs",
            "--proc-root",
            &p,
            "--sys-root",
            &s,
            "--path.rootfs",
            rootfs,
        ],
    );
    let r = get(a.addr, "/metrics", None);
    assert_eq!(r.status, 200, "{what}: {}", r.body);
    assert!(r.body.contains("quietstat_source_up"), "{what}");
    if let Some((source, collector)) = down {
        // A collector off by default is not listed at all, as
        // node_exporter lists only the collectors it runs.
        let listed = !::agent::config::COLLECTORS_OFF_BY_DEFAULT.contains(&collector);
        for (series, want) in [
            (
                format!("quietstat_source_up{{source=\"{source}\"}}"),
                Some(0.0),
            ),
            (
                format!("node_scrape_collector_success{{collector=\"{collector}\"}}"),
                listed.then_some(0.0),
            ),
        ] {
            let v: Option<f64> = r
                .body
                .lines()
                .find_map(|l| l.strip_prefix(series.as_str())?.trim().parse().ok());
            assert_eq!(v, want, "{what}: {series}");
        }
    }
    a.proc.signal(libc::SIGTERM);
    let status = a
        .proc
        .wait(Duration::from_secs(5))
        .expect("stops on SIGTERM");
    assert!(status.success(), "{what}: {status:?}");
    a.early
}

/// node_exporter's `node_cpu_isolated`: 1 for each CPU the tree isolates,
/// none for the others.
#[test]
fn the_agent_marks_a_trees_isolated_cpus() {
    let (p, s) = fixtures::roots("cpu256-irq3000");
    let (p, s) = (p.display().to_string(), s.display().to_string());
    let a = agent(
        "",
        &["--backend", "procfs", "--proc-root", &p, "--sys-root", &s],
    );
    let body = get(a.addr, "/metrics", None).body;
    let marked: Vec<(u32, f64)> = body
        .lines()
        .filter_map(|l| {
            let (cpu, v) = l
                .strip_prefix("node_cpu_isolated{cpu=\"")?
                .split_once("\"} ")?;
            Some((cpu.parse().ok()?, v.parse().ok()?))
        })
        .collect();
    assert_eq!(
        marked,
        (8..16).map(|c| (c, 1.0)).collect::<Vec<_>>(),
        "{body}"
    );
    assert!(body.contains("# TYPE node_cpu_isolated gauge"), "{body}");
}

#[test]
fn every_file_of_a_tree_removed_in_turn_leaves_stat_and_the_agent_running() {
    let files = files();
    assert!(files.len() > 15, "{files:?}");
    for f in &files {
        let t = fixtures::Tree::copy_of("this-machine");
        std::fs::remove_file(t.proc_root().parent().unwrap().join(f)).unwrap();
        let out = run_on(&t, &["stat", "--format", "json"]);
        assert_ok(&out);
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["topology"]["online"], "0-1", "without {f}");
        agent_runs_on(&t, &format!("without {f}"), source_of(f));
    }
}

#[test]
fn an_empty_tree_leaves_the_agent_running_and_stat_says_the_root_is_wrong() {
    let t = fixtures::Tree::empty();
    let log = agent_runs_on(&t, "empty tree", Some(("meminfo", "meminfo")));
    assert!(
        log.iter().any(|l| l.contains("CPU topology unknown")),
        "{log:#?}"
    );
    let out = run_on(&t, &["stat"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("nor any other source"));
}

/// The agent on the `linux-future` tree (a bond, software RAID, hardware
/// sensors, DMI, cpufreq, thermal zones, odd mounts, textfiles): the
/// families under node_exporter's names, with the tree's exact values.
#[test]
fn a_tree_with_hardware_gives_node_exporters_families_with_exact_values() {
    let base = fixtures::dir().join("linux-future");
    let path = |p: &str| base.join(p).display().to_string();
    let (p, s, rootfs, textfile, udev) = (
        path("proc"),
        path("sys"),
        path("rootfs"),
        path("textfile"),
        path("rootfs/run/udev/data"),
    );
    let a = agent(
        "",
        &[
            "--backend",
            "procfs",
            "--proc-root",
            &p,
            "--sys-root",
            &s,
            "--path.rootfs",
            &rootfs,
            "--collector.textfile.directory",
            &textfile,
            "--path.udev.data",
            &udev,
            "--collector.buddyinfo",
            "--collector.zoneinfo",
            "--collector.slabinfo",
            "--collector.ksmd",
            "--collector.cpu.info",
        ],
    );
    let body = get(a.addr, "/metrics", None).body;
    let value = |series: &str| -> Option<f64> {
        body.lines()
            .find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
    };
    for (series, want) in [
        (
            r#"node_hwmon_temp_celsius{chip="platform_coretemp_0",sensor="temp1"}"#,
            45.0,
        ),
        (
            r#"node_hwmon_temp_crit_celsius{chip="platform_coretemp_0",sensor="temp1"}"#,
            100.0,
        ),
        (
            r#"node_hwmon_sensor_label{chip="platform_coretemp_0",sensor="temp1",label="Package id 0"}"#,
            1.0,
        ),
        (
            r#"node_hwmon_chip_names{chip="platform_nct6775_656",chip_name="nct6775"}"#,
            1.0,
        ),
        (
            r#"node_hwmon_fan_rpm{chip="platform_nct6775_656",sensor="fan2"}"#,
            1200.0,
        ),
        (
            r#"node_hwmon_in_volts{chip="platform_nct6775_656",sensor="in0"}"#,
            1.04,
        ),
        (
            r#"node_hwmon_temp_celsius{chip="hwmon2",sensor="temp1"}"#,
            30.0,
        ),
        (r#"node_md_disks{device="md127",state="failed"}"#, 1.0),
        (r#"node_md_state{device="md127",state="recovering"}"#, 1.0),
        (r#"node_md_blocks_synced{device="md127"}"#, 26547712.0),
        (r#"node_bonding_slaves{master="bond0"}"#, 2.0),
        (r#"node_bonding_active{master="bond0"}"#, 1.0),
        (r#"node_cpu_scaling_frequency_hertz{cpu="0"}"#, 1.2e9),
        (r#"node_cpu_frequency_hertz{cpu="0"}"#, 2.4e9),
        (
            r#"node_cpu_scaling_governor{cpu="1",governor="performance"}"#,
            1.0,
        ),
        (
            r#"node_thermal_zone_temp{zone="0",type="x86_pkg_temp"}"#,
            45.0,
        ),
        (
            r#"node_cooling_device_max_state{name="0",type="Processor"}"#,
            10.0,
        ),
        (
            r#"node_network_speed_bytes{device="enp1s0"}"#,
            25000.0 * 125000.0,
        ),
        (
            r#"node_filesystem_readonly{device="/dev/vdb",fstype="xfs",mountpoint="/data"}"#,
            1.0,
        ),
        (
            r#"node_filesystem_device_error{device="server:/export",fstype="nfs4",mountpoint="/mnt/gone"}"#,
            1.0,
        ),
        (
            r#"node_os_version{id="future",id_like="debian ubuntu",name="Future Linux"}"#,
            26.1,
        ),
        ("node_selinux_current_mode", 1.0),
        ("node_selinux_config_mode", 1.0),
        (r#"node_arp_entries{device="bond0"}"#, 2.0),
        (r#"node_udp_queues{ip="v4",queue="rx"}"#, 2560.0),
        ("node_nf_conntrack_stat_found", 48.0),
        ("node_nf_conntrack_entries", 1234.0),
        (
            r#"node_memory_numa_MemTotal{node="0"}"#,
            11102412.0 * 1024.0,
        ),
        (r#"node_memory_numa_numa_miss_total{node="0"}"#, 3.0),
        ("node_textfile_scrape_error", 1.0),
        (r#"backup_age_seconds{note="plain",target="home"}"#, 3600.0),
        (
            r#"node_buddyinfo_blocks{node="1",zone="Normal",size="12"}"#,
            6.0,
        ),
        (
            r#"node_zoneinfo_high_pages{node="0",zone="Normal"}"#,
            19316.0,
        ),
        (
            r#"node_zoneinfo_numa_miss_total{node="1",zone="Normal"}"#,
            3.0,
        ),
        (
            r#"node_zoneinfo_protection_5{node="0",zone="DMA"}"#,
            12747.0,
        ),
        (
            r#"node_zoneinfo_nr_inactive_anon_pages{node="1",zone="Normal"}"#,
            77.0,
        ),
        (
            r#"node_slabinfo_object_size_bytes{slab="task_struct"}"#,
            10368.0,
        ),
        (r#"node_slabinfo_active_objects{slab="task_struct"}"#, 911.0),
        ("node_ksmd_full_scans_total", 7.0),
        ("node_ksmd_sleep_seconds", 0.2),
        ("node_kernel_hung_tasks_total", 2.0),
        ("node_processes_max_processes", 4194304.0),
        ("node_processes_max_threads", 1545243.0),
        (
            r#"node_power_supply_voltage_volt{power_supply="BAT0"}"#,
            12.087,
        ),
        (
            r#"node_power_supply_charge_ampere{power_supply="BAT0"}"#,
            3.845,
        ),
        (
            r#"node_power_supply_temp_celsius{power_supply="BAT0"}"#,
            29.6,
        ),
        (r#"node_power_supply_online{power_supply="AC"}"#, 1.0),
        (r#"node_watchdog_timeleft_seconds{name="watchdog0"}"#, 27.0),
        (
            r#"node_edac_csrow_correctable_errors_total{controller="0",csrow="unknown"}"#,
            1.0,
        ),
        (
            r#"node_edac_csrow_correctable_errors_total{controller="0",csrow="0"}"#,
            2.0,
        ),
        (
            r#"node_tape_write_time_seconds_total{device="st0"}"#,
            5233.597394395,
        ),
        (r#"node_fibrechannel_nos_total{fc_host="host0"}"#, 18.0),
        (
            r#"node_infiniband_rate_bytes_per_second{device="mlx4_0",port="1"}"#,
            5e9,
        ),
        (
            r#"node_infiniband_port_data_received_bytes_total{device="mlx4_0",port="2"}"#,
            2221223609.0 * 4.0,
        ),
        (r#"node_xfs_read_calls_total{device="sda1"}"#, 120.0),
        (r#"node_xfs_write_calls_total{device="sda1"}"#, 40.0),
        (
            r#"node_xfs_inode_operation_attribute_changes_total{device="sda1"}"#,
            4.0,
        ),
        (r#"node_xfs_vnode_remove_total{device="sda1"}"#, 2.0),
        (
            r#"node_btrfs_size_bytes{uuid="7f4b8a3c-1d2e-4f5a-9b6c-0d1e2f3a4b5c",block_group_type="metadata",mode="raid1"}"#,
            268435456.0,
        ),
        (
            r#"node_btrfs_allocation_ratio{uuid="7f4b8a3c-1d2e-4f5a-9b6c-0d1e2f3a4b5c",block_group_type="data",mode="raid1"}"#,
            2.0,
        ),
        (
            r#"node_btrfs_reserved_bytes{uuid="7f4b8a3c-1d2e-4f5a-9b6c-0d1e2f3a4b5c",block_group_type="metadata"}"#,
            65536.0,
        ),
        (
            r#"node_nfs_requests_total{proto="3",method="GetAttr"}"#,
            4084749.0,
        ),
        (r#"node_nfs_requests_total{proto="4",method="Null"}"#, 1.0),
        (r#"node_nfs_packets_total{protocol="tcp"}"#, 18628.0),
        ("node_nfs_rpcs_total", 4329785.0),
        ("node_nfsd_disk_bytes_read_total", 157286400.0),
        ("node_nfsd_server_threads", 8.0),
        ("node_nfsd_read_ahead_cache_size_blocks", 32.0),
        (
            r#"node_nfsd_requests_total{proto="4",method="GetAttr"}"#,
            8179.0,
        ),
        (
            r#"node_nfsd_requests_total{proto="4",method="PutFH"}"#,
            9609.0,
        ),
        // Operations 35 and 36 (include/linux/nfs4.h's nfs_opnum4), then
        // VERIFY at 37.
        (
            r#"node_nfsd_requests_total{proto="4",method="SetClientID"}"#,
            3.0,
        ),
        (
            r#"node_nfsd_requests_total{proto="4",method="SetClientIDConfirm"}"#,
            3.0,
        ),
        (
            r#"node_nfsd_requests_total{proto="4",method="Verify"}"#,
            0.0,
        ),
        (
            r#"node_nfsd_requests_total{proto="3",method="Lookup"}"#,
            2719.0,
        ),
        (r#"node_nfsd_rpc_errors_total{error="cInt"}"#, 0.0),
        ("node_ipvs_incoming_bytes_total", 89991519156915.0),
        (
            r#"node_ipvs_backend_connections_active{local_address="192.168.0.22",local_port="3306",remote_address="192.168.82.22",remote_port="3306",proto="TCP",local_mark=""}"#,
            248.0,
        ),
        (
            r#"node_ipvs_backend_weight{local_address="2620::1",local_port="80",remote_address="2620::2",remote_port="80",proto="TCP",local_mark=""}"#,
            1.0,
        ),
        // A firewall-mark service: no address or port, its mark.
        (
            r#"node_ipvs_backend_connections_inactive{local_address="",local_port="0",remote_address="192.168.50.26",remote_port="3306",proto="FWM",local_mark="10001000"}"#,
            1.0,
        ),
        ("node_zfs_arc_hits", 8772612.0),
        ("node_zfs_zil_zil_commit_count", 10.0),
        (r#"node_zfs_zpool_nwritten{zpool="tank"}"#, 3206144.0),
        (
            r#"node_zfs_zpool_dataset_nread{zpool="tank",dataset="tank/home"}"#,
            512.0,
        ),
        (r#"node_zfs_zpool_state{zpool="tank",state="online"}"#, 1.0),
        (r#"node_zfs_zpool_state{zpool="tank",state="faulted"}"#, 0.0),
        (
            r#"node_bcache_dirty_data_bytes{uuid="deaddd54-c735-46d5-868e-f331c5fd7c74",backing_device="bdev0"}"#,
            1150976.0,
        ),
        (
            r#"node_bcache_dirty_target_bytes{uuid="deaddd54-c735-46d5-868e-f331c5fd7c74",backing_device="bdev0"}"#,
            21894266880.0,
        ),
        (
            r#"node_bcache_writeback_rate_integral_term{uuid="deaddd54-c735-46d5-868e-f331c5fd7c74",backing_device="bdev0"}"#,
            -2048.0,
        ),
        (
            r#"node_bcache_cache_hits_total{uuid="deaddd54-c735-46d5-868e-f331c5fd7c74",backing_device="bdev0"}"#,
            546.0,
        ),
        (
            r#"node_bcache_metadata_written_bytes_total{uuid="deaddd54-c735-46d5-868e-f331c5fd7c74",cache_device="cache0"}"#,
            512.0,
        ),
        (
            r#"node_bcache_btree_read_average_duration_seconds{uuid="deaddd54-c735-46d5-868e-f331c5fd7c74"}"#,
            1305e-9,
        ),
        (
            r#"node_bcache_cache_available_percent{uuid="deaddd54-c735-46d5-868e-f331c5fd7c74"}"#,
            100.0,
        ),
        // Without a mount to ask (a tree, not a machine): sysfs's size.
        (
            r#"node_btrfs_device_size_bytes{uuid="7f4b8a3c-1d2e-4f5a-9b6c-0d1e2f3a4b5c",device="sdc"}"#,
            20971520.0 * 512.0,
        ),
    ] {
        assert_eq!(value(series), Some(want), "{series}");
    }
    for needle in [
        r#"node_network_info{device="enp1s0",address="52:54:00:12:34:56",broadcast="ff:ff:ff:ff:ff:ff",duplex="full",operstate="up",adminstate="up",ifalias="uplink to rack 7"} 1"#,
        r#"node_dmi_info{bios_vendor="SeaBIOS",bios_version="rel-1.16.3",product_name="Standard PC (Q35 + ICH9, 2009)",system_vendor="QEMU"} 1"#,
        r#"node_disk_info{device="vda",major="254",minor="0",path="pci-0000:00:04.0",wwn="0x5000c500a1b2c3d4",model="QEMU_HARDDISK",serial="QM00001",revision="2.5+",rotational="0"} 1"#,
        r#"node_filesystem_size_bytes{device="/dev/vdc",fstype="ext4",mountpoint="/srv/my disk"}"#,
        r#"node_cpu_info{package="",core="",cpu="1",vendor="",family="",model="",model_name="",microcode="",stepping="",cachesize=""} 1"#,
        r#"node_nvme_info{device="nvme0",firmware_revision="1B2QGXA7",model="Samsung SSD 980 PRO 1TB",serial="S5GXNF0R123456",state="live",cntlid=""} 1"#,
        r#"node_power_supply_info{power_supply="BAT0",capacity_level="Normal",manufacturer="SMP",model_name="5B10W138",serial_number="1234",status="Discharging",technology="Li-ion",type="Battery"} 1"#,
        r#"node_watchdog_info{name="watchdog0",options="0x8180",identity="iTCO_wdt",state="active",status="0x8000",pretimeout_governor=""} 1"#,
        r#"node_fibrechannel_info{fc_host="host0",speed="16 Gbit","#,
    ] {
        assert!(body.contains(needle), "{needle} not in the scrape");
    }
    // RAPL zones as node_exporter names them: `package-1` is package 1, a
    // second `dram` is dram 1; the control type `intel-rapl` is no zone.
    let rapl = format!("{}/class/powercap", s);
    for (zone, index, dir, joules) in [
        ("package", 0, "intel-rapl:0", "240422.366267"),
        ("package", 1, "intel-rapl:1", "101"),
        ("dram", 0, "intel-rapl:0:1", "21446.578934"),
        ("dram", 1, "intel-rapl:1:0", "2"),
        ("core", 0, "intel-rapl:0:0", "118821.284256"),
    ] {
        let line = format!(
            r#"node_rapl_{zone}_joules_total{{index="{index}",path="{rapl}/{dir}"}} {joules}"#
        );
        assert!(body.contains(&line), "{line} not in the scrape");
    }
    assert!(!body.contains("intel-rapl\""));
    // ZFS statistics are untyped, as node_exporter's.
    assert!(body.contains("# TYPE node_zfs_arc_hits untyped"));
    // node_exporter leaves the server's Null procedures out.
    assert!(!body.contains(r#"node_nfsd_requests_total{proto="3",method="Null"}"#));
    // A counter the HBA does not implement (all ones) is left out.
    assert!(!body.contains("node_fibrechannel_dumped_frames_total"));
    // A port counter the adapter cannot read (`N/A (no PMA)`) is left out.
    assert!(!body.contains("node_infiniband_multicast_packets_received_total"));
    // A kernel without ksm's pages_volatile: that family alone is absent.
    assert!(body.contains("node_ksmd_pages_unshared 300"));
    assert!(!body.contains("node_ksmd_pages_volatile"));
    // Every collector of the tree succeeds.
    let failed: Vec<&str> = body
        .lines()
        .filter(|l| {
            l.starts_with("node_scrape_collector_success{")
                && l.rsplit(' ').next().and_then(|v| v.parse::<f64>().ok()) == Some(0.0)
        })
        .collect();
    assert!(failed.is_empty(), "{failed:#?}");
}

/// An agent reading the tree of 4,096 CPUs.
fn cpu4096_agent() -> Agent {
    let base = fixtures::dir().join("cpu4096");
    agent(
        "",
        &[
            "--proc-root",
            base.join("proc").to_str().unwrap(),
            "--sys-root",
            base.join("sys").to_str().unwrap(),
        ],
    )
}

/// The series of an exposition's text: each sample line without its value.
fn series(body: &str) -> Vec<&str> {
    body.lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| l.rsplit_once(' ').map_or(l, |(k, _)| k))
        .collect()
}

/// cpu4096's answer is megabytes, so it streams. A client that waits
/// before it reads leaves the encoder no room: the chunks it offered then
/// are held and sent later, none dropped and none twice, so the late
/// reader gets every series the prompt one got, in the same order.
#[test]
fn a_streamed_answer_read_late_has_every_series() {
    let a = cpu4096_agent();
    // The first answer may come before every source was read once.
    get(a.addr, "/metrics", None);
    let prompt = get(a.addr, "/metrics", None).body;
    assert!(prompt.len() > 1 << 20, "streams: {} bytes", prompt.len());
    let mut s = std::net::TcpStream::connect(a.addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    s.write_all(format!("GET /metrics HTTP/1.0\r\nHost: {}\r\n\r\n", a.addr).as_bytes())
        .unwrap();
    std::thread::sleep(Duration::from_secs(2));
    let mut raw = String::new();
    s.read_to_string(&mut raw).unwrap();
    let late = raw.split_once("\r\n\r\n").unwrap().1;
    let (p, l) = (series(&prompt), series(late));
    if let Some(i) = (0..p.len().min(l.len())).find(|&i| p[i] != l[i]) {
        panic!(
            "series {i} differs: {:?} read promptly, {:?} read late",
            p[i], l[i]
        );
    }
    assert_eq!(p.len(), l.len(), "series read promptly and late");
}

/// A tree of 4,096 CPUs read on this machine: the agent reports the tree,
/// but places itself by this machine's own CPUs (a tree is only what is
/// read, never what the agent acts on).
#[test]
fn placement_follows_the_running_machine_not_the_tree() {
    let online = std::fs::read_to_string("/sys/devices/system/cpu/online")
        .unwrap()
        .trim()
        .to_string();
    let a = cpu4096_agent();
    let said = a
        .early
        .iter()
        .find(|l| l.contains("running on housekeeping CPUs"))
        .unwrap_or_else(|| panic!("{:#?}", a.early));
    assert!(said.ends_with(&format!("(online {online})")), "{said}");
    let status = std::fs::read_to_string(format!("/proc/{}/status", a.proc.id())).unwrap();
    let allowed = status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .unwrap()
        .trim()
        .to_string();
    let real = procfs::cpu::CpuList::parse(&online).unwrap();
    let pinned = procfs::cpu::CpuList::parse(&allowed).unwrap();
    assert!(
        pinned.cpus().iter().all(|c| real.cpus().contains(c)),
        "pinned to {allowed}, online {online}"
    );
    // The tree is still what is served: its 4,096 CPUs.
    let body = get(a.addr, "/metrics", None).body;
    assert!(
        body.contains("node_cpu_seconds_total{cpu=\"4095\""),
        "the tree's CPUs are served"
    );
}

/// `ps` on a tree with one process file it cannot read and one without
/// its final newline: every other process is listed, the one left out is
/// counted on stderr, the other read whole.
#[test]
fn ps_lists_every_readable_process_and_counts_the_rest() {
    let t = fixtures::Tree::empty();
    let stat = |pid: u32, comm: &str| {
        format!(
            "{pid} ({comm}) S 1 {pid} {pid} 0 -1 4194560 100 0 0 0 5 3 0 0 20 0 1 0 {} 10000000 200 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0",
            100 + pid
        )
    };
    t.proc_file("10/stat", format!("{}\n", stat(10, "good")));
    t.proc_file("11/stat", stat(11, "nonewline"));
    t.proc_file("12/stat", "12 (bad) S not a stat line\n");
    t.proc_file("stat", "cpu  1 2 3 4\nbtime 1700000000\n");
    let out = run_on(&t, &["ps", "--backend", "procfs", "--fields", "pid,comm"]);
    assert_ok(&out);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("good") && text.contains("nonewline"),
        "{text}"
    );
    assert!(!text.contains("bad"), "{text}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("1 processes left out") && err.contains("12/stat"),
        "{err}"
    );

    // The agent on the same tree: the table is served, the process left
    // out counted and said once.
    let (p, s) = roots(&t);
    let a = agent(
        "[sources.processes]\ninterval = \"1s\"\n",
        &["--proc-root", &p, "--sys-root", &s, "--backend", "procfs"],
    );
    let unreadable = || {
        get(a.addr, "/metrics", None).body.lines().find_map(|l| {
            l.strip_prefix("quietstat_process_unreadable_total ")?
                .parse::<f64>()
                .ok()
        })
    };
    assert!(wait_for(Duration::from_secs(10), || unreadable()
        .is_some_and(|v| v >= 1.0)));
    let mut log = a.early.clone();
    while let Ok(l) = a.log.recv_timeout(Duration::from_millis(200)) {
        log.push(l);
    }
    let said: Vec<_> = log
        .iter()
        .filter(|l| l.contains("processes left out"))
        .collect();
    assert_eq!(said.len(), 1, "{log:#?}");
    assert!(said[0].contains("12/stat"), "{}", said[0]);
}

/// A meminfo with one line the agent cannot read: every other line is
/// served with the file's value, the line is counted at each read, and
/// the first is logged once.
#[test]
fn a_bad_line_is_left_out_counted_and_logged_once() {
    let t = fixtures::Tree::copy_of("this-machine");
    let path = t.proc_root().join("meminfo");
    let good = std::fs::read_to_string(&path).unwrap();
    let total: f64 = good
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.trim().strip_suffix("kB")?.trim().parse().ok())
        .unwrap();
    let (first, rest) = good.split_once('\n').unwrap();
    std::fs::write(&path, format!("{first}\nMemBogus:   12x kB\n{rest}")).unwrap();
    let (p, s) = roots(&t);
    let a = agent(
        "",
        &["--backend", "procfs", "--proc-root", &p, "--sys-root", &s],
    );
    // Three reads at least (meminfo is read every second).
    std::thread::sleep(Duration::from_millis(2500));
    let r = get(a.addr, "/metrics", None);
    let v = |series: &str| -> Option<f64> {
        r.body
            .lines()
            .find_map(|l| l.strip_prefix(series)?.trim().parse().ok())
    };
    assert_eq!(v("node_memory_MemTotal_bytes"), Some(total * 1024.0));
    assert_eq!(v("quietstat_source_up{source=\"meminfo\"}"), Some(1.0));
    let errors = v("quietstat_source_errors_total{source=\"meminfo\"}").unwrap();
    assert!(errors >= 3.0, "{errors}");
    assert_eq!(
        v("quietstat_source_errors_total{source=\"vmstat\"}"),
        Some(0.0)
    );
    assert!(!r.body.contains("MemBogus"));
    let logged: Vec<String> = a.early.iter().cloned().chain(a.log.try_iter()).collect();
    let said: Vec<&String> = logged
        .iter()
        .filter(|l| l.contains("meminfo: lines that could not be read were left out"))
        .collect();
    assert_eq!(said.len(), 1, "{logged:#?}");
    assert!(said[0].contains("line 2"), "{}", said[0]);
    // stat says so too, and shows the memory figures.
    let out = run_on(&t, &["stat"]);
    assert_ok(&out);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("warning: meminfo: lines that could not be read were left out"),
        "{err}"
    );
    assert!(
        !err.contains("meminfo:") || !err.contains("failed"),
        "{err}"
    );
}

/// node_exporter's device filters: the default leaves partitions and
/// pseudo-devices out; an exclusion replaces it; an inclusion serves only
/// what it names; both at once are refused by name.
#[test]
fn device_filters_choose_the_disks_and_interfaces_served() {
    let (p, s) = fixtures::roots("this-machine");
    let (p, s) = (p.display().to_string(), s.display().to_string());
    let served = |extra: &[&str]| -> (Vec<String>, Vec<String>) {
        let mut args = vec!["--backend", "procfs", "--proc-root", &p, "--sys-root", &s];
        args.extend(extra);
        let a = agent("", &args);
        let body = get(a.addr, "/metrics", None).body;
        let names = |family: &str, label: &str| -> Vec<String> {
            let mut v: Vec<String> = body
                .lines()
                .filter(|l| l.starts_with(family))
                .filter_map(|l| {
                    let at = l.find(&format!("{label}=\""))? + label.len() + 2;
                    Some(l[at..].split('"').next()?.to_string())
                })
                .collect();
            v.sort();
            v.dedup();
            v
        };
        (
            names("node_disk_reads_completed_total{", "device"),
            names("node_network_receive_bytes_total{", "device"),
        )
    };
    let (disks, nets) = served(&[]);
    assert_eq!(disks, ["vda", "zram0"]);
    assert_eq!(nets, ["eth0", "ifb0", "ifb1", "lo"]);
    let (disks, nets) = served(&[
        "--collector.diskstats.device-exclude",
        "^zram",
        "--collector.netdev.device-exclude",
        "^(lo|ifb\\d+)$",
    ]);
    assert_eq!(
        disks,
        [
            "loop0", "loop1", "loop2", "loop3", "loop4", "loop5", "loop6", "loop7", "vda"
        ]
    );
    assert_eq!(nets, ["eth0"]);
    let (disks, nets) = served(&[
        "--collector.diskstats.device-include",
        "^vd",
        "--collector.netdev.device-include",
        "^eth",
    ]);
    assert_eq!(
        (disks, nets),
        (vec!["vda".to_string()], vec!["eth0".to_string()])
    );
    let out = run_on(
        &fixtures::Tree::copy_of("this-machine"),
        &[
            "agent",
            "--print-config",
            "--collector.netdev.device-include=^eth",
            "--collector.netdev.device-exclude=^lo$",
        ],
    );
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("netdev_device_exclude and netdev_device_include"),
        "{err}"
    );
}

/// The cgroups of a tree under cAdvisor's names, for the cgroups at most
/// two levels below the root; the pod and its container, deeper, are not.
#[test]
fn the_agent_serves_a_trees_cgroups_under_cadvisors_names() {
    let (p, s) = fixtures::roots("cgroup-v2");
    let (p, s) = (p.display().to_string(), s.display().to_string());
    let a = agent(
        "[sources.cgroups]\nenabled = true\n",
        &["--backend", "procfs", "--proc-root", &p, "--sys-root", &s],
    );
    let body = get(a.addr, "/metrics", None).body;
    let value = |line: &str| -> Option<f64> {
        body.lines()
            .find_map(|l| l.strip_prefix(line)?.strip_prefix(' ')?.parse().ok())
    };
    let sys = "{id=\"/system.slice\"}";
    assert_eq!(
        value(&format!("container_cpu_usage_seconds_total{sys}")),
        Some(0.0103),
        "{body}"
    );
    assert_eq!(
        value(&format!("container_memory_usage_bytes{sys}")),
        Some(163_840.0)
    );
    assert_eq!(
        value(&format!("container_memory_working_set_bytes{sys}")),
        Some(143_360.0)
    );
    assert_eq!(
        value(&format!("container_fs_reads_bytes_total{sys}")),
        Some(45_056.0)
    );
    assert_eq!(
        value(&format!(
            "container_pressure_memory_waiting_seconds_total{sys}"
        )),
        Some(0.002)
    );
    assert_eq!(
        value("container_spec_cpu_quota{id=\"/kubepods.slice\"}"),
        Some(200_000.0)
    );
    assert_eq!(
        value(
            "container_memory_failures_total{id=\"/system.slice\",failure_type=\"pgmajfault\",scope=\"hierarchy\"}"
        ),
        Some(10.0)
    );
    assert!(body.contains(
        "# HELP container_cpu_usage_seconds_total Cumulative cpu time consumed in seconds."
    ));
    assert_eq!(value("quietstat_cgroups"), Some(8.0));
    assert_eq!(value("quietstat_cgroups_exported"), Some(6.0));
    assert!(
        !body.contains("kubepods-burstable-pod"),
        "deeper than two levels: {body}"
    );
    assert_eq!(value("quietstat_source_up{source=\"cgroups\"}"), Some(1.0));

    // The view file beside the snapshot holds the same read, every cgroup,
    // once a viewer reads the process file.
    shm::view::read_live_procs(&a.shm).unwrap();
    let path = shm::view::cgroups_path(&a.shm);
    assert!(wait_for(Duration::from_secs(30), || {
        shm::view::cgroups_mono_ns(&path).is_ok_and(|t| t.is_some())
    }));
    let v = shm::view::read_cgroups(&path).unwrap();
    assert_eq!(v.cgroups.len(), 8);
    assert_eq!(v.meta.agent_pid, a.proc.id());
    let slice = v
        .cgroups
        .iter()
        .find(|c| &*c.path == "/system.slice")
        .unwrap();
    assert_eq!(
        slice.figures.get(cgroups::Figure::CpuUsageNs),
        Some(10_300_000)
    );
}

/// Cgroups chosen by `[cgroup_metrics]`: the pod and its container by
/// expression, at any depth, labelled with the ids their paths name;
/// `depth` and `max` cut the rest.
#[test]
fn the_agent_exports_the_cgroups_chosen_with_their_container_and_pod_ids() {
    let (p, s) = fixtures::roots("cgroup-v2");
    let (p, s) = (p.display().to_string(), s.display().to_string());
    let args = ["--backend", "procfs", "--proc-root", &p, "--sys-root", &s];
    let a = agent(
        "[sources.cgroups]\nenabled = true\n[cgroup_metrics]\ndepth = 1\npaths = \"^/kubepods\"\n",
        &args,
    );
    let body = get(a.addr, "/metrics", None).body;
    let value = |line: &str| -> Option<f64> {
        body.lines()
            .find_map(|l| l.strip_prefix(line)?.strip_prefix(' ')?.parse().ok())
    };
    let pod = "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod0f1e2d3c_4b5a_6978_8796_a5b4c3d2e1f0.slice";
    let uid = "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0";
    let hex = "4f3c2b1a0e9d8c7b6a5f4e3d2c1b0a9f8e7d6c5b4a3f2e1d0c9b8a7f6e5d4c3b";
    assert_eq!(
        value(&format!(
            "container_memory_usage_bytes{{id=\"{pod}\",pod_uid=\"{uid}\"}}"
        )),
        Some(196_608.0),
        "{body}"
    );
    assert_eq!(
        value(&format!(
            "container_memory_usage_bytes{{id=\"{pod}/cri-containerd-{hex}.scope\",container_id=\"containerd://{hex}\",pod_uid=\"{uid}\"}}"
        )),
        Some(131_072.0),
        "{body}"
    );
    assert!(
        value("container_memory_usage_bytes{id=\"/system.slice\"}").is_some(),
        "{body}"
    );
    assert!(
        !body.contains("cron.service"),
        "deeper than one level: {body}"
    );
    // All but cron.service.
    assert_eq!(value("quietstat_cgroups_exported"), Some(7.0));

    // At most two, parents first.
    let a = agent(
        "[sources.cgroups]\nenabled = true\n[cgroup_metrics]\nmax = 2\n",
        &args,
    );
    let body = get(a.addr, "/metrics", None).body;
    let ids: std::collections::BTreeSet<&str> = body
        .lines()
        .filter(|l| l.starts_with("container_"))
        .filter_map(|l| l.split('"').nth(1))
        .collect();
    assert_eq!(
        ids,
        ["/", "/kubepods.slice"].into_iter().collect(),
        "{body}"
    );

    // A bad expression or depth is refused, naming the key.
    for (config, key) in [
        ("[cgroup_metrics]\npaths = \"(\"\n", "cgroup_metrics.paths"),
        ("[cgroup_metrics]\ndepth = 33\n", "cgroup_metrics.depth"),
        ("[cgroup_metrics]\nmax = 0\n", "cgroup_metrics.max"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("agent.toml");
        std::fs::write(&path, config).unwrap();
        let out = quietstat()
            .args(["agent", "--print-config", "--config"])
            .arg(&path)
            .output()
            .unwrap();
        assert!(!out.status.success(), "{config}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(key), "{err}");
    }
}

/// The JSON API's cgroups: counts by default; with process rows allowed,
/// every cgroup with its figures and the ids its path names.
#[test]
fn the_json_api_lists_cgroups_only_when_process_rows_are_allowed() {
    let (p, s) = fixtures::roots("cgroup-v2");
    let (p, s) = (p.display().to_string(), s.display().to_string());
    let args = ["--backend", "procfs", "--proc-root", &p, "--sys-root", &s];
    let cgroups = |config: &str| -> serde_json::Value {
        let a = agent(config, &args);
        let r = get(a.addr, "/api/v1/snapshot?sources=cgroups", None);
        assert_eq!(r.status, 200, "{}", r.body);
        let v: serde_json::Value = serde_json::from_str(&r.body).unwrap();
        v["sources"]["cgroups"].clone()
    };
    let on = "[sources.cgroups]\nenabled = true\n";
    let c = cgroups(on);
    assert_eq!(c["count"], 8, "{c}");
    assert!(c["rows"].is_null(), "{c}");
    let c = cgroups(&format!("http_process_rows = true\n{on}"));
    let rows = c["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 8, "{c}");
    let row = |path: &str| {
        rows.iter()
            .find(|r| r["path"].as_str().is_some_and(|p| p.ends_with(path)))
            .unwrap_or_else(|| panic!("{path}: {c}"))
    };
    let sys = row("/system.slice");
    assert_eq!(sys["figures"]["cpu_usage_ns"], 10_300_000, "{sys}");
    assert_eq!(sys["depth"], 1);
    assert!(sys["container_id"].is_null() && sys["pod_uid"].is_null());
    let scope = row(".scope");
    assert_eq!(scope["depth"], 4);
    assert_eq!(
        scope["container_id"],
        "containerd://4f3c2b1a0e9d8c7b6a5f4e3d2c1b0a9f8e7d6c5b4a3f2e1d0c9b8a7f6e5d4c3b"
    );
    assert_eq!(scope["pod_uid"], "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0");
}
