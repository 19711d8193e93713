//! A veth pair made by a test, without IPv6 (so that nothing but the
//! test's own packets passes), deleted on drop (a failed assertion too).

use std::process::Command;

pub struct Veth {
    /// The two ends.
    pub a: String,
    pub b: String,
}

/// Runs a command that must succeed.
pub fn run(args: &[&str]) {
    let out = Command::new(args[0]).args(&args[1..]).output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

impl Veth {
    /// A pair named `<tag><pid>a` and `...b`, both up.
    pub fn new(tag: &str) -> Veth {
        let id = std::process::id() % 100_000;
        let v = Veth {
            a: format!("{tag}{id}a"),
            b: format!("{tag}{id}b"),
        };
        run(&[
            "ip", "link", "add", &v.a, "type", "veth", "peer", "name", &v.b,
        ]);
        for d in [&v.a, &v.b] {
            run(&[
                "sysctl",
                "-qw",
                &format!("net.ipv6.conf.{d}.disable_ipv6=1"),
            ]);
        }
        v
    }

    pub fn up(&self) {
        run(&["ip", "link", "set", &self.a, "up"]);
        run(&["ip", "link", "set", &self.b, "up"]);
    }
}

impl Drop for Veth {
    fn drop(&mut self) {
        let _ = Command::new("ip").args(["link", "del", &self.a]).status();
    }
}
