//! /proc/stat: CPU times, interrupt and context-switch counters, boot time,
//! forks, runnable and blocked tasks, softirqs.
//!
//! Format (fs/proc/stat.c): a `cpu` total row, one `cpuN` row per online CPU,
//! then `intr TOTAL IRQ0 IRQ1 ...`, `ctxt`, `btime`, `processes`,
//! `procs_running`, `procs_blocked`, `softirq TOTAL VEC0 ...`. Unknown lines
//! (old kernels' `page`/`swap`, future additions) are skipped.

use serde::Serialize;
use serde::ser::SerializeMap;

use crate::cursor::Cursor;
use crate::error::{ParseError, ParseErrorKind};
use crate::limits::{MAX_CPUS, MAX_IRQS};

/// The CPU time modes of a `cpu` row, in the kernel's column order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CpuMode {
    User,
    Nice,
    System,
    Idle,
    /// Since Linux 2.5.41.
    Iowait,
    /// Since Linux 2.6.0.
    Irq,
    /// Since Linux 2.6.0.
    Softirq,
    /// Since Linux 2.6.11.
    Steal,
    /// Since Linux 2.6.24; already included in `User`.
    Guest,
    /// Since Linux 2.6.33; already included in `Nice`.
    GuestNice,
}

impl CpuMode {
    pub const COUNT: usize = 10;
    pub const ALL: [CpuMode; Self::COUNT] = [
        CpuMode::User,
        CpuMode::Nice,
        CpuMode::System,
        CpuMode::Idle,
        CpuMode::Iowait,
        CpuMode::Irq,
        CpuMode::Softirq,
        CpuMode::Steal,
        CpuMode::Guest,
        CpuMode::GuestNice,
    ];
    /// The columns every kernel this crate accepts prints.
    pub const REQUIRED: usize = 4;

    pub fn name(self) -> &'static str {
        match self {
            CpuMode::User => "user",
            CpuMode::Nice => "nice",
            CpuMode::System => "system",
            CpuMode::Idle => "idle",
            CpuMode::Iowait => "iowait",
            CpuMode::Irq => "irq",
            CpuMode::Softirq => "softirq",
            CpuMode::Steal => "steal",
            CpuMode::Guest => "guest",
            CpuMode::GuestNice => "guest_nice",
        }
    }

    fn ticks_field(self) -> &'static str {
        match self {
            CpuMode::User => "user_ticks",
            CpuMode::Nice => "nice_ticks",
            CpuMode::System => "system_ticks",
            CpuMode::Idle => "idle_ticks",
            CpuMode::Iowait => "iowait_ticks",
            CpuMode::Irq => "irq_ticks",
            CpuMode::Softirq => "softirq_ticks",
            CpuMode::Steal => "steal_ticks",
            CpuMode::Guest => "guest_ticks",
            CpuMode::GuestNice => "guest_nice_ticks",
        }
    }
}

/// Clock ticks per second in /proc/stat and /proc/PID/stat (USER_HZ): 100
/// on every architecture Linux exports them for.
pub const USER_HZ: u64 = 100;

/// One `cpu` row: time spent per mode, in USER_HZ ticks (1/100 s on every
/// architecture Linux exports it for).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CpuTimes {
    ticks: [u64; CpuMode::COUNT],
    /// How many columns the kernel printed (at least [`CpuMode::REQUIRED`]).
    columns: u8,
}

impl CpuTimes {
    /// Builds a row from the first `values.len()` modes (for tests and fixtures).
    pub fn from_ticks(values: &[u64]) -> Self {
        let mut t = CpuTimes::default();
        let n = values.len().min(CpuMode::COUNT);
        t.ticks[..n].copy_from_slice(&values[..n]);
        t.columns = n as u8;
        t
    }

    /// Ticks in `mode`, or `None` when this kernel does not report that mode.
    #[inline]
    pub fn ticks(&self, mode: CpuMode) -> Option<u64> {
        let i = mode as usize;
        (i < self.columns as usize).then(|| self.ticks[i])
    }

    /// Sum of all modes except guest and guest_nice (which user and nice include).
    pub fn total_ticks(&self) -> u64 {
        let n = (self.columns as usize).min(CpuMode::Guest as usize);
        self.ticks[..n]
            .iter()
            .fold(0u64, |a, &b| a.saturating_add(b))
    }

    pub fn columns(&self) -> usize {
        self.columns as usize
    }
}

impl Serialize for CpuTimes {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.columns as usize))?;
        for mode in CpuMode::ALL.iter().take(self.columns as usize) {
            m.serialize_entry(mode.ticks_field(), &self.ticks[*mode as usize])?;
        }
        m.end()
    }
}

/// A `cpuN` row.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct PerCpuTimes {
    pub cpu: u32,
    #[serde(flatten)]
    pub times: CpuTimes,
}

