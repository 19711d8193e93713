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

/// The journal's size for an agent under a memory ceiling of `ceiling`
/// bytes: its pages are in memory (tmpfs) and charged to the agent's
/// cgroup, so an eighth of the ceiling at most, [`JOURNAL_BYTES`] at most
/// and 4 MiB at least (a whole table of 30,000 processes and more).
pub fn journal_bytes_for(ceiling: u64) -> usize {
    (ceiling / 8).clamp(4 << 20, JOURNAL_BYTES as u64) as usize
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_journal_is_an_eighth_of_the_ceiling_within_its_bounds() {
        use super::{JOURNAL_BYTES, journal_bytes_for};
        assert_eq!(journal_bytes_for(48 << 20), 6 << 20);
        assert_eq!(journal_bytes_for(16 << 20), 4 << 20);
        assert_eq!(journal_bytes_for(384 << 20), JOURNAL_BYTES);
    }
}
