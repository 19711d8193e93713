//! Per-cgroup figures from two cgroup samples, in the style of
//! systemd-cgtop and cAdvisor: CPU as a share of one CPU, memory and its
//! working set, I/O and fault rates, the share of time stalled.
//!
//! A cgroup is matched by path and id: one made again under the same path
//! (a new id) has no rates across the two, nor has a counter that went
//! backwards.

use std::collections::HashMap;
use std::sync::Arc;
use sys::Error;

use cgroups::{Cgroup, Figure, Sample};
use serde::Serialize;

use crate::{delta, rate};

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct CgroupRates {
    pub path: Arc<str>,
    pub id: u64,
    pub depth: u16,
    /// CPU used, percent of one CPU (200: two CPUs busy), and its user and
    /// system parts.
    pub cpu_pct: Option<f64>,
    pub cpu_user_pct: Option<f64>,
    pub cpu_system_pct: Option<f64>,
    /// Bandwidth periods in which the cgroup was throttled, percent of the
    /// periods it had runnable tasks in.
    pub throttled_periods_pct: Option<f64>,
    pub memory_bytes: Option<u64>,
    /// The usage less the inactive file list: what cAdvisor and the
    /// kubelet call the working set.
    pub working_set_bytes: Option<u64>,
    pub memory_anon_bytes: Option<u64>,
    pub memory_file_bytes: Option<u64>,
    pub memory_max_bytes: Option<u64>,
    pub page_faults_per_sec: Option<f64>,
    pub major_page_faults_per_sec: Option<f64>,
    /// Processes the OOM killer ended in the cgroup over the interval.
    pub oom_kills: Option<u64>,
    pub io_read_bytes_per_sec: Option<f64>,
    pub io_write_bytes_per_sec: Option<f64>,
    pub io_reads_per_sec: Option<f64>,
    pub io_writes_per_sec: Option<f64>,
    pub pids: Option<u64>,
    /// Share of the interval some (or all) of its tasks stalled, percent.
    pub cpu_some_pct: Option<f64>,
    pub memory_some_pct: Option<f64>,
    pub memory_full_pct: Option<f64>,
    pub io_some_pct: Option<f64>,
    pub io_full_pct: Option<f64>,
}

/// The usage less the inactive file list: cAdvisor's and the kubelet's
/// working set.
pub fn working_set_bytes(f: &cgroups::Figures) -> Option<u64> {
    let usage = f.get(Figure::MemoryBytes)?;
    Some(usage.saturating_sub(f.get(Figure::MemoryInactiveFileBytes).unwrap_or(0)))
}

/// Counters of the process table summed by cgroup, each kept as a counter
/// that never goes back ([`CgroupTotals`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Totals {
    /// Time GPU engines were busy with the processes' clients, ns.
    pub gpu_busy_ns: u64,
    /// Payload bytes the processes' TCP sockets received.
    pub net_rx_bytes: u64,
    /// Payload bytes the processes' TCP sockets sent, acknowledged.
    pub net_tx_bytes: u64,
}

impl Totals {
    fn from_array([gpu_busy_ns, net_rx_bytes, net_tx_bytes]: [u64; 3]) -> Totals {
        Totals {
            gpu_busy_ns,
            net_rx_bytes,
            net_tx_bytes,
        }
    }
}

/// A row's counters as [`Totals`] orders them (zero where it has none).
fn counters(p: &proctable::Proc) -> [u64; 3] {
    let net = p.net.unwrap_or_default();
    [p.gpu.map_or(0, |g| g.busy_ns), net.rx_bytes, net.tx_bytes]
}

/// GPU busy time and network bytes by cgroup as counters that never go
/// back: a sum over the live processes would fall when one ends. Each
/// table adds, to its process's cgroup, what each of the process's
/// counters grew by since the table before (all of it for one not seen
/// before), so a cgroup keeps what its processes that ended used. A GPU
/// client whose charge moves to another process when its first holder
/// lets go is counted again then (its whole time; see `proctable::gpu`);
/// so is a socket the kernel charges to another process.
#[derive(Debug, Default)]
pub struct CgroupTotals {
    /// Each process's counters at the last table, by PID and start.
    seen: HashMap<(u32, u64), [u64; 3]>,
    /// Each cgroup's own totals, by id.
    own: HashMap<u64, [u64; 3]>,
}

