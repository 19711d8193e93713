//! The text exposition format parsed into series, for comparing the
//! agent's output with node_exporter's; finding Debian's binaries.

use std::collections::BTreeMap;
use std::path::PathBuf;

/// (name, sorted labels) -> value.
pub type Series = BTreeMap<(String, Vec<(String, String)>), f64>;

/// Parses the text exposition format into (name, sorted labels) -> value.
pub fn parse_exposition(text: &str) -> (Series, BTreeMap<String, String>) {
    let mut series = Series::new();
    let mut types = BTreeMap::new();
    for line in text.lines() {
        if let Some(t) = line.strip_prefix("# TYPE ") {
            let (n, k) = t.split_once(' ').unwrap();
            types.insert(n.to_string(), k.to_string());
            continue;
        }
        if line.starts_with('#') || line.is_empty() {
            continue;
        }
        let name_end = line.find(['{', ' ']).unwrap();
        let name = &line[..name_end];
        let mut labels = Vec::new();
        let mut rest = &line[name_end..];
        if rest.starts_with('{') {
            let b = rest.as_bytes();
            let mut i = 1;
            while b[i] != b'}' {
                let eq = rest[i..].find('=').unwrap() + i;
                let key = rest[i..eq].trim_start_matches(',').to_string();
                let mut j = eq + 2;
                let mut val = String::new();
                while b[j] != b'"' {
                    if b[j] == b'\\' {
                        j += 1;
                        val.push(match b[j] {
                            b'n' => '\n',
                            c => c as char,
                        });
                    } else {
                        let c = rest[j..].chars().next().unwrap();
                        val.push(c);
                        j += c.len_utf8() - 1;
                    }
                    j += 1;
                }
                labels.push((key, val));
                i = j + 1;
                if b[i] == b',' {
                    i += 1;
                }
            }
            rest = &rest[i + 1..];
        }
        let value: f64 = rest.split_whitespace().next().unwrap().parse().unwrap();
        labels.sort();
        series.insert((name.to_string(), labels), value);
    }
    (series, types)
}

/// The value of series `name` with exactly `labels` (in any order).
pub fn value(s: &Series, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    let mut l: Vec<(String, String)> = labels
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    l.sort();
    s.get(&(name.to_string(), l)).copied()
}

/// `bin` on the PATH.
pub fn which(bin: &str) -> PathBuf {
    let path = std::env::var("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|d| d.join(bin))
        .find(|p| p.exists())
        .unwrap_or_else(|| {
            panic!("{bin} not found: install Debian's prometheus and prometheus-node-exporter packages (.ci/run does)")
        })
}

/// Debian's node_exporter on a free loopback port with `args`, stopped
/// when the guard drops; its address once it takes connections.
pub fn node_exporter<S: AsRef<std::ffi::OsStr>>(
    args: &[S],
) -> (sys::child::Guard, std::net::SocketAddr) {
    node_exporter_env(args, &[])
}

/// As [`node_exporter`], with `env` set (`DBUS_SYSTEM_BUS_ADDRESS`).
pub fn node_exporter_env<S: AsRef<std::ffi::OsStr>>(
    args: &[S],
    env: &[(&str, &str)],
) -> (sys::child::Guard, std::net::SocketAddr) {
    let port = super::agent::free_port();
    let ne = std::process::Command::new(which("prometheus-node-exporter"))
        .arg(format!("--web.listen-address=127.0.0.1:{port}"))
        .args(args)
        .envs(env.iter().copied())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let guard = sys::child::Guard(ne);
    let addr: std::net::SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    assert!(
        super::wait_for(std::time::Duration::from_secs(30), || {
            std::net::TcpStream::connect(addr).is_ok()
        }),
        "node_exporter did not start"
    );
    (guard, addr)
}
