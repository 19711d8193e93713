//! `quietstat ps`: one process-table snapshot, printed.

use std::cmp::Ordering;
use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::{Args as ClapArgs, ValueEnum};
use proctable::{BackendChoice, Field, Fields, Proc, ProcTable, Query};
use serde_json::{Map, Value, json};

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
    /// Sort by this field; prefix with `-` for descending (`--sort=-utime`).
    #[arg(long, allow_hyphen_values = true)]
    sort: Option<String>,
    #[arg(long, value_enum, default_value = "table")]
    format: PsFormat,
    /// auto: BPF when it loads (root, or CAP_BPF and CAP_PERFMON), else procfs.
    #[arg(long, value_enum, default_value = "auto")]
    backend: BackendArg,
}

/// One output column: a field may give several (io, ctxsw).
struct Column {
    field: Field,
    name: &'static str,
}

fn columns(fields: &[Field]) -> Vec<Column> {
    let mut cols = Vec::new();
    for &f in fields {
        let names: &[&'static str] = match f {
            Field::Start => &["start_ticks"],
            Field::Utime => &["utime_ticks"],
            Field::Stime => &["stime_ticks"],
            Field::Rss => &["rss_kib"],
            Field::Vsize => &["vsize_kib"],
            Field::Policy => &["policy", "rt_priority"],
            Field::Io => &[
                "read_bytes",
                "write_bytes",
                "rchar",
                "wchar",
                "syscr",
                "syscw",
            ],
            Field::Ctxsw => &["voluntary_ctxsw", "involuntary_ctxsw"],
            _ => &[f.name()],
        };
        cols.extend(names.iter().map(|&name| Column { field: f, name }));
    }
    cols
}

/// A column's value: numbers sort as numbers, names as text.
fn value(p: &Proc, col: &Column, table: &ProcTable) -> Value {
    let io = |get: fn(&procfs::pid::PidIo) -> u64| {
        p.io.as_ref().map_or(Value::Null, |io| json!(get(io)))
    };
    match col.name {
        "pid" => json!(p.pid),
        "tgid" => json!(p.tgid),
        "ppid" => json!(p.ppid),
        "comm" => json!(p.comm.to_string_lossy()),
        "state" => json!(p.state.to_string()),
        "start_ticks" => json!(p.start_ticks),
        "utime_ticks" => json!(p.utime_ticks()),
        "stime_ticks" => json!(p.stime_ticks()),
        "minflt" => json!(p.minflt),
        "majflt" => json!(p.majflt),
        "threads" => json!(p.num_threads),
        "rss_kib" => json!(p.rss_bytes / 1024),
        "vsize_kib" => json!(p.vsize_bytes / 1024),
        "nice" => json!(p.nice),
        "priority" => json!(p.priority),
        "policy" => json!(policy_name(p.policy)),
        "rt_priority" => json!(p.rt_priority),
        "cpu" => json!(p.cpu),
        "cgroup" => p.cgroup_id.map_or(Value::Null, |id| json!(id)),
        "read_bytes" => io(|io| io.read_bytes),
        "write_bytes" => io(|io| io.write_bytes),
        "rchar" => io(|io| io.rchar),
        "wchar" => io(|io| io.wchar),
        "syscr" => io(|io| io.syscr),
        "syscw" => io(|io| io.syscw),
        "cmdline" => table.cmdline(p).map_or(Value::Null, |c| json!(c)),
        "voluntary_ctxsw" => p.ctxsw.map_or(Value::Null, |c| json!(c.voluntary)),
        "involuntary_ctxsw" => p.ctxsw.map_or(Value::Null, |c| json!(c.involuntary)),
        other => unreachable!("column {other} has no value"),
    }
}

fn policy_name(policy: u32) -> &'static str {
    match policy {
        0 => "other",
        1 => "fifo",
        2 => "rr",
        3 => "batch",
        5 => "idle",
        6 => "deadline",
        7 => "ext",
        _ => "?",
    }
}

fn compare(a: &Value, b: &Value) -> Ordering {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x
            .as_f64()
            .unwrap_or(0.0)
            .total_cmp(&y.as_f64().unwrap_or(0.0)),
        (Value::Null, Value::Null) => Ordering::Equal,
        (Value::Null, _) => Ordering::Less,
        (_, Value::Null) => Ordering::Greater,
        _ => a.as_str().unwrap_or("").cmp(b.as_str().unwrap_or("")),
    }
}

fn text(v: &Value) -> String {
    match v {
        Value::Null => "-".into(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn csv_cell(v: &Value) -> String {
    let s = match v {
        Value::Null => String::new(),
        other => text(other),
    };
    if s.contains([',', '"', '\n', '\r']) || s.starts_with(' ') || s.ends_with(' ') {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s
    }
}

pub fn run(proc_root: &Path, sys_root: &Path, args: &Args) -> Result<ExitCode> {
    if args.fields == "help" {
        for f in Field::ALL {
            println!("{:<9} {}", f.name(), f.describe());
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
            let f = Fields::parse(name)?;
            let field = f
                .iter()
                .next()
                .filter(|_| f.iter().count() == 1)
                .with_context(|| {
                    format!("--sort takes one field name, optionally prefixed by - or +; got {s:?}")
                })?;
            Some((field, desc))
        }
        None => None,
    };
    // Sorting on a field reads it even if it is not shown.
    let read = match sort {
        Some((f, _)) => fields.with(f),
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
    if let Some((field, desc)) = sort {
        let col = columns(&[field]).remove(0);
        rows.sort_by(|a, b| {
            let o = compare(&value(a, &col, &table), &value(b, &col, &table));
            if desc { o.reverse() } else { o }
        });
    }
    let cols = columns(&order);
    match args.format {
        PsFormat::Json => {
            let out: Vec<Value> = rows
                .iter()
                .map(|p| {
                    let mut m = Map::new();
                    for c in &cols {
                        m.insert(c.name.to_string(), value(p, c, &table));
                    }
                    Value::Object(m)
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
                let cells: Vec<String> = cols
                    .iter()
                    .map(|c| csv_cell(&value(p, c, &table)))
                    .collect();
                println!("{}", cells.join(","));
            }
        }
        PsFormat::Table => {
            let cells: Vec<Vec<String>> = rows
                .iter()
                .map(|p| cols.iter().map(|c| text(&value(p, c, &table))).collect())
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
    Ok(ExitCode::SUCCESS)
}
