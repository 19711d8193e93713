//! The hardware classes under node_exporter's names, one file per
//! collector: powersupplyclass, nvme, watchdog, rapl, edac, tapestats,
//! fibrechannel, infiniband, xfs, btrfs, bcache.

use std::path::Path;

use procfs::class::{ClassDevice, parse_uint};
use procfs::{Source, SystemSample};

use super::families::*;
use super::out::{Fmt, Out, counter_l, gauge_l, info_l};

mod bcache;
mod btrfs;
mod edac;
mod fibrechannel;
mod infiniband;
mod nvme;
mod powersupplyclass;
mod rapl;
mod tapestats;
mod watchdog;
mod xfs;

pub(super) fn classes(out: &mut Out<'_>, s: &SystemSample, sys_root: &Path) -> Fmt {
    let devices = |source: Source| -> Option<&[ClassDevice]> {
        let i = source.class_index()?;
        s.ok(source).then(|| s.class[i].as_slice())
    };
    if let Some(d) = devices(Source::PowerSupply) {
        powersupplyclass::power_supply(out, d)?;
    }
    if let Some(d) = devices(Source::Nvme) {
        nvme::nvme(out, d)?;
    }
    if let Some(d) = devices(Source::Watchdog) {
        watchdog::watchdog(out, d)?;
    }
    if let Some(d) = devices(Source::Rapl) {
        rapl::rapl(out, d, &sys_root.join(procfs::class::RAPL.dir))?;
    }
    if let Some(d) = devices(Source::Edac) {
        edac::edac(out, d)?;
    }
    if let Some(d) = devices(Source::Tape) {
        tapestats::tape(out, d)?;
    }
    if let Some(d) = devices(Source::FcHost) {
        fibrechannel::fibrechannel(out, d)?;
    }
    if let Some(d) = devices(Source::Infiniband) {
        infiniband::infiniband(out, d)?;
    }
    if let Some(d) = devices(Source::Xfs) {
        xfs::xfs(out, d)?;
    }
    if let Some(d) = devices(Source::Btrfs) {
        btrfs::btrfs(out, d)?;
    }
    if let Some(d) = devices(Source::Bcache) {
        bcache::bcache(out, d)?;
    }
    Ok(())
}
