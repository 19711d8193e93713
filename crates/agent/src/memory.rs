//! The agent's memory ceiling (`max_rss`) and what it sheds near it.
//!
//! The ceiling is chosen from the machine unless set ([`auto_ceiling`]):
//! three quarters of the tightest memory limit on the agent's own cgroup
//! and its ancestors (v2 `memory.max`, v1 `memory.limit_in_bytes`), the
//! rest left for what the kernel charges there besides the agent's heap
//! (page cache of its files, BPF maps, socket buffers); without a limit,
//! 1/16 of the machine's memory, between 256 MiB and 4 GiB.
//!
//! The figure held against it is the memory only the OOM killer can take
//! back: anonymous plus shared-memory pages (`RssAnon + RssShmem`), or,
//! in a cgroup of its own, what the cgroup is charged beyond the page
//! cache the kernel can drop (its kernel memory counted: BPF maps,
//! dentries), whichever is more; not the file pages of its binary. It is
//! read at each process-table read (no wakeup of its own). Above nine tenths of the ceiling the
//! [`Governor`] sheds, in this order of cost to the user:
//!
//! 1. per-process rows: the table keeps the processes using the most
//!    memory, up to a cap halved at each read still above the line;
//! 2. cgroups below a depth (the walk's depth lowered by one a read, to
//!    1 at least);
//! 3. textfile files past the directory's first megabyte (in name order;
//!    about 10,000 series).
//!
//! Below six tenths, each cap is raised by a quarter a read until it no
//! longer binds, then lifted. Each shed item is counted
//! (`quietstat_agent_shed_total`); the start and the end of shedding are
//! logged once each.

use std::path::Path;

/// Rows of the process table kept at least, however tight the ceiling.
pub const MIN_ROWS: usize = 512;
/// What a process costs the agent, all its copies together (the table,
/// the history's and the view's, the walk's rows): 1.23 KiB measured
/// from 8,000 to 64,000 idle processes (`bench agent`), rounded up.
pub const BYTES_PER_PROCESS: u64 = 1280;
/// What the kernel charges the agent's cgroup for a process new to it:
/// the inodes and dentries of `/proc/PID` and of the two files under it
/// the history's writer reads for the process's identity (its start time,
/// to check the PID, and its command line). Reclaimable, but charged at
/// once, in one burst at the first flush for every row kept: 11.5 MB for
/// 5,121 new processes (`memory.kmem.usage_in_bytes`), 2.25 KiB each.
/// Counted with [`BYTES_PER_PROCESS`] before the first table.
pub const KERNEL_BYTES_PER_NEW_PROCESS: u64 = 2304;
/// The exit ring buffer's size under a ceiling of `ceiling` bytes: its
/// pages are kernel memory charged to the agent's cgroup whatever the
/// exits, so a sixteenth of the ceiling, 4 MiB at most (made a power of
/// two no larger by the process table: 1 MiB under 30 MiB, about 8,700
/// exits between two drains).
pub fn exit_ring_bytes_for(ceiling: u64) -> u64 {
    (ceiling / 16).min(4 << 20)
}

/// Bytes of the textfile directory read while shedding.
pub const SHED_TEXTFILE_BYTES: usize = 1 << 20;
/// The ceiling without a memory limit: 1/16 of the machine, within these
/// (a parse of a large textfile directory takes hundreds of megabytes for
/// a moment: not what a ceiling without a limit should shed for).
const AUTO_MIN: u64 = 256 << 20;
const AUTO_MAX: u64 = 4 << 30;

/// A ceiling chosen from the machine, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Auto {
    pub bytes: u64,
    pub why: String,
}

/// The ceiling for an agent in `own_cgroups` (the lines of
/// `/proc/self/cgroup`) on a machine of `mem_total` bytes, its cgroup
/// files under `cgroup_root` (`/sys/fs/cgroup`).
pub fn auto_ceiling_of(cgroup_root: &Path, own_cgroups: &str, mem_total: u64) -> Auto {
    match tightest_limit(cgroup_root, own_cgroups) {
        Some((limit, file)) => Auto {
            bytes: (limit / 4 * 3).max(1 << 20),
            why: format!("three quarters of the {} limit of {file}", mib(limit)),
        },
        None => Auto {
            bytes: (mem_total / 16).clamp(AUTO_MIN, AUTO_MAX),
            why: format!(
                "1/16 of this machine's {}, between 256 MiB and 4 GiB (no memory limit on the agent's cgroup)",
                mib(mem_total)
            ),
        },
    }
}