impl CgroupTotals {
    /// Takes a table (rows without a cgroup id, or with none of the
    /// counters, are passed over); the cgroups not in `live` (the latest
    /// walk's, when there is one) and without a process in the table are
    /// forgotten (one made since the walk keeps what its processes did).
    pub fn update(&mut self, procs: &[proctable::Proc], live: Option<&[Cgroup]>) {
        let mut seen = HashMap::with_capacity(self.seen.len());
        let mut holding = std::collections::HashSet::new();
        for p in procs {
            let Some(id) = p.cgroup_id else {
                continue;
            };
            holding.insert(id);
            let now = counters(p);
            if now == [0; 3] {
                continue;
            }
            let key = (p.pid, p.start_ticks);
            let before = self.seen.get(&key).copied().unwrap_or_default();
            let own = self.own.entry(id).or_default();
            let mut kept = [0; 3];
            for i in 0..3 {
                own[i] = own[i].saturating_add(now[i].saturating_sub(before[i]));
                kept[i] = now[i].max(before[i]);
            }
            seen.insert(key, kept);
        }
        self.seen = seen;
        if let Some(live) = live.filter(|l| !l.is_empty()) {
            let ids: std::collections::HashSet<u64> = live.iter().map(|c| c.id).collect();
            self.own
                .retain(|id, _| ids.contains(id) || holding.contains(id));
        }
    }

    /// Each of `cgroups`' totals with those of the cgroups below it.
    pub fn sums(&self, cgroups: &[&Cgroup]) -> Vec<Totals> {
        roll_up(cgroups, &self.own, |sum, t| {
            for i in 0..3 {
                sum[i] = sum[i].saturating_add(t[i]);
            }
        })
        .into_iter()
        .map(Totals::from_array)
        .collect()
    }
}

