//! The committed BPF object must be built from the committed sources:
//! bpf/build.sh records their SHA-256 in bpf/proctable.bpf.o.sources.

use sha2::{Digest, Sha256};

#[test]
fn committed_object_is_built_from_current_sources() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("bpf");
    let recorded = std::fs::read_to_string(dir.join("proctable.bpf.o.sources"))
        .expect("bpf/proctable.bpf.o.sources (written by bpf/build.sh)");
    let mut files = 0;
    for line in recorded.lines() {
        let (hash, name) = line.split_once("  ").expect("sha256sum format: HASH  FILE");
        let bytes = std::fs::read(dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        let now = format!("{:x}", Sha256::digest(&bytes));
        assert_eq!(
            now, hash,
            "bpf/{name} changed since proctable.bpf.o was built: run crates/proctable/bpf/build.sh"
        );
        files += 1;
    }
    assert_eq!(files, 2, "record.h and proctable.bpf.c are both recorded");
    let object = std::fs::read(dir.join("proctable.bpf.o")).unwrap();
    assert_eq!(&object[..4], b"\x7fELF");
    assert_eq!(object.as_slice(), proctable::bpf::OBJECT);
}
