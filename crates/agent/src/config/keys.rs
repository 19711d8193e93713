//! The configuration's keys, one row each: the name in the file, the
//! command-line flag (the name `--help` shows, then its other names,
//! node_exporter's among them), the kind of value with its default and range, and the line
//! that describes it. From the rows come the file's structure
//! ([`FileConfig`]), the effective configuration ([`Config`]), the merge
//! of the command line over the file, the checks and their errors,
//! `--print-config`, the agent's flags and `--help`, and the sample in
//! docs/agent.md. A key is one row here plus its use.

use std::time::Duration;

use super::kinds::*;
use super::sources::SourceTable;
use super::{ConfigError, ProcessMetricsMode, SendOrder, SortKey};

/// A flag that sets a key: made into a command-line option by the CLI.
pub struct Flag<F> {
    /// The key it sets.
    pub key: &'static str,
    /// Its long names without the dashes: the first is shown, the rest are
    /// aliases.
    pub names: &'static [&'static str],
    /// The value's placeholder in `--help` ("" for a switch).
    pub value_name: &'static str,
    pub doc: &'static str,
    /// The default as `--print-config` writes it; `None` when empty.
    pub default: Option<String>,
    pub shape: Shape,
    /// Sets the key from each value given, in order.
    pub set: fn(&mut F, &[String]) -> Result<(), ConfigError>,
}

macro_rules! or_empty {
    () => {
        ""
    };
    ($v:literal) => {
        $v
    };
}

