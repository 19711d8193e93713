//! The interfaces of the network namespaces cgroups' processes live in,
//! for cAdvisor's `container_network_*`: a container's network is its
//! namespace's interfaces, not a sum of its processes' sockets.
//!
//! After each process table, one process of each cgroup (the first the
//! table lists among its own processes) names the cgroup's namespace
//! (`/proc/PID/ns/net`, read at each table while the process is younger
//! than [`SETTLED_NS`] and its namespace the agent's, as a runtime moves
//! a container's first process into its namespace after starting it; then
//! kept: a process that changes namespace later keeps the one read);
//! where that is not the agent's own,
//! the namespace's `/proc/PID/net/dev` is read, once per namespace,
//! through that process. A machine without containers reads no file
//! here once its processes are known; one with containers, a link per
//! new process naming a cgroup and a file per container namespace each
//! table. Interfaces cAdvisor leaves out are left out (`lo`, and names
//! beginning `veth`, `docker` or `nerdctl`).

use std::collections::HashMap;
use std::hash::BuildHasherDefault;
use std::path::PathBuf;
use std::sync::Arc;

use procfs::net_dev::NetDev;
use proctable::Proc;
use store::procs::IdHasher;

/// A map keyed by integers, hashed by a multiply a word.
type Map<K, V> = HashMap<K, V, BuildHasherDefault<IdHasher>>;

/// A process older than this (ns since it started) is taken to stay in
/// the namespace it is in.
pub const SETTLED_NS: u64 = 60_000_000_000;

/// Names of interfaces cAdvisor does not count in a container's network.
const IGNORED_PREFIXES: [&str; 4] = ["lo", "veth", "docker", "nerdctl"];

/// A cgroup whose processes are in a network namespace not the agent's,
/// and that namespace's interfaces as last read.
#[derive(Debug, Clone)]
pub struct CgroupNetDev {
    pub cgroup_id: u64,
    pub devices: Arc<[NetDev]>,
}

/// What is kept from table to table.
pub(crate) struct CgroupNet {
    proc_root: PathBuf,
    /// The agent's own namespace: `None` where it cannot be read (a
    /// fixture tree), and then nothing is read.
    own: Option<u64>,
    /// The namespace of each process that named a cgroup's, by (pid,
    /// start): read once.
    seen: Map<(u32, u64), Option<u64>>,
}

impl CgroupNet {
    pub(crate) fn new(proc_root: PathBuf) -> CgroupNet {
        let own = net_ns(&proc_root.join("self/ns/net"));
        CgroupNet {
            proc_root,
            own,
            seen: Map::default(),
        }
    }

    /// Fills `out` (sorted by cgroup id) from table `procs`.
    pub(crate) fn update(&mut self, procs: &[Proc], out: &mut Vec<CgroupNetDev>) {
        out.clear();
        let Some(own) = self.own else {
            return;
        };
        let mut first: Map<u64, &Proc> = Map::default();
        let mut last = None;
        for p in procs.iter().filter(|p| p.pid == p.tgid) {
            // Neighbours by PID are often of one cgroup: one lookup for them.
            if p.cgroup_id != last
                && let Some(id) = p.cgroup_id
            {
                first.entry(id).or_insert(p);
            }
            last = p.cgroup_id;
        }
        let now_ns = sys::boot_ns();
        let mut seen = Map::with_capacity_and_hasher(first.len(), Default::default());
        let mut read: Map<u64, Option<Arc<[NetDev]>>> = Map::default();
        for (id, p) in first {
            let key = (p.pid, p.start_ticks);
            let ns = match self.seen.get(&key) {
                Some(ns) => {
                    seen.insert(key, *ns);
                    *ns
                }
                None => {
                    let ns = net_ns(&self.proc_root.join(format!("{}/ns/net", p.pid)));
                    let settled = now_ns.saturating_sub(p.start_ns) >= SETTLED_NS;
                    if settled || ns.is_some_and(|ns| ns != own) {
                        seen.insert(key, ns);
                    }
                    ns
                }
            };
            let Some(ns) = ns.filter(|ns| *ns != own) else {
                continue;
            };
            let devices = read
                .entry(ns)
                .or_insert_with(|| self.net_dev(key.0))
                .clone();
            if let Some(devices) = devices {
                out.push(CgroupNetDev {
                    cgroup_id: id,
                    devices,
                });
            }
        }
        self.seen = seen;
        out.sort_unstable_by_key(|c| c.cgroup_id);
    }

    /// The interfaces of `pid`'s namespace, those cAdvisor counts; `None`
    /// where the file cannot be read or parsed (the process ended).
    fn net_dev(&self, pid: u32) -> Option<Arc<[NetDev]>> {
        let text = sys::file::read_capped(
            &self.proc_root.join(format!("{pid}/net/dev")),
            procfs::limits::DEFAULT_MAX_FILE_BYTES as u64,
        )
        .ok()?;
        let mut devices = procfs::net_dev::parse(&text).ok()?;
        devices.retain(|d| {
            !IGNORED_PREFIXES
                .iter()
                .any(|p| d.name.as_str().starts_with(p))
        });
        Some(devices.into())
    }
}

/// The namespace inode a `/proc/PID/ns/net` link names.
fn net_ns(link: &std::path::Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let target = std::fs::read_link(link).ok()?;
    procfs::pid::parse_net_ns(target.as_os_str().as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// On a fixture tree (no namespace links) nothing is read or served.
    #[test]
    fn without_the_agents_own_namespace_nothing_is_served() {
        let d = tempfile::tempdir().unwrap();
        let mut n = CgroupNet::new(d.path().to_path_buf());
        let p = Proc {
            pid: 1,
            tgid: 1,
            cgroup_id: Some(5),
            ..Proc::default()
        };
        let mut out = vec![CgroupNetDev {
            cgroup_id: 9,
            devices: Arc::from(Vec::new()),
        }];
        n.update(&[p], &mut out);
        assert!(out.is_empty());
    }

    /// This machine's processes share the agent's namespace: none served;
    /// a process's namespace is kept once it is settled, read again while
    /// it is young and in the agent's.
    #[test]
    fn processes_of_the_agents_namespace_give_no_rows() {
        let mut n = CgroupNet::new(PathBuf::from("/proc"));
        assert!(n.own.is_some(), "/proc/self/ns/net unreadable");
        let me = |start_ns: u64| Proc {
            pid: std::process::id(),
            tgid: std::process::id(),
            cgroup_id: Some(7),
            start_ns,
            ..Proc::default()
        };
        let mut out = Vec::new();
        n.update(&[me(sys::boot_ns())], &mut out);
        assert!(out.is_empty());
        assert!(
            n.seen.is_empty(),
            "a young process's namespace is read again"
        );
        n.update(&[me(0)], &mut out);
        assert!(out.is_empty());
        assert_eq!(n.seen.len(), 1);
    }
}
