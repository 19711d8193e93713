//! `quietstat ps`: one process-table snapshot, printed.

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};
use clap::{Args as ClapArgs, ValueEnum};
use model::columns::{Column, Extra, NoExtra, Row, Value};
use proctable::{BackendChoice, Field, Fields, ProcTable, Query};
use report::table::{Align, Aligned, csv_cell, csv_row};
use serde_json::json;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum PsFormat {
    Table,
    Json,
    Csv,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum BackendArg {
    Auto,
    Agent,
    Bpf,
    Procfs,
}

#[derive(ClapArgs)]
pub struct Args {
    /// Comma-separated fields (or `all`); `--fields help` lists them.
    #[arg(
        long,
        default_value = "pid,ppid,state,threads,utime,stime,rss,cpu,comm"
    )]
    fields: String,
    /// Only these PIDs (comma-separated).
    #[arg(long, value_delimiter = ',')]
    pids: Option<Vec<u32>>,
    /// One row per thread.
    #[arg(long)]
    threads: bool,
    /// Sort by this field or column; prefix with `-` for descending
    /// (`--sort=-utime`, `--sort=-write_bytes`).
    #[arg(long, allow_hyphen_values = true)]
    sort: Option<String>,
    #[arg(long, value_enum, default_value = "table")]
    format: PsFormat,
    /// auto: a running agent's table when it is fresh enough (--max-age)
    /// and has the fields asked for, else BPF when it loads (root, or
    /// CAP_BPF and CAP_PERFMON), else procfs. agent: the agent's table only.
    #[arg(long, value_enum, default_value = "auto")]
    backend: BackendArg,
    /// The oldest agent table accepted: with auto, an older one is passed
    /// over for a snapshot of our own; with agent, it is an error.
    /// Default for auto: 10s (twice the agent's process interval).
    #[arg(long, value_parser = crate::parse_duration, value_name = "D")]
    max_age: Option<Duration>,
    /// The agent's shared-memory snapshot; its process table is beside it.
    #[arg(long, value_name = "PATH", default_value = "/run/quietstat/snapshot")]
    shm_path: PathBuf,
}

/// The default `--max-age` for auto.
const AUTO_MAX_AGE: Duration = Duration::from_secs(10);

/// Where the rows came from: the agent's published table, or a snapshot
/// of our own (which keeps command lines).
enum Taken {
    /// The table's age when read, in milliseconds.
    Agent(f64),
    Own(Box<ProcTable>),
}

impl Taken {
    fn backend(&self) -> &'static str {
        match self {
            Taken::Agent(_) => "agent",
            Taken::Own(t) => t.backend().name(),
        }
    }

    fn extra(&self) -> &dyn Extra {
        match self {
            Taken::Agent(_) => &NoExtra,
            Taken::Own(t) => t.as_ref(),
        }
    }
}

/// The agent's table when it is live, fresh enough and has `fields`;
/// otherwise why not.
fn agent_table(
    shm_path: &Path,
    fields: Fields,
    max_age: Option<Duration>,
) -> Result<shm::view::ProcView> {
    use shm::view::Refusal;
    shm::view::read_agent_procs(shm_path, fields, max_age).map_err(|r| match r {
        Refusal::View(e) => anyhow::Error::new(e),
        Refusal::Lacks { .. } => anyhow!("{r}; use --backend bpf or procfs for them"),
        Refusal::TooOld { age, max } => anyhow!(
            "the agent's table is {:.1}s old, older than --max-age {}",
            age.as_secs_f64(),
            humantime::format_duration(max)
        ),
    })
}

/// The columns shown for `fields`, in order (a field may give several: io,
/// ctxsw, policy).
fn columns(fields: &[Field]) -> Vec<&'static Column> {
    fields.iter().flat_map(|&f| Column::for_field(f)).collect()
}

