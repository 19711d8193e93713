//! Bounds on what one parse may hold, so that garbage input (a multi-megabyte
//! line of numbers, say) costs a clear error rather than unbounded memory.
//! Each bound is far above any machine Linux supports.

/// CPUs in one file (Linux's NR_CPUS tops out at 8192 on every architecture today).
pub const MAX_CPUS: usize = 65_536;
/// IRQ numbers on the `intr` line or rows of /proc/interrupts.
pub const MAX_IRQS: usize = 1 << 20;
/// Rows of any other table (devices, interfaces, meminfo and vmstat keys).
pub const MAX_ROWS: usize = 1 << 20;
/// Bytes of one file read by the [`crate::Reader`] unless configured otherwise.
pub const DEFAULT_MAX_FILE_BYTES: usize = 256 << 20;
