//! Per-cgroup accounting: what each service, container and slice costs,
//! as the kernel counts it (exited processes and kernel work charged to
//! the cgroup included).
//!
//! - [`files`]: the figures ([`Figure`]) and the file of each hierarchy
//!   version that gives each one ([`FILES`]); which files are read is
//!   chosen by name ([`files::select`]).
//! - [`parse`]: each file's text into [`Figures`], pure.
//! - [`reader`]: the hierarchies of the mount table walked, directories
//!   kept open between reads, files read with `openat` and `pread`
//!   ([`Reader`] into a [`Sample`]).

pub mod bpf;
pub mod files;
pub mod parse;
pub mod reader;

pub mod record {
    //! The BPF record layout, generated from `bpf/record.h`.
    include!(concat!(env!("OUT_DIR"), "/record.rs"));
}

pub use files::{FILES, Figure, File};
pub use parse::{Figures, ParseError};
pub use reader::{
    Cgroup, Hierarchy, MAX_DEPTH, MEMORY_STAT_EVERY, Options, Reader, SETTINGS_EVERY, Sample,
};
