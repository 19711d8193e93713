//! The C side: `tests/c/qs_test.c` and `examples/c/start_times.c`
//! compiled by the system C compiler (`cc -Wall -Wextra -Werror`) against
//! `include/quietstat.h`, linked with libquietstat shared and static (the
//! artifacts cargo builds beside this test), and run on both backends.

use std::path::{Path, PathBuf};
use std::process::Command;

const CRATE: &str = env!("CARGO_MANIFEST_DIR");

/// Where cargo put libquietstat.so and .a: the profile directory above
/// this test's own executable (target/debug/deps/c-...).
fn lib_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().and_then(Path::parent).unwrap().to_path_buf();
    for f in ["libquietstat.so", "libquietstat.a"] {
        assert!(
            dir.join(f).exists(),
            "{f} not built in {}: `cargo build -p capi` first (scripts/test does)",
            dir.display()
        );
    }
    dir
}

/// Compiles `source` into `out`, linked shared or static.
fn build(source: &Path, out: &Path, shared: bool) {
    let lib = lib_dir();
    let mut cc = Command::new("cc");
    cc.args(["-O2", "-Wall", "-Wextra", "-Werror", "-std=c11"])
        .arg("-I")
        .arg(Path::new(CRATE).join("include"))
        .arg(source)
        .arg("-o")
        .arg(out);
    if shared {
        cc.arg("-L").arg(&lib).arg("-lquietstat");
    } else {
        // A Rust static library needs the C runtime's own libraries.
        cc.arg(lib.join("libquietstat.a"))
            .args(["-lpthread", "-ldl", "-lm", "-lrt", "-lgcc_s"]);
    }
    let o = cc.output().expect("running cc (gcc, installed by .ci/run)");
    assert!(
        o.status.success(),
        "cc {}: {}",
        source.display(),
        String::from_utf8_lossy(&o.stderr)
    );
}

/// A directory where the shared library is found under its SONAME
/// (`libquietstat.so.<ABI>`, the name a program linked with it asks
/// for): cargo leaves it as libquietstat.so alone.
fn soname_dir() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(
        lib_dir().join("libquietstat.so"),
        d.path()
            .join(format!("libquietstat.so.{}", quietstat::QS_ABI_VERSION)),
    )
    .unwrap();
    d
}

fn run(exe: &Path, args: &[&str]) -> String {
    let libs = soname_dir();
    let o = Command::new(exe)
        .args(args)
        .env("LD_LIBRARY_PATH", libs.path())
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(o.status.success(), "{} {args:?}: {text}", exe.display());
    text
}

#[test]
fn c_test_program_passes_on_both_backends_shared_and_static() {
    let dir = tempfile::tempdir().unwrap();
    let source = Path::new(CRATE).join("tests/c/qs_test.c");
    for (kind, shared) in [("shared", true), ("static", false)] {
        // The children's name is the program's: qs_test.
        std::fs::create_dir(dir.path().join(kind)).unwrap();
        let exe = dir.path().join(kind).join("qs_test");
        build(&source, &exe, shared);
        // Each backend on the calling thread alone and split in two.
        for backend in ["bpf", "procfs"] {
            for threads in ["0", "2"] {
                let out = run(&exe, &[backend, threads]);
                assert!(
                    out.contains("all passed"),
                    "{kind} {backend} {threads}: {out}"
                );
            }
        }
    }
}

#[test]
fn the_start_times_example_builds_runs_and_agrees() {
    let dir = tempfile::tempdir().unwrap();
    let exe = dir.path().join("start_times");
    build(
        &Path::new(CRATE).join("../../examples/c/start_times.c"),
        &exe,
        true,
    );
    let out = run(&exe, &["3"]);
    assert!(out.contains("disagreements 0"), "{out}");
    assert!(
        out.contains("backend bpf"),
        "run as root, auto takes BPF: {out}"
    );
}
