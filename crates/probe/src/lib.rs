//! Tools that measure the observer effect: [`jitter`] (cyclictest-style
//! timer latency on one CPU, alone and beside a command) and, with BPF,
//! what interrupts a set of CPUs and who caused it.

pub mod jitter;
pub mod noise;
pub mod svg;
