//! The history store: every sample the agent takes, recorded to one SQLite
//! file per day (delta-encoded, compressed in blocks, kill -9 safe through
//! an in-memory journal), and read back for `report` and replay.

pub mod access;
pub mod blocks;
pub mod cgroups;
pub mod codec;
pub mod db;
pub mod journal;
pub mod procs;
pub mod read;
pub mod sent;
pub mod when;
pub mod writer;

pub use sys::{Error, ErrorKind};

pub use read::{CgroupChange, DayUsage, ExitRow, Gap, History, Snapshot};
pub use writer::{Flushed, Options, Stats, Tap, Writer, start};

/// The system sources recorded: those `report` derives its figures from
/// (the registry's `recorded` column).
pub const RECORDED: [procfs::Source; procfs::Source::RECORDED.len()] = procfs::Source::RECORDED;

/// The journal's size: room for a minute or more of samples with 8000
/// processes; beyond that (the writer stuck) the oldest go first.
pub const JOURNAL_BYTES: usize = 32 << 20;
