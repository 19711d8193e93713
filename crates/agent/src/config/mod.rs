//! The agent's configuration: one TOML file, every key optional, merged onto
//! built-in defaults, then validated. Command-line flags are applied to the
//! file's values before validation, so they are checked the same way.
//!
//! Errors name the key, the bad value and what is accepted.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use procfs::Source;
use procfs::cpu::CpuList;
use proctable::BackendChoice;
use serde::{Deserialize, Serialize};

/// The most a configuration file may hold.
pub const CONFIG_CAP: u64 = 1 << 20;

/// A source the agent schedules: each system file, the process table,
/// and the cgroups.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AgentSource {
    System(Source),
    Processes,
    Cgroups,
}

pub const SOURCE_COUNT: usize = Source::COUNT + 2;

/// A set of sources, one bit each ([`AgentSource::bit`]).
pub type Mask = u128;
const _: () = assert!(
    SOURCE_COUNT <= Mask::BITS as usize,
    "a source without a bit"
);

impl AgentSource {
    pub const ALL: [AgentSource; SOURCE_COUNT] = {
        let mut all = [AgentSource::Processes; SOURCE_COUNT];
        let mut i = 0;
        while i < Source::COUNT {
            all[i] = AgentSource::System(Source::ALL[i]);
            i += 1;
        }
        all[Source::COUNT + 1] = AgentSource::Cgroups;
        all
    };

    pub fn index(self) -> usize {
        match self {
            AgentSource::System(s) => s as usize,
            AgentSource::Processes => Source::COUNT,
            AgentSource::Cgroups => Source::COUNT + 1,
        }
    }

    /// The name in configuration, metrics labels and the JSON API: the
    /// registry's one name.
    pub fn key(self) -> &'static str {
        match self {
            AgentSource::System(s) => s.name(),
            AgentSource::Processes => "processes",
            AgentSource::Cgroups => "cgroups",
        }
    }

    /// The source of a name or one of its aliases.
    pub fn from_key(key: &str) -> Option<AgentSource> {
        match key {
            "processes" => return Some(AgentSource::Processes),
            "cgroups" => return Some(AgentSource::Cgroups),
            _ => {}
        }
        Source::from_name(key).map(AgentSource::System)
    }

    pub fn keys() -> String {
        Self::ALL.map(AgentSource::key).join(", ")
    }

    /// Sources read only when the configuration or a flag enables them
    /// (the registry's `opt_in` column). The cgroups are read by default:
    /// their walk is loaded once at the agent's start (60 ms of CPU here)
    /// and capped at a fifth of the overhead budget at any scale.
    pub fn opt_in(self) -> bool {
        match self {
            AgentSource::System(s) => s.info().opt_in,
            AgentSource::Processes | AgentSource::Cgroups => false,
        }
    }

    pub fn bit(self) -> Mask {
        1 << self.index()
    }
}

/// One source's schedule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SourceConfig {
    pub enabled: bool,
    /// How often it is read on schedule.
    pub interval: Duration,
    /// The oldest its data may be: the overhead budget may stretch the
    /// interval up to this, never beyond.
    pub max_age: Duration,
    /// The floor: a consumer asking for fresher data never makes the agent
    /// read this source more often than this.
    pub min_interval: Duration,
    /// The floor for HTTP consumers (`max_age_ms`): a source read within
    /// it is served as it is, with its age, instead of being read again.
    pub demand_min_interval: Duration,
}

