//! System-level benchmarks behind `quietstat bench`.

pub mod agent_cost;
pub mod cgroups_cost;
pub mod child;
pub mod consumers;
pub mod equal_work;
pub mod exits;
pub mod fields_cost;
pub mod gpu_cost;
pub mod memory_limit;
pub mod net_cost;
pub mod procfs_cost;
pub mod proctable_cost;
pub mod push;
pub mod quiet;
pub mod scale;
pub mod soak;
pub mod spawn;
pub mod stats;
pub mod store_day;
pub mod systemd;
pub mod viewers;
