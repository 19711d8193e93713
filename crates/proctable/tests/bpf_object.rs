//! The committed BPF objects must be built from the committed sources:
//! bpf/build.sh records their SHA-256 in bpf/NAME.bpf.o.sources.

fn check(name: &str, embedded: &[u8], headers: &[&str]) {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("bpf");
    fixtures::bpf_object::check(
        &dir,
        name,
        embedded,
        headers,
        "crates/proctable/bpf/build.sh",
    );
}

#[test]
fn committed_objects_are_built_from_current_sources() {
    let all = ["record.h", "task.h", "maps.h"];
    check("proctable", proctable::bpf::OBJECT, &all);
    check(
        "walk",
        proctable::bpf::walk::OBJECT,
        &["record.h", "task.h", "maps.h", "kfuncs.h"],
    );
    check(
        "lookup",
        proctable::bpf::lookup::OBJECT,
        &["record.h", "kfuncs.h"],
    );
    check("net", proctable::bpf::net::OBJECT, &["record.h"]);
    check(
        "gpu",
        proctable::bpf::gpu::OBJECT,
        &["record.h", "kfuncs.h"],
    );
}

/// No call to any of `placeholders` is left in a linked object.
fn assert_linked(object: &[u64], placeholders: &[u64]) {
    let bytes: Vec<u8> = object.iter().flat_map(|w| w.to_le_bytes()).collect();
    for &placeholder in placeholders {
        let imm = (placeholder as i32).to_le_bytes();
        let left = bytes
            .chunks_exact(8)
            .filter(|i| i[0] == 0x85 && i[4..8] == imm)
            .count();
        assert_eq!(left, 0, "placeholder {placeholder} left in {left} calls");
    }
}

fn btf() -> aya::Btf {
    aya::Btf::from_sys_fs().unwrap_or_else(|e| panic!("this kernel's BTF: {e}"))
}

/// Every placeholder call in the walk is rewritten into a kernel-function
/// call (seven in the source: new, next and destroy for each of the two
/// walks, and the read-only cast of a hand-walked thread; the compiler may
/// duplicate `next`).
#[test]
fn walk_kfunc_calls_are_linked() {
    let (object, n) = proctable::bpf::walk::link_kfuncs(proctable::bpf::walk::OBJECT, &btf())
        .expect("bpf_iter_task_* are in this kernel's BTF");
    assert!(n >= 7, "{n} calls rewritten");
    assert_linked(
        &object,
        &[
            proctable::record::QS_KFUNC_ITER_TASK_NEW,
            proctable::record::QS_KFUNC_ITER_TASK_NEXT,
            proctable::record::QS_KFUNC_ITER_TASK_DESTROY,
            proctable::record::QS_KFUNC_RDONLY_CAST,
        ],
    );
}

/// The lookup's five kernel-function calls (the task lookup and release,
/// the number iterator's new, next and destroy) are all linked.
#[test]
fn lookup_kfunc_calls_are_linked() {
    let (object, n) = proctable::bpf::lookup::link_kfuncs(proctable::bpf::lookup::OBJECT, &btf())
        .expect("bpf_task_from_vpid and bpf_iter_num_* are in this kernel's BTF");
    assert!(n >= 5, "{n} calls rewritten");
    assert_linked(
        &object,
        &[
            proctable::record::QS_KFUNC_TASK_FROM_VPID,
            proctable::record::QS_KFUNC_TASK_RELEASE,
            proctable::record::QS_KFUNC_ITER_NUM_NEW,
            proctable::record::QS_KFUNC_ITER_NUM_NEXT,
            proctable::record::QS_KFUNC_ITER_NUM_DESTROY,
        ],
    );
}
