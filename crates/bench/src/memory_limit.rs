//! `bench memory-limit`: the agent with its defaults and its history,
//! started inside a memory cgroup of its own with a tight limit, on a
//! machine of many idle processes and cgroups. What operators do (a
//! `MemoryLimit=` in the unit) and what once killed the agent before its
//! first scrape. Passes when the agent starts, answers every scrape with
//! node_exporter's families and is never OOM-killed; reports its peak
//! (the cgroup's own figure, start-up included), its ceiling and what it
//! shed.
//!
//! The limit is set on a v1 `memory` hierarchy (`memory.limit_in_bytes`)
//! or on the v2 one when it has the memory controller (`memory.max`); the
//! machine's cgroups are made in the v2 hierarchy (any, with or without
//! controllers), 100 a parent.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use exporter::metrics::Family;
use exporter::metrics::families::{
    NODE_CPU_SECONDS_TOTAL, NODE_FILESYSTEM_AVAIL_BYTES, NODE_LOAD1, NODE_MEMORY_BYTES,
    NODE_NETWORK_RECEIVE_TOTAL, NODE_PROCS_RUNNING, QUIETSTAT_AGENT_MEMORY_CEILING_BYTES,
    QUIETSTAT_AGENT_MEMORY_CHARGED_BYTES, QUIETSTAT_AGENT_SHED_TOTAL, QUIETSTAT_AGENT_SHEDDING,
};
use serde::Serialize;
use sys::Error;
use sys::child::{Guard, die_with_parent};

use crate::agent_cost::{free_port, get};
use crate::spawn::{Idle, PidMax};

pub struct Options {
    /// Idle processes started beside the agent (the machine's own count
    /// too, as the agent sees every one).
    pub processes: usize,
    /// Cgroups made in the v2 hierarchy.
    pub cgroups: usize,
    /// The agent's cgroup's memory limit, in bytes.
    pub limit: u64,
    /// How long it is scraped, once a second, after it first answers.
    pub duration: Duration,
    pub exe: PathBuf,
}

/// What one run found.
#[derive(Debug, Clone, Serialize)]
pub struct Outcome {
    pub processes: usize,
    pub cgroups: usize,
    pub limit_bytes: u64,
    /// The file that set the limit.
    pub limit_file: String,
    /// Seconds from start to the first answer with every family.
    pub first_answer_s: Option<f64>,
    pub scrapes: u32,
    /// Scrapes answered with every series of [`staples`].
    pub answered: u32,
    pub alive: bool,
    /// The OOM killer's kills in the agent's cgroup.
    pub oom_kills: u64,
    /// The cgroup's peak charge (start-up included), and at the end.
    pub peak_bytes: u64,
    pub end_bytes: u64,
    /// What the end's charge was made of (the cgroup's `memory.stat`:
    /// anonymous, page cache, of it shared memory; kernel memory).
    pub end_anon_bytes: u64,
    pub end_cache_bytes: u64,
    pub end_shmem_bytes: u64,
    pub end_kernel_bytes: u64,
    /// The agent's own figures at the last answer.
    pub ceiling_bytes: f64,
    pub charged_bytes: f64,
    pub shedding: f64,
    pub shed_rows: f64,
    pub shed_cgroups: f64,
    /// The agent's log lines about memory.
    pub log: Vec<String>,
}

impl Outcome {
    /// What failed, if anything.
    pub fn failures(&self) -> Vec<String> {
        let mut f = Vec::new();
        if !self.alive {
            f.push("the agent died".to_string());
        }
        if self.oom_kills > 0 {
            f.push(format!("{} OOM kills in its cgroup", self.oom_kills));
        }
        if self.first_answer_s.is_none() {
            f.push("no answer with node_exporter's families".to_string());
        } else if self.answered < self.scrapes {
            f.push(format!(
                "{} of {} scrapes answered with every family",
                self.answered, self.scrapes
            ));
        }
        f
    }
}

