//! `quietstat report`: sar-style tables from the recorded history. Every
//! figure comes from `model`, on the raw counters the store gives back.

use std::path::PathBuf;
use std::process::ExitCode;

use model::columns::Column;
use model::process::{Rank, rates, top};
use model::system::SystemRates;
use procfs::{Source, SystemSample};
use proctable::Proc;
use serde_json::{Value, json};
use store::History;
use store::when;

#[derive(clap::Args)]
pub struct Args {
    /// Start: RFC 3339, `HH:MM[:SS]` (today, local), "YYYY-MM-DD HH:MM", or
    /// relative (-1h, -30m) [default: -1h].
    #[arg(long, value_name = "T", allow_hyphen_values = true)]
    from: Option<String>,
    /// End, in the same forms [default: now].
    #[arg(long, value_name = "T", allow_hyphen_values = true)]
    to: Option<String>,
    /// What to report, comma-separated or repeated: cpu, mem, disk, net,
    /// irq, softirq, pressure, load, proc, exits, store [default: cpu].
    #[arg(long, value_delimiter = ',')]
    source: Vec<String>,
    /// One row per this much time (rates over it, as `sar -i`) [default: 1m].
    #[arg(long, value_name = "D", value_parser = crate::parse_duration)]
    interval: Option<std::time::Duration>,
    /// Processes (and interrupts) listed per interval.
    #[arg(long, default_value_t = 10)]
    top: usize,
    /// Processes ranked by: cpu, or a process field (rss_bytes, minflt,
    /// majflt, threads, read_bytes, ...).
    #[arg(long, default_value = "cpu")]
    sort: String,
    /// Only this process (by PID; a reused PID is another process, shown
    /// as its own rows).
    #[arg(long)]
    pid: Option<u32>,
    /// Only processes with this name.
    #[arg(long)]
    comm: Option<String>,
    /// table, csv or json.
    #[arg(long, default_value = "table")]
    format: String,
    /// The store [default: the agent's: /var/lib/quietstat as root].
    #[arg(long, value_name = "DIR")]
    store: Option<PathBuf>,
}

/// One cell of a report.
enum Cell {
    Text(String),
    Num(Option<f64>),
}

fn num(v: Option<f64>) -> Cell {
    Cell::Num(v)
}

fn text(s: impl Into<String>) -> Cell {
    Cell::Text(s.into())
}

struct Section {
    name: &'static str,
    columns: Vec<&'static str>,
    rows: Vec<Vec<Cell>>,
    /// Stretches without data inside the range: (from, to, why).
    gaps: Vec<(u64, u64, String)>,
}

impl Section {
    fn new(name: &'static str, columns: &[&'static str]) -> Section {
        let mut c = vec!["time"];
        c.extend_from_slice(columns);
        Section {
            name,
            columns: c,
            rows: Vec::new(),
            gaps: Vec::new(),
        }
    }
}

const SOURCES: [&str; 11] = [
    "cpu", "mem", "disk", "net", "irq", "softirq", "pressure", "load", "proc", "exits", "store",
];

struct Ctx {
    from: u64,
    to: u64,
    every: u64,
    dates: bool,
    recorded_gaps: Vec<store::Gap>,
}

impl Ctx {
    fn time(&self, ms: u64) -> Cell {
        text(when::format(ms, self.dates))
    }

