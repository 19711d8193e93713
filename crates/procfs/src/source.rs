//! The system sources this crate reads, indexed by one enum.

use serde::Serialize;

use crate::pressure::Resource;

/// A kernel file with system-wide statistics, relative to the proc root.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(into = "&'static str")]
pub enum Source {
    Stat,
    Interrupts,
    Softirqs,
    Meminfo,
    Vmstat,
    Loadavg,
    PressureCpu,
    PressureMemory,
    PressureIo,
    PressureIrq,
    Diskstats,
    NetDev,
    Schedstat,
}

impl From<Source> for &'static str {
    fn from(s: Source) -> &'static str {
        s.name()
    }
}

impl Source {
    pub const ALL: [Source; 13] = [
        Source::Stat,
        Source::Interrupts,
        Source::Softirqs,
        Source::Meminfo,
        Source::Vmstat,
        Source::Loadavg,
        Source::PressureCpu,
        Source::PressureMemory,
        Source::PressureIo,
        Source::PressureIrq,
        Source::Diskstats,
        Source::NetDev,
        Source::Schedstat,
    ];
    pub const COUNT: usize = Self::ALL.len();

    /// The path below the proc root, which is also the source's name.
    pub fn name(self) -> &'static str {
        match self {
            Source::Stat => "stat",
            Source::Interrupts => "interrupts",
            Source::Softirqs => "softirqs",
            Source::Meminfo => "meminfo",
            Source::Vmstat => "vmstat",
            Source::Loadavg => "loadavg",
            Source::PressureCpu => "pressure/cpu",
            Source::PressureMemory => "pressure/memory",
            Source::PressureIo => "pressure/io",
            Source::PressureIrq => "pressure/irq",
            Source::Diskstats => "diskstats",
            Source::NetDev => "net/dev",
            Source::Schedstat => "schedstat",
        }
    }

    pub fn from_name(name: &str) -> Option<Source> {
        Self::ALL.into_iter().find(|s| s.name() == name)
    }

    /// Every accepted name, comma-separated (for error messages).
    pub fn names() -> String {
        Self::ALL.map(Source::name).join(", ")
    }

    pub fn pressure(r: Resource) -> Source {
        match r {
            Resource::Cpu => Source::PressureCpu,
            Resource::Memory => Source::PressureMemory,
            Resource::Io => Source::PressureIo,
            Resource::Irq => Source::PressureIrq,
        }
    }

    /// The pressure resource of a `pressure/*` source (inverse of [`Source::pressure`]).
    pub fn resource(self) -> Option<Resource> {
        Resource::ALL
            .into_iter()
            .find(|&r| Source::pressure(r) == self)
    }

    /// Sources a kernel may lack without anything being wrong: pressure files
    /// (CONFIG_PSI, or irq without CONFIG_IRQ_TIME_ACCOUNTING) and schedstat
    /// (CONFIG_SCHEDSTATS).
    pub fn optional(self) -> bool {
        self.resource().is_some() || self == Source::Schedstat
    }
}
