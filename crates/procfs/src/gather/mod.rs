//! I/O for the gathered sources ([`Source::gathered`]): directory walks,
//! sysfs attributes and system calls, written as the text each source's
//! parser documents. Kept apart from the parsers so that those stay pure
//! and fuzzable, and every source still costs one "read" and one "parse".

use std::collections::HashSet;
use std::io::{Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{self, Sender};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use regex::Regex;

use crate::file_io::open_nonblocking as open;
use crate::source::Source;

mod ethtool;
mod filesystem;
mod qdisc;
mod sensors;
mod system;
mod systemd;
mod wifi;

pub use systemd::{
    DEFAULT_SYSTEMD_DEADLINE, DEFAULT_UNIT_EXCLUDE, SystemdOptions,
    anchored as anchored_unit_pattern,
};

use filesystem::*;
use sensors::*;

/// node_exporter's default `--collector.filesystem.mount-points-exclude`.
pub const DEFAULT_MOUNT_POINTS_EXCLUDE: &str =
    "^/(dev|proc|run/credentials/.+|sys|var/lib/docker/.+|var/lib/containers/storage/.+)($|/)";
/// node_exporter's default `--collector.filesystem.fs-types-exclude`.
pub const DEFAULT_FS_TYPES_EXCLUDE: &str = "^(autofs|binfmt_misc|bpf|cgroup2?|configfs|debugfs|devpts|devtmpfs|fusectl|hugetlbfs|iso9660|mqueue|nsfs|overlay|proc|procfs|pstore|rpc_pipefs|securityfs|selinuxfs|squashfs|erofs|sysfs|tracefs)$";

/// How long the reader waits for one statfs(2) before reporting the mount
/// as failed and moving on (the call goes on in the background; the mount
/// is retried once it returns).
pub const DEFAULT_STATFS_WAIT: Duration = Duration::from_millis(100);

/// What the gathered sources need besides the roots.
pub struct GatherOptions {
    /// Root-filesystem prefix: mounts, os-release and /etc/selinux are
    /// below it (node_exporter's `--path.rootfs`).
    pub rootfs: PathBuf,
    pub mount_points_exclude: Regex,
    pub fs_types_exclude: Regex,
    /// The only mount points and filesystem types read, instead of the
    /// exclusions (node_exporter's `--collector.filesystem.*-include`).
    pub mount_points_include: Option<Regex>,
    pub fs_types_include: Option<Regex>,
    pub statfs_wait: Duration,
    /// The textfile source's directory of `*.prom` files (none: the source
    /// reports no files and no error, as node_exporter without one).
    pub textfile_directory: Option<PathBuf>,
    /// Bytes of the textfile directory read at most
    /// ([`crate::textfile::MAX_DIR_BYTES`] unless lowered): files past it,
    /// in name order, are refused by name.
    pub textfile_max_dir_bytes: usize,
    /// udev's database (node_exporter's `--path.udev.data`).
    pub udev_data: PathBuf,
    /// Read `cpuinfo_cur_freq` and `scaling_cur_freq` of isolated and
    /// nohz_full CPUs too. Off by default: the kernel answers each by
    /// asking that CPU (an IPI to run the frequency driver's get, or to
    /// sample APERF/MPERF on x86), the interruption isolation is for.
    pub cur_freq_on_quiet_cpus: bool,
    /// Read the coretemp sensors of isolated and nohz_full CPUs' cores (and
    /// the package sensor and `x86_pkg_temp` zones when a package's first
    /// CPU is one of them) too. Off by default: the driver answers each
    /// read with `rdmsr_on_cpu`, an IPI to that CPU.
    pub sensors_on_quiet_cpus: bool,
    /// The sysctls the sysctl source reads, by dotted name (`fs.file-nr`,
    /// below /proc/sys as `fs/file-nr`).
    pub sysctls: Vec<String>,
    /// The disks whose queue attributes the block_queue source reads:
    /// those diskstats serves (not loop devices, partitions and the like
    /// by default).
    pub disks: crate::diskstats::DiskFilter,
    /// Where and what the systemd source reads.
    pub systemd: SystemdOptions,
    /// A directory of node_exporter's qdisc fixture (`results.json`) read
    /// instead of the kernel (`--collector.qdisc.fixtures`).
    pub qdisc_fixtures: Option<PathBuf>,
    /// node_exporter's wifi fixtures (`interfaces.json`, `<device>/bss.json`,
    /// `<device>/stationinfo.json`) read instead of nl80211
    /// (`--collector.wifi.fixtures`).
    pub wifi_fixtures: Option<PathBuf>,
    /// The network devices the ethtool source asks (node_exporter's
    /// `--collector.ethtool.device-include` and `device-exclude`).
    pub ethtool_include: Option<Regex>,
    pub ethtool_exclude: Option<Regex>,
}

impl Default for GatherOptions {
    fn default() -> Self {
        GatherOptions {
            rootfs: PathBuf::from("/"),
            mount_points_exclude: Regex::new(DEFAULT_MOUNT_POINTS_EXCLUDE)
                .expect("the default is a valid expression"),
            fs_types_exclude: Regex::new(DEFAULT_FS_TYPES_EXCLUDE)
                .expect("the default is a valid expression"),
            mount_points_include: None,
            fs_types_include: None,
            statfs_wait: DEFAULT_STATFS_WAIT,
            textfile_directory: None,
            textfile_max_dir_bytes: crate::textfile::MAX_DIR_BYTES,
            udev_data: PathBuf::from("/run/udev/data"),
            cur_freq_on_quiet_cpus: false,
            sensors_on_quiet_cpus: false,
            sysctls: Vec::new(),
            disks: Default::default(),
            systemd: SystemdOptions::default(),
            qdisc_fixtures: None,
            wifi_fixtures: None,
            ethtool_include: None,
            ethtool_exclude: None,
        }
    }
}

/// The path a gathered source is named by in errors.
pub(crate) fn main_path(
    source: Source,
    proc_root: &Path,
    sys_root: &Path,
    o: &GatherOptions,
) -> PathBuf {
    let rootfs = &o.rootfs;
    match source {
        Source::Netclass => sys_root.join("class/net"),
        Source::Filesystem => proc_root.join("1/mounts"),
        Source::Time => sys_root.join("devices/system/clocksource"),
        Source::Timex => PathBuf::from("adjtimex(2)"),
        Source::Os => rootfs.join(crate::os_release::FILES[0]),
        Source::Selinux => sys_root.join("fs/selinux"),
        Source::Textfile => PathBuf::from("textfile directory"),
        Source::Udev => o.udev_data.clone(),
        Source::Cpufreq => sys_root.join("devices/system/cpu"),
        Source::ThermalThrottle => sys_root.join("devices/system/cpu/cpu0/thermal_throttle"),
        Source::ThermalZone => sys_root.join("class/thermal"),
        Source::Dmi => sys_root.join("class/dmi/id"),
        Source::Bonding => sys_root.join("class/net/bonding_masters"),
        Source::Hwmon => sys_root.join("class/hwmon"),
        Source::Numa => sys_root.join("devices/system/node"),
        Source::Ksm => sys_root.join("kernel/mm/ksm"),
        Source::Zfs => proc_root.join("spl/kstat/zfs"),
        Source::Lnstat => proc_root.join("net/stat"),
        Source::Sysctl => proc_root.join("sys"),
        Source::CpuIsolated => sys_root.join(crate::cpu::ISOLATED_FILE),
        Source::Systemd => PathBuf::from(format!("systemd over D-Bus ({})", o.systemd.address)),
        Source::Ethtool => PathBuf::from("ethtool ioctl (SIOCETHTOOL)"),
        Source::Wifi => match &o.wifi_fixtures {
            Some(d) => d.join("interfaces.json"),
            None => PathBuf::from("generic netlink (nl80211)"),
        },
        Source::Qdisc => match &o.qdisc_fixtures {
            Some(d) => d.join("results.json"),
            None => PathBuf::from("netlink (RTM_GETQDISC)"),
        },
        s if s.class_spec().is_some() => sys_root.join(s.class_spec().expect("a class source").dir),
        _ => proc_root.join(source.files()[0]),
    }
}

/// The gathering state a reader keeps: options and the statfs worker.
/// Scratch capacity kept between reads; beyond it, freed after each.
const SCRATCH_KEPT: usize = 4 << 20;

#[derive(Default)]
pub(crate) struct Gatherer {
    pub options: GatherOptions,
    statfs: Statfs,
    scratch: Vec<u8>,
    attr: Vec<u8>,
    /// Every file opened, when traced ([`crate::Reader::trace_opens`]).
    pub opened: Option<Vec<PathBuf>>,
    /// coretemp's zones, and the online list they were read under.
    zones: Option<(Vec<u8>, SensorZones)>,
    /// The connection to systemd, kept between reads.
    systemd_conn: Option<sys::dbus::Connection>,
    /// A connection whose read timed out, and when: the bus is not asked
    /// again until it has answered on it.
    systemd_stuck: Option<(sys::dbus::Connection, std::time::Instant)>,
    /// Each unit's Type as last read, and the manager's
    /// UnitsLoadStartTimestamp and UnitsLoadTimestamp they were read under.
    systemd_types: std::collections::HashMap<String, String>,
    systemd_loaded_at: Option<(u64, u64)>,
}

impl Gatherer {
    /// Gathers `source` into `buf` (growing it up to `max`); returns the length.
    pub fn gather(
        &mut self,
        source: Source,
        proc_root: &Path,
        sys_root: &Path,
        buf: &mut Vec<u8>,
        max: usize,
    ) -> std::io::Result<usize> {
        self.scratch.clear();
        match source {
            Source::Netclass => self.netclass(sys_root)?,
            Source::Filesystem => self.filesystem(proc_root)?,
            Source::Time => self.time(sys_root)?,
            Source::Timex => self.timex()?,
            Source::Os => self.os()?,
            Source::Selinux => self.selinux(sys_root)?,
            Source::Textfile => self.textfile(),
            Source::Udev => self.udev()?,
            Source::Cpufreq => self.cpufreq(sys_root)?,
            Source::ThermalThrottle => self.throttles(sys_root)?,
            Source::Wifi => self.wifi()?,
            Source::ThermalZone => self.thermal(sys_root)?,
            Source::Dmi => {
                self.dir_attrs(&sys_root.join("class/dmi/id"), &crate::hardware::DMI_FILES)?
            }
            Source::Ksm => {
                self.dir_attrs(&sys_root.join("kernel/mm/ksm"), &crate::mm::KSM_FILES)?
            }
            Source::Zfs => self.zfs(proc_root)?,
            Source::Lnstat => self.lnstat(proc_root)?,
            Source::Sysctl => self.sysctl(proc_root),
            Source::Systemd => self.systemd()?,
            Source::Qdisc => self.qdisc()?,
            Source::Ethtool => self.ethtool(sys_root)?,
            Source::CpuIsolated => {
                open(&sys_root.join(crate::cpu::ISOLATED_FILE))?
                    .take(64 << 10)
                    .read_to_end(&mut self.scratch)?;
            }
            Source::Btrfs => {
                let extra = self.btrfs_ioctls(proc_root);
                self.class(sys_root, &crate::class::BTRFS, &extra, &|_| true)?
            }
            Source::DmMultipath => {
                let extra = self.multipath_paths(sys_root);
                self.class(sys_root, &crate::class::DM_MULTIPATH, &extra, &|_| true)?
            }
            Source::BlockQueue => {
                let disks = self.options.disks.clone();
                let keep = |n: &str| disks.keeps(n);
                self.class(
                    sys_root,
                    &crate::class::BLOCK_QUEUE,
                    &Default::default(),
                    &keep,
                )?
            }
            Source::Pcidevice => {
                let extra = Self::pci_parents(sys_root);
                self.class(sys_root, &crate::class::PCIDEVICE, &extra, &|_| true)?
            }
            s if s.class_spec().is_some() => {
                let spec = s.class_spec().expect("a class source");
                self.class(sys_root, spec, &Default::default(), &|_| true)?
            }
            Source::Bonding => self.bonding(sys_root)?,
            Source::Hwmon => self.hwmon(sys_root)?,
            Source::Numa => self.numa(sys_root)?,
            _ => return Err(std::io::ErrorKind::InvalidInput.into()),
        }
        let n = self.scratch.len();
        if n > max {
            return Err(std::io::Error::other(crate::file_io::TooLarge));
        }
        if buf.len() < n {
            buf.resize(n, 0);
        }
        buf[..n].copy_from_slice(&self.scratch);
        if self.scratch.capacity() > SCRATCH_KEPT {
            // A large directory's bytes go back once they are copied.
            self.scratch = Vec::new();
        }
        Ok(n)
    }

    /// Reads a small attribute file into `self.attr`, trimmed of the
    /// trailing newline; `false` when it could not be read.
    fn attr(&mut self, path: &Path) -> bool {
        self.attr.clear();
        if let Some(o) = &mut self.opened {
            o.push(path.to_path_buf());
        }
        let Ok(f) = open(path) else { return false };
        if f.take(64 << 10).read_to_end(&mut self.attr).is_err() {
            return false;
        }
        while self.attr.last().is_some_and(|c| c.is_ascii_whitespace()) {
            self.attr.pop();
        }
        true
    }

    /// As [`Gatherer::attr`], `name` below the directory `dir` (open, at
    /// `dir_path`): opened relative to it, so the directory's path (a link
    /// in /sys/class, resolved anew at each open by path) is not walked
    /// again for each attribute; and read in one call when it fits the
    /// buffer, as a sysfs attribute (at most a page) does: a short read is
    /// its end.
    fn attr_at(&mut self, dir: &std::fs::File, dir_path: &Path, name: &str) -> bool {
        use std::os::fd::{AsRawFd, FromRawFd};
        self.attr.clear();
        if let Some(o) = &mut self.opened {
            o.push(dir_path.join(name));
        }
        let Ok(c) = std::ffi::CString::new(name) else {
            return false;
        };
        // SAFETY: a valid directory descriptor and NUL-terminated name.
        let fd = unsafe {
            libc::openat(
                dir.as_raw_fd(),
                c.as_ptr(),
                libc::O_RDONLY | libc::O_NONBLOCK | libc::O_CLOEXEC,
            )
        };
        if fd < 0 {
            return false;
        }
        // SAFETY: a descriptor just opened, owned by `f` from here on.
        let mut f = unsafe { std::fs::File::from_raw_fd(fd) };
        let mut buf = [0u8; 4096];
        loop {
            match f.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    self.attr.extend_from_slice(&buf[..n]);
                    if n < buf.len() || self.attr.len() >= 64 << 10 {
                        break;
                    }
                }
                Err(_) => return false,
            }
        }
        while self.attr.last().is_some_and(|c| c.is_ascii_whitespace()) {
            self.attr.pop();
        }
        true
    }

    /// `name` value lines for each readable `attrs` file below `dir`.
    fn attrs(&mut self, dir: &Path, attrs: &[&str]) {
        for attr in attrs {
            if self.attr(&dir.join(attr)) && !self.attr.contains(&b'\n') {
                self.scratch.extend_from_slice(attr.as_bytes());
                self.scratch.push(b' ');
                self.scratch.extend_from_slice(&self.attr);
                self.scratch.push(b'\n');
            }
        }
    }

    /// The devices of a sysfs class ([`crate::class`]): `@<name>`, then
    /// the attributes of `spec` each has.
    fn class(
        &mut self,
        sys_root: &Path,
        spec: &crate::class::ClassSpec,
        extra: &std::collections::HashMap<String, Vec<String>>,
        keep: &dyn Fn(&str) -> bool,
    ) -> std::io::Result<()> {
        let dir = sys_root.join(spec.dir);
        let names = match entry_names(&dir, crate::limits::MAX_ROWS, |_, n| {
            spec.is_device(n) && keep(n)
        }) {
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && spec.missing_is_empty => {
                return Ok(());
            }
            Err(e) => return Err(e),
        };
        let mut key = String::new();
        for name in &names {
            let _ = writeln!(self.scratch, "@{name}");
            let device = dir.join(name);
            for pattern in spec.attrs {
                key.clear();
                self.glob_attr(&device, &mut key, pattern, 0);
            }
            for line in extra.get(name).into_iter().flatten() {
                self.scratch.extend_from_slice(line.as_bytes());
                self.scratch.push(b'\n');
            }
        }
        Ok(())
    }

    /// Reads the attributes `pattern` names below `dir` (a `*` component
    /// matches every entry of its directory, `csrow*` those starting with
    /// `csrow`, `ch*_ce_count` those between the two), each as
    /// `<key><path> <value>`.
    fn glob_attr(&mut self, dir: &Path, key: &mut String, pattern: &str, depth: usize) {
        let (head, rest) = match pattern.split_once('/') {
            Some((h, r)) => (h, Some(r)),
            None => (pattern, None),
        };
        let names: Vec<String> = match head.split_once('*') {
            Some((prefix, suffix)) if depth < 4 => {
                let keep = |n: &str| {
                    n.len() >= prefix.len() + suffix.len()
                        && n.starts_with(prefix)
                        && n.ends_with(suffix)
                };
                let Ok(v) = entry_names(dir, 4096, |_, n| keep(n)) else {
                    return;
                };
                v
            }
            Some(_) => return,
            None => vec![head.to_string()],
        };
        let len = key.len();
        for name in names {
            key.truncate(len);
            key.push_str(&name);
            let path = dir.join(&name);
            match rest {
                Some(r) => {
                    key.push('/');
                    self.glob_attr(&path, key, r, depth + 1);
                }
                None => {
                    if !self.attr(&path) {
                        continue;
                    }
                    if !self.attr.contains(&b'\n') {
                        self.scratch.extend_from_slice(key.as_bytes());
                        self.scratch.push(b' ');
                        self.scratch.extend_from_slice(&self.attr);
                        self.scratch.push(b'\n');
                        continue;
                    }
                    // `<name> <values>` lines (spaces or tabs between):
                    // one attribute each; a line of one word (a section's
                    // heading, `read:`) one without a value.
                    for line in self.attr.split(|&b| b == b'\n') {
                        let line = line.trim_ascii();
                        if line.is_empty() {
                            continue;
                        }
                        let gap = line
                            .iter()
                            .position(u8::is_ascii_whitespace)
                            .unwrap_or(line.len());
                        self.scratch.extend_from_slice(key.as_bytes());
                        self.scratch.push(b':');
                        self.scratch.extend_from_slice(&line[..gap]);
                        self.scratch.push(b' ');
                        self.scratch.extend_from_slice(line[gap..].trim_ascii());
                        self.scratch.push(b'\n');
                    }
                }
            }
        }
        key.truncate(len);
    }

    /// [`Self::attrs`] of a directory that must exist.
    fn dir_attrs(&mut self, dir: &Path, attrs: &[&str]) -> std::io::Result<()> {
        if !dir.is_dir() {
            return Err(std::io::ErrorKind::NotFound.into());
        }
        self.attrs(dir, attrs);
        Ok(())
    }

    /// Entries of `dir` named `<prefix><number>`, by number.
    fn numbered(dir: &Path, prefix: &str) -> std::io::Result<Vec<u64>> {
        let mut v: Vec<u64> = std::fs::read_dir(dir)?
            .flatten()
            .filter_map(|e| e.file_name().to_str()?.strip_prefix(prefix)?.parse().ok())
            .collect();
        v.sort_unstable();
        v.truncate(crate::limits::MAX_ROWS);
        Ok(v)
    }
}

