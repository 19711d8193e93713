//! `bench procfs`: what one read of each kernel source costs, reproducing the
//! measurement of the /proc/stat regression report (8640 open/read/close
//! cycles: a day of 10-second samples), next to re-reads of a kept-open file
//! with pread and our own parse time, so that a kernel regression shows up as
//! a ratio against a saved baseline.

use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::time::Instant;

use procfs::{Reader, Source, SystemSample};

use crate::stats::Summary;

/// The read count of the report: a day of samples every 10 s.
pub const DEFAULT_READS: usize = 8640;
/// A file whose read cost grew more than this factor has regressed.
pub const REGRESSION_FACTOR: f64 = 2.0;

#[derive(Debug, Clone)]
pub struct Options {
    pub proc_root: PathBuf,
    pub sys_root: PathBuf,
    /// Sources to measure; empty means every source present under the root.
    pub files: Vec<Source>,
    pub reads: usize,
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("reads must be at least 1")]
    NoReads,
    #[error("no source to measure: none of {names} exists under {root}")]
    NothingToMeasure { names: String, root: String },
    #[error(transparent)]
    Read(#[from] procfs::Error),
    #[error("{path}: {source}")]
    Parse {
        path: String,
        #[source]
        source: procfs::ParseError,
    },
}

/// Costs of one source.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileCost {
    pub file: String,
    pub bytes_per_read: u64,
    /// open + read to end of file + close.
    pub open_read_close: Summary,
    /// pread at offset 0 of a file kept open.
    pub pread: Summary,
    /// Our parser on the bytes of each pread.
    pub parse: Summary,
}

/// Where and how the figures were taken.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Context {
    pub kernel: String,
    pub online_cpus: usize,
    pub proc_root: String,
    pub reads: usize,
    pub unix_time: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    pub context: Context,
    pub files: Vec<FileCost>,
}

/// One file compared with its baseline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    pub file: String,
    pub baseline_median_us: f64,
    pub median_us: f64,
    /// open/read/close median, this run over baseline.
    pub ratio: f64,
    pub baseline_pread_median_us: f64,
    pub pread_median_us: f64,
    pub pread_ratio: f64,
    /// Either ratio above [`REGRESSION_FACTOR`].
    pub regressed: bool,
}

fn elapsed_ns(since: Instant) -> u64 {
    since.elapsed().as_nanos().min(u64::MAX as u128) as u64
}

/// Runs the benchmark. `progress(done, total)` is called as reads complete.
pub fn run(opts: &Options, progress: &mut dyn FnMut(u64, u64)) -> Result<Report, Error> {
    if opts.reads == 0 {
        return Err(Error::NoReads);
    }
    let mut plain = Reader::new(&opts.proc_root, &opts.sys_root);
    let mut kept = Reader::new(&opts.proc_root, &opts.sys_root);
    kept.set_keep_open(true);
    let candidates: Vec<Source> = if opts.files.is_empty() {
        Source::ALL.to_vec()
    } else {
        opts.files.clone()
    };
    let mut files = Vec::new();
    for source in candidates {
        match plain.read_raw(source) {
            Ok(_) => files.push(source),
            // Absent optional sources are skipped when not asked for by name.
            Err(e) if e.is_not_found() && opts.files.is_empty() => {}
            Err(e) => return Err(e.into()),
        }
    }
    if files.is_empty() {
        return Err(Error::NothingToMeasure {
            names: Source::names(),
            root: opts.proc_root.display().to_string(),
        });
    }
    let total = (files.len() * opts.reads * 2) as u64;
    let mut done = 0u64;
    let step = (opts.reads / 50).max(1);
    let mut sample = SystemSample::default();
    let mut results = Vec::with_capacity(files.len());
    let mut orc = vec![0u64; opts.reads];
    let mut pr = vec![0u64; opts.reads];
    let mut parse = vec![0u64; opts.reads];
    for source in files {
        let mut bytes = 0usize;
        for (i, slot) in orc.iter_mut().enumerate() {
            let t = Instant::now();
            let n = plain.read_raw(source)?.len();
            *slot = elapsed_ns(t);
            bytes = bytes.max(n);
            if i % step == 0 {
                progress(done + i as u64, total);
            }
        }
        done += opts.reads as u64;
        for i in 0..opts.reads {
            let t = Instant::now();
            let buf = kept.read_raw(source)?;
            pr[i] = elapsed_ns(t);
            let t = Instant::now();
            let r = sample.parse_source(source, buf);
            parse[i] = elapsed_ns(t);
            r.map_err(|e| Error::Parse {
                path: kept.path(source).display().to_string(),
                source: e,
            })?;
            if i % step == 0 {
                progress(done + i as u64, total);
            }
        }
        done += opts.reads as u64;
        results.push(FileCost {
            file: source.name().to_string(),
            bytes_per_read: bytes as u64,
            open_read_close: Summary::of_ns(&mut orc),
            pread: Summary::of_ns(&mut pr),
            parse: Summary::of_ns(&mut parse),
        });
    }
    progress(total, total);
    let topo_cpus = Reader::new(&opts.proc_root, &opts.sys_root)
        .read_topology()
        .online
        .len();
    let kernel = std::fs::read_to_string(opts.proc_root.join("sys/kernel/osrelease"))
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown".into());
    Ok(Report {
        context: Context {
            kernel,
            online_cpus: topo_cpus,
            proc_root: opts.proc_root.display().to_string(),
            reads: opts.reads,
            unix_time: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or(0),
        },
        files: results,
    })
}

