//! The Debian packages: built from the binary under test (and the C
//! library built beside it) by `packaging/build-deb`, installed with dpkg
//! on this machine and purged: the agent's, its unit checked by
//! `systemd-analyze verify` (not started: this machine's init is not
//! systemd); the C library's, the C example built against them with
//! pkg-config and run.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::BIN;

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");

#[track_caller]
fn ok(out: Output, what: &str) -> String {
    assert!(
        out.status.success(),
        "{what}: {}\n{}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn cmd(prog: &str, args: &[&str]) -> Output {
    Command::new(prog)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("running {prog}: {e}"))
}

/// Purges the package when the test ends, however it ends.
struct Installed;

impl Drop for Installed {
    fn drop(&mut self) {
        let _ = cmd("dpkg", &["--purge", "quietstat"]);
    }
}

fn build(out: &Path) -> PathBuf {
    ok(
        Command::new(format!("{ROOT}/packaging/build-deb"))
            .arg(BIN)
            .args(["--fast", "--output"])
            .arg(out)
            .output()
            .expect("running packaging/build-deb (cargo-deb is installed by .ci/run)"),
        "packaging/build-deb",
    );
    deb(out, "quietstat_")
}

/// The package in `dir` whose file name starts with `prefix`.
fn deb(dir: &Path, prefix: &str) -> PathBuf {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.extension().is_some_and(|x| x == "deb")
                && p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with(prefix))
        })
        .unwrap_or_else(|| panic!("no {prefix}*.deb in {}", dir.display()))
}

/// The C library's ABI version, as its header defines it: the runtime
/// package's name and the SONAME carry it.
fn abi() -> String {
    let h = std::fs::read_to_string(format!("{ROOT}/crates/capi/include/quietstat.h")).unwrap();
    h.lines()
        .find_map(|l| l.strip_prefix("#define QS_ABI_VERSION "))
        .expect("QS_ABI_VERSION in quietstat.h")
        .trim()
        .to_string()
}

/// Purges the C library's packages when the test ends, however it ends.
struct LibInstalled(String);

impl Drop for LibInstalled {
    fn drop(&mut self) {
        let _ = cmd("dpkg", &["--purge", "libquietstat-dev", &self.0]);
    }
}

/// The C library's packages: the runtime one holds the library under its
/// SONAME; with the -dev one, the C example builds with pkg-config alone
/// (no path of this tree) and runs; both purge without a trace.
fn c_library_packages(out: &Path) {
    let abi = abi();
    let lib_package = format!("libquietstat{abi}");
    let soname = format!("libquietstat.so.{abi}");
    let run = deb(out, &format!("{lib_package}_"));
    let dev = deb(out, "libquietstat-dev_");
    let multiarch = ok(cmd("gcc", &["-print-multiarch"]), "gcc -print-multiarch");
    let libdir = format!("/usr/lib/{}", multiarch.trim());
    let files = ok(
        cmd("dpkg-deb", &["--contents", run.to_str().unwrap()]),
        "dpkg-deb --contents",
    );
    assert!(files.contains(&format!(".{libdir}/{soname}")), "{files}");
    let files = ok(
        cmd("dpkg-deb", &["--contents", dev.to_str().unwrap()]),
        "dpkg-deb --contents",
    );
    for f in [
        "./usr/include/quietstat.h".to_string(),
        format!(".{libdir}/libquietstat.a"),
        format!(".{libdir}/libquietstat.so -> {soname}"),
        format!(".{libdir}/pkgconfig/quietstat.pc"),
    ] {
        assert!(files.contains(&f), "{f} not in:\n{files}");
    }

    let _purge = LibInstalled(lib_package.clone());
    ok(
        cmd(
            "dpkg",
            &["-i", run.to_str().unwrap(), dev.to_str().unwrap()],
        ),
        "dpkg -i the library's packages",
    );
    let flags = ok(
        cmd("pkg-config", &["--cflags", "--libs", "quietstat"]),
        "pkg-config --cflags --libs quietstat",
    );
    assert!(flags.contains("-lquietstat"), "{flags}");
    let tmp = tempfile::tempdir().unwrap();
    let exe = tmp.path().join("start_times");
    let build = format!(
        "cc -O2 -Wall -Wextra -Werror {ROOT}/examples/c/start_times.c -o {} $(pkg-config --cflags --libs quietstat)",
        exe.display()
    );
    ok(cmd("sh", &["-c", &build]), &build);
    // Found by the loader in the system's library directory, by SONAME.
    let needed = ok(cmd("readelf", &["-d", exe.to_str().unwrap()]), "readelf -d");
    assert!(needed.contains(&format!("[{soname}]")), "{needed}");
    let run_out = Command::new(&exe)
        .args(["2", "0"])
        .env_remove("LD_LIBRARY_PATH")
        .output()
        .unwrap();
    assert!(
        run_out.status.success(),
        "start_times: {}{}",
        String::from_utf8_lossy(&run_out.stdout),
        String::from_utf8_lossy(&run_out.stderr)
    );
    ok(
        cmd("dpkg", &["--purge", "libquietstat-dev", &lib_package]),
        "dpkg --purge the library's packages",
    );
    for gone in [
        "/usr/include/quietstat.h".to_string(),
        format!("{libdir}/{soname}"),
        format!("{libdir}/pkgconfig/quietstat.pc"),
    ] {
        assert!(!Path::new(&gone).exists(), "{gone} left after purge");
    }
}

