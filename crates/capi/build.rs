//! Gives libquietstat.so its SONAME, `libquietstat.so.<QS_ABI_VERSION>`:
//! a program linked against it asks for that ABI, and the name changes
//! only when the ABI does. The version is read from src/lib.rs, where it
//! is defined once.

fn main() {
    println!("cargo:rerun-if-changed=src/lib.rs");
    let src = std::fs::read_to_string("src/lib.rs").expect("src/lib.rs");
    let abi: u32 = src
        .lines()
        .find_map(|l| {
            l.trim()
                .strip_prefix("pub const QS_ABI_VERSION: u32 = ")?
                .strip_suffix(';')?
                .parse()
                .ok()
        })
        .expect("src/lib.rs defines `pub const QS_ABI_VERSION: u32 = N;`");
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libquietstat.so.{abi}");
}
