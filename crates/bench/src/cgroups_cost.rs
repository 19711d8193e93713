//! `bench cgroups`: N cgroups made in every hierarchy the cgroup reader
//! uses on this machine (a hundred per slice under one parent of its own),
//! then read whole, the ways taking turns in a fresh order each run: a
//! naive reader (the tree listed with `read_dir`, each file opened by its
//! full path, read, closed), the cgroup reader with its defaults (its
//! second read, timed, gives the settings of its first, and the idle
//! cgroups' v1 memory.stat: five reads in six do; every hierarchy read by
//! the BPF walk where it loads), with the files only, with the settings
//! files and memory.stat read at every read, with every directory kept
//! open, and with every file kept open too; and
//! memory.stat apart, against every other file (its read makes the kernel
//! flush per-CPU counters), and with `per_file` each file alone. The cgroups are removed at the end, also when
//! the run fails.

use std::path::{Path, PathBuf};
use std::time::Instant;
use sys::Error;

use cgroups::{Figures, File, Options as ReaderOptions, Reader, Sample};
use serde::Serialize;

use crate::proctable_cost::{percentile_ms, run_order};

pub const DEFAULT_COUNT: usize = 10_000;
pub const DEFAULT_RUNS: usize = 9;
/// Children per slice.
const PER_SLICE: usize = 100;

#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub method: String,
    /// Cgroups read in one walk (the machine's own included), and the
    /// figures they gave (the same for every way reading every file).
    pub cgroups: usize,
    pub figures: usize,
    pub median_ms: f64,
    pub us_per_cgroup: f64,
    /// The naive reader's median over this one's.
    pub naive_over_this: f64,
    /// Descriptors kept open between walks.
    pub kept_fds: usize,
}

pub struct Options {
    pub count: usize,
    pub runs: usize,
    /// A row for each file alone.
    pub per_file: bool,
}

/// Cgroups this run made, removed (children first) on drop.
struct Made(Vec<PathBuf>);

