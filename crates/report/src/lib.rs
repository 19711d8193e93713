//! `quietstat report`'s sections: sar-style tables over the recorded
//! history. Each section is one file under `section/`, behind
//! [`Section`] (its name, the recorded sources it reads, its columns, its
//! rows), listed once in [`SECTIONS`]; every figure comes from `model`, on
//! the raw counters the store gives back. [`render`] writes the sections
//! as a table, CSV or JSON through [`table`], the writer `ps` uses too.

use procfs::Source;
use serde_json::json;
use store::{History, when};
use sys::Error;

mod section;
pub mod table;
mod window;

pub use section::SECTIONS;
pub use window::{Options, Window};

use table::Table;

/// One report section.
pub trait Section: Sync {
    /// Its name (`report --source NAME`).
    fn name(&self) -> &'static str;
    /// The recorded system sources it reads, the one each row needs
    /// first; none for the sections of the process history.
    fn sources(&self) -> &'static [Source];
    /// Its first column.
    fn first_column(&self) -> &'static str {
        "time"
    }
    /// Its columns after the first.
    fn columns(&self) -> &'static [&'static str];
    /// Its rows over the window.
    fn report(&self, h: &History, w: &Window, o: &Options) -> Result<Report, Error>;
}

/// A section's rows and the stretches without data inside the range.
#[derive(Debug, Clone)]
pub struct Report {
    pub name: &'static str,
    pub table: Table,
    /// (from, to, why), unix ms.
    pub gaps: Vec<(u64, u64, String)>,
}

/// The section named `name`.
pub fn section(name: &str) -> Option<&'static dyn Section> {
    SECTIONS.iter().copied().find(|s| s.name() == name)
}

/// Every section's name, in the order of [`SECTIONS`].
pub fn names() -> Vec<&'static str> {
    SECTIONS.iter().map(|s| s.name()).collect()
}

/// The process ranking for `sort`: `cpu` or a process field.
pub fn rank(sort: &str) -> Result<model::process::Rank, Error> {
    use model::columns::Column;
    use model::process::Rank;
    match sort {
        "cpu" => Ok(Rank::CpuPct),
        f => Column::find(f).map(Rank::Column).ok_or_else(|| {
            Error::invalid(format!("--sort {f}: not a process field; accepted: cpu, rss_bytes, vsize_bytes, minflt, majflt, threads, utime_ns, stime_ns, read_bytes, write_bytes, pid, ..."))
        }),
    }
}

/// `--sort` for the sections named: the process ranking (`cpu` or a
/// process field) when `proc` is among them, the cgroups' (cpu, memory,
/// io, pids, path) when `cgroup` is; each is refused only by a section
/// that uses it.
pub fn sorts(
    sort: &str,
    names: &[&str],
) -> Result<(model::process::Rank, model::cgroup::Sort), Error> {
    let rank = if names.contains(&"proc") {
        rank(sort)?
    } else {
        model::process::Rank::CpuPct
    };
    let cg = if names.contains(&"cgroup") {
        model::cgroup::Sort::parse(sort).map_err(|e| e.context(format!("--sort {sort}")))?
    } else {
        model::cgroup::Sort::Cpu
    };
    Ok((rank, cg))
}

/// The output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Table,
    Csv,
    Json,
}

impl Format {
    pub fn parse(s: &str) -> Result<Format, Error> {
        match s {
            "table" => Ok(Format::Table),
            "csv" => Ok(Format::Csv),
            "json" => Ok(Format::Json),
            _ => Err(Error::invalid(format!(
                "--format {s}: accepted: table, csv, json"
            ))),
        }
    }
}

/// The sections as `format`; `skipped` names the files the history could
/// not read (a CSV has no place for them: the caller says them apart).
pub fn render(reports: &[Report], w: &Window, format: Format, skipped: &[String]) -> String {
    let mut out = String::new();
    match format {
        Format::Json => {
            let mut secs = serde_json::Map::new();
            for s in reports {
                let gaps: Vec<serde_json::Value> = s
                    .gaps
                    .iter()
                    .map(|(a, b, why)| json!({"from": when::format(*a, true), "to": when::format(*b, true), "why": why}))
                    .collect();
                secs.insert(
                    s.name.to_string(),
                    json!({"rows": s.table.json_rows(), "gaps": gaps}),
                );
            }
            let v = json!({
                "from": when::format(w.from, true),
                "to": when::format(w.to, true),
                "from_ms": w.from,
                "to_ms": w.to,
                "sections": secs,
                "skipped": skipped,
            });
            out = serde_json::to_string_pretty(&v).unwrap_or_default();
            out.push('\n');
        }
        Format::Csv => {
            for (i, s) in reports.iter().enumerate() {
                if i > 0 {
                    out.push('\n');
                }
                s.table.csv(&mut out);
            }
        }
        Format::Table => {
            for f in skipped {
                out += &format!("# skipped: {f}\n");
            }
            for s in reports {
                text_section(&mut out, s, w);
            }
        }
    }
    out
}

/// One section as a text table, its gaps in time order among the rows.
fn text_section(out: &mut String, s: &Report, w: &Window) {
    out.push_str(&format!(
        "# {} from {} to {}\n",
        s.name,
        when::format(w.from, true),
        when::format(w.to, true)
    ));
    let gap = |(a, b, why): &(u64, u64, String)| {
        format!(
            "-- no data from {} to {}: {why} --\n",
            when::format(*a, w.dates),
            when::format(*b, w.dates)
        )
    };
    let mut lines = s.table.lines("  ").into_iter();
    if let Some(head) = lines.next() {
        out.push_str(&head);
        out.push('\n');
    }
    let mut gaps = s.gaps.iter().peekable();
    for (line, row) in lines.zip(&s.table.rows) {
        let first = row.first().map(table::Cell::shown).unwrap_or_default();
        while let Some(g) = gaps.peek() {
            if when::format(g.1, w.dates) <= first || s.name == "store" {
                out.push_str(&gap(g));
                gaps.next();
            } else {
                break;
            }
        }
        out.push_str(&line);
        out.push('\n');
    }
    for g in gaps {
        out.push_str(&gap(g));
    }
    if s.table.rows.is_empty() && s.gaps.is_empty() {
        out.push_str("(no data in this range)\n");
    }
    out.push('\n');
}

/// The sections named; an unknown name is refused, naming those accepted.
pub fn sections(names: &[&str]) -> Result<Vec<&'static dyn Section>, Error> {
    names
        .iter()
        .map(|n| {
            section(n).ok_or_else(|| {
                Error::invalid(format!(
                    "--source {n}: accepted: {}",
                    self::names().join(", ")
                ))
            })
        })
        .collect()
}

/// The sections named, over the window.
pub fn run(h: &History, w: &Window, names: &[&str], o: &Options) -> Result<Vec<Report>, Error> {
    sections(names)?.iter().map(|s| s.report(h, w, o)).collect()
}