#[test]
fn package_builds_installs_verifies_and_purges() {
    let dir = tempfile::tempdir().unwrap();
    let deb = build(dir.path());
    let deb = deb.to_str().unwrap();
    // One package at a time: dpkg holds one lock.
    c_library_packages(dir.path());

    let files = ok(cmd("dpkg-deb", &["--contents", deb]), "dpkg-deb --contents");
    for f in [
        "./usr/bin/quietstat",
        "./lib/systemd/system/quietstat.service",
        "./etc/default/quietstat",
        "./etc/quietstat/agent.toml",
        "./usr/share/man/man1/quietstat.1.gz",
        "./usr/share/man/man1/quietstat-agent.1.gz",
        "./usr/share/bash-completion/completions/quietstat",
        "./usr/share/zsh/vendor-completions/_quietstat",
        "./usr/share/fish/vendor_completions.d/quietstat.fish",
    ] {
        assert!(
            files.lines().any(|l| l.ends_with(f)),
            "{f} not in:\n{files}"
        );
    }
    let conffiles = ok(cmd("dpkg-deb", &["--info", deb, "conffiles"]), "conffiles");
    assert!(conffiles.contains("/etc/default/quietstat"), "{conffiles}");
    assert!(
        conffiles.contains("/etc/quietstat/agent.toml"),
        "{conffiles}"
    );

    let _purge = Installed;
    ok(cmd("dpkg", &["-i", deb]), "dpkg -i");
    let version = ok(cmd("/usr/bin/quietstat", &["--version"]), "--version");
    assert_eq!(
        version.trim(),
        format!("quietstat {}", env!("CARGO_PKG_VERSION"))
    );
    ok(
        cmd("getent", &["passwd", "quietstat"]),
        "the quietstat user",
    );

    // The unit: no error and no warning (an unknown key only warns).
    let unit = "/lib/systemd/system/quietstat.service";
    let v = cmd("systemd-analyze", &["verify", unit]);
    let err = String::from_utf8_lossy(&v.stderr);
    let about_unit: Vec<&str> = err.lines().filter(|l| l.contains("quietstat")).collect();
    assert!(
        v.status.success() && about_unit.is_empty(),
        "systemd-analyze verify: {}\n{err}",
        v.status
    );

    // Its hardening: systemd's own exposure score, at most 4.0 of 10.
    ok(
        cmd(
            "systemd-analyze",
            &["security", "--offline=yes", "--threshold=40", unit],
        ),
        "systemd-analyze security",
    );

    // The man page and the completion are the binary's own.
    let page = ok(
        cmd("zcat", &["/usr/share/man/man1/quietstat-agent.1.gz"]),
        "zcat",
    );
    assert!(page.contains("web.listen\\-address"), "{page}");
    ok(
        cmd(
            "bash",
            &[
                "-c",
                "source /usr/share/bash-completion/completions/quietstat && complete -p quietstat",
            ],
        ),
        "loading the bash completion",
    );

    // Every ARGS= example of /etc/default/quietstat is taken by the
    // installed binary, as the unit passes it.
    let defaults = std::fs::read_to_string("/etc/default/quietstat").unwrap();
    let mut examples = 0;
    for line in defaults.lines() {
        let Some(v) = line.trim_start_matches('#').strip_prefix("ARGS=") else {
            continue;
        };
        examples += 1;
        let mut args = vec!["agent", "--config", "/etc/quietstat/agent.toml"];
        args.extend(v.trim_matches('"').split_whitespace());
        args.push("--print-config");
        ok(cmd("/usr/bin/quietstat", &args), &format!("ARGS={v}"));
    }
    assert!(examples >= 2, "{defaults}");

    ok(cmd("dpkg", &["--purge", "quietstat"]), "dpkg --purge");
    for gone in ["/usr/bin/quietstat", unit, "/etc/default/quietstat"] {
        assert!(!Path::new(gone).exists(), "{gone} left after purge");
    }
}
