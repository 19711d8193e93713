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

use crate::source::Source;

/// node_exporter's default `--collector.filesystem.mount-points-exclude`.
pub const DEFAULT_MOUNT_POINTS_EXCLUDE: &str =
    "^/(dev|proc|run/credentials/.+|sys|var/lib/docker/.+|var/lib/containers/storage/.+)($|/)";
/// node_exporter's default `--collector.filesystem.fs-types-exclude`.
pub const DEFAULT_FS_TYPES_EXCLUDE: &str = "^(autofs|binfmt_misc|bpf|cgroup2?|configfs|debugfs|devpts|devtmpfs|fusectl|hugetlbfs|iso9660|mqueue|nsfs|overlay|proc|procfs|pstore|rpc_pipefs|securityfs|selinuxfs|squashfs|erofs|sysfs|tracefs)$";

/// How long the reader waits for one statfs(2) before reporting the mount
/// as failed and moving on (the call goes on in the background; the mount
/// is retried once it returns).
pub const DEFAULT_STATFS_WAIT: Duration = Duration::from_millis(100);

/// Calls in flight at most: beyond, further mounts are reported failed
/// without a call (each in-flight call holds one thread).
const MAX_IN_FLIGHT: usize = 64;

/// What the gathered sources need besides the roots.
pub struct GatherOptions {
    /// Root-filesystem prefix: mounts, os-release and /etc/selinux are
    /// below it (node_exporter's `--path.rootfs`).
    pub rootfs: PathBuf,
    pub mount_points_exclude: Regex,
    pub fs_types_exclude: Regex,
    pub statfs_wait: Duration,
    /// The textfile source's directory of `*.prom` files (none: the source
    /// reports no files and no error, as node_exporter without one).
    pub textfile_directory: Option<PathBuf>,
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
}