/// Parsed /proc/stat. Reuse one value across samples: [`parse_into`] clears and
/// refills the vectors without allocating once their capacity has grown.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Stat {
    /// The `cpu` row: all CPUs summed (over possible CPUs, not only online ones).
    pub total: CpuTimes,
    /// One row per online CPU, in the kernel's order.
    pub cpus: Vec<PerCpuTimes>,
    /// Interrupts serviced since boot, all IRQs and architecture-specific ones.
    pub intr_total: u64,
    /// Per-IRQ counts indexed by IRQ number (the `intr` line after the total).
    pub irq_counts: Vec<u64>,
    /// Context switches since boot.
    pub ctxt: u64,
    /// Boot time, seconds since the Unix epoch.
    pub btime_secs: u64,
    /// Processes and threads created since boot.
    pub processes: u64,
    /// Runnable tasks now (since Linux 2.5.45).
    pub procs_running: Option<u64>,
    /// Tasks blocked on I/O now (since Linux 2.5.45).
    pub procs_blocked: Option<u64>,
    /// Softirqs since boot, all vectors (since Linux 2.6.31).
    pub softirq_total: Option<u64>,
    /// Per-vector softirq counts, in the order of /proc/softirqs.
    pub softirq_counts: Vec<u64>,
}

/// Parses /proc/stat into a fresh [`Stat`].
pub fn parse(buf: &[u8]) -> Result<Stat, ParseError> {
    let mut s = Stat::default();
    parse_into(buf, &mut s)?;
    Ok(s)
}

fn parse_cpu_row(c: &mut Cursor<'_>) -> Result<CpuTimes, ParseError> {
    let mut t = CpuTimes::default();
    for mode in CpuMode::ALL {
        if (mode as usize) >= CpuMode::REQUIRED && c.at_eol() {
            break;
        }
        t.ticks[mode as usize] = c.u64(mode.ticks_field())?;
        t.columns += 1;
    }
    // Columns a newer kernel may add after guest_nice are ignored.
    Ok(t)
}

fn counts_to_eol(
    c: &mut Cursor<'_>,
    out: &mut Vec<u64>,
    field: &'static str,
    limit: usize,
) -> Result<(), ParseError> {
    while !c.at_eol() {
        if out.len() >= limit {
            return Err(c.err(field, ParseErrorKind::TooMany, "at most 2^20 entries"));
        }
        out.push(c.u64(field)?);
    }
    Ok(())
}

