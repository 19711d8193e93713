//! Parsers and readers for Linux system statistics.
//!
//! Pure parsers, one module per kernel file, take the file's bytes and fill a
//! typed struct (units in field names, fields that only some kernels print as
//! `Option`, documented with the version). They never allocate per field and,
//! given a reused output value, never allocate at all once warm. [`Reader`]
//! does the I/O under any proc and sys root, so tests run on fixture trees.
//!
//! ```no_run
//! use procfs::{Reader, Source, SystemSample};
//! let mut reader = Reader::new("/proc", "/sys");
//! let mut sample = SystemSample::default();
//! reader.read_sample(&Source::ALL, &mut sample);
//! println!("context switches: {}", sample.stat.ctxt);
//! ```

mod cpu_table;
mod cursor;
mod error;
mod file_io;
mod gather;
mod key_values;
mod name;
mod reader;
mod records;
mod sample;
mod source;
mod textfile_worker;

pub mod kept;

pub mod btrfs;
pub mod class;
pub mod cpu;
pub mod cpuinfo;
pub mod diskstats;
pub mod entropy;
pub mod ethtool;
pub mod filefd;
pub mod filesystem;
pub mod hardware;
pub mod hwmon;
pub mod interrupts;
pub mod ipvs;
pub mod ktables;
pub mod limits;
pub mod loadavg;
pub mod mdstat;
pub mod meminfo;
pub mod mm;
pub mod mountstats;
pub mod net_dev;
pub mod netclass;
pub mod netmisc;
pub mod netstat;
pub mod numa;
pub mod os_release;
pub mod pid;
pub mod pressure;
pub mod qdisc;
pub mod rpc;
pub mod schedstat;
pub mod selinux;
pub mod sockstat;
pub mod softirqs;
pub mod softnet;
pub mod stat;
pub mod systemd;
pub mod textfile;
pub mod threads;
pub mod time;
pub mod udev;
pub mod uname;
pub mod vmstat;
pub mod wifi;
pub mod zfs;

pub use cpu_table::{CpuTable, Row};
pub use error::{Error, ParseError, ParseErrorKind, Result};
pub use gather::{
    DEFAULT_FS_TYPES_EXCLUDE, DEFAULT_MOUNT_POINTS_EXCLUDE, DEFAULT_STATFS_WAIT,
    DEFAULT_SYSTEMD_DEADLINE, DEFAULT_UNIT_EXCLUDE, GatherOptions, SystemdOptions,
    anchored_unit_pattern,
};
pub use key_values::KeyValues;
pub use name::Name;
pub use reader::Reader;
pub use sample::{MAX_SKIPPED, Skipped, SourceCost, SourceData, SourceStatus, SystemSample};
pub use source::Source;

/// Whether the proc filesystem at `proc_root` hides other users'
/// processes (mounted with `hidepid=1`, `2`, `invisible` or `noaccess`),
/// from `<proc_root>/self/mounts`. What the agent publishes about
/// processes is then readable by its own user only.
pub fn hides_pids(proc_root: &std::path::Path) -> bool {
    hidden_pids(proc_root).is_some()
}

/// When the proc filesystem at `proc_root` hides other users' processes:
/// `Some(gid)`, the group its `gid=` option lets see them all (`None`:
/// no such group). `None` when it hides nothing.
pub fn hidden_pids(proc_root: &std::path::Path) -> Option<Option<u32>> {
    let mounts = std::fs::read_to_string(proc_root.join("self/mounts")).ok()?;
    hidepid_in(&mounts, proc_root)
}

fn hidepid_in(mounts: &str, proc_root: &std::path::Path) -> Option<Option<u32>> {
    mounts.lines().find_map(|l| {
        let f: Vec<&str> = l.split(' ').collect();
        if f.len() < 4 || f[2] != "proc" || std::path::Path::new(f[1]) != proc_root {
            return None;
        }
        let opts = || f[3].split(',');
        opts()
            .any(|o| {
                o.strip_prefix("hidepid=")
                    .is_some_and(|v| !matches!(v, "0" | "off"))
            })
            .then(|| opts().find_map(|o| o.strip_prefix("gid=")?.parse().ok()))
    })
}

/// Tests' helper: what `parse_into` makes of `text` in a fresh value; a
/// parse error fails the test, naming the line and field.
#[cfg(test)]
pub(crate) fn parsed<T: Default>(
    parse_into: impl FnOnce(&[u8], &mut T) -> std::result::Result<(), ParseError>,
    text: &[u8],
) -> T {
    let mut v = T::default();
    parse_into(text, &mut v).unwrap_or_else(|e| panic!("{e}"));
    v
}

#[cfg(test)]
mod hidepid_tests {
    #[test]
    fn hidepid_is_found_on_the_proc_mount_only() {
        let root = std::path::Path::new("/proc");
        let plain = "proc /proc proc rw,nosuid,nodev,noexec,relatime 0 0\n";
        assert_eq!(super::hidepid_in(plain, root), None);
        let hidden = "sysfs /sys sysfs rw 0 0\nproc /proc proc rw,relatime,hidepid=invisible 0 0\n";
        assert_eq!(super::hidepid_in(hidden, root), Some(None));
        assert_eq!(
            super::hidepid_in(hidden, std::path::Path::new("/other")),
            None
        );
        let off = "proc /proc proc rw,hidepid=0 0 0\n";
        assert_eq!(super::hidepid_in(off, root), None);
        let group = "proc /proc proc rw,gid=4,hidepid=2 0 0\n";
        assert_eq!(super::hidepid_in(group, root), Some(Some(4)));
    }
}
