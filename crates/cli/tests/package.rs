//! The Debian package: built from the binary under test by
//! `packaging/build-deb`, installed with dpkg on this machine, its unit
//! checked by `systemd-analyze verify`, then purged. The unit is not
//! started: this machine's init is not systemd.

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
    std::fs::read_dir(out)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "deb"))
        .expect("a .deb")
}

#[test]
fn package_builds_installs_verifies_and_purges() {
    let dir = tempfile::tempdir().unwrap();
    let deb = build(dir.path());
    let deb = deb.to_str().unwrap();

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