/// Whether `path` is `top` or a cgroup below it.
fn below(path: &str, top: &str) -> bool {
    top == "/"
        || path
            .strip_prefix(top)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

/// Each of `cgroups`' figure (in their order) with those of the cgroups
/// below it, from each cgroup's own (`own`, by id; a cgroup without one
/// adds nothing), added by `add`.
fn roll_up<T: Copy + Default>(
    cgroups: &[&Cgroup],
    own: &HashMap<u64, T>,
    add: impl Fn(&mut T, &T),
) -> Vec<T> {
    // Only the cgroups that have a figure of their own.
    let having: Vec<(&str, T)> = cgroups
        .iter()
        .filter_map(|c| own.get(&c.id).map(|t| (&*c.path, *t)))
        .collect();
    cgroups
        .iter()
        .map(|c| {
            let mut sum = T::default();
            for (_, t) in having.iter().filter(|(path, _)| below(path, &c.path)) {
                add(&mut sum, t);
            }
            sum
        })
        .collect()
}

/// Adds GPU figures.
fn add_gpu(sum: &mut proctable::Gpu, g: &proctable::Gpu) {
    sum.busy_ns = sum.busy_ns.saturating_add(g.busy_ns);
    sum.mem_bytes = sum.mem_bytes.saturating_add(g.mem_bytes);
    sum.clients = sum.clients.saturating_add(g.clients);
}

/// GPU use of each of `cgroups` (in their order): the sums over the
/// processes of `procs` in it and in the cgroups below it, as the kernel's
/// own cgroup figures count (each GPU client once, charged to one
/// process: see `proctable::gpu`); busy time as a counter is
/// [`CgroupTotals`]'s. `None` for every cgroup where no row carries GPU
/// figures; a cgroup none of whose processes is in the table sums to
/// zero.
pub fn gpu_sums(procs: &[proctable::Proc], cgroups: &[&Cgroup]) -> Vec<Option<proctable::Gpu>> {
    if procs.iter().all(|p| p.gpu.is_none()) {
        return vec![None; cgroups.len()];
    }
    // Each cgroup's own processes first.
    let mut own: HashMap<u64, proctable::Gpu> = HashMap::new();
    for p in procs {
        if let (Some(g), Some(id)) = (p.gpu, p.cgroup_id)
            && g != proctable::Gpu::default()
        {
            add_gpu(own.entry(id).or_default(), &g);
        }
    }
    roll_up(cgroups, &own, add_gpu)
        .into_iter()
        .map(Some)
        .collect()
}

impl CgroupRates {
    /// `cur`'s figures, and its rates since `prev` (the same cgroup in the
    /// sample `secs` earlier: the same id, else no rates).
    pub fn between(prev: Option<&Cgroup>, cur: &Cgroup, secs: f64) -> CgroupRates {
        let prev = prev.filter(|p| p.id == cur.id);
        let now = |f: Figure| cur.figures.get(f);
        let per_sec = |f: Figure| rate(prev?.figures.get(f)?, now(f)?, secs);
        let over = |f: Figure| delta(prev?.figures.get(f)?, now(f)?);
        // Nanoseconds (or microseconds) of a counter per second of wall
        // time, as a percentage.
        let pct_ns = |f: Figure| per_sec(f).map(|r| r / 1e7);
        let pct_us = |f: Figure| per_sec(f).map(|r| r / 1e4);
        let throttled_periods_pct =
            match (over(Figure::CpuThrottledPeriods), over(Figure::CpuPeriods)) {
                (Some(t), Some(p)) if p > 0 => Some(t as f64 * 100.0 / p as f64),
                _ => None,
            };
        let memory_bytes = now(Figure::MemoryBytes);
        CgroupRates {
            path: cur.path.clone(),
            id: cur.id,
            depth: cur.depth,
            cpu_pct: pct_ns(Figure::CpuUsageNs),
            cpu_user_pct: pct_ns(Figure::CpuUserNs),
            cpu_system_pct: pct_ns(Figure::CpuSystemNs),
            throttled_periods_pct,
            memory_bytes,
            working_set_bytes: working_set_bytes(&cur.figures),
            memory_anon_bytes: now(Figure::MemoryAnonBytes),
            memory_file_bytes: now(Figure::MemoryFileBytes),
            memory_max_bytes: now(Figure::MemoryMaxBytes),
            page_faults_per_sec: per_sec(Figure::PageFaults),
            major_page_faults_per_sec: per_sec(Figure::MajorPageFaults),
            oom_kills: over(Figure::OomKills),
            io_read_bytes_per_sec: per_sec(Figure::IoReadBytes),
            io_write_bytes_per_sec: per_sec(Figure::IoWriteBytes),
            io_reads_per_sec: per_sec(Figure::IoReads),
            io_writes_per_sec: per_sec(Figure::IoWrites),
            pids: now(Figure::Pids),
            cpu_some_pct: pct_us(Figure::CpuSomeUs),
            memory_some_pct: pct_us(Figure::MemorySomeUs),
            memory_full_pct: pct_us(Figure::MemoryFullUs),
            io_some_pct: pct_us(Figure::IoSomeUs),
            io_full_pct: pct_us(Figure::IoFullUs),
        }
    }
}

/// What cgroups are ranked by (`quietstat cgroups --sort`, `report
/// --source cgroup --sort`, `top`'s cgroup view): the largest first, by
/// path in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sort {
    Cpu,
    Memory,
    /// Bytes read and written a second.
    Io,
    Pids,
    Path,
}

impl Sort {
    pub const ALL: [Sort; 5] = [Sort::Cpu, Sort::Memory, Sort::Io, Sort::Pids, Sort::Path];

