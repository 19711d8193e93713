//! The time window a report covers and the walk over its samples: one row
//! per interval, rates from the two samples that bound it, and a pause in
//! the samples (three sampling steps and more) shown as a gap, never
//! bridged by a rate.

use model::process::Rank;
use procfs::SystemSample;
use store::{History, when};
use sys::Error;

use crate::table::{Cell, Table, text};
use crate::{Report, Section};

/// What the process and cgroup sections list.
#[derive(Debug, Clone)]
pub struct Options {
    /// Processes (and interrupts) per interval.
    pub top: usize,
    pub rank: Rank,
    /// Only this process (a reused PID is another process, its own rows).
    pub pid: Option<u32>,
    /// Only processes of this name.
    pub comm: Option<String>,
    /// The cgroups' ranking.
    pub cgroup_sort: model::cgroup::Sort,
    /// Only this cgroup and those below it.
    pub cgroup: Option<String>,
}

impl Options {
    /// Whether the process `pid` named `comm` is one `--pid` and `--comm`
    /// keep.
    pub fn keeps(&self, pid: u32, comm: &procfs::pid::Comm) -> bool {
        self.pid.is_none_or(|p| pid == p)
            && self
                .comm
                .as_deref()
                .is_none_or(|c| comm.as_bytes() == c.as_bytes())
    }
}

/// The range reported and its interval.
#[derive(Debug, Clone)]
pub struct Window {
    /// Unix ms, inclusive.
    pub from: u64,
    pub to: u64,
    /// One row per this many ms.
    pub every: u64,
    /// Times carry their date (the range spans days).
    pub dates: bool,
    /// Why the recorder was not recording, where it said.
    pub recorded_gaps: Vec<store::Gap>,
}

impl Window {
    pub fn new(h: &History, from: u64, to: u64, every_ms: u64) -> Result<Window, Error> {
        Ok(Window {
            from,
            to,
            every: every_ms.max(1),
            dates: store::db::day_of(from) != store::db::day_of(to),
            recorded_gaps: h.gaps(from, to)?,
        })
    }

    pub fn time(&self, ms: u64) -> Cell {
        text(when::format(ms, self.dates))
    }

    /// Whether a row is due at `ts` for an interval that began at `t0`.
    pub fn due(&self, t0: u64, ts: u64) -> bool {
        ts / self.every != t0 / self.every || ts - t0 >= self.every
    }

    fn why(&self, a: u64, b: u64) -> String {
        self.recorded_gaps
            .iter()
            .find(|g| g.start_ms < b && g.end_ms > a)
            .map_or_else(|| "no samples".to_string(), |g| g.why.clone())
    }
}

/// Finds the pauses in a run of samples: one longer than three sampling
/// steps (and `floor` ms) is a gap, never bridged by a rate.
pub(crate) struct Steps {
    last: u64,
    step: u64,
    floor: u64,
    pub gaps: Vec<(u64, u64, String)>,
}

impl Steps {
    pub fn new(floor: u64) -> Steps {
        Steps {
            last: 0,
            step: 0,
            floor,
            gaps: Vec::new(),
        }
    }

    /// Takes the sample at `ts`; true when a gap lies before it.
    pub fn gap(&mut self, w: &Window, ts: u64) -> bool {
        let step = ts.saturating_sub(self.last);
        let gap = self.last > 0 && step > (3 * self.step).max(self.floor);
        if gap {
            self.gaps.push((self.last, ts, w.why(self.last, ts)));
        }
        if self.last > 0 && !gap {
            // The usual step: the smallest seen, drifting up slowly.
            self.step = if self.step == 0 {
                step
            } else {
                self.step.min(step).max(step / 2)
            };
        }
        self.last = ts;
        gap
    }
}

/// An empty report of `section` (its first column, then its own).
pub(crate) fn empty(section: &dyn Section) -> Report {
    let mut columns = vec![section.first_column()];
    columns.extend_from_slice(section.columns());
    Report {
        name: section.name(),
        table: Table::new(columns),
        gaps: Vec::new(),
    }
}

/// Adds the rows for one interval ending at the time given, from the
/// samples that bound it.
pub(crate) type RowFn<'a> = dyn FnMut(u64, &SystemSample, &SystemSample, &mut Vec<Vec<Cell>>) + 'a;

/// Walks the samples of the section's sources (a row needs the first),
/// calling `row` with the two samples that bound each interval; a pause
/// longer than three steps (and 5 s) is a gap.
pub(crate) fn system_pass(
    h: &History,
    w: &Window,
    section: &dyn Section,
    row: &mut RowFn<'_>,
) -> Result<Report, Error> {
    let sources = section.sources();
    let primary = sources[0];
    let mut start: Option<(u64, SystemSample)> = None;
    let mut steps = Steps::new(5000);
    let mut rows = Vec::new();
    h.system(w.from, w.to, sources, &mut |ts, s| {
        if !s.ok(primary) {
            return;
        }
        if steps.gap(w, ts) {
            start = None;
        }
        match &start {
            None => start = Some((ts, s.clone())),
            Some((t0, s0)) if w.due(*t0, ts) => {
                row(ts, s0, s, &mut rows);
                start = Some((ts, s.clone()));
            }
            Some(_) => {}
        }
    })?;
    let mut r = empty(section);
    r.table.rows = rows;
    r.gaps = steps.gaps;
    Ok(r)
}

/// Bytes in MiB.
pub(crate) fn mib(b: Option<u64>) -> Cell {
    crate::table::num(b.map(model::units::bytes_to_mib))
}
