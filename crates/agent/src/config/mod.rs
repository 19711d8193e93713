//! The agent's configuration: one TOML file, every key optional, merged onto
//! built-in defaults, then validated. Command-line flags are applied to the
//! file's values before validation, so they are checked the same way.
//!
//! Errors name the key, the bad value and what is accepted.

use std::path::{Path, PathBuf};
use std::time::Duration;

use procfs::Source;
use serde::{Deserialize, Serialize};

mod keys;
pub mod kinds;
mod sample;
mod sources;

pub use keys::{
    BasicAuth, CgroupMetrics, Config, FileBasicAuth, FileCgroupMetrics, FileConfig,
    FileProcessMetrics, FileRemoteWrite, FileStore, FileTlsClient, Flag, ProcessMetrics,
    RemoteWrite, StoreConfig, TlsClient,
};
pub use kinds::{KeyDoc, Section, Shape};
pub use sample::sample;
pub use sources::{FileSource, FileSources};

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

/// The order a receiver is sent a backlog in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SendOrder {
    /// Oldest first, in time order: what a receiver without an
    /// out-of-order window accepts.
    OldestFirst,
    /// The newest samples first, then the gap from its end backwards.
    NewestFirst,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SortKey {
    Cpu,
    Rss,
    Majflt,
    Threads,
}

/// node_exporter collectors whose families are served only when turned on
/// (`collectors = [...]`, `--collector.NAME`), as node_exporter leaves them
/// off: their series grow as CPUs times IRQs or vectors
/// (`node_interrupts_total`, `node_softirqs_functions_total`). Their
/// sources are read either way (for `top`, the history and the shared
/// memory), and a small aggregate of each is always served.
pub const COLLECTORS_OFF_BY_DEFAULT: [&str; 2] = ["interrupts", "softirqs"];

/// node_exporter's default `--collector.netstat.fields`: the keys of
/// /proc/net/{netstat,snmp,snmp6} (`Proto_Field`) served.
pub const DEFAULT_NETSTAT_FIELDS: &str = r"^(.*_(InErrors|InErrs)|Ip_Forwarding|Ip(6|Ext)_(InOctets|OutOctets)|Icmp6?_(InMsgs|OutMsgs)|TcpExt_(Listen.*|Syncookies.*|TCPSynRetrans|TCPTimeouts|TCPOFOQueue|TCPRcvQDrop)|Tcp_(ActiveOpens|InSegs|OutSegs|OutRsts|PassiveOpens|RetransSegs|CurrEstab)|Udp6?_(InDatagrams|OutDatagrams|NoPorts|RcvbufErrors|SndbufErrors))$";

/// node_exporter's default `--collector.vmstat.fields`: the keys of
/// /proc/vmstat served.
pub const DEFAULT_VMSTAT_FIELDS: &str = r"^(oom_kill|pgpg|pswp|pg.*fault).*";

/// node_exporter's default `--collector.diskstats.device-exclude`:
/// partitions and pseudo-devices.
pub const DEFAULT_DISKSTATS_DEVICE_EXCLUDE: &str =
    r"^(ram|loop|fd|(h|s|v|xv)d[a-z]|nvme\d+n\d+p)\d+$";