/// [`auto_ceiling_of`] for this process on this machine.
pub fn auto_ceiling() -> Auto {
    let own = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
    let mem_total = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            let line = m.lines().find(|l| l.starts_with("MemTotal:"))?;
            line.split_whitespace().nth(1)?.parse::<u64>().ok()
        })
        .map_or(0, |kib| kib << 10);
    auto_ceiling_of(Path::new("/sys/fs/cgroup"), &own, mem_total)
}

/// The smallest memory limit set on the agent's cgroup or an ancestor,
/// and the file that sets it.
fn tightest_limit(root: &Path, own_cgroups: &str) -> Option<(u64, String)> {
    let mut best: Option<(u64, String)> = None;
    for line in own_cgroups.lines() {
        let mut f = line.splitn(3, ':');
        let (_, controllers, path) = (f.next()?, f.next()?, f.next()?);
        let candidates: Vec<(std::path::PathBuf, &str)> = if controllers.is_empty() {
            // v2: the unified hierarchy, wherever it is mounted here.
            ["", "unified"]
                .iter()
                .map(|m| (root.join(m), "memory.max"))
                .collect()
        } else if controllers.split(',').any(|c| c == "memory") {
            vec![(root.join("memory"), "memory.limit_in_bytes")]
        } else {
            continue;
        };
        for (mount, file) in candidates {
            if !mount.join(file).exists() && !mount.join("cgroup.controllers").exists() {
                continue;
            }
            let mut dir = mount.join(path.trim_start_matches('/'));
            loop {
                let at = dir.join(file);
                if let Some(limit) = std::fs::read_to_string(&at)
                    .ok()
                    .and_then(|v| v.trim().parse::<u64>().ok())
                    // v1 writes "no limit" as the largest page-aligned i64.
                    .filter(|l| *l < 1 << 62)
                    && best.as_ref().is_none_or(|(b, _)| limit < *b)
                {
                    best = Some((limit, at.display().to_string()));
                }
                if dir == mount || !dir.pop() || !dir.starts_with(&mount) {
                    break;
                }
            }
        }
    }
    best
}

/// `n` bytes in MiB, as logs say it.
pub fn mib(n: u64) -> String {
    if n >= 10 << 30 {
        format!("{:.0} GiB", n as f64 / (1u64 << 30) as f64)
    } else {
        format!("{:.1} MiB", n as f64 / (1u64 << 20) as f64)
    }
}

/// The memory the ceiling is held against: the agent's anonymous and
/// shared-memory pages (`RssAnon + RssShmem` of /proc/self/status), or,
/// when it has a cgroup of its own, what that cgroup is charged beyond
/// its page cache (the kernel's memory for it counted too: its BPF maps,
/// the dentries of what it read; 20 MB of the 40 a cgroup was charged
/// when the OOM killer took an agent whose RSS was 16), whichever is more.
pub fn charged_now(own: Option<&OwnCgroup>) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let rss = charged_of(&status)?;
    Some(rss.max(own.and_then(OwnCgroup::unreclaimable).unwrap_or(0)))
}

/// The agent's own memory cgroup (not the root: that is the machine's).
#[derive(Debug, Clone)]
pub struct OwnCgroup {
    dir: std::path::PathBuf,
    v2: bool,
}

impl OwnCgroup {
    /// From `/proc/self/cgroup`: the v1 memory hierarchy's directory, else
    /// the v2 one's when it has `memory.current`.
    pub fn find() -> Option<OwnCgroup> {
        let own = std::fs::read_to_string("/proc/self/cgroup").ok()?;
        OwnCgroup::find_in(Path::new("/sys/fs/cgroup"), &own)
    }

    fn find_in(root: &Path, own: &str) -> Option<OwnCgroup> {
        let mut v2 = None;
        for line in own.lines() {
            let mut f = line.splitn(3, ':');
            let (_, controllers, path) = (f.next()?, f.next()?, f.next()?);
            if path == "/" {
                continue;
            }
            let rel = path.trim_start_matches('/');
            if controllers.split(',').any(|c| c == "memory") {
                let dir = root.join("memory").join(rel);
                if dir.join("memory.usage_in_bytes").exists() {
                    return Some(OwnCgroup { dir, v2: false });
                }
            } else if controllers.is_empty() {
                v2 = ["", "unified"]
                    .iter()
                    .map(|m| root.join(m).join(rel))
                    .find(|d| d.join("memory.current").exists())
                    .map(|dir| OwnCgroup { dir, v2: true });
            }
        }
        v2
    }

