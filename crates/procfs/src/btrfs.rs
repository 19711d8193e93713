//! What sysfs does not say about a mounted btrfs filesystem: each device's
//! size, bytes in use and error counters, from the filesystem's ioctls
//! (`BTRFS_IOC_FS_INFO`, `BTRFS_IOC_DEV_INFO`, `BTRFS_IOC_GET_DEV_STATS`),
//! as node_exporter's btrfs collector asks them of a mount point.
//!
//! The gathered btrfs record (see [`crate::class`]) gains one line per
//! device: `ioctl:<devid> <device uuid> <bytes used> <total bytes> <write
//! errors> <read errors> <flush errors> <corruption errors> <generation
//! errors> <path>`.

use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// One device of a filesystem, as the ioctls give it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IoctlDevice {
    pub devid: u64,
    pub uuid: String,
    pub bytes_used: u64,
    pub total_bytes: u64,
    /// write, read, flush, corruption, generation.
    pub errors: [u64; 5],
    pub path: String,
}

impl IoctlDevice {
    /// The gathered line (see the module's documentation).
    pub fn line(&self) -> String {
        let e = self.errors;
        format!(
            "ioctl:{} {} {} {} {} {} {} {} {} {}",
            self.devid,
            self.uuid,
            self.bytes_used,
            self.total_bytes,
            e[0],
            e[1],
            e[2],
            e[3],
            e[4],
            self.path
        )
    }

    /// Parses the value of an `ioctl:<devid>` line (everything after the
    /// key); `None` when it is not one.
    pub fn parse(devid: &str, value: &str) -> Option<IoctlDevice> {
        let mut w = value.splitn(9, ' ');
        let uuid = w.next()?.to_string();
        let mut n = [0u64; 7];
        for x in &mut n {
            *x = w.next()?.parse().ok()?;
        }
        Some(IoctlDevice {
            devid: devid.parse().ok()?,
            uuid,
            bytes_used: n[0],
            total_bytes: n[1],
            errors: [n[2], n[3], n[4], n[5], n[6]],
            path: w.next().unwrap_or_default().to_string(),
        })
    }
}

const MAGIC: u64 = 0x94;

const fn ioc(dir: u64, nr: u64, size: usize) -> u64 {
    (dir << 30) | ((size as u64) << 16) | (MAGIC << 8) | nr
}

/// `struct btrfs_ioctl_fs_info_args` (1 KiB).
#[repr(C)]
struct FsInfo {
    max_id: u64,
    num_devices: u64,
    fsid: [u8; 16],
    rest: [u8; 1024 - 32],
}

/// `struct btrfs_ioctl_dev_info_args` (4 KiB).
#[repr(C)]
struct DevInfo {
    devid: u64,
    uuid: [u8; 16],
    bytes_used: u64,
    total_bytes: u64,
    unused: [u64; 379],
    path: [u8; 1024],
}

/// `struct btrfs_ioctl_get_dev_stats`.
#[repr(C)]
struct DevStats {
    devid: u64,
    nr_items: u64,
    flags: u64,
    values: [u64; 5],
    unused: [u64; 121],
}

const _: () = assert!(std::mem::size_of::<FsInfo>() == 1024);
const _: () = assert!(std::mem::size_of::<DevInfo>() == 4096);
const _: () = assert!(std::mem::size_of::<DevStats>() == 1032);

const IOC_FS_INFO: u64 = ioc(2, 31, std::mem::size_of::<FsInfo>());
const IOC_DEV_INFO: u64 = ioc(3, 30, std::mem::size_of::<DevInfo>());
const IOC_GET_DEV_STATS: u64 = ioc(3, 52, std::mem::size_of::<DevStats>());

/// `8-4-4-4-12` lowercase hexadecimal.
pub fn uuid_text(b: &[u8; 16]) -> String {
    let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    )
}

