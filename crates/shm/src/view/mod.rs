//! The agent's view files, beside the snapshot: what a local viewer
//! (`quietstat top`, `quietstat ps`) needs that the fixed snapshot does not
//! hold, so that it reads no /proc file of its own.
//!
//! - `<snapshot>.system`: the bytes of the system sources a viewer shows
//!   (CPU, memory, load, pressure, disks, network), as the agent last read
//!   them; the viewer parses them with the agent's own parsers.
//! - `<snapshot>.procs`: the agent's last process table, and the processes
//!   that exited since the table before it.
//! - `<snapshot>.cgroups`: the agent's last read of every cgroup (when its
//!   `cgroups` source is on), written, as the process file, only while
//!   viewers read the process file.
//!
//! The process file (megabytes with tens of thousands of processes) is
//! written only while viewers read it: the agent watches it for opens
//! (inotify), writes each table while one was opened within [`WANT_FOR`],
//! and writes the latest table when a viewer comes after a pause
//! ([`read_live_procs`] wakes it, or waits for its next round).
//!
//! Each file is made once, when the agent starts, and rewritten in place
//! (three `pwrite`s: the sequence number made odd, the data, the sequence
//! made even) only when the agent has read what it holds again: the system
//! file once per read of `/proc/stat`, the process file once per
//! process-table read. A reader reads the header, the body, then the
//! header again, and takes the data only if the sequence was even and did
//! not move: it never uses half of one. No rename, no truncation: on a disk
//! filesystem (ext4 flushes a file renamed over another) a publish never
//! waits for I/O.
//!
//! # Layout, version 1 (little-endian)
//!
//! ```text
//! offset  size  field
//!      0     8  magic       b"QSTATVEW"
//!      8     4  version     1; a reader refuses any other
//!     12     4  kind        1 system, 2 processes, 3 cgroups
//!     16     4  agent_pid
//!     20     4  fields      processes: the fields read (bit i: proctable::Field::ALL[i])
//!     24     8  unix_ns     when the data was read
//!     32     8  mono_ns     the same instant, CLOCK_MONOTONIC
//!     40     8  interval_ns the agent's interval for this data
//!     48     8  count       system, cgroups: bytes of the body; processes: rows
//!     56     4  exits       processes: exit rows after the process rows;
//!                           cgroups: cgroups
//!     60     4  row_words   processes: 8-byte words per process row;
//!                           cgroups: figures per cgroup
//!     64     8  seq         odd while the agent writes
//!     72     8  reserved    0
//!     80     -  body (the file may be longer: what follows is stale)
//! ```
//!
//! A system body is `procfs::kept` entries (`source u8, length u32, bytes`).
//! A cgroup is its id (8 bytes), depth (2), path's length (2), 4 zero
//! bytes, its figures (8 bytes each, `u64::MAX` when absent, in
//! `cgroups::Figure::ALL`'s order), then its path padded with zeros to 8
//! bytes.
//! A process row is [`PROC_WORDS`] words and an exit row [`EXIT_WORDS`]
//! words, in the order [`put_proc`] and [`put_exit`] write them.

use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use procfs::pid::Comm;
use proctable::{Exit, Fields, Proc};

use crate::Error;

mod read;
mod rows;
mod write;

pub use read::*;
pub use rows::*;
pub use write::*;

pub const VIEW_MAGIC: [u8; 8] = *b"QSTATVEW";
pub const VIEW_VERSION: u32 = 7;
const HEADER: usize = 80;
const SEQ: usize = 64;
const KIND_SYSTEM: u32 = 1;
const KIND_PROCS: u32 = 2;
const KIND_CGROUPS: u32 = 3;
/// Figures per cgroup.
const CGROUP_FIGURES: usize = cgroups::Figure::COUNT;
/// Words per process row.
pub const PROC_WORDS: usize = proctable::layout::VIEW_WORDS;
/// Words per exit row.
pub const EXIT_WORDS: usize = 14;
/// A body larger than this is refused (a table of about two million rows).
const MAX_BODY: u64 = 1 << 29;

/// The system sources a viewer shows, kept by the agent for its view.
pub const VIEW_SOURCES: [procfs::Source; 9] = [
    procfs::Source::Stat,
    procfs::Source::Meminfo,
    procfs::Source::Loadavg,
    procfs::Source::PressureCpu,
    procfs::Source::PressureMemory,
    procfs::Source::PressureIo,
    procfs::Source::PressureIrq,
    procfs::Source::Diskstats,
    procfs::Source::NetDev,
];