    /// What the cgroup is charged beyond its page cache that is not
    /// shared memory (file pages the kernel can drop).
    pub fn unreclaimable(&self) -> Option<u64> {
        let read = |f: &str| std::fs::read_to_string(self.dir.join(f)).ok();
        let usage: u64 = read(if self.v2 {
            "memory.current"
        } else {
            "memory.usage_in_bytes"
        })?
        .trim()
        .parse()
        .ok()?;
        let stat = read("memory.stat")?;
        let get = |k: &str| stat_value(&stat, k).unwrap_or(0);
        let cache = get(if self.v2 { "file" } else { "cache" });
        Some(usage.saturating_sub(cache.saturating_sub(get("shmem"))))
    }
}

/// The figure of `key` in a cgroup's `memory.stat` text (`key value`
/// lines, v1 and v2 alike).
pub fn stat_value(stat: &str, key: &str) -> Option<u64> {
    stat.lines()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix(' ')?.trim().parse().ok())
}

fn charged_of(status: &str) -> Option<u64> {
    let kib = |key: &str| -> Option<u64> {
        let line = status.lines().find(|l| l.starts_with(key))?;
        line[key.len()..].split_whitespace().next()?.parse().ok()
    };
    Some((kib("RssAnon:")? + kib("RssShmem:").unwrap_or(0)) << 10)
}

/// What the agent keeps, as the governor last set it (`None`: no cap).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Caps {
    pub rows: Option<usize>,
    pub cgroup_depth: Option<u16>,
    pub textfile_bytes: Option<usize>,
}

impl Caps {
    pub fn any(&self) -> bool {
        *self != Caps::default()
    }
}

/// Counters of what was shed, since the agent started.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Shed {
    /// Process rows left out of tables, summed over tables.
    pub rows: u64,
    /// Cgroups left out of walks while their depth was capped, summed
    /// over walks.
    pub cgroups: u64,
    /// Textfile files refused, summed over the directory's reads.
    pub textfile_files: u64,
}

/// The memory figures the exporter serves.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MemoryStats {
    pub ceiling: u64,
    /// The last figure held against the ceiling.
    pub charged: u64,
    pub caps: Caps,
    pub shed: Shed,
    /// Times shedding began.
    pub episodes: u64,
}

/// Holds the agent's memory under its ceiling by what it keeps.
#[derive(Debug)]
pub struct Governor {
    pub stats: MemoryStats,
    /// The depth walks reached when not capped.
    full_depth: u16,
}

/// What a check changed, for the log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    Began(String),
    Ended(String),
}

impl Governor {
    pub fn new(ceiling: u64) -> Governor {
        Governor {
            stats: MemoryStats {
                ceiling,
                ..MemoryStats::default()
            },
            full_depth: 0,
        }
    }

    pub fn caps(&self) -> Caps {
        self.stats.caps
    }

    /// Before the first table: when `tasks` processes (threads counted:
    /// an overestimate) would take more than half the ceiling at
    /// [`BYTES_PER_PROCESS`] and [`KERNEL_BYTES_PER_NEW_PROCESS`] each, the rows are capped from the start, so that
    /// the first table is not the one that meets the OOM killer. The
    /// governor raises the cap later while there is room.
    pub fn before_first_table(&mut self, tasks: u64) -> Option<Change> {
        let each = BYTES_PER_PROCESS + KERNEL_BYTES_PER_NEW_PROCESS;
        let fit = (self.stats.ceiling / 2 / each) as usize;
        let tasks = usize::try_from(tasks).unwrap_or(usize::MAX);
        if tasks <= fit {
            return None;
        }
        let cap = fit.max(MIN_ROWS);
        self.stats.caps.rows = Some(cap);
        self.stats.episodes += 1;
        Some(Change::Began(format!(
            "memory: {tasks} tasks would take more than half the {} ceiling (max_rss) at {each} bytes a process ({BYTES_PER_PROCESS} the agent's, {KERNEL_BYTES_PER_NEW_PROCESS} the kernel's for its /proc entries): shedding from the start, keeping {cap} processes' rows (those using the most memory), counted in quietstat_agent_shed_total",
            mib(self.stats.ceiling)
        )))
    }