/// Parses /proc/stat into `out`, reusing its vectors.
pub fn parse_into(buf: &[u8], out: &mut Stat) -> Result<(), ParseError> {
    let mut c = Cursor::new(buf)?;
    out.cpus.clear();
    out.irq_counts.clear();
    out.softirq_counts.clear();
    out.procs_running = None;
    out.procs_blocked = None;
    out.softirq_total = None;
    let (mut seen_cpu, mut seen_ctxt, mut seen_btime, mut seen_processes) =
        (false, false, false, false);
    let mut last_line = 0;
    while !c.at_end() {
        last_line = c.line();
        let key = c.word();
        match key {
            b"cpu" => {
                out.total = parse_cpu_row(&mut c)?;
                seen_cpu = true;
            }
            b"intr" => {
                out.intr_total = c.u64("intr")?;
                counts_to_eol(&mut c, &mut out.irq_counts, "intr", MAX_IRQS)?;
            }
            b"ctxt" => {
                out.ctxt = c.u64("ctxt")?;
                seen_ctxt = true;
            }
            b"btime" => {
                out.btime_secs = c.u64("btime")?;
                seen_btime = true;
            }
            b"processes" => {
                out.processes = c.u64("processes")?;
                seen_processes = true;
            }
            b"procs_running" => out.procs_running = Some(c.u64("procs_running")?),
            b"procs_blocked" => out.procs_blocked = Some(c.u64("procs_blocked")?),
            b"softirq" => {
                out.softirq_total = Some(c.u64("softirq")?);
                counts_to_eol(&mut c, &mut out.softirq_counts, "softirq", MAX_IRQS)?;
            }
            _ if key.len() > 3 && key.starts_with(b"cpu") => {
                let cpu = crate::cursor::parse_u64_word(&key[3..])
                    .filter(|&n| n < MAX_CPUS as u64)
                    .ok_or_else(|| {
                        c.err("cpu", ParseErrorKind::Invalid, "cpuN with N below 65536")
                    })?;
                if out.cpus.len() >= MAX_CPUS {
                    return Err(c.err("cpu", ParseErrorKind::TooMany, "at most 65536 cpu rows"));
                }
                let times = parse_cpu_row(&mut c)?;
                out.cpus.push(PerCpuTimes {
                    cpu: cpu as u32,
                    times,
                });
            }
            _ => {}
        }
        c.next_line();
    }
    let line = last_line.max(1);
    for (seen, field) in [
        (seen_cpu, "cpu"),
        (seen_ctxt, "ctxt"),
        (seen_btime, "btime"),
        (seen_processes, "processes"),
    ] {
        if !seen {
            return Err(ParseError::new(
                line,
                field,
                ParseErrorKind::Missing,
                "a line starting with this key",
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &[u8] = b"cpu  1018 0 396 7444 97 0 19 2 0 0
cpu0 421 0 179 3809 60 0 8 0 0 0
cpu1 597 0 217 3634 37 0 11 1 0 0
intr 71445 0 3 0 12
ctxt 155874
btime 1795315880
processes 1614
procs_running 1
procs_blocked 0
softirq 25391 0 2418 3 610 4826 0 3 9441 0 8090
";

    #[test]
    fn exact_values() {
        let s = parse(SAMPLE).unwrap();
        assert_eq!(s.total.ticks(CpuMode::User), Some(1018));
        assert_eq!(s.total.ticks(CpuMode::Idle), Some(7444));
        assert_eq!(s.total.ticks(CpuMode::GuestNice), Some(0));
        assert_eq!(s.total.total_ticks(), 1018 + 396 + 7444 + 97 + 19 + 2);
        assert_eq!(s.cpus.len(), 2);
        assert_eq!(s.cpus[1].cpu, 1);
        assert_eq!(s.cpus[1].times.ticks(CpuMode::Softirq), Some(11));
        assert_eq!(s.intr_total, 71445);
        assert_eq!(s.irq_counts, vec![0, 3, 0, 12]);
        assert_eq!(
            (s.ctxt, s.btime_secs, s.processes),
            (155874, 1795315880, 1614)
        );
        assert_eq!((s.procs_running, s.procs_blocked), (Some(1), Some(0)));
        assert_eq!(s.softirq_total, Some(25391));
        assert_eq!(s.softirq_counts.len(), 10);
    }

    #[test]
    fn old_kernel_with_seven_columns_and_page_lines() {
        let s = parse(b"cpu  1 2 3 4 5 6 7\ncpu0 1 2 3 4 5 6 7\npage 5 6\nintr 0\nctxt 1\nbtime 2\nprocesses 3\n").unwrap();
        assert_eq!(s.total.columns(), 7);
        assert_eq!(s.total.ticks(CpuMode::Steal), None);
        assert_eq!(s.procs_running, None);
        assert_eq!(s.softirq_total, None);
    }

    #[test]
    fn newer_kernel_extra_column_and_unknown_line() {
        let s = parse(b"cpu  1 2 3 4 5 6 7 8 9 10 11\nfuture 1 2\nctxt 1\nbtime 2\nprocesses 3\n")
            .unwrap();
        assert_eq!(s.total.columns(), 10);
        assert_eq!(s.total.ticks(CpuMode::GuestNice), Some(10));
    }

    #[test]
    fn missing_ctxt_names_field() {
        let e = parse(b"cpu  1 2 3 4\nbtime 2\nprocesses 3\n").unwrap_err();
        assert_eq!((e.field, e.kind), ("ctxt", ParseErrorKind::Missing));
    }

    #[test]
    fn garbage_in_cpu_row_names_line_and_field() {
        let e = parse(b"cpu  1 2 3 4\ncpu0 1 x 3 4\n").unwrap_err();
        assert_eq!(
            (e.line, e.field, e.kind),
            (2, "nice_ticks", ParseErrorKind::Invalid)
        );
    }

    #[test]
    fn too_few_cpu_columns() {
        let e = parse(b"cpu  1 2 3\n").unwrap_err();
        assert_eq!((e.field, e.kind), ("idle_ticks", ParseErrorKind::Missing));
    }

    /// A copy that lost its final newline reads whole; a line cut short
    /// is named, never guessed.
    #[test]
    fn a_missing_final_newline_is_read_and_a_cut_line_named() {
        let whole = &SAMPLE[..SAMPLE.len() - 1];
        assert_eq!(parse(whole).unwrap(), parse(SAMPLE).unwrap());
        let e = parse(b"cpu  1 2 3 4\ncpu0 1 2").unwrap_err();
        assert_eq!((e.line, e.kind), (2, ParseErrorKind::Missing));
    }

    #[test]
    fn bad_cpu_number() {
        let e = parse(b"cpu99999999 1 2 3 4\n").unwrap_err();
        assert_eq!((e.field, e.kind), ("cpu", ParseErrorKind::Invalid));
    }

    #[test]
    fn reuse_keeps_no_stale_rows() {
        let mut s = parse(SAMPLE).unwrap();
        parse_into(b"cpu  1 2 3 4\nctxt 1\nbtime 2\nprocesses 3\n", &mut s).unwrap();
        assert!(s.cpus.is_empty() && s.irq_counts.is_empty() && s.softirq_counts.is_empty());
        assert_eq!(s.softirq_total, None);
    }
}