/// `<snapshot>.system`.
pub fn system_path(snapshot: &Path) -> PathBuf {
    suffixed(snapshot, ".system")
}

/// `<snapshot>.procs`.
pub fn procs_path(snapshot: &Path) -> PathBuf {
    suffixed(snapshot, ".procs")
}

fn suffixed(p: &Path, suffix: &str) -> PathBuf {
    let mut s = p.as_os_str().to_os_string();
    s.push(suffix);
    PathBuf::from(s)
}

/// How long a viewer's opening of the process file keeps it written.
pub const WANT_FOR: std::time::Duration = std::time::Duration::from_secs(60);

/// `<snapshot>.cgroups`.
pub fn cgroups_path(snapshot: &Path) -> PathBuf {
    suffixed(snapshot, ".cgroups")
}

/// What every view file says about itself.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Meta {
    pub agent_pid: u32,
    pub unix_ns: u64,
    pub mono_ns: u64,
    pub interval_ns: u64,
}

/// A process table as the agent published it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProcView {
    pub meta: Meta,
    /// The fields the agent read; others hold zero or `None`.
    pub fields: Fields,
    pub procs: Vec<Proc>,
    /// Processes that ended since the table before this one.
    pub exits: Vec<Exit>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use procfs::pid::{CtxSwitches, PidIo, SchedInfo};

    fn proc_row(i: u32) -> Proc {
        Proc {
            pid: i,
            tgid: i,
            ppid: 1,
            comm: Comm::new(format!("task-{i}").as_bytes()),
            state: 'S',
            start_ns: 5_000_000 * u64::from(i),
            start_ticks: u64::from(i) / 2,
            utime_ns: 10 * u64::from(i),
            stime_ns: 3,
            minflt: 7,
            majflt: 1,
            num_threads: 4,
            rss_bytes: 4096 * u64::from(i),
            vsize_bytes: 1 << 30,
            nice: -5,
            priority: -51,
            policy: 1,
            rt_priority: 50,
            cpu: 1,
            cgroup_id: i.is_multiple_of(2).then_some(1234),
            io: i.is_multiple_of(3).then_some(PidIo {
                rchar: 1,
                wchar: 2,
                syscr: 3,
                syscw: 4,
                read_bytes: 5,
                write_bytes: 6,
                cancelled_write_bytes: 7,
            }),
            ctxsw: Some(CtxSwitches {
                voluntary: 9,
                involuntary: 8,
            }),
            sched: i.is_multiple_of(4).then_some(SchedInfo {
                run_delay_ns: 11 * u64::from(i),
                timeslices: 12,
            }),
            net: i.is_multiple_of(3).then_some(proctable::NetBytes {
                rx_bytes: 13 * u64::from(i),
                tx_bytes: 14,
            }),
            gpu: i.is_multiple_of(5).then_some(proctable::Gpu {
                busy_ns: 17 * u64::from(i),
                mem_bytes: 1 << 20,
                clients: 2,
            }),
            delays: i.is_multiple_of(2).then_some(proctable::Delays {
                blkio_ns: 15 * u64::from(i),
                irq_ns: 16,
                ..proctable::Delays::default()
            }),
            oom_score_adj: i.is_multiple_of(5).then_some(-1000),
            uid: (!i.is_multiple_of(5)).then_some(1000),
            exec: 77,
        }
    }

    #[test]
    fn a_published_table_reads_back_row_for_row() {
        let dir = tempfile::tempdir().unwrap();
        let snap = dir.path().join("snapshot");
        let mut w = ViewWriter::new(&snap, false).unwrap();
        let procs: Vec<Proc> = (1..50).map(proc_row).collect();
        let exits = vec![Exit {
            pid: 99,
            ppid: 1,
            comm: Comm::new(b"gone-with-a-long"),
            start_ns: 1,
            start_ticks: 2,
            exit_ns: 3,
            utime_ns: 4,
            stime_ns: 5,
            minflt: 6,
            majflt: 7,
            maxrss_bytes: 8,
            exit_status: 9,
        }];
        let meta = Meta {
            agent_pid: 42,
            unix_ns: 1,
            mono_ns: 2,
            interval_ns: 5_000_000_000,
        };
        let fields = Fields::stat().with(proctable::Field::Uid);
        w.publish_procs(&meta, fields, &procs, &exits).unwrap();
        let v = read_procs(&procs_path(&snap)).unwrap();
        assert_eq!(v.meta, meta);
        assert_eq!(procs_mono_ns(&procs_path(&snap)).unwrap(), meta.mono_ns);
        assert_eq!(v.fields, fields);
        assert_eq!(v.procs, procs);
        assert_eq!(v.exits, exits);
        // Rewritten in place: the new, shorter table replaces the old.
        w.publish_procs(&meta, fields, &procs[..3], &[]).unwrap();
        assert_eq!(read_procs(&procs_path(&snap)).unwrap().procs, procs[..3]);
        // A file left by an agent before is replaced, not written into.
        drop(w);
        let w = ViewWriter::new(&snap, false).unwrap();
        assert_eq!(std::fs::metadata(procs_path(&snap)).unwrap().len(), 0);
        w.remove();
        assert!(!procs_path(&snap).exists());
    }

    fn cgroup_rows() -> Vec<cgroups::Cgroup> {
        (0..40u64)
            .map(|i| {
                let mut figures = cgroups::Figures::default();
                figures.set(cgroups::Figure::CpuUsageNs, i * 1000);
                if i % 3 == 0 {
                    figures.set(cgroups::Figure::MemoryBytes, i << 20);
                }
                // Paths of every length modulo 8, and the root.
                let path = match i {
                    0 => "/".to_string(),
                    _ => format!("/s{}.slice/{}", i % 4, "x".repeat(i as usize)),
                };
                cgroups::Cgroup {
                    path: path.into(),
                    id: 100 + i,
                    depth: if i == 0 { 0 } else { 2 },
                    figures,
                }
            })
            .collect()
    }

    #[test]
    fn published_cgroups_read_back_exactly_and_bad_files_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let snap = dir.path().join("snapshot");
        let mut w = ViewWriter::new(&snap, false).unwrap();
        let path = cgroups_path(&snap);
        // Made empty: nothing published yet.
        assert_eq!(cgroups_mono_ns(&path).unwrap(), None);
        let sample = cgroups::Sample {
            cgroups: cgroup_rows(),
            ..cgroups::Sample::default()
        };
        let meta = Meta {
            agent_pid: 7,
            unix_ns: 11,
            mono_ns: 13,
            interval_ns: 10_000_000_000,
        };
        w.publish_cgroups(&meta, &sample).unwrap();
        let v = read_cgroups(&path).unwrap();
        assert_eq!(v.meta, meta);
        assert_eq!(v.cgroups, sample.cgroups);
        assert_eq!(cgroups_mono_ns(&path).unwrap(), Some(13));
        // Every cut of the file is refused, never misread.
        let bytes = std::fs::read(&path).unwrap();
        for cut in [0, HEADER - 1, HEADER, HEADER + 15, bytes.len() - 1] {
            std::fs::write(&path, &bytes[..cut]).unwrap();
            assert!(read_cgroups(&path).is_err(), "cut at {cut}");
        }
        // A count larger than the body holds; a figure count not ours.
        let mut bad = bytes.clone();
        bad[56..60].copy_from_slice(&41u32.to_le_bytes());
        std::fs::write(&path, &bad).unwrap();
        let e = read_cgroups(&path).unwrap_err().to_string();
        assert!(e.contains("cgroup 40 cut short"), "{e}");
        let mut bad = bytes.clone();
        bad[60..64].copy_from_slice(&3u32.to_le_bytes());
        std::fs::write(&path, &bad).unwrap();
        let e = read_cgroups(&path).unwrap_err().to_string();
        assert!(e.contains("3 figures a cgroup"), "{e}");
        // Fewer cgroups than the body holds.
        let mut bad = bytes;
        bad[56..60].copy_from_slice(&39u32.to_le_bytes());
        std::fs::write(&path, &bad).unwrap();
        let e = read_cgroups(&path).unwrap_err().to_string();
        assert!(e.contains("after the last cgroup"), "{e}");
        w.remove();
        assert!(!path.exists());
    }

    #[test]
    fn concurrent_reads_never_see_half_a_table() {
        let dir = tempfile::tempdir().unwrap();
        let snap = dir.path().join("snapshot");
        let mut w = ViewWriter::new(&snap, false).unwrap();
        let table = |g: u64| -> Vec<Proc> {
            // Tables of changing length, every row marked with its generation.
            (0..(50 + (g % 7) * 40) as u32)
                .map(|i| Proc {
                    pid: i + 1,
                    utime_ns: g,
                    ..proc_row(i + 1)
                })
                .collect()
        };
        w.publish_procs(&Meta::default(), Fields::all(), &table(0), &[])
            .unwrap();
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let s2 = stop.clone();
        let writer = std::thread::spawn(move || {
            let mut g = 1;
            while !s2.load(std::sync::atomic::Ordering::Relaxed) {
                let meta = Meta {
                    mono_ns: g,
                    ..Meta::default()
                };
                w.publish_procs(&meta, Fields::all(), &table(g), &[])
                    .unwrap();
                g += 1;
            }
            g
        });
        let path = procs_path(&snap);
        let mut seen = std::collections::BTreeSet::new();
        let start = std::time::Instant::now();
        // Until twenty tables were seen (a starved writer makes it longer).
        while seen.len() < 20 && start.elapsed() < std::time::Duration::from_secs(60) {
            let v = read_procs(&path).unwrap();
            let g = v.meta.mono_ns;
            assert_eq!(v.procs.len() as u64, 50 + (g % 7) * 40, "generation {g}");
            assert!(
                v.procs.iter().all(|p| p.utime_ns == g),
                "generation {g} mixed"
            );
            seen.insert(g);
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let written = writer.join().unwrap();
        assert!(seen.len() >= 20, "{written} written, {} seen", seen.len());
    }

    #[test]
    fn system_bytes_parse_as_a_live_read_would() {
        let dir = tempfile::tempdir().unwrap();
        let snap = dir.path().join("snapshot");
        let mut w = ViewWriter::new(&snap, false).unwrap();
        let mut kept = Vec::new();
        procfs::kept::append(
            &mut kept,
            procfs::Source::Loadavg,
            b"0.50 1.00 2.00 1/99 123\n",
        );
        procfs::kept::append(&mut kept, procfs::Source::Meminfo, b"bad\n");
        w.publish_system(&Meta::default(), &kept).unwrap();
        let mut s = procfs::SystemSample::default();
        read_system(&system_path(&snap), &mut s).unwrap();
        assert!(s.ok(procfs::Source::Loadavg));
        assert!(matches!(
            s.status[procfs::Source::Meminfo as usize],
            procfs::SourceStatus::Failed(_)
        ));
        assert!(!s.ok(procfs::Source::Stat));
    }

    #[test]
    fn damaged_files_are_refused_by_name_never_misread() {
        let dir = tempfile::tempdir().unwrap();
        let snap = dir.path().join("snapshot");
        let mut w = ViewWriter::new(&snap, false).unwrap();
        let procs: Vec<Proc> = (1..4).map(proc_row).collect();
        w.publish_procs(&Meta::default(), Fields::all(), &procs, &[])
            .unwrap();
        let good = std::fs::read(procs_path(&snap)).unwrap();
        let p = dir.path().join("damaged.procs");
        let read = |b: &[u8]| {
            std::fs::write(&p, b).unwrap();
            read_procs(&p)
        };
        // Every truncation, and a flipped version and kind.
        for n in 0..good.len() {
            let e = read(&good[..n]).unwrap_err().to_string();
            assert!(e.contains("damaged.procs"), "{n}: {e}");
        }
        assert_eq!(read(&good).unwrap().procs, procs);
        let mut v = good.clone();
        v[8] = 9;
        assert!(read(&v).unwrap_err().to_string().contains("version 9"));
        let mut k = good.clone();
        k[12] = 1;
        assert!(read(&k).is_err());
        assert!(decode_system(&p, &good, &mut procfs::SystemSample::default()).is_err());
        // A row width this reader does not know.
        let mut r = good.clone();
        r[60] += 1;
        assert!(read(&r).unwrap_err().to_string().contains("words a row"));
        let mut c = good;
        c[48..56].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(read(&c).unwrap_err().to_string().contains("more than"));
    }
}