    /// After a process-table read: `charged` bytes resident with `rows`
    /// processes in the table and cgroups walked to `depth` (the deepest
    /// level the last walk found). Sets the caps the next reads keep.
    pub fn check(&mut self, charged: u64, rows: usize, depth: u16) -> Option<Change> {
        let s = &mut self.stats;
        s.charged = charged;
        if s.caps.cgroup_depth.is_none() {
            self.full_depth = depth;
        }
        let full_depth = self.full_depth;
        let high = s.ceiling / 10 * 9;
        let low = s.ceiling / 10 * 6;
        let was = s.caps.any();
        if charged >= high {
            let c = &mut s.caps;
            c.rows = Some(c.rows.unwrap_or(rows).min(rows).div_ceil(2).max(MIN_ROWS));
            c.cgroup_depth = Some(
                c.cgroup_depth
                    .unwrap_or(depth)
                    .min(depth)
                    .saturating_sub(1)
                    .max(1),
            );
            c.textfile_bytes = Some(SHED_TEXTFILE_BYTES);
            if !was {
                s.episodes += 1;
                return said(
                    s.episodes,
                    Change::Began(format!(
                        "memory: {} resident (anonymous and shared) of the {} ceiling (max_rss): shedding, and counting what is shed in quietstat_agent_shed_total: keeping {} of {rows} processes' rows (those using the most memory), cgroups {} levels deep at most, the textfile directory's first {} KiB",
                        mib(charged),
                        mib(s.ceiling),
                        c.rows.unwrap_or(rows),
                        c.cgroup_depth.unwrap_or(depth),
                        SHED_TEXTFILE_BYTES >> 10,
                    )),
                );
            }
        } else if charged < low && was {
            let c = &mut s.caps;
            // Each cap raised by a quarter; lifted once it does not bind.
            c.rows = c.rows.map(|r| r + r / 4).filter(|r| *r < rows);
            c.cgroup_depth = c.cgroup_depth.map(|d| d + 1).filter(|d| *d < full_depth);
            if c.rows.is_none() && c.cgroup_depth.is_none() {
                c.textfile_bytes = None;
                let ended = Change::Ended(format!(
                    "memory: {} resident of the {} ceiling: shedding ended, every process, cgroup and textfile file kept again",
                    mib(charged),
                    mib(s.ceiling)
                ));
                return said(s.episodes, ended);
            }
        }
        None
    }
}

/// What of a change in episode `episodes` is logged: the first episode's
/// start and end, and the second's start, saying that the later ones are
/// only counted.
fn said(episodes: u64, c: Change) -> Option<Change> {
    match (episodes, c) {
        (1, c) => Some(c),
        (2, Change::Began(m)) => Some(Change::Began(format!(
            "{m} (again: from now on counted in quietstat_agent_shed_episodes_total, not logged)"
        ))),
        _ => None,
    }
}

/// Keeps the `cap` rows of `procs` with the most resident memory (in
/// PID order, as they came); returns how many were left out.
pub fn keep_largest(procs: &mut Vec<proctable::Proc>, cap: usize) -> usize {
    let shed = proctable::keep_largest_by(procs, cap, |p| p.rss_bytes);
    if shed > 0 {
        procs.shrink_to(cap);
    }
    shed
}