    /// Whether a row is due at `ts` for an interval that began at `t0`.
    fn due(&self, t0: u64, ts: u64) -> bool {
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
struct Steps {
    last: u64,
    step: u64,
    floor: u64,
    gaps: Vec<(u64, u64, String)>,
}

impl Steps {
    fn new(floor: u64) -> Steps {
        Steps {
            last: 0,
            step: 0,
            floor,
            gaps: Vec::new(),
        }
    }

    /// Takes the sample at `ts`; true when a gap lies before it.
    fn gap(&mut self, ctx: &Ctx, ts: u64) -> bool {
        let step = ts.saturating_sub(self.last);
        let gap = self.last > 0 && step > (3 * self.step).max(self.floor);
        if gap {
            self.gaps.push((self.last, ts, ctx.why(self.last, ts)));
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

/// Adds the rows for one interval, from the samples that bound it.
type RowFn<'a> = dyn FnMut(&Ctx, u64, &SystemSample, &SystemSample, &mut Vec<Vec<Cell>>) + 'a;

/// Walks samples of `primary`, calling `row` with the two samples that
/// bound each interval; a pause longer than three steps (and 5 s) is a gap.
fn system_pass(
    h: &History,
    ctx: &Ctx,
    sec: &mut Section,
    sources: &[Source],
    primary: Source,
    row: &mut RowFn<'_>,
) -> anyhow::Result<()> {
    let mut start: Option<(u64, SystemSample)> = None;
    let mut steps = Steps::new(5000);
    let mut rows = Vec::new();
    h.system(ctx.from, ctx.to, sources, &mut |ts, s| {
        if !s.ok(primary) {
            return;
        }
        if steps.gap(ctx, ts) {
            start = None;
        }
        match &start {
            None => start = Some((ts, s.clone())),
            Some((t0, s0)) if ctx.due(*t0, ts) => {
                row(ctx, ts, s0, s, &mut rows);
                start = Some((ts, s.clone()));
            }
            Some(_) => {}
        }
    })
    .map_err(anyhow::Error::msg)?;
    sec.rows = rows;
    sec.gaps = steps.gaps;
    Ok(())
}

fn mib(b: Option<u64>) -> Cell {
    num(b.map(|b| b as f64 / (1 << 20) as f64))
}

fn system_section(h: &History, ctx: &Ctx, name: &str, top_n: usize) -> anyhow::Result<Section> {
    use Source::*;
    let mut sec;
    match name {
        "cpu" => {
            sec = Section::new(
                "cpu",
                &[
                    "%user", "%nice", "%system", "%iowait", "%irq", "%softirq", "%steal", "%idle",
                ],
            );
            system_pass(h, ctx, &mut sec, &[Stat], Stat, &mut |c, ts, a, b, rows| {
                let r = SystemRates::between(a, b);
                if let Some(p) = r.cpu_all {
                    rows.push(vec![
                        c.time(ts),
                        num(p.user),
                        num(p.nice),
                        num(p.system),
                        num(p.iowait),
                        num(p.irq),
                        num(p.softirq),
                        num(p.steal),
                        num(p.idle),
                    ]);
                }
            })?;
        }
        "mem" => {
            sec = Section::new(
                "mem",
                &[
                    "free_mib",
                    "avail_mib",
                    "used_mib",
                    "%used",
                    "buffers_mib",
                    "cached_mib",
                    "dirty_mib",
                    "swap_used_mib",
                    "pgmajfault/s",
                ],
            );
            system_pass(
                h,
                ctx,
                &mut sec,
                &[Meminfo, Vmstat],
                Meminfo,
                &mut |c, ts, a, b, rows| {
                    let r = SystemRates::between(a, b);
                    let m = &r.memory;
                    let pct = m
                        .used_bytes
                        .zip(m.total_bytes)
                        .map(|(u, t)| u as f64 * 100.0 / t.max(1) as f64);
                    let swap = m
                        .swap_total_bytes
                        .zip(m.swap_free_bytes)
                        .map(|(t, f)| t.saturating_sub(f));
                    rows.push(vec![
                        c.time(ts),
                        mib(m.free_bytes),
                        mib(m.available_bytes),
                        mib(m.used_bytes),
                        num(pct),
                        mib(m.buffers_bytes),
                        mib(m.cached_bytes),
                        mib(m.dirty_bytes),
                        mib(swap),
                        num(r.paging.pgmajfault_per_sec),
                    ]);
                },
            )?;
        }
        "load" => {
            sec = Section::new(
                "load",
                &[
                    "runq", "blocked", "ldavg-1", "ldavg-5", "ldavg-15", "cswch/s", "forks/s",
                ],
            );
            system_pass(
                h,
                ctx,
                &mut sec,
                &[Loadavg, Stat],
                Loadavg,
                &mut |c, ts, a, b, rows| {
                    let r = SystemRates::between(a, b);
                    rows.push(vec![
                        c.time(ts),
                        num(r.procs_running.map(|v| v as f64)),
                        num(r.procs_blocked.map(|v| v as f64)),
                        num(r.load1),
                        num(r.load5),
                        num(r.load15),
                        num(r.context_switches_per_sec),
                        num(r.forks_per_sec),
                    ]);
                },
            )?;
        }
        "disk" => {
            sec = Section::new(
                "disk",
                &["device", "tps", "rkB/s", "wkB/s", "await_ms", "%util"],
            );
            system_pass(
                h,
                ctx,
                &mut sec,
                &[Diskstats],
                Diskstats,
                &mut |c, ts, a, b, rows| {
                    for d in SystemRates::between(a, b).disks {
                        let tps = d.reads_per_sec.zip(d.writes_per_sec).map(|(r, w)| r + w);
                        rows.push(vec![
                            c.time(ts),
                            text(d.name.as_str()),
                            num(tps),
                            num(d.read_bytes_per_sec.map(|v| v / 1024.0)),
                            num(d.write_bytes_per_sec.map(|v| v / 1024.0)),
                            num(d.await_ms),
                            num(d.util_pct),
                        ]);
                    }
                },
            )?;
        }
        "net" => {
            sec = Section::new(
                "net",
                &[
                    "iface", "rxpck/s", "txpck/s", "rxkB/s", "txkB/s", "rxdrop/s", "txdrop/s",
                ],
            );
            system_pass(
                h,
                ctx,
                &mut sec,
                &[NetDev],
                NetDev,
                &mut |c, ts, a, b, rows| {
                    for n in SystemRates::between(a, b).nets {
                        rows.push(vec![
                            c.time(ts),
                            text(n.name.as_str()),
                            num(n.rx_packets_per_sec),
                            num(n.tx_packets_per_sec),
                            num(n.rx_bytes_per_sec.map(|v| v / 1024.0)),
                            num(n.tx_bytes_per_sec.map(|v| v / 1024.0)),
                            num(n.rx_drop_per_sec),
                            num(n.tx_drop_per_sec),
                        ]);
                    }
                },
            )?;
        }
        "irq" | "softirq" => {
            let soft = name == "softirq";
            sec = Section::new(
                if soft { "softirq" } else { "irq" },
                &["name", "description", "per_s"],
            );
            let src = if soft { Softirqs } else { Interrupts };
            system_pass(h, ctx, &mut sec, &[src], src, &mut |c, ts, a, b, rows| {
                let r = SystemRates::between(a, b);
                let list = if soft { r.softirq_vectors } else { r.irqs };
                for x in list.into_iter().take(if soft { usize::MAX } else { top_n }) {
                    rows.push(vec![
                        c.time(ts),
                        text(x.label),
                        text(x.description),
                        num(x.per_sec),
                    ]);
                }
            })?;
        }
        "pressure" => {
            sec = Section::new("pressure", &["resource", "%some", "%full"]);
            let all = [PressureCpu, PressureMemory, PressureIo, PressureIrq];
            system_pass(
                h,
                ctx,
                &mut sec,
                &all,
                PressureCpu,
                &mut |c, ts, a, b, rows| {
                    for p in SystemRates::between(a, b).pressure {
                        rows.push(vec![
                            c.time(ts),
                            text(format!("{:?}", p.resource).to_lowercase()),
                            num(p.some_pct),
                            num(p.full_pct),
                        ]);
                    }
                },
            )?;
        }
        _ => unreachable!("checked"),
    }
    Ok(sec)
}

fn proc_section(h: &History, ctx: &Ctx, args: &Args) -> anyhow::Result<Section> {
    let rank = match args.sort.as_str() {
        "cpu" => Rank::CpuPct,
        f => Rank::Column(Column::find(f).ok_or_else(|| {
            anyhow::anyhow!("--sort {f}: not a process field; accepted: cpu, rss_bytes, vsize_bytes, minflt, majflt, threads, utime_ns, stime_ns, read_bytes, write_bytes, pid, ...")
        })?),
    };
    let mut sec = Section::new(
        "proc",
        &[
            "pid", "comm", "%cpu", "%usr", "%sys", "rss_mib", "minflt/s", "majflt/s", "threads",
            "state",
        ],
    );
    let keep = |p: &Proc| {
        args.pid.is_none_or(|pid| p.pid == pid)
            && args
                .comm
                .as_deref()
                .is_none_or(|c| p.comm.as_bytes() == c.as_bytes())
    };
    let mut start: Option<(u64, Vec<Proc>)> = None;
    let mut steps = Steps::new(15_000);
    let mut rows = Vec::new();
    h.procs(ctx.from, ctx.to, &mut |ts, snap| {
        if steps.gap(ctx, ts) {
            start = None;
        }
        let due = match &start {
            None => true,
            Some((t0, _)) => ctx.due(*t0, ts),
        };
        if !due {
            return;
        }
        let mut cur = snap.procs();
        cur.retain(|p| keep(p));
        if let Some((t0, prev)) = &start {
            let secs = (ts - t0) as f64 / 1000.0;
            let picked = top(prev, &cur, secs, rank, args.top);
            // Rates of the picked rows only (both lists sorted by pid).
            let mut prev_of: Vec<Proc> = picked
                .iter()
                .filter_map(|p| {
                    prev.binary_search_by_key(&p.pid, |q| q.pid)
                        .ok()
                        .map(|i| prev[i])
                })
                .collect();
            prev_of.sort_by_key(|p| p.pid);
            let mut mine: Vec<Proc> = picked.iter().map(|p| **p).collect();
            mine.sort_by_key(|p| p.pid);
            let r = rates(&prev_of, &mine, secs);
            for p in picked {
                let pr = r.iter().find(|x| x.identity == p.identity());
                let u = pr.and_then(|x| x.user_pct);
                let s = pr.and_then(|x| x.system_pct);
                rows.push(vec![
                    ctx.time(ts),
                    num(Some(f64::from(p.pid))),
                    text(String::from_utf8_lossy(p.comm.as_bytes())),
                    num(u.zip(s).map(|(u, s)| u + s)),
                    num(u),
                    num(s),
                    mib(Some(p.rss_bytes)),
                    num(pr.and_then(|x| x.minflt_per_sec)),
                    num(pr.and_then(|x| x.majflt_per_sec)),
                    num(Some(f64::from(p.num_threads))),
                    text(p.state.to_string()),
                ]);
            }
        }
        start = Some((ts, cur));
    })
    .map_err(anyhow::Error::msg)?;
    sec.rows = rows;
    sec.gaps = steps.gaps;
    Ok(sec)
}

/// `exit 0`, `exit 3`, `SIGKILL`, `SIGSEGV (core)`.
fn exit_text(status: i32) -> String {
    let sig = status & 0x7f;
    if sig == 0 {
        return format!("exit {}", (status >> 8) & 0xff);
    }
    let core = if status & 0x80 != 0 { " (core)" } else { "" };
    // SAFETY: strsignal returns a static (or thread-local) string.
    let name = match sig {
        1 => "SIGHUP".into(),
        2 => "SIGINT".into(),
        3 => "SIGQUIT".into(),
        4 => "SIGILL".into(),
        6 => "SIGABRT".into(),
        7 => "SIGBUS".into(),
        8 => "SIGFPE".into(),
        9 => "SIGKILL".into(),
        11 => "SIGSEGV".into(),
        13 => "SIGPIPE".into(),
        14 => "SIGALRM".into(),
        15 => "SIGTERM".into(),
        n => format!("signal {n}"),
    };
    format!("{name}{core}")
}

fn exits_section(h: &History, ctx: &Ctx, args: &Args) -> anyhow::Result<Section> {
    let mut sec = Section::new(
        "exits",
        &[
            "pid",
            "ppid",
            "comm",
            "status",
            "lifetime",
            "cpu_s",
            "maxrss_mib",
            "cmdline",
        ],
    );
    for e in h.exits(ctx.from, ctx.to).map_err(anyhow::Error::msg)? {
        if args.pid.is_some_and(|p| p != e.pid) || args.comm.as_deref().is_some_and(|c| c != e.comm)
        {
            continue;
        }
        let life = e.start_ms.map(|s| when::span(e.exit_ms.saturating_sub(s)));
        sec.rows.push(vec![
            ctx.time(e.exit_ms),
            num(Some(f64::from(e.pid))),
            num(e.ppid.map(f64::from)),
            text(e.comm),
            text(exit_text(e.status)),
            text(life.unwrap_or_else(|| "-".into())),
            num(Some((e.utime_ns + e.stime_ns) as f64 / 1e9)),
            mib(Some(e.maxrss_bytes)),
            text(e.cmdline.unwrap_or_default()),
        ]);
    }
    Ok(sec)
}

fn store_section(h: &History) -> anyhow::Result<Section> {
    let mut sec = Section::new(
        "store",
        &["source", "samples", "raw_bytes", "stored_bytes", "ratio"],
    );
    sec.columns[0] = "day";
    for d in h.usage().map_err(anyhow::Error::msg)? {
        for (src, n, raw, stored) in &d.sources {
            sec.rows.push(vec![
                text(d.day.clone()),
                text(src.clone()),
                num(Some(*n as f64)),
                num(Some(*raw as f64)),
                num(Some(*stored as f64)),
                num(Some(*raw as f64 / (*stored).max(1) as f64)),
            ]);
        }
        // Written while the wall clock was ahead: kept out of retention's
        // age rule, the first to go under the size cap.
        let future = if d.day > store::db::day_of(store::writer::now_ms()) {
            "; dated after today: the wall clock was ahead"
        } else {
            ""
        };
        sec.rows.push(vec![
            text(d.day.clone()),
            text(format!("(file, {} processes{future})", d.identities)),
            num(None),
            num(None),
            num(Some(d.file_bytes as f64)),
            num(None),
        ]);
    }
    // Samples only a journal holds: a running agent's next flush, or a
    // killed agent's tail (shown by every section, written at the next
    // start).
    for (path, n, live) in h.journals() {
        let what = if *live {
            "held by the running agent, written at its next flush"
        } else {
            "its agent is gone: shown here, written at the store's next start"
        };
        sec.rows.push(vec![
            text("journal"),
            text(format!("({}: {what})", path.display())),
            num(Some(*n as f64)),
            num(None),
            num(Some(std::fs::metadata(path).map_or(0, |m| m.len()) as f64)),
            num(None),
        ]);
    }
    Ok(sec)
}

fn cell_text(c: &Cell) -> String {
    match c {
        Cell::Text(s) => model::text::printable(s).into_owned(),
        Cell::Num(None) => "-".into(),
        Cell::Num(Some(v)) if v.fract() == 0.0 && v.abs() < 1e15 => format!("{v:.0}"),
        Cell::Num(Some(v)) => format!("{v:.2}"),
    }
}

fn print(sections: &[Section], ctx: &Ctx, format: &str, skipped: &[String]) -> String {
    let mut out = String::new();
    match format {
        "json" => {
            let mut secs = serde_json::Map::new();
            for s in sections {
                let rows: Vec<Value> = s
                    .rows
                    .iter()
                    .map(|r| {
                        let mut o = serde_json::Map::new();
                        for (c, v) in s.columns.iter().zip(r) {
                            o.insert(
                                (*c).to_string(),
                                match v {
                                    Cell::Text(t) => json!(t),
                                    // Whole numbers (pids, counts) as integers.
                                    Cell::Num(Some(n)) if n.fract() == 0.0 && n.abs() < 9e15 => {
                                        json!(*n as i64)
                                    }
                                    Cell::Num(n) => json!(n),
                                },
                            );
                        }
                        Value::Object(o)
                    })
                    .collect();
                let gaps: Vec<Value> = s
                    .gaps
                    .iter()
                    .map(|(a, b, w)| json!({"from": when::format(*a, true), "to": when::format(*b, true), "why": w}))
                    .collect();
                secs.insert(s.name.to_string(), json!({"rows": rows, "gaps": gaps}));
            }
            let v = json!({
                "from": when::format(ctx.from, true),
                "to": when::format(ctx.to, true),
                "from_ms": ctx.from,
                "to_ms": ctx.to,
                "sections": secs,
                "skipped": skipped,
            });
            out = serde_json::to_string_pretty(&v).unwrap_or_default();
            out.push('\n');
        }
        "csv" => {
            for (i, s) in sections.iter().enumerate() {
                if i > 0 {
                    out.push('\n');
                }
                out += &s
                    .columns
                    .iter()
                    .map(|c| model::text::csv_field(c))
                    .collect::<Vec<_>>()
                    .join(",");
                out.push('\n');
                for r in &s.rows {
                    out += &r
                        .iter()
                        .map(|c| model::text::csv_field(&cell_text(c)).into_owned())
                        .collect::<Vec<_>>()
                        .join(",");
                    out.push('\n');
                }
            }
        }
        _ => {
            for f in skipped {
                out += &format!("# skipped: {f}\n");
            }
            for s in sections {
                out += &format!(
                    "# {} from {} to {}\n",
                    s.name,
                    when::format(ctx.from, true),
                    when::format(ctx.to, true)
                );
                let cells: Vec<Vec<String>> = s
                    .rows
                    .iter()
                    .map(|r| r.iter().map(cell_text).collect())
                    .collect();
                let mut w: Vec<usize> = s.columns.iter().map(|c| c.len()).collect();
                for r in &cells {
                    for (i, c) in r.iter().enumerate() {
                        w[i] = w[i].max(c.chars().count());
                    }
                }
                let line = |r: &[String]| {
                    let mut l = String::new();
                    for (i, c) in r.iter().enumerate() {
                        // Text after the time left-aligned, numbers right.
                        if i > 0 {
                            l.push_str("  ");
                        }
                        let last = i + 1 == r.len();
                        if c.parse::<f64>().is_ok() || c == "-" {
                            l += &format!("{c:>0$}", w[i]);
                        } else if last {
                            l += c;
                        } else {
                            l += &format!("{c:<0$}", w[i]);
                        }
                    }
                    l.trim_end().to_string() + "\n"
                };
                out += &line(&s.columns.iter().map(|c| c.to_string()).collect::<Vec<_>>());
                // Rows and gaps in time order.
                let mut gaps = s.gaps.iter().peekable();
                for (r, raw) in cells.iter().zip(&s.rows) {
                    let _ = raw;
                    while let Some((a, b, why)) = gaps.peek() {
                        if when::format(*b, ctx.dates) <= r[0] || s.name == "store" {
                            out += &format!(
                                "-- no data from {} to {}: {why} --\n",
                                when::format(*a, ctx.dates),
                                when::format(*b, ctx.dates)
                            );
                            gaps.next();
                        } else {
                            break;
                        }
                    }
                    out += &line(r);
                }
                for (a, b, why) in gaps {
                    out += &format!(
                        "-- no data from {} to {}: {why} --\n",
                        when::format(*a, ctx.dates),
                        when::format(*b, ctx.dates)
                    );
                }
                if s.rows.is_empty() && s.gaps.is_empty() {
                    out += "(no data in this range)\n";
                }
                out.push('\n');
            }
        }
    }
    out
}

pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    if !["table", "csv", "json"].contains(&args.format.as_str()) {
        anyhow::bail!("--format {}: accepted: table, csv, json", args.format);
    }
    let mut sources: Vec<&str> = args.source.iter().map(String::as_str).collect();
    if sources.is_empty() {
        sources.push("cpu");
    }
    for s in &sources {
        if !SOURCES.contains(s) {
            anyhow::bail!("--source {s}: accepted: {}", SOURCES.join(", "));
        }
    }
    let now = store::writer::now_ms();
    let from = when::parse(args.from.as_deref().unwrap_or("-1h"), now)
        .map_err(|e| anyhow::anyhow!("--from {e}"))?;
    let to = when::parse(args.to.as_deref().unwrap_or("now"), now)
        .map_err(|e| anyhow::anyhow!("--to {e}"))?;
    if to < from {
        anyhow::bail!("--to is before --from");
    }
    let dir = match &args.store {
        Some(d) => d.clone(),
        None => agent::config::default_store_path().map_err(anyhow::Error::msg)?,
    };
    let h = History::open(&dir).map_err(anyhow::Error::msg)?;
    let Some((first, last)) = h.range() else {
        let mut msg = format!(
            "{}: no history recorded here (the agent records by default; is it running with --no-store, or with another --store?)",
            dir.display()
        );
        for s in &h.skipped() {
            msg += &format!("\n  skipped: {s}");
        }
        anyhow::bail!(msg);
    };
    if to < first || from > last {
        anyhow::bail!(
            "nothing recorded between {} and {}: the store at {} holds {} to {}",
            when::format(from, true),
            when::format(to, true),
            dir.display(),
            when::format(first, true),
            when::format(last, true)
        );
    }
    let every = args
        .interval
        .map_or(60_000, |d| (d.as_millis() as u64).max(1));
    let ctx = Ctx {
        from,
        to,
        every,
        dates: store::db::day_of(from) != store::db::day_of(to),
        recorded_gaps: h.gaps(from, to).map_err(anyhow::Error::msg)?,
    };
    let mut sections = Vec::new();
    for s in &sources {
        sections.push(match *s {
            "proc" => proc_section(&h, &ctx, args)?,
            "exits" => exits_section(&h, &ctx, args)?,
            "store" => store_section(&h)?,
            other => system_section(&h, &ctx, other, args.top)?,
        });
    }
    let skipped = h.skipped();
    let out = print(&sections, &ctx, &args.format, &skipped);
    if args.format == "csv" {
        // CSV has no place for them: one warning each on stderr.
        for f in &skipped {
            eprintln!("quietstat report: skipped: {f}");
        }
    }
    use std::io::Write;
    std::io::stdout().lock().write_all(out.as_bytes())?;
    Ok(ExitCode::SUCCESS)
}