/// The default store directory: /var/lib/quietstat as root, else
/// `$XDG_STATE_HOME/quietstat`, else `~/.local/state/quietstat` with the
/// home from `$HOME` or, without it, from the user's passwd entry. `Err`
/// (why) when there is no usable home: never a path under `/tmp`.
pub fn default_store_path() -> Result<PathBuf, sys::Error> {
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
        Some((name, home)) => Err(sys::Error::new(
            sys::ErrorKind::Absent,
            format!(
                "no HOME or XDG_STATE_HOME, and user {name}'s home {} is not a directory of its own; give --store DIR or [store] path",
                home.display()
            ),
        )),
        None => Err(sys::Error::new(
            sys::ErrorKind::Absent,
            format!(
                "no HOME or XDG_STATE_HOME, and no passwd entry for uid {uid}; give --store DIR or [store] path"
            ),
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

/// A pattern of the configuration, compiled (each was checked when the
/// configuration was resolved).
fn re(v: &str) -> regex::Regex {
    regex::Regex::new(v).expect("checked when the configuration was resolved")
}

impl Config {
    /// The memory ceiling: `max_rss` as set, or chosen from the machine;
    /// with why.
    pub fn memory_ceiling(&self) -> crate::memory::Auto {
        match self.max_rss {
            Some(bytes) => crate::memory::Auto {
                bytes,
                why: "max_rss as set".into(),
            },
            None => crate::memory::auto_ceiling(),
        }
    }

    pub fn source(&self, s: AgentSource) -> &SourceConfig {
        &self.sources[s.index()]
    }

    /// The gathered sources' options, for [`procfs::Reader::set_gather_options`].
    pub fn gather_options(&self) -> procfs::GatherOptions {
        procfs::GatherOptions {
            rootfs: self.rootfs.clone(),
            mount_points_exclude: re(&self.filesystem_mount_points_exclude),
            fs_types_exclude: re(&self.filesystem_fs_types_exclude),
            mount_points_include: (!self.filesystem_mount_points_include.is_empty())
                .then(|| re(&self.filesystem_mount_points_include)),
            fs_types_include: (!self.filesystem_fs_types_include.is_empty())
                .then(|| re(&self.filesystem_fs_types_include)),
            statfs_wait: self.filesystem_statfs_wait,
            textfile_directory: self.textfile_directory.clone(),
            textfile_max_dir_bytes: procfs::textfile::MAX_DIR_BYTES,
            udev_data: self.udev_data_path.clone(),
            cur_freq_on_quiet_cpus: self.cpufreq_isolated_cur_freq,
            sensors_on_quiet_cpus: self.sensors_on_isolated_cpus,
            sysctls: self.sysctl_names(),
            disks: self.disk_filter(),
            systemd: self.systemd_options(),
            qdisc_fixtures: self.qdisc_fixtures.clone(),
            wifi_fixtures: self.wifi_fixtures.clone(),
            ethtool_include: (!self.ethtool_device_include.is_empty())
                .then(|| re(&self.ethtool_device_include)),
            ethtool_exclude: (!self.ethtool_device_exclude.is_empty())
                .then(|| re(&self.ethtool_device_exclude)),
        }
    }

    /// Where and what the systemd source reads.
    pub fn systemd_options(&self) -> procfs::SystemdOptions {
        let anchored = |p: &str| procfs::anchored_unit_pattern(p).unwrap_or_else(|_| re(p));
        let mut o = procfs::SystemdOptions {
            include: anchored(&self.systemd_unit_include),
            exclude: anchored(&self.systemd_unit_exclude),
            tasks: self.systemd_task_metrics,
            restarts: self.systemd_restarts_metrics,
            start_time: self.systemd_start_time_metrics,
            deadline: self.systemd_read_deadline,
            ..Default::default()
        };
        if self.systemd_private {
            o.address = "unix:path=/run/systemd/private".into();
            o.bus = false;
        }
        o
    }

    /// The disks diskstats serves, as the gatherer filters them.
    pub fn disk_filter(&self) -> procfs::diskstats::DiskFilter {
        use procfs::diskstats::DiskFilter;
        match (
            self.diskstats_device_include.as_str(),
            self.diskstats_device_exclude.as_str(),
        ) {
            ("", DEFAULT_DISKSTATS_DEVICE_EXCLUDE) => DiskFilter::Default,
            ("", "") => DiskFilter::All,
            ("", exclude) => DiskFilter::Exclude(re(exclude)),
            (include, _) => DiskFilter::Include(re(include)),
        }
    }

    /// The sysctls the configuration names, numbers and text, each once
    /// (without their fields' names).
    pub fn sysctl_names(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for s in self.sysctl_include.iter().chain(&self.sysctl_include_info) {
            let name = s.split(':').next().unwrap_or(s);
            if !out.iter().any(|n| n == name) {
                out.push(name.to_string());
            }
        }
        out
    }

    /// Whether collector `name` of [`COLLECTORS_OFF_BY_DEFAULT`] is on.
    pub fn collector_on(&self, name: &str) -> bool {
        self.collectors.contains(&name)
    }

    /// The slack window of `s`: sources due within it are read together.
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
        toml::to_string(&FileConfig::print(self)).expect("the configuration serializes")
    }

    /// [`Config::to_toml`] with what each "auto" chose on this machine in
    /// a comment on its line (`--print-config`).
    pub fn to_toml_explained(&self) -> String {
        let mut out = String::new();
        for line in self.to_toml().lines() {
            out.push_str(line);
            if line == "max_rss = \"auto\"" {
                let c = self.memory_ceiling();
                out.push_str(&format!(
                    " # {} ({} bytes) here: {}",
                    crate::memory::mib(c.bytes),
                    c.bytes,
                    c.why
                ));
            }
            out.push('\n');
        }
        out
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

    /// Merges onto the defaults and validates: each key by its row, then
    /// the rules between keys.
    pub fn resolve(&self) -> Result<Config, ConfigError> {
        let mut c = self.resolve_in("")?;
        // Exclude and include are one or the other, as in node_exporter;
        // an include replaces the default exclusion.
        macro_rules! one_of {
            ($($ex:ident / $in:ident),*) => {$(
                let set = |v: &Option<String>| v.as_deref().is_some_and(|v| !v.is_empty());
                if set(&self.$ex) && set(&self.$in) {
                    return Err(bad(
                        stringify!($in),
                        concat!(stringify!($ex), " and ", stringify!($in), ": give one, not both"),
                    ));
                }
                if !c.$in.is_empty() && self.$ex.is_none() {
                    c.$ex = String::new();
                }
            )*};
        }
        one_of!(
            diskstats_device_exclude / diskstats_device_include,
            netdev_device_exclude / netdev_device_include,
            arp_device_exclude / arp_device_include,
            hwmon_chip_exclude / hwmon_chip_include
        );
        let pm = &c.process_metrics;
        if pm.mode == ProcessMetricsMode::Filter && pm.names.is_empty() && pm.cgroup.is_none() {
            return Err(bad(
                "process_metrics.mode",
                "\"filter\" needs process_metrics.names or process_metrics.cgroup",
            ));
        }
        Ok(c)
    }

    /// Sets every key `over` sets (a list of collectors adds to this one's).
    pub fn apply(&mut self, over: &FileConfig) {
        Section::apply(self, over);
    }

    /// Every key of the file, with its line.
    pub fn keys() -> Vec<KeyDoc> {
        <FileConfig as Section>::keys("")
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
        // A sysctl's name never leaves /proc/sys.
        let e = err("sysctl_include = [\"fs..x\"]\n");
        assert!(
            e.contains("sysctl_include") && e.contains("dotted name"),
            "{e}"
        );
        let e = err("sysctl_include_info = [\"../etc/shadow\"]\n");
        assert!(
            e.contains("sysctl_include_info") && e.contains("\"../etc/shadow\""),
            "{e}"
        );
        let c = FileConfig::from_toml("sysctl_include = [\"fs.file-nr:total,current,max\", \"fs.file-nr\"]\nsysctl_include_info = [\"fs.file-nr\"]\n")
            .and_then(|f| f.resolve())
            .unwrap();
        assert_eq!(c.sysctl_names(), ["fs.file-nr"]);
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

    /// Every key `--print-config` writes has its row in the key table,
    /// with a line that says what it is; so has every key a row names
    /// below a table.
    #[test]
    fn every_printed_key_has_a_row_with_its_line() {
        let rows: Vec<String> = FileConfig::keys().into_iter().map(|k| k.path).collect();
        for k in FileConfig::keys() {
            assert!(!k.doc.is_empty(), "{} has no line", k.path);
        }
        fn leaves(t: &toml::Table, prefix: &str, out: &mut Vec<String>) {
            for (k, v) in t {
                let path = match prefix {
                    "" => k.clone(),
                    // Each source's table is one row for all of them.
                    "sources" => "sources.<source>".into(),
                    p => format!("{p}.{k}"),
                };
                match v {
                    toml::Value::Table(t) => leaves(t, &path, out),
                    _ => out.push(path),
                }
            }
        }
        let mut printed = Vec::new();
        leaves(
            &toml::from_str(&Config::default().to_toml()).unwrap(),
            "",
            &mut printed,
        );
        assert!(printed.len() > 40, "{printed:?}");
        for p in &printed {
            assert!(rows.contains(p), "{p} is printed but has no row");
        }
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
