//! The agent: one tickless sampler serving many consumers from its latest
//! snapshots.
//!
//! One thread (the caller of [`Agent::run`]) reads the kernel. It sleeps on a
//! futex in the shared-memory snapshot with an absolute CLOCK_REALTIME
//! deadline: the next instant a source is due. It wakes for exactly three
//! things: a source falls due, a consumer asks for fresher data than there
//! is (a local reader through the shared memory, or the HTTP server through
//! [`Shared::fresh`]), or a signal. Nothing else in the agent wakes on a
//! timer. Consumers read [`Shared::state`] under a read lock; the sampler
//! reads the kernel without the lock and swaps each fresh source in.
//!
//! See docs/agent.md for the design and its figures.

pub mod budget;
pub mod cgroup_net;
mod cgroup_worker;
pub mod config;
pub mod logging;
pub mod memory;
pub mod placement;
mod sampler;
pub mod schedule;
mod signals;
mod state;
mod usage;

use crate::config::ConfigError;

pub use crate::config::ProcessMetricsMode;
pub use budget::SourceStats;
pub use sampler::{Agent, default_journal};
pub use signals::request_stop;
pub use state::{Declined, Exits, NotFresh, Shared, State};
pub use usage::{SelfUsage, self_usage};

/// Why the agent could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("configuration: {0}")]
    Config(#[from] ConfigError),
    #[error("{0}")]
    Setup(#[from] sys::Error),
}

pub(crate) fn log(msg: impl AsRef<str>) {
    logging::info(msg.as_ref());
}

pub(crate) fn warn(msg: impl AsRef<str>) {
    logging::warn(msg.as_ref());
}