/// The RSS below which the next table's processes are left out before
/// they are built, after one that kept `kept` under a cap of `cap` rows
/// with `floor` in force: the least resident of those kept when the cap
/// was filled (the next table then holds about as many), half of `floor`
/// when fewer than three quarters of the cap passed it (processes shrank
/// or went), else `floor`.
pub fn next_floor(kept: &[proctable::Proc], cap: usize, floor: u64) -> u64 {
    if kept.len() >= cap {
        kept.iter().map(|p| p.rss_bytes).min().unwrap_or(0)
    } else if kept.len() < cap / 4 * 3 {
        floor / 2
    } else {
        floor
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_exit_ring_is_a_sixteenth_of_the_ceiling_and_the_kernel_takes_a_power_of_two_no_larger() {
        assert_eq!(exit_ring_bytes_for(30 << 20), (30 << 20) / 16);
        assert_eq!(
            proctable::bpf::exit_ring_bytes(exit_ring_bytes_for(30 << 20)),
            1 << 20
        );
        assert_eq!(exit_ring_bytes_for(1 << 30), 4 << 20);
        assert_eq!(
            proctable::bpf::exit_ring_bytes(exit_ring_bytes_for(1 << 30)),
            4 << 20
        );
        // Never below a page, however small the ceiling.
        assert_eq!(
            proctable::bpf::exit_ring_bytes(exit_ring_bytes_for(1 << 20)),
            64 << 10
        );
        assert!(proctable::bpf::exit_ring_bytes(0) >= 4096);
    }

    fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        for (path, body) in files {
            let p = d.path().join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, body).unwrap();
        }
        d
    }

    #[test]
    fn without_a_limit_the_ceiling_is_a_16th_of_the_machine_within_its_bounds() {
        let d = tree(&[
            ("cgroup.controllers", "cpu memory\n"),
            ("memory.max", "max\n"),
        ]);
        let a = auto_ceiling_of(d.path(), "0::/\n", 24 << 30);
        assert_eq!(a.bytes, 1536 << 20);
        assert!(a.why.contains("1/16"), "{}", a.why);
        assert_eq!(
            auto_ceiling_of(d.path(), "0::/\n", 1 << 30).bytes,
            256 << 20
        );
        assert_eq!(auto_ceiling_of(d.path(), "0::/\n", 4 << 40).bytes, 4 << 30);
    }

    #[test]
    fn the_tightest_limit_of_the_cgroup_and_its_ancestors_sets_the_ceiling() {
        // v2: the service's own limit and a tighter one on its slice.
        let d = tree(&[
            ("cgroup.controllers", "memory\n"),
            ("system.slice/memory.max", "100663296\n"),
            ("system.slice/qs.service/memory.max", "max\n"),
        ]);
        let a = auto_ceiling_of(d.path(), "0::/system.slice/qs.service\n", 24 << 30);
        assert_eq!(a.bytes, 72 << 20);
        assert!(a.why.contains("system.slice/memory.max"), "{}", a.why);
        // v1: the memory controller's file, "no limit" ignored.
        let d = tree(&[
            ("memory/memory.limit_in_bytes", "9223372036854771712\n"),
            ("memory/qs/memory.limit_in_bytes", "67108864\n"),
            ("cpu/qs/cpu.shares", "1024\n"),
        ]);
        let own = "5:cpu,cpuacct:/qs\n4:memory:/qs\n0::/\n";
        let a = auto_ceiling_of(d.path(), own, 24 << 30);
        assert_eq!(a.bytes, 48 << 20);
        assert!(a.why.contains("memory.limit_in_bytes"), "{}", a.why);
    }

    #[test]
    fn the_own_cgroup_is_charged_beyond_its_droppable_page_cache() {
        let d = tree(&[
            ("memory/qs/memory.usage_in_bytes", "41943040\n"),
            (
                "memory/qs/memory.stat",
                "cache 8388608\nrss 16777216\nshmem 4194304\n",
            ),
        ]);
        let own = "5:cpu:/other\n4:memory:/qs\n0::/qs\n";
        let c = OwnCgroup::find_in(d.path(), own).unwrap();
        assert!(!c.v2);
        // 40 MiB charged, 8 MiB cache of which 4 shared memory: 36.
        assert_eq!(c.unreclaimable(), Some(36 << 20));
        // The root cgroup is the machine's, never the agent's own.
        assert!(OwnCgroup::find_in(d.path(), "4:memory:/\n").is_none());
        let d = tree(&[
            ("unified/svc/memory.current", "10485760\n"),
            (
                "unified/svc/memory.stat",
                "anon 2097152\nfile 6291456\nshmem 1048576\n",
            ),
        ]);
        let c = OwnCgroup::find_in(d.path(), "0::/svc\n").unwrap();
        assert!(c.v2);
        assert_eq!(c.unreclaimable(), Some(5 << 20));
    }

    #[test]
    fn the_charged_figure_is_anonymous_and_shared_memory() {
        let s = "Name:\tq\nRssAnon:\t    1000 kB\nRssFile:\t  9000 kB\nRssShmem:\t  24 kB\n";
        assert_eq!(charged_of(s), Some(1024 << 10));
        assert_eq!(charged_of("Name:\tkthread\n"), None);
    }

    #[test]
    fn shedding_begins_above_nine_tenths_halves_until_under_and_ends_below_six() {
        let mut g = Governor::new(100 << 20);
        assert_eq!(g.check(80 << 20, 30_000, 4), None);
        assert!(!g.caps().any());
        let began = g.check(95 << 20, 30_000, 4);
        assert!(matches!(began, Some(Change::Began(ref m)) if m.contains("15000 of 30000")));
        assert_eq!(g.caps().rows, Some(15_000));
        assert_eq!(g.caps().cgroup_depth, Some(3));
        assert_eq!(g.caps().textfile_bytes, Some(SHED_TEXTFILE_BYTES));
        // Still above: halved again, logged once.
        assert_eq!(g.check(92 << 20, 15_000, 3), None);
        assert_eq!(g.caps().rows, Some(7_500));
        assert_eq!(g.caps().cgroup_depth, Some(2));
        // Between the lines: held.
        assert_eq!(g.check(70 << 20, 7_500, 2), None);
        assert_eq!(g.caps().rows, Some(7_500));
        // Below: raised a quarter a read until it no longer binds (the
        // walks, capped, reach the cap only; the depth before is kept).
        assert_eq!(g.check(50 << 20, 30_000, 2), None);
        assert_eq!(g.caps().rows, Some(9_375));
        assert_eq!(g.caps().cgroup_depth, Some(3));
        for _ in 0..10 {
            if let Some(Change::Ended(_)) = g.check(50 << 20, 30_000, 3) {
                assert!(!g.caps().any());
                assert_eq!(g.stats.episodes, 1);
                return;
            }
        }
        panic!("shedding never ended: {:?}", g.caps());
    }

    #[test]
    fn a_machine_too_large_for_the_ceiling_is_capped_before_the_first_table() {
        let mut g = Governor::new(48 << 20);
        // 3,584 bytes a process, the kernel's /proc entries counted: half
        // of 48 MiB holds 7,021.
        assert_eq!(g.before_first_table(7_000), None);
        assert!(!g.caps().any());
        let c = g.before_first_table(64_000);
        assert!(
            matches!(c, Some(Change::Began(ref m)) if m.contains("keeping 7021")),
            "{c:?}"
        );
        assert_eq!(g.caps().rows, Some(7_021));
        // Room later: raised, then lifted.
        assert_eq!(g.check(10 << 20, 64_000, 2), None);
        assert_eq!(g.caps().rows, Some(8_776));
    }

    #[test]
    fn a_repeated_episode_is_logged_once_more_then_counted() {
        let mut g = Governor::new(100 << 20);
        let mut said = Vec::new();
        for _ in 0..5 {
            said.extend(g.check(95 << 20, 600, 2));
            for _ in 0..10 {
                said.extend(g.check(10 << 20, 600, 2));
            }
        }
        assert_eq!(g.stats.episodes, 5);
        assert_eq!(said.len(), 3, "{said:?}");
        assert!(matches!(&said[2], Change::Began(m) if m.contains("not logged")));
    }

    #[test]
    fn the_rows_cap_never_falls_below_its_floor() {
        let mut g = Governor::new(10 << 20);
        for _ in 0..20 {
            g.check(20 << 20, 2_000, 1);
        }
        assert_eq!(g.caps().rows, Some(MIN_ROWS));
        assert_eq!(g.caps().cgroup_depth, Some(1));
    }

    #[test]
    fn the_floor_follows_the_least_resident_row_kept_and_falls_when_too_few_pass() {
        let rows = |rss: &[u64]| -> Vec<proctable::Proc> {
            rss.iter()
                .map(|&rss_bytes| proctable::Proc {
                    rss_bytes,
                    ..Default::default()
                })
                .collect()
        };
        assert_eq!(next_floor(&rows(&[9, 5, 7, 6]), 4, 0), 5);
        assert_eq!(next_floor(&rows(&[9, 5, 7]), 4, 5), 5);
        assert_eq!(next_floor(&rows(&[9, 7]), 4, 6), 3);
        assert_eq!(next_floor(&rows(&[]), 4, 1), 0);
    }

    #[test]
    fn the_largest_processes_are_kept_in_their_order() {
        let mut procs: Vec<proctable::Proc> = (1..=10u32)
            .map(|pid| proctable::Proc {
                pid,
                rss_bytes: u64::from(pid % 4),
                ..Default::default()
            })
            .collect();
        let shed = keep_largest(&mut procs, 4);
        assert_eq!(shed, 6);
        let kept: Vec<u32> = procs.iter().map(|p| p.pid).collect();
        // rss 3: pids 3 and 7; rss 2: pids 2, 6 and 10, the first two kept.
        assert_eq!(kept, [2, 3, 6, 7]);
        assert_eq!(keep_largest(&mut procs, 10), 0);
    }
}
