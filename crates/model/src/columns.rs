//! The process fields, each defined once: its name (carrying its unit), the
//! [`Field`] a snapshot must read for it, what it means, and how to get its
//! value from a [`Proc`]. `ps` (columns, `--sort`, `--fields help`), the
//! JSON API's process rows and the exporter's per-process families take
//! their names and values from here.

use std::borrow::Cow;
use std::cmp::Ordering;
use std::fmt;

use proctable::{Field, Proc};
use serde::Serialize;

/// One value of one process.
#[derive(Debug, Clone, PartialEq)]
pub enum Value<'a> {
    Num(u64),
    Signed(i64),
    Text(Cow<'a, str>),
    /// Not read, not permitted, or not reported by this kernel.
    Absent,
}

impl Value<'_> {
    /// Numbers as numbers, text by its bytes; absent values first.
    pub fn compare(&self, other: &Value<'_>) -> Ordering {
        match (self.number(), other.number()) {
            (Some(a), Some(b)) => a.total_cmp(&b),
            _ => match (self, other) {
                (Value::Text(a), Value::Text(b)) => a.cmp(b),
                (Value::Absent, Value::Absent) => Ordering::Equal,
                (Value::Absent, _) => Ordering::Less,
                (_, Value::Absent) => Ordering::Greater,
                (Value::Text(_), _) => Ordering::Greater,
                _ => Ordering::Less,
            },
        }
    }

    pub fn number(&self) -> Option<f64> {
        match *self {
            Value::Num(v) => Some(v as f64),
            Value::Signed(v) => Some(v as f64),
            _ => None,
        }
    }
}

impl fmt::Display for Value<'_> {
    /// Absent values print as nothing; a table shows them as `-`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Num(v) => write!(f, "{v}"),
            Value::Signed(v) => write!(f, "{v}"),
            Value::Text(t) => f.write_str(t),
            Value::Absent => Ok(()),
        }
    }
}

impl Serialize for Value<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Value::Num(v) => s.serialize_u64(*v),
            Value::Signed(v) => s.serialize_i64(*v),
            Value::Text(t) => s.serialize_str(t),
            Value::Absent => s.serialize_none(),
        }
    }
}

/// What the process table keeps beside its rows (command lines, read once
/// per program). An output without them passes [`NoExtra`].
pub trait Extra {
    fn cmdline(&self, p: &Proc) -> Option<&str>;
}

/// No command lines.
pub struct NoExtra;

impl Extra for NoExtra {
    fn cmdline(&self, _: &Proc) -> Option<&str> {
        None
    }
}

impl Extra for proctable::ProcTable {
    fn cmdline(&self, p: &Proc) -> Option<&str> {
        proctable::ProcTable::cmdline(self, p)
    }
}

/// How a column's value is got.
pub type Getter = for<'a> fn(&'a Proc, &'a dyn Extra) -> Value<'a>;

/// One process field.
pub struct Column {
    /// The name in every output, unit included where it has one.
    pub name: &'static str,
    /// What a snapshot must read for it.
    pub field: Field,
    pub help: &'static str,
    /// Shown by `ps` when its field is asked for. Columns that repeat a
    /// shown one at a finer resolution (`utime_ns` beside `utime_ticks`)
    /// are in the JSON API only.
    pub ps: bool,
    pub get: Getter,
}

impl Column {
    pub fn value<'a>(&self, p: &'a Proc, extra: &'a dyn Extra) -> Value<'a> {
        (self.get)(p, extra)
    }

    /// The value as a number, for ranking (`None`: text or absent).
    pub fn number(&self, p: &Proc) -> Option<f64> {
        self.value(p, &NoExtra).number()
    }

    /// The column named `name`.
    pub fn find(name: &str) -> Option<&'static Column> {
        ALL.iter().copied().find(|c| c.name == name)
    }

    /// The columns `ps` shows for `field`, in order.
    pub fn for_field(field: Field) -> impl Iterator<Item = &'static Column> {
        ALL.iter()
            .copied()
            .filter(move |c| c.field == field && c.ps)
    }
}

