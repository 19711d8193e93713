//! The layout /proc/interrupts and /proc/softirqs share: a header naming one
//! column per online CPU (`CPU0 CPU1 ...`), then one row per source:
//! `LABEL: COUNT COUNT ... [DESCRIPTION]`. Labels and descriptions go into one
//! reused byte arena, counts into one flat vector, so a warm table parses
//! without allocating.

use serde::Serialize;
use serde::ser::{SerializeMap, SerializeSeq};
use std::ops::Range;

use crate::cursor::{Cursor, parse_u64_word};
use crate::error::{ParseError, ParseErrorKind};
use crate::limits::{MAX_CPUS, MAX_IRQS};

#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct RowIndex {
    label: Range<u32>,
    desc: Range<u32>,
    counts: Range<u32>,
    total: u64,
}

/// A parsed per-CPU table. Counts are per column; a row may hold fewer values
/// than there are columns (`ERR:` and `MIS:` in /proc/interrupts hold one).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CpuTable {
    cpus: Vec<u32>,
    rows: Vec<RowIndex>,
    counts: Vec<u64>,
    text: String,
}

/// One row of a [`CpuTable`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Row<'a> {
    /// The label before the colon: an IRQ number, `NMI`, `LOC`, `TIMER`, ...
    pub label: &'a str,
    /// Text after the counts: chip, hwirq and handler names, or a description.
    pub description: &'a str,
    /// One count per column, in column order.
    pub counts: &'a [u64],
    /// Sum of `counts`.
    pub total: u64,
}

impl<'a> Serialize for Row<'a> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(4))?;
        m.serialize_entry("label", self.label)?;
        m.serialize_entry("description", self.description)?;
        m.serialize_entry("total", &self.total)?;
        m.serialize_entry("counts", self.counts)?;
        m.end()
    }
}

impl CpuTable {
    /// CPU numbers of the columns (offline CPUs have none).
    pub fn cpus(&self) -> &[u32] {
        &self.cpus
    }

    pub fn len(&self) -> usize {
        self.rows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    pub fn row(&self, i: usize) -> Option<Row<'_>> {
        let r = self.rows.get(i)?;
        let text = |r: &Range<u32>| &self.text[r.start as usize..r.end as usize];
        Some(Row {
            label: text(&r.label),
            description: text(&r.desc),
            counts: &self.counts[r.counts.start as usize..r.counts.end as usize],
            total: r.total,
        })
    }

    pub fn rows(&self) -> impl ExactSizeIterator<Item = Row<'_>> + '_ {
        (0..self.rows.len()).map(|i| self.row(i).expect("index in range"))
    }

    /// The row with this label.
    pub fn find(&self, label: &str) -> Option<Row<'_>> {
        self.rows().find(|r| r.label == label)
    }

    /// Sum of every row's total.
    pub fn grand_total(&self) -> u64 {
        self.rows
            .iter()
            .fold(0u64, |a, r| a.saturating_add(r.total))
    }
}

impl Serialize for CpuTable {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        struct Rows<'a>(&'a CpuTable);
        impl Serialize for Rows<'_> {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let mut seq = s.serialize_seq(Some(self.0.len()))?;
                for r in self.0.rows() {
                    seq.serialize_element(&r)?;
                }
                seq.end()
            }
        }
        let mut m = s.serialize_map(Some(2))?;
        m.serialize_entry("cpus", &self.cpus)?;
        m.serialize_entry("rows", &Rows(self))?;
        m.end()
    }
}

fn push_text(text: &mut String, bytes: &[u8]) -> Range<u32> {
    let start = text.len() as u32;
    match std::str::from_utf8(bytes) {
        Ok(s) => text.push_str(s),
        // Kernel text is ASCII; anything else is shown, not trusted.
        Err(_) => text.extend(
            bytes
                .iter()
                .map(|&b| if b.is_ascii() { b as char } else { '?' }),
        ),
    }
    start..text.len() as u32
}

/// Parses a per-CPU table into `out`, reusing its storage.
pub(crate) fn parse_into(buf: &[u8], out: &mut CpuTable) -> Result<(), ParseError> {
    let mut c = Cursor::new(buf)?;
    out.cpus.clear();
    out.rows.clear();
    out.counts.clear();
    out.text.clear();
    if c.at_end() {
        return Err(c.err("header", ParseErrorKind::Missing, "a header of CPU columns"));
    }
    loop {
        let w = c.word();
        if w.is_empty() {
            break;
        }
        let cpu = w
            .strip_prefix(b"CPU")
            .and_then(parse_u64_word)
            .filter(|&n| n < MAX_CPUS as u64)
            .ok_or_else(|| {
                c.err(
                    "header",
                    ParseErrorKind::Invalid,
                    "columns named CPU0 CPU1 ...",
                )
            })?;
        if out.cpus.len() >= MAX_CPUS {
            return Err(c.err(
                "header",
                ParseErrorKind::TooMany,
                "at most 65536 CPU columns",
            ));
        }
        out.cpus.push(cpu as u32);
    }
    c.next_line();
    let ncpus = out.cpus.len();
    while !c.at_end() {
        let label = c.word();
        let Some(label) = label.strip_suffix(b":").filter(|l| !l.is_empty()) else {
            return Err(c.err(
                "label",
                ParseErrorKind::Invalid,
                "a row label ending with ':'",
            ));
        };
        if out.rows.len() >= MAX_IRQS {
            return Err(c.err("label", ParseErrorKind::TooMany, "at most 2^20 rows"));
        }
        let label = push_text(&mut out.text, label);
        let start = out.counts.len() as u32;
        let mut total = 0u64;
        for _ in 0..ncpus {
            if !c.at_digit() {
                break;
            }
            let v = c.u64("count")?;
            total = total.saturating_add(v);
            out.counts.push(v);
        }
        let counts = start..out.counts.len() as u32;
        let desc = c.rest_of_line();
        let desc = push_text(&mut out.text, desc);
        out.rows.push(RowIndex {
            label,
            desc,
            counts,
            total,
        });
        c.next_line();
    }
    Ok(())
}
