//! The committed `include/quietstat.h` is what cbindgen makes of the
//! library's source: the header cannot drift from the code.
//! `QS_WRITE_HEADER=1 cargo test -p capi --test header` rewrites it.

use std::path::Path;

#[test]
fn committed_header_is_generated_from_the_source() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = cbindgen::Config::from_file(dir.join("cbindgen.toml")).expect("cbindgen.toml");
    let mut made = Vec::new();
    cbindgen::Builder::new()
        .with_crate(dir)
        .with_config(config)
        .generate()
        .expect("generating quietstat.h")
        .write(&mut made);
    let path = dir.join("include/quietstat.h");
    if std::env::var_os("QS_WRITE_HEADER").is_some() {
        std::fs::write(&path, &made).unwrap();
    }
    let committed = std::fs::read(&path).unwrap_or_default();
    assert!(
        committed == made,
        "{} differs from what src/lib.rs gives; run QS_WRITE_HEADER=1 cargo test -p capi --test header",
        path.display()
    );
}