impl SourceConfig {
    fn defaults(s: AgentSource) -> SourceConfig {
        let (interval, min_interval) = match s {
            AgentSource::System(s) => (s.info().interval_ms, s.info().min_interval_ms),
            AgentSource::Processes => (5_000, 100),
            AgentSource::Cgroups => (10_000, 1_000),
        };
        let demand_min_interval = match s {
            AgentSource::Processes | AgentSource::Cgroups => 1_000,
            AgentSource::System(_) => 100,
        };
        SourceConfig {
            enabled: !s.opt_in(),
            interval: Duration::from_millis(interval),
            max_age: Duration::from_millis(interval * 5),
            min_interval: Duration::from_millis(min_interval),
            demand_min_interval: Duration::from_millis(demand_min_interval),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProcessMetricsMode {
    /// No per-process series.
    Off,
    /// The top `top_n` processes by `sort_by`.
    Top,
    /// Processes whose comm is in `names` or whose cgroup is `cgroup`.
    Filter,
    /// One series set per comm (as process-exporter groups by name).
    Group,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SortKey {
    Cpu,
    Rss,
    Majflt,
    Threads,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessMetrics {
    pub mode: ProcessMetricsMode,
    pub top_n: usize,
    pub sort_by: SortKey,
    pub names: Vec<String>,
    /// cgroup v2 path below the cgroup2 mount, e.g. `/system.slice/x.service`.
    pub cgroup: Option<String>,
}

/// Which cgroups `/metrics` serves (`[cgroup_metrics]`): those at most
/// `depth` levels below the root, and those whose path matches `paths` at
/// any depth; at most `max`, parents first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CgroupMetrics {
    pub depth: u16,
    /// A regular expression; empty: none beyond `depth`.
    pub paths: String,
    pub max: usize,
}

impl Default for CgroupMetrics {
    fn default() -> Self {
        CgroupMetrics {
            depth: 2,
            paths: String::new(),
            max: 1000,
        }
    }
}

/// node_exporter collectors whose families are served only when turned on
/// (`collectors = [...]`, `--collector.NAME`), as node_exporter leaves them
/// off: their series grow as CPUs times IRQs or vectors
/// (`node_interrupts_total`, `node_softirqs_functions_total`). Their
/// sources are read either way (for `top`, the history and the shared
/// memory), and a small aggregate of each is always served.
pub const COLLECTORS_OFF_BY_DEFAULT: [&str; 2] = ["interrupts", "softirqs"];

/// node_exporter's default `--collector.diskstats.device-exclude`:
/// partitions and pseudo-devices.
pub const DEFAULT_DISKSTATS_DEVICE_EXCLUDE: &str =
    r"^(ram|loop|fd|(h|s|v|xv)d[a-z]|nvme\d+n\d+p)\d+$";

/// The effective configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// The HTTP server's addresses, each served alike; none: no HTTP
    /// server (unless sockets are handed over).
    pub listen: Vec<SocketAddr>,
    pub proc_root: PathBuf,
    pub sys_root: PathBuf,
    /// `None`: every online CPU that is neither isolated nor nohz_full.
    pub housekeeping_cpus: Option<CpuList>,
    /// `None`: an anonymous mapping (no file for local readers).
    pub shm_path: Option<PathBuf>,
    /// Percent of one CPU the agent may spend reading; 0 disables the budget.
    pub overhead_budget_pct: f64,
    /// `None`: per source, the larger of 5 ms and 1% of its interval.
    pub slack: Option<Duration>,
    pub process_backend: BackendChoice,
    pub sources: [SourceConfig; SOURCE_COUNT],
    pub process_metrics: ProcessMetrics,
    pub cgroup_metrics: CgroupMetrics,
    /// node_exporter's web configuration file: TLS and basic authentication.
    pub web_config_file: Option<PathBuf>,
    /// Connections the HTTP server holds at most (lowered to fit the
    /// descriptor limit).
    pub http_max_connections: usize,
    /// Scrapes of the exposition answered at once at most; beyond, 503
    /// (node_exporter's `--web.max-requests`); 0: no limit but the
    /// connection cap.
    pub http_max_requests: usize,
    /// Whether `/api/v1/snapshot` lists processes (pid, command, user, ...).
    pub http_process_rows: bool,
    /// Root-filesystem prefix for mounts, os-release and /etc/selinux
    /// (node_exporter's `--path.rootfs`).
    pub rootfs: PathBuf,
    /// Mount points the filesystem source skips (a regular expression).
    pub filesystem_mount_points_exclude: String,
    /// Filesystem types the filesystem source skips (a regular expression).
    pub filesystem_fs_types_exclude: String,
    /// Block devices `/metrics` leaves out, or (when set) the only ones it
    /// serves: regular expressions on the name, "" for none
    /// (node_exporter's `--collector.diskstats.device-exclude/-include`).
    pub diskstats_device_exclude: String,
    pub diskstats_device_include: String,
    /// The same for network devices (`--collector.netdev.device-*`).
    pub netdev_device_exclude: String,
    pub netdev_device_include: String,
    /// The same for the ARP table's devices (`--collector.arp.device-*`).
    pub arp_device_exclude: String,
    pub arp_device_include: String,
    /// The same for hwmon chips, by the chip's name as labelled
    /// (`--collector.hwmon.chip-*`).
    pub hwmon_chip_exclude: String,
    pub hwmon_chip_include: String,
    /// Network devices the netclass families leave out, "" for none
    /// (`--collector.netclass.ignored-devices`).
    pub netclass_ignored_devices: String,
    /// Leave out `node_network_speed_bytes` of a device whose speed the
    /// kernel does not know (-1) (`--collector.netclass.ignore-invalid-speed`).
    pub netclass_ignore_invalid_speed: bool,
    /// The first CPU's flags and bugs `node_cpu_flag_info` and
    /// `node_cpu_bug_info` serve: regular expressions, "" for none
    /// (`--collector.cpu.info.flags-include`, `bugs-include`).
    pub cpu_info_flags_include: String,
    pub cpu_info_bugs_include: String,
    /// Read the current frequency of isolated and nohz_full CPUs too (each
    /// read interrupts that CPU); off by default.
    pub cpufreq_isolated_cur_freq: bool,
    /// Read coretemp sensors and `x86_pkg_temp` zones whose driver reads
    /// an isolated or nohz_full CPU's MSR (an IPI to it); off by default.
    pub sensors_on_isolated_cpus: bool,
    /// How long the sampler waits for one statfs before reporting the
    /// mount failed (`node_filesystem_device_error` 1) and moving on.
    pub filesystem_statfs_wait: Duration,
    /// Directory of `*.prom` files the textfile source re-exports
    /// (node_exporter's `--collector.textfile.directory`); none by default.
    pub textfile_directory: Option<PathBuf>,
    /// udev's database, for `node_disk_info` (node_exporter's
    /// `--path.udev.data`).
    pub udev_data_path: PathBuf,
    /// The history store.
    pub store: StoreConfig,
    /// The collectors of [`COLLECTORS_OFF_BY_DEFAULT`] turned on.
    pub collectors: Vec<&'static str>,
}

/// Where and how the history is recorded.
#[derive(Debug, Clone, PartialEq)]
pub struct StoreConfig {
    pub enabled: bool,
    pub path: PathBuf,
    /// Data older than this is removed.
    pub retention: Duration,
    /// The store is kept under this many bytes (oldest data goes first).
    pub max_bytes: u64,
    /// How often the process table is recorded (the system sources are
    /// recorded at each read).
    pub process_interval: Duration,
    /// How often the writer moves the journal into the database.
    pub flush_interval: Duration,
    /// The journal (best in memory: tmpfs); empty: beside the snapshot.
    pub journal: Option<PathBuf>,
    /// The group that may read the history (`None`: `adm` where it
    /// exists); `/proc`'s rule wins when it hides processes.
    pub group: Option<String>,
}

/// The default store directory: /var/lib/quietstat as root, else
/// `$XDG_STATE_HOME/quietstat`, else `~/.local/state/quietstat` with the
/// home from `$HOME` or, without it, from the user's passwd entry. `Err`
/// (why) when there is no usable home: never a path under `/tmp`.
pub fn default_store_path() -> Result<PathBuf, String> {
    let uid = store::access::euid();
    if uid == 0 {
        return Ok("/var/lib/quietstat".into());
    }
    let absolute = |v: std::ffi::OsString| Some(PathBuf::from(v)).filter(|p| p.is_absolute());
    if let Some(x) = std::env::var_os("XDG_STATE_HOME").and_then(absolute) {
        return Ok(x.join("quietstat"));
    }
    if let Some(home) = std::env::var_os("HOME").and_then(absolute) {
        return Ok(home.join(".local/state/quietstat"));
    }
    match store::access::passwd(uid) {
        Some((_, home)) if home.is_absolute() && home != Path::new("/") && home.is_dir() => {
            Ok(home.join(".local/state/quietstat"))
        }
        Some((name, home)) => Err(format!(
            "no HOME or XDG_STATE_HOME, and user {name}'s home {} is not a directory of its own; give --store DIR or [store] path",
            home.display()
        )),
        None => Err(format!(
            "no HOME or XDG_STATE_HOME, and no passwd entry for uid {uid}; give --store DIR or [store] path"
        )),
    }
}

/// A size: bytes, or with a unit (k, M, G, KiB, MiB, GiB).
pub fn parse_bytes(v: &str) -> Option<u64> {
    let v = v.trim();
    let split = v.find(|c: char| !c.is_ascii_digit()).unwrap_or(v.len());
    let n: u64 = v[..split].parse().ok()?;
    let mult: u64 = match v[split..].trim() {
        "" | "B" => 1,
        "k" | "K" | "kB" | "KB" => 1000,
        "M" | "MB" => 1000 * 1000,
        "G" | "GB" => 1000 * 1000 * 1000,
        "KiB" => 1 << 10,
        "MiB" => 1 << 20,
        "GiB" => 1 << 30,
        "TiB" => 1 << 40,
        _ => return None,
    };
    n.checked_mul(mult)
}

impl Default for Config {
    fn default() -> Self {
        FileConfig::default()
            .resolve()
            .expect("the built-in defaults are valid")
    }
}

impl Config {
    pub fn source(&self, s: AgentSource) -> &SourceConfig {
        &self.sources[s.index()]
    }

    /// The slack window of `s`: sources due within it are read together.
    /// The gathered sources' options, for [`procfs::Reader::set_gather_options`].
    pub fn gather_options(&self) -> procfs::GatherOptions {
        let re =
            |v: &str| regex::Regex::new(v).expect("checked when the configuration was resolved");
        procfs::GatherOptions {
            rootfs: self.rootfs.clone(),
            mount_points_exclude: re(&self.filesystem_mount_points_exclude),
            fs_types_exclude: re(&self.filesystem_fs_types_exclude),
            statfs_wait: self.filesystem_statfs_wait,
            textfile_directory: self.textfile_directory.clone(),
            udev_data: self.udev_data_path.clone(),
            cur_freq_on_quiet_cpus: self.cpufreq_isolated_cur_freq,
            sensors_on_quiet_cpus: self.sensors_on_isolated_cpus,
        }
    }

    /// Whether collector `name` of [`COLLECTORS_OFF_BY_DEFAULT`] is on.
    pub fn collector_on(&self, name: &str) -> bool {
        self.collectors.contains(&name)
    }

    pub fn slack_for(&self, s: AgentSource) -> Duration {
        self.slack
            .unwrap_or_else(|| (self.source(s).interval / 100).max(Duration::from_millis(5)))
    }

    /// Reads and validates `path`, applies `overrides`, validates.
    pub fn load(path: Option<&Path>, overrides: &FileConfig) -> Result<Config, ConfigError> {
        let mut file = match path {
            None => FileConfig::default(),
            Some(p) => {
                let text = sys::file::read_text_capped(p, CONFIG_CAP).map_err(|e| ConfigError {
                    key: String::new(),
                    message: format!("reading {e}"),
                })?;
                FileConfig::from_toml(&text).map_err(|mut e| {
                    e.message = format!("{}: {}", p.display(), e.message);
                    e
                })?
            }
        };
        file.apply(overrides);
        file.resolve()
    }

    /// The effective configuration as TOML, every key present.
    pub fn to_toml(&self) -> String {
        let d = |d: Duration| Some(humantime::format_duration(d).to_string());
        let mut sources = FileSources::default();
        for s in AgentSource::ALL {
            let c = self.source(s);
            *sources.get_mut(s) = Some(FileSource {
                enabled: Some(c.enabled),
                interval: d(c.interval),
                max_age: d(c.max_age),
                min_interval: d(c.min_interval),
                demand_min_interval: d(c.demand_min_interval),
            });
        }
        let pm = &self.process_metrics;
        let file = FileConfig {
            listen: Some(match self.listen.as_slice() {
                [] => Listen::One(String::new()),
                [one] => Listen::One(one.to_string()),
                many => Listen::Many(many.iter().map(|a| a.to_string()).collect()),
            }),
            proc_root: Some(self.proc_root.clone()),
            sys_root: Some(self.sys_root.clone()),
            housekeeping_cpus: Some(
                self.housekeeping_cpus
                    .as_ref()
                    .map(|c| c.to_string())
                    .unwrap_or_else(|| "auto".into()),
            ),
            shm_path: Some(
                self.shm_path
                    .as_ref()
                    .map(|p| p.display().to_string())
                    .unwrap_or_default(),
            ),
            overhead_budget_pct: Some(self.overhead_budget_pct),
            slack: Some(self.slack.map_or_else(|| "auto".into(), |s| d(s).unwrap())),
            process_backend: Some(
                match self.process_backend {
                    BackendChoice::Auto => "auto",
                    BackendChoice::Bpf => "bpf",
                    BackendChoice::Procfs => "procfs",
                }
                .into(),
            ),
            sources: Some(sources),
            process_metrics: Some(FileProcessMetrics {
                mode: Some(pm.mode),
                top_n: Some(pm.top_n),
                sort_by: Some(pm.sort_by),
                names: Some(pm.names.clone()),
                cgroup: Some(pm.cgroup.clone().unwrap_or_default()),
            }),
            cgroup_metrics: Some(FileCgroupMetrics {
                depth: Some(self.cgroup_metrics.depth),
                paths: Some(self.cgroup_metrics.paths.clone()),
                max: Some(self.cgroup_metrics.max),
            }),
            web_config_file: Some(self.web_config_file.clone().unwrap_or_default()),
            http_max_connections: Some(self.http_max_connections),
            http_max_requests: Some(self.http_max_requests),
            http_process_rows: Some(self.http_process_rows),
            rootfs: Some(self.rootfs.clone()),
            filesystem_mount_points_exclude: Some(self.filesystem_mount_points_exclude.clone()),
            filesystem_fs_types_exclude: Some(self.filesystem_fs_types_exclude.clone()),
            diskstats_device_exclude: Some(self.diskstats_device_exclude.clone()),
            diskstats_device_include: Some(self.diskstats_device_include.clone()),
            netdev_device_exclude: Some(self.netdev_device_exclude.clone()),
            netdev_device_include: Some(self.netdev_device_include.clone()),
            arp_device_exclude: Some(self.arp_device_exclude.clone()),
            arp_device_include: Some(self.arp_device_include.clone()),
            hwmon_chip_exclude: Some(self.hwmon_chip_exclude.clone()),
            hwmon_chip_include: Some(self.hwmon_chip_include.clone()),
            netclass_ignored_devices: Some(self.netclass_ignored_devices.clone()),
            netclass_ignore_invalid_speed: Some(self.netclass_ignore_invalid_speed),
            cpu_info_flags_include: Some(self.cpu_info_flags_include.clone()),
            cpu_info_bugs_include: Some(self.cpu_info_bugs_include.clone()),
            cpufreq_isolated_cur_freq: Some(self.cpufreq_isolated_cur_freq),
            sensors_on_isolated_cpus: Some(self.sensors_on_isolated_cpus),
            filesystem_statfs_wait: d(self.filesystem_statfs_wait),
            textfile_directory: Some(self.textfile_directory.clone().unwrap_or_default()),
            udev_data_path: Some(self.udev_data_path.clone()),
            collectors: Some(self.collectors.iter().map(|c| c.to_string()).collect()),
            store: Some(FileStore {
                enabled: Some(self.store.enabled),
                path: Some(self.store.path.clone()),
                retention: d(self.store.retention),
                max_size: Some(self.store.max_bytes.to_string()),
                process_interval: d(self.store.process_interval),
                flush_interval: d(self.store.flush_interval),
                journal: Some(self.store.journal.clone().unwrap_or_default()),
                group: self.store.group.clone(),
            }),
        };
        toml::to_string(&file).expect("the configuration serializes")
    }
}

/// A bad configuration value: which key, and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}{message}", if key.is_empty() { String::new() } else { format!("{key}: ") })]
pub struct ConfigError {
    pub key: String,
    pub message: String,
}

/// `v` (else `default`) when it is a regular expression; else an error
/// naming `key`.
fn checked_regex(key: &str, v: &Option<String>, default: &str) -> Result<String, ConfigError> {
    let v = v.clone().unwrap_or_else(|| default.to_string());
    regex::Regex::new(&v).map_err(|e| {
        bad(
            key,
            format!(
                "{v:?} is not a regular expression: {}",
                e.to_string().replace('\n', " ")
            ),
        )
    })?;
    Ok(v)
}

fn bad(key: impl Into<String>, message: impl Into<String>) -> ConfigError {
    ConfigError {
        key: key.into(),
        message: message.into(),
    }
}

/// `listen`: one address (`""` for none) or a list, each served alike (as
/// node_exporter's repeated `--web.listen-address`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Listen {
    One(String),
    Many(Vec<String>),
}

impl Listen {
    /// The addresses as written, blank ones left out.
    pub fn addrs(&self) -> Vec<&str> {
        let all: Vec<&str> = match self {
            Listen::One(a) => vec![a.as_str()],
            Listen::Many(v) => v.iter().map(String::as_str).collect(),
        };
        all.into_iter()
            .map(str::trim)
            .filter(|a| !a.is_empty())
            .collect()
    }
}

/// The file as written: every key optional.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileConfig {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub listen: Option<Listen>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub proc_root: Option<PathBuf>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sys_root: Option<PathBuf>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub housekeeping_cpus: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shm_path: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub overhead_budget_pct: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slack: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub process_backend: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub process_metrics: Option<FileProcessMetrics>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cgroup_metrics: Option<FileCgroupMetrics>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sources: Option<FileSources>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub web_config_file: Option<PathBuf>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub http_max_connections: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub http_max_requests: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub http_process_rows: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rootfs: Option<PathBuf>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub filesystem_mount_points_exclude: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub filesystem_fs_types_exclude: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diskstats_device_exclude: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diskstats_device_include: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub netdev_device_exclude: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub netdev_device_include: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arp_device_exclude: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arp_device_include: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hwmon_chip_exclude: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hwmon_chip_include: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub netclass_ignored_devices: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub netclass_ignore_invalid_speed: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_info_flags_include: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_info_bugs_include: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpufreq_isolated_cur_freq: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sensors_on_isolated_cpus: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub filesystem_statfs_wait: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub textfile_directory: Option<PathBuf>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub udev_data_path: Option<PathBuf>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub store: Option<FileStore>,
    /// Collectors of [`COLLECTORS_OFF_BY_DEFAULT`] to turn on; a list
    /// given on the command line adds to the file's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub collectors: Option<Vec<String>>,
}

/// `[store]` in the configuration file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileStore {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<PathBuf>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retention: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_size: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub process_interval: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flush_interval: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub journal: Option<PathBuf>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileSource {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interval: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_age: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_interval: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub demand_min_interval: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileProcessMetrics {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mode: Option<ProcessMetricsMode>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub top_n: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sort_by: Option<SortKey>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub names: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cgroup: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileCgroupMetrics {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub depth: Option<u16>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub paths: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max: Option<usize>,
}

