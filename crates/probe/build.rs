//! Generates the Rust side of the noise counters' layout from bpf/noise.h.

fn main() {
    bpfgen::generate("bpf/noise.h", "noise.rs");
}
