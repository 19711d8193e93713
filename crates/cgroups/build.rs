//! Generates the Rust side of the BPF record layout from bpf/record.h, the one
//! definition shared with the BPF program.

fn main() {
    bpfgen::generate("bpf/record.h", "record.rs");
}
