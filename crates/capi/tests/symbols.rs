//! What libquietstat.so shows a linker: its SONAME carries the ABI
//! version; it exports exactly the functions quietstat.h declares (no
//! Rust symbol leaks out, none declared is missing); and each struct of
//! the header has the size `abi.txt` records for this ABI version, so a
//! struct cannot change without the version (and so the SONAME) moving.

use std::path::{Path, PathBuf};
use std::process::Command;

const CRATE: &str = env!("CARGO_MANIFEST_DIR");

/// Where cargo put libquietstat.so (the profile directory above this
/// test's executable).
fn lib() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().and_then(Path::parent).unwrap();
    let so = dir.join("libquietstat.so");
    assert!(
        so.exists(),
        "{} not built: `cargo build -p capi` first (scripts/test does)",
        so.display()
    );
    so
}

fn output(cmd: &mut Command) -> String {
    let o = cmd
        .output()
        .unwrap_or_else(|e| panic!("{cmd:?}: {e} (binutils and gcc are installed by .ci/run)"));
    assert!(
        o.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The functions quietstat.h declares: `qs_name(` at a declaration.
fn declared() -> Vec<String> {
    let h = std::fs::read_to_string(Path::new(CRATE).join("include/quietstat.h")).unwrap();
    let mut names: Vec<String> = h
        .lines()
        .filter(|l| !l.trim_start().starts_with("//") && !l.starts_with('#'))
        .flat_map(|l| {
            l.match_indices("qs_").filter_map(|(at, _)| {
                let rest = &l[at..];
                let end = rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))?;
                rest[end..]
                    .starts_with('(')
                    .then(|| rest[..end].to_string())
            })
        })
        .collect();
    names.sort();
    names.dedup();
    names
}

#[test]
fn the_library_exports_the_headers_functions_and_nothing_else() {
    let so = lib();
    let dynamic = output(Command::new("readelf").args(["-d"]).arg(&so));
    let soname = format!("[libquietstat.so.{}]", quietstat::QS_ABI_VERSION);
    assert!(
        dynamic
            .lines()
            .any(|l| l.contains("(SONAME)") && l.contains(&soname)),
        "no SONAME {soname}: {dynamic}"
    );
    let nm = output(
        Command::new("nm")
            .args(["-D", "--defined-only", "--format=posix"])
            .arg(&so),
    );
    let mut exported: Vec<String> = nm
        .lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            let (name, kind) = (w.next()?, w.next()?);
            // Code and data, not the linker's own markers.
            matches!(kind, "T" | "D" | "B" | "R" | "W" | "V" | "i").then(|| name.to_string())
        })
        .collect();
    exported.sort();
    let header = declared();
    assert!(header.len() >= 10, "{header:?}");
    let leaked: Vec<&String> = exported.iter().filter(|e| !header.contains(e)).collect();
    let missing: Vec<&String> = header.iter().filter(|h| !exported.contains(h)).collect();
    assert!(
        leaked.is_empty() && missing.is_empty(),
        "exported but not in quietstat.h: {leaked:?}; in quietstat.h but not exported: {missing:?}"
    );
}

#[test]
fn each_struct_has_the_size_recorded_for_its_abi_version() {
    let dir = tempfile::tempdir().unwrap();
    let exe = dir.path().join("sizes");
    output(
        Command::new("cc")
            .args(["-Wall", "-Wextra", "-Werror", "-std=c11", "-I"])
            .arg(Path::new(CRATE).join("include"))
            .arg(Path::new(CRATE).join("tests/c/sizes.c"))
            .arg("-o")
            .arg(&exe),
    );
    let now = output(&mut Command::new(&exe));
    let recorded = std::fs::read_to_string(Path::new(CRATE).join("abi.txt")).unwrap();
    let abi = quietstat::QS_ABI_VERSION.to_string();
    let lines: Vec<&str> = recorded
        .lines()
        .filter(|l| l.split(' ').next() == Some(abi.as_str()))
        .collect();
    assert!(
        !lines.is_empty(),
        "abi.txt has no line for ABI {abi}; this header's sizes are:\n{now}"
    );
    for line in now.lines() {
        assert!(
            lines.contains(&line),
            "`{line}` is not in abi.txt for ABI {abi} ({lines:?}): a struct changed; \
             bump QS_ABI_VERSION and record the new sizes"
        );
    }
}