impl Default for GatherOptions {
    fn default() -> Self {
        GatherOptions {
            rootfs: PathBuf::from("/"),
            mount_points_exclude: Regex::new(DEFAULT_MOUNT_POINTS_EXCLUDE)
                .expect("the default is a valid expression"),
            fs_types_exclude: Regex::new(DEFAULT_FS_TYPES_EXCLUDE)
                .expect("the default is a valid expression"),
            statfs_wait: DEFAULT_STATFS_WAIT,
            textfile_directory: None,
            udev_data: PathBuf::from("/run/udev/data"),
            cur_freq_on_quiet_cpus: false,
            sensors_on_quiet_cpus: false,
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
        Source::ThermalZone => sys_root.join("class/thermal"),
        Source::Dmi => sys_root.join("class/dmi/id"),
        Source::Bonding => sys_root.join("class/net/bonding_masters"),
        Source::Hwmon => sys_root.join("class/hwmon"),
        Source::Numa => sys_root.join("devices/system/node"),
        Source::Ksm => sys_root.join("kernel/mm/ksm"),
        Source::Zfs => proc_root.join("spl/kstat/zfs"),
        Source::CpuIsolated => sys_root.join(crate::cpu::ISOLATED_FILE),
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
}

/// A hwmon sensor's label file (`temp2_label`), its sensor (`temp2`) and
/// its bytes as read (`Core 0`).
struct Label {
    file: String,
    sensor: String,
    bytes: Vec<u8>,
}

/// coretemp's zones: one per (package, die), numbered as the driver
/// numbers its platform devices (`coretemp.N`, the logical die id: in the
/// order of each zone's first CPU).
#[derive(Default)]
struct SensorZones {
    zones: Vec<SensorZone>,
}

struct SensorZone {
    key: (u32, u32),
    /// Where the driver reads the package sensor.
    first_cpu: u32,
    /// (core id, CPU) of each online CPU.
    cores: Vec<(u32, u32)>,
}

impl SensorZones {
    /// Whether coretemp chip `zone`'s sensor labelled `label` ("Core 3",
    /// "Package id 0") is read on a quiet CPU. A chip whose zone is not
    /// known counts every zone: it skips more, never less.
    fn quiet(&self, zone: Option<usize>, label: &str, quiet: &crate::cpu::CpuList) -> bool {
        let zones: Vec<&SensorZone> = match zone.and_then(|z| self.zones.get(z)) {
            Some(z) => vec![z],
            None => self.zones.iter().collect(),
        };
        if let Some(core) = label
            .strip_prefix("Core ")
            .and_then(|c| c.trim().parse::<u32>().ok())
        {
            return zones.iter().any(|z| {
                z.cores
                    .iter()
                    .any(|&(c, cpu)| c == core && quiet.contains(cpu))
            });
        }
        label.starts_with("Package id") && zones.iter().any(|z| quiet.contains(z.first_cpu))
    }

    /// Whether any package's sensor is read on a quiet CPU
    /// (`x86_pkg_temp` zones do not say which package they are).
    fn any_package_quiet(&self, quiet: &crate::cpu::CpuList) -> bool {
        self.zones.iter().any(|z| quiet.contains(z.first_cpu))
    }
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
            Source::ThermalZone => self.thermal(sys_root)?,
            Source::Dmi => {
                self.dir_attrs(&sys_root.join("class/dmi/id"), &crate::hardware::DMI_FILES)?
            }
            Source::Ksm => {
                self.dir_attrs(&sys_root.join("kernel/mm/ksm"), &crate::mm::KSM_FILES)?
            }
            Source::Zfs => self.zfs(proc_root)?,
            Source::CpuIsolated => {
                open(&sys_root.join(crate::cpu::ISOLATED_FILE))?
                    .take(64 << 10)
                    .read_to_end(&mut self.scratch)?;
            }
            Source::Btrfs => {
                let extra = self.btrfs_ioctls(proc_root);
                self.class(sys_root, &crate::class::BTRFS, &extra)?
            }
            s if s.class_spec().is_some() => {
                let spec = s.class_spec().expect("a class source");
                self.class(sys_root, spec, &Default::default())?
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

    fn netclass(&mut self, sys_root: &Path) -> std::io::Result<()> {
        let dir = sys_root.join("class/net");
        let mut names: Vec<_> = std::fs::read_dir(&dir)?
            .flatten()
            // `bonding_masters` is a file beside the devices.
            .filter(|e| e.file_type().is_ok_and(|t| !t.is_file()))
            .map(|e| e.file_name())
            .collect();
        names.sort();
        for name in names.iter().take(crate::limits::MAX_ROWS) {
            self.scratch.push(b'@');
            self.scratch.extend_from_slice(name.as_bytes());
            self.scratch.push(b'\n');
            let device = dir.join(name);
            // A device gone since the listing has no attributes.
            let Ok(d) = open(&device) else { continue };
            for attr in crate::netclass::ATTRIBUTES {
                if !self.attr_at(&d, &device, attr) || self.attr.contains(&b'\n') {
                    continue;
                }
                self.scratch.extend_from_slice(attr.as_bytes());
                self.scratch.push(b' ');
                self.scratch.extend_from_slice(&self.attr);
                self.scratch.push(b'\n');
            }
        }
        Ok(())
    }

    /// The mount table (`1/mounts`, else `mounts`), mount points as seen
    /// below the root-filesystem prefix.
    fn mount_table(&self, proc_root: &Path) -> std::io::Result<Vec<MountEntry>> {
        let table = match read_capped(&proc_root.join("1/mounts"), MOUNTS_CAP) {
            Ok(t) => t,
            Err(_) => read_capped(&proc_root.join("mounts"), MOUNTS_CAP)?,
        };
        let rootfs = self.options.rootfs.as_os_str().as_bytes();
        let strip = if rootfs == b"/" {
            &b""[..]
        } else {
            rootfs.strip_suffix(b"/").unwrap_or(rootfs)
        };
        let mut out = Vec::new();
        for line in table.split(|&b| b == b'\n').take(crate::limits::MAX_ROWS) {
            let mut w = line.split(|&b| b == b' ');
            let (Some(device), Some(point), Some(fstype), Some(options)) =
                (w.next(), w.next(), w.next(), w.next())
            else {
                continue;
            };
            // Inside a container with the host below the prefix, the host's
            // mount points are printed with it.
            let point =
                match point.strip_prefix(strip) {
                    Some(p) if !strip.is_empty() && (p.is_empty() || p[0] == b'/') => {
                        if p.is_empty() { &b"/"[..] } else { p }
                    }
                    _ => point,
                };
            let shown = crate::filesystem::unescape(&String::from_utf8_lossy(point));
            let target = self.options.rootfs.join(shown.trim_start_matches('/'));
            out.push(MountEntry {
                fields: [device, point, fstype, options].map(<[u8]>::to_vec),
                shown,
                target,
            });
        }
        Ok(out)
    }

    fn filesystem(&mut self, proc_root: &Path) -> std::io::Result<()> {
        let table = self.mount_table(proc_root)?;
        // Mount points where a filesystem that may wait on a peer or a
        // daemon is mounted: a path through them can hang.
        let hazards: HashSet<&[u8]> = table
            .iter()
            .filter(|m| !answers_from_memory(&m.fields[2]))
            .map(|m| m.fields[1].as_slice())
            .collect();
        let mut seen = HashSet::new();
        let mut mounts = Vec::new();
        for m in &table {
            let [device, point, fstype, _] = &m.fields;
            let fstype_text = String::from_utf8_lossy(fstype);
            if self.options.mount_points_exclude.is_match(&m.shown)
                || self.options.fs_types_exclude.is_match(&fstype_text)
                || !seen.insert((device, point, fstype))
            {
                continue;
            }
            let mut head = Vec::new();
            for field in &m.fields {
                head.extend_from_slice(field);
                head.push(b' ');
            }
            let here = self.options.rootfs == Path::new("/") && !crosses_hazard(point, &hazards);
            mounts.push((head, m.target.as_path(), here));
        }
        // Mounts that answer from memory on this thread; the rest in one
        // round trip to the worker (none when there are none).
        let away: Vec<&Path> = mounts.iter().filter(|m| !m.2).map(|m| m.1).collect();
        let mut away = self
            .statfs
            .stat_all(&away, self.options.statfs_wait)
            .into_iter();
        for (head, target, here) in &mounts {
            let r = if *here {
                statfs(target)
            } else {
                away.next().unwrap_or_else(|| Err("not tried".into()))
            };
            self.scratch.extend_from_slice(head);
            match r {
                Ok(s) => {
                    let _ = write!(
                        self.scratch,
                        "ok {} {} {} {} {} {}",
                        s.bsize, s.blocks, s.bfree, s.bavail, s.files, s.ffree
                    );
                }
                Err(reason) => {
                    self.scratch.extend_from_slice(b"error ");
                    self.scratch.extend_from_slice(reason.as_bytes());
                }
            }
            self.scratch.push(b'\n');
        }
        Ok(())
    }

    fn time(&mut self, sys_root: &Path) -> std::io::Result<()> {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos().min(u64::MAX as u128) as u64);
        let (zone, offset) = local_zone(now);
        let _ = writeln!(self.scratch, "now_ns {now}\nzone {zone} {offset}");
        let dir = sys_root.join("devices/system/clocksource");
        let Ok(entries) = std::fs::read_dir(&dir) else {
            return Ok(());
        };
        let mut devices: Vec<String> = entries
            .flatten()
            .filter_map(|e| {
                let n = e
                    .file_name()
                    .to_str()?
                    .strip_prefix("clocksource")?
                    .to_string();
                n.bytes().all(|c| c.is_ascii_digit()).then_some(n)
            })
            .collect();
        devices.sort_by_key(|d| d.parse::<u64>().unwrap_or(u64::MAX));
        for d in devices.iter().take(4096) {
            for what in ["available", "current"] {
                let path = dir.join(format!("clocksource{d}/{what}_clocksource"));
                if self.attr(&path) && !self.attr.contains(&b'\n') {
                    let _ = write!(self.scratch, "clocksource {d} {what} ");
                    self.scratch.extend_from_slice(&self.attr);
                    self.scratch.push(b'\n');
                }
            }
        }
        Ok(())
    }

    fn timex(&mut self) -> std::io::Result<()> {
        // SAFETY: an all-zero `struct timex` is valid (modes 0: read only).
        let mut t: libc::timex = unsafe { std::mem::zeroed() };
        // SAFETY: `t` is a valid, writable `struct timex`; with modes 0 the
        // call only reads the kernel's state into it.
        let state = unsafe { libc::adjtimex(&mut t) };
        if state < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let _ = writeln!(
            self.scratch,
            "state {state}\nstatus {}\noffset {}\nfreq {}\nmaxerror {}\nesterror {}\nconstant {}\nprecision {}\ntolerance {}\ntick {}\nppsfreq {}\njitter {}\nshift {}\nstabil {}\njitcnt {}\ncalcnt {}\nerrcnt {}\nstbcnt {}\ntai {}",
            t.status,
            t.offset,
            t.freq,
            t.maxerror,
            t.esterror,
            t.constant,
            t.precision,
            t.tolerance,
            t.tick,
            t.ppsfreq,
            t.jitter,
            t.shift,
            t.stabil,
            t.jitcnt,
            t.calcnt,
            t.errcnt,
            t.stbcnt,
            t.tai
        );
        Ok(())
    }

    fn os(&mut self) -> std::io::Result<()> {
        let mut last = None;
        for f in crate::os_release::FILES {
            match open(&self.options.rootfs.join(f)) {
                Ok(file) => {
                    file.take(1 << 20).read_to_end(&mut self.scratch)?;
                    return Ok(());
                }
                Err(e) => last = Some(e),
            }
        }
        Err(last.expect("two files tried"))
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
    ) -> std::io::Result<()> {
        let dir = sys_root.join(spec.dir);
        let names = match entry_names(&dir, crate::limits::MAX_ROWS, |_, n| spec.is_device(n)) {
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

    /// ZFS's kstat files, then each pool's `io`, `objset-*` and `state`
    /// ([`crate::zfs`]).
    fn zfs(&mut self, proc_root: &Path) -> std::io::Result<()> {
        let base = proc_root.join("spl/kstat/zfs");
        let pools = entry_names(&base, 4096, |e, _| e.file_type().is_ok_and(|t| t.is_dir()))?;
        let mut files: Vec<String> = crate::zfs::FILES
            .iter()
            .map(|(f, _)| f.to_string())
            .collect();
        for pool in &pools {
            let objsets = entry_names(&base.join(pool), 4096, |_, n| n.starts_with("objset-"))
                .unwrap_or_default();
            files.push(format!("{pool}/io"));
            files.extend(objsets.into_iter().map(|o| format!("{pool}/{o}")));
            files.push(format!("{pool}/state"));
        }
        for f in files {
            let Ok(text) = read_capped(&base.join(&f), 16 << 20) else {
                continue;
            };
            let _ = writeln!(self.scratch, "@{f}");
            self.scratch.extend_from_slice(&text);
            if !text.ends_with(b"\n") {
                self.scratch.push(b'\n');
            }
        }
        Ok(())
    }

    /// Each mounted btrfs filesystem's devices from its ioctls, as lines
    /// by filesystem id (once per filesystem, whatever its mounts).
    fn btrfs_ioctls(&self, proc_root: &Path) -> std::collections::HashMap<String, Vec<String>> {
        let mut out = std::collections::HashMap::new();
        let Ok(table) = self.mount_table(proc_root) else {
            return out;
        };
        let mut devices = HashSet::new();
        for m in table {
            let [device, _, fstype, _] = &m.fields;
            if fstype.as_slice() != b"btrfs" || !devices.insert(device.clone()) {
                continue;
            }
            if let Some((fsid, devs)) = crate::btrfs::devices(&m.target) {
                out.entry(fsid)
                    .or_insert_with(|| devs.iter().map(crate::btrfs::IoctlDevice::line).collect());
            }
        }
        out
    }

    /// Reads the attributes `pattern` names below `dir` (a `*` component
    /// matches every entry of its directory, `csrow*` those starting with
    /// `csrow`), each as `<key><path> <value>`.
    fn glob_attr(&mut self, dir: &Path, key: &mut String, pattern: &str, depth: usize) {
        let (head, rest) = match pattern.split_once('/') {
            Some((h, r)) => (h, Some(r)),
            None => (pattern, None),
        };
        let names: Vec<String> = match head.strip_suffix('*') {
            Some(prefix) if depth < 4 => {
                let Ok(v) = entry_names(dir, 4096, |_, n| n.starts_with(prefix)) else {
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
                    // one attribute each.
                    for line in self.attr.split(|&b| b == b'\n') {
                        let line = line.trim_ascii();
                        let Some(gap) = line.iter().position(u8::is_ascii_whitespace) else {
                            continue;
                        };
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

    /// The CPUs isolation keeps quiet: isolated or nohz_full.
    fn quiet_cpus(&mut self, cpu_dir: &Path) -> crate::cpu::CpuList {
        let mut quiet = crate::cpu::CpuList::default();
        let mut l = crate::cpu::CpuList::default();
        for file in ["isolated", "nohz_full"] {
            if self.attr(&cpu_dir.join(file))
                && crate::cpu::parse_list_into(&self.attr, &mut l).is_ok()
            {
                quiet = quiet.union(&l);
            }
        }
        quiet
    }

    /// Where coretemp reads: read only when some CPU is quiet and a
    /// coretemp chip or an `x86_pkg_temp` zone is there, and kept while
    /// the online CPUs are the same.
    fn sensor_zones(&mut self, cpu_dir: &Path) -> &SensorZones {
        let online = if self.attr(&cpu_dir.join("online")) {
            self.attr.clone()
        } else {
            Vec::new()
        };
        if self.zones.as_ref().is_none_or(|(o, _)| *o != online) {
            let mut cpus = crate::cpu::CpuList::default();
            let _ = crate::cpu::parse_list_into(&online, &mut cpus);
            let mut zones = SensorZones::default();
            for cpu in cpus.iter() {
                let topo = cpu_dir.join(format!("cpu{cpu}/topology"));
                let mut id = |f: &str| -> Option<u32> {
                    self.attr(&topo.join(f)).then_some(())?;
                    std::str::from_utf8(&self.attr).ok()?.trim().parse().ok()
                };
                let (Some(package), Some(core)) = (id("physical_package_id"), id("core_id")) else {
                    continue;
                };
                // Kernels before 5.2 have no dies: one per package.
                let die = id("die_id").unwrap_or(0);
                let zone = match zones.zones.iter().position(|z| z.key == (package, die)) {
                    Some(i) => i,
                    None => {
                        zones.zones.push(SensorZone {
                            key: (package, die),
                            first_cpu: cpu,
                            cores: Vec::new(),
                        });
                        zones.zones.len() - 1
                    }
                };
                zones.zones[zone].cores.push((core, cpu));
            }
            self.zones = Some((online, zones));
        }
        &self.zones.as_ref().expect("set above").1
    }

    fn cpufreq(&mut self, sys_root: &Path) -> std::io::Result<()> {
        let dir = sys_root.join("devices/system/cpu");
        // The CPUs isolation keeps quiet: their current frequency is not
        // asked for (see GatherOptions::cur_freq_on_quiet_cpus).
        let quiet = if self.options.cur_freq_on_quiet_cpus {
            crate::cpu::CpuList::default()
        } else {
            self.quiet_cpus(&dir)
        };
        let asks_the_cpu = ["cpuinfo_cur_freq", "scaling_cur_freq"];
        let quiet_attrs: Vec<&str> = crate::hardware::CPUFREQ_ATTRIBUTES
            .into_iter()
            .filter(|a| !asks_the_cpu.contains(a))
            .collect();
        for cpu in Self::numbered(&dir, "cpu")? {
            let freq = dir.join(format!("cpu{cpu}/cpufreq"));
            if !freq.is_dir() {
                continue;
            }
            let _ = writeln!(self.scratch, "@{cpu}");
            if u32::try_from(cpu).is_ok_and(|c| quiet.contains(c)) {
                self.attrs(&freq, &quiet_attrs);
            } else {
                self.attrs(&freq, &crate::hardware::CPUFREQ_ATTRIBUTES);
            }
        }
        Ok(())
    }

    fn thermal(&mut self, sys_root: &Path) -> std::io::Result<()> {
        let dir = sys_root.join("class/thermal");
        let cpu_dir = sys_root.join("devices/system/cpu");
        let mut package_quiet: Option<bool> = None;
        for zone in Self::numbered(&dir, "thermal_zone")? {
            let _ = writeln!(self.scratch, "@zone {zone}");
            let zone_dir = dir.join(format!("thermal_zone{zone}"));
            // x86_pkg_temp reads the package's MSR on one of its CPUs
            // (rdmsr_on_cpu); the zone does not say which package, so its
            // temperature is left unread while any package's is read on a
            // quiet CPU (see GatherOptions::sensors_on_quiet_cpus).
            let pkg = !self.options.sensors_on_quiet_cpus
                && self.attr(&zone_dir.join("type"))
                && self.attr == b"x86_pkg_temp";
            let quiet = pkg
                && *package_quiet.get_or_insert_with(|| {
                    let quiet = self.quiet_cpus(&cpu_dir);
                    !quiet.is_empty() && self.sensor_zones(&cpu_dir).any_package_quiet(&quiet)
                });
            let attrs: &[&str] = if quiet { &["type"] } else { &["type", "temp"] };
            self.attrs(&zone_dir, attrs);
        }
        for dev in Self::numbered(&dir, "cooling_device")? {
            let _ = writeln!(self.scratch, "@cooling {dev}");
            self.attrs(
                &dir.join(format!("cooling_device{dev}")),
                &["type", "cur_state", "max_state"],
            );
        }
        Ok(())
    }

    fn numa(&mut self, sys_root: &Path) -> std::io::Result<()> {
        let dir = sys_root.join("devices/system/node");
        for node in Self::numbered(&dir, "node")? {
            let _ = writeln!(self.scratch, "@{node}");
            let node_dir = dir.join(format!("node{node}"));
            for (file, prefix) in [("meminfo", &b""[..]), ("numastat", &b"="[..])] {
                if !self.attr(&node_dir.join(file)) {
                    continue;
                }
                let body = std::mem::take(&mut self.attr);
                for line in body.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
                    self.scratch.extend_from_slice(prefix);
                    self.scratch.extend_from_slice(line);
                    self.scratch.push(b'\n');
                }
                self.attr = body;
            }
        }
        Ok(())
    }

    fn hwmon(&mut self, sys_root: &Path) -> std::io::Result<()> {
        use crate::hwmon::{clean, split_sensor_file};
        let class = sys_root.join("class/hwmon");
        let cpu_dir = sys_root.join("devices/system/cpu");
        // The quiet CPUs, read at the first coretemp chip (see
        // GatherOptions::sensors_on_quiet_cpus).
        let mut quiet: Option<crate::cpu::CpuList> = None;
        let mut dirs: Vec<_> = std::fs::read_dir(&class)?
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.is_dir())
            .collect();
        dirs.sort();
        for dir in dirs.iter().take(crate::limits::MAX_ROWS) {
            // node_exporter's stable chip name: the device's bus and name,
            // else the `name` file, else the directory's own name.
            let device = dir.join("device");
            let device_path = std::fs::canonicalize(&device).ok();
            let from_device = device_path.as_ref().and_then(|p| {
                let name = clean(&p.file_name()?.to_string_lossy());
                let bus = p
                    .parent()
                    .and_then(|b| b.file_name())
                    .map(|b| clean(&b.to_string_lossy()))
                    .unwrap_or_default();
                match (bus.is_empty(), name.is_empty()) {
                    (_, true) => None,
                    (true, false) => Some(name),
                    (false, false) => Some(format!("{bus}_{name}")),
                }
            });
            let name_file = self
                .attr(&dir.join("name"))
                .then(|| clean(&String::from_utf8_lossy(&self.attr)))
                .filter(|n| !n.is_empty());
            let own = std::fs::canonicalize(dir)
                .ok()
                .and_then(|p| Some(clean(&p.file_name()?.to_string_lossy())))
                .filter(|n| !n.is_empty());
            let Some(chip) = from_device.or(name_file.clone()).or(own) else {
                continue;
            };
            let _ = writeln!(self.scratch, "@{chip}");
            // coretemp reads a core's sensors on that core (rdmsr_on_cpu):
            // those of quiet cores are left unread, their labels kept.
            let mut unread: Vec<String> = Vec::new();
            // The labels read to decide, written as read (not read again).
            let mut labels: Vec<Label> = Vec::new();
            if name_file.as_deref() == Some("coretemp") && !self.options.sensors_on_quiet_cpus {
                let quiet = quiet
                    .get_or_insert_with(|| self.quiet_cpus(&cpu_dir))
                    .clone();
                if !quiet.is_empty() {
                    // The driver's platform device `coretemp.N`: N is the zone.
                    let zone = device_path.as_ref().and_then(|p| {
                        p.file_name()?
                            .to_str()?
                            .strip_prefix("coretemp.")?
                            .parse()
                            .ok()
                    });
                    labels = self.labels(dir);
                    let zones = self.sensor_zones(&cpu_dir);
                    unread = labels
                        .iter()
                        .filter(|l| zones.quiet(zone, &String::from_utf8_lossy(&l.bytes), &quiet))
                        .map(|l| l.sensor.clone())
                        .collect();
                }
            }
            if let Some(n) = name_file {
                let _ = writeln!(self.scratch, "name {n}");
            }
            for d in [dir.clone(), device] {
                let Ok(entries) = std::fs::read_dir(&d) else {
                    continue;
                };
                let mut files: Vec<String> = entries
                    .flatten()
                    .filter_map(|e| e.file_name().into_string().ok())
                    .filter(|f| {
                        split_sensor_file(f).is_some_and(|(_, sensor, property)| {
                            property == "label" || !unread.contains(&sensor)
                        })
                    })
                    .collect();
                files.sort();
                for f in files.iter().take(4096) {
                    let known = labels.iter().find(|l| d == *dir && l.file == *f);
                    let value: &[u8] = match known {
                        Some(l) => &l.bytes,
                        None if self.attr(&d.join(f)) => &self.attr,
                        None => continue,
                    };
                    if !value.contains(&b'\n') {
                        let _ = write!(self.scratch, "{f} ");
                        self.scratch.extend_from_slice(value);
                        self.scratch.push(b'\n');
                    }
                }
            }
        }
        Ok(())
    }

    /// Each `temp*_label` of a hwmon directory: its file, sensor and bytes.
    fn labels(&mut self, dir: &Path) -> Vec<Label> {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return Vec::new();
        };
        let files: Vec<String> = entries
            .flatten()
            .filter_map(|e| e.file_name().into_string().ok())
            .filter(|f| f.starts_with("temp") && f.ends_with("_label"))
            .take(4096)
            .collect();
        let mut out = Vec::new();
        for file in files {
            let Some((_, sensor, _)) = crate::hwmon::split_sensor_file(&file) else {
                continue;
            };
            if self.attr(&dir.join(&file)) {
                let bytes = self.attr.clone();
                out.push(Label {
                    file,
                    sensor,
                    bytes,
                });
            }
        }
        out
    }

    fn bonding(&mut self, sys_root: &Path) -> std::io::Result<()> {
        let net = sys_root.join("class/net");
        let masters = read_capped(&net.join("bonding_masters"), 64 << 10)?;
        let masters = String::from_utf8_lossy(&masters);
        for master in masters.split_whitespace().take(crate::limits::MAX_ROWS) {
            if master.contains('/') {
                continue;
            }
            let _ = writeln!(self.scratch, "@{master}");
            let dir = net.join(master);
            let Ok(slaves) = read_capped(&dir.join("bonding/slaves"), 64 << 10) else {
                continue;
            };
            let slaves = String::from_utf8_lossy(&slaves);
            for slave in slaves.split_whitespace().filter(|s| !s.contains('/')) {
                // `slave_<name>` on kernels before 4.x.
                let found = ["lower_", "slave_"].iter().any(|prefix| {
                    self.attr(&dir.join(format!("{prefix}{slave}/bonding_slave/mii_status")))
                });
                if found && !self.attr.contains(&b'\n') {
                    let _ = write!(self.scratch, "{slave} ");
                    self.scratch.extend_from_slice(&self.attr);
                    self.scratch.push(b'\n');
                }
            }
        }
        Ok(())
    }

    fn udev(&mut self) -> std::io::Result<()> {
        let dir = self.options.udev_data.clone();
        let mut names: Vec<(u32, u32)> = std::fs::read_dir(&dir)?
            .flatten()
            .filter_map(|e| {
                let n = e.file_name();
                let (a, b) = n.to_str()?.strip_prefix('b')?.split_once(':')?;
                Some((a.parse().ok()?, b.parse().ok()?))
            })
            .collect();
        names.sort();
        for (major, minor) in names.iter().take(crate::limits::MAX_ROWS) {
            if !self.attr(&dir.join(format!("b{major}:{minor}"))) {
                continue;
            }
            let _ = writeln!(self.scratch, "@{major}:{minor}");
            let body = std::mem::take(&mut self.attr);
            for line in body.split(|&b| b == b'\n') {
                if let Some(p) = line.strip_prefix(b"E:")
                    && crate::udev::KEYS
                        .iter()
                        .any(|k| p.starts_with(k.as_bytes()) && p.get(k.len()) == Some(&b'='))
                {
                    self.scratch.extend_from_slice(p);
                    self.scratch.push(b'\n');
                }
            }
            self.attr = body;
        }
        Ok(())
    }

    fn textfile(&mut self) {
        use crate::textfile::{MAX_DIR_BYTES, MAX_FILE_BYTES, MAX_FILES};
        let Some(dir) = self.options.textfile_directory.clone() else {
            return;
        };
        let entries = match std::fs::read_dir(&dir) {
            Ok(e) => e,
            Err(e) => {
                let _ = writeln!(self.scratch, "@dir {}: {e}", dir.display());
                return;
            }
        };
        let mut names: Vec<_> = entries
            .flatten()
            .map(|e| e.file_name())
            .filter(|n| n.as_bytes().ends_with(b".prom"))
            .collect();
        names.sort();
        for name in names.iter().take(MAX_FILES) {
            let path = dir.join(name);
            // The path ends its header line: a newline in it is not framed.
            let shown = path.display().to_string().replace('\n', "?");
            let read = open(&path).and_then(|f| {
                let meta = f.metadata()?;
                if !meta.is_file() {
                    return Err(std::io::Error::other("not a regular file"));
                }
                let mut body = Vec::new();
                f.take(MAX_FILE_BYTES as u64 + 1).read_to_end(&mut body)?;
                if body.len() > MAX_FILE_BYTES {
                    return Err(std::io::Error::other(
                        "larger than 16 MiB; refused (node_exporter reads it whole: split it)",
                    ));
                }
                let mtime = meta
                    .modified()
                    .ok()
                    .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                    .map_or(0, |d| d.as_nanos() as u64);
                Ok((mtime, body))
            });
            match read {
                Ok((_, body)) if self.scratch.len() + body.len() > MAX_DIR_BYTES => {
                    let _ = writeln!(
                        self.scratch,
                        "@error {shown} the directory's files come to more than {} MiB with it; refused (the files before it in name order are served)",
                        MAX_DIR_BYTES >> 20
                    );
                }
                Ok((mtime, body)) => {
                    let _ = writeln!(self.scratch, "@file {mtime} {} {shown}", body.len());
                    self.scratch.extend_from_slice(&body);
                    self.scratch.push(b'\n');
                }
                Err(e) => {
                    let _ = writeln!(self.scratch, "@error {shown} {e}");
                }
            }
        }
    }

    fn selinux(&mut self, sys_root: &Path) -> std::io::Result<()> {
        let enforce = sys_root.join("fs/selinux/enforce");
        if !self.attr(&enforce) {
            self.scratch.extend_from_slice(b"enabled 0\n");
            return Ok(());
        }
        self.scratch.extend_from_slice(b"enabled 1\ncurrent ");
        self.scratch.extend_from_slice(&self.attr);
        self.scratch.push(b'\n');
        let config = self.options.rootfs.join("etc/selinux/config");
        if self.attr(&config)
            && let Some(m) = crate::selinux::config_mode(&String::from_utf8_lossy(&self.attr))
        {
            let _ = writeln!(self.scratch, "config {m}");
        }
        Ok(())
    }
}

use crate::file_io::open_nonblocking as open;

/// A whole file of at most `cap` bytes (the rest is not read), opened
/// non-blocking as every file below a root is: a FIFO planted there reads
/// as empty instead of hanging the sampler.
fn read_capped(path: &Path, cap: u64) -> std::io::Result<Vec<u8>> {
    let mut out = Vec::new();
    open(path)?.take(cap).read_to_end(&mut out)?;
    Ok(out)
}

/// The mount table's size cap (a host with 100,000 mounts prints ~10 MB).
const MOUNTS_CAP: u64 = 64 << 20;

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

/// One line of the mount table: device, mount point (as printed), type and
/// options; the mount point unescaped, and the path to it below the
/// root-filesystem prefix.
struct MountEntry {
    fields: [Vec<u8>; 4],
    shown: String,
    target: PathBuf,
}

/// The local time zone's abbreviation and offset east of UTC at `now_ns`.
fn local_zone(now_ns: u64) -> (String, i64) {
    let t = (now_ns / 1_000_000_000) as libc::time_t;
    // SAFETY: an all-zero `struct tm` is valid (a null tm_zone is checked).
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    // SAFETY: localtime_r (which loads TZ and the zone files once) writes
    // only into `tm`, which outlives the call.
    let ok = unsafe { !libc::localtime_r(&t, &mut tm).is_null() };
    if !ok || tm.tm_zone.is_null() {
        return ("UTC".to_string(), 0);
    }
    // SAFETY: tm_zone points at a NUL-terminated abbreviation held by the C
    // library for the life of the process.
    let name = unsafe { std::ffi::CStr::from_ptr(tm.tm_zone) };
    let name: String = name
        .to_string_lossy()
        .chars()
        .filter(|c| !c.is_whitespace())
        .take(64)
        .collect();
    (
        if name.is_empty() { "UTC".into() } else { name },
        tm.tm_gmtoff,
    )
}

/// Filesystem types whose statfs(2) and path lookups are answered from the
/// kernel's memory: a local disk's counters and cached mount-point dentries,
/// or a pseudo filesystem. Mounts of these, with only these on the way to
/// them, are statfs'd on the sampling thread; any other type (NFS, CIFS,
/// FUSE, Ceph, 9p, overlay, autofs, btrfs, ZFS, an unknown name) goes to
/// the worker and its wait bound.
const ANSWERS_FROM_MEMORY: [&[u8]; 19] = [
    b"ext2",
    b"ext3",
    b"ext4",
    b"xfs",
    b"vfat",
    b"msdos",
    b"exfat",
    b"tmpfs",
    b"ramfs",
    b"rootfs",
    b"proc",
    b"sysfs",
    b"devtmpfs",
    b"devpts",
    b"cgroup",
    b"cgroup2",
    b"mqueue",
    b"tracefs",
    b"securityfs",
];

fn answers_from_memory(fstype: &[u8]) -> bool {
    ANSWERS_FROM_MEMORY.contains(&fstype)
}

/// Whether the way to `point` (from `/`, the point itself included) passes a
/// mount point in `hazards`. Points are compared as /proc prints them
/// (escaped); a `/` is never escaped, so prefixes are prefixes.
fn crosses_hazard(point: &[u8], hazards: &HashSet<&[u8]>) -> bool {
    if hazards.is_empty() {
        return false;
    }
    if hazards.contains(&b"/"[..]) || hazards.contains(point) {
        return true;
    }
    point
        .iter()
        .enumerate()
        .skip(1)
        .any(|(i, &b)| b == b'/' && hazards.contains(&point[..i]))
}

/// statfs(2)'s figures node_exporter reports.
#[derive(Debug, Clone, Copy)]
pub(crate) struct StatfsOut {
    bsize: u64,
    blocks: u64,
    bfree: u64,
    bavail: u64,
    files: u64,
    ffree: u64,
}

fn statfs(path: &Path) -> Result<StatfsOut, String> {
    let s = sys::statfs(path).map_err(|e| errno_name(e.raw_os_error().unwrap_or(0)))?;
    Ok(StatfsOut {
        bsize: s.f_bsize as u64,
        blocks: s.f_blocks,
        bfree: s.f_bfree,
        bavail: s.f_bavail,
        files: s.f_files,
        ffree: s.f_ffree,
    })
}

fn errno_name(e: i32) -> String {
    match e {
        libc::EACCES => "EACCES".into(),
        libc::EINVAL => "EINVAL".into(),
        libc::ENOENT => "ENOENT".into(),
        libc::ENOTCONN => "ENOTCONN".into(),
        libc::EIO => "EIO".into(),
        libc::ESTALE => "ESTALE".into(),
        libc::ENOTDIR => "ENOTDIR".into(),
        libc::ELOOP => "ELOOP".into(),
        libc::ENOSYS => "ENOSYS".into(),
        libc::EINTR => "EINTR".into(),
        n => format!("errno{n}"),
    }
}

/// A batch of statfs calls for the worker, and what it has done so far.
struct Batch {
    paths: Vec<PathBuf>,
    results: Mutex<Vec<Option<Result<StatfsOut, String>>>>,
    /// The index of the call in progress (`paths.len()` when all are done).
    current: AtomicUsize,
    /// Set by the caller when it stopped waiting: calls not started are
    /// not made.
    cancelled: AtomicBool,
    done: Mutex<Option<Sender<()>>>,
}

/// statfs(2) off the calling thread, with a wait bound: a call on a hung
/// mount (an NFS server gone, a FUSE daemon stopped) keeps its worker
/// thread, and the mount is reported `stuck` without a new call until that
/// one returns. The mounts of one read go to the worker as one batch (one
/// wakeup each way, however many mounts).
#[derive(Default)]
struct Statfs {
    /// Mount points with a call in flight; each worker removes its own
    /// when the call returns.
    in_flight: Arc<Mutex<HashSet<PathBuf>>>,
    worker: Option<Sender<Arc<Batch>>>,
}

impl Statfs {
    #[cfg(test)]
    fn stat(&mut self, path: &Path, wait: Duration) -> Result<StatfsOut, String> {
        self.stat_all(&[path], wait)
            .pop()
            .expect("one result per path")
    }

    /// statfs of every path, in order. Each hung call costs the caller at
    /// most `wait`: its mount is reported `timeout` and the calls after it
    /// go to a new worker.
    fn stat_all(&mut self, paths: &[&Path], wait: Duration) -> Vec<Result<StatfsOut, String>> {
        let mut out: Vec<Option<Result<StatfsOut, String>>> = vec![None; paths.len()];
        let mut todo: Vec<usize> = Vec::new();
        {
            let mut f = self.in_flight.lock().unwrap_or_else(|e| e.into_inner());
            for (i, p) in paths.iter().enumerate() {
                if f.contains(*p) || f.len() >= MAX_IN_FLIGHT {
                    out[i] = Some(Err("stuck".into()));
                } else {
                    f.insert(p.to_path_buf());
                    todo.push(i);
                }
            }
        }
        while !todo.is_empty() {
            let (tx, rx) = mpsc::channel();
            let batch = Arc::new(Batch {
                paths: todo.iter().map(|&i| paths[i].to_path_buf()).collect(),
                results: Mutex::new(vec![None; todo.len()]),
                current: AtomicUsize::new(0),
                cancelled: AtomicBool::new(false),
                done: Mutex::new(Some(tx)),
            });
            let sent = self
                .worker
                .as_ref()
                .is_some_and(|w| w.send(batch.clone()).is_ok());
            if !sent {
                match self.spawn() {
                    Some(w) if w.send(batch.clone()).is_ok() => self.worker = Some(w),
                    _ => {
                        let mut f = self.in_flight.lock().unwrap_or_else(|e| e.into_inner());
                        for &i in &todo {
                            f.remove(paths[i]);
                            out[i] = Some(Err("no worker thread".into()));
                        }
                        break;
                    }
                }
            }
            let finished = rx.recv_timeout(wait).is_ok();
            if !finished {
                batch.cancelled.store(true, Ordering::Release);
            }
            let current = batch.current.load(Ordering::Acquire);
            let mut results = batch.results.lock().unwrap_or_else(|e| e.into_inner());
            let mut rest = Vec::new();
            for (k, &i) in todo.iter().enumerate() {
                match results[k].take() {
                    Some(r) => out[i] = Some(r),
                    // The call in progress: it holds the worker.
                    None if k == current => out[i] = Some(Err("timeout".into())),
                    // Not started: retried on a new worker. (A call the
                    // worker began just now leaves its path in flight;
                    // removing it here lets it be tried again at worst.)
                    None => {
                        self.in_flight
                            .lock()
                            .unwrap_or_else(|e| e.into_inner())
                            .remove(paths[i]);
                        rest.push(i);
                    }
                }
            }
            drop(results);
            if !finished {
                // The worker is held by the hung call; it exits once the
                // call returns.
                self.worker = None;
            }
            todo = rest;
        }
        out.into_iter()
            .map(|r| r.unwrap_or_else(|| Err("not tried".into())))
            .collect()
    }

    fn spawn(&self) -> Option<Sender<Arc<Batch>>> {
        let (tx, rx) = mpsc::channel::<Arc<Batch>>();
        let in_flight = self.in_flight.clone();
        std::thread::Builder::new()
            .name("statfs".into())
            .spawn(move || {
                for batch in rx {
                    for (k, path) in batch.paths.iter().enumerate() {
                        if batch.cancelled.load(Ordering::Acquire) {
                            // Abandoned after a hung call: exit.
                            return;
                        }
                        batch.current.store(k, Ordering::Release);
                        let r = statfs(path);
                        in_flight
                            .lock()
                            .unwrap_or_else(|e| e.into_inner())
                            .remove(path);
                        batch.results.lock().unwrap_or_else(|e| e.into_inner())[k] = Some(r);
                    }
                    batch.current.store(batch.paths.len(), Ordering::Release);
                    let done = batch.done.lock().unwrap_or_else(|e| e.into_inner()).take();
                    if done.is_none_or(|d| d.send(()).is_err()) {
                        // The caller stopped waiting: it has a new worker.
                        return;
                    }
                }
            })
            .ok()?;
        Some(tx)
    }
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
