//! The committed BPF object is built from the committed sources, and its
//! kernel-function calls are linked on this kernel.

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
fn the_kernel_functions_are_linked() {
    let btf = aya::Btf::from_sys_fs().unwrap_or_else(|e| panic!("this kernel's BTF: {e}"));
    let (object, n) = cgroups::bpf::link_kfuncs(cgroups::bpf::OBJECT, &btf)
        .expect("css_rstat_flush and bpf_rdonly_cast are in this kernel's BTF");
    let placeholders = [
        cgroups::record::QS_KFUNC_CSS_RSTAT_FLUSH,
        cgroups::record::QS_KFUNC_RDONLY_CAST,
    ]
    .map(|p| (p as i32).to_le_bytes());
    // Helper calls (code 0x85, source register 0) to a placeholder.
    let calls = |bytes: &[u8]| {
        bytes
            .chunks_exact(8)
            .filter(|i| {
                i[0] == 0x85 && i[1] >> 4 == 0 && placeholders.iter().any(|p| i[4..8] == *p)
            })
            .count()
    };
    let before = calls(cgroups::bpf::OBJECT);
    // The flush, and at least one cast for each v1 controller read.
    assert!(before >= 6, "{before} placeholder calls in the object");
    assert_eq!(n, before, "every placeholder call rewritten");
    let bytes: Vec<u8> = object.iter().flat_map(|w| w.to_le_bytes()).collect();
    assert_eq!(
        calls(&bytes[..cgroups::bpf::OBJECT.len()]),
        0,
        "a placeholder call is left"
    );
}