/// `[sources.<name>]` tables, one slot per source; a source may be named
/// by its name or an alias, once.
#[derive(Debug, Clone, PartialEq)]
pub struct FileSources([Option<FileSource>; SOURCE_COUNT]);

impl Default for FileSources {
    fn default() -> Self {
        FileSources(std::array::from_fn(|_| None))
    }
}

impl FileSources {
    pub fn get_mut(&mut self, s: AgentSource) -> &mut Option<FileSource> {
        &mut self.0[s.index()]
    }

    pub fn get(&self, s: AgentSource) -> Option<&FileSource> {
        self.0[s.index()].as_ref()
    }
}

impl Serialize for FileSources {
    fn serialize<S: serde::Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = ser.serialize_map(None)?;
        for s in AgentSource::ALL {
            if let Some(f) = self.get(s) {
                m.serialize_entry(s.key(), f)?;
            }
        }
        m.end()
    }
}

impl<'de> Deserialize<'de> for FileSources {
    fn deserialize<D: serde::Deserializer<'de>>(de: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let table = std::collections::BTreeMap::<String, FileSource>::deserialize(de)?;
        let mut out = FileSources::default();
        for (name, f) in table {
            let s = AgentSource::from_key(&name).ok_or_else(|| {
                D::Error::custom(format!(
                    "unknown source `{name}`; accepted: {}",
                    AgentSource::keys()
                ))
            })?;
            let slot = out.get_mut(s);
            if slot.is_some() {
                return Err(D::Error::custom(format!(
                    "source `{}` is named twice (`{name}` is another name of it)",
                    s.key()
                )));
            }
            *slot = Some(f);
        }
        Ok(out)
    }
}

