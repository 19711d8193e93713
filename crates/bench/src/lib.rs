//! System-level benchmarks behind `quietstat bench`.

pub mod procfs_cost;
pub mod proctable_cost;
pub mod spawn;
pub mod stats;
