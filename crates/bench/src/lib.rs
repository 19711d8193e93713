//! System-level benchmarks behind `quietstat bench`.

pub mod procfs_cost;
pub mod stats;
