//! The committed BPF object is built from the committed sources, and its
//! kernel-function call is linked on this kernel.

use std::path::Path;

#[test]
fn the_committed_object_is_built_from_current_sources() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("bpf");
    fixtures::bpf_object::check(
        &dir,
        "cgroups",
        cgroups::bpf::OBJECT,
        &["record.h"],
        "crates/cgroups/bpf/build.sh",
    );
}

#[test]
fn the_flush_is_linked_to_the_kernel_function() {
    let btf = aya::Btf::from_sys_fs().unwrap_or_else(|e| panic!("this kernel's BTF: {e}"));
    let (object, n) = cgroups::bpf::link_kfuncs(cgroups::bpf::OBJECT, &btf)
        .expect("css_rstat_flush is in this kernel's BTF");
    assert_eq!(n, 1, "one call rewritten");
    let imm = (cgroups::record::QS_KFUNC_CSS_RSTAT_FLUSH as i32).to_le_bytes();
    let bytes: Vec<u8> = object.iter().flat_map(|w| w.to_le_bytes()).collect();
    assert!(
        !bytes
            .chunks_exact(8)
            .any(|i| i[0] == 0x85 && i[4..8] == imm),
        "a placeholder call is left"
    );
}