/// Series every answer must carry, node_exporter's staples: their names
/// as a scrape spells them.
pub fn staples() -> Vec<String> {
    let instance = |f: &Family, key: &str| {
        let mut b = String::new();
        f.instance_into(key, &mut b);
        b
    };
    vec![
        NODE_CPU_SECONDS_TOTAL.name.to_string(),
        instance(&NODE_MEMORY_BYTES, "MemTotal"),
        NODE_LOAD1.name.to_string(),
        NODE_FILESYSTEM_AVAIL_BYTES.name.to_string(),
        instance(&NODE_NETWORK_RECEIVE_TOTAL, "bytes"),
        NODE_PROCS_RUNNING.name.to_string(),
    ]
}

/// A memory cgroup of the agent's own, removed on drop (after the agent).
struct MemCgroup {
    dir: PathBuf,
    v2: bool,
}

impl MemCgroup {
    fn make(tag: &str, limit: u64) -> Result<MemCgroup, Error> {
        let v1 = Path::new("/sys/fs/cgroup/memory");
        let unified = ["/sys/fs/cgroup", "/sys/fs/cgroup/unified"]
            .iter()
            .map(Path::new)
            .find(|r| {
                std::fs::read_to_string(r.join("cgroup.subtree_control"))
                    .is_ok_and(|c| c.split_whitespace().any(|w| w == "memory"))
            });
        let (dir, v2, file) = if v1.join("memory.limit_in_bytes").exists() {
            (v1.join(tag), false, "memory.limit_in_bytes")
        } else if let Some(u) = unified {
            (u.join(tag), true, "memory.max")
        } else {
            return Err(Error::other(
                "no memory controller: neither /sys/fs/cgroup/memory (v1) nor a v2 hierarchy with memory in cgroup.subtree_control",
            ));
        };
        std::fs::create_dir(&dir).map_err(|e| Error::file(&dir, e))?;
        let cg = MemCgroup { dir, v2 };
        let at = cg.dir.join(file);
        std::fs::write(&at, limit.to_string()).map_err(|e| Error::file(&at, e))?;
        Ok(cg)
    }

    fn limit_file(&self) -> PathBuf {
        self.dir.join(if self.v2 {
            "memory.max"
        } else {
            "memory.limit_in_bytes"
        })
    }

    fn read_u64(&self, file: &str) -> u64 {
        std::fs::read_to_string(self.dir.join(file))
            .ok()
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0)
    }

    fn peak(&self) -> u64 {
        self.read_u64(if self.v2 {
            "memory.peak"
        } else {
            "memory.max_usage_in_bytes"
        })
    }

    fn now(&self) -> u64 {
        self.read_u64(if self.v2 {
            "memory.current"
        } else {
            "memory.usage_in_bytes"
        })
    }

    /// A `memory.stat` figure (the first of `keys` present).
    fn stat(&self, keys: &[&str]) -> u64 {
        let text = std::fs::read_to_string(self.dir.join("memory.stat")).unwrap_or_default();
        keys.iter()
            .find_map(|k| agent::memory::stat_value(&text, k))
            .unwrap_or(0)
    }

    /// Kernel memory charged: v2's `kernel` in memory.stat, v1's
    /// `memory.kmem.usage_in_bytes`.
    fn kernel(&self) -> u64 {
        if self.v2 {
            self.stat(&["kernel"])
        } else {
            self.read_u64("memory.kmem.usage_in_bytes")
        }
    }

    fn oom_kills(&self) -> u64 {
        let file = if self.v2 {
            "memory.events"
        } else {
            "memory.oom_control"
        };
        std::fs::read_to_string(self.dir.join(file))
            .unwrap_or_default()
            .lines()
            .find_map(|l| l.strip_prefix("oom_kill ")?.trim().parse().ok())
            .unwrap_or(0)
    }
}