fn parse_duration(key: &str, v: &str) -> Result<Duration, ConfigError> {
    humantime::parse_duration(v.trim()).map_err(|e| {
        bad(
            key,
            format!("{v:?} is not a duration ({e}); write e.g. \"500ms\", \"5s\", \"1m\""),
        )
    })
}

fn in_range(key: &str, d: Duration, lo: Duration, hi: Duration) -> Result<Duration, ConfigError> {
    if d < lo || d > hi {
        return Err(bad(
            key,
            format!(
                "{} is out of range; accepted: {} to {}",
                humantime::format_duration(d),
                humantime::format_duration(lo),
                humantime::format_duration(hi)
            ),
        ));
    }
    Ok(d)
}

impl FileConfig {
    pub fn from_toml(text: &str) -> Result<FileConfig, ConfigError> {
        toml::from_str(text).map_err(|e| bad("", e.to_string().trim_end().to_string()))
    }

    /// Sets every key `over` sets.
    pub fn apply(&mut self, over: &FileConfig) {
        macro_rules! take {
            ($($f:ident),*) => { $(if over.$f.is_some() { self.$f = over.$f.clone(); })* };
        }
        take!(
            listen,
            proc_root,
            sys_root,
            housekeeping_cpus,
            shm_path,
            overhead_budget_pct,
            slack,
            process_backend,
            web_config_file,
            http_max_connections,
            http_max_requests,
            http_process_rows,
            rootfs,
            filesystem_mount_points_exclude,
            filesystem_fs_types_exclude,
            diskstats_device_exclude,
            diskstats_device_include,
            netdev_device_exclude,
            netdev_device_include,
            arp_device_exclude,
            arp_device_include,
            hwmon_chip_exclude,
            hwmon_chip_include,
            netclass_ignored_devices,
            netclass_ignore_invalid_speed,
            cpu_info_flags_include,
            cpu_info_bugs_include,
            cpufreq_isolated_cur_freq,
            sensors_on_isolated_cpus,
            filesystem_statfs_wait,
            textfile_directory,
            udev_data_path
        );
        if let Some(o) = &over.collectors {
            let mine = self.collectors.get_or_insert_with(Vec::new);
            for c in o {
                if !mine.contains(c) {
                    mine.push(c.clone());
                }
            }
        }
        if let Some(o) = &over.store {
            let st = self.store.get_or_insert_with(Default::default);
            macro_rules! take_st {
                ($($f:ident),*) => { $(if o.$f.is_some() { st.$f = o.$f.clone(); })* };
            }
            take_st!(
                enabled,
                path,
                retention,
                max_size,
                process_interval,
                flush_interval,
                journal,
                group
            );
        }
        if let Some(o) = &over.process_metrics {
            let pm = self.process_metrics.get_or_insert_with(Default::default);
            macro_rules! take_pm {
                ($($f:ident),*) => { $(if o.$f.is_some() { pm.$f = o.$f.clone(); })* };
            }
            take_pm!(mode, top_n, sort_by, names, cgroup);
        }
        if let Some(o) = &over.cgroup_metrics {
            let cm = self.cgroup_metrics.get_or_insert_with(Default::default);
            macro_rules! take_cm {
                ($($f:ident),*) => { $(if o.$f.is_some() { cm.$f = o.$f.clone(); })* };
            }
            take_cm!(depth, paths, max);
        }
        if let Some(o) = &over.sources {
            let mine = self.sources.get_or_insert_with(Default::default);
            for s in AgentSource::ALL {
                if let Some(os) = o.get(s) {
                    let m = mine.get_mut(s).get_or_insert_with(Default::default);
                    macro_rules! take_s {
                        ($($f:ident),*) => { $(if os.$f.is_some() { m.$f = os.$f.clone(); })* };
                    }
                    take_s!(
                        enabled,
                        interval,
                        max_age,
                        min_interval,
                        demand_min_interval
                    );
                }
            }
        }
    }