/// Compares every file present in both reports.
pub fn compare(current: &Report, baseline: &Report) -> Vec<Comparison> {
    current
        .files
        .iter()
        .filter_map(|f| {
            let b = baseline.files.iter().find(|b| b.file == f.file)?;
            let ratio = |cur: f64, base: f64| {
                if base > 0.0 {
                    cur / base
                } else {
                    f64::INFINITY
                }
            };
            let r = ratio(f.open_read_close.median_us, b.open_read_close.median_us);
            let pr = ratio(f.pread.median_us, b.pread.median_us);
            Some(Comparison {
                file: f.file.clone(),
                baseline_median_us: b.open_read_close.median_us,
                median_us: f.open_read_close.median_us,
                ratio: r,
                baseline_pread_median_us: b.pread.median_us,
                pread_median_us: f.pread.median_us,
                pread_ratio: pr,
                regressed: r > REGRESSION_FACTOR || pr > REGRESSION_FACTOR,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(files: Vec<Source>, reads: usize) -> Options {
        let (proc_root, sys_root) = fixtures::roots("this-machine");
        Options {
            proc_root,
            sys_root,
            files,
            reads,
        }
    }

    #[test]
    fn measures_every_present_source_on_a_fixture() {
        let mut calls = 0;
        let r = run(&opts(vec![], 20), &mut |d, t| {
            assert!(d <= t);
            calls += 1
        })
        .unwrap();
        let names: Vec<&str> = r.files.iter().map(|f| f.file.as_str()).collect();
        assert!(names.contains(&"stat") && names.contains(&"interrupts"));
        assert!(!names.contains(&"schedstat"), "absent in this fixture");
        let stat = r.files.iter().find(|f| f.file == "stat").unwrap();
        assert_eq!(stat.bytes_per_read, 1118);
        assert!(stat.open_read_close.median_us > 0.0 && stat.parse.median_us > 0.0);
        assert!(calls > 2);
    }

    #[test]
    fn asking_for_a_missing_file_is_an_error() {
        let e = run(&opts(vec![Source::Schedstat], 5), &mut |_, _| {}).unwrap_err();
        assert!(e.to_string().contains("schedstat: not found"), "{e}");
        assert!(matches!(
            run(&opts(vec![], 0), &mut |_, _| {}),
            Err(Error::NoReads)
        ));
    }

    #[test]
    fn regression_is_flagged_above_twice_the_baseline() {
        let base = run(
            &opts(vec![Source::Stat, Source::Loadavg], 5),
            &mut |_, _| {},
        )
        .unwrap();
        let mut cur = base.clone();
        cur.files[0].open_read_close.median_us = base.files[0].open_read_close.median_us * 2.5;
        cur.files[1].open_read_close.median_us = base.files[1].open_read_close.median_us * 1.5;
        let c = compare(&cur, &base);
        assert!(c[0].regressed && !c[1].regressed);
        assert!((c[0].ratio - 2.5).abs() < 1e-9);
    }
}