/// A whole file of at most `cap` bytes (the rest is not read), opened
/// non-blocking as every file below a root is: a FIFO planted there reads
/// as empty instead of hanging the sampler.
fn read_capped(path: &Path, cap: u64) -> std::io::Result<Vec<u8>> {
    let mut out = Vec::new();
    open(path)?.take(cap).read_to_end(&mut out)?;
    Ok(out)
}

/// The names of the entries of `dir` that `keep` keeps (names that are
/// not UTF-8 are left out), sorted, at most `cap` of them.
fn entry_names(
    dir: &Path,
    cap: usize,
    keep: impl Fn(&std::fs::DirEntry, &str) -> bool,
) -> std::io::Result<Vec<String>> {
    let mut names: Vec<String> = std::fs::read_dir(dir)?
        .flatten()
        .filter_map(|e| {
            let n = e.file_name().into_string().ok()?;
            keep(&e, &n).then_some(n)
        })
        .collect();
    names.sort();
    names.truncate(cap);
    Ok(names)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statfs_answers_and_names_errors() {
        let mut s = Statfs::default();
        let r = s.stat(Path::new("/"), Duration::from_secs(5)).unwrap();
        assert!(r.blocks > 0 && r.bsize > 0);
        assert_eq!(
            s.stat(Path::new("/no/such/dir"), Duration::from_secs(5))
                .unwrap_err(),
            "ENOENT"
        );
        assert!(s.in_flight.lock().unwrap().is_empty());
    }

    #[test]
    fn a_path_through_a_remote_mount_is_a_hazard() {
        let hazards: HashSet<&[u8]> = [&b"/net/srv"[..], b"/mnt/fuse"].into_iter().collect();
        assert!(crosses_hazard(b"/net/srv", &hazards));
        assert!(crosses_hazard(b"/net/srv/local", &hazards));
        assert!(crosses_hazard(b"/mnt/fuse/a/b", &hazards));
        assert!(!crosses_hazard(b"/net/srv2", &hazards));
        assert!(!crosses_hazard(b"/net", &hazards));
        assert!(!crosses_hazard(b"/", &hazards));
        let root: HashSet<&[u8]> = [&b"/"[..]].into_iter().collect();
        assert!(crosses_hazard(b"/home", &root));
        assert!(!crosses_hazard(b"/home", &HashSet::new()));
    }

    /// Gathers the filesystem source from a mount table written here; the
    /// mount points are real paths of this machine, statfs'd for real.
    fn gather_mounts(table: &str) -> (Gatherer, String) {
        let dir = std::env::temp_dir().join(format!(
            "quietstat-gather-mounts-{}-{}",
            std::process::id(),
            table.len()
        ));
        std::fs::create_dir_all(dir.join("1")).unwrap();
        std::fs::write(dir.join("1/mounts"), table).unwrap();
        let mut g = Gatherer::default();
        let mut buf = Vec::new();
        let n = g
            .gather(
                Source::Filesystem,
                &dir,
                Path::new("/sys"),
                &mut buf,
                1 << 20,
            )
            .unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        (g, String::from_utf8(buf[..n].to_vec()).unwrap())
    }

    #[test]
    fn local_mounts_are_statfsd_here_and_remote_ones_on_the_worker() {
        let (g, out) = gather_mounts("/dev/vda1 / ext4 rw 0 0\ntmpfs /no/such/tmp tmpfs rw 0 0\n");
        assert!(
            g.statfs.worker.is_none(),
            "no thread for local mounts: {out}"
        );
        let lines: Vec<&str> = out.lines().collect();
        assert!(lines[0].starts_with("/dev/vda1 / ext4 rw ok "), "{out}");
        assert_eq!(lines[1], "tmpfs /no/such/tmp tmpfs rw error ENOENT");

        // A tmpfs below an NFS mount, and the NFS mount itself, go to the
        // worker; the root is still answered here.
        let (g, out) = gather_mounts(
            "/dev/vda1 / ext4 rw 0 0\nsrv:/x /no/such/net nfs rw 0 0\n\
             tmpfs /no/such/net/t tmpfs rw 0 0\n",
        );
        assert!(g.statfs.worker.is_some(), "{out}");
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 3, "{out}");
        assert!(lines[0].starts_with("/dev/vda1 / ext4 rw ok "), "{out}");
        assert_eq!(lines[1], "srv:/x /no/such/net nfs rw error ENOENT");
        assert_eq!(lines[2], "tmpfs /no/such/net/t tmpfs rw error ENOENT");
    }
}
