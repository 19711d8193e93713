//! Each network device's driver, link modes and driver statistics through
//! the ethtool ioctl (SIOCETHTOOL), as node_exporter's ethtool collector
//! asks them (its library uses the ioctl, not ethtool's netlink family:
//! the driver statistics `ethtool -S` prints have no netlink message).
//! Written as `crate::ethtool` documents. A device that does not answer
//! a command (`EOPNOTSUPP`: no driver statistics, no link settings) goes
//! without those lines.

use std::io::Write;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::Path;

use super::Gatherer;

const SIOCETHTOOL: libc::c_ulong = 0x8946;
const ETHTOOL_GSET: u32 = 0x1;
const ETHTOOL_GDRVINFO: u32 = 0x3;
const ETHTOOL_GSTRINGS: u32 = 0x1b;
const ETHTOOL_GSTATS: u32 = 0x1d;
const ETHTOOL_GSSET_INFO: u32 = 0x37;
const ETH_SS_STATS: u32 = 1;
const ETH_GSTRING_LEN: usize = 32;
/// Statistics a device may have at most here (drivers have hundreds; a
/// count beyond is not believed).
const MAX_STATS: usize = 1 << 16;

#[repr(C)]
struct IfReq {
    name: [libc::c_char; libc::IFNAMSIZ],
    data: *mut libc::c_void,
    _pad: [u8; 16],
}

/// `struct ethtool_drvinfo`.
#[repr(C)]
struct DrvInfo {
    cmd: u32,
    driver: [u8; 32],
    version: [u8; 32],
    fw_version: [u8; 32],
    bus_info: [u8; 32],
    erom_version: [u8; 32],
    reserved2: [u8; 12],
    n_priv_flags: u32,
    n_stats: u32,
    testinfo_len: u32,
    eedump_len: u32,
    regdump_len: u32,
}

/// `struct ethtool_sset_info` asking for one set: its count follows.
#[repr(C)]
struct SsetInfo {
    cmd: u32,
    reserved: u32,
    mask: u64,
    count: u32,
}

/// `struct ethtool_cmd` (the legacy link settings node_exporter reads).
#[repr(C)]
#[derive(Default)]
struct Cmd {
    cmd: u32,
    supported: u32,
    advertising: u32,
    speed: u16,
    duplex: u8,
    port: u8,
    phy_address: u8,
    transceiver: u8,
    autoneg: u8,
    mdio_support: u8,
    maxtxpkt: u32,
    maxrxpkt: u32,
    speed_hi: u16,
    eth_tp_mdix: u8,
    eth_tp_mdix_ctrl: u8,
    lp_advertising: u32,
    reserved: [u32; 2],
}

/// One ioctl on `dev` with `data` (a command's structure, its first word
/// the command).
fn ioctl(sock: &OwnedFd, dev: &str, data: *mut libc::c_void) -> std::io::Result<()> {
    let mut req = IfReq {
        name: [0; libc::IFNAMSIZ],
        data,
        _pad: [0; 16],
    };
    for (d, s) in req
        .name
        .iter_mut()
        .zip(dev.bytes().take(libc::IFNAMSIZ - 1))
    {
        *d = s as libc::c_char;
    }
    // SAFETY: req names the device and points at a structure the command
    // fills within its stated size (the caller made it that size).
    let r = unsafe { libc::ioctl(sock.as_raw_fd(), SIOCETHTOOL as _, &mut req) };
    if r < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// A C string field as text fit for a tab-separated line.
fn text(b: &[u8]) -> String {
    let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
    String::from_utf8_lossy(&b[..end])
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

impl Gatherer {
    pub(super) fn ethtool(&mut self, sys_root: &Path) -> std::io::Result<()> {
        let dir = sys_root.join("class/net");
        // `bonding_masters` is a file beside the devices.
        let names = super::entry_names(&dir, crate::limits::MAX_ROWS, |e, n| {
            e.file_type().is_ok_and(|t| !t.is_file())
                && n.len() < libc::IFNAMSIZ
                && !n.contains(char::is_whitespace)
        })?;
        // SAFETY: plain socket(2), owned at once.
        let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: fd was just created and is owned by nothing else.
        let sock = unsafe { OwnedFd::from_raw_fd(fd) };
        for name in &names {
            let o = &self.options;
            let kept = o.ethtool_include.as_ref().is_none_or(|i| i.is_match(name))
                && o.ethtool_exclude.as_ref().is_none_or(|e| !e.is_match(name));
            if !kept {
                continue;
            }
            let _ = writeln!(self.scratch, "@{name}");
            let mut cmd = Cmd {
                cmd: ETHTOOL_GSET,
                ..Default::default()
            };
            if ioctl(&sock, name, (&raw mut cmd).cast()).is_ok() {
                let _ = writeln!(
                    self.scratch,
                    "link {} {} {}",
                    cmd.supported, cmd.advertising, cmd.autoneg
                );
            }
            // SAFETY: DrvInfo is plain data; zeroed is a valid value.
            let mut info: DrvInfo = unsafe { std::mem::zeroed() };
            info.cmd = ETHTOOL_GDRVINFO;
            if ioctl(&sock, name, (&raw mut info).cast()).is_ok() {
                let _ = writeln!(
                    self.scratch,
                    "info\t{}\t{}\t{}\t{}\t{}",
                    text(&info.driver),
                    text(&info.version),
                    text(&info.fw_version),
                    text(&info.bus_info),
                    text(&info.erom_version)
                );
            }
            self.ethtool_stats(&sock, name);
        }
        Ok(())
    }

    /// The driver's statistics: their count, names and values.
    fn ethtool_stats(&mut self, sock: &OwnedFd, dev: &str) {
        let mut sset = SsetInfo {
            cmd: ETHTOOL_GSSET_INFO,
            reserved: 0,
            mask: 1 << ETH_SS_STATS,
            count: 0,
        };
        if ioctl(sock, dev, (&raw mut sset).cast()).is_err() || sset.mask & (1 << ETH_SS_STATS) == 0
        {
            return;
        }
        let n = sset.count as usize;
        if n == 0 || n > MAX_STATS {
            return;
        }
        // struct ethtool_gstrings: cmd, string_set, len, then the names.
        let mut strings = vec![0u8; 12 + n * ETH_GSTRING_LEN];
        strings[..4].copy_from_slice(&ETHTOOL_GSTRINGS.to_ne_bytes());
        strings[4..8].copy_from_slice(&ETH_SS_STATS.to_ne_bytes());
        strings[8..12].copy_from_slice(&(n as u32).to_ne_bytes());
        if ioctl(sock, dev, strings.as_mut_ptr().cast()).is_err() {
            return;
        }
        // struct ethtool_stats: cmd, n_stats, then the values (8-aligned).
        let mut stats = vec![0u64; 1 + n];
        stats[0] = u64::from(ETHTOOL_GSTATS) | (n as u64) << 32;
        if cfg!(target_endian = "big") {
            stats[0] = (u64::from(ETHTOOL_GSTATS) << 32) | n as u64;
        }
        if ioctl(sock, dev, stats.as_mut_ptr().cast()).is_err() {
            return;
        }
        let got = (u32::from_ne_bytes(strings[8..12].try_into().expect("4 bytes")) as usize).min(n);
        for i in 0..got {
            let at = 12 + i * ETH_GSTRING_LEN;
            let name = text(&strings[at..at + ETH_GSTRING_LEN]);
            if name.is_empty() || name.contains('\t') {
                continue;
            }
            let _ = writeln!(self.scratch, "stat\t{name}\t{}", stats[1 + i]);
        }
    }
}