/// A value as a text table shows it: absent is `-`, text escaped.
fn shown(v: &Value<'_>, out: &mut String) {
    use std::fmt::Write as _;
    let _ = match v {
        Value::Absent => write!(out, "-"),
        Value::Text(t) => write!(out, "{}", model::text::printable(t)),
        other => write!(out, "{other}"),
    };
}

pub fn run(proc_root: &Path, sys_root: &Path, args: &Args) -> Result<ExitCode> {
    if args.fields == "help" {
        for &f in Field::ALL {
            let cols: Vec<&str> = Column::for_field(f).map(|c| c.name).collect();
            println!("{:<9} {}: {}", f.name(), cols.join(", "), f.describe());
        }
        return Ok(ExitCode::SUCCESS);
    }
    let order = Field::parse_list(&args.fields)?;
    let fields = order.iter().fold(Fields::NONE, |s, &f| s.with(f));
    if order.is_empty() {
        bail!("--fields is empty; give a comma-separated list such as pid,comm,utime (or all)");
    }
    let sort = args.sort.as_deref().map(sort_column).transpose()?;
    // Sorting on a field reads it even if it is not shown.
    let read = match sort {
        Some((c, _)) => fields.with(c.field),
        None => fields,
    };
    if read.has(Field::DelayAcct) && proctable::delay_accounting_on(proc_root) == Some(false) {
        eprintln!(
            "quietstat ps: kernel.task_delayacct is 0: the delays do not grow (sysctl -w kernel.task_delayacct=1 to count them from now)"
        );
    }
    let choice = match args.backend {
        BackendArg::Auto | BackendArg::Agent => BackendChoice::Auto,
        BackendArg::Bpf => BackendChoice::Bpf,
        BackendArg::Procfs => BackendChoice::Procfs,
    };
    // The agent's table holds processes, not threads, of the host's /proc.
    let agent = match args.backend {
        BackendArg::Agent if args.threads => {
            bail!("--backend agent: the agent's table has no threads; use --backend bpf or procfs")
        }
        BackendArg::Agent => Some(
            agent_table(&args.shm_path, read, args.max_age)
                .with_context(|| format!("--backend agent ({})", args.shm_path.display()))?,
        ),
        BackendArg::Auto if !args.threads && proc_root == Path::new("/proc") => agent_table(
            &args.shm_path,
            read,
            Some(args.max_age.unwrap_or(AUTO_MAX_AGE)),
        )
        .ok(),
        _ => None,
    };
    let mut rows = Vec::new();
    let taken = match agent {
        Some(mut view) => {
            rows = std::mem::take(&mut view.procs);
            if let Some(pids) = &args.pids {
                rows.retain(|p| pids.contains(&p.pid));
            }
            Taken::Agent(sys::mono_ns().saturating_sub(view.meta.mono_ns) as f64 / 1e6)
        }
        None => {
            let mut table = ProcTable::open(choice, proc_root, sys_root)?;
            if let Some(why) = table.fallback_reason() {
                eprintln!("quietstat: using the procfs backend: BPF unavailable: {why}");
            }
            if let Some(why) = table.bpf().and_then(|b| b.walk_unavailable()) {
                eprintln!(
                    "quietstat: BPF backend uses the task iterator: the walk is unavailable: {why}"
                );
            }
            let query = Query {
                fields: read.with(Field::Pid),
                threads: args.threads,
                pids: args.pids.clone(),
            };
            table.snapshot(&query, &mut rows)?;
            if read.has(Field::Net) {
                match table.bpf() {
                    None => eprintln!(
                        "quietstat ps: no network bytes: the procfs backend cannot give them (/proc/PID/net is the network namespace's, not the process's); the BPF backend reads them"
                    ),
                    Some(b) => {
                        if let Some(why) = b.net_unavailable() {
                            eprintln!("quietstat ps: no network bytes: {why}");
                        }
                    }
                }
            }
            if read.has(Field::Gpu) {
                let note = table.gpu_note();
                if !note.is_empty() {
                    eprintln!("quietstat ps: GPU figures: {note}");
                }
            }
            if let (n @ 1.., first) = table.unreadable() {
                eprintln!(
                    "quietstat ps: {n} processes left out: their files could not be read (first: {})",
                    first.unwrap_or("?")
                );
            }
            Taken::Own(Box::new(table))
        }
    };
    let extra = taken.extra();
    if let Some((col, desc)) = sort {
        rows.sort_by(|a, b| {
            let o = col.value(a, extra).compare(&col.value(b, extra));
            if desc { o.reverse() } else { o }
        });
    }
    let cols = columns(&order);
    // One write per buffer, not per row.
    let mut out = BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    write_rows(&mut out, args, &rows, &cols, &taken)?;
    out.flush()?;
    // As `ps -p`: asking for processes and finding none is a failure.
    if args.pids.is_some() && rows.is_empty() {
        eprintln!("quietstat: no process with the pids asked for");
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}

/// `--sort`: a column's name (`rss_bytes`, `write_bytes`) or a field's
/// (`rss`, `io`: its first column), `-` before it for descending.
fn sort_column(s: &str) -> Result<(&'static Column, bool)> {
    let (desc, name) = match s.strip_prefix('-') {
        Some(n) => (true, n),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    let col = match Column::find(name) {
        Some(c) => c,
        None => {
            let f = Fields::parse(name)?;
            let field = f
                .iter()
                .next()
                .filter(|_| f.iter().count() == 1)
                .with_context(|| {
                    format!(
                        "--sort takes one field or column name, optionally prefixed by - or +; got {s:?}"
                    )
                })?;
            columns(&[field])[0]
        }
    };
    Ok((col, desc))
}

/// The rows in `args.format`: JSON, CSV or an aligned table.
fn write_rows(
    out: &mut impl Write,
    args: &Args,
    rows: &[proctable::Proc],
    cols: &[&'static Column],
    taken: &Taken,
) -> Result<()> {
    let extra = taken.extra();
    match args.format {
        PsFormat::Json => {
            let json_rows: Vec<Row> = rows
                .iter()
                .map(|p| Row {
                    proc: p,
                    columns: cols,
                    extra,
                })
                .collect();
            writeln!(
                out,
                "{}",
                serde_json::to_string_pretty(&json!({
                    "backend": taken.backend(),
                    "threads": args.threads,
                    "age_ms": match taken { Taken::Agent(ms) => json!(ms), Taken::Own(_) => json!(0) },
                    "rows": json_rows,
                }))?
            )?;
        }
        PsFormat::Csv => {
            // Row by row through two reused buffers: tens of thousands of
            // rows.
            let (mut line, mut cell) = (String::new(), String::new());
            csv_row(cols.iter().map(|c| Some(c.name)), &mut line);
            out.write_all(line.as_bytes())?;
            for p in rows {
                line.clear();
                for (i, c) in cols.iter().enumerate() {
                    let v = c.value(p, extra);
                    cell.clear();
                    let absent = matches!(v, Value::Absent);
                    if !absent {
                        shown(&v, &mut cell);
                    }
                    csv_cell(i == 0, (!absent).then_some(cell.as_str()), &mut line);
                }
                line.push('\n');
                out.write_all(line.as_bytes())?;
            }
        }
        PsFormat::Table => {
            let names: Vec<&'static str> = cols.iter().map(|c| c.name).collect();
            let align: Vec<Align> = cols
                .iter()
                .map(|c| match c.field {
                    Field::Comm | Field::Cmdline => Align::Left,
                    _ => Align::Right,
                })
                .collect();
            // Cells formatted in place: tens of thousands of rows.
            let mut t = Aligned::new(&names, &align);
            for p in rows {
                for c in cols {
                    t.push_with(|s| shown(&c.value(p, extra), s));
                }
            }
            t.write(" ", out)?;
        }
    }
    Ok(())
}