impl Drop for MemCgroup {
    fn drop(&mut self) {
        // Emptied by the agent's exit; a few tries while it is reaped.
        for _ in 0..50 {
            if std::fs::remove_dir(&self.dir).is_ok() {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

/// `n` cgroups in the v2 hierarchy under `tag`, 100 a parent; removed on
/// drop, children first.
struct ManyCgroups {
    root: Option<PathBuf>,
    dirs: Vec<PathBuf>,
}

impl ManyCgroups {
    fn make(tag: &str, n: usize) -> Result<ManyCgroups, Error> {
        let mut m = ManyCgroups {
            root: None,
            dirs: Vec::with_capacity(n + n / 100 + 1),
        };
        if n == 0 {
            return Ok(m);
        }
        let root = ["/sys/fs/cgroup/unified", "/sys/fs/cgroup"]
            .iter()
            .map(Path::new)
            .find(|r| r.join("cgroup.controllers").exists())
            .ok_or_else(|| Error::other("no v2 cgroup hierarchy to make cgroups in"))?
            .join(tag);
        std::fs::create_dir(&root).map_err(|e| Error::file(&root, e))?;
        m.root = Some(root.clone());
        for i in 0..n {
            let parent = root.join(format!("p{}", i / 100));
            if i % 100 == 0 {
                std::fs::create_dir(&parent).map_err(|e| Error::file(&parent, e))?;
                m.dirs.push(parent.clone());
            }
            let d = parent.join(format!("c{}", i % 100));
            std::fs::create_dir(&d).map_err(|e| Error::file(&d, e))?;
            m.dirs.push(d);
        }
        Ok(m)
    }
}

impl Drop for ManyCgroups {
    fn drop(&mut self) {
        for d in self.dirs.iter().rev() {
            let _ = std::fs::remove_dir(d);
        }
        if let Some(r) = &self.root {
            let _ = std::fs::remove_dir(r);
        }
    }
}

/// One run: the load made, the agent started in its cgroup and scraped.
pub fn run(opts: &Options, progress: &mut dyn FnMut(&str)) -> Result<Outcome, Error> {
    let tag = format!("qs-memlimit-{}", std::process::id());
    let existing = std::fs::read_dir("/proc").map_or(0, |d| d.count());
    let spawn = opts.processes.saturating_sub(existing);
    let _pid_max = PidMax::room_for(spawn)?;
    progress(&format!("starting {spawn} idle processes"));
    let idle = Idle::start(spawn).map_err(|e| Error::io("starting idle processes", e))?;
    progress(&format!("making {} cgroups", opts.cgroups));
    let many = ManyCgroups::make(&tag, opts.cgroups)?;
    let cg = MemCgroup::make(&tag, opts.limit)?;
    let dir = std::env::temp_dir().join(&tag);
    std::fs::create_dir_all(&dir).map_err(|e| Error::file(&dir, e))?;
    let shm_dir = PathBuf::from(format!("/dev/shm/{tag}"));
    let log = dir.join("agent.log");
    let port = free_port()?;
    let mut cmd = crate::scale::recording_agent(
        &opts.exe,
        port,
        &shm_dir.join("snapshot"),
        &dir.join("store"),
    );
    cmd.stderr(std::fs::File::create(&log).map_err(|e| Error::file(&log, e))?)
        .stdin(Stdio::null());
    let procs = cg.dir.join("cgroup.procs");
    let procs_c = std::ffi::CString::new(procs.as_os_str().as_encoded_bytes())
        .map_err(|_| Error::other("a cgroup path with a NUL"))?;
    // SAFETY: in the child between fork and exec: open, write and close
    // are async-signal-safe, and the path was made before the fork.
    unsafe {
        cmd.pre_exec(move || {
            let fd = libc::open(procs_c.as_ptr(), libc::O_WRONLY);
            if fd < 0 {
                return Err(std::io::Error::last_os_error());
            }
            let ok = libc::write(fd, b"0".as_ptr().cast(), 1) == 1;
            libc::close(fd);
            if ok {
                Ok(())
            } else {
                Err(std::io::Error::last_os_error())
            }
        });
    }
    progress(&format!(
        "the agent in {} limited to {} MiB",
        cg.dir.display(),
        opts.limit >> 20
    ));
    let started = Instant::now();
    let mut agent = die_with_parent(&mut cmd)
        .spawn()
        .map(Guard)
        .map_err(|e| Error::io("starting the agent in its cgroup", e))?;
    let mut out = Outcome {
        processes: existing + idle.count(),
        cgroups: opts.cgroups,
        limit_bytes: opts.limit,
        limit_file: cg.limit_file().display().to_string(),
        first_answer_s: None,
        scrapes: 0,
        answered: 0,
        alive: true,
        oom_kills: 0,
        peak_bytes: 0,
        end_bytes: 0,
        end_anon_bytes: 0,
        end_cache_bytes: 0,
        end_shmem_bytes: 0,
        end_kernel_bytes: 0,
        ceiling_bytes: 0.0,
        charged_bytes: 0.0,
        shedding: 0.0,
        shed_rows: 0.0,
        shed_cgroups: 0.0,
        log: Vec::new(),
    };
    // Up to two minutes for the first answer (the first walk of tens of
    // thousands of processes, the history opened), then once a second.
    let staples = staples();
    let mut until = None;
    loop {
        if let Ok(Some(_)) = agent.0.try_wait() {
            out.alive = false;
            break;
        }
        let body = get(port, "/metrics")
            .ok()
            .map(|b| String::from_utf8_lossy(&b).into_owned());
        let full = body
            .as_deref()
            .is_some_and(|b| staples.iter().all(|f| b.contains(&format!("\n{f}"))));
        if until.is_none() {
            if full {
                out.first_answer_s = Some(started.elapsed().as_secs_f64());
                until = Some(Instant::now() + opts.duration);
                progress("answered; scraping once a second");
            } else if started.elapsed() > Duration::from_secs(120) {
                break;
            }
        }
        if until.is_some() {
            out.scrapes += 1;
            out.answered += u32::from(full);
            if let Some(b) = body.as_deref() {
                let v = |name: &str| value(b, name).unwrap_or(f64::NAN);
                let shed = |what: &str| {
                    v(&format!(
                        "{}{{what=\"{what}\"}}",
                        QUIETSTAT_AGENT_SHED_TOTAL.name
                    ))
                };
                out.ceiling_bytes = v(QUIETSTAT_AGENT_MEMORY_CEILING_BYTES.name);
                out.charged_bytes = v(QUIETSTAT_AGENT_MEMORY_CHARGED_BYTES.name);
                out.shedding = v(QUIETSTAT_AGENT_SHEDDING.name);
                out.shed_rows = shed("process_rows");
                out.shed_cgroups = shed("cgroups");
            }
        }
        if until.is_some_and(|u| Instant::now() >= u) {
            break;
        }
        std::thread::sleep(Duration::from_secs(1));
    }
    out.oom_kills = cg.oom_kills();
    out.peak_bytes = cg.peak();
    out.end_bytes = cg.now();
    out.end_anon_bytes = cg.stat(&["anon", "rss"]);
    out.end_cache_bytes = cg.stat(&["file", "cache"]);
    out.end_shmem_bytes = cg.stat(&["shmem"]);
    out.end_kernel_bytes = cg.kernel();
    drop(agent);
    out.log = std::fs::read_to_string(&log)
        .unwrap_or_default()
        .lines()
        .filter(|l| l.contains("memory"))
        .map(str::to_string)
        .collect();
    drop(cg);
    drop(many);
    drop(idle);
    let _ = std::fs::remove_dir_all(&shm_dir);
    let _ = std::fs::remove_dir_all(&dir);
    Ok(out)
}

/// The value of the unlabelled (or fully labelled) series `name` in an
/// exposition.
fn value(body: &str, name: &str) -> Option<f64> {
    body.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.trim().parse().ok())
}