/// A table of keys: `File => Out { rows }`. Each row is
/// `/// doc` `name: Kind = default-kind[, flag "name" | "alias" as "VALUE"];`.
macro_rules! section {
    (
        $(#[doc = $fdoc:literal])*
        $file:ident =>
        $(#[doc = $odoc:literal])*
        $out:ident {
            $(
                $(#[doc = $doc:literal])+
                $name:ident : $kind:ty = $make:expr
                $(, flag $flag:literal $(| $alias:literal)* $(as $vn:literal)?)?
                ;
            )*
        }
    ) => {
        $(#[doc = $fdoc])*
        #[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        pub struct $file {
            $(
                $(#[doc = $doc])+
                #[serde(skip_serializing_if = "Option::is_none")]
                pub $name: Option<<$kind as Kind>::File>,
            )*
        }

        $(#[doc = $odoc])*
        #[derive(Debug, Clone, PartialEq)]
        pub struct $out {
            $(
                $(#[doc = $doc])+
                pub $name: <$kind as Kind>::Out,
            )*
        }

        impl Section for $file {
            type Out = $out;

            fn apply(&mut self, over: &Self) {
                $({
                    let k: $kind = $make;
                    k.merge(&mut self.$name, &over.$name);
                })*
            }

            fn resolve_in(&self, prefix: &str) -> Result<$out, ConfigError> {
                Ok($out {
                    $($name: {
                        let k: $kind = $make;
                        k.resolve(&key_path(prefix, stringify!($name)), self.$name.as_ref())?
                    },)*
                })
            }

            fn print(out: &$out) -> Self {
                $file {
                    $($name: {
                        let k: $kind = $make;
                        k.print(&out.$name)
                    },)*
                }
            }

            fn keys(prefix: &str) -> Vec<KeyDoc> {
                let mut v = Vec::new();
                $({
                    let path = key_path(prefix, stringify!($name));
                    let k: $kind = $make;
                    let below = k.keys(&path);
                    v.push(KeyDoc { path, doc: concat!($($doc),+).trim_ascii() });
                    v.extend(below);
                })*
                v
            }
        }

        impl $file {
            /// The flags that set this table's keys.
            pub fn flags() -> Vec<Flag<$file>> {
                #[allow(unused_mut)]
                let mut v = Vec::new();
                $({
                    let _doc: &'static str = concat!($($doc),+).trim_ascii();
                    $(v.push(Flag {
                        key: stringify!($name),
                        names: &[$flag $(, $alias)*],
                        value_name: or_empty!($($vn)?),
                        doc: _doc,
                        default: {
                            let k: $kind = $make;
                            k.default_file().and_then(|d| shown(&d))
                        },
                        shape: <<$kind as Kind>::File as FlagValue>::SHAPE,
                        set: |f: &mut $file, args: &[String]| {
                            f.$name = Some(<<$kind as Kind>::File as FlagValue>::from_args(
                                stringify!($name),
                                args,
                            )?);
                            Ok(())
                        },
                    });)?
                })*
                v
            }
        }

        impl Default for $out {
            fn default() -> Self {
                $file::default()
                    .resolve_in("")
                    .expect("the built-in defaults are valid")
            }
        }
    };
}

/// A value as TOML writes it, without quotes; `None` when empty.
fn shown<T: serde::Serialize>(v: &T) -> Option<String> {
    match toml::Value::try_from(v).ok()? {
        toml::Value::String(s) if s.is_empty() => None,
        toml::Value::String(s) => Some(s),
        toml::Value::Array(a) if a.is_empty() => None,
        v => Some(v.to_string()),
    }
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn secs(n: u64) -> Duration {
    Duration::from_secs(n)
}

section! {
    /// The file as written: every key optional.
    FileConfig =>
    /// The effective configuration.
    Config {
        /// Addresses for /metrics and /api/v1/snapshot: IP:PORT, :PORT for every address, "" for none; repeat to serve several alike
        listen: Addrs = Addrs("127.0.0.1:9479"), flag "listen" | "web.listen-address" as "IP:PORT";
        /// Root of the proc filesystem to read (--proc-root, node_exporter's --path.procfs)
        proc_root: Dir = Dir("/proc");
        /// Root of the sys filesystem to read (--sys-root, node_exporter's --path.sysfs)
        sys_root: Dir = Dir("/sys");
        /// CPUs the agent's threads may run on; "auto": every online CPU neither isolated nor nohz_full
        housekeeping_cpus: Cpus = Cpus, flag "housekeeping-cpus" as "LIST";
        /// Shared-memory snapshot file ("" for none)
        shm_path: MaybePath = MaybePath(Some("/run/quietstat/snapshot")), flag "shm-path" as "PATH";
        /// Percent of one CPU the agent may spend reading (0: no budget)
        overhead_budget_pct: Number<f64> = Number {
            default: 1.0,
            ok: |v| v == 0.0 || (0.01..=100.0).contains(&v),
            accepted: "0 (no budget) or 0.01 to 100 (percent of one CPU)".into(),
        }, flag "overhead-budget-pct" as "PCT";
        /// Resident memory the agent keeps itself under, shedding process rows, deep cgroups and textfile files near it; "auto": 3/4 of its cgroup's memory limit, else 1/16 of the machine (256 MiB to 4 GiB)
        max_rss: AutoBytes = AutoBytes { min: 16 << 20, min_text: "16 MiB" };
        /// Sources due within this window are read together; "auto": per source, the larger of 5ms and 1% of its interval
        slack: AutoDur = AutoDur { lo: Duration::ZERO, hi: secs(1) };
        /// Process-table backend: auto, bpf or procfs
        process_backend: Backend = Backend, flag "backend" as "NAME";
        /// Per-process series on /metrics (docs/metrics.md)
        process_metrics: Table<FileProcessMetrics> = Table::new();
        /// Which cgroups /metrics serves (docs/cgroups.md)
        cgroup_metrics: Table<FileCgroupMetrics> = Table::new();
        /// Each source's schedule, by the source's name or an alias
        sources: SourceTable = SourceTable;
        /// node_exporter's web configuration file (YAML): TLS certificate and key, basic-auth users with bcrypt hashes
        web_config_file: MaybePath = MaybePath(None), flag "web.config.file" | "web-config-file" as "FILE";
        /// Connections the HTTP server holds at most (lowered to fit the descriptor limit)
        http_max_connections: Number<usize> = Number {
            default: 512,
            ok: |v| (1..=1_000_000).contains(&v),
            accepted: "1 to 1000000".into(),
        };
        /// Scrapes of the exposition answered at once at most; beyond, 503 (0: no limit but the connection cap)
        http_max_requests: Number<usize> = Number::any(0), flag "web.max-requests" as "N";
        /// Whether /api/v1/snapshot lists processes (pid, command, user, ...)
        http_process_rows: Plain<bool> = Plain(false);
        /// Whether the process table carries the bytes each process's TCP sockets carried (BPF only; about 100 bytes of kernel memory a socket, charged to the agent)
        process_network: Plain<bool> = Plain(false);
        /// With process_network, the most time between two reads of every TCP socket; between them a read takes the sockets of the processes that ran (what a socket receives while none of its holders runs shows at the next)
        process_network_sweep_interval: Dur = Dur { default: secs(30), lo: secs(1), hi: secs(86_400) };
        /// Whether the process table carries GPU use per process: engines' busy time, GPU memory and clients, from DRM fdinfo and NVIDIA's library (docs/proctable.md)
        process_gpu: Plain<bool> = Plain(false);
        /// With process_gpu, the least time between two scans of every process's descriptors for GPUs (a process that opens a GPU shows at the next)
        process_gpu_scan_interval: Dur = Dur { default: secs(30), lo: secs(1), hi: secs(86_400) };
        /// Prefix of the root filesystem: mount points for statfs, /etc/os-release, /etc/selinux (--rootfs, node_exporter's --path.rootfs)
        rootfs: Dir = Dir("/");
        /// Mount points the filesystem source skips (a regular expression; node_exporter's default)
        filesystem_mount_points_exclude: Regex = Regex(procfs::DEFAULT_MOUNT_POINTS_EXCLUDE),
            flag "collector.filesystem.mount-points-exclude" | "collector.filesystem.ignored-mount-points" as "REGEX";
        /// Filesystem types the filesystem source skips (a regular expression; node_exporter's default)
        filesystem_fs_types_exclude: Regex = Regex(procfs::DEFAULT_FS_TYPES_EXCLUDE),
            flag "collector.filesystem.fs-types-exclude" | "collector.filesystem.ignored-fs-types" as "REGEX";
        /// The only mount points the filesystem source reads, instead of the exclusion (a regular expression; not both)
        filesystem_mount_points_include: Regex = Regex(""), flag "collector.filesystem.mount-points-include" as "REGEX";
        /// The only filesystem types the filesystem source reads, instead of the exclusion (a regular expression; not both)
        filesystem_fs_types_include: Regex = Regex(""), flag "collector.filesystem.fs-types-include" as "REGEX";
        /// The /proc/net/{netstat,snmp,snmp6} keys (Proto_Field) /metrics serves as node_netstat_* (a regular expression; node_exporter's default; "" serves every key)
        netstat_fields: Regex = Regex(super::DEFAULT_NETSTAT_FIELDS), flag "collector.netstat.fields" as "REGEX";
        /// The /proc/vmstat keys /metrics serves as node_vmstat_* (a regular expression; node_exporter's default; "" serves every key)
        vmstat_fields: Regex = Regex(super::DEFAULT_VMSTAT_FIELDS), flag "collector.vmstat.fields" as "REGEX";
        /// Block devices /metrics leaves out (a regular expression on the name; node_exporter's default: partitions and pseudo-devices)
        diskstats_device_exclude: Regex = Regex(super::DEFAULT_DISKSTATS_DEVICE_EXCLUDE),
            flag "collector.diskstats.device-exclude" | "collector.diskstats.ignored-devices" as "REGEX";
        /// The only block devices /metrics serves, instead of an exclusion (not both)
        diskstats_device_include: Regex = Regex(""), flag "collector.diskstats.device-include" as "REGEX";
        /// Network devices /metrics leaves out (a regular expression)
        netdev_device_exclude: Regex = Regex(""),
            flag "collector.netdev.device-exclude" | "collector.netdev.device-blacklist" as "REGEX";
        /// The only network devices /metrics serves, instead of an exclusion (not both)
        netdev_device_include: Regex = Regex(""),
            flag "collector.netdev.device-include" | "collector.netdev.device-whitelist" as "REGEX";
        /// ARP devices /metrics leaves out (a regular expression)
        arp_device_exclude: Regex = Regex(""), flag "collector.arp.device-exclude" as "REGEX";
        /// The only ARP devices /metrics serves, instead of an exclusion (not both)
        arp_device_include: Regex = Regex(""), flag "collector.arp.device-include" as "REGEX";
        /// hwmon chips /metrics leaves out (a regular expression on the chip's label, e.g. platform_coretemp_0)
        hwmon_chip_exclude: Regex = Regex(""), flag "collector.hwmon.chip-exclude" as "REGEX";
        /// The only hwmon chips /metrics serves, instead of an exclusion (not both)
        hwmon_chip_include: Regex = Regex(""), flag "collector.hwmon.chip-include" as "REGEX";
        /// hwmon sensors /metrics leaves out (a regular expression on chip;sensor, e.g. platform_coretemp_0;temp3)
        hwmon_sensor_exclude: Regex = Regex(""), flag "collector.hwmon.sensor-exclude" as "REGEX";
        /// The only hwmon sensors /metrics serves, instead of an exclusion (not both)
        hwmon_sensor_include: Regex = Regex(""), flag "collector.hwmon.sensor-include" as "REGEX";
        /// Interrupts node_interrupts_total leaves out (a regular expression on name;info;devices)
        interrupts_name_exclude: Regex = Regex(""), flag "collector.interrupts.name-exclude" as "REGEX";
        /// The only interrupts node_interrupts_total serves, instead of an exclusion (not both)
        interrupts_name_include: Regex = Regex(""), flag "collector.interrupts.name-include" as "REGEX";
        /// InfiniBand devices /metrics leaves out (a regular expression)
        infiniband_device_exclude: Regex = Regex(""), flag "collector.infiniband.device-exclude" as "REGEX";
        /// The only InfiniBand devices /metrics serves, instead of an exclusion (not both)
        infiniband_device_include: Regex = Regex(""), flag "collector.infiniband.device-include" as "REGEX";
        /// Slab caches node_slabinfo_* leaves out (a regular expression)
        slabinfo_slabs_exclude: Regex = Regex(""), flag "collector.slabinfo.slabs-exclude" as "REGEX";
        /// The slab caches node_slabinfo_* serves (a regular expression; those it matches less those slabs_exclude matches)
        slabinfo_slabs_include: Regex = Regex(".*"), flag "collector.slabinfo.slabs-include" as "REGEX";
        /// Network devices whose root qdisc node_qdisc_* leaves out (a regular expression; the qdisc source, off until enabled)
        qdisc_device_exclude: Regex = Regex(""),
            flag "collector.qdisc.device-exclude" | "collector.qdisk.device-exclude" as "REGEX";
        /// The only network devices whose root qdisc node_qdisc_* serves, instead of an exclusion (not both)
        qdisc_device_include: Regex = Regex(""),
            flag "collector.qdisc.device-include" | "collector.qdisk.device-include" as "REGEX";
        /// node_exporter's qdisc fixture directory (results.json), read instead of the kernel: for its end-to-end test ("" for none)
        qdisc_fixtures: MaybePath = MaybePath(None), flag "collector.qdisc.fixtures" as "DIR";
        /// node_exporter's wifi fixture directory (interfaces.json, and bss.json and stationinfo.json in a directory per device), read instead of nl80211: for its end-to-end test ("" for none)
        wifi_fixtures: MaybePath = MaybePath(None), flag "collector.wifi.fixtures" as "DIR";
        /// Network devices the ethtool source leaves out (a regular expression; the ethtool source, off until enabled)
        ethtool_device_exclude: Regex = Regex(""), flag "collector.ethtool.device-exclude" as "REGEX";
        /// The only network devices the ethtool source asks, instead of an exclusion (not both)
        ethtool_device_include: Regex = Regex(""), flag "collector.ethtool.device-include" as "REGEX";
        /// The driver statistics node_ethtool_* serves (a regular expression on the sanitized name)
        ethtool_metrics_include: Regex = Regex(".*"), flag "collector.ethtool.metrics-include" as "REGEX";
        /// Network devices the netclass families leave out (a regular expression)
        netclass_ignored_devices: Regex = Regex(""), flag "collector.netclass.ignored-devices" as "REGEX";
        /// Leave out node_network_speed_bytes where the kernel does not know the speed (-1)
        netclass_ignore_invalid_speed: Plain<bool> = Plain(false), flag "collector.netclass.ignore-invalid-speed";
        /// The first CPU's flags node_cpu_flag_info serves (a regular expression; none by default)
        cpu_info_flags_include: Regex = Regex(""), flag "collector.cpu.info.flags-include" as "REGEX";
        /// The first CPU's bugs node_cpu_bug_info serves (a regular expression; none by default)
        cpu_info_bugs_include: Regex = Regex(""), flag "collector.cpu.info.bugs-include" as "REGEX";
        /// Read isolated and nohz_full CPUs' current frequency too (each read interrupts that CPU)
        cpufreq_isolated_cur_freq: Plain<bool> = Plain(false);
        /// Read coretemp and x86_pkg_temp sensors whose driver reads an isolated CPU's MSR too (each read interrupts that CPU)
        sensors_on_isolated_cpus: Plain<bool> = Plain(false);
        /// How long the sampler waits for one statfs before it reports the mount failed and moves on
        filesystem_statfs_wait: Dur = Dur { default: procfs::DEFAULT_STATFS_WAIT, lo: ms(1), hi: secs(60) },
            flag "collector.filesystem.mount-timeout" as "D";
        /// Sysctls node_sysctl_* serves as numbers (the sysctl source, off until enabled): dotted names, each perhaps with its fields' names (fs.file-nr:total,current,max)
        sysctl_include: Sysctls = Sysctls, flag "collector.sysctl.include" as "NAME";
        /// Sysctls node_sysctl_info serves as text, a series a word (kernel.seccomp.actions_avail)
        sysctl_include_info: Sysctls = Sysctls, flag "collector.sysctl.include-info" as "NAME";
        /// systemd units whose states and properties /metrics serves (a regular expression on the whole unit name; the systemd source, off until enabled)
        systemd_unit_include: Regex = Regex(".+"),
            flag "collector.systemd.unit-include" | "collector.systemd.unit-whitelist" as "REGEX";
        /// systemd units left out (a regular expression on the whole unit name; node_exporter's default)
        systemd_unit_exclude: Regex = Regex(procfs::DEFAULT_UNIT_EXCLUDE),
            flag "collector.systemd.unit-exclude" | "collector.systemd.unit-blacklist" as "REGEX";
        /// Serve services' node_systemd_unit_tasks_current and _max (two more calls a service)
        systemd_task_metrics: Plain<bool> = Plain(false), flag "collector.systemd.enable-task-metrics";
        /// Serve services' node_systemd_service_restart_total (one more call a service)
        systemd_restarts_metrics: Plain<bool> = Plain(false), flag "collector.systemd.enable-restarts-metrics";
        /// Serve node_systemd_unit_start_time_seconds (one more call an active unit)
        systemd_start_time_metrics: Plain<bool> = Plain(false), flag "collector.systemd.enable-start-time-metrics";
        /// Talk to systemd on its own socket (/run/systemd/private, root only) instead of the system bus
        systemd_private: Plain<bool> = Plain(false), flag "collector.systemd.private";
        /// A read of systemd's units that takes longer fails, and the last one read is served with its age
        systemd_read_deadline: Dur = Dur { default: procfs::DEFAULT_SYSTEMD_DEADLINE, lo: ms(10), hi: secs(60) };
        /// Directory of *.prom files (Prometheus text format) to re-export ("" for none)
        textfile_directory: MaybePath = MaybePath(None), flag "collector.textfile.directory" as "DIR";
        /// udev's database, for node_disk_info's labels
        udev_data_path: Dir = Dir("/run/udev/data"), flag "path.udev.data" as "DIR";
        /// The history (docs/store.md)
        store: Table<FileStore> = Table::new();
        /// Receivers the history is pushed to (Prometheus remote write; docs/remote_write.md); a --remote-write.url adds one with its defaults
        remote_write: Tables<FileRemoteWrite> = Tables::new(), flag "remote-write.url" as "URL";
        /// Collectors off by default whose per-CPU families to serve ("interrupts", "softirqs"); the command line adds to the file's
        collectors: OneOf = OneOf(
            &super::COLLECTORS_OFF_BY_DEFAULT,
            "not a collector that is off by default (the others are on while their sources are)",
        );
    }
}

section! {
    /// `[store]` in the configuration file.
    FileStore =>
    /// Where and how the history is recorded.
    StoreConfig {
        /// Record the history (--no-store turns it off)
        enabled: Plain<bool> = Plain(true);
        /// Its directory: /var/lib/quietstat as root, else ~/.local/state/quietstat (--store DIR)
        path: StoreDir = StoreDir;
        /// Data older than this is removed
        retention: Dur = Dur { default: secs(7 * 86_400), lo: secs(60), hi: secs(3650 * 86_400) };
        /// The store is kept under this many bytes, oldest data first out (bytes, or e.g. "500MiB")
        max_size: Bytes = Bytes {
            default: 1 << 30,
            // Below 256 KiB a day file (its pages, WAL and WAL index) would
            // not keep a single block.
            min: 256 << 10,
            min_text: "256 KiB",
        };
        /// One process table is recorded per this interval (the system sources at each read)
        process_interval: Dur = Dur { default: secs(5), lo: secs(1), hi: secs(3600) };
        /// How often the writer moves the journal into the database
        flush_interval: Dur = Dur { default: secs(15), lo: ms(100), hi: secs(300) };
        /// The journal ("": beside shm_path if that is a tmpfs, else in /dev/shm/quietstat-UID/)
        journal: MaybePath = MaybePath(None);
        /// The group that may read the history besides its owner (default adm; /proc's hidepid rule wins)
        group: MaybeText = MaybeText { print_unset: false };
    }
}

section! {
    /// `[process_metrics]` in the configuration file.
    FileProcessMetrics =>
    /// Which processes `/metrics` serves series of, and how.
    ProcessMetrics {
        /// off | top (the top_n by sort_by) | filter (by names or cgroup) | group (one set per command name)
        mode: Plain<ProcessMetricsMode> = Plain(ProcessMetricsMode::Off);
        /// How many processes "top" serves
        top_n: Number<usize> = Number {
            default: 20,
            ok: |v| (1..=10_000).contains(&v),
            accepted: "1 to 10000".into(),
        };
        /// What "top" ranks by: cpu | rss | majflt | threads
        sort_by: Plain<SortKey> = Plain(SortKey::Cpu);
        /// "filter": the command names (comm) served
        names: Words = Words;
        /// "filter": the cgroup v2 path whose processes are served, e.g. "/system.slice/x.service"
        cgroup: MaybeText = MaybeText { print_unset: true };
    }
}

section! {
    /// `[cgroup_metrics]` in the configuration file.
    FileCgroupMetrics =>
    /// Which cgroups `/metrics` serves: those at most `depth` levels below
    /// the root, and those whose path matches `paths` at any depth; at most
    /// `max`, parents first.
    CgroupMetrics {
        /// Those at most this many levels below the root
        depth: Number<u16> = Number {
            default: 2,
            ok: |d| d <= cgroups::MAX_DEPTH,
            accepted: format!("0 (the root alone) to {}", cgroups::MAX_DEPTH),
        };
        /// And, at any depth, those whose path matches (a regular expression, e.g. "^/kubepods")
        paths: Regex = Regex("");
        /// At most this many, parents first
        max: Number<usize> = Number {
            default: 1000,
            ok: |v| (1..=100_000).contains(&v),
            accepted: "1 to 100000".into(),
        };
    }
}

section! {
    /// `[[remote_write]]` in the configuration file.
    FileRemoteWrite =>
    /// One receiver the history is pushed to.
    RemoteWrite {
        /// The receiver's URL (Prometheus: http://HOST:9090/api/v1/write; VictoriaMetrics: http://HOST:8428/api/v1/write)
        url: Url = Url;
        /// How logs, labels and the send position name it (default: the URL)
        name: MaybeText = MaybeText { print_unset: false };
        /// HTTP basic authentication (username, and password or password_file)
        basic_auth: Table<FileBasicAuth> = Table::new();
        /// A file holding a bearer token, sent as "Authorization: Bearer"
        bearer_token_file: MaybePath = MaybePath(None);
        /// TLS towards the receiver (ca_file, cert_file, key_file, insecure_skip_verify); the receiver's certificate must name the URL's host
        tls_config: Table<FileTlsClient> = Table::new();
        /// Headers sent with every request
        headers: Map = Map { check: header_name };
        /// Labels added to every series (default job="node" and instance="HOST:PORT", as a scrape of the first listen address would add)
        external_labels: Map = Map { check: label_name };
        /// Samples (one value of one series) in one request at most
        max_samples_per_send: Number<usize> = Number {
            default: 10_000,
            ok: |v| (100..=1_000_000).contains(&v),
            accepted: "100 to 1000000".into(),
        };
        /// Samples a second sent at most while catching up on a backlog
        catch_up_rate: Number<usize> = Number {
            default: 20_000,
            ok: |v| (100..=10_000_000).contains(&v),
            accepted: "100 to 10000000 (samples a second)".into(),
        };
        /// After an outage: "oldest-first" (in order, for receivers without an out-of-order window) or "newest-first" (today's data first, then the gap back to front)
        send_order: Plain<SendOrder> = Plain(SendOrder::OldestFirst);
        /// How long one request may take before it is abandoned and retried
        timeout: Dur = Dur { default: secs(30), lo: secs(1), hi: secs(300) };
    }
}

section! {
    /// `basic_auth` of a `[[remote_write]]` table.
    FileBasicAuth =>
    /// HTTP basic authentication towards a receiver.
    BasicAuth {
        /// The user name
        username: MaybeText = MaybeText { print_unset: false };
        /// The password (or password_file)
        password: MaybeText = MaybeText { print_unset: false };
        /// A file holding the password
        password_file: MaybePath = MaybePath(None);
    }
}

section! {
    /// `tls_config` of a `[[remote_write]]` table.
    FileTlsClient =>
    /// TLS towards a receiver: whom to trust, and the certificate to show.
    TlsClient {
        /// The CA certificates (PEM) that may sign the receiver's (default: the system's, /etc/ssl/certs/ca-certificates.crt)
        ca_file: MaybePath = MaybePath(None);
        /// A client certificate (PEM) to show the receiver
        cert_file: MaybePath = MaybePath(None);
        /// The client certificate's key (PEM)
        key_file: MaybePath = MaybePath(None);
        /// Accept any certificate the receiver shows (only for tests)
        insecure_skip_verify: Plain<bool> = Plain(false);
    }
}

impl FlagValue for Vec<FileRemoteWrite> {
    const SHAPE: Shape = Shape::Many;
    fn from_args(_: &str, args: &[String]) -> Result<Self, ConfigError> {
        Ok(args
            .iter()
            .map(|u| FileRemoteWrite {
                url: Some(u.clone()),
                ..FileRemoteWrite::default()
            })
            .collect())
    }
}
