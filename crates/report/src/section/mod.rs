//! The sections, one file each, and their table.

use procfs::Source;
use store::History;

use crate::table::{Cell, num, text};
use crate::window::{Steps, empty, mib, system_pass};
use crate::{Options, Report, Section, Window};

mod cgroup;
mod cpu;
mod disk;
mod exits;
mod filefd;
mod irq;
mod load;
mod mem;
mod net;
mod pressure;
mod proc;
mod softirq;
mod store_usage;
mod waits;

/// Every section, in the order `report --help` names them.
pub static SECTIONS: &[&dyn Section] = &[
    &cpu::Cpu,
    &mem::Mem,
    &disk::Disk,
    &net::Net,
    &irq::Irq,
    &softirq::Softirq,
    &pressure::Pressure,
    &load::Load,
    &filefd::Filefd,
    &proc::Proc,
    &waits::Waits,
    &exits::Exits,
    &cgroup::Cgroup,
    &cgroup::CgroupEvents,
    &store_usage::StoreUsage,
];