    /// `[cgroup_metrics]`, checked.
    fn cgroup_metrics(&self) -> Result<CgroupMetrics, ConfigError> {
        let f = self.cgroup_metrics.clone().unwrap_or_default();
        let d = CgroupMetrics::default();
        let cm = CgroupMetrics {
            depth: f.depth.unwrap_or(d.depth),
            paths: checked_regex("cgroup_metrics.paths", &f.paths, &d.paths)?,
            max: f.max.unwrap_or(d.max),
        };
        if cm.depth > cgroups::MAX_DEPTH {
            return Err(bad(
                "cgroup_metrics.depth",
                format!(
                    "{} is out of range; accepted: 0 (the root alone) to {}",
                    cm.depth,
                    cgroups::MAX_DEPTH
                ),
            ));
        }
        if !(1..=100_000).contains(&cm.max) {
            return Err(bad(
                "cgroup_metrics.max",
                format!("{} is out of range; accepted: 1 to 100000", cm.max),
            ));
        }
        Ok(cm)
    }

    /// Merges onto the defaults and validates.
    pub fn resolve(&self) -> Result<Config, ConfigError> {
        let mut collectors = Vec::new();
        for c in self.collectors.iter().flatten() {
            let Some(name) = COLLECTORS_OFF_BY_DEFAULT.iter().find(|n| *n == c) else {
                return Err(bad(
                    "collectors",
                    format!(
                        "{c:?}: not a collector that is off by default; accepted: {} (the others are on while their sources are)",
                        COLLECTORS_OFF_BY_DEFAULT.join(", ")
                    ),
                ));
            };
            if !collectors.contains(name) {
                collectors.push(*name);
            }
        }
        let listen = match &self.listen {
            None => vec![SocketAddr::from(([127, 0, 0, 1], 9479))],
            Some(l) => l
                .addrs()
                .into_iter()
                .map(|v| {
                    // node_exporter's `:PORT`: every address of this machine.
                    match v.strip_prefix(':') {
                        Some(port) => port
                            .parse::<u16>()
                            .map(|p| SocketAddr::from(([0, 0, 0, 0], p)))
                            .ok(),
                        None => v.parse::<SocketAddr>().ok(),
                    }
                    .ok_or_else(|| {
                        bad(
                            "listen",
                            format!("{v:?} is not an address; write IP:PORT, e.g. \"127.0.0.1:9479\" or \"[::1]:9479\", :PORT for every address, a list of them, or \"\" for no HTTP server"),
                        )
                    })
                })
                .collect::<Result<Vec<_>, _>>()?,
        };
        let housekeeping_cpus = match self.housekeeping_cpus.as_deref().map(str::trim) {
            None | Some("auto") => None,
            Some(v) => {
                let l = CpuList::parse(v).map_err(|e| {
                    bad(
                        "housekeeping_cpus",
                        format!("{v:?}: {e}; write a CPU list like \"0\", \"0-3,8\" or \"auto\""),
                    )
                })?;
                if l.is_empty() {
                    return Err(bad(
                        "housekeeping_cpus",
                        "the list is empty; name at least one CPU or write \"auto\"",
                    ));
                }
                Some(l)
            }
        };
        let shm_path = match self.shm_path.as_deref() {
            None => Some(PathBuf::from("/run/quietstat/snapshot")),
            Some("") => None,
            Some(p) => Some(PathBuf::from(p)),
        };
        let overhead_budget_pct = self.overhead_budget_pct.unwrap_or(1.0);
        if !(overhead_budget_pct == 0.0 || (0.01..=100.0).contains(&overhead_budget_pct)) {
            return Err(bad(
                "overhead_budget_pct",
                format!(
                    "{overhead_budget_pct} is out of range; accepted: 0 (no budget) or 0.01 to 100 (percent of one CPU)"
                ),
            ));
        }
        let slack = match self.slack.as_deref().map(str::trim) {
            None | Some("auto") => None,
            Some(v) => Some(in_range(
                "slack",
                parse_duration("slack", v)?,
                Duration::ZERO,
                Duration::from_secs(1),
            )?),
        };
        let process_backend = match self.process_backend.as_deref() {
            None => BackendChoice::Auto,
            Some(v) => BackendChoice::parse(v).ok_or_else(|| {
                bad(
                    "process_backend",
                    format!("{v:?}; accepted: auto, bpf, procfs"),
                )
            })?,
        };
        let mut sources = AgentSource::ALL.map(SourceConfig::defaults);
        for s in AgentSource::ALL {
            let Some(f) = self.sources.as_ref().and_then(|fs| fs.get(s)) else {
                continue;
            };
            let key = |k: &str| format!("sources.{}.{k}", s.key());
            let c = &mut sources[s.index()];
            if let Some(e) = f.enabled {
                c.enabled = e;
            }
            if let Some(v) = &f.interval {
                let k = key("interval");
                c.interval = in_range(
                    &k,
                    parse_duration(&k, v)?,
                    Duration::from_millis(10),
                    Duration::from_secs(3600),
                )?;
                if f.max_age.is_none() {
                    c.max_age = c.interval * 5;
                }
                c.min_interval = c.min_interval.min(c.interval);
            }
            if let Some(v) = &f.max_age {
                let k = key("max_age");
                c.max_age = in_range(
                    &k,
                    parse_duration(&k, v)?,
                    c.interval,
                    Duration::from_secs(86_400),
                )?;
            }
            if let Some(v) = &f.min_interval {
                let k = key("min_interval");
                c.min_interval = in_range(&k, parse_duration(&k, v)?, Duration::ZERO, c.interval)?;
            }
            if let Some(v) = &f.demand_min_interval {
                let k = key("demand_min_interval");
                c.demand_min_interval = in_range(
                    &k,
                    parse_duration(&k, v)?,
                    Duration::ZERO,
                    Duration::from_secs(3600),
                )?;
            }
        }
        let fpm = self.process_metrics.clone().unwrap_or_default();
        let process_metrics = ProcessMetrics {
            mode: fpm.mode.unwrap_or(ProcessMetricsMode::Off),
            top_n: fpm.top_n.unwrap_or(20),
            sort_by: fpm.sort_by.unwrap_or(SortKey::Cpu),
            names: fpm.names.unwrap_or_default(),
            cgroup: fpm.cgroup.filter(|c| !c.is_empty()),
        };
        if !(1..=10_000).contains(&process_metrics.top_n) {
            return Err(bad(
                "process_metrics.top_n",
                format!(
                    "{} is out of range; accepted: 1 to 10000",
                    process_metrics.top_n
                ),
            ));
        }
        if process_metrics.mode == ProcessMetricsMode::Filter
            && process_metrics.names.is_empty()
            && process_metrics.cgroup.is_none()
        {
            return Err(bad(
                "process_metrics.mode",
                "\"filter\" needs process_metrics.names or process_metrics.cgroup",
            ));
        }
        let cgroup_metrics = self.cgroup_metrics()?;
        let http_max_connections = self.http_max_connections.unwrap_or(512);
        if !(1..=1_000_000).contains(&http_max_connections) {
            return Err(bad(
                "http_max_connections",
                format!("{http_max_connections} is out of range; accepted: 1 to 1000000"),
            ));
        }
        let filesystem_mount_points_exclude = checked_regex(
            "filesystem_mount_points_exclude",
            &self.filesystem_mount_points_exclude,
            procfs::DEFAULT_MOUNT_POINTS_EXCLUDE,
        )?;
        let filesystem_fs_types_exclude = checked_regex(
            "filesystem_fs_types_exclude",
            &self.filesystem_fs_types_exclude,
            procfs::DEFAULT_FS_TYPES_EXCLUDE,
        )?;
        // Exclude and include are one or the other, as in node_exporter;
        // an include replaces the default exclusion.
        let devices = |exclude_key: &str,
                       exclude: &Option<String>,
                       include_key: &str,
                       include: &Option<String>,
                       default: &str|
         -> Result<(String, String), ConfigError> {
            let set = |v: &Option<String>| v.as_deref().is_some_and(|v| !v.is_empty());
            if set(exclude) && set(include) {
                return Err(bad(
                    include_key,
                    format!("{exclude_key} and {include_key}: give one, not both"),
                ));
            }
            let include = checked_regex(include_key, include, "")?;
            let default = if include.is_empty() { default } else { "" };
            let exclude = checked_regex(exclude_key, exclude, default)?;
            Ok((exclude, include))
        };
        macro_rules! filter {
            ($ex:ident, $in:ident, $default:expr) => {
                devices(
                    stringify!($ex),
                    &self.$ex,
                    stringify!($in),
                    &self.$in,
                    $default,
                )?
            };
        }
        let (diskstats_device_exclude, diskstats_device_include) = filter!(
            diskstats_device_exclude,
            diskstats_device_include,
            DEFAULT_DISKSTATS_DEVICE_EXCLUDE
        );
        let (netdev_device_exclude, netdev_device_include) =
            filter!(netdev_device_exclude, netdev_device_include, "");
        let (arp_device_exclude, arp_device_include) =
            filter!(arp_device_exclude, arp_device_include, "");
        let (hwmon_chip_exclude, hwmon_chip_include) =
            filter!(hwmon_chip_exclude, hwmon_chip_include, "");
        let netclass_ignored_devices = checked_regex(
            "netclass_ignored_devices",
            &self.netclass_ignored_devices,
            "",
        )?;
        let cpu_info_flags_include =
            checked_regex("cpu_info_flags_include", &self.cpu_info_flags_include, "")?;
        let cpu_info_bugs_include =
            checked_regex("cpu_info_bugs_include", &self.cpu_info_bugs_include, "")?;
        let filesystem_statfs_wait = match &self.filesystem_statfs_wait {
            None => procfs::DEFAULT_STATFS_WAIT,
            Some(v) => in_range(
                "filesystem_statfs_wait",
                parse_duration("filesystem_statfs_wait", v)?,
                Duration::from_millis(1),
                Duration::from_secs(60),
            )?,
        };
        let fs = self.store.clone().unwrap_or_default();
        let store_dur = |key: &str,
                         v: &Option<String>,
                         default: Duration,
                         lo: Duration,
                         hi: Duration| match v {
            None => Ok(default),
            Some(v) => in_range(key, parse_duration(key, v)?, lo, hi),
        };
        let store = StoreConfig {
            enabled: fs.enabled.unwrap_or(true),
            // Empty: no usable default (the agent logs why, and does not
            // record).
            path: fs
                .path
                .filter(|p| !p.as_os_str().is_empty())
                .unwrap_or_else(|| default_store_path().unwrap_or_default()),
            retention: store_dur(
                "store.retention",
                &fs.retention,
                Duration::from_secs(7 * 86_400),
                Duration::from_secs(60),
                Duration::from_secs(3650 * 86_400),
            )?,
            max_bytes: match &fs.max_size {
                None => 1 << 30,
                // Below 256 KiB a day file (its pages, WAL and WAL index)
                // would not keep a single block.
                Some(v) => parse_bytes(v).filter(|b| *b >= 256 << 10).ok_or_else(|| {
                    bad(
                        "store.max_size",
                        format!("{v:?} is not a size of at least 256 KiB; write bytes or e.g. \"500MiB\", \"2GiB\", \"1G\""),
                    )
                })?,
            },
            process_interval: store_dur(
                "store.process_interval",
                &fs.process_interval,
                Duration::from_secs(5),
                Duration::from_secs(1),
                Duration::from_secs(3600),
            )?,
            flush_interval: store_dur(
                "store.flush_interval",
                &fs.flush_interval,
                Duration::from_secs(15),
                Duration::from_millis(100),
                Duration::from_secs(300),
            )?,
            journal: fs.journal.filter(|p| !p.as_os_str().is_empty()),
            group: fs.group.filter(|g| !g.is_empty()),
        };
        Ok(Config {
            store,
            listen,
            proc_root: self.proc_root.clone().unwrap_or_else(|| "/proc".into()),
            sys_root: self.sys_root.clone().unwrap_or_else(|| "/sys".into()),
            housekeeping_cpus,
            shm_path,
            overhead_budget_pct,
            slack,
            process_backend,
            sources,
            process_metrics,
            cgroup_metrics,
            web_config_file: self
                .web_config_file
                .clone()
                .filter(|p| !p.as_os_str().is_empty()),
            http_max_connections,
            http_max_requests: self.http_max_requests.unwrap_or(0),
            http_process_rows: self.http_process_rows.unwrap_or(false),
            rootfs: self
                .rootfs
                .clone()
                .filter(|p| !p.as_os_str().is_empty())
                .unwrap_or_else(|| "/".into()),
            filesystem_mount_points_exclude,
            filesystem_fs_types_exclude,
            diskstats_device_exclude,
            diskstats_device_include,
            netdev_device_exclude,
            netdev_device_include,
            arp_device_exclude,
            arp_device_include,
            hwmon_chip_exclude,
            hwmon_chip_include,
            netclass_ignored_devices,
            netclass_ignore_invalid_speed: self.netclass_ignore_invalid_speed.unwrap_or(false),
            cpu_info_flags_include,
            cpu_info_bugs_include,
            cpufreq_isolated_cur_freq: self.cpufreq_isolated_cur_freq.unwrap_or(false),
            sensors_on_isolated_cpus: self.sensors_on_isolated_cpus.unwrap_or(false),
            filesystem_statfs_wait,
            textfile_directory: self
                .textfile_directory
                .clone()
                .filter(|p| !p.as_os_str().is_empty()),
            udev_data_path: self
                .udev_data_path
                .clone()
                .filter(|p| !p.as_os_str().is_empty())
                .unwrap_or_else(|| "/run/udev/data".into()),
            collectors,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> String {
        FileConfig::from_toml(text)
            .and_then(|f| f.resolve())
            .unwrap_err()
            .to_string()
    }

    /// The per-CPU collectors are off unless named; the command line adds
    /// to the file's list; a name that is not one of them is refused.
    #[test]
    fn collectors_off_by_default_are_turned_on_by_name() {
        assert!(!Config::default().collector_on("interrupts"));
        let mut f = FileConfig::from_toml("collectors = [\"softirqs\"]\n").unwrap();
        f.apply(&FileConfig {
            collectors: Some(vec!["interrupts".into(), "softirqs".into()]),
            ..FileConfig::default()
        });
        let c = f.resolve().unwrap();
        assert_eq!(c.collectors, ["softirqs", "interrupts"]);
        assert!(c.collector_on("interrupts") && c.collector_on("softirqs"));
        let back = FileConfig::from_toml(&c.to_toml())
            .unwrap()
            .resolve()
            .unwrap();
        assert_eq!(back.collectors, c.collectors);
        let e = err("collectors = [\"cpu\"]\n");
        assert!(
            e.contains("collectors") && e.contains("\"cpu\"") && e.contains("interrupts, softirqs"),
            "{e}"
        );
    }

    /// Every source has its `[sources.<key>]` table, and the opt-in ones
    /// are off until enabled there.
    #[test]
    fn every_source_has_a_table_and_opt_ins_start_off() {
        for s in AgentSource::ALL {
            let text = format!("[sources.{}]\nenabled = {}\n", s.key(), s.opt_in());
            let f = FileConfig::from_toml(&text).unwrap();
            assert_eq!(
                f.sources.as_ref().unwrap().get(s).unwrap().enabled,
                Some(s.opt_in())
            );
            assert_eq!(
                Config::default().source(s).enabled,
                !s.opt_in(),
                "{}",
                s.key()
            );
            assert_eq!(
                f.resolve().unwrap().source(s).enabled,
                s.opt_in(),
                "{}",
                s.key()
            );
        }
    }

    #[test]
    fn defaults_follow_the_documented_intervals() {
        let c = Config::default();
        let iv = |s| c.source(s).interval;
        assert_eq!(
            iv(AgentSource::System(Source::Stat)),
            Duration::from_secs(1)
        );
        assert_eq!(
            iv(AgentSource::System(Source::Interrupts)),
            Duration::from_secs(5)
        );
        assert_eq!(
            iv(AgentSource::System(Source::Softirqs)),
            Duration::from_secs(5)
        );
        assert_eq!(iv(AgentSource::Processes), Duration::from_secs(5));
        assert_eq!(c.listen[0].to_string(), "127.0.0.1:9479");
        assert_eq!(
            c.slack_for(AgentSource::System(Source::Stat)),
            Duration::from_millis(10)
        );
        assert_eq!(
            c.slack_for(AgentSource::Processes),
            Duration::from_millis(50)
        );
    }

    #[test]
    fn a_partial_source_table_keeps_that_sources_other_defaults() {
        let f = FileConfig::from_toml("[sources.interrupts]\nmin_interval = \"1s\"\n").unwrap();
        let c = f.resolve().unwrap();
        let s = c.source(AgentSource::System(Source::Interrupts));
        assert_eq!(s.interval, Duration::from_secs(5));
        assert_eq!(s.min_interval, Duration::from_secs(1));
    }

    #[test]
    fn printed_config_reads_back_to_the_same_config() {
        let text = "listen = \"127.0.0.1:9999\"\nhousekeeping_cpus = \"0\"\n[sources.processes]\ninterval = \"10s\"\n[process_metrics]\nmode = \"top\"\ntop_n = 5\n";
        let c = FileConfig::from_toml(text).unwrap().resolve().unwrap();
        let again = FileConfig::from_toml(&c.to_toml())
            .unwrap()
            .resolve()
            .unwrap();
        assert_eq!(c, again);
        assert_eq!(
            again.source(AgentSource::Processes).max_age,
            Duration::from_secs(50)
        );
    }

    #[test]
    fn bad_values_name_key_value_and_range() {
        let e = err("[sources.stat]\ninterval = \"1ms\"\n");
        assert!(
            e.contains("sources.stat.interval") && e.contains("1ms") && e.contains("10ms to 1h"),
            "{e}"
        );
        let e = err("[sources.stat]\ninterval = \"soon\"\n");
        assert!(
            e.contains("sources.stat.interval") && e.contains("\"soon\""),
            "{e}"
        );
        let e = err("[sources.processes]\nmax_age = \"1s\"\n");
        assert!(
            e.contains("sources.processes.max_age") && e.contains("5s to 1day"),
            "{e}"
        );
        let e = err("overhead_budget_pct = 500.0\n");
        assert!(
            e.contains("overhead_budget_pct") && e.contains("0.01 to 100"),
            "{e}"
        );
        let e = err("listen = \"localhost\"\n");
        assert!(e.contains("listen") && e.contains("IP:PORT"), "{e}");
        let c = FileConfig::from_toml("listen = \":9100\"\n")
            .and_then(|f| f.resolve())
            .unwrap();
        assert_eq!(c.listen[0].to_string(), "0.0.0.0:9100");
        let c = FileConfig::from_toml("listen = [\"127.0.0.1:9100\", \"[::1]:9100\"]\n")
            .unwrap()
            .resolve()
            .unwrap();
        assert_eq!(
            c.listen.iter().map(|a| a.to_string()).collect::<Vec<_>>(),
            ["127.0.0.1:9100", "[::1]:9100"]
        );
        assert!(
            FileConfig::from_toml("listen = \"\"\n")
                .unwrap()
                .resolve()
                .unwrap()
                .listen
                .is_empty()
        );
        assert!(err("listen = \":x\"\n").contains(":PORT"));
        let e = err("housekeeping_cpus = \"0-x\"\n");
        assert!(e.contains("housekeeping_cpus") && e.contains("0-x"), "{e}");
        let e = err("process_backend = \"ebpf\"\n");
        assert!(
            e.contains("process_backend") && e.contains("auto, bpf, procfs"),
            "{e}"
        );
        let e = err("[process_metrics]\nmode = \"filter\"\n");
        assert!(e.contains("process_metrics.mode"), "{e}");
        // 64 KiB would keep no block at all: the WAL index alone is 32.
        let e = err("[store]\nmax_size = \"64KiB\"\n");
        assert!(
            e.contains("store.max_size") && e.contains("at least 256 KiB"),
            "{e}"
        );
    }

    #[test]
    fn a_source_may_be_named_by_an_alias_once() {
        let f = FileConfig::from_toml("[sources.\"pressure/cpu\"]\nenabled = false\n").unwrap();
        let c = f.resolve().unwrap();
        assert!(!c.source(AgentSource::System(Source::PressureCpu)).enabled);
        let text = "[sources.net_dev]\nenabled = false\n[sources.\"net/dev\"]\nenabled = true\n";
        let e = err(text);
        assert!(e.contains("net_dev") && e.contains("twice"), "{e}");
    }

    #[test]
    fn unknown_keys_and_sources_are_named() {
        let e = err("[sources.stats]\ninterval = \"1s\"\n");
        assert!(e.contains("stats") && e.contains("interrupts"), "{e}");
        let e = err("intervall = 3\n");
        assert!(e.contains("intervall"), "{e}");
        let e = err("[process_metrics]\nmode = \"all\"\n");
        assert!(e.contains("all") && e.contains("top"), "{e}");
    }

    #[test]
    fn overrides_win_over_the_file() {
        let mut f =
            FileConfig::from_toml("listen = \"127.0.0.1:1\"\n[sources.stat]\ninterval = \"2s\"\n")
                .unwrap();
        let mut over = FileConfig {
            listen: Some(Listen::One("127.0.0.1:2".into())),
            ..Default::default()
        };
        over.sources = Some(FileSources::default());
        *over
            .sources
            .as_mut()
            .unwrap()
            .get_mut(AgentSource::System(Source::Stat)) = Some(FileSource {
            min_interval: Some("0s".into()),
            ..Default::default()
        });
        f.apply(&over);
        let c = f.resolve().unwrap();
        assert_eq!(c.listen[0].port(), 2);
        let s = c.source(AgentSource::System(Source::Stat));
        assert_eq!(
            (s.interval, s.min_interval),
            (Duration::from_secs(2), Duration::ZERO)
        );
    }
}