    pub fn name(self) -> &'static str {
        match self {
            Sort::Cpu => "cpu",
            Sort::Memory => "memory",
            Sort::Io => "io",
            Sort::Pids => "pids",
            Sort::Path => "path",
        }
    }

    pub fn parse(s: &str) -> Result<Sort, Error> {
        Sort::ALL
            .into_iter()
            .find(|x| x.name() == s)
            .ok_or_else(|| {
                Error::invalid(format!(
                    "cgroups are sorted by cpu, memory, io, pids or path, not {s:?}"
                ))
            })
    }

    /// `r`'s rank: larger first; -1 without the figure (after a 0), 0 for
    /// every cgroup by path.
    pub fn key(self, r: &CgroupRates) -> f64 {
        match self {
            Sort::Cpu => r.cpu_pct.unwrap_or(-1.0),
            Sort::Memory => r.memory_bytes.map_or(-1.0, |v| v as f64),
            Sort::Io => match (r.io_read_bytes_per_sec, r.io_write_bytes_per_sec) {
                (None, None) => -1.0,
                (a, b) => a.unwrap_or(0.0) + b.unwrap_or(0.0),
            },
            Sort::Pids => r.pids.map_or(-1.0, |v| v as f64),
            Sort::Path => 0.0,
        }
    }

    /// Orders `rows` by it: the largest first, ties (and [`Sort::Path`])
    /// by path.
    pub fn order(self, rows: &mut [CgroupRates]) {
        rows.sort_by(|a, b| {
            self.key(b)
                .total_cmp(&self.key(a))
                .then_with(|| a.path.cmp(&b.path))
        });
    }
}

/// Every cgroup of `cur`, in its order, with its rates since `prev` (none
/// for a first sample, or a cgroup new since).
pub fn between(prev: Option<&Sample>, cur: &Sample) -> Vec<CgroupRates> {
    let secs = prev.map_or(0.0, |p| cur.mono_ns.saturating_sub(p.mono_ns) as f64 / 1e9);
    let before: HashMap<&str, &Cgroup> = prev
        .map(|p| p.cgroups.iter().map(|c| (&*c.path, c)).collect())
        .unwrap_or_default();
    cur.cgroups
        .iter()
        .map(|c| CgroupRates::between(before.get(&*c.path).copied(), c, secs))
        .collect()
}

/// The container and pod a cgroup's path names, as container runtimes and
/// the kubelet name their cgroups (no runtime is asked): a container's
/// scope (`docker-ID.scope`, `cri-containerd-ID.scope`, `crio-ID.scope`,
/// `libpod-ID.scope`, or a bare 64-hex-digit directory under cgroupfs
/// drivers) and a pod's (`kubepods-...-podUID.slice` under systemd,
/// `podUID` under `kubepods/`). A container's cgroups below its scope
/// carry its ids too.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ContainerIds {
    /// As Kubernetes writes it in a pod's status (`containerd://ID`,
    /// `cri-o://ID`, `docker://ID`; `podman://ID`), the bare ID when the
    /// path does not say the runtime.
    pub container_id: Option<String>,
    /// The pod's UID, with dashes.
    pub pod_uid: Option<String>,
}