/// The filesystem mounted at `point`: its id and its devices; `None` when
/// the mount point cannot be opened or is not btrfs.
pub fn devices(point: &Path) -> Option<(String, Vec<IoctlDevice>)> {
    let c = std::ffi::CString::new(point.as_os_str().as_bytes()).ok()?;
    // SAFETY: `c` is NUL-terminated; the descriptor is closed below.
    let fd = unsafe {
        libc::open(
            c.as_ptr(),
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC | libc::O_NONBLOCK,
        )
    };
    if fd < 0 {
        return None;
    }
    let out = devices_of(fd);
    // SAFETY: `fd` was opened above and is not used after this.
    unsafe { libc::close(fd) };
    out
}

fn devices_of(fd: i32) -> Option<(String, Vec<IoctlDevice>)> {
    // SAFETY: all-zero bytes are a valid value of these plain-data structs.
    let mut info: FsInfo = unsafe { std::mem::zeroed() };
    // SAFETY: `info` is writable and as large as the request says.
    if unsafe { libc::ioctl(fd, IOC_FS_INFO as _, &mut info) } != 0 {
        return None;
    }
    let fsid = uuid_text(&info.fsid);
    let mut out = Vec::new();
    // Device ids need not start at 0 nor be contiguous; at most 2^16 tried.
    for devid in 0..=info.max_id.min(1 << 16) {
        // SAFETY: as above.
        let mut dev: DevInfo = unsafe { std::mem::zeroed() };
        dev.devid = devid;
        // SAFETY: `dev` is writable and as large as the request says.
        if unsafe { libc::ioctl(fd, IOC_DEV_INFO as _, &mut dev) } != 0 {
            continue;
        }
        // SAFETY: as above.
        let mut st: DevStats = unsafe { std::mem::zeroed() };
        st.devid = devid;
        st.nr_items = 5;
        // SAFETY: `st` is writable and as large as the request says.
        if unsafe { libc::ioctl(fd, IOC_GET_DEV_STATS as _, &mut st) } != 0 {
            continue;
        }
        let end = dev
            .path
            .iter()
            .position(|&b| b == 0)
            .unwrap_or(dev.path.len());
        out.push(IoctlDevice {
            devid,
            uuid: uuid_text(&dev.uuid),
            bytes_used: dev.bytes_used,
            total_bytes: dev.total_bytes,
            errors: st.values,
            path: String::from_utf8_lossy(&dev.path[..end]).replace('\n', " "),
        });
        if out.len() as u64 >= info.num_devices {
            break;
        }
    }
    Some((fsid, out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_round_trip_and_requests_match_the_kernel_headers() {
        let d = IoctlDevice {
            devid: 1,
            uuid: "c7af2b5d-e8f5-429a-b0f8-1ea4ed8cff5b".into(),
            bytes_used: 92274688,
            total_bytes: 209715200,
            errors: [0, 1, 2, 3, 4],
            path: "/dev/loop1".into(),
        };
        let line = d.line();
        let (key, value) = line.split_once(' ').unwrap();
        assert_eq!(
            IoctlDevice::parse(key.strip_prefix("ioctl:").unwrap(), value),
            Some(d)
        );
        assert_eq!(IoctlDevice::parse("1", "uuid 1 2"), None);
        // _IOR(0x94, 31, 1024), _IOWR(0x94, 30, 4096), _IOWR(0x94, 52, 1032)
        assert_eq!(IOC_FS_INFO, 0x8400_941f);
        assert_eq!(IOC_DEV_INFO, 0xd000_941e);
        assert_eq!(IOC_GET_DEV_STATS, 0xc408_9434);
        assert_eq!(
            uuid_text(&[
                0xeb, 0x3c, 0xaa, 0xc6, 0xba, 0x0a, 0x4a, 0xfc, 0xa2, 0xfc, 0xc1, 0x42, 0xc4, 0xa5,
                0xde, 0x1b
            ]),
            "eb3caac6-ba0a-4afc-a2fc-c142c4a5de1b"
        );
    }
}
