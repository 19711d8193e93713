//! `quietstat ps`: one process-table snapshot, printed.

use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::{Args as ClapArgs, ValueEnum};
use model::columns::{Column, Row, Value};
use proctable::{BackendChoice, Field, Fields, ProcTable, Query};
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
    /// auto: BPF when it loads (root, or CAP_BPF and CAP_PERFMON), else procfs.
    #[arg(long, value_enum, default_value = "auto")]
    backend: BackendArg,
}

/// The columns shown for `fields`, in order (a field may give several: io,
/// ctxsw, policy).
fn columns(fields: &[Field]) -> Vec<&'static Column> {
    fields.iter().flat_map(|&f| Column::for_field(f)).collect()
}

fn text(v: &Value<'_>) -> String {
    match v {
        Value::Absent => "-".into(),
        other => other.to_string(),
    }
}

fn csv_cell(v: &Value<'_>) -> String {
    let s = v.to_string();
    if s.contains([',', '"', '\n', '\r']) || s.starts_with(' ') || s.ends_with(' ') {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s
    }
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
    let sort = match &args.sort {
        Some(s) => {
            let (desc, name) = match s.strip_prefix('-') {
                Some(n) => (true, n),
                None => (false, s.strip_prefix('+').unwrap_or(s)),
            };
            // A column's name (`rss_bytes`, `write_bytes`), or a field's
            // (`rss`, `io`: its first column).
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
            Some((col, desc))
        }
        None => None,
    };
    // Sorting on a field reads it even if it is not shown.
    let read = match sort {
        Some((c, _)) => fields.with(c.field),
        None => fields,
    };
    let choice = match args.backend {
        BackendArg::Auto => BackendChoice::Auto,
        BackendArg::Bpf => BackendChoice::Bpf,
        BackendArg::Procfs => BackendChoice::Procfs,
    };
    let mut table = ProcTable::open(choice, proc_root, sys_root)?;
    if let Some(why) = table.fallback_reason() {
        eprintln!("quietstat: using the procfs backend: BPF unavailable: {why}");
    }
    if let Some(why) = table.bpf().and_then(|b| b.walk_unavailable()) {
        eprintln!("quietstat: BPF backend uses the task iterator: the walk is unavailable: {why}");
    }
    let query = Query {
        fields: read.with(Field::Pid),
        threads: args.threads,
        pids: args.pids.clone(),
    };
    let mut rows = Vec::new();
    table.snapshot(&query, &mut rows)?;
    if let Some((col, desc)) = sort {
        rows.sort_by(|a, b| {
            let o = col.value(a, &table).compare(&col.value(b, &table));
            if desc { o.reverse() } else { o }
        });
    }
    let cols = columns(&order);
    match args.format {
        PsFormat::Json => {
            let out: Vec<Row> = rows
                .iter()
                .map(|p| Row {
                    proc: p,
                    columns: &cols,
                    extra: &table,
                })
                .collect();
            println!(
                "{}",
                serde_json::to_string_pretty(&json!({
                    "backend": table.backend().name(),
                    "threads": args.threads,
                    "rows": out,
                }))?
            );
        }
        PsFormat::Csv => {
            let header: Vec<&str> = cols.iter().map(|c| c.name).collect();
            println!("{}", header.join(","));
            for p in &rows {
                let cells: Vec<String> =
                    cols.iter().map(|c| csv_cell(&c.value(p, &table))).collect();
                println!("{}", cells.join(","));
            }
        }
        PsFormat::Table => {
            let cells: Vec<Vec<String>> = rows
                .iter()
                .map(|p| cols.iter().map(|c| text(&c.value(p, &table))).collect())
                .collect();
            let widths: Vec<usize> = cols
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    cells
                        .iter()
                        .map(|r| r[i].chars().count())
                        .chain([c.name.len()])
                        .max()
                        .unwrap_or(0)
                })
                .collect();
            let line = |vals: Vec<&str>| {
                let parts: Vec<String> = vals
                    .iter()
                    .zip(&cols)
                    .zip(&widths)
                    .map(|((v, c), &w)| {
                        if matches!(c.field, Field::Comm | Field::Cmdline) {
                            format!("{v:<w$}")
                        } else {
                            format!("{v:>w$}")
                        }
                    })
                    .collect();
                println!("{}", parts.join(" ").trim_end());
            };
            line(cols.iter().map(|c| c.name).collect());
            for r in &cells {
                line(r.iter().map(String::as_str).collect());
            }
        }
    }
    // As `ps -p`: asking for processes and finding none is a failure.
    if args.pids.is_some() && rows.is_empty() {
        eprintln!("quietstat: no process with the pids asked for");
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}