impl fmt::Debug for Column {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)
    }
}

/// One process as a map from the names of `columns` to their values, in the
/// columns' order: a row of `ps --format json` or of the JSON API.
pub struct Row<'a> {
    pub proc: &'a Proc,
    pub columns: &'a [&'static Column],
    pub extra: &'a dyn Extra,
}

impl Serialize for Row<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(Some(self.columns.len()))?;
        for c in self.columns {
            m.serialize_entry(c.name, &c.value(self.proc, self.extra))?;
        }
        m.end()
    }
}

fn opt<T: Into<u64>>(v: Option<T>) -> Value<'static> {
    v.map_or(Value::Absent, |v| Value::Num(v.into()))
}

/// The name of a `SCHED_*` policy number.
pub fn policy_name(policy: u32) -> &'static str {
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

macro_rules! columns {
    ($( $(#[$doc:meta])* $id:ident = $name:literal, $field:ident, $ps:literal, $help:literal, $get:expr; )*) => {
        $( $(#[$doc])* pub static $id: Column = Column {
            name: $name,
            field: Field::$field,
            help: $help,
            ps: $ps,
            get: $get,
        }; )*
        /// Every column, in `ps`'s order.
        pub static ALL: &[&Column] = &[$( &$id, )*];
    };
}

columns! {
    PID = "pid", Pid, true, "process (or thread) id", |p, _| Value::Num(p.pid.into());
    TGID = "tgid", Tgid, true, "thread-group id (the process's PID)", |p, _| Value::Num(p.tgid.into());
    PPID = "ppid", Ppid, true, "parent's PID", |p, _| Value::Num(p.ppid.into());
    COMM = "comm", Comm, true, "task name", |p, _| Value::Text(p.comm.to_string_lossy());
    STATE = "state", State, true, "R S D T t X Z P I, as /proc shows it", |p, _| Value::Text(p.state.to_string().into());
    START_TICKS = "start_ticks", Start, true, "start time, clock ticks since boot (as /proc shows it)", |p, _| Value::Num(p.start_ticks);
    START_NS = "start_ns", Start, false, "start time, nanoseconds since boot (exact from BPF; tick resolution from procfs)", |p, _| Value::Num(p.start_ns);
    UTIME_TICKS = "utime_ticks", Utime, true, "user CPU time, clock ticks, process-wide with dead threads", |p, _| Value::Num(p.utime_ticks());
    UTIME_NS = "utime_ns", Utime, false, "user CPU time, nanoseconds", |p, _| Value::Num(p.utime_ns);
    STIME_TICKS = "stime_ticks", Stime, true, "system CPU time, clock ticks, process-wide with dead threads", |p, _| Value::Num(p.stime_ticks());
    STIME_NS = "stime_ns", Stime, false, "system CPU time, nanoseconds", |p, _| Value::Num(p.stime_ns);
    MINFLT = "minflt", Minflt, true, "minor page faults", |p, _| Value::Num(p.minflt);
    MAJFLT = "majflt", Majflt, true, "major page faults", |p, _| Value::Num(p.majflt);
    THREADS = "threads", Threads, true, "number of threads", |p, _| Value::Num(p.num_threads.into());
    RSS_BYTES = "rss_bytes", Rss, true, "resident set size, bytes", |p, _| Value::Num(p.rss_bytes);
    VSIZE_BYTES = "vsize_bytes", Vsize, true, "virtual memory size, bytes", |p, _| Value::Num(p.vsize_bytes);
    NICE = "nice", Nice, true, "nice value", |p, _| Value::Signed(p.nice.into());
    PRIORITY = "priority", Priority, true, "kernel priority as /proc shows it (prio - 100)", |p, _| Value::Signed(p.priority.into());
    POLICY = "policy", Policy, true, "scheduling policy", |p, _| Value::Text(policy_name(p.policy).into());
    RT_PRIORITY = "rt_priority", Policy, true, "real-time priority (0 for other policies)", |p, _| Value::Num(p.rt_priority.into());
    CPU = "cpu", Cpu, true, "CPU last run on", |p, _| Value::Num(p.cpu.into());
    CGROUP = "cgroup", Cgroup, true, "cgroup v2 id (inode of its directory)", |p, _| opt(p.cgroup_id);
    READ_BYTES = "read_bytes", Io, true, "bytes read from storage", |p, _| opt(p.io.map(|io| io.read_bytes));
    WRITE_BYTES = "write_bytes", Io, true, "bytes written to storage", |p, _| opt(p.io.map(|io| io.write_bytes));
    RCHAR = "rchar", Io, true, "bytes read by read-like system calls", |p, _| opt(p.io.map(|io| io.rchar));
    WCHAR = "wchar", Io, true, "bytes written by write-like system calls", |p, _| opt(p.io.map(|io| io.wchar));
    SYSCR = "syscr", Io, true, "read-like system calls", |p, _| opt(p.io.map(|io| io.syscr));
    SYSCW = "syscw", Io, true, "write-like system calls", |p, _| opt(p.io.map(|io| io.syscw));
    VOLUNTARY_CTXSW = "voluntary_ctxsw", Ctxsw, true, "voluntary context switches (of the task itself)", |p, _| opt(p.ctxsw.map(|c| c.voluntary));
    INVOLUNTARY_CTXSW = "involuntary_ctxsw", Ctxsw, true, "involuntary context switches (of the task itself)", |p, _| opt(p.ctxsw.map(|c| c.involuntary));
    RUN_DELAY_NS = "run_delay_ns", Delay, true, "time waiting on a run queue for a CPU, nanoseconds (of the task itself)", |p, _| opt(p.sched.map(|s| s.run_delay_ns));
    TIMESLICES = "timeslices", Delay, true, "times given a CPU (of the task itself)", |p, _| opt(p.sched.map(|s| s.timeslices));
    NET_RX_BYTES = "net_rx_bytes", Net, true, "payload bytes the process's TCP sockets received (BPF only)", |p, _| opt(p.net.map(|n| n.rx_bytes));
    NET_TX_BYTES = "net_tx_bytes", Net, true, "payload bytes the process's TCP sockets sent, as acknowledged (BPF only)", |p, _| opt(p.net.map(|n| n.tx_bytes));
    BLKIO_DELAY_NS = "blkio_delay_ns", DelayAcct, true, "time blocked on synchronous block I/O, nanoseconds (delay accounting; of the task itself)", |p, _| opt(p.delays.map(|d| d.blkio_ns));
    SWAPIN_DELAY_NS = "swapin_delay_ns", DelayAcct, true, "time waiting for pages to be swapped in, nanoseconds (delay accounting)", |p, _| opt(p.delays.map(|d| d.swapin_ns));
    RECLAIM_DELAY_NS = "reclaim_delay_ns", DelayAcct, true, "time in direct memory reclaim, nanoseconds (delay accounting)", |p, _| opt(p.delays.map(|d| d.reclaim_ns));
    THRASHING_DELAY_NS = "thrashing_delay_ns", DelayAcct, true, "time waiting for refaulted working-set pages, nanoseconds (delay accounting)", |p, _| opt(p.delays.map(|d| d.thrashing_ns));
    COMPACT_DELAY_NS = "compact_delay_ns", DelayAcct, true, "time in memory compaction, nanoseconds (delay accounting)", |p, _| opt(p.delays.map(|d| d.compact_ns));
    WPCOPY_DELAY_NS = "wpcopy_delay_ns", DelayAcct, true, "time copying pages on write, nanoseconds (delay accounting)", |p, _| opt(p.delays.map(|d| d.wpcopy_ns));
    IRQ_DELAY_NS = "irq_delay_ns", DelayAcct, true, "time taken by interrupts while it ran, nanoseconds (delay accounting)", |p, _| opt(p.delays.map(|d| d.irq_ns));
    GPU_BUSY_NS = "gpu_busy_ns", Gpu, true, "time GPU engines were busy with the process's clients, nanoseconds, summed over engines (DRM fdinfo, NVIDIA's library)", |p, _| opt(p.gpu.map(|g| g.busy_ns));
    GPU_MEM_BYTES = "gpu_mem_bytes", Gpu, true, "GPU memory the process's clients hold resident, every region, bytes", |p, _| opt(p.gpu.map(|g| g.mem_bytes));
    GPU_CLIENTS = "gpu_clients", Gpu, true, "GPU clients (opens of a GPU's device) the process is charged with", |p, _| opt(p.gpu.map(|g| u64::from(g.clients)));
    UID = "uid", Uid, true, "effective user id, as ps's USER", |p, _| opt(p.uid);
    OOM_SCORE_ADJ = "oom_score_adj", OomScoreAdj, true, "the OOM killer's adjustment, -1000 (never killed) to 1000", |p, _| p.oom_score_adj.map_or(Value::Absent, |v| Value::Signed(v.into()));
    CMDLINE = "cmdline", Cmdline, true, "command line, arguments joined by spaces (first 4096 bytes; read once per program the process runs)", |p, x| x.cmdline(p).map_or(Value::Absent, |c| Value::Text(c.into()));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_field_has_a_column_and_names_are_unique() {
        for &f in Field::ALL {
            assert!(Column::for_field(f).next().is_some(), "{f:?}");
        }
        for (i, c) in ALL.iter().enumerate() {
            assert!(!c.help.is_empty(), "{}", c.name);
            assert!(
                ALL[..i].iter().all(|d| d.name != c.name),
                "{} twice",
                c.name
            );
            assert_eq!(Column::find(c.name).map(|d| d.name), Some(c.name));
        }
    }

    /// docs/metrics.md's process-field table lists exactly these columns,
    /// in order, each with its field, whether ps shows it, and its help.
    #[test]
    fn docs_metrics_md_lists_every_process_field() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/metrics.md");
        let doc = std::fs::read_to_string(path).unwrap();
        let (_, fields) = doc
            .split_once("\n## Process fields")
            .expect("a Process fields section");
        let rows: Vec<&str> = fields.lines().filter(|l| l.starts_with("| `")).collect();
        let want: Vec<String> = ALL
            .iter()
            .map(|c| {
                let ps = if c.ps { "yes" } else { "no" };
                format!("| `{}` | {} | {ps} | {} |", c.name, c.field.name(), c.help)
            })
            .collect();
        assert_eq!(rows, want);
    }

    #[test]
    fn values_compare_numbers_as_numbers_and_absent_first() {
        assert_eq!(Value::Num(9).compare(&Value::Num(10)), Ordering::Less);
        assert_eq!(Value::Signed(-1).compare(&Value::Num(0)), Ordering::Less);
        assert_eq!(Value::Absent.compare(&Value::Num(0)), Ordering::Less);
        assert_eq!(
            Value::Text("b".into()).compare(&Value::Text("a".into())),
            Ordering::Greater
        );
    }

    #[test]
    fn io_and_rss_come_from_the_row() {
        let p = Proc {
            rss_bytes: 4096,
            io: Some(procfs::pid::PidIo {
                read_bytes: 7,
                ..Default::default()
            }),
            ..Proc::default()
        };
        assert_eq!(RSS_BYTES.value(&p, &NoExtra), Value::Num(4096));
        assert_eq!(READ_BYTES.value(&p, &NoExtra), Value::Num(7));
        assert_eq!(CGROUP.value(&p, &NoExtra), Value::Absent);
        assert_eq!(CMDLINE.value(&p, &NoExtra), Value::Absent);
    }
}
