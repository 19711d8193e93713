//! The other gathered sources: network classes, clocks, os-release,
//! SELinux, udev, bonding, NUMA, ZFS, btrfs and the textfile directory.

use super::*;

impl Gatherer {
    pub(super) fn netclass(&mut self, sys_root: &Path) -> std::io::Result<()> {
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

    pub(super) fn time(&mut self, sys_root: &Path) -> std::io::Result<()> {
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

    pub(super) fn timex(&mut self) -> std::io::Result<()> {
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

    pub(super) fn os(&mut self) -> std::io::Result<()> {
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

    /// ZFS's kstat files, then each pool's `io`, `objset-*` and `state`
    /// ([`crate::zfs`]).
    pub(super) fn zfs(&mut self, proc_root: &Path) -> std::io::Result<()> {
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
            self.record_file(&f, &base.join(&f));
        }
        Ok(())
    }

    /// Appends `@<name>` and the file at `path` (at most 16 MiB) as a
    /// record; nothing when it cannot be read.
    fn record_file(&mut self, name: &str, path: &Path) {
        let Ok(text) = read_capped(path, 16 << 20) else {
            return;
        };
        let _ = writeln!(self.scratch, "@{name}");
        self.scratch.extend_from_slice(&text);
        if !text.ends_with(b"\n") {
            self.scratch.push(b'\n');
        }
    }

    /// Every file of /proc/net/stat, as `@<file>` and its text.
    pub(super) fn lnstat(&mut self, proc_root: &Path) -> std::io::Result<()> {
        let base = proc_root.join("net/stat");
        for f in entry_names(&base, 256, |e, _| e.file_type().is_ok_and(|t| t.is_file()))? {
            self.record_file(&f, &base.join(&f));
        }
        Ok(())
    }

    /// Each mounted btrfs filesystem's devices from its ioctls, as lines
    /// by filesystem id (once per filesystem, whatever its mounts).
    pub(super) fn btrfs_ioctls(
        &self,
        proc_root: &Path,
    ) -> std::collections::HashMap<String, Vec<String>> {
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

    /// Each PCI function's upstream bridge, as a `parent <location>` line
    /// by function: the directory its link in /sys/bus/pci/devices points
    /// into, unless that is a root bus (`pci0000:00`).
    pub(super) fn pci_parents(sys_root: &Path) -> std::collections::HashMap<String, Vec<String>> {
        let mut out = std::collections::HashMap::new();
        let Ok(entries) = std::fs::read_dir(sys_root.join(crate::class::PCIDEVICE.dir)) else {
            return out;
        };
        for e in entries.flatten().take(crate::limits::MAX_ROWS) {
            let (Ok(name), Ok(target)) =
                (e.file_name().into_string(), std::fs::read_link(e.path()))
            else {
                continue;
            };
            let parent = target
                .parent()
                .and_then(Path::file_name)
                .and_then(|p| p.to_str());
            if let Some(p) = parent.filter(|p| !p.starts_with("pci")) {
                out.insert(name, vec![format!("parent {p}")]);
            }
        }
        out
    }

    /// The configured sysctls: `@<name>` and the file's text, for each the
    /// kernel has (a name's dots are directories below /proc/sys).
    pub(super) fn sysctl(&mut self, proc_root: &Path) {
        let dir = proc_root.join("sys");
        for i in 0..self.options.sysctls.len() {
            let name = &self.options.sysctls[i];
            let path = dir.join(name.replace('.', "/"));
            if !self.attr(&path) {
                continue;
            }
            let name = &self.options.sysctls[i];
            let _ = writeln!(self.scratch, "@{name}");
            self.scratch.extend_from_slice(&self.attr);
            self.scratch.push(b'\n');
        }
    }

    /// Each device-mapper device's `dm/uuid <uuid>` line, and a multipath
    /// device's paths (the devices in its `slaves/`) as `path <device>
    /// <state>` lines, by device: the state from
    /// /sys/block/<path>/device/state (`running` for SCSI, `live` for
    /// NVMe; `unknown` where it cannot be read).
    pub(super) fn multipath_paths(
        &mut self,
        sys_root: &Path,
    ) -> std::collections::HashMap<String, Vec<String>> {
        let mut out = std::collections::HashMap::new();
        let block = sys_root.join("block");
        let Ok(dms) = entry_names(&block, crate::limits::MAX_ROWS, |_, n| {
            crate::class::DM_MULTIPATH.is_device(n)
        }) else {
            return out;
        };
        for dm in dms {
            let dir = block.join(&dm);
            if !self.attr(&dir.join("dm/uuid")) {
                continue;
            }
            let uuid = String::from_utf8_lossy(self.attr.trim_ascii()).into_owned();
            let paths = match uuid.starts_with("mpath-") {
                true => entry_names(&dir.join("slaves"), 4096, |_, _| true).unwrap_or_default(),
                false => Vec::new(),
            };
            let mut lines = vec![format!("dm/uuid {uuid}")];
            for p in paths {
                let state = if self.attr(&block.join(&p).join("device/state")) {
                    String::from_utf8_lossy(self.attr.trim_ascii()).into_owned()
                } else {
                    "unknown".to_string()
                };
                lines.push(format!("path {p} {state}"));
            }
            out.insert(dm, lines);
        }
        out
    }

    pub(super) fn numa(&mut self, sys_root: &Path) -> std::io::Result<()> {
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

    pub(super) fn bonding(&mut self, sys_root: &Path) -> std::io::Result<()> {
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

    pub(super) fn udev(&mut self) -> std::io::Result<()> {
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

    pub(super) fn textfile(&mut self) {
        use crate::textfile::{MAX_FILE_BYTES, MAX_FILES};
        let max_dir_bytes = self.options.textfile_max_dir_bytes;
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
                Ok((_, body)) if self.scratch.len() + body.len() > max_dir_bytes => {
                    let _ = writeln!(
                        self.scratch,
                        "@refused {shown} the directory's files come to more than {} KiB with it; refused (the files before it in name order are served)",
                        max_dir_bytes >> 10
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

    pub(super) fn selinux(&mut self, sys_root: &Path) -> std::io::Result<()> {
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

/// The local time zone's abbreviation and offset east of UTC at `now_ns`.
pub(super) fn local_zone(now_ns: u64) -> (String, i64) {
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