impl Drop for Made {
    fn drop(&mut self) {
        for d in self.0.iter().rev() {
            for _ in 0..100 {
                if std::fs::remove_dir(d).is_ok() || !d.exists() {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
        }
    }
}

enum Way {
    Naive(Vec<(PathBuf, Vec<&'static File>)>),
    /// A reader made for each turn and read twice, the second read timed:
    /// its kept descriptors, not the other ways', within the limit.
    Reader(ReaderOptions),
}

/// The naive reader: every hierarchy listed by path, each file read by
/// its full path; returns (cgroups, figures).
fn naive(roots: &[(PathBuf, Vec<&'static File>)], buf: &mut Vec<u8>) -> (usize, usize) {
    use std::io::Read;
    let mut figures: std::collections::HashMap<PathBuf, Figures> = Default::default();
    for (root, chosen) in roots {
        let mut stack = vec![root.clone()];
        while let Some(dir) = stack.pop() {
            let rel = dir.strip_prefix(root).unwrap_or(&dir).to_path_buf();
            let fig = figures.entry(rel).or_default();
            for f in chosen {
                buf.clear();
                if let Ok(mut h) = std::fs::File::open(dir.join(f.name))
                    && h.read_to_end(buf).is_ok()
                {
                    let _ = cgroups::parse::parse(f, buf, fig);
                }
            }
            if let Ok(rd) = std::fs::read_dir(&dir) {
                for e in rd.flatten() {
                    if e.file_type().is_ok_and(|t| t.is_dir()) {
                        stack.push(e.path());
                    }
                }
            }
        }
    }
    let n = figures.values().map(|f| f.iter().count()).sum();
    (figures.len(), n)
}

/// Raises RLIMIT_NOFILE towards `n`: the soft limit to the hard one, and
/// the hard one too where the process may (CAP_SYS_RESOURCE). Returns the
/// soft limit in force.
fn raise_fd_limit(n: u64) -> u64 {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit on a valid struct.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) != 0 {
            return 1024;
        }
        if lim.rlim_cur >= n {
            return lim.rlim_cur;
        }
        let mut want = libc::rlimit {
            rlim_cur: n,
            rlim_max: lim.rlim_max.max(n),
        };
        if libc::setrlimit(libc::RLIMIT_NOFILE, &want) != 0 {
            want.rlim_cur = lim.rlim_max.min(n);
            want.rlim_max = lim.rlim_max;
            if libc::setrlimit(libc::RLIMIT_NOFILE, &want) != 0 {
                return lim.rlim_cur;
            }
        }
        want.rlim_cur
    }
}

pub fn run(opts: &Options, note: &mut dyn FnMut(&str)) -> Result<Vec<Row>, Error> {
    let proc_root = Path::new("/proc");
    let sys_root = Path::new("/sys");
    let base_opts = ReaderOptions::new(proc_root, sys_root);
    let probe = Reader::new(base_opts.clone())?;
    let hierarchies: Vec<cgroups::Hierarchy> = probe.hierarchies().cloned().collect();
    drop(probe);
    let name = format!("quietstat-bench-cgroups-{}", std::process::id());
    let mut made = Made(Vec::new());
    let t = Instant::now();
    make(&hierarchies, &name, opts.count, &mut made)?;
    note(&format!(
        "{} cgroups made in each of {} hierarchies ({}) in {:.1} s",
        opts.count,
        hierarchies.len(),
        hierarchies
            .iter()
            .map(|h| h.mount.display().to_string())
            .collect::<Vec<_>>()
            .join(", "),
        t.elapsed().as_secs_f64()
    ));
    let dirs = made.0.len() + 64;
    let all_fds = (dirs * 16) as u64 + 1024;
    let limit = raise_fd_limit(all_fds);
    if limit < all_fds {
        note(&format!(
            "descriptor limit {limit} (not {all_fds}): the rows keeping every descriptor keep what it allows"
        ));
    }
    let keepable = (limit as usize).saturating_sub(512);
    let every: Vec<&'static File> = cgroups::FILES.iter().collect();
    let mem_stat: Vec<&'static File> = every
        .iter()
        .copied()
        .filter(|f| f.name == "memory.stat")
        .collect();
    let others: Vec<&'static File> = every
        .iter()
        .copied()
        .filter(|f| f.name != "memory.stat")
        .collect();
    let reader = |f: &dyn Fn(&mut ReaderOptions)| -> Result<Way, Error> {
        let mut o = base_opts.clone();
        f(&mut o);
        Ok(Way::Reader(o))
    };
    let mut ways: Vec<(String, Way, Vec<f64>, usize, usize, usize)> = vec![
        way(
            "naive: listed and read by path".into(),
            Way::Naive(
                hierarchies
                    .iter()
                    .map(|h| (h.dir.clone(), h.files(&every)))
                    .collect(),
            ),
        ),
        way("reader, defaults".into(), reader(&|_| {})?),
        way(
            "reader, files only (no BPF walk)".into(),
            reader(&|o| o.bpf = false)?,
        ),
        (
            "reader, settings and memory.stat at every read".into(),
            reader(&|o| {
                o.settings_every = 1;
                o.memory_stat_every = 1
            })?,
            Vec::new(),
            0,
            0,
            0,
        ),
        way(
            "reader, every directory kept".into(),
            reader(&|o| o.max_fds = keepable.min(dirs + 64))?,
        ),
        (
            "reader, every directory and file kept".into(),
            reader(&|o| {
                o.max_fds = keepable;
                o.keep_open = true
            })?,
            Vec::new(),
            0,
            0,
            0,
        ),
        way(
            "reader, memory.stat alone".into(),
            reader(&|o| o.files = mem_stat.clone())?,
        ),
        way(
            "reader, every file but memory.stat".into(),
            reader(&|o| o.files = others.clone())?,
        ),
    ];
    if opts.per_file {
        // Each file the machine has, alone: what it costs beside the walk.
        for f in &every {
            if hierarchies.iter().any(|h| !h.files(&[*f]).is_empty()) {
                ways.push(way(
                    format!("reader, {} alone", f.spelled()),
                    reader(&|o| o.files = vec![*f])?,
                ));
            }
        }
    }
    measure(&mut ways, opts.runs)?;
    let mut rows: Vec<Row> = ways
        .iter_mut()
        .map(|(method, _, samples, cgroups, figures, kept)| {
            samples.sort_by(f64::total_cmp);
            let med = percentile_ms(samples, 50.0);
            Row {
                method: method.clone(),
                cgroups: *cgroups,
                figures: *figures,
                median_ms: med,
                us_per_cgroup: med * 1e3 / (*cgroups).max(1) as f64,
                naive_over_this: 0.0,
                kept_fds: *kept,
            }
        })
        .collect();
    let naive_ms = rows[0].median_ms;
    for r in &mut rows {
        r.naive_over_this = naive_ms / r.median_ms.max(1e-9);
    }
    drop(ways);
    drop(made);
    Ok(rows)
}

/// One way to read the cgroups, with what its runs measured: its name, the
/// way, each run's milliseconds, and the cgroups, figures and descriptors
/// the last run had.
type WayRuns = (String, Way, Vec<f64>, usize, usize, usize);

fn way(method: String, way: Way) -> WayRuns {
    (method, way, Vec::new(), 0, 0, 0)
}

/// `count` cgroups in each hierarchy below `name`, in slices of
/// [`PER_SLICE`]; each one made is in `made` (removed when it drops).
fn make(
    hierarchies: &[cgroups::Hierarchy],
    name: &str,
    count: usize,
    made: &mut Made,
) -> Result<(), Error> {
    let slices = count.div_ceil(PER_SLICE);
    for h in hierarchies {
        let top = h.dir.join(name);
        std::fs::create_dir(&top).map_err(|e| Error::io(format!("making {}", top.display()), e))?;
        made.0.push(top.clone());
        let mut n = 0;
        for s in 0..slices {
            let slice = top.join(format!("s{s}.slice"));
            std::fs::create_dir(&slice)
                .map_err(|e| Error::io(format!("making {}", slice.display()), e))?;
            made.0.push(slice.clone());
            n += 1;
            for c in 0..PER_SLICE - 1 {
                if n >= count {
                    break;
                }
                let d = slice.join(format!("c{c}.scope"));
                std::fs::create_dir(&d)
                    .map_err(|e| Error::io(format!("making {}", d.display()), e))?;
                made.0.push(d);
                n += 1;
            }
        }
    }
    Ok(())
}

/// `runs` rounds (and one to warm up) of every way, in an order that
/// changes each round; each way's time is that of one whole read.
fn measure(ways: &mut [WayRuns], runs: usize) -> Result<(), Error> {
    let mut sample = Sample::default();
    let mut buf = Vec::new();
    for run in 0..=runs {
        for k in run_order(ways.len(), run) {
            let (_, way, samples, cgroups, figures, kept) = &mut ways[k];
            let mut reader = match way {
                Way::Reader(o) => {
                    let mut r = Reader::new(o.clone())?;
                    r.read(&mut sample);
                    Some(r)
                }
                Way::Naive(_) => None,
            };
            let t = Instant::now();
            let (n, f) = match (&*way, reader.as_mut()) {
                (Way::Naive(roots), _) => naive(roots, &mut buf),
                (Way::Reader(_), Some(r)) => {
                    r.read(&mut sample);
                    let f = sample
                        .cgroups
                        .iter()
                        .map(|c| c.figures.iter().count())
                        .sum();
                    (sample.cgroups.len(), f)
                }
                (Way::Reader(_), None) => (0, 0),
            };
            let ms = t.elapsed().as_secs_f64() * 1e3;
            if sample.errors > 0 {
                return Err(Error::other(format!(
                    "the reader met {} errors: {}",
                    sample.errors,
                    sample.first_error.clone().unwrap_or_default()
                )));
            }
            if run > 0 {
                samples.push(ms);
            }
            *cgroups = n;
            *figures = f;
            *kept = reader.as_ref().map_or(0, Reader::kept_fds);
        }
    }
    Ok(())
}