/// A container's ID: 64 lowercase hexadecimal digits.
fn is_container_hex(s: &str) -> bool {
    s.len() == 64
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// A pod UID as written in a cgroup name (dashes, or underscores under
/// systemd), with dashes.
fn pod_uid(s: &str) -> Option<String> {
    let uid = s.replace('_', "-");
    let groups: Vec<&str> = uid.split('-').collect();
    let shape = [8, 4, 4, 4, 12];
    (groups.len() == 5
        && groups
            .iter()
            .zip(shape)
            .all(|(g, n)| g.len() == n && g.bytes().all(|b| b.is_ascii_hexdigit())))
    .then_some(uid)
}

/// The ids a cgroup's `path` names ([`ContainerIds`]).
pub fn container_ids(path: &str) -> ContainerIds {
    let mut ids = ContainerIds::default();
    let mut parent = "";
    let mut kubepods = false;
    for part in path.split('/').filter(|p| !p.is_empty()) {
        kubepods |= part.starts_with("kubepods");
        if let Some(slice) = part.strip_suffix(".slice")
            && slice.starts_with("kubepods")
            && let Some((_, uid)) = slice.rsplit_once("-pod")
            && let Some(uid) = pod_uid(uid)
        {
            ids.pod_uid = Some(uid);
        } else if kubepods && let Some(uid) = part.strip_prefix("pod").and_then(pod_uid) {
            ids.pod_uid = Some(uid);
        } else if ids.container_id.is_none() {
            let scoped = part.strip_suffix(".scope").and_then(|scope| {
                [
                    ("cri-containerd-", "containerd://"),
                    ("crio-", "cri-o://"),
                    ("docker-", "docker://"),
                    ("libpod-", "podman://"),
                ]
                .into_iter()
                .find_map(|(prefix, scheme)| {
                    let id = scope.strip_prefix(prefix)?;
                    is_container_hex(id).then(|| format!("{scheme}{id}"))
                })
            });
            ids.container_id = scoped.or_else(|| {
                is_container_hex(part).then(|| match parent {
                    "docker" => format!("docker://{part}"),
                    _ => part.to_string(),
                })
            });
        }
        parent = part;
    }
    ids
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gpu_sums_roll_processes_up_their_cgroups() {
        let cg = |path: &str, id: u64| Cgroup {
            path: path.into(),
            id,
            depth: path.matches('/').count() as u16 - u16::from(path == "/"),
            figures: cgroups::Figures::default(),
        };
        let cgroups = [
            cg("/", 1),
            cg("/a", 2),
            cg("/a/b", 3),
            cg("/ab", 4),
            cg("/c", 5),
        ];
        let p = |pid: u32, cgroup: u64, busy: u64| proctable::Proc {
            pid,
            tgid: pid,
            cgroup_id: Some(cgroup),
            gpu: Some(proctable::Gpu {
                busy_ns: busy,
                mem_bytes: busy * 10,
                clients: u32::from(busy > 0),
            }),
            ..proctable::Proc::default()
        };
        let procs = [p(10, 2, 1), p(11, 3, 2), p(12, 4, 4), p(13, 5, 0)];
        let cgroups: Vec<&Cgroup> = cgroups.iter().collect();
        let busy: Vec<u64> = gpu_sums(&procs, &cgroups)
            .iter()
            .map(|g| g.unwrap().busy_ns)
            .collect();
        // "/ab" is not below "/a".
        assert_eq!(busy, [7, 3, 2, 4, 0]);
        assert_eq!(gpu_sums(&procs, &cgroups)[1].unwrap().clients, 2);
        let unread: Vec<proctable::Proc> = procs
            .iter()
            .map(|p| proctable::Proc { gpu: None, ..*p })
            .collect();
        assert!(gpu_sums(&unread, &cgroups).iter().all(Option::is_none));

        // As counters: a process that ends leaves its time with its
        // cgroup; one that grows adds the growth.
        let mut totals = CgroupTotals::default();
        let busy = |t: &CgroupTotals| -> Vec<u64> {
            t.sums(&cgroups).iter().map(|t| t.gpu_busy_ns).collect()
        };
        totals.update(&procs, None);
        assert_eq!(busy(&totals), [7, 3, 2, 4, 0]);
        let mut later = vec![p(11, 3, 5), p(12, 4, 4), p(14, 5, 9)];
        totals.update(&later, None);
        // 10 ended (its 1 kept in /a), 11 grew by 3, 14 is new in /c.
        assert_eq!(busy(&totals), [19, 6, 5, 4, 9]);
        // The same PID started again is another process: all of its time.
        later[0].start_ticks = 1;
        later[0].gpu = Some(proctable::Gpu {
            busy_ns: 1,
            ..proctable::Gpu::default()
        });
        totals.update(&later, None);
        assert_eq!(busy(&totals)[2], 6);
        // A cgroup not in the walk (made since) whose processes are in the
        // table keeps what they did: 14 grows by 2.
        let live: Vec<Cgroup> = cgroups
            .iter()
            .filter(|c| c.id != 5)
            .map(|c| (*c).clone())
            .collect();
        later[2].gpu = Some(proctable::Gpu {
            busy_ns: 11,
            ..proctable::Gpu::default()
        });
        totals.update(&later, Some(&live));
        assert_eq!(busy(&totals)[4], 11);
        // Gone from the walk with no process left in it: forgotten.
        later.truncate(2);
        totals.update(&later, Some(&live));
        assert_eq!(busy(&totals)[4], 0);
    }

    #[test]
    fn network_bytes_are_kept_by_cgroup_when_processes_end() {
        let cg = |path: &str, id: u64, depth: u16| Cgroup {
            path: path.into(),
            id,
            depth,
            figures: cgroups::Figures::default(),
        };
        let cgroups = [cg("/", 1, 0), cg("/web", 2, 1)];
        let cgroups: Vec<&Cgroup> = cgroups.iter().collect();
        let p = |pid: u32, cgroup: u64, rx: u64, tx: u64| proctable::Proc {
            pid,
            tgid: pid,
            cgroup_id: Some(cgroup),
            net: Some(proctable::NetBytes {
                rx_bytes: rx,
                tx_bytes: tx,
            }),
            ..proctable::Proc::default()
        };
        let mut totals = CgroupTotals::default();
        totals.update(&[p(10, 2, 100, 7), p(11, 1, 5, 0)], None);
        let net = |t: &CgroupTotals| -> Vec<(u64, u64)> {
            t.sums(&cgroups)
                .iter()
                .map(|t| (t.net_rx_bytes, t.net_tx_bytes))
                .collect()
        };
        assert_eq!(net(&totals), [(105, 7), (100, 7)]);
        // 10 ended; 12 started in /web; 11's figure fell (a figure read
        // short): nothing is taken back.
        totals.update(&[p(11, 1, 3, 0), p(12, 2, 50, 50)], None);
        assert_eq!(net(&totals), [(155, 57), (150, 57)]);
        // No GPU figures read: none summed.
        assert!(totals.sums(&cgroups).iter().all(|t| t.gpu_busy_ns == 0));
    }

    const HEX: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

    #[test]
    fn cgroups_rank_largest_first_those_without_the_figure_last_ties_by_path() {
        let r = |path: &str, cpu: Option<f64>, pids: Option<u64>| CgroupRates {
            path: path.into(),
            cpu_pct: cpu,
            pids,
            ..CgroupRates::default()
        };
        let mut rows = vec![
            r("/c", None, Some(1)),
            r("/b", Some(0.0), None),
            r("/a", Some(0.0), Some(9)),
            r("/d", Some(50.0), Some(0)),
        ];
        let paths =
            |rows: &[CgroupRates]| rows.iter().map(|r| r.path.to_string()).collect::<Vec<_>>();
        Sort::Cpu.order(&mut rows);
        assert_eq!(paths(&rows), ["/d", "/a", "/b", "/c"]);
        Sort::Pids.order(&mut rows);
        assert_eq!(paths(&rows), ["/a", "/c", "/d", "/b"]);
        Sort::parse("path").unwrap().order(&mut rows);
        assert_eq!(paths(&rows), ["/a", "/b", "/c", "/d"]);
        for s in Sort::ALL {
            assert_eq!(Sort::parse(s.name()), Ok(s));
        }
        assert!(
            Sort::parse("rss")
                .unwrap_err()
                .to_string()
                .contains("cpu, memory, io, pids or path")
        );
    }

    #[test]
    fn container_and_pod_ids_from_the_paths_runtimes_write() {
        let uid = "1b2c3d4e-5f60-7182-93a4-b5c6d7e8f901";
        let sd_uid = uid.replace('-', "_");
        let cases = [
            // systemd driver: kubelet and containerd, CRI-O.
            (
                format!(
                    "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod{sd_uid}.slice/cri-containerd-{HEX}.scope"
                ),
                Some(format!("containerd://{HEX}")),
                Some(uid),
            ),
            (
                format!("/kubepods.slice/kubepods-pod{sd_uid}.slice/crio-{HEX}.scope"),
                Some(format!("cri-o://{HEX}")),
                Some(uid),
            ),
            // The pod's own cgroup, and a cgroup inside a container.
            (
                format!(
                    "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod{sd_uid}.slice"
                ),
                None,
                Some(uid),
            ),
            (
                format!("/system.slice/docker-{HEX}.scope/init.scope"),
                Some(format!("docker://{HEX}")),
                None,
            ),
            (
                format!("/machine.slice/libpod-{HEX}.scope"),
                Some(format!("podman://{HEX}")),
                None,
            ),
            // cgroupfs driver.
            (
                format!("/kubepods/burstable/pod{uid}/{HEX}"),
                Some(HEX.to_string()),
                Some(uid),
            ),
            (
                format!("/docker/{HEX}"),
                Some(format!("docker://{HEX}")),
                None,
            ),
            // Not containers: conmon's scope, a short id, a slice named pod.
            (
                format!("/machine.slice/crio-conmon-{HEX}.scope"),
                None,
                None,
            ),
            ("/system.slice/docker-abc.scope".to_string(), None, None),
            (format!("/user.slice/pod{uid}"), None, None),
            ("/".to_string(), None, None),
            ("/system.slice/sshd.service".to_string(), None, None),
        ];
        for (path, container, pod) in cases {
            let ids = container_ids(&path);
            assert_eq!(ids.container_id, container, "{path}");
            assert_eq!(ids.pod_uid.as_deref(), pod, "{path}");
        }
    }
    use cgroups::Figures;

    fn cg(path: &str, id: u64, set: &[(Figure, u64)]) -> Cgroup {
        let mut figures = Figures::default();
        for (f, v) in set {
            figures.set(*f, *v);
        }
        Cgroup {
            path: Arc::from(path),
            id,
            depth: 1,
            figures,
        }
    }

    fn sample(mono_s: u64, cgroups: Vec<Cgroup>) -> Sample {
        Sample {
            mono_ns: mono_s * 1_000_000_000,
            cgroups,
            ..Sample::default()
        }
    }

    #[test]
    fn rates_over_two_samples_as_shares_of_a_cpu_and_of_the_interval() {
        use Figure::*;
        let a = sample(
            10,
            vec![cg(
                "/a",
                7,
                &[
                    (CpuUsageNs, 1_000_000_000),
                    (CpuUserNs, 600_000_000),
                    (CpuPeriods, 100),
                    (CpuThrottledPeriods, 10),
                    (IoReadBytes, 4096),
                    (MemorySomeUs, 0),
                    (OomKills, 1),
                ],
            )],
        );
        let b = sample(
            12,
            vec![cg(
                "/a",
                7,
                &[
                    (CpuUsageNs, 4_000_000_000),
                    (CpuUserNs, 2_600_000_000),
                    (CpuPeriods, 120),
                    (CpuThrottledPeriods, 15),
                    (IoReadBytes, 4096 + 2 * 8192),
                    (MemorySomeUs, 500_000),
                    (OomKills, 2),
                    (MemoryBytes, 1000),
                    (MemoryInactiveFileBytes, 300),
                ],
            )],
        );
        let r = &between(Some(&a), &b)[0];
        assert_eq!(r.cpu_pct, Some(150.0), "3 s of CPU in 2 s");
        assert_eq!(r.cpu_user_pct, Some(100.0));
        assert_eq!(r.throttled_periods_pct, Some(25.0));
        assert_eq!(r.io_read_bytes_per_sec, Some(8192.0));
        assert_eq!(r.memory_some_pct, Some(25.0));
        assert_eq!(r.oom_kills, Some(1));
        assert_eq!(r.working_set_bytes, Some(700));
        assert_eq!(r.cpu_system_pct, None, "not read");
    }

    #[test]
    fn no_rates_for_a_first_sample_a_cgroup_made_again_or_a_counter_gone_back() {
        use Figure::*;
        let a = sample(
            10,
            vec![
                cg("/a", 7, &[(CpuUsageNs, 50)]),
                cg("/b", 8, &[(CpuUsageNs, 50)]),
            ],
        );
        let b = sample(
            11,
            vec![
                cg("/a", 9, &[(CpuUsageNs, 100), (MemoryBytes, 5)]),
                cg("/b", 8, &[(CpuUsageNs, 10)]),
                cg("/c", 10, &[(CpuUsageNs, 10)]),
            ],
        );
        let r = between(Some(&a), &b);
        assert_eq!(
            r.iter().map(|r| r.cpu_pct).collect::<Vec<_>>(),
            [None, None, None]
        );
        assert_eq!(
            r[0].memory_bytes,
            Some(5),
            "figures without rates still shown"
        );
        assert_eq!(between(None, &b)[0].cpu_pct, None);
        assert_eq!(between(Some(&b), &b)[0].cpu_pct, None, "no time passed");
    }
}
